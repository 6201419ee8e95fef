#!/usr/bin/env bash
# npm run train: trains the attnlens model and writes models/attnlens/ (never part of npm test);
# npm run train -- --encoder trains the encoder and writes models/attnlens-encoder/.
#   1. bootstrap (Debian and npm packages), 2. the corpus (scripts/corpus.sh --wordnet:
#      build/corpus-wordnet/), 3. a native release build of the tools
#      (-march=native: the training speed needs it),
#   4. the causal model in two stages:
#      a. build/model-4096: the model attnlens shipped before WordNet joined the corpus
#         (4 096 tokens, build/corpus, 56 000 steps from scratch). It is restored from the
#         repository's history (commit b3973c1's models/attnlens/) when the clone has it, and
#         trained again otherwise on build/corpus (scripts/corpus.sh without --wordnet): the
#         same bits on the same machine and build, 5 h on 2 cores.
#      b. attnlens_train with its defaults, the committed model's settings: build/corpus-wordnet
#         and its 8 192-token vocabulary, 16 000 steps starting from build/model-4096's weights
#         (--init-from; its MODEL.md lists the settings and how long they took).
#    The encoder the same way: a. build/encoder-4096, the encoder shipped beside that model
#    (restored, or 5 000 steps from scratch on build/corpus), b. attnlens_train_encoder with its
#    defaults (3 000 steps from it on build/corpus-wordnet, the causal model's vocabulary).
# Arguments go to attnlens_train or attnlens_train_encoder (e.g. --fresh, --threads 1, --help).
# Each takes from half an hour to hours on a 2-core machine (their MODEL.md says how long); an
# interrupted run resumes from its state in build/ when started again.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
jobs=$(nproc 2>/dev/null || echo 2)

step "bootstrap"
bash scripts/bootstrap.sh

step "corpus"
bash scripts/corpus.sh --wordnet

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

# The first stage (above): the commit that shipped the models before WordNet joined the corpus,
# and how each was trained. Skipped when the arguments ask for help or name another --init-from.
stage1_commit=b3973c1edacad4451f2d8eac7f6903243e9a4531
if [[ $tool == attnlens_train ]]; then
  stage1=build/model-4096 shipped=models/attnlens
  # 56 000 steps from scratch on build/corpus (5 h on 2 cores).
  stage1_args=(--init-from none --corpus build/corpus --vocab 4096 --steps 56000 --lr 3e-3
    --min-lr 3e-4 --work build/train-4096 --sample build/heldout_sample-4096.txt)
else
  stage1=build/encoder-4096 shipped=models/attnlens-encoder
  # 5 000 steps from scratch on build/corpus, one thread (1 h 40 min).
  stage1_args=(--init-from none --corpus build/corpus --vocab 4096 --steps 5000 --threads 1
    --work build/train-encoder-4096)
fi
needs_stage1=1
[[ -f $stage1/complete ]] && needs_stage1=
for arg in "$@"; do
  [[ $arg == -h || $arg == --help || $arg == --init-from ]] && needs_stage1=
done
if [[ -n $needs_stage1 ]]; then
  # Made in a scratch folder and moved into place whole: an interrupted restore or training
  # leaves no half folder that a later run would take for the first stage.
  rm -rf "$stage1.tmp"
  mkdir -p "$stage1.tmp"
  if git cat-file -e "$stage1_commit:$shipped/model.safetensors" 2>/dev/null; then
    step "first stage: $shipped of ${stage1_commit:0:7}, restored into $stage1"
    for f in model.safetensors config.json vocab.json merges.txt eval.json MODEL.md; do
      git show "$stage1_commit:$shipped/$f" >"$stage1.tmp/$f"
    done
  else
    step "first stage: $stage1 trained from scratch (this clone lacks ${stage1_commit:0:7})"
    bash scripts/corpus.sh
    # The sample the causal model was evaluated on: the first two parts of today's (its README).
    head -c 4007 tests/fixtures/corpus/heldout_sample.txt >build/heldout_sample-4096.txt
    "build/tools-native/lib/tools/$tool" "${stage1_args[@]}" --out "$stage1.tmp"
  fi
  touch "$stage1.tmp/complete"
  rm -rf "$stage1"
  mv "$stage1.tmp" "$stage1"
fi

step "training"
"build/tools-native/lib/tools/$tool" "$@"
steps_summary
