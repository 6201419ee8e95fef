#!/usr/bin/env bash
# npm run train: trains the attnlens model and writes models/attnlens/ (never part of npm test);
# npm run train -- --encoder trains the encoder and writes models/attnlens-encoder/.
#   1. bootstrap (Debian and npm packages), 2. the corpus (scripts/corpus.sh: build/corpus/),
#   3. a native release build of the tools (-march=native: the training speed needs it),
#   4. attnlens_train with its defaults, the committed model's settings (56 000 steps; its
#      MODEL.md lists them and how long they took).
# Arguments go to attnlens_train or attnlens_train_encoder (e.g. --fresh, --threads 1, --help).
# Each takes hours on a 2-core machine (their MODEL.md says how long); an interrupted run resumes
# from build/train/state (build/train-encoder/state) when started again.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
jobs=$(nproc 2>/dev/null || echo 2)

step "bootstrap"
bash scripts/bootstrap.sh

step "corpus"
bash scripts/corpus.sh

# --encoder (first): the masked-LM encoder (models/attnlens-encoder/) instead of the causal model.
tool=attnlens_train
if [[ ${1:-} == --encoder ]]; then
  tool=attnlens_train_encoder
  shift
fi

step "$tool (native release build, -march=native)"
cmake -S . -B build/tools-native -DCMAKE_BUILD_TYPE=Release -DATTNLENS_NATIVE_ARCH=ON \
  -DATTNLENS_WERROR=ON -DATTNLENS_BUILD_TESTS=OFF -DATTNLENS_BUILD_EXAMPLES=OFF \
  -DATTNLENS_BUILD_TOOLS=ON >/dev/null
cmake --build build/tools-native -j"$jobs" --target "$tool"

step "training"
"build/tools-native/lib/tools/$tool" "$@"
steps_summary
