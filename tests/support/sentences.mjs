// The text the speed test, the page profiler and the explain() bench type: short words of
// letters only (each one token), cycled to any length, so their numbers describe the same input.
export const WORDS = "the cat sat on a mat and looked at her dog while it rained over our small quiet town".split(" ");

/** A sentence of exactly n word tokens. */
export const sentence = (n) => Array.from({ length: n }, (_, i) => WORDS[i % WORDS.length]).join(" ");
