#!/usr/bin/env bash
# Builds the WebAssembly module (and the Catch2 suite as wasm) and writes the npm package to dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

jobs=$(nproc 2>/dev/null || echo 2)
# Inside the Emscripten toolchain's sysroot find_package cannot see Debian's Eigen and Catch2.
emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release \
  -DEigen3_DIR=/usr/share/eigen3/cmake -DCatch2_DIR=/usr/lib/cmake/Catch2 >/dev/null
cmake --build build/wasm -j"$jobs"

# The npm package: the JS facade and entries, the Emscripten loader, the module and the types.
rm -rf dist
mkdir -p dist
cp wasm/api.js wasm/attnlens.js wasm/attnlens.node.js wasm/attnlens.d.ts dist/
cp build/wasm/wasm/attnlens_core.js dist/attnlens_core.js
cp build/wasm/wasm/attnlens_core.wasm dist/attnlens.wasm

node scripts/size-report.mjs dist/attnlens.js dist/attnlens.node.js dist/api.js dist/attnlens_core.js dist/attnlens.wasm dist/attnlens.d.ts
