// Example sentences for the page, by what the weights behind the figure can show.

/**
 * For the random-weights mode. Random (seeded) weights show how attention computes, not what
 * a model has learned, so these examples show what they can: the causal mask, the effect of
 * word order and position, repeated words, the built-in word classes, and long text.
 */
export const RANDOM_MODE_EXAMPLES = [
  { label: "The cat sat on the mat.", sentence: "The cat sat on the mat." },
  { label: "dog bites man / man bites dog", sentence: "dog bites man. man bites dog." },
  { label: "the the the the (position alone)", sentence: "the the the the the the the the" },
  { label: "animals and places", sentence: "The dog and the cat ran from the house to the park by the river." },
  {
    label: "A long paragraph (about 300 tokens)",
    sentence: Array.from(
      { length: 6 },
      () =>
        "Attention lets every word in a sentence look at the other words and take a weighted mix of what it finds there. " +
        "Each word asks a question with its query, every word answers with its key, and the better the match, the more of " +
        "that word's value flows into the answer. A causal model may only look back, so the first word sees itself alone.",
    ).join(" "),
  },
];

/**
 * For a trained model's mode (not shown in the random mode): these promise things that only
 * learned weights can show — coreference ("it" → "animal"), word sense ("bank" by "river") —
 * so a page in the random mode would mislead with them.
 */
export const TRAINED_MODE_EXAMPLES = [
  { label: "The animal didn't cross the street…", sentence: "The animal didn't cross the street because it was too tired." },
  { label: "I went to the bank…", sentence: "I went to the bank to sit by the river." },
];
