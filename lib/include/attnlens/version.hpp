// attnlens — library version. Kept equal to package.json's "version" by a test.
#pragma once

namespace attnlens {

inline constexpr int kVersionMajor = 0;
inline constexpr int kVersionMinor = 1;
inline constexpr int kVersionPatch = 0;
inline constexpr const char* kVersion = "0.1.0";

}  // namespace attnlens
