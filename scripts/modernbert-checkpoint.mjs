// Writes a ModernBERT checkpoint folder with random weights, as Hugging Face lays one out:
// config.json (ModernBertConfig in transformers 4's dialect, global_attn_every_n_layers and the
// two rotary bases, or 5's, layer_types and rope_parameters per layer type), model.safetensors
// with ModernBertForMaskedLM's tensor names (model.embeddings, model.layers.{i} with a fused
// attn.Wqkv and mlp.Wi and no attn_norm in layer 0, model.final_norm, head.dense, head.norm,
// decoder.bias; the decoder's weight tied to the embeddings), and a tokenizer.json of
// ModernBERT's form: a byte-level BPE (here the shipped model's vocabulary and merges, from
// models/attnlens/), NFC, [CLS] … [SEP] (TemplateProcessing), [MASK] taking the space before it.
// For tests and measurements where real weights cannot be downloaded: presets have the real
// models' shapes; the weights are random.
//   node scripts/modernbert-checkpoint.mjs DIR [--preset tiny | base | large] [--dialect 4|5] [--dtype F32|F16|BF16] [--seed S]
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cli, cliError, cliNumber } from "./cli.mjs";
import { writeLlamaSafetensors } from "./llama-checkpoint.mjs";

/** ModernBERT-base's and -large's shapes, and a small one whose local layers (±4 tokens) are narrower than a sentence. */
export const MODERNBERT_PRESETS = Object.freeze({
  tiny: Object.freeze({ layers: 3, hidden: 64, heads: 4, intermediate: 96, vocab: 8197, context: 512, localAttention: 8, every: 3 }),
  base: Object.freeze({
    layers: 22,
    hidden: 768,
    heads: 12,
    intermediate: 1152,
    vocab: 50368,
    context: 8192,
    localAttention: 128,
    every: 3,
  }),
  large: Object.freeze({
    layers: 28,
    hidden: 1024,
    heads: 16,
    intermediate: 2624,
    vocab: 50368,
    context: 8192,
    localAttention: 128,
    every: 3,
  }),
});

/** The tensors of ModernBertForMaskedLM for `m` (no biases: ModernBERT's configs set them false but decoder_bias). */
export function modernbertTensors(m) {
  const d = m.hidden;
  const tensors = [
    ["model.embeddings.tok_embeddings.weight", [m.vocab, d]],
    ["model.embeddings.norm.weight", [d]],
    ["model.final_norm.weight", [d]],
    ["head.dense.weight", [d, d]],
    ["head.norm.weight", [d]],
    ["decoder.bias", [m.vocab]],
  ];
  for (let i = 0; i < m.layers; i++) {
    const p = `model.layers.${i}.`;
    if (i > 0) tensors.push([`${p}attn_norm.weight`, [d]]);
    tensors.push(
      [`${p}attn.Wqkv.weight`, [3 * d, d]],
      [`${p}attn.Wo.weight`, [d, d]],
      [`${p}mlp_norm.weight`, [d]],
      [`${p}mlp.Wi.weight`, [2 * m.intermediate, d]],
      [`${p}mlp.Wo.weight`, [d, m.intermediate]],
    );
  }
  return tensors.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"];

/** config.json of `m` in transformers' dialect 4 or 5; the special tokens' ids follow the shipped vocabulary. */
export function modernbertConfig(m, { dialect = 4, dtype = "F32", specials }) {
  const torchDtype = { F32: "float32", F16: "float16", BF16: "bfloat16" }[dtype];
  const config = {
    architectures: ["ModernBertForMaskedLM"],
    attention_bias: false,
    attention_dropout: 0.0,
    bos_token_id: specials["[CLS]"],
    classifier_activation: "gelu",
    classifier_bias: false,
    classifier_pooling: "mean",
    cls_token_id: specials["[CLS]"],
    decoder_bias: true,
    eos_token_id: specials["[SEP]"],
    hidden_activation: "gelu",
    hidden_size: m.hidden,
    initializer_range: 0.02,
    intermediate_size: m.intermediate,
    local_attention: m.localAttention,
    max_position_embeddings: m.context,
    mlp_bias: false,
    model_type: "modernbert",
    norm_bias: false,
    norm_eps: 1e-5,
    num_attention_heads: m.heads,
    num_hidden_layers: m.layers,
    pad_token_id: specials["[PAD]"],
    sep_token_id: specials["[SEP]"],
    tie_word_embeddings: true,
    vocab_size: m.vocab,
  };
  if (dialect === 5) {
    config.layer_types = Array.from({ length: m.layers }, (_, i) => (i % m.every ? "sliding_attention" : "full_attention"));
    config.rope_parameters = {
      full_attention: { rope_type: "default", rope_theta: 160000.0 },
      sliding_attention: { rope_type: "default", rope_theta: 10000.0 },
    };
    config.dtype = torchDtype;
  } else {
    config.global_attn_every_n_layers = m.every;
    config.global_rope_theta = 160000.0;
    config.local_rope_theta = 10000.0;
    config.torch_dtype = torchDtype;
  }
  return JSON.stringify(Object.fromEntries(Object.entries(config).sort(([a], [b]) => (a < b ? -1 : 1))), null, 2);
}

const SHIPPED_BPE = new URL("../models/attnlens/", import.meta.url);

/**
 * tokenizer.json of ModernBERT's form for a vocabulary of `size`: the shipped model's byte-level
 * BPE (ids from 0), then [UNK], [CLS], [SEP], [PAD], [MASK] (as ModernBERT orders them after its
 * own BPE) and [unusedN] to the size. Returns { json, specials } (the specials' ids by name).
 */
export function modernbertTokenizer(size) {
  const shipped = JSON.parse(readFileSync(new URL("vocab.json", SHIPPED_BPE), "utf8"));
  const vocab = {};
  let next = 0;
  for (const [token] of Object.entries(shipped).sort((a, b) => a[1] - b[1])) vocab[token] = next++;
  if (next + SPECIALS.length > size)
    throw new Error(`a ModernBERT vocabulary needs at least ${next + SPECIALS.length} tokens; the preset has ${size}`);
  const specials = {};
  const added = [];
  const add = (content, special, lstrip = false) => {
    vocab[content] = next;
    added.push({ id: next++, content, single_word: false, lstrip, rstrip: false, normalized: !special, special });
  };
  for (const name of SPECIALS) {
    specials[name] = next;
    add(name, true, name === "[MASK]");
  }
  for (let i = 0; next < size; i++) add(`[unused${i}]`, false);
  const special = (name) => ({ SpecialToken: { id: name, type_id: 0 } });
  const json = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: "NFC" },
    pre_tokenizer: { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: {
      type: "TemplateProcessing",
      single: [special("[CLS]"), { Sequence: { id: "A", type_id: 0 } }, special("[SEP]")],
      pair: [
        special("[CLS]"),
        { Sequence: { id: "A", type_id: 0 } },
        special("[SEP]"),
        { Sequence: { id: "B", type_id: 0 } },
        special("[SEP]"),
      ],
      special_tokens: Object.fromEntries(["[CLS]", "[SEP]"].map((name) => [name, { id: name, ids: [specials[name]], tokens: [name] }])),
    },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: byteLevelBpeModel(vocab, readFileSync(new URL("merges.txt", SHIPPED_BPE), "utf8")),
  };
  return { json, specials };
}

/**
 * tokenizer.json's `model` for a byte-level BPE (GPT-2's, RoBERTa's, ModernBERT's): `vocab` as an
 * object, `mergesText` as merges.txt has it (a `#version` line is skipped).
 */
export function byteLevelBpeModel(vocab, mergesText) {
  return {
    type: "BPE",
    dropout: null,
    unk_token: null,
    continuing_subword_prefix: "",
    end_of_word_suffix: "",
    fuse_unk: false,
    byte_fallback: false,
    ignore_merges: false,
    vocab,
    merges: mergesText.split("\n").filter((line) => line && !line.startsWith("#version")),
  };
}

/** Writes DIR/model.safetensors, config.json and tokenizer.json of a random model `m`. Returns the weights' size in bytes. */
export function writeModernbertCheckpoint(dir, m, { dialect = 4, dtype = "F32", seed = 1 } = {}) {
  if (![4, 5].includes(dialect)) throw new Error(`dialect must be 4 or 5, not ${dialect}`);
  if (!["F32", "F16", "BF16"].includes(dtype)) throw new Error(`dtype must be F32, F16 or BF16, not ${dtype}`);
  mkdirSync(dir, { recursive: true });
  const { json, specials } = modernbertTokenizer(m.vocab);
  const bytes = writeLlamaSafetensors(join(dir, "model.safetensors"), modernbertTensors(m), {
    seed,
    dtype,
    writer: "attnlens scripts/modernbert-checkpoint.mjs",
  });
  writeFileSync(join(dir, "config.json"), modernbertConfig(m, { dialect, dtype, specials }));
  writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(json));
  return bytes;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const usage =
    "usage: node scripts/modernbert-checkpoint.mjs DIR [--preset tiny | base | large] [--dialect 4|5] [--dtype F32|F16|BF16] [--seed S]";
  const { values, positionals } = cli({
    usage,
    positionals: true,
    options: { preset: { type: "string" }, dialect: { type: "string" }, dtype: { type: "string" }, seed: { type: "string" } },
  });
  if (positionals.length !== 1) cliError(`give one output folder; got ${positionals.length ? positionals.join(", ") : "none"}`, usage);
  const name = values.preset ?? "tiny";
  if (!Object.hasOwn(MODERNBERT_PRESETS, name))
    cliError(`--preset must be one of ${Object.keys(MODERNBERT_PRESETS).join(", ")}; got "${name}"`, usage);
  const dtype = values.dtype ?? "F32";
  if (!["F32", "F16", "BF16"].includes(dtype)) cliError(`--dtype must be F32, F16 or BF16; got "${dtype}"`, usage);
  const dialect = cliNumber(values, "dialect", { fallback: 4, min: 4, max: 5, integer: true, usage });
  const seed = cliNumber(values, "seed", { fallback: 1, min: 1, integer: true, usage });
  const [dir] = positionals;
  const bytes = writeModernbertCheckpoint(dir, MODERNBERT_PRESETS[name], { dialect, dtype, seed });
  console.log(
    `wrote ${dir}/model.safetensors (${(bytes / 1e6).toFixed(1)} MB, ${dtype}), config.json (transformers ${dialect}) and tokenizer.json: ${name}`,
  );
}
