// Type-checked with `tsc --noEmit --strict` (tests/types/tsconfig.json): the declarations must
// describe the package as a TypeScript user would use it.
import { AttnLensError, loadAttnLens, relaxedSimdSupported } from "attnlens";
import type { AttnLens, AttnLensErrorCode, Explanation, ForwardResult, SimdChoice, Tensor } from "attnlens";

async function main(): Promise<void> {
  const lens: AttnLens = await loadAttnLens();
  const choice: SimdChoice = relaxedSimdSupported() ? "relaxed" : "baseline";
  const module: "relaxed" | "baseline" | null = (await loadAttnLens({ simd: choice })).simd;
  const q: Tensor = { data: new Float32Array(8), shape: [2, 4] };
  const { output, weights } = lens.attention(q, q, q, {
    causal: true,
    causalAlign: "bottom-right",
    mask: { data: new Uint8Array(4), shape: [2, 2] },
    returnWeights: true,
  });
  const first: number = output.data[0];
  const maybe: Tensor | undefined = weights;
  lens.attention([[1, 2]], [[1, 2]], [[3]], { mask: [[true]], scale: 0.5 });

  const layer = lens.selfAttention({ modelDim: 8, numHeads: 2, seed: 1, init: "xavier" });
  const r: ForwardResult = layer.forward([[1, 2, 3, 4, 5, 6, 7, 8]], { causal: true, trace: true });
  const scale: number | undefined = r.trace?.scale;

  const ex: Explanation = lens.explain("The cat sat on the mat", { causal: false, positional: "none" });
  const start: number | undefined = ex.tokens[0].start;
  const explained: [number, number] = ex.pca.explained;

  try {
    lens.explain("");
  } catch (error) {
    if (error instanceof AttnLensError) {
      const code: AttnLensErrorCode = error.code;
      console.log(code, error.message);
    }
  }
  console.log(first, maybe, scale, start, explained, lens.version, lens.memory().usedBytes);
}

void main();
