// Type-checked with `tsc --noEmit --strict` (tests/types/tsconfig.json): "attnlens/element" as a
// TypeScript page would use it.
import { AttnLensElement, AttnLensTrainElement, defineAttnLens, defineAttnLensTrain, preloadViews } from "attnlens/element";
import type {
  AttnLensAttention,
  AttnLensChangeDetail,
  AttnLensFigure,
  AttnLensLoadDetail,
  AttnLensRenderDetail,
  AttnLensState,
  AttnLensTrainReport,
  AttnLensTrainReportDetail,
} from "attnlens/element";

async function page(): Promise<void> {
  const Element: typeof AttnLensElement = defineAttnLens();
  const el = document.createElement("attn-lens");
  const same: AttnLensElement = el;
  el.sentence = "The cat sat on the mat.";
  el.mode = "compare";
  el.view = "lines";
  el.heads = "8";
  el.head = "2";
  el.hide = "1,3";
  el.dim = "64";
  el.seed = "7";
  el.theme = "dark";
  el.colormap = "cividis";
  el.noToolbar = true;
  el.demoHref = "https://example.org/attnlens/";
  el.caption = "Figure 1.";
  el.figureTitle = "Causal attention";
  el.label = "Attention weights of the sentence";
  document.body.append(el);

  el.addEventListener("attn-lens-render", (event) => {
    const detail: AttnLensRenderDetail = event.detail;
    const ms: number = detail.ms + detail.computeMs;
    const error: string | null = detail.error;
    console.log(ms, error);
  });
  el.addEventListener("attn-lens-change", (event) => {
    const detail: AttnLensChangeDetail = event.detail;
    console.log(detail.head, detail.hide);
  });
  await el.updateComplete;

  const figure: AttnLensFigure | null = el.explanation;
  if (figure && !figure.empty) {
    const weights = figure.causal?.weights.data;
    const total: number = figure.totalTokens;
    console.log(weights?.length, total, figure.truncated);
  }
  const state: AttnLensState = el.figureState.state;
  const head: "mean" | number = state.head;
  const problems: string[] = el.figureState.problems;
  const svg: string = el.toSVG();
  const png: Blob = await el.toPNG(2);
  await preloadViews();
  console.log(Element, same, head, problems, svg.length, png.size);
}

async function files(input: HTMLInputElement): Promise<void> {
  const el = document.createElement("attn-lens");
  el.src = "attention.npy";
  el.tokensSrc = "tokens.txt";
  el.layer = "1";
  el.view = "grid";
  el.data = { tokens: ["a", "b"], weights: { data: [1, 0, 0.5, 0.5], shape: [2, 2] }, causal: true };
  el.addEventListener("attn-lens-load", (event) => {
    const detail: AttnLensLoadDetail = event.detail;
    const shown: AttnLensAttention | null = detail.data;
    console.log(shown?.weights.shape[0], shown?.tokens[0]?.text, shown?.warnings.join(" "), detail.error);
  });
  el.addEventListener("attn-lens-change", (event) => console.log(event.detail.layer, event.detail.view));
  if (input.files) await el.openFiles(input.files);
  const attention: AttnLensAttention | null = el.attention;
  console.log(attention?.causal, attention?.source.format);
}

void files(document.createElement("input"));

async function trainedModel(input: HTMLInputElement): Promise<void> {
  const el = document.createElement("attn-lens");
  el.model = "attnlens";
  el.modelSrc = "models/attnlens/";
  el.addEventListener("attn-lens-model-progress", (event) => console.log(event.detail.phase, event.detail.bytes / event.detail.totalBytes));
  el.addEventListener("attn-lens-model", (event) => console.log(event.detail.name, event.detail.config?.layers, event.detail.error?.code));
  if (input.files) await el.openModel(input.files, { onProgress: (p) => console.log(p.phase) });
  const top = el.attention?.predictions?.[0]?.[0];
  console.log(top?.text, top?.p, el.attention?.scores?.previous[0]?.[0]);
  const which: "random" | "attnlens" | "attnlens-encoder" | "custom" = el.model;
  console.log(which);
  el.mode = "compare";
  el.specials = "hide";
  for (const panel of el.panels) {
    const label: string | undefined = panel.headNotes?.[0]?.[0];
    const next: number | undefined = panel.categories?.[0]?.[0]?.next;
    const fillers = panel.prediction === "masked-token" ? panel.predictions?.find((p) => p !== null) : null;
    console.log(label, next, fillers?.[0]?.text, panel.tokens[0]?.special, panel.source.format);
  }
  el.closeModel();
}

void trainedModel(document.createElement("input"));

async function training(): Promise<void> {
  const Train: typeof AttnLensTrainElement = defineAttnLensTrain();
  const el = document.createElement("attn-lens-train");
  el.seed = "3";
  el.dModel = "64";
  el.lr = "0.001";
  el.snapshot = "train-snapshot/";
  el.addEventListener("attn-lens-train-report", (event) => {
    const detail: AttnLensTrainReportDetail = event.detail;
    const r: AttnLensTrainReport = detail.report;
    console.log(r.step, r.first, r.second, r.induction[1]?.[0], detail.formed, detail.copies);
  });
  el.addEventListener("attn-lens-train-error", (event) => console.log(event.detail.message));
  document.body.append(el);
  const ok: boolean = el.reset();
  el.start();
  el.pause();
  el.skipAhead();
  console.log(Train, ok, el.running, el.history.length);
}

void training();

void page();
