#!/usr/bin/env bash
# npm run eval: evaluates the committed models in a few minutes. models/attnlens/: held-out loss
# next to unigram and bigram baselines fitted on the training split, and every head's
# previous-token and induction scores; models/attnlens-encoder/: held-out masked-token loss next
# to the unigram baseline, and every head's label (the numbers of its eval.json and MODEL.md).
# Needs the corpus (scripts/corpus.sh prepares it once). Arguments go to attnlens_eval (e.g.
# --model DIR, --heldout-windows N, --help).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
jobs=$(nproc 2>/dev/null || echo 2)

step "bootstrap"
bash scripts/bootstrap.sh

step "corpus"
bash scripts/corpus.sh --wordnet

step "attnlens_eval and attnlens_train_encoder (native release build, -march=native)"
cmake -S . -B build/tools-native -DCMAKE_BUILD_TYPE=Release -DATTNLENS_NATIVE_ARCH=ON \
  -DATTNLENS_WERROR=ON -DATTNLENS_BUILD_TESTS=OFF -DATTNLENS_BUILD_EXAMPLES=OFF \
  -DATTNLENS_BUILD_TOOLS=ON >/dev/null
cmake --build build/tools-native -j"$jobs" --target attnlens_eval attnlens_train_encoder

step "evaluation: the causal model (models/attnlens)"
build/tools-native/lib/tools/attnlens_eval "$@"

step "evaluation: the encoder (models/attnlens-encoder)"
build/tools-native/lib/tools/attnlens_train_encoder --evaluate --out models/attnlens-encoder
steps_summary
