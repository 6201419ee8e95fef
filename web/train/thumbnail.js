// What the front page's training card shows (web/train-card.js draws it): the induction head of
// the run that the training page's "Skip ahead" loads, on probe rows whose span of random tokens
// appears twice, the cells it should pick outlined, and when it formed in that run. No DOM here,
// so that Node tests compute the same thumbnail from web/train/snapshot/.
import { formed } from "./criteria.js";
import { generator, headScores, repeatedBatch } from "./task.js";

/** Probe rows: as many as the training page's probe, from a stream of their own. */
const ROWS = 8;
const PROBE_SEED = 12345;

/**
 * What the thumbnail shows, computed from a loaded snapshot: the strongest induction head, its
 * weights on the row with the longest repeated span, that span, and the run's formation report.
 * @param lens      the page's attnlens instance (loadModel)
 * @param files     { "model.safetensors": Uint8Array, "config.json": string }
 * @param state     the snapshot's state.json, parsed ({ options, history })
 */
export async function inductionThumbnail(lens, files, state) {
  const o = state.options;
  const model = await lens.loadModel({ files });
  try {
    const probe = repeatedBatch(generator(PROBE_SEED), { ...o, batch: ROWS, periodic: false, chainRows: 0 });
    const T = o.length - 1; // the model reads each row but its last token, as in training
    const data = probe.data.filter((_, i) => i % o.length < T);
    const { attention } = model.forward({ data, shape: [ROWS, T] }, { attention: true });
    const { induction } = headScores(attention, probe);
    let best = { layer: 0, head: 0, score: -1 };
    induction.forEach((row, layer) =>
      row.forEach((score, head) => {
        if (score > best.score) best = { layer, head, score };
      }),
    );
    // The row whose second copy is longest inside the T tokens: the clearest stripe.
    let row = 0;
    const inside = ({ start, n }) => Math.min(n, T - start - n);
    probe.spans.forEach((span, b) => {
      if (inside(span) > inside(probe.spans[row])) row = b;
    });
    const [, B, H] = attention.shape;
    const m = (best.layer * B + row) * H + best.head;
    const weights = attention.data.slice(m * T * T, (m + 1) * T * T);
    const formedAt = state.history.find(formed) ?? null;
    return { ...best, T, weights, span: probe.spans[row], formedAt, steps: state.step };
  } finally {
    model.dispose();
  }
}

/** The outlined cells: query start + n + j looks at key start + j + 1 (j within the row). */
export function stripeCells({ start, n }, T) {
  const cells = [];
  for (let j = 0; j < n && start + n + j < T; j++) cells.push([start + n + j, start + j + 1]);
  return cells;
}

/** The sentence under the thumbnail (plain text). */
export function describeThumbnail(thumb) {
  const when = thumb.formedAt
    ? `; it formed at step ${thumb.formedAt.step.toLocaleString("en")} (${(thumb.formedAt.tokens / 1e6).toFixed(1)} M tokens)`
    : "";
  return (
    `Layer ${thumb.layer + 1}, head ${thumb.head + 1} of the saved run (step ${thumb.steps.toLocaleString("en")}). ` +
    `A span of ${thumb.span.n} random tokens appears twice; from its second copy, the head looks at the token after ` +
    `the first occurrence (outlined). Induction score ${thumb.score.toFixed(2)}${when}.`
  );
}
