// The page's "Continue": the figure's next-token model writes on from the sentence, token by
// token (model.generate(), wasm/model.js, on the page's thread for the shipped model or in the
// model worker for a reader's checkpoint). Each token's text is added to the sentence as if typed,
// so the figure grows by a row through its prefix cache and the link holds the text. The figure
// is that of the text: a written token the tokenizer reads differently once joined to the one
// before (rare) is shown as the text tokenizes, as it would be typed. The run's settings and
// where the writing began are in the link (`from`, `wn`, `wt`, `wk`, `wp`, `ws`): "Replay" writes
// the same tokens again from the same prompt (greedy, or drawn with the same seed).

const $ = (selector) => document.querySelector(selector);

/** The settings' link parameters and defaults: [input id, parameter, default]. */
const SETTINGS = [
  ["#write-tokens", "wn", "20"],
  ["#write-temperature", "wt", "0"],
  ["#write-topk", "wk", "0"],
  ["#write-topp", "wp", "1"],
  ["#write-seed", "ws", "0"],
];

/**
 * Sets the controls up. `figure` the <attn-lens>, `sentenceInput` the textarea, `params` the
 * page's URL parameters, `text` the sentence it opens with; `changed()` is called when what the link holds changes (the chips'
 * marks and the link are the page's).
 */
export function setUpWriter({ figure, sentenceInput, params, text, changed }) {
  for (const [id, key] of SETTINGS) if (params.has(key)) $(id).value = params.get(key);
  const fromParam = Number(params.get("from"));
  // Where the written text begins in the sentence (null: nothing written since it was typed).
  let from = Number.isInteger(fromParam) && fromParam > 0 && fromParam < text.length ? fromParam : null;
  // (The element marks the figure's tokens from here on as written: web/element/trained.js.)
  figure._writtenFrom = from;
  let running = null; // { control: AbortController }
  const status = $("#write-status");
  const say = (text, error = false) => {
    status.textContent = text;
    status.classList.toggle("error", error);
    status.setAttribute("role", error ? "alert" : "status");
  };
  const showButtons = () => {
    $("#write-go").disabled = Boolean(running);
    $("#write-step").disabled = Boolean(running);
    $("#write-stop").disabled = !running;
    $("#write-replay").hidden = from === null || Boolean(running);
  };
  const setting = (id) => Number($(id).value.trim() === "" ? NaN : $(id).value);

  /** Writes up to `count` tokens after the sentence; `seedShift` moves the seed (Step's later tokens). */
  async function write(count, { seedShift = 0 } = {}) {
    if (running) return;
    const control = new AbortController();
    running = { control };
    showButtons();
    // (At once: the status of the run before is not this one's.)
    say("Writing…");
    const plural = (n) => `${n} ${n === 1 ? "token" : "tokens"}`;
    let written = 0;
    let paced = null;
    try {
      const { generatorOf, pacedText, nextTask } = await import("./element/trained.js");
      const model = generatorOf(figure);
      if (!model) {
        say("Continue needs a model that predicts the next token: show the causal model or a causal checkpoint.", true);
        return;
      }
      const prompt = sentenceInput.value;
      // Tokens past the model's context cannot be written: as many as fit (the figure, when it is
      // of this text, has counted its tokens).
      const shown = figure.attention?.tokens;
      const room = shown?.length && shown.at(-1).end === prompt.length ? model.context - shown.length : Infinity;
      if (room <= 0) {
        say(`The sentence fills the model's context of ${model.context} tokens: nothing can follow it.`, true);
        return;
      }
      const maxTokens = Number.isInteger(count) ? Math.min(count, room) : count;
      const it = model.generate(prompt, {
        maxTokens,
        temperature: setting("#write-temperature"),
        topK: setting("#write-topk"),
        topP: setting("#write-topp"),
        seed: setting("#write-seed") + seedShift,
        signal: control.signal,
      });
      let text = prompt;
      // The sentence follows the tokens at the pace the figure is drawn (frames dropped, not
      // tokens delayed); the last text is shown when the run ends, unless the reader typed.
      paced = pacedText(figure, (shown) => {
        sentenceInput.value = shown;
        sentenceInput.dispatchEvent(new Event("input", { bubbles: true }));
      });
      for (;;) {
        const step = await it.next();
        if (step.done) {
          const why = {
            special: "; the model ended the text (it wrote an end-of-text token)",
            context: "; the model's context is full",
          };
          say(`Wrote ${plural(written)}${why[step.value.reason] ?? ""}.`);
          break;
        }
        const t = step.value;
        written++;
        // An end-of-text token has nothing to add to the sentence.
        if (!t.special) {
          from ??= prompt.length;
          figure._writtenFrom = from;
          text += t.text;
          paced.text(text);
        }
        say(`Writing… ${written} of ${maxTokens}: “${t.text}” (p ${(t.p * 100).toFixed(1)}%)`);
        await nextTask();
      }
    } catch (error) {
      if (error?.name === "AbortError") say(`Stopped after ${plural(written)}.`);
      else say(error?.message ?? String(error), true);
    } finally {
      paced?.end(!control.typed);
      running = null;
      showButtons();
      changed();
    }
  }

  let steps = 0;
  $("#write-go").addEventListener("click", () => write(setting("#write-tokens")));
  // Each step draws with the seed plus the steps before it since the text was typed (Replay
  // writes one run with the seed: the same tokens as steps at temperature 0).
  $("#write-step").addEventListener("click", () => write(1, { seedShift: steps++ }));
  $("#write-stop").addEventListener("click", () => running?.control.abort());
  $("#write-replay").addEventListener("click", () => {
    if (from === null) return;
    sentenceInput.value = sentenceInput.value.slice(0, from);
    sentenceInput.dispatchEvent(new Event("input", { bubbles: true }));
    from = null;
    figure._writtenFrom = null;
    write(setting("#write-tokens"));
  });
  for (const [id] of SETTINGS) $(id).addEventListener("change", changed);
  // The reader typing: a run stops, and what they typed is theirs (nothing marked as written).
  sentenceInput.addEventListener("input", (e) => {
    if (!e.isTrusted) return;
    if (running) running.control.typed = true;
    running?.control.abort();
    from = null;
    figure._writtenFrom = null;
    steps = 0;
    changed();
  });
  showButtons();

  return {
    /** Where the written text begins in the sentence, or null. */
    get from() {
      return from;
    },
    /** Whether a next-token model computes the figure (the controls are shown). */
    show(visible) {
      $("#write").hidden = !visible;
      if (!visible) running?.control.abort();
    },
    /** The link's parameters for the settings that are not the defaults, and `from`. */
    linkParams(query) {
      for (const [id, key, fallback] of SETTINGS) if ($(id).value !== fallback) query.set(key, $(id).value);
      if (from !== null) query.set("from", String(from));
    },
  };
}
