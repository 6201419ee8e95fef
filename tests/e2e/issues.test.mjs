// Regression tests for bugs the demo page had, one test each, in Chromium.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { launchBrowser, openPage, useSite } from "../support/browser.mjs";
import { computed, frames, nextRender, overlaps, readout, svgOf, svgTextBoxes } from "../support/figure.mjs";

const artefacts = new URL("../../test-results/", import.meta.url).pathname;
mkdirSync(artefacts, { recursive: true });
const site = useSite();

async function open(query = "?model=random", options = {}) {
  const context = options.context ?? site.browser.context;
  const session = await openPage(context, site.server.url);
  await session.page.goto(`${site.server.url}index.html${query}`);
  await session.page.waitForSelector("attn-lens .frame canvas.figure, attn-lens .message");
  await session.page.waitForFunction(() => document.body.dataset.firstFigureMs);
  return session;
}
const options = (page, id) => page.$$eval(`#${id} option`, (os) => os.map((o) => ({ value: o.value, text: o.textContent })));
const message = (page) => page.textContent("#message");

test("heads and d_model: only valid pairs are offered; a new head count keeps each head's size", async () => {
  const { page, problems } = await open();
  await nextRender(page, () => page.selectOption("#heads", "3"));
  const dims = await options(page, "dim");
  assert.ok(dims.length > 3);
  for (const d of dims) assert.equal(Number(d.value) % 3, 0, `d_model ${d.value} is offered for 3 heads`);
  // 64 with 4 heads is 16 per head; 3 heads of 16 is 48, and the list says so.
  assert.equal(await page.inputValue("#dim"), "48");
  assert.equal(dims.find((d) => d.value === "48").text, "48 (3 × 16)");
  await nextRender(page, () => page.selectOption("#dim", "24"));
  assert.equal(await page.inputValue("#heads"), "3", "picking a d_model keeps the heads");
  assert.equal(await page.inputValue("#dim"), "24");
  const ex = await computed(page);
  assert.equal(ex.modes.causal.shape[0], 3);
  assert.equal(await message(page), "");
  assert.deepEqual(problems, []);
  await page.close();
});

test("lines: a head toggled off and then picked in the Head list is drawn, not a blank figure", async () => {
  const { page, problems } = await open("?view=lines&sentence=the+cat+sat+on+the+mat");
  await nextRender(page, () => page.locator("attn-lens .heads button").nth(1).click());
  assert.match((await frames(page))[0].label, /3 of 4 heads/);
  await nextRender(page, () => page.selectOption("#head", "1"));
  const [frame] = await frames(page);
  assert.match(frame.label, /1 of 4 heads/);
  assert.ok(frame.colours > 3, "the head's lines are drawn");
  const pressed = await page.$$eval("attn-lens .heads button", (bs) => bs.map((b) => b.getAttribute("aria-pressed")));
  assert.deepEqual(pressed, ["false", "true", "false", "false"]);
  assert.deepEqual(problems, []);
  await page.close();
});

test("head toggles live in the URL and come back from it", async () => {
  const { page, problems } = await open("?view=lines&sentence=the+cat+sat+on+the+mat");
  await nextRender(page, () => page.locator("attn-lens .heads button").nth(1).click());
  await nextRender(page, () => page.locator("attn-lens .heads button").nth(3).click());
  await page.waitForURL((u) => u.searchParams.get("hide") === "2,4");
  const { page: again } = await open(new URL(page.url()).search);
  assert.match((await frames(again))[0].label, /2 of 4 heads/);
  const pressed = await again.$$eval("attn-lens .heads button", (bs) => bs.map((b) => b.getAttribute("aria-pressed")));
  assert.deepEqual(pressed, ["true", "false", "true", "false"]);
  // Every head hidden: a message says how to get lines back, instead of an empty figure.
  for (const k of [0, 2]) await nextRender(again, () => again.locator("attn-lens .heads button").nth(k).click());
  assert.match(await again.locator("attn-lens .message.warning").textContent(), /Every head is hidden/);
  assert.deepEqual(problems, []);
  await page.close();
  await again.close();
});

test("worked example: every caption is whole, in the page and in the exports", async () => {
  const { page, problems } = await open();
  await nextRender(page, () => page.click("#worked-example"));
  await page.waitForSelector("attn-lens h3.caption");
  const captions = await page.$$eval("attn-lens h3.caption", (hs) =>
    hs.map((h) => ({ text: h.textContent.trim(), clipped: h.scrollWidth > h.clientWidth + 1 })),
  );
  assert.equal(captions.length, 11);
  assert.ok(captions.every((c) => !c.clipped));
  const scale = captions.find((c) => c.text.startsWith("6."));
  assert.match(scale.text, /1\/√d_head = 1\/√4 .*d_model \/ heads = 4 \/ 1.*does not saturate$/);
  const svg = await svgOf(page);
  const texts = (await svgTextBoxes(page, svg)).map((b) => b.text);
  const width = Number(svg.match(/width="([\d.]+)"/)[1]);
  const joined = texts.join(" ");
  assert.ok(joined.includes("so the softmax does not saturate"), "the export has the whole caption");
  for (const b of await svgTextBoxes(page, svg)) assert.ok(b.x + b.w <= width + 1, `“${b.text}” fits the export's width`);
  const png = await page.evaluate(async () => {
    const blob = await document.querySelector("attn-lens").toPNG(1);
    const bitmap = await createImageBitmap(blob);
    return [bitmap.width, bitmap.height];
  });
  assert.deepEqual(png, [Math.round(width), Math.round(Number(svg.match(/height="([\d.]+)"/)[1]))]);
  writeFileSync(`${artefacts}worked-example.svg`, svg);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a 20 000-word paste: the link holds at most 2 000 characters of it and the page says so", async () => {
  const { page, problems } = await open();
  const words = Array.from({ length: 20000 }, (_, i) => ["alpha", "beta", "gamma", "delta"][i % 4]).join(" ");
  await nextRender(page, () => page.fill("#sentence", words));
  await page.waitForURL((u) => u.searchParams.has("sentence"));
  const url = page.url();
  assert.ok(url.length < 2600, `URL is ${url.length} characters`);
  const kept = new URL(url).searchParams.get("sentence");
  assert.ok(words.startsWith(kept) && kept.length <= 2000 && kept.length > 1900);
  assert.match(await page.textContent("#link-note"), /link holds the first 2,000 characters/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("seed: an out-of-range or empty seed keeps the last seed and says so", async () => {
  const { page, problems } = await open("?seed=11");
  for (const bad of ["99999999999", "", "-3", "abc"]) {
    await page.fill("#seed", bad);
    await page.dispatchEvent("#seed", "change");
    assert.equal(await page.inputValue("#seed"), "11", `after "${bad}"`);
    assert.match(await message(page), new RegExp(`Seed must be a whole number from 0 to 2147483647; got "${bad}", kept 11`));
  }
  assert.equal((await computed(page)).modes.causal.tokens.length, 7);
  assert.equal(await page.evaluate(() => document.querySelector("attn-lens").seed), "11");
  await nextRender(page, () => page.fill("#seed", "12").then(() => page.dispatchEvent("#seed", "change")));
  assert.equal(await message(page), "");
  assert.deepEqual(problems, []);
  await page.close();
});

test("timing: the line follows view and head switches and counts from the input", async () => {
  const { page, problems } = await open("?sentence=the+cat+sat+on+the+mat");
  const timing = () => page.textContent("#timing");
  const before = await timing();
  await nextRender(page, () => page.check('input[name="view"][value="lines"]'));
  await page.waitForFunction((t) => document.querySelector("#timing").textContent !== t, before);
  const afterView = await timing();
  assert.match(afterView, /^computed and drawn in \d+\.\d ms$/);
  await nextRender(page, () => page.selectOption("#head", "2"));
  await page.waitForFunction((t) => document.querySelector("#timing").textContent !== t, afterView);
  // Counted from the input event: a task that blocks after the input and before the figure shows up.
  await page.evaluate(() => {
    const head = document.querySelector("#head");
    head.value = "mean";
    const event = new Event("change");
    const start = performance.now();
    while (performance.now() - start < 60);
    head.dispatchEvent(event);
  });
  await page.waitForFunction(() => Number(document.querySelector("#timing").textContent.match(/([\d.]+) ms/)[1]) >= 60);
  assert.deepEqual(problems, []);
  await page.close();
});

test("the readout's hint fits the view, and on a touch screen says Tap", async () => {
  const { page, problems } = await open("?sentence=the+cat+sat");
  assert.match(await readout(page), /^Hover a cell/);
  for (const [view, hint] of [
    ["lines", /^Hover a word/],
    ["pca", /^Hover a point/],
    ["steps", /^Hover a number/],
  ]) {
    await nextRender(page, () => page.check(`input[name="view"][value="${view}"]`));
    await page.waitForFunction(() => document.querySelector("attn-lens").shadowRoot.querySelector(".frame"));
    assert.match(await readout(page), hint);
    assert.doesNotMatch(await readout(page), /cell/);
  }
  await page.close();
  const phone = await launchBrowser({ hasTouch: true, isMobile: true, viewport: { width: 390, height: 800 } });
  try {
    const { page: p, problems: phoneProblems } = await open("?sentence=the+cat+sat", { context: phone.context });
    assert.match(await readout(p), /^Tap a cell/);
    assert.deepEqual(phoneProblems, []);
  } finally {
    await phone.close();
  }
  assert.deepEqual(problems, []);
});

test("messages name what the page shows (d_model, Head), not internal names", async () => {
  const { page, problems } = await open("?dim=10&h=9&view=sideways");
  const text = await message(page);
  assert.match(text, /d_model 10 cannot be split into 4 heads/);
  assert.match(text, /View must be "heatmap"/);
  assert.doesNotMatch(text, /\bdim\b/);
  assert.match(await page.textContent("label:has(#dim)"), /d_model \(embedding size\)/);
  await nextRender(page, () => page.check('input[name="view"][value="steps"]'));
  await page.waitForSelector("attn-lens h3.caption");
  const captions = await page.$$eval("attn-lens h3.caption", (hs) => hs.map((h) => h.textContent));
  assert.ok(captions.some((c) => /d_model = 10|d_model = 8/.test(c) || /d_model = \d+/.test(c)));
  assert.ok(captions.some((c) => /d_head = \d+ per head/.test(c)));
  assert.deepEqual(problems, []);
  await page.close();
});

test("head numbers are 1-based in the URL, as on the page; old 0-based links open the same head", async () => {
  const { page, problems } = await open("?sentence=the+cat+sat");
  await nextRender(page, () => page.selectOption("#head", "1"));
  assert.equal(await page.$eval("#head", (s) => s.selectedOptions[0].textContent), "Head 2");
  await page.waitForURL((u) => u.searchParams.get("h") === "2" && !u.searchParams.has("head"));
  const { page: old } = await open("?sentence=the+cat+sat&head=1");
  assert.equal(await old.$eval("#head", (s) => s.selectedOptions[0].textContent), "Head 2");
  assert.match((await frames(old))[0].label, /head 2 of 4/);
  await old.waitForURL((u) => u.searchParams.get("h") === "2" && !u.searchParams.has("head"));
  assert.deepEqual(problems, []);
  await page.close();
  await old.close();
});

test("PCA side by side: both panels share their axes, and labels do not overlap", async () => {
  const { page, problems } = await open("?view=pca&mode=compare&sentence=The+dog+and+the+cat+ran+from+the+house+to+the+park+by+the+river.");
  await page.waitForFunction(() => document.querySelector("attn-lens").shadowRoot.querySelectorAll(".frame").length === 2);
  const svg = await svgOf(page);
  const boxes = await svgTextBoxes(page, svg);
  const panelWidth = (await frames(page))[0].width;
  const ticks = (left) =>
    boxes
      .filter((b) => b.size === 10 && /^[−\d.]+$/.test(b.text) && (left ? b.x < panelWidth : b.x > panelWidth))
      .map((b) => b.text)
      .sort();
  assert.ok(ticks(true).length >= 4);
  assert.deepEqual(ticks(true), ticks(false), "the same ticks on both panels");
  const labels = boxes.filter((b) => b.size === 11 && !/PC|^X/.test(b.text));
  assert.ok(labels.length >= 8);
  for (let a = 0; a < labels.length; a++) {
    for (let b = a + 1; b < labels.length; b++)
      assert.ok(!overlaps(labels[a], labels[b]), `“${labels[a].text}” and “${labels[b].text}” overlap`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test("a view's chunk that fails to load is fetched again at the next change, with a message a reader understands", async () => {
  const session = await openPage(site.browser.context, site.server.url);
  const { page, problems } = session;
  // The PCA view's chunk fails twice, as a network blip would: the page's preload when idle, and
  // the reader's switch to the view.
  let requests = 0;
  await page.route(/\/pca-[^/]+\.js$/, (route) => (requests++ < 2 ? route.abort("internetdisconnected") : route.continue()));
  await page.goto(`${site.server.url}index.html?model=random&view=heatmap`);
  await page.waitForSelector("attn-lens .frame canvas.figure");
  await page.waitForFunction(() => document.body.dataset.firstFigureMs);
  await page.waitForTimeout(300); // the idle preload
  await page.check('input[name="view"][value="pca"]');
  const message = await page.waitForFunction(
    () => document.querySelector("#figure").shadowRoot.querySelector(".message.error")?.textContent,
    null,
    {
      timeout: 20000,
    },
  );
  assert.match(
    await message.jsonValue(),
    /^\s*The pca view could not be loaded \(a network error\); it is tried again at the next change\.\s*$/,
  );
  // The next change (a word typed) loads it and draws the view.
  await page.fill("#sentence", "The cat sat on the mat today.");
  await page.waitForFunction(() => {
    const root = document.querySelector("#figure").shadowRoot;
    return !root.querySelector(".message.error") && root.querySelector(".frame canvas.figure, .frame svg.figure");
  });
  assert.equal(requests, 3, "the chunk was asked for three times");
  // Only the browser's own lines for the two failed fetches; no unhandled rejection.
  assert.ok(
    problems.every((p) => /Failed to load resource|ERR_INTERNET_DISCONNECTED/.test(p)),
    problems.join("\n"),
  );
  await page.close();
});

test("both side by side in the grid: each grid is named above its rows (both rows once read 'layer 1')", async () => {
  const { page, problems } = await openPage(site.browser.context, site.server.url);
  await page.goto(`${site.server.url}index.html?model=random&mode=compare&view=grid&sentence=The+cat+sat+on+the+mat`);
  await page.waitForFunction(() => document.querySelector("#figure").shadowRoot?.querySelectorAll(".grid").length === 2);
  const grids = await page.evaluate(() =>
    [...document.querySelector("#figure").shadowRoot.querySelectorAll(".grid")].map((g) => ({
      title: g.querySelector(".grid-title")?.textContent,
      label: g.getAttribute("aria-label"),
      rows: [...g.querySelectorAll(".grid-label")].map((l) => l.textContent),
    })),
  );
  assert.deepEqual(grids, [
    { title: "Causal attention", label: "Causal attention", rows: ["layer 1"] },
    { title: "Full attention", label: "Full attention", rows: ["layer 1"] },
  ]);
  // One grid alone needs no name.
  await page.check('input[name="mode"][value="causal"]');
  await page.waitForFunction(() => document.querySelector("#figure").shadowRoot.querySelectorAll(".grid").length === 1);
  assert.equal(await page.evaluate(() => document.querySelector("#figure").shadowRoot.querySelector(".grid-title")), null);
  assert.deepEqual(problems, []);
  await page.close();
});

test("every step: a frame far below the viewport never shows the previous sentence's numbers", async () => {
  const sentence = "a dog ran far away from home";
  const { page, problems } = await open("?model=random&sentence=the+cat+sat+on+the+mat&view=steps");
  await page.waitForSelector("attn-lens figure.pane");
  const last = (doc) => [...doc.querySelector("attn-lens").shadowRoot.querySelectorAll(".frame")].at(-1);
  const lastTop = await page.evaluate((f) => eval(f)(document).getBoundingClientRect().top - innerHeight, last.toString());
  assert.ok(lastTop > 300, `the last frame is ${lastTop} px below the viewport, not far enough to be drawn later`);
  await nextRender(page, () => page.fill("#sentence", sentence));
  // Right after the change: the far frame is either drawn again or cleared and marked stale.
  const after = await page.evaluate((f) => {
    const frame = eval(f)(document);
    const c = frame.querySelector("canvas.figure");
    const pixels = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    return { stale: frame.hasAttribute("data-stale"), blank: pixels.every((v, i) => i % 4 !== 3 || v === 0) };
  }, last.toString());
  assert.ok(!after.stale || after.blank, "a stale frame is cleared");
  // Painted while the page is idle, without scrolling: the same pixels as a page opened on the
  // new sentence and scrolled to that frame.
  await page.waitForFunction(() => !document.querySelector("attn-lens").shadowRoot.querySelector(".frame[data-stale]"), null, {
    timeout: 10000,
  });
  const image = (f) => eval(f)(document).querySelector("canvas.figure").toDataURL();
  const changed = await page.evaluate(image, last.toString());
  const fresh = await open(`?model=random&sentence=${encodeURIComponent(sentence)}&view=steps`);
  await fresh.page.waitForSelector("attn-lens figure.pane");
  await fresh.page.evaluate((f) => eval(f)(document).scrollIntoView(), last.toString());
  await fresh.page.waitForFunction(
    (f) => !eval(f)(document).hasAttribute("data-stale") && eval(f)(document).querySelector("canvas.figure").width > 0,
    last.toString(),
  );
  assert.ok(changed === (await fresh.page.evaluate(image, last.toString())), "the far frame shows the new sentence");
  assert.deepEqual(problems, []);
  assert.deepEqual(fresh.problems, []);
  await page.close();
  await fresh.page.close();
});

test("every step exported at d_model 128: matrices as images, labels that do not overlap, a name that says every step", async () => {
  const sentence = "The cat sat on the mat and looked at the door while the dog slept.";
  const { page, problems } = await open(`?model=random&view=steps&dim=128&heads=8&sentence=${encodeURIComponent(sentence)}`);
  await page.waitForSelector("attn-lens figure.pane");
  const svg = await svgOf(page);
  // Before: 3.0 MB (a rect per cell of every 128-wide matrix), labels 2 px apart, and the name
  // of the heatmap ("mean of 8 heads").
  assert.ok(svg.length < 1.2e6, `the SVG is ${(svg.length / 1e6).toFixed(2)} MB`);
  assert.match(svg, /aria-label="Causal attention, every step, head 1"/);
  assert.ok((svg.match(/<image /g) ?? []).length >= 8, "the 128-wide matrices are images");
  const boxes = (await svgTextBoxes(page, svg)).filter((b) => b.text.trim() && b.w > 0);
  // Sorted by x, each box is compared with those that start before it ends.
  boxes.sort((a, b) => a.x - b.x);
  const clashes = [];
  for (let a = 0; a < boxes.length; a++) {
    for (let b = a + 1; b < boxes.length && boxes[b].x < boxes[a].x + boxes[a].w; b++) {
      if (overlaps(boxes[a], boxes[b]))
        clashes.push(`“${boxes[a].text}” and “${boxes[b].text}” at ${boxes[a].x.toFixed(0)}, ${boxes[a].y.toFixed(0)}`);
    }
  }
  assert.deepEqual(clashes.slice(0, 10), [], `${clashes.length} overlapping labels`);
  const png = await page.evaluate(async () => {
    const bitmap = await createImageBitmap(await document.querySelector("attn-lens").toPNG(1));
    return { width: bitmap.width, height: bitmap.height };
  });
  assert.ok(png.width <= 1000, `PNG ${png.width} px wide`);
  assert.deepEqual(problems, []);
  await page.close();
});
