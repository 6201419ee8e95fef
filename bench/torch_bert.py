"""PyTorch on CPU, one thread: a forward of BERT base's shapes, beside bench/typing.mjs's.

The layout attnlens reads (Hugging Face's BertForMaskedLM): word, position and token-type
embeddings and a LayerNorm; 12 post-LayerNorm blocks of self-attention (every head's weights
computed, as attnlens returns them for the figure) and an MLP d -> 4d -> d with exact (erf) GELU;
the masked-LM head (dense, GELU, LayerNorm, decoder tied to the word embeddings). Random weights;
32 tokens. Prints one JSON line per measurement:

  bert_forward: ms of a forward with the masked-LM logits of every token, and of the [MASK] row only

  /usr/bin/python3 bench/torch_bert.py [--quick]
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
EPS = 1e-12


class Block(nn.Module):
    def __init__(self, d, heads, inner):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.ln_1 = nn.LayerNorm(d, eps=EPS)
        self.fc, self.proj = nn.Linear(d, inner), nn.Linear(inner, d)
        self.ln_2 = nn.LayerNorm(d, eps=EPS)

    def forward(self, x):
        B, T, d = x.shape
        hd = d // self.heads
        q, k, v = (m(x).view(B, T, self.heads, hd).transpose(1, 2) for m in (self.q, self.k, self.v))
        weights = F.softmax((q @ k.transpose(-2, -1)) / math.sqrt(hd), dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(B, T, d)
        x = self.ln_1(x + self.o(y))
        return self.ln_2(x + self.proj(F.gelu(self.fc(x)))), weights


class Bert(nn.Module):
    def __init__(self, layers=12, heads=12, d=768, inner=3072, context=512, vocab=30522):
        super().__init__()
        self.words, self.positions, self.types = nn.Embedding(vocab, d), nn.Embedding(context, d), nn.Embedding(2, d)
        self.ln = nn.LayerNorm(d, eps=EPS)
        self.blocks = nn.ModuleList(Block(d, heads, inner) for _ in range(layers))
        self.dense, self.head_ln = nn.Linear(d, d), nn.LayerNorm(d, eps=EPS)
        self.bias = nn.Parameter(torch.zeros(vocab))

    def forward(self, ids, rows=None):
        T = ids.shape[1]
        x = self.ln(self.words(ids) + self.positions(torch.arange(T)) + self.types(torch.zeros_like(ids)))
        attention = []
        for block in self.blocks:
            x, w = block(x)
            attention.append(w)
        h = x if rows is None else x[:, rows]
        return self.head_ln(F.gelu(self.dense(h))) @ self.words.weight.T + self.bias, attention


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


@torch.no_grad()
def bert_forward(T=32):
    model = Bert().eval()
    ids = torch.randint(0, 30522, (1, T))
    out = []
    for what, rows in (("all rows", None), ("[MASK] row", [T // 2])):
        model(ids, rows)
        times = []
        for _ in range(3 if QUICK else 7):
            start = time.perf_counter()
            model(ids, rows)
            times.append(time.perf_counter() - start)
        out.append({"what": "bert_forward", "rows": what, "T": T, "ms": median(times) * 1e3})
    return out


print(json.dumps({"what": "torch", "version": torch.__version__, "threads": torch.get_num_threads()}))
for row in bert_forward():
    print(json.dumps(row), flush=True)
