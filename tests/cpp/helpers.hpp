// Small helpers shared by the test files.
#pragma once

#include <attnlens/attnlens.hpp>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace testing {

// Runs `f`, requires an attnlens::Error with `code` whose message contains every needle.
template <typename F>
void require_error(F&& f, attnlens::ErrorCode code, std::vector<std::string> needles = {}) {
  try {
    f();
  } catch (const attnlens::Error& e) {
    INFO("message: " << e.what());
    CHECK(std::string(attnlens::error_code_name(e.code())) == attnlens::error_code_name(code));
    for (const auto& needle : needles)
      CHECK_THAT(e.what(), Catch::Matchers::Contains(needle));
    return;
  }
  FAIL("expected attnlens::Error " << attnlens::error_code_name(code) << ", nothing was thrown");
}

inline attnlens::ConstTensorView view(const std::vector<float>& data, attnlens::Shape shape) {
  return attnlens::ConstTensorView{data.data(), std::move(shape)};
}

}  // namespace testing
