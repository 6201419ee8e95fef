// The views of <attn-lens>, one entry each: everything the element, the demo page and the state
// know of a view. A new view is a module in this directory and an entry here (docs/views.md);
// state.js takes the view names from here, the demo page its view buttons, and
// tests/js/views-registry.test.mjs holds element.d.ts's AttnLensView to them.
//
// How the element shows a view, from its module `m` once load() has resolved:
//   frame(m, c)  -> { view, lay }: the module (frame.js's contract) and layout of one frame, for
//                   each panel ("panel-k", c.data that panel's weights) and each frame the view's
//                   body made itself ("pane-k", c.data null). c: { state, data, index, model,
//                   palette, scale, title, visible (heads drawn), zoom, width, panelWidth }
//   body(m, c)   -> a Lit template; without one, a frame per panel (causal and full side by
//                   side). c: { state, panels, model, width, selected, onPick, frame(id, label) }
//   scene(m, c)  -> the export's { width, height, draw(p) }; without one, the panels side by
//                   side. c: { panels, model, palette, scale, width }
//   prepare(m, panels, state) -> what the view derives from the whole figure (PCA's shared axes,
//                   every step's matrices), made once per figure and head: c.model
// width is the figures' width, 0 before it is known.
import { once } from "../element/chunks.js";
import { html } from "lit";
import * as heatmap from "./heatmap.js";
import * as lines from "./lines.js";
import { pcaSize } from "./sizes.js";
import { PALETTES, colorScale } from "../theme.js";

/** Two panels (compare mode) stack when one needs the whole width. */
const stacked = (height, { panels, panelWidth, width }) => (panels > 1 && panelWidth >= width ? 2 * height + 16 : height);
/** Every head's (or the mean's) weights in words, for views that show the weights. */
const weightsText = (texts, { panels, head, layer }) => panels.map((d) => texts.attentionText(d, head, layer));

/**
 * name        the `view` attribute's value and the URL's
 * label       the demo page's button
 * title       the view in a sentence ("the every-step view")
 * hint        the readout's text before anything is focused; `act` is "Hover" or "Tap"
 * load        imports the view module: a chunk of its own (element-<name>.js), fetched when the
 *             view is first shown; the heatmap and lines are in element.js (their estimates lay
 *             them out before any figure, and the heatmap paints the head thumbnails)
 * needsTrace  computed with explain's trace of the head shown (the first for the mean); a figure
 *             computed without one serves every other view
 * randomOnly  draws what explain computes from random weights beyond the attention weights, so
 *             it is not offered for weights from a file or a model
 * headsRow    under the figure: "thumbnails" (pick one head or the mean), "swatches" (show or hide
 *             each head, `hide`), or null
 * zoom        the toolbar's zoom buttons apply
 * estimate(c) the figure's height in CSS px before it is computed (c: { state, data, panels,
 *             panelWidth, width }, data with estimated tokens), so the page does not jump when it lands
 * describe(texts, c) the figure in words (texts: describe.js, loaded when a reader first opens a
 *             description; c: { panels, head, layer, model })
 * panelTitle(data, state, visible)  a panel's title; without one, the head shown or the mean
 */
export const VIEWS = Object.freeze([
  {
    name: "heatmap",
    label: "Heatmap",
    title: "heatmap",
    hint: (act) => `${act} a cell to read its weight; arrow keys work too`,
    load: async () => heatmap,
    needsTrace: false,
    randomOnly: false,
    headsRow: "thumbnails",
    zoom: true,
    estimate: (c) =>
      stacked(
        heatmap.layout({
          data: c.data,
          layer: 0,
          head: "mean",
          title: "",
          palette: PALETTES.light,
          scale: colorScale("viridis", PALETTES.light),
          width: c.panelWidth,
        }).viewH,
        c,
      ),
    describe: weightsText,
    frame: (m, c) => ({
      view: m,
      lay: m.layout({
        data: c.data,
        layer: c.state.layer ?? 0,
        head: c.state.head,
        title: c.title,
        palette: c.palette,
        scale: c.scale,
        width: c.panelWidth,
        zoom: c.zoom,
      }),
    }),
  },
  {
    name: "lines",
    label: "Lines",
    title: "lines",
    hint: (act) => `${act} a word to see its lines (one per weight above 1/16); arrow keys work too`,
    load: async () => lines,
    needsTrace: false,
    randomOnly: false,
    headsRow: "swatches",
    zoom: true,
    estimate: (c) =>
      stacked(lines.layout({ data: c.data, layer: 0, visible: [], title: "", palette: PALETTES.light, width: c.panelWidth }).viewH, c),
    describe: (texts, { panels, layer }) => weightsText(texts, { panels, head: "mean", layer }),
    panelTitle: (data, state, visible) => {
      const H = state.heads;
      return `${data.title}, ${visible.filter(Boolean).length} of ${H} head${H > 1 ? "s" : ""}`;
    },
    frame: (m, c) => ({
      view: m,
      lay: m.layout({
        data: c.data,
        layer: c.state.layer ?? 0,
        visible: c.visible,
        title: c.title,
        palette: c.palette,
        width: c.panelWidth,
        zoom: c.zoom,
      }),
    }),
  },
  {
    name: "grid",
    label: "All heads",
    title: "grid",
    hint: () => "Click a head to see it large",
    load: () => import("./grid.js"),
    needsTrace: false,
    randomOnly: false,
    headsRow: null,
    zoom: false,
    // One row of thumbnails per panel (one layer each in the random mode): up to 120 px and a label.
    estimate: ({ state, panels, width }) =>
      panels * (Math.max(40, Math.min(120, Math.floor((width - 64) / (state.heads + 1)) - 12)) + 26) + 8,
    describe: weightsText,
    // One template (not a bare array), so the element's cache() keeps its DOM while another view is shown.
    body: (m, c) =>
      html`${c.panels.map((data, k) =>
        m.gridTemplate({
          data,
          selected: c.selected,
          width: c.width || 600,
          big: true,
          onPick: c.onPick,
          label: c.panels.length > 1 ? data.title : "Layers and heads",
          heading: c.panels.length > 1 ? data.title : null,
          panel: k,
        }),
      )}`,
    scene: (m, c) => m.gridScene(c.panels[0], c.palette, c.scale, Math.max(360, c.width)),
  },
  {
    name: "steps",
    label: "Every step",
    title: "every-step",
    hint: (act) => `${act} a number for its exact value; arrow keys work too`,
    load: () => import("./steps.js"),
    needsTrace: true,
    randomOnly: true,
    headsRow: "thumbnails",
    zoom: false,
    // Eleven captions and their matrices (at most 12 rows each, side by side).
    estimate: (c) => {
      const rows = 18 + Math.min(c.data.tokens.length, 12) * 20 + 16;
      return stacked(30 + 11 * (24 + rows) + (c.panels > 1 ? 5 * (rows + 20) : 0), c);
    },
    describe: (texts, c) => (c.model ? texts.stepsText(c.model) : weightsText(texts, c)),
    prepare: (m, panels, state) => m.stepsModel(panels, tracedHead(state)),
    body: (m, c) => m.stepsTemplate(c.model, c.frame),
    frame: (m, c) => {
      const pane = c.model.panes[c.index];
      return (
        pane && {
          view: m.matrixView,
          lay: m.matrixView.layout({ pane, palette: c.palette, scale: c.scale, width: Math.max(120, (c.width || 600) - 16) }),
        }
      );
    },
    scene: (m, c) => m.stepsExport(c.model, c.palette, c.scale, Math.max(720, c.width)),
  },
  {
    name: "pca",
    label: "PCA",
    title: "PCA",
    hint: (act) => `${act} a point to see the word and how far context moved it`,
    load: () => import("./pca.js"),
    needsTrace: false,
    randomOnly: true,
    headsRow: null,
    zoom: false,
    estimate: (c) => stacked(pcaSize(c.panelWidth).h, c),
    describe: (texts, { panels }) => panels.filter((d) => d.explanation).map(texts.pcaText),
    panelTitle: (data) => `${data.title}: before and after context`,
    prepare: (m, panels) => m.sharedDomain(panels),
    frame: (m, c) => ({
      view: m,
      lay: m.layout({ data: c.data, domain: c.model, title: c.title, palette: c.palette, width: c.panelWidth }),
    }),
  },
]);

export const VIEW_NAMES = Object.freeze(VIEWS.map((v) => v.name));

/** describe.js, for the entries' describe(): loaded when a reader first opens a description. */
export const loadTexts = once(() => import("./describe.js"), "the figure's description");

/**
 * The entry of view `name`. A name no entry has is an error that names the views, never another
 * view's figure (state.js lets only these names through: a bad `view` attribute or link shows the
 * default view with a message that names the attribute and the views).
 */
export function viewNamed(name) {
  const view = VIEWS.find((v) => v.name === name);
  if (!view) throw new Error(`attn-lens: there is no view "${name}"; the views are ${VIEW_NAMES.map((n) => `"${n}"`).join(", ")}`);
  return view;
}

/** The head a view that needs the trace shows: the picked one, the first for the mean. */
export const tracedHead = (state) => Math.min(state.head === "mean" ? 0 : state.head, state.heads - 1);

const modules = {};
const loading = {};

/** The module of view `name` if it has loaded, else undefined. */
export const loadedView = (name) => modules[name];

/** Loads the module of view `name` (once; every figure of the page shares it; a failed load is tried again). */
export function loadView(name) {
  loading[name] ??= once(
    () =>
      viewNamed(name)
        .load()
        .then((m) => (modules[name] = m)),
    `the ${name} view`,
  );
  return loading[name]();
}
