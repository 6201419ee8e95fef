#!/usr/bin/env python3
"""Loads this folder in PyTorch without `transformers` and compares logits with attnlens'.

    /usr/bin/python3 models/attnlens/check_torch.py   (Debian's python3-torch; run after npm run build)

Reads model.safetensors (its JSON header and raw little-endian tensors) and config.json the way
Hugging Face's GPT2LMHeadModel does, runs GPT-2's forward pass written out below, and compares
the logits with those of attnlens' own wasm build (dist/attnlens.node.js, run with node) for the
same token ids. Prints the largest difference and where it is; exits 1 above the tolerance.
"""
import json
import math
import os
import struct
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TEXT = "It is a truth universally acknowledged, that a single man in possession of a good fortune"

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    header.pop("__metadata__", None)
    body = data[8 + n :]
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = bytearray(body[begin:end])
        t = torch.frombuffer(raw, dtype=DTYPES[info["dtype"]]).reshape(info["shape"])
        tensors[name.removeprefix("transformer.")] = t.float()
    return tensors


def gpt2_forward(w, config, ids):
    # x is (T, C); HF's Conv1D weights are [in, out]: y = x @ W + b.
    T, C, H = len(ids), config["n_embd"], config["n_head"]
    eps = config.get("layer_norm_epsilon", 1e-5)
    ln = lambda x, p: torch.nn.functional.layer_norm(x, (C,), w[p + ".weight"], w[p + ".bias"], eps)
    x = w["wte.weight"][ids] + w["wpe.weight"][:T]
    causal = torch.ones(T, T).tril().bool()
    for i in range(config["n_layer"]):
        p = f"h.{i}."
        qkv = ln(x, p + "ln_1") @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = (t.reshape(T, H, C // H).transpose(0, 1) for t in qkv.split(C, dim=1))
        att = (q @ k.transpose(1, 2)) / math.sqrt(C // H)
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(0, 1).reshape(T, C)
        x = x + y @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = ln(x, p + "ln_2") @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]
        h = torch.nn.functional.gelu(h, approximate="tanh")
        x = x + h @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    return ln(x, "ln_f") @ w["wte.weight"].T


ATTNLENS = """
import { readFileSync } from "node:fs";
import { loadAttnLens } from "./dist/attnlens.node.js";
const dir = process.argv[1] + "/";
const lens = await loadAttnLens();
const model = await lens.loadModel({ files: {
  "model.safetensors": readFileSync(dir + "model.safetensors"),
  "config.json": readFileSync(dir + "config.json", "utf8"),
  "vocab.json": readFileSync(dir + "vocab.json", "utf8"),
  "merges.txt": readFileSync(dir + "merges.txt", "utf8") } });
const ids = model.encode(process.argv[2]);
const { logits } = model.forward(ids);
console.log(JSON.stringify({ ids: [...ids], shape: logits.shape, logits: [...logits.data] }));
"""


def main():
    config = json.load(open(os.path.join(HERE, "config.json")))
    weights = read_safetensors(os.path.join(HERE, "model.safetensors"))
    out = subprocess.run(
        ["node", "--input-type=module", "-e", ATTNLENS, HERE, TEXT],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    ours = json.loads(out)
    T, V = ours["shape"]
    expected = torch.tensor(ours["logits"], dtype=torch.float32).reshape(T, V)
    with torch.no_grad():
        logits = gpt2_forward(weights, config, torch.tensor(ours["ids"]))
    if logits.shape != expected.shape:
        print(f"shape mismatch: torch {tuple(logits.shape)}, attnlens {tuple(expected.shape)}")
        return 1
    diff = (logits - expected).abs()
    worst = diff.max().item()
    t, v = divmod(diff.argmax().item(), V)
    # Both compute in float32 from the same F16-rounded weights; the orders of the sums differ.
    # A logit is a dot product of d = 128 terms after two blocks: |error| of a few 1e-5 is
    # float32 rounding. 1e-3 bounds it with room and still catches any wrong weight or layout.
    ok = math.isfinite(worst) and worst <= 1e-3
    print(f"{T} tokens x {V} logits: largest |torch - attnlens| = {worst:.3g} at token {t}, "
          f"id {v} (torch {logits[t, v].item():.6f}, attnlens {expected[t, v].item():.6f}): "
          f"{'agree' if ok else 'DISAGREE'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
