// Private: named tensors as the weight loaders of every family take them (from_tensors and
// from_safetensors): a name, a shape, how many values there are, and how to write them as float32
// into a buffer. A Tensor in memory is copied; a checkpoint's tensor is read from the file's bytes
// (converted from F16 or BF16 there), so that a loader can check every name and shape first and
// then read each tensor where it belongs, without a float32 copy of the whole file.
#pragma once

#include <attnlens/safetensors.hpp>
#include <attnlens/tensor.hpp>

#include "core/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnlens::detail {

struct TensorSource {
  const std::string* name;
  const Shape* shape;
  std::int64_t values;
  std::function<void(float*)> read;  // writes `values` floats
  // The reader rejects non-finite values itself (SafetensorsView::read_f32_into does).
  bool checks_finite = false;
};

// Error(BAD_FILE) when the shape's element count is not the count of values held.
inline void require_consistent(const TensorSource& t) {
  const std::int64_t n = shape_numel(*t.shape, t.name->c_str());
  if (n != t.values) {
    fail(ErrorCode::BAD_FILE, "tensor '", *t.name, "' has shape ", shape_to_string(*t.shape), " (",
         n, " elements) but holds ", t.values, " values");
  }
}

// Error(BAD_FILE) naming the tensor and the flat index of its first non-finite value among the
// `values` it wrote; `rule` ends the message. A source whose reader checks is not scanned again.
inline void require_finite(const TensorSource& t, const float* values, const char* rule) {
  if (t.checks_finite) return;
  for (std::int64_t k = 0; k < t.values; ++k) {
    if (!std::isfinite(values[k])) {
      fail(ErrorCode::BAD_FILE, "tensor '", *t.name, "' holds ", values[k], " at flat index ", k,
           " (shape ", shape_to_string(*t.shape), "); ", rule);
    }
  }
}

// The tensors of a list (which must outlive the sources).
inline std::vector<TensorSource> tensor_sources(const TensorList& tensors) {
  std::vector<TensorSource> out;
  out.reserve(tensors.size());
  for (const auto& [name, tensor] : tensors) {
    out.push_back({&name, &tensor.shape, tensor.numel(),
                   [&t = tensor](float* dst) { std::copy(t.data.begin(), t.data.end(), dst); }});
  }
  return out;
}

// The tensors of a file for which `keep(entry)` is true, read by SafetensorsView::read_f32_into
// (the view must outlive the sources).
template <typename Keep>
std::vector<TensorSource> tensor_sources(const SafetensorsView& file, Keep keep) {
  std::vector<TensorSource> out;
  out.reserve(file.tensors().size());
  for (const SafetensorsEntry& e : file.tensors()) {
    if (!keep(e)) continue;
    out.push_back({&e.name, &e.shape, e.numel,
                   [&file, &e](float* dst) { file.read_f32_into(e, dst); }, true});
  }
  return out;
}

}  // namespace attnlens::detail
