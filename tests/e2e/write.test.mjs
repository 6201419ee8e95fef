// "Watch it write" in the demo page (web/write.js): the shipped causal model continues the
// sentence token by token. The tokens Chromium writes must be the ones the library's generate()
// writes in Node 22 for the same prompt and settings (greedy, and drawn with a seed: both run the
// relaxed-SIMD module, so the same logits, and the same seed gives the same tokens); the figure grows to the written text, the chips mark
// what was written, the link holds it and its settings, Replay writes it again, Stop and a
// reader's typing stop a run, a bad setting is a named error, and an encoder hides the controls.
import { test } from "node:test";
import assert from "node:assert/strict";
import { openPage, useSite } from "../support/browser.mjs";
import { NODE22, nodeWrites as nodeWrites22 } from "../support/write-reference.mjs";

const site = useSite();
const PROMPT = "The cat sat on the";

const SHIPPED = ["config.json", "vocab.json", "merges.txt", "model.safetensors"];

/** generate() on the shipped causal model in Node 22 (the relaxed module, as Chromium's): { texts, written }. */
function nodeWrites(options) {
  const ref = nodeWrites22(new URL("../../models/attnlens/", import.meta.url).pathname, SHIPPED, PROMPT, options);
  assert.ok(ref, `no Node 22 at ${NODE22} (scripts/bootstrap.sh installs it): the page's tokens have no reference`);
  return ref;
}

/** Clicks `button` and waits, in the same call, for the run to end: the status, sentence, chips and figure then. */
const runEnd = (page, button) =>
  page.evaluate(
    (selector) =>
      new Promise((done, fail) => {
        const started = performance.now();
        document.querySelector(selector).click();
        const poll = () => {
          const status = document.querySelector("#write-status");
          const ended = /^(Wrote|Stopped)/.test(status.textContent) || status.classList.contains("error");
          const figure = document.querySelector("#figure");
          const sentence = document.querySelector("#sentence").value;
          // Ended, and the figure is of the text as it ended.
          const tokens = figure.attention?.tokens;
          // (The chips follow the figure's render event, which may come a task after its tokens.)
          const chips = [...document.querySelectorAll("#tokens li")].map((li) => li.textContent);
          const drawn = tokens && tokens.at(-1).end === sentence.length && chips.join("") === tokens.map((t) => t.text).join("");
          if (ended && (drawn || status.classList.contains("error")))
            return done({
              status: status.textContent,
              role: status.getAttribute("role"),
              sentence,
              written: [...document.querySelectorAll("#tokens li.written")].map((li) => li.textContent),
              figureTokens: tokens?.length ?? 0,
              figureWritten: (tokens ?? []).filter((t) => t.written).map((t) => t.text),
              search: location.search,
            });
          if (performance.now() - started > 60000) return fail(new Error(`no end: "${status.textContent}"`));
          setTimeout(poll, 20);
        };
        poll();
      }),
    button,
  );

test("Continue writes the tokens generate() writes in Node (greedy and seeded), marks them, links them and replays them", async () => {
  const greedyRef = nodeWrites({ maxTokens: 6 });
  const drawnRef = nodeWrites({ maxTokens: 8, temperature: 0.9, topK: 40, topP: 0.95, seed: 11 });
  const greedy = greedyRef.texts;
  const drawn = drawnRef.texts;
  // (The texts below join the tokens' own texts: the written text decoded together is the same.)
  assert.equal(greedy.join(""), greedyRef.written);
  assert.equal(drawn.join(""), drawnRef.written);
  // (Different settings, different texts: the seeded run is not the greedy one again.)
  assert.notDeepEqual(drawn.slice(0, 6), greedy);
  const { page, problems } = await openPage(site.browser.context, site.server.url);
  await page.goto(`${site.server.url}index.html?model=attnlens&sentence=${encodeURIComponent(PROMPT)}`);
  await page.waitForFunction(() => !document.querySelector("#write").hidden, null, { timeout: 60000 });
  await page.fill("#write-tokens", "6");
  const first = await runEnd(page, "#write-go");
  assert.equal(first.status, "Wrote 6 tokens.");
  assert.equal(first.sentence, PROMPT + greedy.join(""));
  assert.deepEqual(first.written, greedy);
  // The figure's tokens say which were written (the heatmap labels them in the accent colour).
  assert.deepEqual(first.figureWritten, greedy);
  const promptTokens = first.figureTokens - greedy.length;
  assert.equal(promptTokens, 5);
  // The seeded run, from the prompt again (typed by the reader: nothing is marked as written).
  await page.fill("#sentence", PROMPT);
  for (const [id, value] of [
    ["#write-tokens", "8"],
    ["#write-temperature", "0.9"],
    ["#write-topk", "40"],
    ["#write-topp", "0.95"],
    ["#write-seed", "11"],
  ])
    await page.fill(id, value);
  const second = await runEnd(page, "#write-go");
  assert.equal(second.sentence, PROMPT + drawn.join(""));
  assert.deepEqual(second.written, drawn);
  // The link holds the text, where the writing began and the settings: read in the call that
  // sees it hold this run's text (the address follows 120 ms after a change; until then it is
  // the first run's, whose \`from\` is the same).
  const search = await (
    await page.waitForFunction(
      (text) => new URLSearchParams(location.search).get("sentence") === text && location.search,
      PROMPT + drawn.join(""),
    )
  ).jsonValue();
  const link = new URLSearchParams(search);
  assert.deepEqual(
    ["sentence", "from", "wn", "wt", "wk", "wp", "ws"].map((k) => link.get(k)),
    [PROMPT + drawn.join(""), "18", "8", "0.9", "40", "0.95", "11"],
  );
  // Opened from the link: the written tokens marked; Replay writes the same ones again.
  const opened = await openPage(site.browser.context, site.server.url);
  await opened.page.goto(`${site.server.url}index.html${search}`);
  const marked = await (
    await opened.page.waitForFunction(() => {
      const written = [...document.querySelectorAll("#tokens li.written")].map((li) => li.textContent);
      return !document.querySelector("#write").hidden && written.length > 0 && written;
    })
  ).jsonValue();
  assert.deepEqual(marked, drawn);
  const replay = await runEnd(opened.page, "#write-replay");
  assert.equal(replay.sentence, PROMPT + drawn.join(""));
  assert.deepEqual(replay.written, drawn);
  assert.deepEqual(opened.problems, []);
  await opened.page.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test("Stop and a reader's typing stop a run; a bad setting is a named error; the encoder has no Continue", async () => {
  const { page, problems } = await openPage(site.browser.context, site.server.url);
  await page.goto(`${site.server.url}index.html?model=attnlens&sentence=${encodeURIComponent(PROMPT)}`);
  await page.waitForFunction(() => !document.querySelector("#write").hidden, null, { timeout: 60000 });
  await page.fill("#write-tokens", "200");
  // Stop once the first token is in the sentence (in the same call: what was waited for is read).
  const stopped = await page.evaluate(
    (prompt) =>
      new Promise((done) => {
        const input = document.querySelector("#sentence");
        document.querySelector("#write-go").click();
        const poll = () => {
          if (input.value === prompt && /^Writing/.test(document.querySelector("#write-status").textContent)) return setTimeout(poll, 5);
          document.querySelector("#write-stop").click();
          const end = () => {
            const status = document.querySelector("#write-status").textContent;
            // (Any end: a run that ended otherwise fails the assertion below, not a timeout.)
            if (/^Writing/.test(status)) return setTimeout(end, 20);
            done({
              status,
              written: document.querySelectorAll("#tokens li.written").length,
              go: document.querySelector("#write-go").disabled,
            });
          };
          end();
        };
        poll();
      }),
    PROMPT,
  );
  const n = Number(/^Stopped after (\d+) tokens?\.$/.exec(stopped.status)?.[1]);
  assert.ok(n >= 1 && n < 200, stopped.status);
  assert.equal(stopped.go, false);
  // A reader typing during a run stops it; what is then in the sentence is theirs (unmarked).
  // The key is typed in the call that saw the first token (the run might otherwise end first).
  await page.fill("#sentence", PROMPT);
  await page.evaluate(
    (prompt) =>
      new Promise((done) => {
        const input = document.querySelector("#sentence");
        document.querySelector("#write-go").click();
        const status = document.querySelector("#write-status");
        const poll = () => {
          if (input.value === prompt && /^Writing/.test(status.textContent)) return setTimeout(poll, 5);
          input.value += "!";
          input.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertText", data: "!" }));
          done();
        };
        poll();
      }),
    PROMPT,
  );
  const typed = await (
    await page.waitForFunction(() => {
      const status = document.querySelector("#write-status").textContent;
      const sentence = document.querySelector("#sentence").value;
      const tokens = document.querySelector("#figure").attention?.tokens;
      const marked = document.querySelectorAll("#tokens li.written").length;
      return /^Stopped/.test(status) && tokens?.at(-1).end === sentence.length && marked === 0 && { status, sentence };
    })
  ).jsonValue();
  assert.match(typed.status, /^Stopped after \d+ tokens?\.$/);
  assert.ok(typed.sentence.startsWith(PROMPT) && typed.sentence.endsWith("!"), typed.sentence);
  // A preset chosen during a run: the run stops and the preset's sentence stays, unmarked.
  const preset = await page.evaluate(
    () =>
      new Promise((done) => {
        const input = document.querySelector("#sentence");
        const before = input.value;
        document.querySelector("#write-go").click();
        const status = document.querySelector("#write-status");
        const poll = () => {
          if (input.value === before && /^Writing/.test(status.textContent)) return setTimeout(poll, 5);
          document.querySelector("#example-buttons button").click();
          const chosen = input.value;
          const end = () => {
            const figure = document.querySelector("#figure");
            const tokens = figure.attention?.tokens;
            if (/^Writing/.test(status.textContent) || tokens?.at(-1).end !== input.value.length) return setTimeout(end, 20);
            // A moment more: a text still waiting for a paint would be shown by now.
            setTimeout(
              () =>
                done({
                  chosen,
                  now: input.value,
                  status: status.textContent,
                  marked: document.querySelectorAll("#tokens li.written").length,
                  figureWritten: figure.attention.tokens.filter((t) => t.written).length,
                  from: new URLSearchParams(location.search).get("from"),
                  replay: document.querySelector("#write-replay").hidden,
                }),
              1500,
            );
          };
          end();
        };
        poll();
      }),
  );
  assert.equal(preset.now, preset.chosen);
  assert.match(preset.status, /^Stopped after/);
  assert.deepEqual([preset.marked, preset.figureWritten, preset.from, preset.replay], [0, 0, null, true]);
  await page.fill("#write-temperature", "-1");
  const bad = await runEnd(page, "#write-go");
  assert.equal(bad.role, "alert");
  assert.match(bad.status, /^Temperature \(temperature\) must be a finite number >= 0/);
  // The encoder fills masks: no Continue.
  await page.click('input[name="mode"][value="full"]');
  await page.waitForFunction(() => document.querySelector("#figure").panels[0]?.prediction === "masked-token");
  assert.equal(await page.evaluate(() => document.querySelector("#write").hidden), true);
  assert.deepEqual(problems, []);
  await page.close();
});

test('<attn-lens generate="N"> writes N tokens once in view (what Node writes), says so under the predictions, and Replay writes them again', async () => {
  const greedy = nodeWrites({ maxTokens: 5 }).texts;
  const drawn = nodeWrites({ maxTokens: 5, temperature: 0.8, seed: 3 }).texts;
  const { page, problems } = await openPage(site.browser.context, site.server.url);
  await page.route(`${site.server.url}write-test.html`, (route) =>
    route.fulfill({
      status: 200,
      contentType: "text/html",
      body:
        `<!doctype html><meta charset="utf-8"><body style="width:900px"><script type="module" src="./element.js"></script>` +
        `<attn-lens id="a" model="attnlens" sentence="${PROMPT}" generate="5"></attn-lens>` +
        `<div style="height:4000px"></div>` +
        `<attn-lens id="b" model="attnlens" sentence="${PROMPT}" generate="5" temperature="0.8" seed="3"></attn-lens>`,
    }),
  );
  await page.goto(`${site.server.url}write-test.html`);
  // Read in the call that saw the run end: the sentence, the note, and the figure's last token.
  const ended = (id) =>
    page
      .waitForFunction(
        (sel) => {
          const el = document.getElementById(sel);
          const note = el.shadowRoot?.querySelector(".write-note");
          const tokens = el.attention?.tokens;
          if (!note || !/wrote/.test(note.textContent) || tokens?.at(-1).end !== el.sentence.length) return null;
          return {
            sentence: el.sentence,
            note: note.textContent.replace(/\s+/g, " ").trim(),
            role: note.getAttribute("role"),
            written: tokens.filter((t) => t.written).map((t) => t.text),
          };
        },
        id,
        { timeout: 60000 },
      )
      .then((h) => h.jsonValue());
  const a = await ended("a");
  assert.deepEqual(a, { sentence: PROMPT + greedy.join(""), note: "The model wrote 5 tokens. Replay", role: "status", written: greedy });
  // The second, out of view, has written nothing yet.
  assert.equal(await page.evaluate(() => document.getElementById("b").sentence), PROMPT);
  await page.evaluate(() => document.getElementById("b").scrollIntoView());
  const b = await ended("b");
  assert.equal(b.sentence, PROMPT + drawn.join(""));
  // Replay: back to the sentence, then the same tokens again (every value the sentence takes is
  // recorded from the click on, in the call that waits for the end).
  const replayed = await page.evaluate(
    () =>
      new Promise((done) => {
        const el = document.getElementById("b");
        const values = [];
        const observer = new MutationObserver(() => values.push(el.getAttribute("sentence")));
        observer.observe(el, { attributes: true, attributeFilter: ["sentence"] });
        el.shadowRoot.querySelector(".write-replay").click();
        const poll = () => {
          const note = el.shadowRoot.querySelector(".write-note");
          const tokens = el.attention?.tokens;
          if (!(note && /wrote/.test(note.textContent) && values.length > 0 && tokens?.at(-1).end === el.sentence.length))
            return setTimeout(poll, 20);
          observer.disconnect();
          done({ values, sentence: el.sentence });
        };
        poll();
      }),
  );
  assert.equal(replayed.values[0], PROMPT);
  assert.equal(replayed.sentence, PROMPT + drawn.join(""));
  // The author's script sets another sentence while the element writes: that text is kept (not
  // overwritten by the run's next token) and gets its own run.
  const AUTHOR = "Something the author wrote";
  const author = await page.evaluate(
    ([prompt, text]) =>
      new Promise((done) => {
        const el = document.getElementById("a");
        el.sentence = `${prompt} and`;
        const poll = () => {
          if (el.sentence === `${prompt} and`) return setTimeout(poll, 2);
          el.sentence = text;
          const end = () => {
            const note = el.shadowRoot.querySelector(".write-note");
            const tokens = el.attention?.tokens;
            if (!(el.sentence !== text && note && /wrote/.test(note.textContent) && tokens?.at(-1).end === el.sentence.length))
              return setTimeout(end, 20);
            done({ sentence: el.sentence, note: note.textContent.replace(/\s+/g, " ").trim() });
          };
          end();
        };
        poll();
      }),
    [PROMPT, AUTHOR],
  );
  assert.ok(author.sentence.startsWith(AUTHOR) && author.sentence.length > AUTHOR.length, author.sentence);
  assert.equal(author.note, "The model wrote 5 tokens. Replay");
  // A bad count is a named error under the predictions.
  await page.evaluate((p) => {
    const el = document.getElementById("a");
    el.setAttribute("generate", "lots");
    el.sentence = `${p} and`;
  }, PROMPT);
  const bad = await (
    await page.waitForFunction(() => {
      const note = document.getElementById("a").shadowRoot.querySelector(".write-note[role=alert]");
      return note && note.textContent.replace(/\s+/g, " ").trim();
    })
  ).jsonValue();
  assert.match(bad, /^generate: generate must be a whole number of tokens to write, 1 or more; got "lots"/);
  assert.deepEqual(problems, []);
  await page.close();
});
