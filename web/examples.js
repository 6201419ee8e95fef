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
    // Varied text (no sentence twice), so that its rows differ: a repeated paragraph draws a
    // uniform triangle.
    sentence:
      "Attention lets every word in a sentence look at the other words and take a weighted mix of what it finds there. " +
      "Each word asks a question with its query, every word answers with its key, and the better the match, the more of " +
      "that word's value flows into the answer. A causal model may only look back, so the first word sees itself alone, " +
      "while the last one can weigh the whole line before it. Full attention, as in an encoder, lets a word in the middle " +
      "borrow from its right as well as its left. The scores are divided by the square root of the key size before the " +
      "softmax, which keeps them from growing with the width of the model and saturating too early. Several heads run side " +
      "by side, each with its own projections, and their outputs are joined and projected once more. Position is added " +
      "to each word's vector at the start, since attention by itself would treat a sentence as a bag of words. On a long " +
      "page like this one, most rows spread their weight thinly across many earlier words; a few heads keep looking at the " +
      "word just before, or at the full stop that ended the last sentence. Heatmaps make those habits easy to spot, lines " +
      "show where a single word sends its attention, and the grid puts every head of every layer next to the others so " +
      "that a reader can compare them at a glance. Random weights cannot know grammar, but they still show how the numbers " +
      "move from the input to the output.",
  },
];

/**
 * For the trained models (models/attnlens, causal; models/attnlens-encoder, full attention):
 * sentences in the style of their training text (Jane Austen, the State of the Union, and the
 * everyday words WordNet's definitions brought, which their 8 192-token vocabulary keeps whole), and
 * presets that open the head doing something recognisable on that sentence: `category` is a
 * label of web/element/head-labels.js, and the page picks the head with the highest score in it
 * once the figure is computed (so the presets follow the models as they are trained). `mode`
 * picks the model: causal, the encoder (full) or both. Coreference ("it" → "animal") and word
 * sense need far larger models than these, so no example promises them.
 */
export const TRAINED_MODE_EXAMPLES = [
  {
    label: "A previous-token head",
    sentence: "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.",
    view: "heatmap",
    mode: "causal",
    category: "previous",
  },
  {
    label: "An induction head (a repeated phrase)",
    sentence: "Mr. Darcy walked to Netherfield Park with his sister. Mr. Darcy walked to Netherfield Park with his sister.",
    view: "heatmap",
    mode: "causal",
    category: "induction",
  },
  {
    label: "Fill the [MASK] (the encoder)",
    sentence: "It is a truth universally acknowledged, that a single [MASK] in possession of a good fortune, must be in want of a wife.",
    view: "grid",
    mode: "full",
  },
  {
    label: "A next-token head (the encoder)",
    sentence: "The animal didn't cross the street because it was too tired, so it lay down by the garden wall.",
    view: "heatmap",
    mode: "full",
    category: "next",
  },
  {
    label: "Causal and full side by side",
    sentence: "The state of the Union is strong, and the people of the United States have done their part.",
    view: "grid",
    mode: "compare",
  },
];
