// "Watch it write" in the demo page (web/write.js): the shipped causal model continues the
// sentence token by token. The tokens Chromium writes must be the ones the library's generate()
// writes in Node for the same prompt and settings (greedy, and drawn with a seed: the same seed
// gives the same tokens in both engines); the figure grows to the written text, the chips mark
// what was written, the link holds it and its settings, Replay writes it again, Stop and a
// reader's typing stop a run, a bad setting is a named error, and an encoder hides the controls.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadAttnLens } from "attnlens";
import { openPage, useSite } from "../support/browser.mjs";

const site = useSite();
const PROMPT = "The cat sat on the";

async function nodeWrites(options) {
  const lens = await loadAttnLens();
  const dir = new URL("../../models/attnlens/", import.meta.url);
  const files = Object.fromEntries(
    ["config.json", "vocab.json", "merges.txt", "model.safetensors"].map((name) => [
      name,
      name.endsWith(".safetensors") ? readFileSync(new URL(name, dir)) : readFileSync(new URL(name, dir), "utf8"),
    ]),
  );
  const model = await lens.loadModel({ files });
  try {
    const tokens = [];
    for await (const t of model.generate(PROMPT, options)) tokens.push(t);
    return tokens.filter((t) => !t.special).map((t) => t.text);
  } finally {
    model.dispose();
  }
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
  const greedy = await nodeWrites({ maxTokens: 6 });
  const drawn = await nodeWrites({ maxTokens: 8, temperature: 0.9, topK: 40, topP: 0.95, seed: 11 });
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
  // The link holds the text, where the writing began and the settings (read once it is written).
  const search = await (
    await page.waitForFunction(() => new URLSearchParams(location.search).get("from") === "18" && location.search)
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
  await page.fill("#sentence", PROMPT);
  await page.evaluate(
    (prompt) =>
      new Promise((done) => {
        const input = document.querySelector("#sentence");
        document.querySelector("#write-go").click();
        const status = document.querySelector("#write-status");
        const poll = () => (input.value === prompt && /^Writing/.test(status.textContent) ? setTimeout(poll, 5) : done());
        poll();
      }),
    PROMPT,
  );
  await page.focus("#sentence");
  await page.keyboard.press("End");
  await page.keyboard.type("!");
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
  await page.fill("#write-temperature", "-1");
  const bad = await runEnd(page, "#write-go");
  assert.equal(bad.role, "alert");
  assert.match(bad.status, /^temperature must be a finite number >= 0/);
  // The encoder fills masks: no Continue.
  await page.click('input[name="mode"][value="full"]');
  await page.waitForFunction(() => document.querySelector("#figure").panels[0]?.prediction === "masked-token");
  assert.equal(await page.evaluate(() => document.querySelector("#write").hidden), true);
  assert.deepEqual(problems, []);
  await page.close();
});

test('<attn-lens generate="N"> writes N tokens once in view (what Node writes), says so under the predictions, and Replay writes them again', async () => {
  const greedy = await nodeWrites({ maxTokens: 5 });
  const drawn = await nodeWrites({ maxTokens: 5, temperature: 0.8, seed: 3 });
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
  // Replay: from the sentence again, the same tokens.
  const replayed = await (
    await page.waitForFunction(
      () => {
        const el = document.getElementById("b");
        if (!window.__replayed) {
          window.__replayed = true;
          el.shadowRoot.querySelector(".write-replay").click();
          return null;
        }
        const note = el.shadowRoot.querySelector(".write-note");
        const tokens = el.attention?.tokens;
        return note && /wrote/.test(note.textContent) && tokens?.at(-1).end === el.sentence.length && el.sentence;
      },
      null,
      { timeout: 60000 },
    )
  ).jsonValue();
  assert.equal(replayed, PROMPT + drawn.join(""));
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
