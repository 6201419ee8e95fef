// The repository stands alone: every markdown document that a comment or a document cites must be
// in the repository. Reads the tracked files (git ls-files), takes the comments of source files
// and the whole text of markdown and HTML, finds each name of a markdown document in them
// (docs/api.md, ../models/attnlens/MODEL.md, README.md, RECIPE.md, ...) and resolves it against
// the repository root and the citing file's folder. A bare name (no folder) may also name a
// tracked file of that name anywhere (MODEL.md, the model card, is models/attnlens/MODEL.md).
// Relative links in markdown documents ([text](path), images too) must resolve the same way.
// Web addresses are not checked.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { basename, dirname, posix } from "node:path";

const root = new URL("../..", import.meta.url).pathname;
const self = "tests/js/docs.test.mjs";

// Documents cited before they land (a model card written when its training ends). Delete an
// entry once its document is in; until then a missing one is reported as a diagnostic instead
// of a failure.
const PENDING = new Set();

const C_LIKE = /\.(c|cc|cpp|h|hpp|js|mjs|cjs|ts|css)$/;
const HASH = /(^|\/)(CMakeLists\.txt|\.npmrc|\.gitignore|\.prettierignore)$|\.(sh|bash|cmake|cmake\.in|py)$/;
const WHOLE = /\.(md|html)$/;

/** A citation of a markdown document: a path or bare name ending in .md, not part of a web address. */
const CITATION = /(?<![\w./-])((?:\.{1,2}\/)*[\w.-]+(?:\/[\w.-]+)*\.md)\b/g;
/** A relative markdown link or image target: ](path) or ](path "title"). */
const LINK = /\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;

/** The commented text of each line ({ line, text }), by the file's kind; [] for other files. */
export function commentLines(path, source) {
  const lines = source.split("\n");
  if (WHOLE.test(path)) return lines.map((text, i) => ({ line: i + 1, text }));
  const hash = HASH.test(path) || lines[0].startsWith("#!");
  const out = [];
  if (C_LIKE.test(path)) {
    let inBlock = false;
    lines.forEach((text, i) => {
      let comment = "";
      let rest = text;
      while (rest.length) {
        if (inBlock) {
          const end = rest.indexOf("*/");
          comment += ` ${end < 0 ? rest : rest.slice(0, end)}`;
          if (end < 0) break;
          inBlock = false;
          rest = rest.slice(end + 2);
        } else {
          const block = rest.indexOf("/*");
          const line = rest.search(/(?<!:)\/\//);
          if (line >= 0 && (block < 0 || line < block)) {
            comment += ` ${rest.slice(line + 2)}`;
            break;
          }
          if (block < 0) break;
          inBlock = true;
          rest = rest.slice(block + 2);
        }
      }
      if (comment) out.push({ line: i + 1, text: comment });
    });
  } else if (hash) {
    let inDocstring = false;
    lines.forEach((text, i) => {
      const quotes = path.endsWith(".py") ? (text.match(/"""/g) ?? []).length : 0;
      if (inDocstring || quotes) out.push({ line: i + 1, text });
      else {
        const at = text.search(/(^|\s)#/);
        if (at >= 0) out.push({ line: i + 1, text: text.slice(at) });
      }
      if (quotes % 2) inDocstring = !inDocstring;
    });
  }
  return out;
}

/** Whether `target`, cited from `from`, names a file in `files` (a Set of repository paths). */
export function resolves(target, from, files) {
  const clean = target.replace(/[#?].*$/, "");
  const candidates = [posix.normalize(clean), posix.normalize(posix.join(dirname(from), clean))];
  if (
    candidates.some(
      (p) => files.has(p) || files.has(p.replace(/\/$/, "")) || [...files].some((f) => f.startsWith(`${p.replace(/\/$/, "")}/`)),
    )
  )
    return true;
  return !clean.includes("/") && [...files].some((f) => basename(f) === clean);
}

/** The citations in `files` (read(file) gives a file's text): how many, and those that do not
 * resolve as [{ file, line, target }]. */
export function unresolved(files, read) {
  const problems = [];
  let checked = 0;
  for (const file of files) {
    if (file === self) continue; // its samples name missing documents on purpose
    for (const { line, text } of commentLines(file, read(file))) {
      const targets = [...text.matchAll(CITATION)].map((m) => m[1]);
      if (file.endsWith(".md")) for (const [, link] of text.matchAll(LINK)) if (!/^([a-z]+:|#)/i.test(link)) targets.push(link);
      for (const target of new Set(targets)) {
        checked++;
        if (!resolves(target, file, files)) problems.push({ file, line, target });
      }
    }
  }
  return { checked, problems };
}

const tracked = () => new Set(execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0").filter(Boolean));

test("every document a comment or a document cites is in the repository", (t) => {
  const files = tracked();
  const textFiles = new Set([...files].filter((f) => WHOLE.test(f) || C_LIKE.test(f) || HASH.test(f) || !/\.[^/]*$/.test(basename(f))));
  const { checked, problems } = unresolved(files, (f) => (textFiles.has(f) ? readFileSync(root + f, "utf8") : ""));
  t.diagnostic(`${checked} citations of documents and links checked in ${textFiles.size} files`);
  assert.ok(checked > 50, "the scan finds the repository's citations");
  const pending = problems.filter((p) => PENDING.has(posix.normalize(posix.join(dirname(p.file), p.target))) || PENDING.has(p.target));
  for (const p of pending) t.diagnostic(`${p.file}:${p.line}: ${p.target} is not in the repository yet (PENDING)`);
  for (const name of PENDING) if (files.has(name)) t.diagnostic(`${name} is in the repository now: remove it from PENDING`);
  const missing = problems
    .filter((p) => !pending.includes(p))
    .map((p) => `${p.file}:${p.line}: cites ${p.target}, which is not in the repository`);
  assert.deepEqual(missing, []);
});

test("the checker finds citations in comments and documents, and only there", () => {
  // The documents this checks are made-up names, written with MD so that this file cites none.
  const MD = ".md";
  const files = new Set(["README.md", "docs/api.md", "models/m/MODEL.md", "lib/a.cpp", "web/b.js", "scripts/c.sh", `docs/d${MD}`, "e.py"]);
  const sources = {
    "README.md": `See [the API](docs/api.md) and ![a picture](docs/missing.png).\nAlso docs/gone${MD} and https://x.org/y/README.md.`,
    "lib/a.cpp": `// the model card: MODEL.md\nwrite("NOPE${MD}"); /* and ../docs/api.md,\n   and ABSENT${MD} */`,
    "web/b.js": `const url = "https://host/x${MD}"; // docs/api.md and ../README.md\n`,
    "scripts/c.sh": `# cites docs/nothing${MD}\necho '#' ../README.md`,
    [`docs/d${MD}`]: `[up](../README.md) [here](#anchor) [there](api.md) [gone](../lost${MD})`,
    "e.py": `"""Loads this folder (NEITHER${MD})."""\nopen("ALSO_NOT${MD}")  # but README.md`,
  };
  const found = unresolved(files, (f) => sources[f] ?? "").problems.map((p) => `${p.file}:${p.line} ${p.target}`);
  assert.deepEqual(found, [
    "README.md:1 docs/missing.png",
    `README.md:2 docs/gone${MD}`,
    `lib/a.cpp:3 ABSENT${MD}`,
    `scripts/c.sh:1 docs/nothing${MD}`,
    `docs/d${MD}:1 ../lost${MD}`,
    `e.py:1 NEITHER${MD}`,
  ]);
});
