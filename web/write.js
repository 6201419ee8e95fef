// The page's "Continue": the figure's next-token model writes on from the sentence, token by
// token (model.generate(), wasm/model.js, on the page's thread for the shipped model or in the
// model worker for a reader's checkpoint). The written tokens' text (decoded together: a
// character written over several byte tokens is whole) is added to the sentence as if typed, so
// the figure grows by a row through its prefix cache and the link holds the text. The figure is
// that of the text: a written token the tokenizer reads differently once joined to the one before
// (rare) is shown as the text tokenizes, as it would be typed. The run's settings and where the
// writing began are in the link (`from`, `wn`, `wt`, `wk`, `wp`, `ws`): "Replay" writes the
// Tokens setting's count again from the same prompt (greedy, or drawn with the same seed).

const $ = (selector) => document.querySelector(selector);

/** The settings' link parameters and defaults: [input id, parameter, default]. */
const SETTINGS = [
  ["#write-tokens", "wn", "20"],
  ["#write-temperature", "wt", "0"],
  ["#write-topk", "wk", "0"],
  ["#write-topp", "wp", "1"],
  ["#write-seed", "ws", "0"],
];

// The labels the reader sees for generate()'s options, in its error messages.
const LABELS = { maxTokens: "Tokens", temperature: "Temperature", topK: "Top-k", topP: "Top-p", seed: "Seed" };

/**
 * Sets the controls up. `figure` the <attn-lens>, `sentenceInput` the textarea, `params` the
 * page's URL parameters, `text` the sentence it opens with; `changed()` is called when what the
 * link holds changes (the chips' marks and the link are the page's). The page calls the returned
 * `sentenceSet(text)` whenever its sentence changes (typed, a preset, the writer's own).
 */
export function setUpWriter({ figure, sentenceInput, params, text, changed }) {
  // (A link's value that is not a number is left out: the control keeps its default.)
  for (const [id, key] of SETTINGS) if (params.has(key) && /^\s*[\d.]+\s*$/.test(params.get(key))) $(id).value = params.get(key).trim();
  const fromParam = Number(params.get("from"));
  // Where the written text begins in the sentence (null: nothing written since it was typed),
  // and the sentence as the writer last left it.
  let from = Number.isInteger(fromParam) && fromParam > 0 && fromParam < text.length ? fromParam : null;
  let shown = text;
  // (The element marks the figure's tokens from here on as written: web/element/trained.js.)
  const setFrom = (value) => {
    from = value;
    figure._writtenFrom = value;
  };
  setFrom(from);
  let running = null; // { control: AbortController, model, kept: whether the last text is shown }
  let trained = null; // the element's model code (web/element/trained.js), once loaded
  let steps = 0;
  const status = $("#write-status");
  const say = (message, error = false) => {
    status.textContent = message;
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
    const run = { control, model: null, kept: true };
    running = run;
    showButtons();
    // (At once: the status of the run before is not this one's.)
    say("Writing…");
    const plural = (n) => `${n} ${n === 1 ? "token" : "tokens"}`;
    let written = 0;
    let paced = null;
    try {
      trained = await import("./element/trained.js");
      const model = trained.generatorOf(figure);
      if (!model) {
        say("Continue needs a model that predicts the next token: show the causal model or a causal checkpoint.", true);
        return;
      }
      run.model = model.model;
      const prompt = sentenceInput.value;
      // Tokens past the model's context cannot be written: as many as fit (the figure, when it is
      // of this text, has counted its tokens, the hidden special ones too).
      const shownTokens = figure.attention?.tokens;
      const current = shownTokens?.length && shownTokens.at(-1).end === prompt.length;
      const room = current ? model.context - Math.max(shownTokens.length, figure.attention.totalTokens ?? 0) : Infinity;
      if (room <= 0) {
        say(`The sentence fills the model's context of ${model.context} tokens: nothing can follow it.`, true);
        return;
      }
      const seed = setting("#write-seed");
      const it = model.generate(prompt, {
        maxTokens: Number.isInteger(count) ? Math.min(count, room) : count,
        temperature: setting("#write-temperature"),
        topK: setting("#write-topk"),
        topP: setting("#write-topp"),
        // (Step's shift wraps within the seeds generate() takes.)
        seed: Number.isInteger(seed) && seed >= 0 ? (seed + seedShift) % 2 ** 32 : seed,
        signal: control.signal,
      });
      // The sentence follows the tokens at the pace the figure is drawn (frames dropped, not
      // tokens delayed); the last text is shown when the run ends, unless the sentence was
      // changed meanwhile by something else (sentenceSet below).
      paced = trained.pacedText(figure, (next) => {
        if (!run.kept) return;
        shown = next;
        sentenceInput.value = next;
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
          if (from === null) setFrom(prompt.length);
          paced.text(prompt + t.written);
        }
        say(`Writing… ${written} of ${Math.min(count, room)}: “${t.text}” (p ${(t.p * 100).toFixed(1)}%)`);
        await trained.nextTask();
      }
    } catch (error) {
      if (error?.name === "AbortError") say(`Stopped after ${plural(written)}.`);
      // The library names the option; the reader knows it by its label.
      else
        say(
          (error?.message ?? String(error)).replace(/^(maxTokens|temperature|topK|topP|seed)\b/, (o) => `${LABELS[o]} (${o})`),
          true,
        );
    } finally {
      paced?.end(run.kept);
      running = null;
      showButtons();
      changed();
    }
  }

  $("#write-go").addEventListener("click", () => {
    steps = 0;
    write(setting("#write-tokens"));
  });
  // Each step draws with the seed plus the steps before it since the text was typed (Replay
  // writes one run with the seed: the same tokens as steps at temperature 0).
  $("#write-step").addEventListener("click", () => write(1, { seedShift: steps++ }));
  $("#write-stop").addEventListener("click", () => running?.control.abort());
  $("#write-replay").addEventListener("click", () => {
    if (from === null || running) return;
    const prompt = sentenceInput.value.slice(0, from);
    shown = prompt;
    sentenceInput.value = prompt;
    sentenceInput.dispatchEvent(new Event("input", { bubbles: true }));
    setFrom(null);
    steps = 0;
    write(setting("#write-tokens"));
  });
  for (const [id] of SETTINGS) $(id).addEventListener("change", changed);
  showButtons();

  return {
    /** Where the written text begins in the sentence, or null. */
    get from() {
      return from;
    },
    /**
     * The page's sentence is now `text`. Not the writer's own: a run stops and leaves it as it is
     * (typed, a preset), and nothing in it is marked as written any more.
     */
    sentenceSet(next) {
      if (next === shown) return;
      shown = next;
      if (running) {
        running.kept = false;
        running.control.abort();
      }
      setFrom(null);
      steps = 0;
      showButtons();
    },
    /** Stops a run (its text kept): the figure's model is about to change. */
    stop() {
      running?.control.abort();
    },
    /** Whether a next-token model computes the figure (the controls are shown). */
    show(visible) {
      $("#write").hidden = !visible;
      // The model the run writes with is no longer the figure's (another model, a checkpoint
      // closed): it stops, its text kept.
      if (running?.model && (!visible || trained?.generatorOf(figure)?.model !== running.model)) running.control.abort();
    },
    /** The link's parameters for the settings that are not the defaults, and `from`. */
    linkParams(query) {
      for (const [id, key, fallback] of SETTINGS) {
        const value = $(id).value.trim();
        if (value !== fallback && value !== "") query.set(key, value);
      }
      if (from !== null) query.set("from", String(from));
    },
  };
}
