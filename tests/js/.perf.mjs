import { loadAttnLens } from "attnlens";
const lens = await loadAttnLens();
const median = (f, n) => { for (let i = 0; i < 3; i++) f(); const t = []; for (let i = 0; i < n; i++) { const a = performance.now(); f(); t.push(performance.now() - a); } t.sort((a, b) => a - b); return t[n >> 1]; };
for (const [L, D, H, n] of [[64, 16, 4, 200], [256, 64, 8, 20], [1024, 64, 8, 5]]) {
  const q = { data: new Float32Array(H * L * D).map(() => Math.random() - 0.5), shape: [1, H, L, D] };
  const flops = 4 * H * L * L * D;
  const row = (name, f) => { const ms = median(f, n); console.log(`L=${L} ${name.padEnd(24)} ${ms.toFixed(3)} ms  ${(flops / ms / 1e6).toFixed(1)} GFLOP/s`); };
  row("reference full", () => lens.attentionReference(q, q, q));
  row("fast full", () => lens.attention(q, q, q));
  row("fast full + weights", () => lens.attention(q, q, q, { returnWeights: true }));
  row("fast causal", () => lens.attention(q, q, q, { causal: true }));
  row("streaming full", () => lens.attention(q, q, q, { streaming: true }));
  row("streaming causal", () => lens.attention(q, q, q, { streaming: true, causal: true }));
}
