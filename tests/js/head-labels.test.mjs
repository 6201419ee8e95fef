// What each head of a trained model does (web/element/head-labels.js): the scores on weights small
// enough to compute by hand, the labels from them, and the reuse of the previous figure's rows
// (the same bits as computing afresh, and the logarithms of the rows that changed only).
import { test } from "node:test";
import assert from "node:assert/strict";
import { categoryNames, headLabel, headScores } from "../../web/element/head-labels.js";

const tokensOf = (...texts) => texts.map((text) => ({ text, special: /^\[(CLS|SEP)\]$/.test(text) }));
const attention = (heads, L) => ({ data: Float32Array.from(heads.flat(2)), shape: [1, heads.length, L, L] });
const close = (actual, expected, what) =>
  assert.ok(Math.abs(actual - expected) <= 1e-7 * Math.max(1, Math.abs(expected)), `${what}: ${actual} vs ${expected}`);

test("headScores: a causal head over 'a , b', by hand", () => {
  // Rows: a sees itself; "," splits evenly; b gives a quarter to each earlier token and keeps half.
  const rows = [
    [1, 0, 0],
    [0.5, 0.5, 0],
    [0.25, 0.25, 0.5],
  ];
  const [[s]] = headScores(attention([rows], 3), tokensOf("a", ",", "b"));
  close(s.previous, (0.5 + 0.25) / 2, "previous: rows 1 and 2 have a previous token");
  close(s.next, 0, "next: a causal row never looks ahead");
  close(s.self, (1 + 0.5 + 0.5) / 3, "self");
  close(s.punctuation, (0 + 0.5 + 0.25) / 3, "punctuation: the column of ','");
  // Entropies of the rows: 0, ln 2, and 2 * 0.25 ln 4 + 0.5 ln 2 = 1.5 ln 2.
  close(s.entropy, (0 + Math.LN2 + 1.5 * Math.LN2) / 3, "entropy, the mean over rows");
  assert.ok(Number.isNaN(s.cls) && Number.isNaN(s.sep), "no [CLS] or [SEP]: NaN");
});

test("headScores: [CLS] and [SEP] are scored apart and never count as a neighbour", () => {
  // [CLS] x y [SEP], full attention: every row puts 0.7 on [SEP], 0.1 on the rest.
  const row = [0.1, 0.1, 0.1, 0.7];
  const [[s]] = headScores(attention([[row, row, row, row]], 4), tokensOf("[CLS]", "x", "y", "[SEP]"));
  close(s.cls, 0.1, "cls");
  close(s.sep, 0.7, "sep");
  // Only y has a previous token of the text's own (x), only x a next one (y).
  close(s.previous, 0.1, "previous");
  close(s.next, 0.1, "next");
  assert.deepEqual(headLabel(s, undefined), { key: "sep", text: "[SEP] 0.70" });
});

test("a causal model's first token is its sink, special or not, and is labelled so", () => {
  // GPT-2's first word and Llama's <|begin_of_text|> alike: every row gives 0.8 to token 0.
  const rows = [
    [1, 0, 0, 0],
    [0.8, 0.2, 0, 0],
    [0.8, 0.1, 0.1, 0],
    [0.8, 0.1, 0, 0.1],
  ];
  for (const first of [
    { text: "The", special: false },
    { text: "<|begin_of_text|>", special: true },
  ]) {
    const tokens = [first, ...["cat", "sat", "down"].map((text) => ({ text, special: false }))];
    const [[s]] = headScores(attention([rows], 4), tokens, undefined, 0, true);
    // Over the rows after the first (which has nowhere else to look): 0.8.
    close(s.cls, 0.8, `${first.text}: the first token's share`);
    assert.ok(Number.isNaN(s.sep), "no special token at the end: no [SEP] score");
    const names = categoryNames(tokens, true);
    assert.deepEqual(names, { cls: "first-token sink", sep: "[SEP]" });
    assert.deepEqual(headLabel(s, 0.1, names), { key: "cls", text: "first-token sink 0.80" });
    // A previous-token head of two tokens is not a sink for its first row's forced weight.
    const [[two]] = headScores(
      attention(
        [
          [
            [1, 0],
            [0.9, 0.1],
          ],
        ],
        2,
      ),
      tokens.slice(0, 2),
      undefined,
      0,
      true,
    );
    close(two.cls, 0.9, "two tokens: the second row's share alone");
    // Without `causal` a first word that is not special is not scored.
    assert.equal(Number.isNaN(headScores(attention([rows], 4), tokens)[0][0].cls), !first.special);
  }
  // An encoder's end tokens by their own names; [CLS] and [SEP] when the ends are not special.
  const roberta = [
    { text: "<s>", special: true },
    { text: " a", special: false },
    { text: "</s>", special: true },
  ];
  assert.deepEqual(categoryNames(roberta, false), { cls: "<s>", sep: "</s>" });
  assert.deepEqual(categoryNames(tokensOf("[CLS]", "a", "[SEP]"), false), { cls: "[CLS]", sep: "[SEP]" });
  assert.deepEqual(
    headLabel({ previous: 0, next: 0, self: 0, cls: NaN, sep: 0.9, punctuation: 0, entropy: 1 }, undefined, { sep: "</s>" }),
    {
      key: "sep",
      text: "</s> 0.90",
    },
  );
});

test("headLabel: the strongest category over its threshold, then induction, broad or mixed", () => {
  const none = { previous: 0.2, next: 0.1, self: 0.3, cls: NaN, sep: NaN, punctuation: 0.1, entropy: 1 };
  assert.deepEqual(headLabel({ ...none, previous: 0.96 }, 0.1), { key: "previous", text: "previous token 0.96" });
  assert.deepEqual(headLabel({ ...none, previous: 0.6 }, 0.83), { key: "induction", text: "induction 0.83" });
  assert.deepEqual(headLabel({ ...none, entropy: 4 }, undefined), { key: "broad", text: "broad (4.0 nats)" });
  assert.deepEqual(headLabel(none, 0.2), { key: "mixed", text: "mixed" });
});

/** Causal softmax rows of seeded random scores: [heads][L][L]. */
function causalHeads(heads, L, seed) {
  let state = seed;
  const random = () => (state = (state * 1103515245 + 12345) >>> 0) / 2 ** 32;
  return Array.from({ length: heads }, () =>
    Array.from({ length: L }, (_, i) => {
      const e = Array.from({ length: L }, (_, j) => (j <= i ? Math.exp(4 * random()) : 0));
      const sum = e.reduce((a, b) => a + b, 0);
      return e.map((v) => v / sum);
    }),
  );
}

/** Runs `f` counting Math.log's calls. */
function countingLogs(f) {
  const log = Math.log;
  let calls = 0;
  Math.log = (x) => (calls++, log(x));
  try {
    return { result: f(), calls };
  } finally {
    Math.log = log;
  }
}

test("headScores with the previous figure's scores: the same bits, and logarithms of the changed rows only", () => {
  const words = ["The", " cat", ",", " sat", ".", " on", " the", " mat"];
  const L = 8;
  const heads = causalHeads(2, L, 7);
  const tokens = tokensOf(...words);
  const first = headScores(attention(heads, L), tokens);

  // An append: a causal model's rows before it are unchanged (one more key, weight 0).
  const grown = causalHeads(2, L + 1, 11).map((rows, h) => rows.map((row, i) => (i < L ? [...heads[h][i], 0] : row)));
  const grownTokens = tokensOf(...words, " !");
  const fresh = headScores(attention(grown, L + 1), grownTokens);
  const appended = countingLogs(() => headScores(attention(grown, L + 1), grownTokens, first));
  assert.deepEqual(appended.result, fresh);
  assert.equal(appended.calls, 2 * (L + 1), "the new row of each head: L + 1 positive weights");
  // The caller saying the first L rows are the previous figure's (it copied them): the same
  // result; the rows before the last two of them are not even read (a row that differs there
  // would not be seen, which is why only a caller that copied them may say so).
  const told = countingLogs(() => headScores(attention(grown, L + 1), grownTokens, first, L));
  assert.deepEqual(told.result, fresh);
  assert.equal(told.calls, 2 * (L + 1));
  const uniform = grown.map((rows) => rows.map((row, i) => (i === 2 ? row.map((w, j) => (j <= 2 ? 1 / 3 : 0)) : row)));
  assert.deepEqual(headScores(attention(uniform, L + 1), grownTokens, first, L), fresh, "row 2 taken without reading it");
  assert.notDeepEqual(headScores(attention(uniform, L + 1), grownTokens), fresh);
  // Row L - 1, the last before `same`, is read: a deletion that leaves a [SEP] at the end moves
  // that column onto it.
  const lastChanged = grown.map((rows) => rows.map((row, i) => (i === L - 1 ? row.map((w, j) => (j === 0 ? 1 : 0)) : row)));
  assert.deepEqual(
    headScores(attention(lastChanged, L + 1), grownTokens, first, L),
    headScores(attention(lastChanged, L + 1), grownTokens),
  );

  // A deletion at the end: every remaining row is the same.
  const shrunk = heads.map((rows) => rows.slice(0, L - 1).map((row) => row.slice(0, L - 1)));
  const deleted = countingLogs(() => headScores(attention(shrunk, L - 1), tokensOf(...words.slice(0, -1)), appended.result));
  assert.deepEqual(deleted.result, headScores(attention(shrunk, L - 1), tokensOf(...words.slice(0, -1))));
  assert.equal(deleted.calls, 0);

  // An edit at token 5: rows 5.. change (and must not take the old entropies).
  const edited = heads.map((rows, h) => rows.map((row, i) => (i < 5 ? row : causalHeads(2, L, 99)[h][i])));
  const after = countingLogs(() => headScores(attention(edited, L), tokens, first));
  assert.deepEqual(after.result, headScores(attention(edited, L), tokens));
  assert.equal(after.calls, 2 * (6 + 7 + 8), "rows 5, 6 and 7 of both heads");
  assert.notEqual(after.result[0][0].entropy, first[0][0].entropy);

  // One weight of one row changed, the rest equal: that row is computed again.
  const nudged = heads.map((rows) => rows.map((row) => [...row]));
  nudged[1][3][0] += 1e-3;
  const one = countingLogs(() => headScores(attention(nudged, L), tokens, first));
  assert.deepEqual(one.result, headScores(attention(nudged, L), tokens));
  assert.equal(one.calls, 4);

  // Scores of another shape (more heads) are not used.
  const other = headScores(attention(causalHeads(3, L, 5), L), tokens);
  const unrelated = countingLogs(() => headScores(attention(heads, L), tokens, other));
  assert.deepEqual(unrelated.result, first);
  assert.equal(unrelated.calls, 2 * ((L * (L + 1)) / 2));
});

test("headScores with the previous figure's scores: rows are not taken when they only share a prefix, the array changed in place, or the shape differs", () => {
  const tokens2 = tokensOf("a", "b");
  const tokens3 = tokensOf("a", "b", "c");
  // Full attention: row 0 keeps [0.5, 0.5] on the first two keys, but gains a third key.
  const short = attention(
    [
      [
        [0.5, 0.5],
        [0.25, 0.75],
      ],
    ],
    2,
  );
  const long = attention(
    [
      [
        [0.5, 0.5, 0.25],
        [0.25, 0.75, 0],
        [0.2, 0.3, 0.5],
      ],
    ],
    3,
  );
  const before = headScores(short, tokens2);
  assert.deepEqual(headScores(long, tokens3, before), headScores(long, tokens3), "grown rows with a weight on the new key");
  assert.deepEqual(headScores(short, tokens2, headScores(long, tokens3)), headScores(short, tokens2), "shrunk rows");
  // Row 1 of `long` ([0.25, 0.75, 0]) is row 1 of `short` with a 0 key added: that one may be reused.
  const counted = countingLogs(() => headScores(long, tokens3, before));
  assert.equal(counted.calls, 3 + 3, "rows 0 and 2 computed; row 1 reused");

  // The same array, changed in place since: nothing of it is reused.
  const data = attention(causalHeads(1, 4, 3), 4);
  const tokens4 = tokensOf("w", "x", "y", "z");
  const first = headScores(data, tokens4);
  data.data.set([0.5, 0.5], 4);
  const again = countingLogs(() => headScores(data, tokens4, first));
  assert.deepEqual(again.result, headScores(data, tokens4));
  assert.equal(again.calls, 1 + 2 + 3 + 4);

  // Another shape's scores are not used (two layers of one head against one layer of two heads),
  // even where the numbers agree row for row: a row is looked up by its layer and head.
  const heads = causalHeads(2, 4, 21);
  const twoHeads = headScores(attention(heads, 4), tokens4);
  const twoLayers = { data: Float32Array.from(heads.flat(2)), shape: [2, 1, 4, 4] };
  const unrelated = countingLogs(() => headScores(twoLayers, tokens4, twoHeads));
  assert.deepEqual(unrelated.result, headScores(twoLayers, tokens4));
  assert.equal(unrelated.calls, 2 * 10);
});
