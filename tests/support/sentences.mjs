// The texts the speed tests and benches type. First short words of letters only (each one
// token), cycled to any length, so the speed test, the page profiler and the explain() bench
// describe the same input.
export const WORDS = "the cat sat on a mat and looked at her dog while it rained over our small quiet town".split(" ");

/** A sentence of exactly n word tokens. */
export const sentence = (n) => Array.from({ length: n }, (_, i) => WORDS[i % WORDS.length]).join(" ");

// GPT-2's tokens of plain prose, for a real-size model in the page (bench/worker-typing.mjs and the
// GPT-2 small test of tests/e2e/checkpoint.test.mjs): a sentence, and a paragraph a reader pastes.
export const PROSE_SENTENCE =
  "the quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat by the door of the old house in the small town near the river where the children play every day after school";
export const PROSE_PARAGRAPH = [
  "The lighthouse stood at the end of a long spit of sand, and for most of the year nobody went there except the keeper, an old man who had lived alone on the point for as long as anyone in the village could remember.",
  "Every evening he climbed the iron stairs, trimmed the wick, wound the clockwork that turned the great lens, and sat by the window with a cup of tea while the beam swept across the water.",
  "In the autumn the storms came in from the west, and the waves broke over the rocks with a sound like distant thunder; on those nights he did not sleep at all, but walked from the lamp room to the gallery and back again, watching for the lights of ships that might be in trouble.",
  "The villagers said that he had once rowed out alone in such a storm to bring back three fishermen whose boat had been driven onto the reef, and that he had never spoken of it afterwards, not even to the priest who came to thank him.",
  "When the children asked him about it he only smiled and told them that the sea gives back what it takes, if you are patient, and that a light is worth keeping even when nobody seems to be looking for it.",
  "In the spring the birds returned to nest in the cliffs below the tower, and he counted them each morning in a small notebook, writing down the weather, the wind, the height of the tide and the names of the boats that passed.",
  "Nobody ever read the notebooks, but when he died they found forty of them on a shelf above his bed, every page filled in the same careful hand.",
].join(" ");

/**
 * The first `n` of `encoder`'s tokens of `text` (npm gpt-3-encoder: GPT-2's), cut at a token so
 * that the cut text tokenizes to exactly those n again (throws if it does not).
 */
export function firstTokens(encoder, text, n) {
  const cut = encoder.decode(encoder.encode(text).slice(0, n));
  const count = encoder.encode(cut).length;
  if (count !== n) throw new Error(`the text cut at ${n} of GPT-2's tokens tokenizes to ${count}`);
  return cut;
}
