// The Catch2 suite's entry point in WebAssembly builds made with clang >= 15.
//
// clang >= 15 names `int main(int, char**)` `__main_argc_argv` in WebAssembly objects (the
// tool-conventions ABI). Emscripten 3.1.6's JS runtime calls an export named `main`, and its
// prebuilt libc predates the rename and never maps one to the other: without this file the
// program would run nothing and exit 0. The asm label gives this function the symbol `main`
// without clang seeing a declaration named main (which it would rename again).
#if defined(__EMSCRIPTEN__) && __clang_major__ >= 15

extern "C" int __main_argc_argv(int argc, char** argv);
extern "C" int attnlens_wasm_main(int argc, char** argv) __asm__("main");

extern "C" int attnlens_wasm_main(int argc, char** argv) {
  return __main_argc_argv(argc, argv);
}

#endif
