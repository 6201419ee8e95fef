#!/usr/bin/env bash
# npm run train: trains the attnlens model and writes models/attnlens/ (never part of npm test).
#   1. bootstrap (Debian and npm packages), 2. the corpus (scripts/corpus.sh: build/corpus/),
#   3. a native release build of the tools (-march=native: the training speed needs it),
#   4. attnlens_train with its defaults (the committed model's settings; MODEL.md lists them).
# Arguments go to attnlens_train (e.g. --fresh, --threads 1, --help). Takes up to about an hour
# on a 2-core machine; an interrupted run resumes from build/train/state when started again.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
jobs=$(nproc 2>/dev/null || echo 2)

step "bootstrap"
bash scripts/bootstrap.sh

step "corpus"
bash scripts/corpus.sh

step "attnlens_train (native release build, -march=native)"
cmake -S . -B build/tools-native -DCMAKE_BUILD_TYPE=Release -DATTNLENS_NATIVE_ARCH=ON \
  -DATTNLENS_WERROR=ON -DATTNLENS_BUILD_TESTS=OFF -DATTNLENS_BUILD_EXAMPLES=OFF \
  -DATTNLENS_BUILD_TOOLS=ON >/dev/null
cmake --build build/tools-native -j"$jobs" --target attnlens_train

step "training"
build/tools-native/lib/tools/attnlens_train "$@"
steps_summary
