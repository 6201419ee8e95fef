// Renders one <attn-lens> figure headless (Chromium, the element from dist/) to an SVG or PNG
// file: the static fallback a blog author puts inside the element for readers without
// JavaScript (RSS, email), the same picture the live element draws.
//   npm run figure -- --sentence "The cat sat on the mat." --out fig.svg [--width 720]
//     [--mode causal|full|compare] [--view heatmap|lines|steps|pca] [--heads 4] [--head mean|0..]
//     [--dim 64] [--seed 7] [--theme light|dark] [--colormap viridis|cividis|magma|blues]
//     [--figure-title TEXT] [--caption TEXT]
// Run `npm run build` first. Prints the <img> tag to put inside the element.
import { existsSync, writeFileSync } from "node:fs";
import { extname, basename } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { serve } from "./serve.mjs";
import { launchBrowser, openPage } from "../tests/support/browser.mjs";

const ATTRIBUTES = [
  "sentence",
  "mode",
  "view",
  "heads",
  "head",
  "hide",
  "dim",
  "seed",
  "positional",
  "init",
  "theme",
  "colormap",
  "figure-title",
  "caption",
  "label",
];

const USAGE = `usage: npm run figure -- --sentence TEXT --out FILE.svg|FILE.png [--width N] [${ATTRIBUTES.filter((a) => a !== "sentence")
  .map((a) => `--${a} VALUE`)
  .join("] [")}]`;

function parse(argv) {
  // strict: an unknown option, a missing value or a stray argument throws, naming it.
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      ...Object.fromEntries(["out", "width", ...ATTRIBUTES].map((name) => [name, { type: "string" }])),
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const { out, width = "720", help, ...attributes } = values;
  const options = { out, width: Number(width), attributes: { theme: "light", ...attributes } };
  if (!options.out || ![".svg", ".png"].includes(extname(options.out))) throw new Error("--out must name a .svg or .png file");
  if (!Number.isFinite(options.width) || options.width < 240) throw new Error("--width must be a number of CSS px, at least 240");
  return options;
}

/** Renders the figure; resolves to { text | bytes, width, height, problems }. */
export async function renderFigure({ attributes, width, format }) {
  const dist = new URL("../dist/", import.meta.url).pathname;
  if (!existsSync(`${dist}element.js`)) throw new Error("dist/element.js is missing: run `npm run build` first");
  const server = await serve(dist);
  const browser = await launchBrowser();
  try {
    const { page, problems } = await openPage(browser.context, server.url);
    await page.route(`${server.url}__figure.html`, (route) =>
      route.fulfill({
        contentType: "text/html",
        body: `<!doctype html><meta charset="utf-8"><body style="margin:0"><div id="column" style="width:${width}px"></div>
<script type="module">import "./element.js";</script>`,
      }),
    );
    await page.goto(`${server.url}__figure.html`);
    return await page
      .evaluate(
        async ({ attributes, format }) => {
          await customElements.whenDefined("attn-lens");
          const el = document.createElement("attn-lens");
          for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, value);
          const rendered = new Promise((done) => el.addEventListener("attn-lens-render", (e) => done(e.detail), { once: true }));
          document.querySelector("#column").append(el);
          const detail = await rendered;
          if (detail.error) throw new Error(detail.error);
          if (attributes.view === "steps" || attributes.view === "pca") {
            await new Promise((done) => {
              const check = () => (el.shadowRoot.querySelector(".frame") ? done() : setTimeout(check, 20));
              check();
            });
            await el.updateComplete;
          }
          const svg = el.toSVG();
          const size = svg.match(/^<svg[^>]* width="([\d.]+)" height="([\d.]+)"/);
          const result = {
            width: Number(size[1]),
            height: Number(size[2]),
            problems: [...el.shadowRoot.querySelectorAll(".message")].map((m) => m.textContent.trim()),
          };
          if (format === "svg") return { ...result, text: svg };
          const png = await el.toPNG(2);
          return { ...result, bytes: Array.from(new Uint8Array(await png.arrayBuffer())) };
        },
        { attributes, format },
      )
      .then((r) => ({ ...r, problems: [...r.problems, ...problems] }));
  } finally {
    await browser.close();
    await server.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let options;
  try {
    options = parse(); // parseArgs reads the process's arguments
  } catch (error) {
    // A bad argument: exit 2, as every script of the repository does (scripts/cli.mjs).
    console.error(`figure: ${error.message}\n${USAGE}`);
    process.exit(2);
  }
  try {
    const format = extname(options.out).slice(1);
    const r = await renderFigure({ ...options, format });
    writeFileSync(options.out, format === "svg" ? r.text : Buffer.from(r.bytes));
    for (const p of r.problems) console.log(`note: ${p}`);
    const alt =
      options.attributes["figure-title"] ??
      options.attributes.label ??
      `Attention figure for “${options.attributes.sentence ?? "The cat sat on the mat."}”`;
    // In <noscript>: a browser running the element never fetches the image.
    console.log(`wrote ${options.out} (${r.width} × ${r.height} CSS px). Put it inside the element as its static fallback:`);
    console.log(
      `  <noscript><img src="${basename(options.out)}" width="${Math.round(r.width)}" height="${Math.round(r.height)}" alt="${alt.replace(/"/g, "&quot;")}"></noscript>`,
    );
  } catch (error) {
    console.error(`figure: ${error.message}`);
    process.exitCode = 1;
  }
}
