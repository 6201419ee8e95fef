# Shared by the scripts: step banners and the Emscripten environment (TOOLCHAIN.md).
step() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }

# em++ runs its JS optimiser with node, which finds Debian's acorn only through NODE_PATH.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
