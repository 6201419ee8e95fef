// Uses the installed library the way a C++ user would; exits non-zero on a wrong answer.
#include <attnlens/attnlens.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  const std::vector<float> q = {1, 0, 0, 1};
  const std::vector<float> v = {1, 2, 3, 4};
  attnlens::AttentionOptions options;
  options.causal = true;
  const auto r =
      attnlens::attention({q.data(), {2, 2}}, {q.data(), {2, 2}}, {v.data(), {2, 2}}, options);
  // The first causal query sees only key 0, so its output is v's first row.
  const bool ok = r.output.data[0] == 1.0f && r.output.data[1] == 2.0f;
  std::printf("attnlens %s from find_package: %s\n", attnlens::kVersion, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
