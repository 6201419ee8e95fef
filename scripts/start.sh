#!/usr/bin/env bash
# npm start: build everything, then serve the demo site on 127.0.0.1 and print its URL.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
exec node scripts/serve.mjs dist/site --port "${PORT:-5173}"
