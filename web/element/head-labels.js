// What each head of a trained model does on the reader's own sentence, in the categories of
// Clark et al. 2019 ("What Does BERT Look At?"): the mean attention from a token to the
// previous token, the next token, itself, [CLS], [SEP] and punctuation, and the mean entropy of
// its rows; and a label from those (their thresholds: ±1 and self > 0.5, special tokens and
// punctuation > 0.6, broad = entropy > 3.8 nats), with a causal model's induction score (from
// a probe of repeated random tokens) as one more category. attnlens_train_encoder labels the
// shipped encoder's heads with the same rules (lib/tools/encoder_data.cpp).

const PUNCTUATION = /^[\s\p{P}\p{S}]+$/u;

/**
 * Per [layer][head]: { previous, next, self, cls, sep, punctuation, entropy } for attention
 * weights [layers, heads, L, L] over `tokens` ({ text, special }). ±1 counts the tokens that
 * have such a neighbour among the text's own tokens; [CLS] and [SEP] are the special tokens at
 * the ends (NaN without them).
 */
export function headScores({ data, shape: [layers, heads, L] }, tokens) {
  const special = tokens.map((t) => Boolean(t.special));
  const first = special[0] ? 0 : -1;
  const last = L > 1 && special[L - 1] ? L - 1 : -1;
  const punct = tokens.map((t) => !t.special && t.text.trim() !== "" && PUNCTUATION.test(t.text));
  const out = [];
  for (let l = 0; l < layers; l++) {
    const row = [];
    for (let h = 0; h < heads; h++) {
      const a = data.subarray((l * heads + h) * L * L, (l * heads + h + 1) * L * L);
      const s = { previous: 0, next: 0, self: 0, cls: 0, sep: 0, punctuation: 0, entropy: 0 };
      let prevCount = 0;
      let nextCount = 0;
      for (let i = 0; i < L; i++) {
        const r = a.subarray(i * L, (i + 1) * L);
        s.self += r[i];
        if (first >= 0) s.cls += r[first];
        if (last >= 0) s.sep += r[last];
        for (let j = 0; j < L; j++) {
          if (r[j] > 0) s.entropy -= r[j] * Math.log(r[j]);
          if (punct[j]) s.punctuation += r[j];
        }
        if (!special[i] && i > 0 && !special[i - 1]) {
          s.previous += r[i - 1];
          prevCount++;
        }
        if (!special[i] && i + 1 < L && !special[i + 1]) {
          s.next += r[i + 1];
          nextCount++;
        }
      }
      s.previous = prevCount ? s.previous / prevCount : NaN;
      s.next = nextCount ? s.next / nextCount : NaN;
      for (const k of ["self", "punctuation", "entropy"]) s[k] /= L;
      s.cls = first >= 0 ? s.cls / L : NaN;
      s.sep = last >= 0 ? s.sep / L : NaN;
      row.push(s);
    }
    out.push(row);
  }
  return out;
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
