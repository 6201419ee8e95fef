import { loadAttnLens } from "attnlens";
const lens = await loadAttnLens();
const T = (shape) => ({ data: new Float32Array(shape.reduce((a, b) => a * b)).map(() => Math.random() - 0.5), shape });
const m = T([1, 8, 256, 64]);
for (let i = 0; i < 150; i++) lens.attention(m, m, m);
