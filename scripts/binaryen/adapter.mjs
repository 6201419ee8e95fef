// Binaryen from npm (the locked `binaryen` package) under the command names Emscripten 3.1.6
// runs. Debian's binaryen 108 rejects the final relaxed-SIMD opcodes; the npm build (v132)
// accepts them but differs from what 3.1.6 expects in two places, adapted here:
//   - `wasm-opt --minify-imports-and-exports[-and-modules]` prints the renaming as JSON;
//     3.1.6 reads `old => new` lines (tools/building.py), and without them would leave the JS
//     loader calling the unminified names. The JSON is translated.
//   - `wasm-emscripten-finalize` is not in the npm package. Builds with -sWASM_BIGINT=1 and
//     EMCC_READ_METADATA=python never run it; anything else stops here with that hint.
//   node scripts/binaryen/adapter.mjs TOOL ARGS...   (called by the shims beside this file)
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const [tool, ...args] = process.argv.slice(2);
if (tool === "wasm-emscripten-finalize") {
  console.error(
    "binaryen adapter: wasm-emscripten-finalize is not part of npm's binaryen; " +
      "link with -sWASM_BIGINT=1 and set EMCC_READ_METADATA=python (scripts/common.sh does)",
  );
  process.exit(1);
}

const binaryen = dirname(createRequire(import.meta.url).resolve("binaryen/package.json"));
const run = spawnSync(process.execPath, [join(binaryen, "bin", tool), ...args], {
  stdio: ["inherit", "pipe", "inherit"],
  encoding: "utf8",
  maxBuffer: 1 << 28,
});
if (run.error) throw run.error;

const minifies = args.some((a) => a.startsWith("--minify-imports"));
if (tool === "wasm-opt" && minifies && run.status === 0) {
  // { "imports": [[module, base, new], ...], "exports": [[old, new], ...] } -> "old => new"
  const { imports = [], exports = [] } = JSON.parse(run.stdout);
  const lines = [
    ...imports.map(([, base, renamed]) => `${base} => ${renamed}`),
    ...exports.map(([old, renamed]) => `${old} => ${renamed}`),
  ];
  process.stdout.write(lines.map((line) => `${line}\n`).join(""));
} else {
  process.stdout.write(run.stdout);
}
process.exit(run.status ?? 1);
