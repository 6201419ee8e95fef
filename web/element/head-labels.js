// What each head of a trained model does on the reader's own sentence, in the categories of
// Clark et al. 2019 ("What Does BERT Look At?"): the mean attention from a token to the
// previous token, the next token, itself, [CLS], [SEP] and punctuation, and the mean entropy of
// its rows; and a label from those (their thresholds: ±1 and self > 0.5, special tokens and
// punctuation > 0.6, broad = entropy > 3.8 nats), with a causal model's induction score (from
// a probe of repeated random tokens) as one more category. attnlens_train_encoder labels the
// shipped encoder's heads with the same rules (lib/tools/encoder_data.cpp). A causal model's
// share to its first token, whatever that token is (Llama's <|begin_of_text|>, GPT-2's first
// word), is the "cls" score too, labelled "first-token sink": such heads park their attention
// there (Xiao et al. 2023, "Efficient Streaming Language Models with Attention Sinks").

const PUNCTUATION = /^[\s\p{P}\p{S}]+$/u;

// Each result's per-row shares of its scores and the weights they came from, for the next call.
const ROWS = Symbol("rows");
// The shares kept per row of each head, in this order.
const PARTS = ["self", "cls", "sep", "punctuation", "previous", "next", "entropy"];
const K = PARTS.length;

/**
 * Per [layer][head]: { previous, next, self, cls, sep, punctuation, entropy } for attention
 * weights [layers, heads, L, L] over `tokens` ({ text, special }). ±1 counts the tokens that
 * have such a neighbour among the text's own tokens; [CLS] and [SEP] are the special tokens at
 * the ends (NaN without them), and with `causal` "cls" is the first token whatever it is, over
 * the rows after it (the first row has nowhere else to look). Each score is the sum of its rows'
 * shares, in row order.
 *
 * The entropy is most of the cost (a logarithm per weight: at 117 tokens of the shipped model,
 * 1.5–2 ms of a keystroke). With `before`, this function's result for the previous figure of the
 * same model, a row whose weights equal bit for bit those of the same row then (its extra keys,
 * when the lengths differ, all 0) takes that row's entropy from it: a causal model's cache keeps
 * every row before the first edited token, so an append computes the new row's logarithms only.
 * Rows are summed in the same order either way, so the result is the same bits as without.
 *
 * `same` > 0 says more: the weights are causal and rows [0, same) are those rows of `before`'s
 * weights (the caller shares them: causal-rows.js, withRows), with the same tokens up to them. Those
 * rows' shares are then taken without reading the rows (all but the last two before `same` and
 * before either end, whose [SEP] and next-token shares depend on the tokens after them): an
 * append to a 308-token GPT-2 small figure reads 144 rows instead of 44 000.
 */
export function headScores(attention, tokens, before, same = 0, causal = false) {
  const [layers, heads, L] = attention.shape;
  const rowAt = rowReader(attention);
  const special = tokens.map((t) => Boolean(t.special));
  const first = special[0] || (causal && L > 0) ? 0 : -1;
  const last = L > 1 && special[L - 1] ? L - 1 : -1;
  const punct = Int32Array.from(tokens.flatMap((t, j) => (!t.special && t.text.trim() !== "" && PUNCTUATION.test(t.text) ? [j] : [])));
  // Which rows count for ±1: the token and that neighbour are both the text's own.
  const hasPrevious = special.map((s, i) => !s && i > 0 && !special[i - 1]);
  const hasNext = special.map((s, i) => !s && i + 1 < L && !special[i + 1]);
  const prevCount = hasPrevious.filter(Boolean).length;
  const nextCount = hasNext.filter(Boolean).length;
  const old = before?.[ROWS];
  const reuse = old && old.attention !== attention && old.layers === layers && old.heads === heads ? old : null;
  const taken = reuse ? Math.max(0, Math.min(same, reuse.L, L) - 2) : 0;
  // Per row of each head, its shares (PARTS), kept for the next call.
  const parts = new Float64Array(layers * heads * L * K);
  const out = [];
  for (let l = 0; l < layers; l++) {
    const row = [];
    for (let h = 0; h < heads; h++) {
      const g = l * heads + h;
      if (taken > 0) parts.set(reuse.parts.subarray(g * reuse.L * K, (g * reuse.L + taken) * K), g * L * K);
      for (let i = taken; i < L; i++) {
        // The row's weights: a causal row may stop at its diagonal (the rest are 0).
        const row = rowAt(g, i);
        const n = row.length;
        const at = (j) => (j < n ? row[j] : 0);
        let punctuation = 0;
        for (let m = 0; m < punct.length; m++) if (punct[m] < n) punctuation += row[punct[m]];
        let e = reuse && i < reuse.L ? sameRowEntropy(row, reuse.rowAt(g, i), reuse.parts[(g * reuse.L + i) * K + 6]) : NaN;
        if (Number.isNaN(e)) {
          e = 0;
          for (let j = 0; j < n; j++) {
            const v = row[j];
            if (v > 0) e -= v * Math.log(v);
          }
        }
        const p = (g * L + i) * K;
        parts[p] = at(i);
        // (A causal model's first row can only look at the first token: it tells nothing.)
        parts[p + 1] = first >= 0 && !(causal && i === 0) ? at(first) : 0;
        parts[p + 2] = last >= 0 ? at(last) : 0;
        parts[p + 3] = punctuation;
        parts[p + 4] = hasPrevious[i] ? at(i - 1) : 0;
        parts[p + 5] = hasNext[i] ? at(i + 1) : 0;
        parts[p + 6] = e;
      }
      const sums = new Float64Array(K);
      for (let i = 0, p = g * L * K; i < L; i++, p += K) for (let k = 0; k < K; k++) sums[k] += parts[p + k];
      row.push({
        previous: prevCount ? sums[4] / prevCount : NaN,
        next: nextCount ? sums[5] / nextCount : NaN,
        self: sums[0] / L,
        cls: first < 0 ? NaN : causal ? (L > 1 ? sums[1] / (L - 1) : NaN) : sums[1] / L,
        sep: last >= 0 ? sums[2] / L : NaN,
        punctuation: sums[3] / L,
        entropy: sums[6] / L,
      });
    }
    out.push(row);
  }
  Object.defineProperty(out, ROWS, { value: { attention, rowAt, layers, heads, L, parts } });
  return out;
}

/**
 * (g, i) -> row i of head g (g = layer · heads + head) of weights [layers, heads, L, L]: those
 * kept row by row (causal-rows.js) as they are, else a view of the flat array.
 */
export function rowReader(attention) {
  if (typeof attention.row === "function") return (g, i) => attention.row(g, i);
  const { data } = attention;
  const L = attention.shape[2];
  return (g, i) => data.subarray((g * L + i) * L, (g * L + i + 1) * L);
}

/**
 * `entropy` (computed for the row `old`) if `row` holds the same weights (the longer row's extra
 * weights 0; 0 and -0 add nothing to the entropy alike, and a NaN never matches), else NaN.
 */
function sameRowEntropy(row, old, entropy) {
  if (row === old) return entropy;
  const shared = Math.min(row.length, old.length);
  for (let j = 0; j < shared; j++) if (row[j] !== old[j]) return NaN;
  for (let j = shared; j < row.length; j++) if (row[j] !== 0) return NaN;
  for (let j = shared; j < old.length; j++) if (old[j] !== 0) return NaN;
  return entropy;
}

const CATEGORIES = [
  ["previous", "previous token", 0.5],
  ["next", "next token", 0.5],
  ["self", "self", 0.5],
  ["cls", "[CLS]", 0.6],
  ["sep", "[SEP]", 0.6],
  ["punctuation", "punctuation", 0.6],
];
const INDUCTION = 0.3;

/**
 * How the "cls" and "sep" categories read for a figure's tokens: a causal model's first token
 * is its sink ("first-token sink"); an encoder's end tokens by their own text ("<s>", "</s>"
 * for a RoBERTa-style tokenizer), "[CLS]" and "[SEP]" when they are not special tokens.
 */
export function categoryNames(tokens, causal) {
  const end = (t, fallback) => (t?.special ? t.text : fallback);
  return { cls: causal ? "first-token sink" : end(tokens[0], "[CLS]"), sep: end(tokens.at(-1), "[SEP]") };
}

/**
 * A head's label: { key, text } — the category over its threshold with the highest score
 * ("previous token 0.96"), an induction head ("induction 0.83") when its probe score is over
 * 0.3, "broad" (entropy > 3.8 nats) or "mixed". `names` (categoryNames) names "cls" and "sep".
 */
export function headLabel(scores, induction, names = {}) {
  let best = null;
  for (const [key, fallback, threshold] of CATEGORIES) {
    const name = names[key] ?? fallback;
    const v = scores[key];
    if (v > threshold && (!best || v > best.value)) best = { key, text: `${name} ${v.toFixed(2)}`, value: v };
  }
  if (induction > INDUCTION && (!best || induction > best.value))
    best = { key: "induction", text: `induction ${induction.toFixed(2)}`, value: induction };
  if (best) return { key: best.key, text: best.text };
  if (scores.entropy > 3.8) return { key: "broad", text: `broad (${scores.entropy.toFixed(1)} nats)` };
  return { key: "mixed", text: "mixed" };
}
