// Writes a GPT-2-shaped checkpoint with random weights, as Hugging Face publishes GPT-2
// (model.safetensors F32 with GPT2LMHeadModel's tensor names, config.json), for tests and
// measurements where real weights cannot be downloaded. Tensor by tensor, so GPT-2 small's
// 500 MB never sit in memory at once.
//   node scripts/gpt2-checkpoint.mjs DIR [--preset gpt2 | --layers N --heads N --dim N --context N --vocab N] [--seed S]
// Unknown options and a missing or extra folder are errors (`--help` prints the usage).
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cli, cliError, cliNumber } from "./cli.mjs";

/** GPT-2 small's exact sizes. */
export const GPT2_SMALL = Object.freeze({ layers: 12, heads: 12, dModel: 768, context: 1024, vocabSize: 50257 });

/** The tensors of a GPT-2 of `config`: [name, shape], in the file's (sorted) order. */
export function gpt2Tensors({ layers, dModel: d, context, vocabSize }) {
  const tensors = [];
  for (let i = 0; i < layers; i++) {
    const h = `h.${i}.`;
    tensors.push(
      [`${h}attn.c_attn.bias`, [3 * d]],
      [`${h}attn.c_attn.weight`, [d, 3 * d]],
      [`${h}attn.c_proj.bias`, [d]],
      [`${h}attn.c_proj.weight`, [d, d]],
      [`${h}ln_1.bias`, [d]],
      [`${h}ln_1.weight`, [d]],
      [`${h}ln_2.bias`, [d]],
      [`${h}ln_2.weight`, [d]],
      [`${h}mlp.c_fc.bias`, [4 * d]],
      [`${h}mlp.c_fc.weight`, [d, 4 * d]],
      [`${h}mlp.c_proj.bias`, [d]],
      [`${h}mlp.c_proj.weight`, [4 * d, d]],
    );
  }
  tensors.push(["ln_f.bias", [d]], ["ln_f.weight", [d]], ["wpe.weight", [context, d]], ["wte.weight", [vocabSize, d]]);
  return tensors.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Hugging Face's config.json for `config`. */
export function gpt2Config({ layers, heads, dModel, context, vocabSize }) {
  return JSON.stringify(
    {
      activation_function: "gelu_new",
      architectures: ["GPT2LMHeadModel"],
      layer_norm_epsilon: 1e-5,
      model_type: "gpt2",
      n_ctx: context,
      n_embd: dModel,
      n_head: heads,
      n_inner: null,
      n_layer: layers,
      n_positions: context,
      vocab_size: vocabSize,
    },
    null,
    2,
  );
}

/**
 * Writes a safetensors file of F32 tensors [name, shape] (in that order) with random values:
 * uniform in ±0.04 (N(0, 0.02²) has the same scale), except LayerNorm gains (`isGain(name)`:
 * 1) and biases (0), from a 32-bit xorshift seeded by `seed`: the same seed gives the same
 * bytes. Tensor by tensor: a 500 MB file never sits in memory. Returns the file's size.
 */
export function writeRandomSafetensors(path, tensors, { seed = 1, writer, isGain }) {
  const header = { __metadata__: { format: "pt", writer } };
  let offset = 0;
  for (const [name, shape] of tensors) {
    const bytes = 4 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: "F32", shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  // The header is padded with spaces to a multiple of 8 bytes, as the safetensors writer does.
  let json = JSON.stringify(header);
  json += " ".repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  const fd = openSync(path, "w");
  try {
    writeSync(fd, prefix);
    writeSync(fd, json);
    let x = seed >>> 0 || 1;
    const chunk = new Float32Array(1 << 20);
    for (const [name, shape] of tensors) {
      let left = shape.reduce((a, b) => a * b, 1);
      const gain = isGain(name);
      const bias = name.endsWith(".bias");
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        for (let i = 0; i < n; i++) {
          if (gain || bias) {
            chunk[i] = gain ? 1 : 0;
            continue;
          }
          x ^= x << 13;
          x ^= x >>> 17;
          x ^= x << 5;
          chunk[i] = ((x >>> 0) / 2 ** 32 - 0.5) * 0.08;
        }
        writeSync(fd, new Uint8Array(chunk.buffer, 0, 4 * n));
        left -= n;
      }
    }
  } finally {
    closeSync(fd);
  }
  return 8 + Buffer.byteLength(json) + offset;
}

/** Writes DIR/model.safetensors and DIR/config.json of a random GPT-2. Returns the weights' size in bytes. */
export function writeGpt2Checkpoint(dir, config, seed = 1) {
  mkdirSync(dir, { recursive: true });
  const bytes = writeRandomSafetensors(join(dir, "model.safetensors"), gpt2Tensors(config), {
    seed,
    writer: "attnlens scripts/gpt2-checkpoint.mjs",
    isGain: (name) => /ln_\d\.weight|ln_f\.weight/.test(name),
  });
  writeFileSync(join(dir, "config.json"), gpt2Config(config));
  return bytes;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const usage =
    "usage: node scripts/gpt2-checkpoint.mjs DIR [--preset gpt2 | --layers N --heads N --dim N --context N --vocab N] [--seed S]";
  const { values, positionals } = cli({
    usage,
    positionals: true,
    options: Object.fromEntries(["preset", "layers", "heads", "dim", "context", "vocab", "seed"].map((n) => [n, { type: "string" }])),
  });
  if (positionals.length !== 1) cliError(`give one output folder; got ${positionals.length ? positionals.join(", ") : "none"}`, usage);
  if (values.preset !== undefined && values.preset !== "gpt2") cliError(`--preset must be "gpt2"; got "${values.preset}"`, usage);
  const base = values.preset === "gpt2" ? GPT2_SMALL : { layers: 2, heads: 4, dModel: 64, context: 128, vocabSize: 50257 };
  const number = (name, fallback) => cliNumber(values, name, { fallback, min: 1, integer: true, usage });
  const config = {
    layers: number("layers", base.layers),
    heads: number("heads", base.heads),
    dModel: number("dim", base.dModel),
    context: number("context", base.context),
    vocabSize: number("vocab", base.vocabSize),
  };
  const [dir] = positionals;
  const bytes = writeGpt2Checkpoint(dir, config, number("seed", 1));
  console.log(`wrote ${dir}/model.safetensors (${(bytes / 1e6).toFixed(1)} MB) and config.json: ${JSON.stringify(config)}`);
}
