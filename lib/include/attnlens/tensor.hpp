// attnlens — tensors: shapes, read-only views and owning tensors.
//
// Storage is always row-major float32: the last dimension is contiguous. A view never owns its
// data; the caller keeps the memory alive for as long as the view is used.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnlens {

// Row-major dynamic float matrix, the layout every attnlens function uses.
using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// A tensor shape, outermost dimension first, e.g. {B, H, L, E}.
using Shape = std::vector<std::int64_t>;

// "[1, 8, 256, 64]"
std::string shape_to_string(const Shape& shape);

// Product of the dimensions (1 for a rank-0 shape). Throws Error(TOO_LARGE) if the product does
// not fit in 2^53 and Error(BAD_ARGUMENT) if a dimension is negative; `name` names the argument
// in the message.
std::int64_t shape_numel(const Shape& shape, const char* name = "tensor");

// A read-only view of row-major float32 data. `data` may be null only when the shape has zero
// elements.
struct ConstTensorView {
  const float* data = nullptr;
  Shape shape;
};

// A tensor that owns its data. `data.size()` always equals the product of `shape`.
struct Tensor {
  std::vector<float> data;
  Shape shape;

  Tensor() = default;
  // Zero-filled tensor of the given shape.
  explicit Tensor(Shape s);
  Tensor(Shape s, std::vector<float> values);

  // True when the tensor holds no shape at all (as for results that were not requested).
  bool empty() const noexcept { return shape.empty(); }
  std::int64_t numel() const noexcept { return static_cast<std::int64_t>(data.size()); }
  ConstTensorView view() const { return ConstTensorView{data.data(), shape}; }
};

// Which kind of mask a MaskView holds.
enum class MaskKind {
  None,      // no mask
  Boolean,   // 1 (or any non-zero byte) = may attend, 0 = masked; as PyTorch's SDPA
  Additive,  // added to the scaled scores; -infinity masks a key, NaN and +infinity are errors
};

// A read-only view of an attention mask shaped [L, S] or broadcastable to the score tensor
// ([B, H, L, S] for rank-4 inputs, [B, L, S] for rank-3): leading dimensions are 1 or equal to
// the matching dimension of q.
struct MaskView {
  MaskKind kind = MaskKind::None;
  const std::uint8_t* bool_data = nullptr;  // used when kind == Boolean
  const float* float_data = nullptr;        // used when kind == Additive
  Shape shape;

  static MaskView none() { return MaskView{}; }
  static MaskView boolean(const std::uint8_t* data, Shape shape) {
    return MaskView{MaskKind::Boolean, data, nullptr, std::move(shape)};
  }
  static MaskView additive(const float* data, Shape shape) {
    return MaskView{MaskKind::Additive, nullptr, data, std::move(shape)};
  }
};

}  // namespace attnlens
