// What each head of a trained model does on the reader's own sentence, in the categories of
// Clark et al. 2019 ("What Does BERT Look At?"): the mean attention from a token to the
// previous token, the next token, itself, [CLS], [SEP] and punctuation, and the mean entropy of
// its rows; and a label from those (their thresholds: ±1 and self > 0.5, special tokens and
// punctuation > 0.6, broad = entropy > 3.8 nats), with a causal model's induction score (from
// a probe of repeated random tokens) as one more category. attnlens_train_encoder labels the
// shipped encoder's heads with the same rules (lib/tools/encoder_data.cpp).

const PUNCTUATION = /^[\s\p{P}\p{S}]+$/u;

// Each result's per-row entropies and the weights they came from, for the next call.
const ROWS = Symbol("rows");

/**
 * Per [layer][head]: { previous, next, self, cls, sep, punctuation, entropy } for attention
 * weights [layers, heads, L, L] over `tokens` ({ text, special }). ±1 counts the tokens that
 * have such a neighbour among the text's own tokens; [CLS] and [SEP] are the special tokens at
 * the ends (NaN without them).
 *
 * The entropy is most of the cost (a logarithm per weight: at 117 tokens of the shipped model,
 * 1.5–2 ms of a keystroke). With `before`, this function's result for the previous figure of the
 * same model, a row whose weights equal bit for bit those of the same row then (its extra keys,
 * when the lengths differ, all 0) takes that row's entropy from it: a causal model's cache keeps
 * every row before the first edited token, so an append computes the new row's logarithms only.
 * Rows are summed in the same order either way, so the result is the same bits as without.
 * `same` > 0 says that rows [0, same) are those rows of `before`'s weights (the caller copied
 * them: trained.js, withRows), which takes their entropies without comparing them.
 */
export function headScores({ data, shape: [layers, heads, L] }, tokens, before, same = 0) {
  const special = tokens.map((t) => Boolean(t.special));
  const first = special[0] ? 0 : -1;
  const last = L > 1 && special[L - 1] ? L - 1 : -1;
  const punct = Int32Array.from(tokens.flatMap((t, j) => (!t.special && t.text.trim() !== "" && PUNCTUATION.test(t.text) ? [j] : [])));
  // Which rows count for ±1: the token and that neighbour are both the text's own.
  const hasPrevious = special.map((s, i) => !s && i > 0 && !special[i - 1]);
  const hasNext = special.map((s, i) => !s && i + 1 < L && !special[i + 1]);
  const prevCount = hasPrevious.filter(Boolean).length;
  const nextCount = hasNext.filter(Boolean).length;
  const old = before?.[ROWS];
  const reuse = old && old.data !== data && old.layers === layers && old.heads === heads ? old : null;
  const entropies = new Float64Array(layers * heads * L);
  const out = [];
  for (let l = 0; l < layers; l++) {
    const row = [];
    for (let h = 0; h < heads; h++) {
      const base = (l * heads + h) * L * L;
      let previous = 0;
      let next = 0;
      let self = 0;
      let cls = 0;
      let sep = 0;
      let punctuation = 0;
      let entropy = 0;
      for (let i = 0, r = base; i < L; i++, r += L) {
        self += data[r + i];
        if (first >= 0) cls += data[r + first];
        if (last >= 0) sep += data[r + last];
        for (let m = 0; m < punct.length; m++) punctuation += data[r + punct[m]];
        if (hasPrevious[i]) previous += data[r + i - 1];
        if (hasNext[i]) next += data[r + i + 1];
        let e = NaN;
        if (reuse && i < reuse.L) {
          const o = ((l * heads + h) * reuse.L + i) * reuse.L;
          e = i < same ? reuse.entropies[o / reuse.L] : sameRowEntropy(data, r, L, reuse, o);
        }
        if (Number.isNaN(e)) {
          e = 0;
          for (let j = r, end = r + L; j < end; j++) {
            const v = data[j];
            if (v > 0) e -= v * Math.log(v);
          }
        }
        entropies[(l * heads + h) * L + i] = e;
        entropy += e;
      }
      row.push({
        previous: prevCount ? previous / prevCount : NaN,
        next: nextCount ? next / nextCount : NaN,
        self: self / L,
        cls: first >= 0 ? cls / L : NaN,
        sep: last >= 0 ? sep / L : NaN,
        punctuation: punctuation / L,
        entropy: entropy / L,
      });
    }
    out.push(row);
  }
  Object.defineProperty(out, ROWS, { value: { data, layers, heads, L, entropies } });
  return out;
}

/**
 * The entropy `old` computed for the row at old.data[o .. o + old.L), if the row at data[r .. r + L)
 * holds the same weights (the longer row's extra weights 0; 0 and -0 add nothing to the entropy
 * alike, and a NaN never matches), else NaN.
 */
function sameRowEntropy(data, r, L, old, o) {
  const shared = Math.min(L, old.L);
  const od = old.data;
  for (let j = 0; j < shared; j++) if (data[r + j] !== od[o + j]) return NaN;
  for (let j = shared; j < L; j++) if (data[r + j] !== 0) return NaN;
  for (let j = shared; j < old.L; j++) if (od[o + j] !== 0) return NaN;
  return old.entropies[o / old.L];
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
 * A head's label: { key, text } — the category over its threshold with the highest score
 * ("previous token 0.96"), an induction head ("induction 0.83") when its probe score is over
 * 0.3, "broad" (entropy > 3.8 nats) or "mixed".
 */
export function headLabel(scores, induction) {
  let best = null;
  for (const [key, name, threshold] of CATEGORIES) {
    const v = scores[key];
    if (v > threshold && (!best || v > best.value)) best = { key, text: `${name} ${v.toFixed(2)}`, value: v };
  }
  if (induction > INDUCTION && (!best || induction > best.value))
    best = { key: "induction", text: `induction ${induction.toFixed(2)}`, value: induction };
  if (best) return { key: best.key, text: best.text };
  if (scores.entropy > 3.8) return { key: "broad", text: `broad (${scores.entropy.toFixed(1)} nats)` };
  return { key: "mixed", text: "mixed" };
}
