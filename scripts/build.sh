#!/usr/bin/env bash
# Builds the WebAssembly module (and the Catch2 suite as wasm) and writes the npm package to dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
wasm_toolchain

jobs=$(nproc 2>/dev/null || echo 2)
# Inside the Emscripten toolchain's sysroot find_package cannot see Debian's Eigen and Catch2.
emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release \
  -DEigen3_DIR=/usr/share/eigen3/cmake -DCatch2_DIR=/usr/lib/cmake/Catch2 >/dev/null
cmake --build build/wasm -j"$jobs"

# The npm package: the JS facade and entries, the Emscripten loader, the module and the types.
rm -rf dist
mkdir -p dist
cp wasm/api.js wasm/attnlens.js wasm/attnlens.node.js wasm/attnlens.d.ts dist/
# The loader's fallback URL for the .wasm is never used (the package always passes the bytes);
# left as a literal new URL(), webpack would try to bundle a file that does not exist.
sed 's|new URL("attnlens_core.wasm",import.meta.url).toString()|"attnlens.wasm"|' \
  build/wasm/wasm/attnlens_core.js >dist/attnlens_core.js
grep -q 'new URL("attnlens_core.wasm"' dist/attnlens_core.js && { echo "build: loader patch failed" >&2; exit 1; }
cp build/wasm/wasm/attnlens_core.wasm dist/attnlens.wasm

node scripts/size-report.mjs dist/attnlens.js dist/attnlens.node.js dist/api.js dist/attnlens_core.js dist/attnlens.wasm dist/attnlens.d.ts

node scripts/build-web.mjs
node scripts/size-report.mjs dist/element.js dist/attnlens.wasm --budget-gzip-kb 150 --label "<attn-lens> element (JS + CSS inside the JS + wasm)"
