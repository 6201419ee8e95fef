// The host styles both elements share: a block in the page's flow, in the theme's colours
// (--attn-lens-fg and --attn-lens-bg override them) and the system font.
import { css } from "lit";

export const hostStyles = css`
  :host {
    display: block;
    box-sizing: border-box;
    color: var(--attn-lens-fg, #1d232b);
    background: var(--attn-lens-bg, #fff);
    font:
      14px/1.4 system-ui,
      -apple-system,
      "Segoe UI",
      sans-serif;
  }
`;
