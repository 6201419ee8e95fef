#include <attnlens/status.hpp>

namespace attnlens {

const char* error_code_name(ErrorCode code) noexcept {
  switch (code) {
#define ATTNLENS_NAME_CASE(name, description) \
  case ErrorCode::name:                       \
    return #name;
    ATTNLENS_ERROR_CODES(ATTNLENS_NAME_CASE)
#undef ATTNLENS_NAME_CASE
  }
  return "UNKNOWN";
}

const char* error_code_description(ErrorCode code) noexcept {
  switch (code) {
#define ATTNLENS_DESCRIPTION_CASE(name, description) \
  case ErrorCode::name:                              \
    return description;
    ATTNLENS_ERROR_CODES(ATTNLENS_DESCRIPTION_CASE)
#undef ATTNLENS_DESCRIPTION_CASE
  }
  return "unknown error";
}

}  // namespace attnlens
