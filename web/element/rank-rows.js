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
 * The token positions of `text` (its `ids`, or null when not tokenized) a causal model's figure
 * ranks now (undefined: all) and later. `ranked` ({ ids, rows }: the ids of a text and which of
 * its rows were ranked, kept with the model's cache) makes the rows ranked for the same prefix
 * free.
 */
function rowsToRank(model, ids, ranked) {
  const perRow = model.config.vocabSize * model.config.dModel;
  // A model whose whole context is within the budget (the shipped one) ranks everything at once.
  if (ids === null || ids.length * perRow <= RANK_BUDGET) return { now: undefined, later: [] };
  const n = ids.length;
  const now = [];
  const later = [];
  let same = true;
  for (let i = 0; i < n; i++) {
    same = same && ranked != null && i < ranked.ids.length && ranked.ids[i] === ids[i];
    (i === n - 1 || (same && ranked.rows[i]) ? now : later).push(i);
  }
  return { now, later };
}

/** How many of `a`'s and `b`'s first ids are the same. */
export function sharedPrefix(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * A figure's analyze(text, options) on `model` (a loaded model, not a stand-in): for a causal
 * model the predictions of the rows rowsToRank() ranks now, and the attention's rows from the
 * first token that differs from `before.held` (the ids of the attention the figure's caller
 * holds: a causal row depends on the tokens up to it only, so the rows before are the caller's;
 * an appended token of a 308-token GPT-2 small figure moves 144 rows instead of 44 352).
 * `before`: { ranked: { ids, rows } | null, held: ids | null }. Returns { r, later, from }:
 * analyze()'s result (its attention the query rows from `from` on), and the token positions
 * left for later.
 */
export function analyzeFigure(model, text, options, before) {
  if (!model.config.causal) return { r: model.analyze(text, options), later: [], from: 0 };
  const { context, vocabSize, dModel } = model.config;
  // Tokenized here only when something depends on the ids: a held attention, or a model whose
  // context is over the ranking budget (the shipped one ranks every row at once).
  const ids = before?.held?.length || context * vocabSize * dModel > RANK_BUDGET ? model.encode(text).subarray(0, context) : null;
  const { now, later } = rowsToRank(model, ids, before?.ranked);
  const from = options?.attention && before?.held && ids ? sharedPrefix(before.held, ids) : 0;
  return { r: model.analyze(text, { ...options, predictionRows: now, attentionFrom: from }), later, from };
}

/**
 * `model[method](...args)`, or for "analyzeFigure" the function above: the one way trained.js's
 * steps call a model, on the page's thread (a shipped model) and in the model worker (a reader's
 * checkpoint, where the stand-in forwards the same [method, ...args]).
 */
export const callModel = (model, method, args) => (method === "analyzeFigure" ? analyzeFigure(model, ...args) : model[method](...args));
