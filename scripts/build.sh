#!/usr/bin/env bash
# Builds the WebAssembly modules (and the Catch2 suite as wasm with each SIMD variant) and writes
# the npm package to dist/:
#   build/wasm          SIMD128                        -> dist/attnlens.wasm, attnlens-model.wasm
#   build/wasm-relaxed  relaxed SIMD (f32x4 fused madd) -> dist/attnlens-relaxed.wasm,
#                                                          attnlens-model-relaxed.wasm
# attnlens*.wasm is what every figure fetches; attnlens-model*.wasm (GPT-2, BPE, checkpoints) is
# fetched only by loadModel / createModel / loadTokenizer (wasm/CMakeLists.txt).
# Both variants come from the same toolchain and flags but -mrelaxed-simd, so each module kind
# shares one JS loader (dist/attnlens_core.js, dist/attnlens_model_core.js); the package picks
# the variant at load time (wasm/api.js, makeLoader).
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

# The threaded model module (relaxed SIMD and threads; the model worker of a cross-origin-isolated
# page loads it: wasm/api.js, threadsUsable): the library again with -pthread, the model module only.
emcmake cmake -S . -B build/wasm-threads -DCMAKE_BUILD_TYPE=Release -DATTNLENS_WASM_RELAXED_SIMD=ON \
  -DATTNLENS_WASM_THREADS=ON -DATTNLENS_NODE="$(command -v "$node22")" -DEigen3_DIR=/usr/share/eigen3/cmake \
  -DCatch2_DIR=/usr/lib/cmake/Catch2 >/dev/null
cmake --build build/wasm-threads -j"$jobs" --target attnlens_model

# The modules must be what their names say: the baselines validate without relaxed SIMD, the
# relaxed ones use f32x4.relaxed_madd (LLVM only emits it through the builtin in kernels.cpp).
for module in attnlens_core attnlens_model; do
  baseline=build/wasm/wasm/$module.wasm
  relaxed=build/wasm-relaxed/wasm/$module.wasm
  wasm-validate --enable-exceptions "$baseline" || { echo "build: $baseline is not plain SIMD128" >&2; exit 1; }
  wasm-validate --enable-exceptions --enable-relaxed-simd "$relaxed"
  madds=$(wasm-objdump -d "$relaxed" | grep -c 'f32x4.relaxed_madd' || true)
  ((madds > 0)) || { echo "build: $relaxed has no f32x4.relaxed_madd" >&2; exit 1; }
  echo "build: $relaxed has $madds f32x4.relaxed_madd instructions"
  cmp -s "build/wasm/wasm/$module.js" "build/wasm-relaxed/wasm/$module.js" ||
    { echo "build: the two $module loaders differ; they must be interchangeable" >&2; exit 1; }
done

# The npm package: the JS facade and entries, the Emscripten loaders, the modules and the types.
rm -rf dist
mkdir -p dist
cp wasm/api.js wasm/boundary.js wasm/flow.js wasm/model.js wasm/model-input.js wasm/generate.js wasm/attnlens.js wasm/attnlens.node.js wasm/attnlens.d.ts \
  wasm/model.d.ts dist/
# The loaders' fallback URL for the .wasm is never used (the package always passes the bytes);
# left as a literal new URL(), webpack would try to bundle a file that does not exist.
for module in attnlens_core:attnlens attnlens_model:attnlens-model; do
  IFS=: read -r target file <<<"$module"
  sed "s|new URL(\"$target.wasm\",import.meta.url).toString()|\"$file.wasm\"|" \
    "build/wasm/wasm/$target.js" >"dist/${target/attnlens_model/attnlens_model_core}.js"
  grep -q "new URL(\"$target.wasm\"" "dist/${target/attnlens_model/attnlens_model_core}.js" &&
    { echo "build: loader patch failed ($target)" >&2; exit 1; }
  cp "build/wasm/wasm/$target.wasm" "dist/$file.wasm"
  cp "build/wasm-relaxed/wasm/$target.wasm" "dist/$file-relaxed.wasm"
done

# The threaded model module, beside them; never bundled (its helpers import its JS by URL), so
# its own URLs for the .wasm and the worker script (which wasm/api.js always gives it) go too.
threads=build/wasm-threads/wasm/attnlens_model
sed -e 's|new URL("attnlens_model.wasm",import.meta.url).toString()|"attnlens-model-threads.wasm"|' \
  -e 's|new URL("attnlens_model.worker.js",import.meta.url)|"attnlens_model_threads.worker.js"|g' \
  "$threads.js" >dist/attnlens_model_threads.js
grep -q 'new URL("attnlens_model' dist/attnlens_model_threads.js &&
  { echo "build: loader patch failed (attnlens_model_threads)" >&2; exit 1; }
sed 's|import("./attnlens_model.js")|import("./attnlens_model_threads.js")|' "$threads.worker.js" >dist/attnlens_model_threads.worker.js
cp "$threads.wasm" dist/attnlens-model-threads.wasm

node scripts/size-report.mjs dist/attnlens.js dist/attnlens.node.js dist/api.js dist/boundary.js dist/flow.js dist/attnlens_core.js dist/attnlens.wasm \
  dist/attnlens-relaxed.wasm dist/attnlens.d.ts dist/model.d.ts
node scripts/size-report.mjs --label "model module (fetched by loadModel / createModel / loadTokenizer)" \
  dist/model.js dist/model-input.js dist/generate.js dist/attnlens_model_core.js dist/attnlens-model.wasm dist/attnlens-model-relaxed.wasm \
  dist/attnlens_model_threads.js dist/attnlens_model_threads.worker.js dist/attnlens-model-threads.wasm

node scripts/build-web.mjs
# A page fetches one of the two modules: each pairing must fit the element's budget.
for module in attnlens.wasm attnlens-relaxed.wasm; do
  node scripts/size-report.mjs dist/element.js "dist/$module" --budget-gzip-kb 150 \
    --label "<attn-lens> element (JS + CSS inside the JS + $module, the module it fetches)"
done
