// Every reader: touch screens and phones, the keyboard, screen readers, the page's theme
// control, and the author's static figure (npm run figure).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchBrowser, openPage, useSite } from "../support/browser.mjs";
import { computed, frames, keyTo, nextRender, parseReadout, readout, svgOf } from "../support/figure.mjs";

const artefacts = new URL("../../test-results/", import.meta.url).pathname;
const site = useSite();

async function open(context, query = "?model=random") {
  const session = await openPage(context, site.server.url);
  await session.page.goto(`${site.server.url}index.html${query}`);
  await session.page.waitForSelector("attn-lens .frame canvas.figure");
  await session.page.waitForFunction(() => document.body.dataset.firstFigureMs);
  return session;
}

test("touch: a tap on a cell shows its readout at the finger; pinch-zoom keeps the figure", async () => {
  const phone = await launchBrowser({ hasTouch: true, isMobile: true, viewport: { width: 390, height: 800 }, deviceScaleFactor: 2 });
  try {
    const { page, problems } = await open(phone.context, "?sentence=the+cat+sat+on+the+mat");
    const box = await page.locator("attn-lens .frame").boundingBox();
    await page.locator("attn-lens .frame").scrollIntoViewIfNeeded();
    const at = await page.locator("attn-lens .frame").boundingBox();
    await page.touchscreen.tap(at.x + at.width * 0.5, at.y + at.height * 0.6);
    const r = parseReadout(await readout(page));
    assert.ok(r, `a tap on the grid reads a cell: ${await readout(page)}`);
    const { causal } = (await computed(page)).modes;
    assert.ok(Math.abs(r.value - causal.mean[r.i * 6 + r.j]) < 1e-3);
    assert.equal(await page.locator("attn-lens .tip").isVisible(), true, "the value shows at the finger");
    const canvasBefore = (await frames(page))[0].canvas;
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Input.synthesizePinchGesture", { x: at.x + 50, y: at.y + 50, scaleFactor: 2, relativeSpeed: 800 });
    await page.waitForTimeout(300);
    const after = await frames(page);
    assert.deepEqual(after[0].canvas, canvasBefore, "the page zoom leaves the figure's canvas as it was");
    assert.ok(after[0].colours > 5 && box.width > 0);
    await page.screenshot({ path: `${artefacts}phone-pinched.png` });
    assert.deepEqual(problems, []);
    await page.close();
  } finally {
    await phone.close();
  }
});

test("360 px: the figure starts within the first screen, nothing overflows, every step is readable", async () => {
  const phone = await launchBrowser({ hasTouch: true, isMobile: true, viewport: { width: 360, height: 740 } });
  try {
    const { page, problems } = await open(phone.context);
    const top = await page.evaluate(() => document.querySelector("attn-lens").getBoundingClientRect().top);
    assert.ok(top < 740 - 200, `the figure starts at ${top}px, with at least 200 px of it in the first screen`);
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok((await overflow()) <= 0, `horizontal overflow ${await overflow()}px`);
    await page.screenshot({ path: `${artefacts}demo-360px.png`, fullPage: true });
    await nextRender(page, () => page.click("#worked-example"));
    await page.waitForSelector("attn-lens figure.pane");
    assert.ok((await overflow()) <= 0, "every step fits 360 px");
    const panes = await page.$$eval("attn-lens figure.pane .frame", (fs) =>
      fs.map((f) => f.getBoundingClientRect()).map((r) => [r.left, r.right]),
    );
    for (const [left, right] of panes) assert.ok(left >= 0 && right <= 360, `a matrix lies within the screen: ${left}..${right}`);
    await page.evaluate(() => document.querySelector("attn-lens").setAttribute("sentence", "the cat sat on the mat by the door"));
    await page.waitForFunction(() => document.querySelector("attn-lens").explanation?.causal?.tokens.length === 9);
    await page.evaluate(() => document.querySelector("attn-lens").setAttribute("dim", "64"));
    await page.waitForFunction(() => document.querySelector("attn-lens").explanation?.causal?.embeddings.shape[1] === 64);
    await page.waitForTimeout(200);
    // A 9 x 64 matrix scrolls inside its box; the numbers keep their size.
    const wide = await page.$$eval("attn-lens figure.pane .frame", (fs) => fs.map((f) => [f.scrollWidth, f.clientWidth]));
    assert.ok(
      wide.some(([sw, cw]) => sw > cw * 2),
      "a wide matrix scrolls",
    );
    const r = await keyTo(page, 0, 2, 40);
    assert.match(r, /^Token embeddings E: token 3 “sat”, dimension 41 = −?\d\.\d{3}/);
    await page.screenshot({ path: `${artefacts}demo-360px-steps.png`, fullPage: true });
    assert.deepEqual(problems, []);
    await page.close();
  } finally {
    await phone.close();
  }
});

test("keyboard and screen readers: a live readout, and the figure as text and as a table", async () => {
  const { page, problems } = await open(site.browser.context, "?sentence=the+cat+sat+on+the+mat&mode=compare");
  const live = await page.$eval("attn-lens .readout", (r) => [r.getAttribute("role"), r.getAttribute("aria-live")]);
  assert.deepEqual(live, ["status", "polite"]);
  await page.focus("#sentence");
  await page.keyboard.press("Tab");
  let inFigure = false;
  for (let k = 0; k < 40 && !inFigure; k++) {
    await page.keyboard.press("Tab");
    inFigure = await page.evaluate(
      () => document.activeElement?.tagName === "ATTN-LENS" && document.activeElement.shadowRoot.activeElement?.classList.contains("frame"),
    );
  }
  assert.ok(inFigure, "Tab reaches the figure");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowRight");
  assert.match(await readout(page), /^causal: row 2 “cat” → column 2 “cat”: weight \d\.\d{3}/);
  await page.keyboard.press("Escape");
  assert.match(await readout(page), /^Hover a cell/);
  await page.locator("attn-lens details.describe summary").click();
  // The description renders on the details' toggle event, which the browser fires after the click returns.
  await page.waitForSelector("attn-lens details.describe li");
  const items = await page.$$eval("attn-lens details.describe li", (lis) => lis.map((li) => li.textContent.replace(/\s+/g, " ").trim()));
  assert.equal(items.length, 12, "one line per token, for each of the two panels");
  assert.match(items[1], /^“cat” attends most to “\S+” \(\d\) \d\.\d{3}/);
  const table = await page.$$eval("attn-lens details.describe table", (ts) =>
    ts.map((t) => [t.rows.length, t.rows[1].cells.length, t.caption.textContent.trim()]),
  );
  assert.deepEqual(
    table.map(([rows, cells]) => [rows, cells]),
    [
      [7, 7],
      [7, 7],
    ],
  );
  assert.match(table[0][2], /rows are queries, columns are keys/);
  const masked = await page.$eval("attn-lens details.describe table", (t) => t.rows[1].cells[2].textContent);
  assert.equal(masked, "masked");
  assert.deepEqual(problems, []);
  await page.close();
});

test("the page's theme control switches the page and the figure, light, dark or the system's", async () => {
  const { page, problems } = await open(site.browser.context, "?sentence=the+cat+sat");
  await nextRender(page, () => page.selectOption("#theme", "dark"));
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "dark");
  assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), "rgb(14, 17, 22)");
  assert.equal(await page.evaluate(() => document.querySelector("attn-lens").dataset.theme), "dark");
  assert.match(await svgOf(page), /<rect x="0" y="0" width="[\d.]+" height="[\d.]+" fill="#14181e"/);
  await page.waitForURL((u) => u.searchParams.get("theme") === "dark");
  await nextRender(page, () => page.selectOption("#theme", "light"));
  assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), "rgb(246, 247, 249)");
  assert.deepEqual(problems, []);
  await page.close();
});

test("npm run figure renders the same figure as the element, as SVG and PNG", async () => {
  const dir = mkdtempSync(join(tmpdir(), "attnlens-figure-"));
  try {
    const script = new URL("../../scripts/figure.mjs", import.meta.url).pathname;
    const out = execFileSync(
      "node",
      [script, "--sentence", "dog bites man", "--mode", "compare", "--width", "900", "--out", join(dir, "fig.svg")],
      {
        encoding: "utf8",
      },
    );
    assert.match(out, /wrote .*fig\.svg/);
    assert.match(out, /<noscript><img src="fig\.svg" width="\d+" height="\d+" alt="/);
    const svg = readFileSync(join(dir, "fig.svg"), "utf8");
    const { page, problems } = await openPage(site.browser.context, site.server.url);
    await page.setViewportSize({ width: 900, height: 900 });
    await page.goto(`${site.server.url}examples/blog.html`);
    await page.waitForSelector("#causal-figure .frame canvas.figure");
    const same = await page.evaluate(async () => {
      const holder = document.createElement("div");
      holder.style.width = "900px";
      document.body.prepend(holder);
      const el = document.createElement("attn-lens");
      el.style.border = "none";
      for (const [k, v] of Object.entries({ sentence: "dog bites man", mode: "compare", theme: "light" })) el.setAttribute(k, v);
      const rendered = new Promise((done) => el.addEventListener("attn-lens-render", done, { once: true }));
      holder.append(el);
      await rendered;
      return el.toSVG();
    });
    assert.equal(svg, same);
    execFileSync("node", [script, "--sentence", "dog bites man", "--out", join(dir, "fig.png")]);
    const png = readFileSync(join(dir, "fig.png"));
    assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]);
    assert.throws(
      () => execFileSync("node", [script, "--sentence", "x", "--out", join(dir, "fig.gif")], { stdio: "pipe" }),
      /--out must name a \.svg or \.png/,
    );
    assert.deepEqual(problems, []);
    await page.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
