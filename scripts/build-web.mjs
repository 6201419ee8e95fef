// Builds what the browser gets, after scripts/build.sh has put the wasm package in dist/:
//   dist/element.js       the <attn-lens> element as one ES module (Lit, D3 and the JS API inside;
//                         attnlens.wasm and attnlens-relaxed.wasm beside it), for a plain
//                         <script type="module">
//   dist/site/            the static demo site, with the blog example under examples/
import { build } from "vite";
import { copyFileSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
const site = join(dist, "site");
const quiet = { logLevel: "warn", configFile: false, publicDir: false };

await build({
  ...quiet,
  root,
  build: {
    outDir: dist,
    emptyOutDir: false,
    target: "es2022",
    minify: true,
    lib: { entry: join(root, "web/element/index.js"), formats: ["es"], fileName: () => "element.js" },
  },
});
copyFileSync(join(root, "web/element/element.d.ts"), join(dist, "element.d.ts"));

await build({
  ...quiet,
  root: join(root, "web"),
  base: "./",
  build: { outDir: site, emptyOutDir: true, target: "es2022", rollupOptions: { input: join(root, "web/index.html") } },
});
// The loader finds the modules beside the bundle that contains it (web/lens.js); it fetches
// one of the two (wasm/api.js, makeLoader).
const modules = ["attnlens.wasm", "attnlens-relaxed.wasm"];
for (const module of modules) copyFileSync(join(dist, module), join(site, "assets", module));
// The blog example loads the element exactly as a post would: one script tag, no bundler.
copyFileSync(join(dist, "element.js"), join(site, "element.js"));
for (const module of modules) copyFileSync(join(dist, module), join(site, module));
mkdirSync(join(site, "examples"), { recursive: true });
copyFileSync(join(root, "web/examples/blog.html"), join(site, "examples/blog.html"));
