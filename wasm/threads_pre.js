// The threaded model module's helper threads (wasm/CMakeLists.txt, PTHREAD_POOL_SIZE): the
// cores less the calling thread, at least one and at most three.
var attnlensHelpers = Math.min(3, Math.max(1, ((typeof navigator !== "undefined" && navigator.hardwareConcurrency) || 2) - 1));
