// The styles of <attn-lens>'s shadow root (after the host styles both elements share): the
// toolbar and readout, frames and their canvases, head buttons, messages, the description, and
// the parts the views render themselves (every step's captions, the layers x heads grid, the
// trained model's predictions).
// .grid-row has content-visibility: auto, so rows off screen are not laid out, painted or
// composited (their canvases are still painted): each thumbnail canvas is a composited layer, and
// with GPT-2 small's 156 a keystroke's frame spent 17 ms layerizing and 10-14 ms committing them
// (docs/performance.md). contain-intrinsic-size holds a row's height until it is first shown.
import { css } from "lit";

export const attnLensStyles = css`
  :host {
    width: 100%;
    border-radius: 8px;
  }
  :host([data-theme="dark"]) {
    color: var(--attn-lens-fg, #e6e9ee);
    background: var(--attn-lens-bg, #14181e);
  }
  .toolbar {
    display: flex;
    flex-wrap: wrap;
    gap: 6px;
    align-items: center;
    padding: 6px 8px;
    font-size: 12px;
    min-height: 24px;
  }
  .readout {
    flex: 1 1 12em;
    min-width: 8em;
    opacity: 0.9;
    font-variant-numeric: tabular-nums;
    overflow-wrap: anywhere;
  }
  button,
  a.button {
    font: inherit;
    font-size: 12px;
    color: inherit;
    background: transparent;
    border: 1px solid currentColor;
    border-radius: 4px;
    padding: 2px 8px;
    cursor: pointer;
    text-decoration: none;
    opacity: 0.85;
  }
  button:disabled {
    opacity: 0.35;
    cursor: default;
  }
  button:hover:not(:disabled),
  a.button:hover,
  button:focus-visible {
    opacity: 1;
    outline: 2px solid #3b5bdb;
    outline-offset: 1px;
  }
  button[aria-pressed="true"] {
    background: rgba(59, 91, 219, 0.18);
  }
  .figure-title {
    padding: 2px 8px;
    font-weight: 600;
    font-size: 15px;
  }
  .figures {
    padding: 4px 8px 8px;
  }
  .panels {
    display: flex;
    flex-wrap: wrap;
    gap: 16px;
  }
  .frame {
    position: relative;
    max-width: 100%;
    overscroll-behavior: contain;
    outline: none;
  }
  .frame:focus-visible {
    box-shadow: 0 0 0 2px #3b5bdb;
  }
  .sticky {
    position: sticky;
    top: 0;
    left: 0;
    overflow: hidden;
  }
  .sticky canvas {
    position: absolute;
    top: 0;
    left: 0;
    display: block;
  }
  .frame.focused canvas.figure {
    opacity: 0.3;
  }
  .heads {
    display: flex;
    flex-wrap: wrap;
    gap: 6px;
    padding: 0 8px 8px;
    align-items: center;
    font-size: 12px;
  }
  .heads canvas {
    display: block;
    width: 40px;
    height: 40px;
    image-rendering: pixelated;
  }
  .heads button {
    display: flex;
    flex-direction: column;
    align-items: center;
    gap: 2px;
    padding: 3px;
  }
  .swatch {
    display: inline-block;
    width: 10px;
    height: 10px;
    border-radius: 2px;
  }
  .message {
    padding: 6px 12px;
    font-size: 13px;
  }
  .message.warning {
    color: #b35c00;
  }
  .message.error {
    color: #c92a2a;
  }
  :host([data-theme="dark"]) .message.warning {
    color: #ffa94d;
  }
  :host([data-theme="dark"]) .message.error {
    color: #ff8787;
  }
  .placeholder {
    padding: 24px 12px;
    opacity: 0.6;
    box-sizing: border-box;
  }
  .caption {
    margin: 0;
    padding: 0 8px 8px;
    font-size: 13px;
    opacity: 0.85;
  }
  details.describe {
    padding: 0 8px 8px;
    font-size: 12px;
  }
  details.describe summary {
    cursor: pointer;
    opacity: 0.8;
  }
  details.describe table {
    border-collapse: collapse;
    font-variant-numeric: tabular-nums;
    margin: 6px 0;
    display: block;
    overflow-x: auto;
  }
  details.describe th,
  details.describe td {
    border: 1px solid rgba(128, 128, 128, 0.35);
    padding: 1px 4px;
    text-align: right;
  }
  .tip {
    position: fixed;
    z-index: 10;
    pointer-events: none;
    max-width: min(28em, 90vw);
    padding: 4px 7px;
    border-radius: 4px;
    font-size: 12px;
    background: rgba(20, 24, 30, 0.92);
    color: #fff;
    font-variant-numeric: tabular-nums;
  }
  .steps {
    padding: 0 8px 8px;
    width: 100%;
    box-sizing: border-box;
  }
  .steps-title {
    font-weight: 600;
    margin: 4px 0;
  }
  .step .caption {
    font-size: 13px;
    font-weight: 400;
    color: var(--attn-lens-accent, #3b5bdb);
    margin: 12px 0 4px;
    padding: 0;
  }
  :host([data-theme="dark"]) .step .caption {
    color: var(--attn-lens-accent, #8ea8ff);
  }
  .step-row {
    display: flex;
    flex-wrap: wrap;
    align-items: center;
    gap: 4px 8px;
    margin: 2px 0 6px;
  }
  .variant {
    font-weight: 600;
    font-size: 12px;
    flex-basis: 100%;
  }
  .op {
    font-size: 18px;
    opacity: 0.7;
  }
  figure.pane {
    margin: 0;
    max-width: 100%;
  }
  figure.pane figcaption {
    font-size: 11px;
    font-weight: 600;
  }
  .shape {
    font-weight: 400;
    opacity: 0.7;
  }
  figure.pane:has(.frame.scrolls) .shape::after {
    content: " · scroll for the rest";
  }
  .grid {
    display: flex;
    flex-direction: column;
    gap: 4px;
    padding: 0 8px 8px;
    font-size: 11px;
    overflow-x: auto;
  }
  .grid-row {
    display: flex;
    gap: 4px;
    align-items: center;
    content-visibility: auto;
    contain-intrinsic-size: auto calc(var(--thumb) + 30px);
  }
  .grid-title {
    font-weight: 600;
    font-size: 12px;
    padding-top: 4px;
  }
  .grid-label {
    flex: 0 0 60px;
    overflow: hidden;
    text-overflow: ellipsis;
    white-space: nowrap;
  }
  .grid button {
    display: flex;
    flex-direction: column;
    align-items: center;
    gap: 2px;
    padding: 3px;
    font-size: 11px;
    max-width: calc(var(--thumb) + 8px);
    overflow: hidden;
    white-space: nowrap;
  }
  .grid small {
    opacity: 0.75;
    font-size: 9px;
    white-space: pre-line;
    line-height: 1.2;
  }
  .predictions {
    padding: 0 8px 8px;
    font-size: 12px;
  }
  .predictions summary {
    cursor: pointer;
    opacity: 0.8;
  }
  .prediction-strip {
    display: flex;
    gap: 6px;
    overflow-x: auto;
    padding: 4px 0;
  }
  .prediction {
    flex: 0 0 auto;
    min-width: 64px;
    font-variant-numeric: tabular-nums;
  }
  .prediction span,
  .prediction-token {
    white-space: pre;
  }
  .prediction-token {
    font-weight: 600;
    border-bottom: 1px solid rgba(128, 128, 128, 0.5);
    margin-bottom: 2px;
  }
  .prediction-row {
    display: flex;
    justify-content: space-between;
    gap: 6px;
    opacity: 0.85;
  }
  .grid canvas {
    display: block;
    width: var(--thumb);
    height: var(--thumb);
    image-rendering: pixelated;
  }
  @media print {
    .toolbar button,
    .heads,
    details.describe {
      display: none;
    }
  }
`;
