# A PyTorch twin of the training page (web/train/): the same task (spans of random tokens
# repeated to the row's end, 16 skip-bigram chain rows per batch of 64), a GPT-2-style model
# (2 layers, 4 heads, d 32, tied embeddings, pre-LayerNorm), AdamW (0.9, 0.95, decay 0.1 on
# 2-D tensors), clip 1, warm-up then cosine. Used to try architecture changes in minutes before
# changing the library (web/train/RECIPE.md, runs 21-31). Prints every `every` steps: the probe's
# copy losses, each first-layer head's strongest offset back, and each second-layer head's
# weight from second-copy tokens q on q - n + k (k = 1: the textbook induction head).
#   /usr/bin/python3 scripts/train-torch.py '{"ln":0,"stop":2500}'
# Options (JSON): ln 0 drops the LayerNorm before attention; lnf, ln2 0 drop those; mlp 0:
# attention-only; tied 0: a separate unembedding; pos "sin" (frozen sinusoidal) or "none";
# wd, wdemb 0 (no decay on embeddings), embstd, d, heads, V, L, nMin, nMax, chain, seed, stop.
# Needs Debian's python3-torch (bash scripts/bootstrap.sh --bench installs it); the RNG is
# torch's, so its batches are not the page's, only drawn the same way.
import json, math, sys, time
import torch, torch.nn as nn, torch.nn.functional as F

o = dict(layers=2, heads=4, d=32, V=64, L=32, nMin=4, nMax=16, batch=64, lr=3e-3, warmup=100,
         steps=12000, stop=3000, seed=1, chain=16, chainP=0.9, periodic=1, tied=1, every=250,
         mlp=1, wd=0.1, ln=1, pos="learned", wdemb=1, embstd=0.02, lnf=1, ln2=1)
if len(sys.argv) > 2:
    sys.exit(f"train-torch.py: one argument (the options as JSON) expected, got {len(sys.argv) - 1}")
try:
    given = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
except json.JSONDecodeError as e:
    sys.exit(f"train-torch.py: the options are not JSON: {e}")
if not isinstance(given, dict):
    sys.exit("train-torch.py: the options must be a JSON object")
unknown = sorted(set(given) - set(o))
if unknown:  # an unknown name is an error, not a run with the defaults
    sys.exit(f"train-torch.py: unknown option {', '.join(unknown)}; options: {', '.join(o)}")
o.update(given)
torch.manual_seed(o["seed"])
torch.set_num_threads(1)
g = torch.Generator().manual_seed(o["seed"])
perm = torch.randperm(o["V"], generator=torch.Generator().manual_seed(99))


def batch(B, periodic, chain):
    L, V = o["L"], o["V"]
    rows = torch.randint(0, V, (B, L), generator=g)
    spans = []
    for b in range(B):
        n = int(torch.randint(o["nMin"], o["nMax"] + 1, (1,), generator=g))
        s = int(torch.randint(0, L - 2 * n + 1, (1,), generator=g))
        rows[b, s + n:s + 2 * n] = rows[b, s:s + n]
        if periodic and b >= chain:
            for j in range(s + 2 * n, L):
                rows[b, j] = rows[b, j - n]
        spans.append(None if b < chain else (s, n))
    for b in range(min(chain, B)):
        keep = torch.rand(L, generator=g) < o["chainP"]
        for j in range(2, L):
            if keep[j]:
                rows[b, j] = perm[rows[b, j - 2]]
    return rows, spans


class Block(nn.Module):
    def __init__(s, d, H):
        super().__init__()
        s.ln1, s.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        s.attn, s.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        s.fc, s.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        s.H = H

    def forward(s, x):
        B, T, d = x.shape
        H = s.H
        h = s.ln1(x) if o["ln"] else x
        q, k, v = s.attn(h).split(d, 2)
        q, k, v = [t.view(B, T, H, d // H).transpose(1, 2) for t in (q, k, v)]
        a = (q @ k.transpose(-1, -2)) / math.sqrt(d // H)
        a = a.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf")).softmax(-1)
        y = (a @ v).transpose(1, 2).reshape(B, T, d)
        x = x + s.proj(y)
        if o["mlp"]:
            x = x + s.fc2(F.gelu(s.fc(s.ln2(x) if o["ln2"] else x), approximate="tanh"))
        return x, a


class GPT(nn.Module):
    def __init__(s):
        super().__init__()
        d = o["d"]
        s.wte, s.wpe = nn.Embedding(o["V"], d), nn.Embedding(o["L"], d)
        s.blocks = nn.ModuleList(Block(d, o["heads"]) for _ in range(o["layers"]))
        s.lnf = nn.LayerNorm(d)
        s.head = None if o["tied"] else nn.Linear(d, o["V"], bias=False)
        if o["pos"] == "sin":
            pe = torch.zeros(o["L"], d)
            pos = torch.arange(o["L"]).unsqueeze(1)
            div = torch.exp(torch.arange(0, d, 2) * (-math.log(100.0) / d))
            pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
            s.register_buffer("sinpe", pe)
        for n, p in s.named_parameters():
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * o["layers"]) if n.endswith("proj.weight") or n.endswith("fc2.weight") else 0.02
                if n.startswith("wte") or n.startswith("wpe"):
                    std = o["embstd"]
                nn.init.normal_(p, 0, std)
            elif "ln" in n and n.endswith("weight"):
                nn.init.ones_(p)
            else:
                nn.init.zeros_(p)
        if o["pos"] == "sin":
            s.wpe.weight.data.copy_(s.sinpe)
            s.wpe.weight.requires_grad_(False)

    def forward(s, ids):
        T = ids.shape[1]
        x = s.wte(ids) + (s.wpe(torch.arange(T)) if o["pos"] != "none" else 0)
        atts = []
        for b in s.blocks:
            x, a = b(x)
            atts.append(a)
        x = s.lnf(x) if o["lnf"] else x
        return x @ (s.wte.weight if s.head is None else s.head.weight).T, atts


m = GPT()
decay = [p for n, p in m.named_parameters() if p.dim() == 2 and p.requires_grad and (o["wdemb"] or not n.startswith("w"))]
emb = [p for n, p in m.named_parameters() if p.dim() == 2 and p.requires_grad and not (o["wdemb"] or not n.startswith("w"))]
rest = [p for p in m.parameters() if p.dim() < 2] + emb
opt = torch.optim.AdamW([{"params": decay, "weight_decay": o["wd"]}, {"params": rest, "weight_decay": 0}],
                        lr=o["lr"], betas=(0.9, 0.95))
probe, pspans = batch(64, False, 0)


def lr_at(step):
    if step < o["warmup"]:
        return o["lr"] * (step + 1) / o["warmup"]
    p = (step - o["warmup"]) / (o["steps"] - o["warmup"])
    return o["lr"] / 10 + 0.5 * (1 + math.cos(math.pi * p)) * (o["lr"] - o["lr"] / 10)


def measure(step, t0):
    with torch.no_grad():
        logits, atts = m(probe[:, :-1])
        lp = logits.log_softmax(-1)
        first, second = [], []
        T = o["L"] - 1
        offs = {}
        for b, (s, n) in enumerate(pspans):
            for t in range(s, min(T, s + 2 * n - 1)):
                tgt = t + 1
                l = -lp[b, t, probe[b, tgt]].item()
                if tgt < s + n:
                    first.append(l)
                elif tgt > s + n:
                    second.append(l)
        # attention of layer-2 heads from second-copy q to q - n + k for k in -1..3
        scores = []
        for li, a in enumerate(atts):
            for h in range(o["heads"]):
                row = {}
                for k in (0, 1, 2, 3):
                    tot, cnt = 0.0, 0
                    for b, (s, n) in enumerate(pspans):
                        for j in range(n):
                            q = s + n + j
                            if q < T and 0 <= q - n + k <= q:
                                tot += a[b, h, q, q - n + k].item()
                                cnt += 1
                    row[k] = tot / cnt
                prev = a[:, h, 1:, :].diagonal(-1, -2).mean().item() if False else sum(
                    a[:, h, t, t - 1].mean().item() for t in range(1, T)) / (T - 1)
                scores.append((li, h, row, prev))
    f, sc = sum(first) / len(first), sum(second) / len(second)
    best = max(r[2][1] for r in scores)
    bp = max(r[3] for r in scores)
    detail = " ".join(f"L{li}H{h}:+0 {r[0]:.2f} +1 {r[1]:.2f} +2 {r[2]:.2f} +3 {r[3]:.2f}" for li, h, r, p in scores if li > 0)
    offs = []
    with torch.no_grad():
        a0 = atts[0]
        for h in range(o["heads"]):
            bk = max(range(0, 5), key=lambda k: sum(a0[:, h, t, t - k].mean().item() for t in range(4, T)))
            val = sum(a0[:, h, t, t - bk].mean().item() for t in range(4, T)) / (T - 4)
            offs.append(f"L0H{h}:-{bk} {val:.2f}")
    l0 = " ".join(offs)
    elapsed = time.time() - t0
    eta = elapsed / step * (o["stop"] - step) if step else float("nan")
    print(f"step {step} {elapsed:.0f}s ETA {eta:.0f}s first {f:.2f} second {sc:.2f} ind {best:.2f} prev {bp:.2f} | {l0} | {detail}", flush=True)


t0 = time.time()
for step in range(o["stop"] + 1):
    if step % o["every"] == 0:
        measure(step, t0)
    if step == o["stop"]:
        break
    rows, _ = batch(o["batch"], o["periodic"], o["chain"])
    for gr in opt.param_groups:
        gr["lr"] = lr_at(step)
    logits, _ = m(rows[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, o["V"]), rows[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_([p for p in m.parameters() if p.requires_grad], 1.0)
    opt.step()
