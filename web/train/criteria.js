// What counts as copying and as the phase change, for a trainer report: shared by the trainer
// (and scripts/train-induction.mjs through it) and <attn-lens-train>'s drawing, which imports
// this file alone so that the element's chunk does not carry the trainer.

/** The second copy far easier than the first: the model copies, by whatever circuit. */
export const copies = (report) => report.second < report.first / 3;

/** The phase change: an induction head and a second copy far easier than the first. */
export const formed = (report) => report.bestInduction >= 0.4 && copies(report);
