// Private: the compute threads the products split their columns over. One thread (none to
// help) unless set_compute_threads() asks for more: the threaded WebAssembly model module does
// (wasm/model_bindings.cpp, where the page is cross-origin isolated), and the tests natively.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>

namespace attnlens::detail {

// Asks for `threads` compute threads in all (the caller and threads - 1 helpers, kept waiting
// between calls); 1 stops the helpers. Returns the number now in use. Where threads cannot be
// made (WebAssembly without threads) it stays 1.
int set_compute_threads(int threads);
int compute_threads();

// Runs part(p, parts) for p = 0 .. parts - 1, each once, and returns when all have; parts is
// at most `most` and the compute threads. The calling thread runs the parts no helper has taken
// (a helper slow to wake, or in WebAssembly a Web Worker still loading, delays nothing). A call
// made while another is running (from another thread or from inside a part) runs all of its parts
// on its own thread. An exception from a part is rethrown here, after every part has ended.
void parallel_parts(std::int64_t most, const std::function<void(int part, int parts)>& part);

// [begin, end) of `part` when n items are cut into `parts` runs, each boundary a multiple of
// `unit` (the last run ends at n).
inline void part_range(std::int64_t n, std::int64_t unit, int part, int parts, std::int64_t& begin,
                       std::int64_t& end) {
  const std::int64_t units = (n + unit - 1) / unit;
  begin = std::min(n, units * part / parts * unit);
  end = std::min(n, units * (part + 1) / parts * unit);
}

}  // namespace attnlens::detail
