// The training page: one <attn-lens-train> element (web/element/train.js) does the work; the page
// mirrors its progress for tests and the console: window.trainHistory (every report so far) and
// body[data-step] (the last report's step).
import "../element/define.js";

const trainer = document.querySelector("attn-lens-train");
const sync = () => {
  window.trainHistory = trainer.history;
  document.body.dataset.step = String(trainer.history.at(-1)?.step ?? "");
};
trainer.addEventListener("attn-lens-train-report", sync);
sync();
