// Which of a causal figure's rows rank their predictions before the figure is drawn, and the
// analyze() call that draws it: shared by the page's thread (trained.js, the shipped models) and
// the model worker (model-worker.js, a reader's checkpoint), where the tokenizing and the call
// are one message instead of two.

// Multiply-adds of unembedding a figure does before it is drawn. Each token's next-token
// predictions cost one row of the unembedding, vocabulary × d_model multiply-adds (38.6 M for
// GPT-2 small; 0.5 M for the shipped model): at 32 tokens GPT-2 small's are 115 ms of a 420 ms
// forward. Over this budget a figure ranks the last token's predictions and those it ranked
// before for the same tokens, and trained.js's rankLater() ranks the rest after the figure is
// painted, a budget's worth per task: for GPT-2 small 3 rows, 25 ms in Node 22 here (1 row 18 ms:
// the 154 MB matrix is read once per task; 6 rows 46 ms), under the 50 ms of a long task.
export const RANK_BUDGET = 2 ** 27;

/**
 * The token positions of `text` a causal model's figure ranks now (undefined: all) and later.
 * `before` ({ ids, rows }: the text's ids and which rows were ranked, kept with the model's
 * cache) makes the rows ranked for the same prefix free.
 */
function rowsToRank(model, text, before) {
  const perRow = model.config.vocabSize * model.config.dModel;
  // A model whose whole context is within the budget (the shipped one) ranks everything at once:
  // no tokenizing twice per keystroke to find out.
  if (model.config.context * perRow <= RANK_BUDGET) return { now: undefined, later: [] };
  const ids = model.encode(text).subarray(0, model.config.context);
  const n = ids.length;
  if (n * perRow <= RANK_BUDGET) return { now: undefined, later: [] };
  const now = [];
  const later = [];
  let same = true;
  for (let i = 0; i < n; i++) {
    same = same && before != null && i < before.ids.length && before.ids[i] === ids[i];
    (i === n - 1 || (same && before.rows[i]) ? now : later).push(i);
  }
  return { now, later };
}

/**
 * A figure's analyze(text, options) on `model` (a loaded model, not a stand-in): for a causal
 * model the predictions of the rows rowsToRank() ranks now. Returns { r, later }: analyze()'s
 * result and the token positions left for later.
 */
export function analyzeFigure(model, text, options, before) {
  if (!model.config.causal) return { r: model.analyze(text, options), later: [] };
  const { now, later } = rowsToRank(model, text, before);
  return { r: model.analyze(text, { ...options, predictionRows: now }), later };
}

/**
 * `model[method](...args)`, or for "analyzeFigure" the function above: the one way trained.js's
 * steps call a model, on the page's thread (a shipped model) and in the model worker (a reader's
 * checkpoint, where the stand-in forwards the same [method, ...args]).
 */
export const callModel = (model, method, args) => (method === "analyzeFigure" ? analyzeFigure(model, ...args) : model[method](...args));
