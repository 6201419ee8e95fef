// The demo page, driven in Chromium: typing, modes, heads, views, URL state, export, safety.
// Screenshots of each view are saved to test-results/ as artefacts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { openPage, useSite } from "../support/browser.mjs";

const artefacts = new URL("../../test-results/", import.meta.url).pathname;
mkdirSync(artefacts, { recursive: true });

const site = useSite();

/** Opens the demo (with an optional query) and waits for its first figure. */
async function open(query = "") {
  const session = await openPage(site.browser.context, site.server.url);
  session.dialogs = [];
  session.page.on("dialog", (dialog) => {
    session.dialogs.push(dialog.message());
    dialog.dismiss();
  });
  await session.page.goto(`${site.server.url}index.html${query}`);
  await session.page.waitForSelector("attn-lens svg.figure");
  return session;
}

/** Resolves with the detail of the next render of the figure, after `action` runs. */
async function nextRender(page, action) {
  const waiting = page.evaluate(
    () =>
      new Promise((done) =>
        document
          .querySelector("attn-lens")
          .addEventListener("attn-lens-render", (e) => done({ ms: e.detail.ms, error: e.detail.error }), { once: true }),
      ),
  );
  await action();
  return waiting;
}

/** The heatmap cells as { i, j, w, masked }. */
function cells(page, figureIndex = 0) {
  return page.evaluate((index) => {
    const svg = document.querySelector("attn-lens").shadowRoot.querySelectorAll("svg.figure")[index];
    return [...svg.querySelectorAll("rect.cell")].map((r) => ({
      i: Number(r.dataset.i),
      j: Number(r.dataset.j),
      w: Number(r.dataset.w),
      masked: r.dataset.masked === "true",
    }));
  }, figureIndex);
}

const chipTexts = (page) => page.$$eval("#tokens li", (items) => items.map((li) => li.textContent));

test("load, type a sentence: tokens appear and the figure follows", async () => {
  const { page, problems } = await open();
  const firstFigureMs = await page.evaluate(() => document.body.dataset.firstFigureMs);
  console.log(`# first figure in the DOM ${firstFigureMs} ms after navigation`);
  await nextRender(page, () => page.fill("#sentence", "Colorless green ideas sleep furiously!"));
  assert.deepEqual(await chipTexts(page), ["colorless", "green", "ideas", "sleep", "furiously", "!"]);
  const c = await cells(page);
  assert.equal(c.length, 36);
  assert.match(page.url(), /sentence=Colorless\+green/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("causal: every cell above the diagonal holds weight 0; full differs", async () => {
  const { page, problems } = await open("?sentence=the+quick+brown+fox+jumps");
  const causal = await cells(page);
  for (const c of causal) {
    if (c.j > c.i) {
      assert.equal(c.w, 0, `cell ${c.i},${c.j}`);
      assert.equal(c.masked, true);
    }
  }
  for (let i = 0; i < 5; i++) {
    const sum = causal.filter((c) => c.i === i).reduce((s, c) => s + c.w, 0);
    // Mean of 4 heads' rows, each summing to 1 within (S + 1) u (u = 2^-24, S = 5 keys), the
    // mean adding 3 roundings: (S + 4) u = 5.4e-7 < 1e-6. NaN fails the comparison.
    assert.ok(Math.abs(sum - 1) < 1e-6, `row ${i} sums to ${sum}`);
  }
  await nextRender(page, () => page.check('input[name="mode"][value="full"]'));
  const full = await cells(page);
  assert.ok(
    full.some((c) => c.j > c.i && c.w > 0),
    "full attention looks ahead",
  );
  assert.ok(full.every((c) => !c.masked));
  await nextRender(page, () => page.check('input[name="mode"][value="compare"]'));
  const titles = await page.locator("attn-lens svg.figure > text").allTextContents();
  assert.ok(titles.some((t) => t.startsWith("Causal attention")) && titles.some((t) => t.startsWith("Full attention")), titles.join(" | "));
  assert.deepEqual(problems, []);
  await page.close();
});

test("heads switch: small multiples per head and their mean, click a head to pick it", async () => {
  const { page, problems } = await open("?sentence=the+cat+sat+on+the+mat");
  await nextRender(page, () => page.selectOption("#heads", "2"));
  const buttons = page.locator("attn-lens .heads button");
  assert.equal(await buttons.count(), 3);
  const mean = await cells(page);
  await buttons.nth(2).click();
  await page.waitForFunction(() => document.querySelector("#head").value === "1");
  await page.waitForFunction(() =>
    document.querySelector("attn-lens").shadowRoot.querySelector("svg.figure > text").textContent.includes("head 2 of 2"),
  );
  const head2 = await cells(page);
  assert.notDeepEqual(head2, mean);
  assert.match(page.url(), /head=1/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("views switch, with a screenshot of each", async () => {
  const { page, problems } = await open("?sentence=The+animal+didn%27t+cross+the+street+because+it+was+tired.");
  for (const view of ["heatmap", "lines", "steps", "pca"]) {
    await page.check(`input[name="view"][value="${view}"]`);
    await page.waitForSelector(`attn-lens svg.figure[data-view="${view}"]`);
    if (view === "steps") assert.ok((await page.locator("attn-lens g.stage").count()) > 10, "the steps view shows every stage");
    await page.screenshot({ path: `${artefacts}demo-${view}.png`, fullPage: true });
  }
  assert.equal(await page.locator('attn-lens svg[data-view="lines"]').count(), 0, "only the current view is drawn");
  assert.deepEqual(problems, []);
  await page.close();
});

test("the URL holds the state: opening the link restores the same figure", async () => {
  const { page, problems } = await open();
  await nextRender(page, () => page.fill("#sentence", "a link restores everything"));
  await nextRender(page, () => page.selectOption("#dim", "32"));
  await nextRender(page, () => page.fill("#seed", "42").then(() => page.dispatchEvent("#seed", "change")));
  await nextRender(page, () => page.check('input[name="mode"][value="full"]'));
  const link = page.url();
  const before = await cells(page);
  const { page: second, problems: secondProblems } = await open(new URL(link).search);
  assert.equal(await second.inputValue("#sentence"), "a link restores everything");
  assert.equal(await second.inputValue("#dim"), "32");
  assert.equal(await second.inputValue("#seed"), "42");
  assert.equal(await second.isChecked('input[name="mode"][value="full"]'), true);
  assert.deepEqual(await cells(second), before);
  assert.deepEqual([...problems, ...secondProblems], []);
  await page.close();
  await second.close();
});

test("markup typed as a sentence stays text and runs nothing", async () => {
  const { page, problems, dialogs } = await open();
  const markup = "<img src=x onerror=alert(1)> <script>alert(2)</script>";
  await nextRender(page, () => page.fill("#sentence", markup));
  const chips = await chipTexts(page);
  assert.ok(chips.includes("img") && chips.includes("<") && chips.includes("onerror"), chips.join(" "));
  const images = await page.evaluate(
    () => document.querySelectorAll("img").length + document.querySelector("attn-lens").shadowRoot.querySelectorAll("img, script").length,
  );
  assert.equal(images, 0);
  await page.waitForTimeout(200);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test("export: SVG and PNG files, JSON and CSV", async () => {
  const { page, problems } = await open("?sentence=export+me+please");
  const svgText = await page.evaluate(() => document.querySelector("attn-lens").toSVG());
  assert.match(svgText, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.ok(svgText.includes("rect") && svgText.length > 1000);
  const [svgDownload] = await Promise.all([page.waitForEvent("download"), page.click("attn-lens >> text=SVG")]);
  assert.equal(svgDownload.suggestedFilename(), "attnlens-heatmap.svg");
  const [pngDownload] = await Promise.all([page.waitForEvent("download"), page.click("attn-lens >> text=PNG")]);
  const pngPath = `${artefacts}export.png`;
  await pngDownload.saveAs(pngPath);
  const { readFileSync } = await import("node:fs");
  const png = readFileSync(pngPath);
  assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], "PNG signature");
  assert.ok(png.length > 2000);
  const [json] = await Promise.all([page.waitForEvent("download"), page.click("#export-json")]);
  const data = JSON.parse(readFileSync(await json.path(), "utf8"));
  assert.deepEqual(data.causal.tokens, ["export", "me", "please"]);
  assert.equal(data.causal.trace.mask.data[1], "-Infinity");
  const [csv] = await Promise.all([page.waitForEvent("download"), page.click("#export-csv")]);
  const lines = readFileSync(await csv.path(), "utf8")
    .trim()
    .split("\n");
  assert.equal(lines[0], "head,query_index,query,key_index,key,weight");
  assert.equal(lines.length, 1 + 4 * 9);
  assert.deepEqual(problems, []);
  await page.close();
});

test("empty input shows a hint; a 3 000-word paste shows the first tokens and stays responsive", async () => {
  const { page, problems } = await open();
  await nextRender(page, () => page.fill("#sentence", "   "));
  assert.match(await page.textContent("#message"), /Type a sentence/);
  const words = Array.from({ length: 3000 }, (_, i) => ["the", "cat", "sat", "on", "a", "mat"][i % 6]).join(" ");
  const detail = await nextRender(page, () => page.fill("#sentence", words));
  assert.equal(detail.error, null);
  assert.match(await page.textContent("#message"), /3000 tokens; the figure shows the first 64/);
  assert.equal((await cells(page)).length, 64 * 64);
  const typed = await nextRender(page, () => page.type("#sentence", "!", { delay: 0 }));
  console.log(`# 3000-word paste: a keystroke recomputed and redrew in ${typed.ms.toFixed(1)} ms`);
  assert.deepEqual(problems, []);
  await page.close();
});

test("embed mode shows only the figure; keyboard reaches every control", async () => {
  const { page, problems } = await open("?embed=1&view=lines");
  assert.equal(await page.isVisible("#sentence"), false);
  assert.equal(await page.isVisible("attn-lens"), true);
  await page.close();
  const { page: full } = await open();
  await full.focus("#sentence");
  const reached = new Set();
  for (let i = 0; i < 40; i++) {
    await full.keyboard.press("Tab");
    reached.add(
      await full.evaluate(
        () => document.activeElement?.id || document.activeElement?.getAttribute("name") || document.activeElement?.tagName,
      ),
    );
  }
  for (const id of ["heads", "head", "dim", "seed", "init", "positional", "copy-link"]) assert.ok(reached.has(id), `Tab reaches #${id}`);
  assert.deepEqual(problems, []);
  await full.close();
});

test("timing: edit of a 64-token sentence with 4 heads, dim 64 (reported, not asserted)", async () => {
  const { page } = await open("?heads=4&dim=64");
  const sentence = Array.from({ length: 64 }, (_, i) => `w${i}`).join(" ");
  await nextRender(page, () => page.fill("#sentence", sentence));
  const times = [];
  for (let k = 0; k < 10; k++) times.push((await nextRender(page, () => page.fill("#sentence", `${sentence.slice(0, -1)}${k}`))).ms);
  times.sort((a, b) => a - b);
  console.log(
    `# 64 tokens, 4 heads, dim 64: recompute + redraw median ${times[5].toFixed(1)} ms (min ${times[0].toFixed(1)}, max ${times[9].toFixed(1)})`,
  );
  await page.close();
});

test("phone width: the page fits 360 px", async () => {
  const { page, problems } = await open();
  await page.setViewportSize({ width: 360, height: 740 });
  await page.waitForTimeout(100);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px`);
  await page.screenshot({ path: `${artefacts}demo-360px.png`, fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});
