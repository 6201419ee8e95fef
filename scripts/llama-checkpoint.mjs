// Writes a checkpoint folder of one of the block's decoder families (model_type llama, mistral,
// qwen2, qwen3, gemma2 or gemma3_text) with random weights, as Hugging Face lays one out: config.json in
// transformers 4's dialect (rope_theta, rope_scaling, torch_dtype) or 5's (rope_parameters, dtype,
// layer_types) and model.safetensors in F32, F16 or BF16 with the *ForCausalLM tensor names
// (torch Linear weights [out, in]), tied or untied. For tests and measurements where real
// weights cannot be downloaded. Presets have the real models' shapes; the weights are random.
// Tensor by tensor: a 1 B model's file never sits in memory.
//   node scripts/llama-checkpoint.mjs DIR [--preset NAME] [--dialect 4|5] [--dtype F32|F16|BF16] [--seed S]
// Presets: tiny (the default), smollm2-135m, qwen2.5-0.5b, qwen3-0.6b, tinyllama-1.1b, llama-3.2-1b,
// gemma-tiny, gemma-3-270m, gemma-3-1b, gemma2-tiny, gemma-2-2b.
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { cli, cliError, cliNumber } from "./cli.mjs";

const preset = (p) => Object.freeze({ ropeScaling: null, qkvBias: false, qkNorm: false, headDim: null, ...p });
// Gemma 3 (Gemma3TextConfig): QK-norm, head_dim 256, every 6th layer full and the others a window
// of 512 keys rotated by a base of 10 000, query_pre_attn_scalar 256, tied.
const gemma = (p) =>
  preset({
    modelType: "gemma3_text",
    qkNorm: true,
    headDim: 256,
    tied: true,
    ropeTheta: 1000000,
    ropeLocalTheta: 10000,
    eps: 1e-6,
    slidingWindow: 512,
    slidingPattern: 6,
    queryPreAttnScalar: 256,
    vocab: 262144,
    context: 32768,
    attnSoftcap: null,
    finalSoftcap: null,
    ...p,
  });
// Gemma 2 (Gemma2Config): Gemma 3's block without QK-norm, one rotary base for every layer, every
// other layer (from layer 0) a window of 4096, scores soft-capped at 50 and logits at 30.
const gemma2 = (p) =>
  gemma({
    modelType: "gemma2",
    qkNorm: false,
    ropeTheta: 10000,
    ropeLocalTheta: null,
    slidingWindow: 4096,
    slidingPattern: 2,
    vocab: 256000,
    context: 8192,
    attnSoftcap: 50.0,
    finalSoftcap: 30.0,
    ...p,
  });

/** The real models' shapes (weights random). */
export const LLAMA_PRESETS = Object.freeze({
  tiny: preset({
    modelType: "llama",
    layers: 2,
    hidden: 64,
    heads: 4,
    kvHeads: 2,
    intermediate: 128,
    vocab: 1000,
    context: 256,
    tied: true,
    ropeTheta: 10000,
    eps: 1e-5,
  }),
  "smollm2-135m": preset({
    modelType: "llama",
    layers: 30,
    hidden: 576,
    heads: 9,
    kvHeads: 3,
    intermediate: 1536,
    vocab: 49152,
    context: 8192,
    tied: true,
    ropeTheta: 100000,
    eps: 1e-5,
  }),
  "qwen2.5-0.5b": preset({
    modelType: "qwen2",
    layers: 24,
    hidden: 896,
    heads: 14,
    kvHeads: 2,
    intermediate: 4864,
    vocab: 151936,
    context: 32768,
    tied: true,
    ropeTheta: 1000000,
    eps: 1e-6,
    qkvBias: true,
  }),
  "qwen3-0.6b": preset({
    modelType: "qwen3",
    layers: 28,
    hidden: 1024,
    heads: 16,
    kvHeads: 8,
    headDim: 128,
    intermediate: 3072,
    vocab: 151936,
    context: 40960,
    tied: true,
    ropeTheta: 1000000,
    eps: 1e-6,
    qkNorm: true,
  }),
  "tinyllama-1.1b": preset({
    modelType: "llama",
    layers: 22,
    hidden: 2048,
    heads: 32,
    kvHeads: 4,
    intermediate: 5632,
    vocab: 32000,
    context: 2048,
    tied: false,
    ropeTheta: 10000,
    eps: 1e-5,
  }),
  "llama-3.2-1b": preset({
    modelType: "llama",
    layers: 16,
    hidden: 2048,
    heads: 32,
    kvHeads: 8,
    intermediate: 8192,
    vocab: 128256,
    context: 131072,
    tied: true,
    ropeTheta: 500000,
    eps: 1e-5,
    ropeScaling: { rope_type: "llama3", factor: 32.0, low_freq_factor: 1.0, high_freq_factor: 4.0, original_max_position_embeddings: 8192 },
  }),
  // Gemma 3's shapes, and a small one whose windows (8 keys) are narrower than a sentence.
  "gemma-tiny": gemma({
    layers: 3,
    hidden: 64,
    heads: 4,
    kvHeads: 1,
    headDim: 16,
    intermediate: 128,
    slidingWindow: 8,
    slidingPattern: 3,
    queryPreAttnScalar: 16,
  }),
  "gemma-3-270m": gemma({ layers: 18, hidden: 640, heads: 4, kvHeads: 1, intermediate: 2048 }),
  "gemma-3-1b": gemma({ layers: 26, hidden: 1152, heads: 4, kvHeads: 1, intermediate: 6912 }),
  // Gemma 2's: a small one (windows of 8 on layers 0 and 2), and gemma-2-2b's shapes.
  "gemma2-tiny": gemma2({
    layers: 3,
    hidden: 64,
    heads: 4,
    kvHeads: 2,
    headDim: 16,
    intermediate: 128,
    slidingWindow: 8,
    queryPreAttnScalar: 16,
  }),
  "gemma-2-2b": gemma2({ layers: 26, hidden: 2304, heads: 8, kvHeads: 4, intermediate: 9216 }),
});

const ARCHITECTURES = {
  llama: "LlamaForCausalLM",
  mistral: "MistralForCausalLM",
  qwen2: "Qwen2ForCausalLM",
  qwen3: "Qwen3ForCausalLM",
  gemma2: "Gemma2ForCausalLM",
  gemma3_text: "Gemma3ForCausalLM",
};
const isGemma = (m) => m.modelType === "gemma3_text" || m.modelType === "gemma2";

const headDimOf = (m) => m.headDim ?? m.hidden / m.heads;

/** The tensors of model `m`: [name, shape], in the file's (sorted) order. */
export function llamaTensors(m) {
  const d = m.hidden;
  const hd = headDimOf(m);
  const q = m.heads * hd;
  const kv = m.kvHeads * hd;
  const tensors = [
    ["model.embed_tokens.weight", [m.vocab, d]],
    ["model.norm.weight", [d]],
  ];
  if (!m.tied) tensors.push(["lm_head.weight", [m.vocab, d]]);
  for (let i = 0; i < m.layers; i++) {
    const p = `model.layers.${i}.`;
    tensors.push(
      [`${p}input_layernorm.weight`, [d]],
      [`${p}self_attn.q_proj.weight`, [q, d]],
      [`${p}self_attn.k_proj.weight`, [kv, d]],
      [`${p}self_attn.v_proj.weight`, [kv, d]],
      [`${p}self_attn.o_proj.weight`, [d, q]],
      [`${p}post_attention_layernorm.weight`, [d]],
      [`${p}mlp.gate_proj.weight`, [m.intermediate, d]],
      [`${p}mlp.up_proj.weight`, [m.intermediate, d]],
      [`${p}mlp.down_proj.weight`, [d, m.intermediate]],
    );
    // Gemma: a norm on each side of the MLP (post_attention_layernorm follows the attention).
    if (isGemma(m)) tensors.push([`${p}pre_feedforward_layernorm.weight`, [d]], [`${p}post_feedforward_layernorm.weight`, [d]]);
    if (m.qkvBias)
      tensors.push([`${p}self_attn.q_proj.bias`, [q]], [`${p}self_attn.k_proj.bias`, [kv]], [`${p}self_attn.v_proj.bias`, [kv]]);
    if (m.qkNorm) tensors.push([`${p}self_attn.q_norm.weight`, [hd]], [`${p}self_attn.k_norm.weight`, [hd]]);
  }
  return tensors.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** config.json of model `m` in transformers' dialect 4 or 5, for weights of `dtype`. */
export function llamaConfig(m, { dialect = 4, dtype = "BF16" } = {}) {
  const torchDtype = { F32: "float32", F16: "float16", BF16: "bfloat16" }[dtype];
  if (isGemma(m)) return gemmaConfig(m, { dialect, torchDtype });
  const config = {
    architectures: [ARCHITECTURES[m.modelType]],
    attention_dropout: 0.0,
    hidden_act: "silu",
    hidden_size: m.hidden,
    initializer_range: 0.02,
    intermediate_size: m.intermediate,
    max_position_embeddings: m.context,
    model_type: m.modelType,
    num_attention_heads: m.heads,
    num_hidden_layers: m.layers,
    num_key_value_heads: m.kvHeads,
    rms_norm_eps: m.eps,
    tie_word_embeddings: m.tied,
    vocab_size: m.vocab,
  };
  if (m.headDim !== null) config.head_dim = m.headDim;
  if (m.modelType === "llama" || m.modelType === "qwen3") config.attention_bias = false;
  if (m.modelType === "llama") config.mlp_bias = false;
  if (m.modelType === "qwen2" || m.modelType === "qwen3") {
    config.use_sliding_window = false;
    config.sliding_window = null;
    config.max_window_layers = m.layers;
  }
  if (m.modelType === "mistral") config.sliding_window = null;
  if (dialect === 5) {
    config.rope_parameters = { rope_type: "default", ...(m.ropeScaling ?? {}), rope_theta: m.ropeTheta };
    config.dtype = torchDtype;
    config.layer_types = Array(m.layers).fill("full_attention");
  } else {
    config.rope_theta = m.ropeTheta;
    config.rope_scaling = m.ropeScaling;
    config.torch_dtype = torchDtype;
  }
  return sortedJson(config);
}

const sortedJson = (config) => JSON.stringify(Object.fromEntries(Object.entries(config).sort(([a], [b]) => (a < b ? -1 : 1))), null, 2);

/**
 * Gemma3TextConfig's config.json: dialect 4 with rope_local_base_freq, 5 with rope_parameters per
 * layer type; Gemma2Config's: one set of rotary parameters (dialect 5: a flat rope_parameters).
 */
function gemmaConfig(m, { dialect, torchDtype }) {
  const two = m.modelType === "gemma2";
  const layerTypes = Array.from({ length: m.layers }, (_, i) => ((i + 1) % m.slidingPattern ? "sliding_attention" : "full_attention"));
  const config = {
    architectures: [ARCHITECTURES[m.modelType]],
    attention_bias: false,
    attention_dropout: 0.0,
    attn_logit_softcapping: m.attnSoftcap,
    final_logit_softcapping: m.finalSoftcap,
    head_dim: m.headDim,
    hidden_activation: "gelu_pytorch_tanh",
    hidden_size: m.hidden,
    initializer_range: 0.02,
    intermediate_size: m.intermediate,
    layer_types: layerTypes,
    max_position_embeddings: m.context,
    model_type: m.modelType,
    num_attention_heads: m.heads,
    num_hidden_layers: m.layers,
    num_key_value_heads: m.kvHeads,
    query_pre_attn_scalar: m.queryPreAttnScalar,
    rms_norm_eps: m.eps,
    sliding_window: m.slidingWindow,
    tie_word_embeddings: m.tied,
    use_bidirectional_attention: false,
    vocab_size: m.vocab,
  };
  const full = { rope_type: "default", ...(m.ropeScaling ?? {}), rope_theta: m.ropeTheta };
  if (dialect === 5) {
    config.rope_parameters = two
      ? full
      : { full_attention: full, sliding_attention: { rope_type: "default", rope_theta: m.ropeLocalTheta } };
    config.dtype = torchDtype;
  } else {
    config.rope_theta = m.ropeTheta;
    if (!two) config.rope_local_base_freq = m.ropeLocalTheta;
    config.rope_scaling = m.ropeScaling;
    config.torch_dtype = torchDtype;
  }
  return sortedJson(config);
}

/**
 * Writes a safetensors file of the tensors [name, shape] (in that order) in `dtype` (F32, F16 or
 * BF16, rounded to nearest even) with random values from a 32-bit xorshift seeded by `seed` (the
 * same seed gives the same bytes): norm gains `gain` ± 0.1 (1; Gemma's norms, which scale by
 * 1 + w, store w: 0), biases ± 0.02, other tensors uniform with N(0, 0.02²)'s scale (± 0.04).
 * Returns the file's size.
 */
export function writeLlamaSafetensors(path, tensors, { seed = 1, dtype = "BF16", writer, gain: normGain = 1 }) {
  const width = dtype === "F32" ? 4 : 2;
  const header = { __metadata__: { format: "pt", writer } };
  let offset = 0;
  for (const [name, shape] of tensors) {
    const bytes = width * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype, shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += " ".repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  const toHalf = (x) => {
    // float32 bits to IEEE half, round to nearest even (|x| is far inside F16's range here).
    f32[0] = x;
    const u = u32[0];
    const sign = (u >>> 16) & 0x8000;
    const exp = ((u >>> 23) & 0xff) - 127 + 15;
    const mant = u & 0x7fffff;
    if (exp <= 0) {
      if (exp < -10) return sign;
      const m = mant | 0x800000;
      const shift = 14 - exp;
      const half = m >>> shift;
      const rest = m & ((1 << shift) - 1);
      const mid = 1 << (shift - 1);
      return sign | (half + (rest > mid || (rest === mid && half & 1) ? 1 : 0));
    }
    const half = (exp << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    return sign | (half + (rest > 0x1000 || (rest === 0x1000 && half & 1) ? 1 : 0));
  };
  const toBf16 = (x) => {
    f32[0] = x;
    const u = u32[0];
    return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
  };
  const fd = openSync(path, "w");
  try {
    writeSync(fd, prefix);
    writeSync(fd, json);
    let x = seed >>> 0 || 1;
    const random = () => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      return (x >>> 0) / 2 ** 32 - 0.5;
    };
    const chunk = new Uint8Array(1 << 22);
    const view = new DataView(chunk.buffer);
    for (const [name, shape] of tensors) {
      let left = shape.reduce((a, b) => a * b, 1);
      const gain = /norm\.weight$/.test(name);
      const bias = name.endsWith(".bias");
      while (left > 0) {
        const n = Math.min(left, chunk.length / width);
        for (let i = 0; i < n; i++) {
          const value = gain ? normGain + 0.2 * random() : bias ? 0.04 * random() : 0.08 * random();
          if (width === 4) view.setFloat32(4 * i, value, true);
          else view.setUint16(2 * i, dtype === "F16" ? toHalf(value) : toBf16(value), true);
        }
        writeSync(fd, chunk, 0, n * width);
        left -= n;
      }
    }
  } finally {
    closeSync(fd);
  }
  return 8 + Buffer.byteLength(json) + offset;
}

/**
 * Writes DIR/model.safetensors and DIR/config.json of a random model `m` (a preset or the same
 * fields). Returns the weights' size in bytes.
 */
export function writeLlamaCheckpoint(dir, m, { dialect = 4, dtype = "BF16", seed = 1 } = {}) {
  if (![4, 5].includes(dialect)) throw new Error(`dialect must be 4 or 5, not ${dialect}`);
  if (!["F32", "F16", "BF16"].includes(dtype)) throw new Error(`dtype must be F32, F16 or BF16, not ${dtype}`);
  mkdirSync(dir, { recursive: true });
  const bytes = writeLlamaSafetensors(join(dir, "model.safetensors"), llamaTensors(m), {
    seed,
    dtype,
    writer: "attnlens scripts/llama-checkpoint.mjs",
    gain: isGemma(m) ? 0 : 1,
  });
  writeFileSync(join(dir, "config.json"), llamaConfig(m, { dialect, dtype }));
  return bytes;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const usage =
    "usage: node scripts/llama-checkpoint.mjs DIR [--preset " +
    Object.keys(LLAMA_PRESETS).join(" | ") +
    "] [--dialect 4|5] [--dtype F32|F16|BF16] [--untied] [--seed S]";
  const { values, positionals } = cli({
    usage,
    positionals: true,
    options: {
      preset: { type: "string" },
      dialect: { type: "string" },
      dtype: { type: "string" },
      untied: { type: "boolean" },
      seed: { type: "string" },
    },
  });
  if (positionals.length !== 1) cliError(`give one output folder; got ${positionals.length ? positionals.join(", ") : "none"}`, usage);
  const name = values.preset ?? "tiny";
  if (!Object.hasOwn(LLAMA_PRESETS, name))
    cliError(`--preset must be one of ${Object.keys(LLAMA_PRESETS).join(", ")}; got "${name}"`, usage);
  const dtype = values.dtype ?? "BF16";
  if (!["F32", "F16", "BF16"].includes(dtype)) cliError(`--dtype must be F32, F16 or BF16; got "${dtype}"`, usage);
  const dialect = cliNumber(values, "dialect", { fallback: 4, min: 4, max: 5, integer: true, usage });
  const seed = cliNumber(values, "seed", { fallback: 1, min: 1, integer: true, usage });
  const model = values.untied ? { ...LLAMA_PRESETS[name], tied: false } : LLAMA_PRESETS[name];
  const [dir] = positionals;
  const bytes = writeLlamaCheckpoint(dir, model, { dialect, dtype, seed });
  console.log(
    `wrote ${dir}/model.safetensors (${(bytes / 1e6).toFixed(1)} MB, ${dtype}) and config.json (transformers ${dialect}): ${name}`,
  );
}
