"""PyTorch on CPU, one thread, on the models of bench/native/gpt2_bench.cpp and bench/model.mjs.

The same GPT-2 layout as attnlens' model (pre-LayerNorm blocks, causal attention with biases,
MLP d -> 4d -> d with GELU tanh approximation, final LayerNorm, unembedding tied to the token
embeddings), written with torch.nn so that autograd does the backward pass, and torch.optim.AdamW
(weight decay on matrices only, as attnlens). Prints one JSON line per measurement:

  training: tokens/s of one step (forward + backward + AdamW) of the 2-layer d = 128 model at
            B = 16, T = 128 (median step time of `steps` after 2 warm-up steps)
  forward:  ms of a forward pass of 32 and 64 tokens on GPT-2 small's shapes (random weights)

  /usr/bin/python3 bench/torch_gpt2.py [--quick]
"""

import argparse
import json
import math
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

torch.set_num_threads(1)
torch.set_num_interop_threads(1)
torch.manual_seed(1)
_parser = argparse.ArgumentParser(description=__doc__ and __doc__.splitlines()[0])
_parser.add_argument("--quick", action="store_true", help="fewer repetitions")
QUICK = _parser.parse_args().quick  # an unknown flag is an error (exit 2), not a full run


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d, eps=1e-5)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d, eps=1e-5)
        self.c_fc = nn.Linear(d, 4 * d)
        self.mlp_proj = nn.Linear(4 * d, d)

    def forward(self, x, mask):
        B, T, d = x.shape
        hd = d // self.heads
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        # (B, T, d) -> (B, heads, T, hd)
        q, k, v = (t.view(B, T, self.heads, hd).transpose(1, 2) for t in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(hd) + mask[:T, :T]
        y = (F.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, d)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt2(nn.Module):
    def __init__(self, layers, heads, d, context, vocab):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(context, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d, eps=1e-5)
        mask = torch.full((context, context), float("-inf")).triu(1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, ids):
        T = ids.shape[1]
        x = self.wte(ids) + self.wpe(torch.arange(T))
        for block in self.blocks:
            x = block(x, self.mask)
        return self.ln_f(x) @ self.wte.weight.T  # tied unembedding


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def training(B=16, T=128):
    model = Gpt2(2, 4, 128, 128, 4096)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    rest = [p for n, p in model.named_parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}], lr=1e-4
    )
    batch = torch.randint(0, 4096, (B, T + 1))
    x, y = batch[:, :-1], batch[:, 1:]

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).reshape(-1, 4096), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    for _ in range(2):
        step()
    times = []
    for _ in range(3 if QUICK else 7):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    seconds = median(times)
    return {"what": "training", "B": B, "T": T, "ms": seconds * 1e3, "tokens_per_s": B * T / seconds}


@torch.no_grad()
def gpt2_forward():
    model = Gpt2(12, 12, 768, 1024, 50257).eval()
    out = []
    for T in (32, 64):
        ids = torch.randint(0, 50257, (1, T))
        model(ids)
        times = []
        for _ in range(2 if QUICK else 5):
            start = time.perf_counter()
            model(ids)
            times.append(time.perf_counter() - start)
        out.append({"what": "gpt2_forward", "T": T, "ms": median(times) * 1e3})
    return out


print(json.dumps({"what": "torch", "version": torch.__version__, "threads": torch.get_num_threads()}))
print(json.dumps(training()), flush=True)
for row in gpt2_forward():
    print(json.dumps(row), flush=True)
