// Attention files in Chromium: <attn-lens src=…> for each format draws the grid and the heatmap
// with the file's values (read back through the keyboard readout), bad files show their message,
// text from files stays text, and the demo page's file picker loads a file.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { openPage, useSite } from "../support/browser.mjs";
import { frames, keyTo, parseReadout, svgOf } from "../support/figure.mjs";
import { TOKENS, examples, npyBytes } from "../fixtures/attention/make.mjs";

const site = useSite();
const fixtures = new URL("../fixtures/attention/", import.meta.url);

/**
 * A page holding `body` (element markup) that loads the element as a blog post does; files in
 * `files` (name -> bytes) are served beside it under files/.
 */
async function pageWith(body, files = {}) {
  const session = await openPage(site.browser.context, site.server.url);
  const { page } = session;
  await page.route(`${site.server.url}files/**`, (route) => {
    const name = decodeURIComponent(new URL(route.request().url()).pathname.split("/").pop());
    const bytes = files[name];
    return bytes
      ? route.fulfill({ status: 200, body: Buffer.from(bytes), contentType: "application/octet-stream" })
      : route.fulfill({ status: 404, body: "<!doctype html><p>Not found</p>" });
  });
  await page.route(`${site.server.url}files-test.html`, (route) =>
    route.fulfill({
      status: 200,
      contentType: "text/html",
      body: `<!doctype html><meta charset="utf-8"><body style="width:900px"><script type="module" src="./element.js"></script>${body}</body>`,
    }),
  );
  await page.goto(`${site.server.url}files-test.html`);
  return session;
}

/** Waits until the element has shown a file (or its error): { shape, error }. */
const settled = (page, selector = "attn-lens") =>
  page
    .waitForFunction((sel) => {
      const el = document.querySelector(sel);
      const error = el?.shadowRoot?.querySelector(".message.error")?.textContent;
      if (error) return { error };
      const a = el?.attention;
      return a && el.shadowRoot.querySelector(".grid canvas, .frame") ? { shape: a.weights.shape } : null;
    }, selector)
    .then((h) => h.jsonValue());

const all = examples();

test("<attn-lens src> shows each format: the grid, and heatmap values equal to the file's", async () => {
  const bytes = Object.fromEntries(Object.entries(all).map(([name, f]) => [name, f.bytes]));
  bytes["attention.tokens.txt"] = readFileSync(new URL("attention.tokens.txt", fixtures));
  for (const [name, expected] of Object.entries(all)) {
    const [layers, heads, L] = expected.shape.length === 4 ? expected.shape : [1, ...expected.shape];
    const layer = layers - 1;
    const head = heads - 1;
    const tokensSrc = name.endsWith(".npy") ? ` tokens-src="files/attention.tokens.txt"` : "";
    const { page, problems } = await pageWith(
      `<attn-lens src="files/${name}"${tokensSrc} layer="${layer}" head="${head}"></attn-lens>`,
      bytes,
    );
    const state = await settled(page);
    assert.equal(state.error, undefined, `${name}: ${state.error}`);
    assert.deepEqual(state.shape, [layers, heads, L, L], name);
    const shown = await page.evaluate(() => {
      const a = document.querySelector("attn-lens").attention;
      return { tokens: a.tokens.map((t) => t.text), weights: Array.from(a.weights.data) };
    });
    assert.deepEqual(shown.tokens, TOKENS, name);
    // The element holds the file's float32 values exactly.
    assert.deepEqual(shown.weights, Array.from(expected.weights), name);
    const grid = await page.evaluate(() => document.querySelector("attn-lens").shadowRoot.querySelectorAll(".grid canvas").length);
    assert.equal(grid, layers * (heads + (heads > 1 ? 1 : 0)), `${name}: a thumbnail per head and a mean per layer`);
    const [frame] = await frames(page);
    const headName = await page.evaluate((h) => document.querySelector("attn-lens").attention.headNames?.[h] ?? `head ${h + 1}`, head);
    assert.ok(frame.label.includes(`${headName} of ${heads}`), `${name}: ${frame.label}`);
    assert.ok(frame.colours > 5, `${name}: the heatmap is drawn`);
    // Read cells through the keyboard readout: row 4 (a causal row with 4 keys) and a masked/unmasked cell.
    for (const [i, j] of [
      [3, 1],
      [3, 3],
      [L - 1, 0],
    ]) {
      const r = parseReadout(await keyTo(page, 0, i, j));
      const w = expected.weights[((layer * heads + head) * L + i) * L + j];
      assert.deepEqual([r.i, r.j], [i, j]);
      // The readout shows 4 significant digits: within half a unit of the 4th digit.
      assert.ok(Math.abs(r.value - w) <= 0.5 * 10 ** (Math.floor(Math.log10(w)) - 3) + 1e-12, `${name} ${i},${j}: ${r.value} vs ${w}`);
    }
    assert.deepEqual(problems, [], name);
    await page.close();
  }
});

test("the grid view: a click on a head opens it in the heatmap; lines and exports work on file data", async () => {
  const { page, problems } = await pageWith(`<attn-lens src="files/attnlens-u8.json" view="grid"></attn-lens>`, {
    "attnlens-u8.json": all["attnlens-u8.json"].bytes,
  });
  await settled(page);
  assert.equal((await frames(page)).length, 0, "the grid view has no heatmap frame");
  const button = page.locator("attn-lens .grid button[aria-label='layer 2, previous']");
  await button.click();
  await page.waitForFunction(() => document.querySelector("attn-lens").view === "heatmap");
  const state = await page.evaluate(() => ({
    layer: document.querySelector("attn-lens").layer,
    head: document.querySelector("attn-lens").head,
  }));
  assert.deepEqual(state, { layer: "1", head: "1" });
  assert.match((await frames(page))[0].label, /layer 2, previous of 4/);
  const svg = await page.evaluate(() => document.querySelector("attn-lens").toSVG());
  assert.match(svg, /^<svg/);
  await page.evaluate(() => (document.querySelector("attn-lens").view = "lines"));
  await page.waitForFunction(() =>
    document.querySelector("attn-lens").shadowRoot.querySelector(".frame")?.getAttribute("aria-label")?.includes("of 4 heads"),
  );
  await page.evaluate(() => (document.querySelector("attn-lens").view = "steps"));
  const note = await page.waitForFunction(
    () => document.querySelector("attn-lens").shadowRoot.querySelector(".figures .message")?.textContent,
  );
  assert.match(await note.jsonValue(), /not offered for weights from a\s+file/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("bad files show their message in the figure; text from files is text, never HTML", async () => {
  const nan = Float32Array.from([1, 0, NaN, 0.5]);
  const files = {
    "nan.npy": npyBytes(nan, [2, 2]),
    "page.json": new TextEncoder().encode("<!doctype html><p>hello</p>"),
    "xss.json": new TextEncoder().encode(
      JSON.stringify({
        tokens: ["<img src=x onerror=window.pwned=1>", "<b>b</b>"],
        attention: [
          [1, 0],
          [0.5, 0.5],
        ],
        title: "<i>t</i>",
      }),
    ),
  };
  const cases = [
    ["nan.npy", /nan\.npy: weight \[layer 1, head 1, query 2, key 1\] is NaN/],
    ["page.json", /page\.json is not a JSON file: it starts with “<!doctyp”/],
    ["missing.json", /missing\.json could not be fetched: HTTP 404/],
  ];
  for (const [name, pattern] of cases) {
    const { page, problems } = await pageWith(`<attn-lens src="files/${name}"></attn-lens>`, files);
    const { error } = await settled(page);
    assert.match(error, pattern, name);
    assert.deepEqual(
      problems.filter((p) => !/404/.test(p)),
      [],
      name,
    );
    await page.close();
  }
  const { page, problems } = await pageWith(`<attn-lens src="files/xss.json"></attn-lens>`, files);
  await settled(page);
  const r = await keyTo(page, 0, 1, 0);
  assert.match(r, /row 2 “<b>b<\/b>” → column 1 “<img src=x onerror=window.pwned=1>”/);
  const injected = await page.evaluate(() => ({
    img: document.querySelector("attn-lens").shadowRoot.querySelectorAll("img, b, i").length,
    pwned: window.pwned ?? null,
  }));
  assert.deepEqual(injected, { img: 0, pwned: null });
  assert.deepEqual(problems, []);
  await page.close();
});

test("a new src replaces the one loading; data takes objects", async () => {
  const { page, problems } = await pageWith(`<attn-lens src="files/bertviz.json"></attn-lens>`, {
    "bertviz.json": all["bertviz.json"].bytes,
    "circuitsvis.json": all["circuitsvis.json"].bytes,
  });
  await page.evaluate(() => (document.querySelector("attn-lens").src = "files/circuitsvis.json"));
  await page.waitForFunction(() => document.querySelector("attn-lens").attention?.source.file === "circuitsvis.json");
  await page.waitForTimeout(200);
  assert.equal(
    await page.evaluate(() => document.querySelector("attn-lens").attention.source.file),
    "circuitsvis.json",
    "the older load never lands",
  );
  await page.evaluate(
    () => (document.querySelector("attn-lens").data = { tokens: ["a", "b"], weights: { data: [1, 0, 0.25, 0.75], shape: [2, 2] } }),
  );
  await page.waitForFunction(() => document.querySelector("attn-lens").attention?.source.format === "object");
  const r = parseReadout(await keyTo(page, 0, 1, 1));
  assert.equal(r.value, 0.75);
  // The legend's lines (wrapped to the figure's width), joined.
  const legend = async () =>
    [...(await svgOf(page)).matchAll(/<text[^>]*>([^<]*)<\/text>/g)]
      .map((m) => m[1])
      .filter((t) => /rows: queries|columns: keys|sum to 1|sums to 1/.test(t))
      .join(" ");
  assert.equal(await legend(), "rows: queries (who attends) · columns: keys · each row sums to 1");
  // Rows that do not sum to 1: the legend stops saying they do.
  await page.evaluate(
    () => (document.querySelector("attn-lens").data = { tokens: ["a", "b"], weights: { data: [0.5, 0, 0.25, 0.25], shape: [2, 2] } }),
  );
  await page.waitForFunction(() => document.querySelector("attn-lens").attention?.rowsSumToOne === false);
  await page.waitForTimeout(100);
  assert.equal(await legend(), "rows: queries (who attends) · columns: keys · the file's rows do not all sum to 1");
  assert.deepEqual(problems, []);
  await page.close();
});

test("the demo page: the file picker loads an attention file and a tokens file; nothing goes to the URL", async () => {
  const { page, problems, outside } = await openPage(site.browser.context, site.server.url);
  await page.goto(`${site.server.url}index.html`);
  // A file needs no wasm: wait for the element and the picker only.
  await page.waitForFunction(() => customElements.get("attn-lens") && document.querySelector("#open-file"));
  const before = page.url();
  await page.setInputFiles("#open-file", [new URL("attention.npy", fixtures).pathname, new URL("attention.tokens.txt", fixtures).pathname]);
  await page.waitForFunction(() => document.querySelector("#file-status").textContent.startsWith("Showing"));
  const status = await page.textContent("#file-status");
  assert.match(status, /Showing attention\.npy \(npy, f32\): 1 layer × 4 heads, 14 tokens, causal attention/);
  const tokens = await page.evaluate(() => document.querySelector("attn-lens").attention.tokens.map((t) => t.text));
  assert.deepEqual(tokens, TOKENS);
  await page.waitForTimeout(300);
  assert.equal(page.url(), before, "the URL holds no file data");
  // The CSV export writes the file's weights: a header and one line per (layer, head, query, key).
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#export-csv")]);
  const csv = readFileSync(await download.path(), "utf8")
    .trimEnd()
    .split("\n");
  const L = TOKENS.length;
  assert.equal(csv[0], "layer,head,query_index,query,key_index,key,weight");
  assert.equal(csv.length, 1 + 4 * L * L);
  const expected = all["attention.npy"].weights;
  // Row 2 of head 1: query 2 " Mary" to key 1 "When", the file's float32 printed in full.
  assert.equal(csv[1 + L + 0], `1,1,2, Mary,1,When,${expected[L]}`);
  await page.click("#close-file");
  // The file's figure goes: the page's own comes back (the trained model's, which may be ready at
  // once from its cache, so "no figure" need never be seen in between).
  const closed = await (
    await page.waitForFunction(() => {
      const shown = document.querySelector("attn-lens").attention;
      return shown?.source?.format !== "npy" && { status: document.querySelector("#file-status").textContent };
    })
  ).jsonValue();
  assert.equal(closed.status, "");
  assert.deepEqual(problems, []);
  assert.deepEqual(outside, []);
  await page.close();
});
