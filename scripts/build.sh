#!/usr/bin/env bash
# Builds the two WebAssembly modules (and the Catch2 suite as wasm with each) and writes the npm
# package to dist/:
#   build/wasm          SIMD128                        -> dist/attnlens.wasm
#   build/wasm-relaxed  relaxed SIMD (f32x4 fused madd) -> dist/attnlens-relaxed.wasm
# Both come from the same toolchain and flags but -mrelaxed-simd, so they share one JS loader
# (dist/attnlens_core.js); the package picks the module at load time (wasm/api.js, makeLoader).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
wasm_toolchain

jobs=$(nproc 2>/dev/null || echo 2)
# The Catch2 suite of the relaxed build runs under Node 22 (Node 20 lacks relaxed SIMD unflagged).
node22=$(node22_path)
for variant in wasm:OFF:node wasm-relaxed:ON:"$node22"; do
  IFS=: read -r dir relaxed node <<<"$variant"
  # Inside the Emscripten toolchain's sysroot find_package cannot see Debian's Eigen and Catch2.
  emcmake cmake -S . -B "build/$dir" -DCMAKE_BUILD_TYPE=Release -DATTNLENS_WASM_RELAXED_SIMD="$relaxed" \
    -DATTNLENS_NODE="$(command -v "$node")" -DEigen3_DIR=/usr/share/eigen3/cmake -DCatch2_DIR=/usr/lib/cmake/Catch2 >/dev/null
  cmake --build "build/$dir" -j"$jobs"
done

# The modules must be what their names say: the baseline validates without relaxed SIMD, the
# relaxed one uses f32x4.relaxed_madd (LLVM only emits it through the builtin in kernels.cpp).
baseline=build/wasm/wasm/attnlens_core.wasm
relaxed=build/wasm-relaxed/wasm/attnlens_core.wasm
wasm-validate --enable-exceptions "$baseline" || { echo "build: $baseline is not plain SIMD128" >&2; exit 1; }
wasm-validate --enable-exceptions --enable-relaxed-simd "$relaxed"
madds=$(wasm-objdump -d "$relaxed" | grep -c 'f32x4.relaxed_madd' || true)
((madds > 0)) || { echo "build: $relaxed has no f32x4.relaxed_madd" >&2; exit 1; }
cmp -s build/wasm/wasm/attnlens_core.js build/wasm-relaxed/wasm/attnlens_core.js ||
  { echo "build: the two modules' JS loaders differ; they must be interchangeable" >&2; exit 1; }

# The npm package: the JS facade and entries, the Emscripten loader, the modules and the types.
rm -rf dist
mkdir -p dist
cp wasm/api.js wasm/attnlens.js wasm/attnlens.node.js wasm/attnlens.d.ts dist/
# The loader's fallback URL for the .wasm is never used (the package always passes the bytes);
# left as a literal new URL(), webpack would try to bundle a file that does not exist.
sed 's|new URL("attnlens_core.wasm",import.meta.url).toString()|"attnlens.wasm"|' \
  build/wasm/wasm/attnlens_core.js >dist/attnlens_core.js
grep -q 'new URL("attnlens_core.wasm"' dist/attnlens_core.js && { echo "build: loader patch failed" >&2; exit 1; }
cp "$baseline" dist/attnlens.wasm
cp "$relaxed" dist/attnlens-relaxed.wasm
echo "build: attnlens-relaxed.wasm has $madds f32x4.relaxed_madd instructions"

node scripts/size-report.mjs dist/attnlens.js dist/attnlens.node.js dist/api.js dist/attnlens_core.js dist/attnlens.wasm \
  dist/attnlens-relaxed.wasm dist/attnlens.d.ts

node scripts/build-web.mjs
# A page fetches one of the two modules: each pairing must fit the element's budget.
for module in attnlens.wasm attnlens-relaxed.wasm; do
  node scripts/size-report.mjs dist/element.js "dist/$module" --budget-gzip-kb 150 \
    --label "<attn-lens> element (JS + CSS inside the JS + $module, the module it fetches)"
done
