#include <attnlens/tensor.hpp>

#include "core/check.hpp"

#include <new>
#include <utility>

namespace attnlens {

std::string shape_to_string(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::int64_t shape_numel(const Shape& shape, const char* name) {
  constexpr std::int64_t kMaxExact = std::int64_t{1} << 53;
  std::int64_t count = 1;
  for (std::int64_t dim : shape) {
    if (dim < 0) {
      detail::fail(ErrorCode::BAD_ARGUMENT, name, " has a negative dimension in shape ",
                   shape_to_string(shape));
    }
    if (dim != 0 && count > kMaxExact / dim) {
      detail::fail(ErrorCode::TOO_LARGE, name, " has shape ", shape_to_string(shape),
                   ", whose element count overflows");
    }
    count *= dim;
  }
  return count;
}

Tensor::Tensor(Shape s) : shape(std::move(s)) {
  const std::int64_t n = shape_numel(shape);
  // On 32-bit targets (wasm32) a large count would wrap when cast to size_t.
  if (static_cast<std::uint64_t>(n) > data.max_size()) throw std::bad_alloc();
  data.resize(static_cast<std::size_t>(n));  // value-initialised: zeros
}

Tensor::Tensor(Shape s, std::vector<float> values) : data(std::move(values)), shape(std::move(s)) {
  if (static_cast<std::int64_t>(data.size()) != shape_numel(shape)) {
    detail::fail(ErrorCode::SHAPE_MISMATCH, "tensor data has ", data.size(), " values but shape ",
                 shape_to_string(shape), " needs ", shape_numel(shape));
  }
}

}  // namespace attnlens
