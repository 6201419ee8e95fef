#!/usr/bin/env bash
# npm run bench: builds the native benchmarks (portable and -march=native) and the wasm package,
# installs the peers (bench/package.json), then prints the comparison tables: attention in Node
# (bench/run.mjs) and in Chromium (bench/browser.mjs), the model against PyTorch (bench/training.mjs),
# explain() at the page's sizes (bench/explain.mjs), the lines view's pair finder
# (bench/line-pairs.mjs), an edit of the demo page to its painted frame (bench/painted.mjs), what
# a line costs the canvas (bench/line-cost.mjs), keystrokes in the model worker
# (bench/worker-typing.mjs), the page writing with Continue (bench/writing.mjs), a
# keystroke on real-size models with and without the prefix cache (bench/typing.mjs), what value
# weighting, sink rates, rollout and ablation cost beside the forward (bench/beyond.mjs), and the training page in Chromium until its
# induction head forms (bench/train-browser.mjs).
#
#   npm run bench -- [--quick] [--before=REF]
# --before=REF (a commit, branch or tag) builds REF (scripts/build-before.sh) and times it beside
# this build, row by row, in the benches that compare two builds: the model against PyTorch,
# typing, explain(), the page's painted frame and the model worker's keystrokes.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
jobs=$(nproc 2>/dev/null || echo 2)

args=()
before_ref=
for arg in "$@"; do
  case $arg in
    --before=*) before_ref=${arg#--before=} ;;
    *) args+=("$arg") ;;
  esac
done
set -- "${args[@]+"${args[@]}"}"
before_dist=()
before_site=()
if [[ -n $before_ref ]]; then
  step "the build before: $before_ref"
  tree=$(bash scripts/build-before.sh "$before_ref")
  before_dist=("--before=$tree/dist")
  before_site=("--before=$tree/dist/site")
fi

step "native benchmarks: portable and -march=native builds"
for variant in bench:OFF bench-native:ON; do
  dir=build/${variant%%:*}
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DATTNLENS_BUILD_BENCH=ON -DATTNLENS_BUILD_TESTS=OFF \
    -DATTNLENS_BUILD_EXAMPLES=OFF -DATTNLENS_NATIVE_ARCH="${variant##*:}" >/dev/null
  cmake --build "$dir" -j"$jobs"
done

if [[ ! -f dist/attnlens.wasm ]]; then
  step "wasm package"
  bash scripts/build.sh
else
  # The Chromium steps serve dist/site: rebuild it from web/, which may be newer than the package.
  step "the demo site"
  node scripts/build-web.mjs
fi

step "benchmark peers (npm ci in bench/)"
if [[ ! -f bench/node_modules/.package-lock.json || bench/package-lock.json -nt bench/node_modules/.package-lock.json ]]; then
  (cd bench && npm ci --no-audit --no-fund --loglevel=error)
fi

step "attention, side by side"
node bench/run.mjs "$@"

step "attention in Chromium"
node bench/browser.mjs "$@"

step "the GPT-2 model: training and GPT-2 small's forward, against PyTorch"
node bench/training.mjs "$@" "${before_dist[@]+"${before_dist[@]}"}"

step "typing on real-size models: GPT-2 small with and without the prefix cache, BERT base's [MASK] row (Node 20 and Node 22)"
node bench/typing.mjs "$@" "${before_dist[@]+"${before_dist[@]}"}"
"$(node22_path)" bench/typing.mjs "$@" "${before_dist[@]+"${before_dist[@]}"}"

step "explain() at the page's sizes, in Node 22 (the relaxed-SIMD module Chromium loads)"
"$(node22_path)" bench/explain.mjs "$@" "${before_dist[@]+"${before_dist[@]}"}"
step "the lines view's pair finder at 512 tokens, before and after (Node 22)"
"$(node22_path)" bench/line-pairs.mjs

step "beyond the weights: value-weighted attention, sink rates, rollout and ablation beside the forward (Node 22)"
"$(node22_path)" bench/beyond.mjs "$@"

step "the block's families at real shapes: SmolLM2-135M beside Gemma-3-270M's windows (Node 22)"
"$(node22_path)" bench/families.mjs "$@"

step "the demo page in Chromium: an edit to the painted frame, lines and heatmap at 64 and 512 tokens"
node bench/painted.mjs "$@" "${before_site[@]+"${before_site[@]}"}"
step "what a line costs the canvas in Chromium (web/paint.js's thick lines)"
node bench/line-cost.mjs
step "keystrokes on GPT-2 small's shapes in the model worker: appends, and edits at the start while predictions rank"
node bench/worker-typing.mjs "${before_site[@]+"${before_site[@]}"}"
step "writing in the page (Continue): tokens per second for the shipped model, GPT-2 small's shapes and SmolLM2-135M's layers"
node bench/writing.mjs "${before_site[@]+"${before_site[@]}"}"

step "the training page in Chromium: time until the induction head forms (default settings)"
node bench/train-browser.mjs
