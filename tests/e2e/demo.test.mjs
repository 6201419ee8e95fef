// The demo page, driven in Chromium: typing, modes, heads, views, URL state, export, safety.
// Screenshots of each view are saved to test-results/ as artefacts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { openPage, useSite } from "../support/browser.mjs";
import { WORDS, sentence } from "../support/sentences.mjs";
import { computed, frames, keyTo, nextRender, parseReadout, readout, svgOf } from "../support/figure.mjs";
import { loadAttnLens } from "attnlens";

const artefacts = new URL("../../test-results/", import.meta.url).pathname;
mkdirSync(artefacts, { recursive: true });

const site = useSite();

/** Opens the demo (with an optional query) and waits for its first figure. */
/** The bare page opens on the trained model; these tests are about the random-weights mode. */
async function open(query = "?model=random", { viewport } = {}) {
  const session = await openPage(site.browser.context, site.server.url);
  session.dialogs = [];
  session.page.on("dialog", (dialog) => {
    session.dialogs.push(dialog.message());
    dialog.dismiss();
  });
  if (viewport) await session.page.setViewportSize(viewport);
  await session.page.goto(`${site.server.url}index.html${query}`);
  await session.page.waitForSelector("attn-lens .frame canvas.figure");
  await session.page.waitForFunction(() => document.body.dataset.firstFigureMs);
  return session;
}

const chipTexts = (page) => page.$$eval("#tokens li", (items) => items.map((li) => li.textContent));
/** The address bar follows the state a moment later (it is not on the figure's critical path). */
const urlHas = (page, pattern) => page.waitForURL((url) => pattern.test(url.search), { timeout: 5000 });

test("load, type a sentence: tokens appear and the figure follows", async () => {
  const { page, problems } = await open();
  const firstFigureMs = await page.evaluate(() => document.body.dataset.firstFigureMs);
  console.log(`# first figure drawn ${firstFigureMs} ms after navigation`);
  await nextRender(page, () => page.fill("#sentence", "Colorless green ideas sleep furiously!"));
  assert.deepEqual(await chipTexts(page), ["Colorless", "green", "ideas", "sleep", "furiously", "!"]);
  const f = await computed(page);
  assert.deepEqual(f.modes.causal.tokens, ["Colorless", "green", "ideas", "sleep", "furiously", "!"]);
  const [frame] = await frames(page);
  assert.ok(frame.colours > 10, `the canvas holds a picture (${frame.colours} colours)`);
  assert.match(frame.label, /Causal attention, mean of 4 heads/);
  await urlHas(page, /sentence=Colorless\+green/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("causal: the drawn cells above the diagonal read masked, weight 0; the others read the computed weights", async () => {
  const { page, problems } = await open("?sentence=the+quick+brown+fox+jumps");
  const { causal } = (await computed(page)).modes;
  const L = 5;
  for (let i = 0; i < L; i++) {
    // The mean of 4 heads' rows, each summing to 1 within (S + 1) u (u = 2^-24, S = 5 keys), the
    // mean adding 3 roundings: (S + 4) u = 5.4e-7 < 1e-6. NaN fails the comparison.
    const sum = causal.mean.slice(i * L, (i + 1) * L).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 1e-6, `row ${i} sums to ${sum}`);
    for (let j = 0; j < L; j++) {
      const r = parseReadout(await keyTo(page, 0, i, j));
      assert.ok(r, `readout for ${i},${j}`);
      assert.deepEqual([r.i, r.j], [i, j]);
      const w = causal.mean[i * L + j];
      if (j > i) {
        assert.equal(w, 0, `weight ${i},${j} is exactly 0`);
        assert.ok(r.masked, `cell ${i},${j} reads masked`);
      } else {
        assert.ok(!r.masked);
        // The readout shows 4 significant digits: within half a unit of the 4th digit.
        assert.ok(Math.abs(r.value - w) <= 0.5 * 10 ** (Math.floor(Math.log10(w)) - 3) + 1e-12, `cell ${i},${j}: ${r.value} vs ${w}`);
      }
    }
  }
  // The export draws the same figure: one hatched run per row that has masked cells (the
  // grid's runs are the subpaths of one path), and the legend's swatch.
  const svg = await svgOf(page);
  const hatched = [...svg.matchAll(/<(rect|path)\b([^>]*)fill="url\(#[^)]*hatch[^)]*\)"/g)];
  const runs = hatched.map(([, tag, attrs]) => (tag === "rect" ? 1 : (attrs.match(/z/g) ?? []).length));
  assert.deepEqual(runs, [L - 1, 1], "the grid's hatched runs, then the legend swatch");
  await nextRender(page, () => page.check('input[name="mode"][value="full"]'));
  const { full } = (await computed(page)).modes;
  assert.ok(
    full.mean.some((w, k) => k % L > Math.floor(k / L) && w > 0),
    "full attention looks ahead",
  );
  assert.equal(parseReadout(await keyTo(page, 0, 0, 4)).masked, false);
  await nextRender(page, () => page.check('input[name="mode"][value="compare"]'));
  const labels = (await frames(page)).map((f) => f.label);
  assert.equal(labels.length, 2);
  assert.match(labels[0], /^Causal attention/);
  assert.match(labels[1], /^Full attention/);
  // Side by side, the keyboard cursor shows the same cell in both, with both values.
  const both = await keyTo(page, 0, 2, 3);
  assert.match(both, /^causal: row 3 .* masked, weight 0 · full: row 3 .* weight \d/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("heads: thumbnails per head and their mean, click a head to pick it", async () => {
  const { page, problems } = await open("?sentence=the+cat+sat+on+the+mat");
  await nextRender(page, () => page.selectOption("#heads", "2"));
  const buttons = page.locator("attn-lens .heads button");
  assert.equal(await buttons.count(), 3);
  const mean = await readout(page).then(() => keyTo(page, 0, 3, 1));
  await nextRender(page, () => buttons.nth(2).click());
  await page.waitForFunction(() => document.querySelector("#head").value === "1");
  assert.match((await frames(page))[0].label, /head 2 of 2/);
  const head2 = await keyTo(page, 0, 3, 1);
  assert.notEqual(head2, mean);
  await urlHas(page, /(^|&|\?)h=2(&|$)/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("views switch, with a screenshot of each", async () => {
  const { page, problems } = await open("?sentence=The+dog+and+the+cat+ran+from+the+house+to+the+park+by+the+river.");
  for (const view of ["lines", "steps", "pca", "heatmap"]) {
    await nextRender(page, () => page.check(`input[name="view"][value="${view}"]`));
    await page.waitForFunction(
      (v) => document.querySelector("attn-lens").view === v && document.querySelector("attn-lens").shadowRoot.querySelector(".frame"),
      view,
    );
    if (view === "steps") assert.ok((await page.locator("attn-lens figure.pane").count()) > 15, "the steps view shows every stage");
    const drawn = await frames(page);
    assert.ok(drawn.length >= 1 && drawn.some((f) => f.colours > 5), `${view} draws`);
    await page.screenshot({ path: `${artefacts}demo-${view}.png`, fullPage: true });
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test("the URL holds the state: opening the link restores the same figure", async () => {
  const { page, problems } = await open();
  await nextRender(page, () => page.fill("#sentence", "a link restores everything"));
  await nextRender(page, () => page.selectOption("#dim", "32"));
  await nextRender(page, () => page.fill("#seed", "42").then(() => page.dispatchEvent("#seed", "change")));
  await nextRender(page, () => page.check('input[name="mode"][value="full"]'));
  await nextRender(page, () => page.selectOption("#colormap", "cividis"));
  await urlHas(page, /colormap=cividis/);
  const link = page.url();
  const before = await computed(page);
  const svgBefore = await svgOf(page);
  const { page: second, problems: secondProblems } = await open(new URL(link).search);
  assert.equal(await second.inputValue("#sentence"), "a link restores everything");
  assert.equal(await second.inputValue("#dim"), "32");
  assert.equal(await second.inputValue("#seed"), "42");
  assert.equal(await second.inputValue("#colormap"), "cividis");
  assert.equal(await second.isChecked('input[name="mode"][value="full"]'), true);
  assert.deepEqual(await computed(second), before);
  assert.equal(await svgOf(second), svgBefore, "the same link draws the same picture");
  assert.deepEqual([...problems, ...secondProblems], []);
  await page.close();
  await second.close();
});

test("a hovered cell that an edit removes is dropped, and the figure still follows", async () => {
  const { page, problems } = await open("?sentence=one+two+three+four+five+six");
  // The pointer rests on a cell of the last row while the sentence changes under it.
  await page.locator("attn-lens .frame").scrollIntoViewIfNeeded();
  const box = await page.locator("attn-lens .frame").boundingBox();
  await page.mouse.move(box.x + box.width * 0.45, box.y + box.height * 0.68);
  assert.match(await readout(page), /^row [56] /);
  await nextRender(page, () =>
    page.evaluate(() => {
      const input = document.querySelector("#sentence");
      input.value = "one two";
      input.dispatchEvent(new Event("input", { bubbles: true }));
    }),
  );
  assert.deepEqual((await computed(page)).modes.causal.tokens, ["one", "two"]);
  assert.match(await readout(page), /^Hover a cell/);
  assert.equal(await page.locator("attn-lens .message.error").count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test("markup typed as a sentence stays text and runs nothing", async () => {
  const { page, problems, dialogs } = await open();
  const markup = "<img src=x onerror=alert(1)> <script>alert(2)</script>";
  await nextRender(page, () => page.fill("#sentence", markup));
  const chips = await chipTexts(page);
  assert.ok(chips.includes("img") && chips.includes("<") && chips.includes("onerror"), chips.join(" "));
  await page.locator("attn-lens details.describe summary").click();
  await page.waitForSelector("attn-lens details.describe li");
  const read = await keyTo(page, 0, 1, 0);
  assert.match(read, /row 2 “img”/);
  const svg = await svgOf(page);
  assert.ok(!svg.includes("<img") && !svg.includes("<script"), "the export escapes the tokens");
  const images = await page.evaluate(
    () => document.querySelectorAll("img").length + document.querySelector("attn-lens").shadowRoot.querySelectorAll("img, script").length,
  );
  assert.equal(images, 0);
  await page.waitForTimeout(200);
  assert.deepEqual(dialogs, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test("export: SVG and PNG files, JSON, and CSV with every mode shown (compare gives both)", async () => {
  const { page, problems } = await open("?sentence=export+me+please");
  const svgText = await svgOf(page);
  assert.match(svgText, /^<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.ok(svgText.includes("<rect") && svgText.includes(">export</text>"));
  const [svgDownload] = await Promise.all([page.waitForEvent("download"), page.click("attn-lens >> text=SVG")]);
  assert.equal(svgDownload.suggestedFilename(), "attnlens-heatmap.svg");
  const [pngDownload] = await Promise.all([page.waitForEvent("download"), page.click("attn-lens >> text=PNG")]);
  const pngPath = `${artefacts}export.png`;
  await pngDownload.saveAs(pngPath);
  const png = readFileSync(pngPath);
  assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], "PNG signature");
  const svgWidth = Number(svgText.match(/width="([\d.]+)"/)[1]);
  assert.equal(png.readUInt32BE(16), Math.round(svgWidth * 2), "the PNG is the SVG's size at 2x");
  const [json] = await Promise.all([page.waitForEvent("download"), page.click("#export-json")]);
  const data = JSON.parse(readFileSync(await json.path(), "utf8"));
  assert.deepEqual(data.causal.tokens, ["export", "me", "please"]);
  assert.equal(data.causal.trace.mask.data[1], "-Infinity");
  const csvLines = async () => {
    const [csv] = await Promise.all([page.waitForEvent("download"), page.click("#export-csv")]);
    return readFileSync(await csv.path(), "utf8")
      .trim()
      .split("\n");
  };
  const causalOnly = await csvLines();
  assert.equal(causalOnly[0], "mode,head,query_index,query,key_index,key,weight");
  assert.equal(causalOnly.length, 1 + 4 * 9);
  // Regression: in compare mode the CSV dropped the full attention.
  await nextRender(page, () => page.check('input[name="mode"][value="compare"]'));
  const both = await csvLines();
  assert.equal(both.length, 1 + 2 * 4 * 9);
  assert.equal(both.filter((l) => l.startsWith("full,")).length, 4 * 9);
  assert.equal(both.filter((l) => l.startsWith("causal,")).length, 4 * 9);
  assert.equal(both.find((l) => l.startsWith("causal,1,1,export,2,")).split(",")[6], "0", "masked weights are exactly 0");
  assert.deepEqual(problems, []);
  await page.close();
});

test("compare mode exports one SVG with unique ids (two panels once gave duplicate ids)", async () => {
  const { page, problems } = await open("?sentence=the+cat+sat+on+the+mat&mode=compare");
  for (const view of ["lines", "pca", "steps", "heatmap"]) {
    await nextRender(page, () => page.check(`input[name="view"][value="${view}"]`));
    await page.waitForFunction(() => document.querySelector("attn-lens").shadowRoot.querySelector(".frame"));
    const svg = await svgOf(page);
    const ids = [...svg.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]);
    assert.equal(new Set(ids).size, ids.length, `${view}: ${ids.join(" ")}`);
    for (const ref of svg.matchAll(/url\(#([^)]+)\)/g)) assert.ok(ids.includes(ref[1]), `${view}: #${ref[1]} is defined`);
  }
  assert.equal(await page.evaluate(() => document.querySelector("attn-lens").shadowRoot.querySelectorAll("[id]").length), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test("empty input shows a hint; a 3 000-word paste shows the first 1 024 tokens, says so, stays responsive", async () => {
  const { page, problems } = await open();
  await nextRender(page, () => page.fill("#sentence", "   "));
  assert.match(await page.textContent("#message"), /Type a sentence/);
  const words = Array.from({ length: 3000 }, (_, i) => ["the", "cat", "sat", "on", "a", "mat"][i % 6]).join(" ");
  const detail = await nextRender(page, () => page.fill("#sentence", words));
  assert.equal(detail.error, null);
  assert.match(await page.textContent("#message"), /3000 tokens; the figure shows the first 1024/);
  const f = await computed(page);
  assert.equal(f.modes.causal.tokens.length, 1024);
  assert.match(await page.locator("attn-lens .message.warning").first().textContent(), /first 1024 of 3000 tokens/);
  const typed = await nextRender(page, () => page.type("#sentence", "!", { delay: 0 }));
  console.log(
    `# 3000-word paste: a keystroke recomputed and redrew in ${typed.ms.toFixed(1)} ms (explain ${typed.computeMs.toFixed(1)} ms)`,
  );
  assert.deepEqual(problems, []);
  await page.close();
});

test("a 500-token paragraph: shown whole, zoom and scroll to read any cell, labels never overlap", async () => {
  const { page, problems } = await open(`?heads=8&sentence=${encodeURIComponent(sentence(500))}`);
  const f = await computed(page);
  assert.equal(f.modes.causal.tokens.length, 500);
  assert.equal(f.truncated, false);
  const [fit] = await frames(page);
  assert.ok(fit.scrollWidth <= fit.width + 1 && fit.scrollHeight <= fit.height + 1, "at first the whole grid fits");
  const svg = await svgOf(page);
  assert.ok(svg.includes("<image"), "a 500 x 500 grid exports as one image");
  const { svgTextBoxes, overlaps } = await import("../support/figure.mjs");
  // Row labels are level: their boxes must not meet.
  const rows = (await svgTextBoxes(page, svg)).filter((b) => WORDS.includes(b.text) && !b.rotated);
  assert.ok(rows.length >= 20, `${rows.length} row labels drawn`);
  for (let a = 0; a < rows.length; a++) {
    for (let b = a + 1; b < rows.length; b++)
      assert.ok(!overlaps(rows[a], rows[b]), `row labels ${rows[a].text} and ${rows[b].text} overlap`);
  }
  // Column labels are parallel, turned 60°: two of them a horizontal distance d apart are
  // d·sin 60° apart across their lines, which must be at least the font size.
  const columns = [...svg.matchAll(/<text [^>]*font-size="(\d+)"[^>]*transform="translate\(([\d.]+),[\d.]+\) rotate\(-60\)"/g)].map((m) => [
    Number(m[2]),
    Number(m[1]),
  ]);
  assert.ok(columns.length >= 20, `${columns.length} column labels drawn`);
  columns.sort((a, b) => a[0] - b[0]);
  for (let k = 1; k < columns.length; k++)
    assert.ok((columns[k][0] - columns[k - 1][0]) * Math.sin(Math.PI / 3) >= columns[k][1], `column labels ${k - 1} and ${k} overlap`);
  for (let k = 0; k < 3; k++) await nextRender(page, () => page.click('attn-lens button[aria-label="Zoom in"]'));
  const [zoomed] = await frames(page);
  assert.ok(zoomed.scrollWidth > zoomed.width * 4, "zoomed in, the grid scrolls");
  const r = parseReadout(await keyTo(page, 0, 310, 250));
  assert.deepEqual([r.i, r.j], [310, 250]);
  assert.ok(Math.abs(r.value - f.modes.causal.mean[310 * 500 + 250]) < 1e-3 * Math.max(1e-3, r.value) + 1e-7);
  const scrolled = await page.evaluate(() => {
    const box = document.querySelector("attn-lens").shadowRoot.querySelector(".frame");
    return [box.scrollLeft, box.scrollTop];
  });
  assert.ok(scrolled[0] > 0 && scrolled[1] > 0, "the keyboard cursor scrolled the cell into view");
  await page.screenshot({ path: `${artefacts}demo-500-tokens.png`, fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test("wide glyphs: CJK and emoji labels are measured, not clipped", async () => {
  const { page, problems } = await open(`?sentence=${encodeURIComponent("猫 が マット 😀 👩‍👩‍👧 ok")}`);
  const svg = await svgOf(page);
  const { svgTextBoxes } = await import("../support/figure.mjs");
  const boxes = await svgTextBoxes(page, svg);
  const width = Number(svg.match(/width="([\d.]+)"/)[1]);
  for (const token of ["猫", "マット", "😀"]) {
    const label = boxes.find((b) => b.text === token);
    assert.ok(label, `${token} is drawn whole`);
    assert.ok(label.x >= 0 && label.x + label.w <= width, `${token} lies inside the figure`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test("embed mode shows only the figure, which fits; keyboard reaches every control", async () => {
  const { page, problems } = await open("?embed=1&view=lines");
  assert.equal(await page.isVisible("#sentence"), false);
  assert.equal(await page.isVisible("attn-lens"), true);
  await page.close();
  const { page: full } = await open();
  await full.focus("#sentence");
  const reached = new Set();
  for (let i = 0; i < 60; i++) {
    await full.keyboard.press("Tab");
    reached.add(
      await full.evaluate(() => {
        const active = document.activeElement;
        if (active?.tagName === "ATTN-LENS") return `figure:${active.shadowRoot.activeElement?.className}`;
        return active?.id || active?.getAttribute("name") || active?.tagName;
      }),
    );
  }
  for (const id of ["heads", "head", "dim", "seed", "init", "positional", "theme", "colormap", "copy-link", "figure:frame"])
    assert.ok(reached.has(id), `Tab reaches ${id}`);
  assert.deepEqual(problems, []);
  await full.close();
});

test("each edit of a 64-token sentence (4 heads, dim 64) draws a figure of the edited text; the time is printed", async () => {
  const { page } = await open("?heads=4&dim=64");
  const text = Array.from({ length: 64 }, (_, i) => `w${String.fromCharCode(97 + (i % 26))}`).join(" ");
  await nextRender(page, () => page.fill("#sentence", text));
  const times = [];
  for (let k = 0; k < 10; k++) {
    const edited = `${text.slice(0, -1)}${String.fromCharCode(97 + k)}`;
    const render = await nextRender(page, () => page.fill("#sentence", edited));
    assert.equal(render.error ?? null, null, `edit ${k}: ${render.error}`);
    assert.equal(render.tokens?.length, 64, `edit ${k}: ${render.tokens?.length} tokens drawn`);
    assert.equal(render.tokens.at(-1), edited.split(" ").at(-1), `edit ${k}: the last token drawn`);
    times.push(render.ms);
  }
  times.sort((a, b) => a - b);
  console.log(
    `# 64 tokens, 4 heads, dim 64: recompute + redraw median ${times[5].toFixed(1)} ms (min ${times[0].toFixed(1)}, max ${times[9].toFixed(1)})`,
  );
  await page.close();
});

test("every step: a head switch shows that head's scores (the trace holds the head shown)", async () => {
  const { page, problems } = await open("?sentence=the+cat+sat+on+the+mat&view=steps&mode=compare");
  await page.waitForSelector("attn-lens figure.pane");
  const lens = await loadAttnLens();
  /** The readout of row i, column j (0-based) of the `nth` pane whose label starts with `name`. */
  const cell = async (name, nth, i, j) => {
    const found = await page.evaluate(
      ([n, at]) => {
        const frames = [...document.querySelector("attn-lens").shadowRoot.querySelectorAll(".frame")];
        const frame = frames.filter((f) => f.getAttribute("aria-label").startsWith(n))[at];
        frame?.focus();
        return !!frame;
      },
      [name, nth],
    );
    assert.ok(found, `pane ${nth + 1} named ${name}`);
    await page.keyboard.press("ArrowRight"); // the first key focuses cell (1, 1)
    for (let r = 0; r < i; r++) await page.keyboard.press("ArrowDown");
    for (let c = 0; c < j; c++) await page.keyboard.press("ArrowRight");
    return readout(page);
  };
  for (const head of [0, 2]) {
    if (head) await nextRender(page, () => page.selectOption("#head", String(head)));
    await page.waitForFunction((h) => document.querySelector("attn-lens").explanation?.causal?.options.traceHead === h, head);
    await page.waitForSelector("attn-lens figure.pane");
    // The numbers the page shows against the package's explain() with every head traced.
    const { traceHead, ...options } = await page.evaluate(() => document.querySelector("attn-lens").explanation.full.options);
    assert.equal(traceHead, head);
    const expected = lens.explain("the cat sat on the mat", options);
    const L = expected.tokens.length;
    // The scores (shown once) and the full panel's masked scores (the second of two).
    for (const [name, nth, stage] of [
      ["Scores Q", 0, "scores"],
      ["Masked scores", 1, "masked"],
    ]) {
      const text = await cell(name, nth, 2, 1);
      assert.match(text, new RegExp(`head ${head + 1}: query 3 “sat”, key 2 “cat” = `), text);
      const shown = Number(text.split(" = ")[1].replace("−", "-"));
      const value = expected.trace[stage].data[head * L * L + 2 * L + 1];
      // 4 significant digits (half a unit of the 4th), and the page's module (relaxed SIMD: fused
      // multiply-adds) rounds differently from this Node's. Both compute q and k from the same X
      // and W (E products each, within gamma(E) sum |x_c W_ce| of exact: a difference Q_e, K_e of
      // at most twice that) and then q · k (d products: 2 gamma(d) sum |q_e k_e| apart), so the
      // scores differ by at most sum (Q_e |k_e| + |q_e| K_e + Q_e K_e) + 2 gamma(d) sum |q_e k_e|
      // (times the scale, plus its rounding, for the masked stage).
      const u = 2 ** -24;
      const gamma = (n) => (n * u) / (1 - n * u);
      const E = expected.embeddings.shape[1];
      const d = expected.trace.q.shape[2];
      const x = expected.embeddings.data;
      const bound = (w, row, e) => {
        let sum = 0;
        for (let c = 0; c < E; c++) sum += Math.abs(x[row * E + c] * w.data[c * E + head * d + e]);
        return 2 * gamma(E) * sum;
      };
      let slack = 0;
      for (let e = 0; e < d; e++) {
        const q = expected.trace.q.data[(head * L + 2) * d + e];
        const k = expected.trace.k.data[(head * L + 1) * d + e];
        const [Q, K] = [bound(expected.projections.wq, 2, e), bound(expected.projections.wk, 1, e)];
        slack += Q * Math.abs(k) + Math.abs(q) * K + Q * K + 2 * gamma(d) * Math.abs(q * k);
      }
      if (stage === "masked") slack = slack * expected.trace.scale + 2 * u * Math.abs(value);
      const digits = 0.5 * 10 ** (Math.floor(Math.log10(Math.abs(value))) - 3);
      assert.ok(Math.abs(shown - value) <= digits + slack, `${name}: ${shown} against ${value}`);
    }
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test("recycle: the demo writes each figure into the previous one's arrays, and shows the new numbers", async () => {
  const { page, problems } = await open("?sentence=the+quick+brown+fox+jumps&mode=compare");
  assert.equal(await page.$eval("attn-lens", (el) => el.recycle), true);
  const lens = await loadAttnLens();
  // Keep the arrays of the first figure; type a sentence of the same length.
  await page.evaluate(() => {
    const f = document.querySelector("attn-lens").explanation;
    window.__first = { causal: f.causal.weights.data, full: f.full.weights.data };
  });
  await nextRender(page, () => page.fill("#sentence", "a lazy dog slept there"));
  const reused = await page.evaluate(() => {
    const f = document.querySelector("attn-lens").explanation;
    return f.causal.weights.data === window.__first.causal && f.full.weights.data === window.__first.full;
  });
  assert.ok(reused, "the second figure lives in the first one's arrays");
  // What the figure reads is the new sentence's attention: the readouts against the package's explain().
  const { traceHead, ...options } = await page.evaluate(() => document.querySelector("attn-lens").explanation.causal.options);
  assert.equal(traceHead, undefined);
  const expected = lens.explain("a lazy dog slept there", options);
  const L = expected.tokens.length;
  for (const [i, j] of [
    [1, 0],
    [4, 2],
    [4, 4],
  ]) {
    // Side by side the readout names both panels' cells: "causal: … · full: …".
    const r = parseReadout((await keyTo(page, 0, i, j)).split(" · ")[0]);
    assert.deepEqual([r.i, r.j], [i, j]);
    const w = expected.meanWeights.data[i * L + j];
    // 4 significant digits (half a unit of the 4th), and the page's module (relaxed SIMD, fused
    // multiply-adds) and this Node's differ in the last bits: 16 float32 ulps of slack.
    const slack = 16 * 2 ** -24 * w;
    assert.ok(Math.abs(r.value - w) <= 0.5 * 10 ** (Math.floor(Math.log10(w)) - 3) + slack, `cell ${i},${j}: ${r.value} vs ${w}`);
  }
  // A figure without `recycle` (the default, as in a blog post) never lends its arrays.
  const fresh = await page.evaluate(async () => {
    const el = document.createElement("attn-lens");
    el.setAttribute("sentence", "one two three");
    document.body.prepend(el); // in view: figures below the fold wait until they approach it
    const rendered = () =>
      new Promise((done, fail) => {
        el.addEventListener("attn-lens-render", done, { once: true });
        setTimeout(() => fail(new Error("no attn-lens-render within 10 s")), 10_000);
      });
    await rendered();
    const before = el.explanation.causal.weights.data;
    el.setAttribute("sentence", "four five six");
    await rendered();
    const same = el.explanation.causal.weights.data === before;
    el.remove();
    return { recycle: el.recycle, same };
  });
  assert.deepEqual(fresh, { recycle: false, same: false });
  assert.deepEqual(problems, []);
  await page.close();
});

test("a link: a view the trained models lack falls back to all heads and says so; each problem is a sentence; a long paste's chips count the text's tokens", async () => {
  const { page, problems } = await openPage(site.browser.context, site.server.url);
  await page.goto(`${site.server.url}index.html?model=attnlens&view=steps&heads=99`);
  const shown = await (
    await page.waitForFunction(
      () => {
        const el = document.querySelector("#figure");
        return (
          el.attention?.predictions && {
            view: el.view,
            checked: document.querySelector('input[name="view"]:checked')?.value,
            message: document.querySelector("#message").textContent,
          }
        );
      },
      null,
      { timeout: 60000 },
    )
  ).jsonValue();
  assert.equal(shown.view, "grid");
  assert.equal(shown.checked, "grid");
  assert.match(shown.message, /no "steps" view .*; showing all heads\./);
  // Two problems, two sentences.
  assert.match(shown.message, /^Heads must be .*\. The trained models have no "steps" view/);
  // The shipped causal model's context is 128 tokens: a longer paste shows 128, and the chips
  // count the rest of the text's tokens, not the figure's.
  const words = Array.from({ length: 300 }, (_, i) => ["the", "cat", "sat", "on", "a", "mat"][i % 6]).join(" ");
  await page.fill("#sentence", words);
  const chips = await (
    await page.waitForFunction(
      (text) => {
        const el = document.querySelector("#figure");
        const more = document.querySelector("#tokens li.more")?.textContent;
        const total = /^That is (\d+) tokens; the figure shows the first 128\./.exec(document.querySelector("#message").textContent)?.[1];
        return (
          el.attention?.tokens.length === 128 &&
          document.querySelector("#sentence").value === text &&
          more &&
          total && { more, total: Number(total) }
        );
      },
      words,
      { timeout: 60000 },
    )
  ).jsonValue();
  assert.ok(chips.total > 128, `${chips.total} tokens`);
  assert.equal(chips.more, `… ${chips.total - 80} more`, "80 chips, then the rest of the text's tokens");
  assert.deepEqual(problems, []);
  await page.close();
});
