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
 * For the trained model (models/attnlens): sentences in the style of its training text, and
 * presets that open a head large. Coreference ("it" → "animal") and word sense need a far
 * larger model than this one, so no example promises them.
 */
export const TRAINED_MODE_EXAMPLES = [
  {
    label: "A previous-token head (layer 1, head 4)",
    sentence: "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.",
    view: "heatmap",
    layer: 0,
    head: 3,
  },
  {
    label: "A repeated phrase (no induction head formed)",
    sentence: "Mr. Darcy walked to Netherfield Park with his sister. Mr. Darcy walked to Netherfield Park with his sister.",
    view: "grid",
  },
  {
    label: "The State of the Union",
    sentence: "The state of the Union is strong, and the people of the United States have done their part.",
    view: "grid",
  },
  {
    label: "Every head of a letter",
    sentence: "My dear Lizzy, I have just received your letter, and I am very glad to hear that you are well.",
    view: "grid",
  },
];
