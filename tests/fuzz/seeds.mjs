// Writes the seed corpora in tests/fuzz/corpus/ (committed; rerun after changing a decoder):
//   node tests/fuzz/seeds.mjs
// tokenize: text in several scripts, punctuation, emoji and Unicode spaces.
// explain:  a sentence followed by option bytes (FuzzedDataProvider reads integers from the end).
// attention: pseudo-random bytes of several lengths; any bytes decode to a complete case.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const corpus = join(dirname(fileURLToPath(import.meta.url)), "corpus");

const sentences = [
  "The cat sat on the mat.",
  "Don't panic — it's only 42%!",
  "Größe, naïve café? ¿Qué tal? ¡Olé!",
  "日本語のテキスト、句読点。「引用」",
  "Keycap #️⃣ family 👩‍👩‍👧 flag 🇩🇪 skin 👍🏽",
  "tab\there\u00a0nbsp\u3000ideographic\u2028line\ufeffbom",
  "Ελληνικά και русский текст; עברית",
  "a",
];

function write(target, files) {
  const dir = join(corpus, target);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  files.forEach((bytes, i) => writeFileSync(join(dir, `seed-${String(i).padStart(2, "0")}`), bytes));
}

/** Mulberry32: deterministic bytes. */
function randomBytes(seed, n) {
  let a = seed >>> 0;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (t ^ (t >>> 14)) & 0xff;
  }
  return out;
}

write(
  "tokenize",
  sentences.map((s) => Buffer.from(s, "utf8")),
);

// fuzz_explain.cpp reads, from the last byte backwards: mode (7 = wild), heads, dim multiple,
// max_tokens, causal, seed (4 bytes), init, positional, truncate.
const optionBytes = (i) => [0, i % 8, 3 + i, 15 + i, i & 1, 7, 0, 0, 0, i % 3, 1, (i >> 1) & 1].reverse();
write(
  "explain",
  sentences.map((s, i) => Buffer.concat([Buffer.from(s, "utf8"), Buffer.from(optionBytes(i))])),
);

write(
  "attention",
  [64, 200, 512, 1024, 2048].map((n, i) => randomBytes(0x5eed + i, n)),
);
