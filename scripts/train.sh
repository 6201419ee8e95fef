#!/usr/bin/env bash
# npm run train: trains the attnlens model and writes models/attnlens/ (never part of npm test);
# npm run train -- --encoder trains the encoder and writes models/attnlens-encoder/.
#   1. bootstrap (Debian and npm packages), 2. the corpus (scripts/corpus.sh: build/corpus/),
#   3. a native release build of the tools (-march=native: the training speed needs it),
#   4. attnlens_train with its defaults: the retraining of 56 000 steps, resumed from the state
#      committed in models/attnlens/training-state/ (the committed model is the 14 000-step run of
#      the same settings: `npm run train -- --steps 14000 --fresh`; its MODEL.md lists them).
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

# The causal model's retraining (56 000 steps, about 5 hours on 2 cores) goes on from the state
# committed in models/attnlens/training-state/ (weights, AdamW's moments, the step and the curve;
# the trainer's fingerprint checks that the settings and the tokenized corpus are the same), unless
# a run of its own is under way in build/train/state. Once the retrained model is committed, the
# state goes.
if [[ $tool == attnlens_train && ! -f build/train/state/state.json && -f models/attnlens/training-state/state.json ]]; then
  mkdir -p build/train/state
  cp models/attnlens/training-state/* build/train/state/
  echo "resuming the retraining from models/attnlens/training-state/ (copied to build/train/state/)"
fi

step "training"
"build/tools-native/lib/tools/$tool" "$@"
steps_summary
