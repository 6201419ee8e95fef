#!/usr/bin/env bash
# bash scripts/build-before.sh REF: builds the commit REF (a commit, branch or tag) in a git
# worktree, build/bench-before, for the benches' --before (scripts/bench.sh); prints the
# worktree's absolute path (its dist/ and dist/site are the package and the site of REF). A
# worktree already at REF and built is reused. node_modules is this checkout's.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
ref=${1:?usage: bash scripts/build-before.sh REF}
commit=$(git rev-parse --verify --quiet "$ref^{commit}") ||
  { echo "build-before: $ref is not a commit of this repository" >&2; exit 2; }
tree=$PWD/build/bench-before
if [[ ! -f $tree/dist/site/index.html || $(git -C "$tree" rev-parse HEAD 2>/dev/null) != "$commit" ]]; then
  echo "build-before: building $ref ($commit) in $tree" >&2
  git worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
  git worktree prune
  git worktree add --detach "$tree" "$commit" >/dev/null 2>&1
  ln -s "$PWD/node_modules" "$tree/node_modules"
  node22=$(node22_path)
  (cd "$tree" && NODE22=$node22 bash scripts/build.sh) >&2
fi
echo "$tree"
