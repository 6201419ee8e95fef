// scripts/llama-checkpoint.mjs: the presets have the real models' shapes (their parameter counts
// are the published ones), and the folders it writes are hub-layout checkpoints: safetensors whose
// tensors tile the byte buffer in the asked dtype, config.json in transformers 4's or 5's dialect.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LLAMA_PRESETS, llamaConfig, llamaTensors, writeLlamaCheckpoint } from "../../scripts/llama-checkpoint.mjs";

const count = (m) => llamaTensors(m).reduce((sum, [, shape]) => sum + shape.reduce((a, b) => a * b, 1), 0);

test("presets have the published parameter counts", () => {
  assert.equal(count(LLAMA_PRESETS["smollm2-135m"]), 134515008);
  assert.equal(count(LLAMA_PRESETS["qwen2.5-0.5b"]), 494032768);
  assert.equal(count(LLAMA_PRESETS["qwen3-0.6b"]), 596049920);
  assert.equal(count(LLAMA_PRESETS["tinyllama-1.1b"]), 1100048384);
  assert.equal(count(LLAMA_PRESETS["llama-3.2-1b"]), 1235814400);
  assert.equal(count(LLAMA_PRESETS["gemma-3-270m"]), 268098176);
  assert.equal(count(LLAMA_PRESETS["gemma-3-1b"]), 999885952);
  assert.equal(count(LLAMA_PRESETS["gemma-2-2b"]), 2614341888);
});

test("Gemma 3's config.json in both dialects: windows per layer type, the local rotary base", () => {
  const m = LLAMA_PRESETS["gemma-3-270m"];
  const four = JSON.parse(llamaConfig(m, { dialect: 4 }));
  assert.equal(four.model_type, "gemma3_text");
  assert.equal(four.hidden_activation, "gelu_pytorch_tanh");
  assert.deepEqual(
    [four.rope_theta, four.rope_local_base_freq, four.sliding_window, four.query_pre_attn_scalar],
    [1000000, 10000, 512, 256],
  );
  // Every 6th layer full, as Gemma3TextConfig derives layer_types from its pattern of 6.
  assert.deepEqual(
    four.layer_types.map((t, i) => (t === "full_attention" ? i : -1)).filter((i) => i >= 0),
    [5, 11, 17],
  );
  const five = JSON.parse(llamaConfig(m, { dialect: 5 }));
  assert.deepEqual(five.rope_parameters, {
    full_attention: { rope_type: "default", rope_theta: 1000000 },
    sliding_attention: { rope_type: "default", rope_theta: 10000 },
  });
  assert.equal(five.rope_theta, undefined);
  const names = llamaTensors(m).map(([name]) => name);
  for (const norm of ["input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm"])
    assert.ok(names.includes(`model.layers.17.${norm}.weight`), norm);
  assert.ok(names.includes("model.layers.0.self_attn.q_norm.weight"));
});

test("Gemma 2's config.json in both dialects: soft caps, every other layer sliding, one rotary base", () => {
  const m = LLAMA_PRESETS["gemma-2-2b"];
  const four = JSON.parse(llamaConfig(m, { dialect: 4 }));
  assert.deepEqual(four.architectures, ["Gemma2ForCausalLM"]);
  assert.equal(four.model_type, "gemma2");
  assert.deepEqual(
    [four.attn_logit_softcapping, four.final_logit_softcapping, four.rope_theta, four.sliding_window, four.query_pre_attn_scalar],
    [50, 30, 10000, 4096, 256],
  );
  assert.equal(four.rope_local_base_freq, undefined);
  // As Gemma2Config derives layer_types: layers 0, 2, 4, ... slide.
  assert.deepEqual(four.layer_types.slice(0, 4), ["sliding_attention", "full_attention", "sliding_attention", "full_attention"]);
  const five = JSON.parse(llamaConfig(m, { dialect: 5 }));
  assert.deepEqual(five.rope_parameters, { rope_type: "default", rope_theta: 10000 });
  const names = llamaTensors(m).map(([name]) => name);
  assert.ok(names.includes("model.layers.25.post_feedforward_layernorm.weight"));
  assert.ok(!names.some((name) => name.includes("q_norm")), "Gemma 2 has no QK-norm");
});

test("config.json in both dialects", () => {
  const m = LLAMA_PRESETS["llama-3.2-1b"];
  const four = JSON.parse(llamaConfig(m, { dialect: 4, dtype: "BF16" }));
  assert.equal(four.rope_theta, 500000);
  assert.deepEqual(four.rope_scaling, {
    rope_type: "llama3",
    factor: 32,
    low_freq_factor: 1,
    high_freq_factor: 4,
    original_max_position_embeddings: 8192,
  });
  assert.equal(four.torch_dtype, "bfloat16");
  assert.equal(four.rope_parameters, undefined);
  const five = JSON.parse(llamaConfig(m, { dialect: 5, dtype: "F16" }));
  assert.equal(five.rope_parameters.rope_type, "llama3");
  assert.equal(five.rope_parameters.rope_theta, 500000);
  assert.equal(five.dtype, "float16");
  assert.deepEqual(five.layer_types, Array(16).fill("full_attention"));
  assert.equal(five.rope_theta, undefined);
  const qwen3 = JSON.parse(llamaConfig(LLAMA_PRESETS["qwen3-0.6b"]));
  assert.equal(qwen3.head_dim, 128);
  assert.equal(qwen3.use_sliding_window, false);
});

test("model.safetensors in F32, F16 and BF16, tied and untied", () => {
  const dir = mkdtempSync(join(tmpdir(), "attnlens-llama-"));
  try {
    for (const dtype of ["F32", "F16", "BF16"]) {
      for (const tied of [true, false]) {
        const m = { ...LLAMA_PRESETS.tiny, tied };
        const out = join(dir, `${dtype}-${tied}`);
        const size = writeLlamaCheckpoint(out, m, { dtype, seed: 3 });
        const bytes = readFileSync(join(out, "model.safetensors"));
        assert.equal(bytes.length, size);
        const n = Number(bytes.readBigUInt64LE(0));
        assert.equal(n % 8, 0);
        const header = JSON.parse(bytes.subarray(8, 8 + n).toString());
        const names = Object.keys(header).filter((k) => k !== "__metadata__");
        assert.equal(names.includes("lm_head.weight"), !tied);
        assert.deepEqual(header["model.layers.0.self_attn.k_proj.weight"].shape, [32, 64]);
        let end = 0;
        for (const name of names) {
          const {
            dtype: d,
            shape,
            data_offsets: [begin, stop],
          } = header[name];
          assert.equal(d, dtype);
          assert.equal(begin, end);
          assert.equal(stop - begin, shape.reduce((a, b) => a * b, 1) * (dtype === "F32" ? 4 : 2));
          end = stop;
        }
        assert.equal(8 + n + end, bytes.length);
        // Norm gains are 1 ± 0.1: the first one's first value, widened, lies there.
        const gain = header["model.norm.weight"].data_offsets[0] + 8 + n;
        const value =
          dtype === "F32"
            ? bytes.readFloatLE(gain)
            : dtype === "BF16"
              ? new Float32Array(new Uint32Array([bytes.readUInt16LE(gain) << 16]).buffer)[0]
              : halfToFloat(bytes.readUInt16LE(gain));
        assert.ok(Math.abs(value - 1) <= 0.1 + 1e-3, `${dtype}: ${value}`);
        assert.equal(JSON.parse(readFileSync(join(out, "config.json"), "utf8")).tie_word_embeddings, tied);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function halfToFloat(h) {
  const exp = (h >> 10) & 0x1f;
  const mant = h & 0x3ff;
  const sign = h & 0x8000 ? -1 : 1;
  if (exp === 0) return sign * mant * 2 ** -24;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}
