#!/usr/bin/env bash
# Everything `npm test` runs, in order. Expects scripts/bootstrap.sh to have run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

jobs=$(nproc 2>/dev/null || echo 2)

step "native build (warnings are errors)"
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release -DATTNLENS_WERROR=ON >/dev/null
cmake --build build/native -j"$jobs"

step "C++ formatting (clang-format --dry-run --Werror)"
git ls-files '*.cpp' '*.hpp' | xargs clang-format --dry-run --Werror

step "JS, HTML and CSS formatting (prettier --check)"
node_modules/.bin/prettier --check "web/**/*.{js,css,html}" "wasm/**/*.{js,ts}" "tests/**/*.{mjs,ts,json}" "scripts/**/*.mjs" "bench/**/*.mjs"

step "Unicode tables: the committed C++ tables are what this Node generates (gen-unicode-tables --check)"
node scripts/gen-unicode-tables.mjs --check

step "native Catch2 suite (ctest)"
ctest --test-dir build/native -j"$jobs" --output-on-failure

step "native -march=native build (the AVX / AVX-512 kernels) and its Catch2 suite"
cmake -S . -B build/native-arch -DCMAKE_BUILD_TYPE=Release -DATTNLENS_NATIVE_ARCH=ON -DATTNLENS_WERROR=ON \
  -DATTNLENS_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build/native-arch -j"$jobs" --target attnlens_tests
ctest --test-dir build/native-arch -j"$jobs" --output-on-failure

step "install, then find_package(attnlens) from a downstream project"
rm -rf build/install build/consumer
cmake --install build/native --prefix build/install >/dev/null
cmake -S tests/consumer -B build/consumer -DCMAKE_PREFIX_PATH="$PWD/build/install" >/dev/null
cmake --build build/consumer >/dev/null
build/consumer/consumer

step "Catch2 suite under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=Debug -DATTNLENS_SANITIZE=ON -DATTNLENS_WERROR=ON \
  -DATTNLENS_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build/asan -j"$jobs"
# The OUT_OF_MEMORY case asks for 4 TiB on purpose; ASan's operator new ends the process on a
# failed allocation by design instead of throwing std::bad_alloc, so that one case runs in the
# plain native and the wasm suites only.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan -j"$jobs" --output-on-failure -E "^OUT_OF_MEMORY"

step "libFuzzer targets (tests/fuzz): regressions, then 20 s each with a fixed seed"
bash scripts/fuzz.sh 20

step "WebAssembly build: both modules (SIMD128, relaxed SIMD) and the Catch2 suite with each"
bash scripts/build.sh

# A wasm suite whose main() never runs (clang >= 15 with Emscripten 3.1.6: tests/cpp/wasm_main.cpp)
# discovers no tests and would pass as an empty ctest run: require the native count, and tests.
# Tests tagged [corpus] (the corpus readers) and [model] (the shipped model) use native-only
# tool libraries and are not compiled to wasm.
# Catch2 v2 exits with the number of tests it lists, so that status is not a failure here.
native_tests=$({ build/native/tests/cpp/attnlens_tests --list-test-names-only "~[corpus]~[model]" || true; } | grep -c .)
node22=$(node22_path)
for suite in "build/wasm:SIMD128 module, Node $(node --version)" "build/wasm-relaxed:relaxed-SIMD module, Node $("$node22" --version)"; do
  dir=${suite%%:*}
  step "Catch2 suite compiled to WebAssembly: ${suite#*:}"
  wasm_tests=$(ctest --test-dir "$dir" -N | sed -n 's/^Total Tests: //p')
  if [[ $wasm_tests != "$native_tests" ]]; then
    echo "$dir discovered ${wasm_tests:-no} tests, the native suite $native_tests outside [corpus] and [model]: the wasm suite did not run" >&2
    exit 1
  fi
  ctest --test-dir "$dir" -j"$jobs" --output-on-failure --no-tests=error
done

# node --test gets files, not a directory: Node 21+ no longer accepts directories.
build/native/tests/cpp/attnlens_dump_fixtures build/native/fixtures.json
mkdir -p build/native/model-fixtures
build/native/tests/cpp/attnlens_dump_model_fixtures build/native/model-fixtures
step "JS API tests, Node $(node --version) (loads the SIMD128 module)"
node --test tests/js/*.test.mjs
step "JS API tests, Node $("$node22" --version) (loads the relaxed-SIMD module)"
"$node22" --test tests/js/*.test.mjs

step "Type declarations (tsc --noEmit --strict)"
node_modules/.bin/tsc -p tests/types

step "Packaging smoke test, Node $(node --version) (npm pack, install, Node ESM, Vite + Chromium: both modules)"
node --test tests/pack/*.test.mjs
step "Packaging smoke test, Node $("$node22" --version)"
"$node22" --test tests/pack/*.test.mjs

step "Browser end-to-end tests (demo page and blog example in Chromium)"
node --test tests/e2e/*.test.mjs

steps_summary
echo
echo "attnlens: all test stages passed"
