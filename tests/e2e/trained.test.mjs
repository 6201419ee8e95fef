// Trained mode in Chromium: <attn-lens model="attnlens"> shows the shipped model's heads for a
// sentence (causal, rows summing to 1), a label per head and its next-token predictions, which
// agree with the library in Node on the same text; openModel() shows a checkpoint a reader picks
// and names what is wrong with one of another architecture; the demo page opens on the trained
// model and its model switch. (The encoder's own tests are in encoder.test.mjs.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { loadAttnLens, sinkRates } from "attnlens";
import { openPage, useSite } from "../support/browser.mjs";
import { typeAndTime } from "../support/figure.mjs";

const site = useSite();
const shipped = new URL("../../models/attnlens/", import.meta.url);
const fixtures = process.env.ATTNLENS_MODEL_FIXTURES ?? new URL("../../build/native/model-fixtures/", import.meta.url).pathname;
const CHECKPOINT = ["model.safetensors", "config.json", "vocab.json", "merges.txt"];
const SENTENCE = "Mr. Darcy said that Elizabeth was not handsome enough to tempt him.";

async function pageWith(body) {
  const session = await openPage(site.browser.context, site.server.url);
  await session.page.route(`${site.server.url}trained-test.html`, (route) =>
    route.fulfill({
      status: 200,
      contentType: "text/html",
      body: `<!doctype html><meta charset="utf-8"><body style="width:900px"><script type="module" src="./element.js"></script>${body}</body>`,
    }),
  );
  await session.page.goto(`${site.server.url}trained-test.html`);
  return session;
}

/** Waits for the element's model figure (or its error): tokens, weights, predictions, notes. */
const shown = (page, selector = "attn-lens") =>
  page
    .waitForFunction(
      (sel) => {
        const el = document.querySelector(sel);
        const error = el?.shadowRoot?.querySelector(".message.error")?.textContent;
        if (error) return { error };
        const a = el?.attention;
        if (!a?.predictions || !el.shadowRoot.querySelector(".grid canvas")) return null;
        return {
          model: el.model,
          tokens: a.tokens.map((t) => t.text),
          shape: a.weights.shape,
          weights: Array.from(a.weights.data),
          causal: a.causal,
          predictions: a.predictions,
          notes: a.headNotes,
          categories: a.categories,
          grid: el.shadowRoot.querySelectorAll(".grid canvas").length,
          sinks: [...el.shadowRoot.querySelectorAll(".grid-sink")].map((s) => s.textContent),
          sinkNote: el.shadowRoot.querySelector(".grid-sinks")?.textContent ?? null,
          predictionColumns: el.shadowRoot.querySelectorAll(".prediction").length,
          predictionRows: el.shadowRoot.querySelectorAll(".prediction-row").length,
        };
      },
      selector,
      { timeout: 60000 },
    )
    .then((h) => h.jsonValue());

/** Rows sum to 1 and the upper triangles are exactly 0, in every head; the worst row is reported. */
function checkCausalRows({ shape: [layers, heads, L], weights }) {
  let worst = 0;
  let where = "";
  for (let m = 0; m < layers * heads; m++)
    for (let i = 0; i < L; i++) {
      let sum = 0;
      for (let j = 0; j < L; j++) {
        const w = weights[(m * L + i) * L + j];
        assert.ok(Number.isFinite(w), `weight [${m}, ${i}, ${j}] is ${w}`);
        if (j > i) assert.equal(w, 0, `masked weight [${m}, ${i}, ${j}]`);
        sum += w;
      }
      if (Math.abs(sum - 1) > worst) [worst, where] = [Math.abs(sum - 1), `head ${m}, row ${i}`];
    }
  // A float32 softmax row of at most L = 128 terms: the sum's rounding is below L · 2^-24 ≈ 8e-6.
  assert.ok(worst <= 8e-6, `a row sums to 1 ± ${worst} (${where})`);
}

const readShipped = () =>
  Object.fromEntries(
    CHECKPOINT.map((name) => [name, readFileSync(new URL(name, shipped), name.endsWith(".safetensors") ? undefined : "utf8")]),
  );

test('<attn-lens model="attnlens">: the 2 × 4 heads, causal, with scores and predictions equal to the library in Node', async () => {
  const { page, problems } = await pageWith(`<attn-lens model="attnlens" view="grid" sentence="${SENTENCE}"></attn-lens>`);
  const figure = await shown(page);
  assert.equal(figure.error, undefined, figure.error);
  assert.equal(figure.model, "attnlens");
  assert.deepEqual(figure.shape.slice(0, 2), [2, 4]);
  assert.equal(figure.causal, true);
  checkCausalRows(figure);
  assert.equal(figure.grid, 2 * 5, "2 layers × (mean + 4 heads) thumbnails");
  for (const note of figure.notes.flat())
    assert.match(
      note,
      /^(previous token|next token|self|punctuation|induction|first-token sink) \d\.\d\d$|^broad \(\d\.\d nats\)$|^mixed$/,
    );

  // The same text through the library in Node: the same tokens, and every probability shown
  // equals Node's for that id. The logits of the two builds (relaxed SIMD in Chromium, SIMD128
  // in Node 20) differ in the last bits, under 1e-4 (see model-native.test.mjs); p = softmax
  // moves by at most p · (e^(2 · 1e-4) - 1) < 2e-4.
  const lens = await loadAttnLens();
  const model = await lens.loadModel({ files: readShipped() });
  assert.deepEqual(
    figure.tokens,
    model.tokens(SENTENCE).map((t) => t.text),
  );
  // Node's 256 likeliest (predict's largest k) hold every one of the five shown.
  const all = model.predict(SENTENCE, { k: 256 });
  assert.equal(figure.predictions.length, figure.tokens.length);
  assert.equal(figure.predictionColumns, figure.tokens.length);
  assert.equal(figure.predictionRows, 5 * figure.tokens.length);
  let worst = 0;
  figure.predictions.forEach((top, t) => {
    assert.equal(top.length, 5);
    const sum = top.reduce((s, p) => s + p.p, 0);
    assert.ok(sum <= 1 + 1e-12, `position ${t}: the top 5 sum to ${sum}`);
    const node = new Map(all[t].map((p) => [p.id, p]));
    for (const p of top) {
      assert.equal(p.text, node.get(p.id).text);
      worst = Math.max(worst, Math.abs(p.p - node.get(p.id).p));
    }
  });
  assert.ok(worst < 2e-4, `a probability differs from Node's by ${worst}`);
  // Each head's previous-token score is the mean of its weights just below the diagonal, from
  // Node's weights; the weights differ from the page's in the last bits as the logits do, and a
  // mean of them by less (2e-4, as above).
  const [layers, heads, L] = figure.shape;
  const node = model.analyze(SENTENCE, { attention: true }).attention.data;
  let worstScore = 0;
  for (let m = 0; m < layers * heads; m++) {
    let below = 0;
    for (let i = 1; i < L; i++) below += node[m * L * L + i * L + i - 1];
    const shown = figure.categories[Math.floor(m / heads)][m % heads].previous;
    assert.ok(Number.isFinite(shown), `head ${m}: previous-token score ${shown}`);
    worstScore = Math.max(worstScore, Math.abs(shown - below / (L - 1)));
  }
  assert.ok(worstScore < 2e-4, `a previous-token score differs from Node's by ${worstScore}`);
  // Under each head its sink rate, the package's sinkRates() of Node's weights: shown to two
  // decimals (±0.005), from weights 2e-4 apart at most.
  const sinks = sinkRates({ data: node, shape: figure.shape }, { causal: true }).first;
  assert.equal(figure.sinks.length, layers * heads);
  assert.match(figure.sinkNote, /share of a head's attention on the first token/);
  figure.sinks.forEach((text, m) => {
    const [, value] = text.match(/^sink (\d\.\d\d)$/) ?? [];
    assert.ok(value !== undefined, `head ${m}: "${text}"`);
    assert.ok(Math.abs(Number(value) - sinks[m]) <= 0.005 + 2e-4, `head ${m}: sink ${value}, Node ${sinks[m]}`);
  });
  model.dispose();
  assert.deepEqual(problems, []);
  await page.close();
});

test("openModel(): a picked checkpoint is shown; one of another architecture gets a message naming it", async () => {
  const { page, problems } = await pageWith(`<attn-lens view="grid" sentence="the cat sat on the mat"></attn-lens>`);
  const files = Object.fromEntries(CHECKPOINT.map((name) => [name, [...readFileSync(`${fixtures}/${name}`)]]));
  const config = JSON.parse(files["config.json"].map((c) => String.fromCharCode(c)).join(""));
  // As a file picker gives them: File objects, with a file the checkpoint does not need.
  const opened = await page.evaluate(async (files) => {
    const el = document.querySelector("attn-lens");
    const picked = Object.entries({ ...files, "README.md": [35] }).map(([name, bytes]) => new File([new Uint8Array(bytes)], name));
    const events = [];
    el.addEventListener("attn-lens-model-progress", (e) => events.push(e.detail.phase));
    const ready = new Promise((done) => el.addEventListener("attn-lens-model", (e) => done(e.detail), { once: true }));
    await el.openModel(picked);
    const detail = await ready;
    return { model: el.model, name: detail.name, config: detail.config, error: detail.error, phases: [...new Set(events)] };
  }, files);
  assert.equal(opened.error, null);
  assert.equal(opened.model, "custom");
  assert.equal(opened.config.layers, config.n_layer);
  assert.ok(opened.phases.includes("done"), `progress phases ${opened.phases}`);
  const figure = await shown(page);
  assert.deepEqual(figure.shape.slice(0, 2), [config.n_layer, config.n_head]);
  checkCausalRows(figure);

  const albert = await page.evaluate(async (files) => {
    const el = document.querySelector("attn-lens");
    const picked = [
      new File([new Uint8Array(files["model.safetensors"])], "model.safetensors"),
      new File([JSON.stringify({ model_type: "albert", architectures: ["AlbertForMaskedLM"] })], "config.json"),
    ];
    return el.openModel(picked).then(
      () => "no error",
      (e) => ({ code: e.code, message: e.message, shown: el.shadowRoot.querySelector(".message.error")?.textContent }),
    );
  }, files);
  assert.equal(albert.code, "BAD_FILE");
  assert.match(albert.message, /"albert"/);
  assert.equal(albert.shown, albert.message);

  const missing = await page.evaluate(async () => {
    const el = document.querySelector("attn-lens");
    return el.openModel([new File(["{}"], "config.json")]).then(
      () => "no error",
      (e) => el.shadowRoot.querySelector(".message.error")?.textContent,
    );
  });
  assert.match(missing, /needs model\.safetensors; the files picked were config\.json$/);

  // closeModel(): back to random weights.
  const back = await page.evaluate(async () => {
    const el = document.querySelector("attn-lens");
    el.closeModel();
    await new Promise((done) => el.addEventListener("attn-lens-render", done, { once: true }));
    return { model: el.model, random: Boolean(el.explanation?.causal) };
  });
  assert.deepEqual(back, { model: "random", random: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test("trained mode, both models: a text longer than the context shows its first 128 tokens and says so; the encoder's is full attention", async () => {
  const long = "It is a truth universally acknowledged. ".repeat(30);
  const { page, problems } = await pageWith(`<attn-lens model="attnlens" mode="compare" sentence="${long}"></attn-lens>`);
  const figure = await shown(page);
  assert.equal(figure.error, undefined, figure.error);
  assert.equal(figure.tokens.length, 128);
  const panels = await page.evaluate(() =>
    document.querySelector("attn-lens").panels.map((p) => {
      const [, , L] = p.weights.shape;
      let above = 0;
      for (let k = 0; k < p.weights.data.length; k++) if (k % L > Math.floor(k / L) % L && p.weights.data[k] > 0) above++;
      return { title: p.title, causal: p.causal, L, first: p.tokens[0].text, last: p.tokens.at(-1).text, above };
    }),
  );
  assert.deepEqual(
    panels.map(({ title, causal, L, first, last }) => ({ title, causal, L, first, last })),
    [
      { title: "the trained causal model", causal: true, L: 128, first: "It", last: panels[0].last },
      { title: "the trained encoder", causal: false, L: 128, first: "[CLS]", last: "[SEP]" },
    ],
  );
  assert.equal(panels[0].above, 0, "the causal model's upper triangles are exactly zero");
  assert.ok(panels[1].above > 0, "the encoder attends to later tokens");
  const messages = await page.evaluate(() =>
    [...document.querySelector("attn-lens").shadowRoot.querySelectorAll(".message")].map((m) => m.textContent),
  );
  assert.ok(
    messages.some((m) => /first 128 of \d+ tokens\s+\(the model's context\)/.test(m)),
    messages.join(" | "),
  );
  assert.deepEqual(problems, []);
  await page.close();
});

/** The (layer, head) with the highest `category` score in a figure's categories. */
function strongest(categories, category) {
  let best = { layer: -1, head: -1, v: -Infinity };
  categories.forEach((row, layer) => row.forEach((c, head) => c[category] > best.v && (best = { layer, head, v: c[category] })));
  return best;
}

test("the page opens on the trained model; its mode switch shows the encoder and is in the link; presets open the strongest head of their kind", async () => {
  const { page, problems } = await openPage(site.browser.context, site.server.url);
  const started = Date.now();
  await page.goto(`${site.server.url}index.html`);
  const figure = await shown(page, "#figure");
  const firstMs = Date.now() - started;
  assert.equal(figure.error, undefined, figure.error);
  assert.equal(figure.model, "attnlens");
  assert.deepEqual(figure.shape.slice(0, 2), [2, 4]);
  assert.equal(figure.tokens.slice(0, 4).join(""), "It is a truth");
  checkCausalRows(figure);
  // Only what the trained models can show is offered; the bare page keeps a bare address.
  const offered = await page.evaluate(() => ({
    full: document.querySelector('input[name="mode"][value="full"]').checkVisibility(),
    steps: document.querySelector('input[name="view"][value="steps"]').checkVisibility(),
    seed: document.querySelector("#seed").checkVisibility(),
    trained: document.querySelector('input[name="model"][value="attnlens"]').checked,
    mode: document.querySelector("#figure").getAttribute("mode"),
    search: location.search,
  }));
  assert.deepEqual(offered, { full: true, steps: false, seed: false, trained: true, mode: "causal", search: "" });

  // Full: the encoder, its [CLS] and [SEP] (which a checkbox hides), and the link says so. The
  // switch is timed to the encoder's first painted figure (its model fetched and loaded).
  const switchStarted = Date.now();
  const painted = page.evaluate(
    () =>
      new Promise((done) =>
        document.querySelector("#figure").addEventListener("attn-lens-painted", function on() {
          if (document.querySelector("#figure").attention?.causal === false) (done(), this.removeEventListener("attn-lens-painted", on));
        }),
      ),
  );
  await page.check('input[name="mode"][value="full"]');
  await page.waitForFunction(() => document.querySelector("#figure").attention?.causal === false);
  await painted;
  const switchMs = Date.now() - switchStarted;
  const encoder = await page.evaluate(() => document.querySelector("#figure").attention.tokens.map((t) => t.text));
  assert.deepEqual([encoder[0], encoder.at(-1)], ["[CLS]", "[SEP]"]);
  await page.waitForFunction(() => {
    const q = new URL(location.href).searchParams;
    return q.get("model") === "attnlens" && q.get("mode") === "full";
  });
  await page.check("#specials");
  await page.waitForFunction(() => !document.querySelector("#figure").attention.tokens.some((t) => t.special));

  // A preset opens the head with the highest score of its kind on its own sentence.
  await page.getByRole("button", { name: /previous-token head/ }).click();
  await page.waitForFunction(() => {
    const el = document.querySelector("#figure");
    return el.attention?.causal && el.view === "heatmap" && el.head !== "mean" && el.attention.tokens.length > 20;
  });
  const picked = await page.evaluate(() => {
    const el = document.querySelector("#figure");
    return { layer: Number(el.layer), head: Number(el.head), categories: el.attention.categories };
  });
  const best = strongest(picked.categories, "previous");
  assert.deepEqual([picked.layer, picked.head], [best.layer, best.head]);
  const label = await page.evaluate(() => document.querySelector("#figure").shadowRoot.querySelector(".frame").getAttribute("aria-label"));
  assert.match(label, new RegExp(`layer ${best.layer + 1}, head ${best.head + 1} of 4`));
  console.log(
    `trained mode in Chromium: the bare page's first trained figure ${firstMs} ms after navigation (model fetch and load included); ` +
      `the switch to the encoder ${switchMs} ms to its first painted figure (its model fetched and loaded)`,
  );

  // Per keystroke at 32 tokens (printed, not asserted: timings are measured by benches).
  const text =
    "My dear sister, I have just received your letter about the ball at Netherfield, and I am very glad to hear that you are all well";
  await page.fill("#sentence", text);
  await page.waitForFunction((n) => document.querySelector("#figure").attention?.tokens.length >= n, 28);
  const times = [];
  for (let k = 0; k < 20; k++) {
    times.push(await typeAndTime(page, `${text}${k % 2 ? "." : "!"}`));
  }
  times.sort((a, b) => a - b);
  const tokens = await page.evaluate(() => document.querySelector("#figure").attention.tokens.length);
  console.log(`trained mode in Chromium: per keystroke at ${tokens} tokens, median of 20: ${times[10].toFixed(1)} ms`);
  // Back to random weights: the random figure again, and the link says so.
  await page.check('input[name="model"][value="random"]');
  await page.waitForFunction(() => document.querySelector("#figure").explanation?.causal?.weights.shape[0] >= 1);
  await page.waitForFunction(() => new URL(location.href).searchParams.get("model") === "random");
  assert.deepEqual(problems, []);
  await page.close();
});
