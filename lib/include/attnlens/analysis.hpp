// attnlens — analysis of attention results: PCA of embeddings, score variance, row entropy.
#pragma once

#include <attnlens/tensor.hpp>

#include <Eigen/Core>

namespace attnlens {

// A 2-D principal component picture of embeddings before and after attention.
struct Pca2D {
  RowMatrixXf original;       // [N, 2] the fitted embeddings, projected
  RowMatrixXf contextual;     // [N, 2] the contextual embeddings, projected with the same fit
  RowMatrixXf components;     // [2, E] unit principal directions, largest variance first
  Eigen::VectorXf mean;       // [E]    the mean subtracted before projecting
  Eigen::Vector2f explained;  // fraction of the original embeddings' variance on each axis
};

// Fits two principal components on `original` [N, E] (centred on its mean) and projects both
// `original` and `contextual` [N, E] onto them, so arrows from one to the other show how context
// moved each row. Sign convention: each component's entry of largest magnitude is positive, so
// the picture does not flip between runs or platforms. Components beyond the data's rank (N < 3
// or E < 2) are zero vectors with zero explained variance. Throws SHAPE_MISMATCH if the shapes
// differ, EMPTY_INPUT if N or E is 0, NON_FINITE for NaN or infinity.
Pca2D pca_2d(const Eigen::Ref<const RowMatrixXf>& original,
             const Eigen::Ref<const RowMatrixXf>& contextual);

// Population variance of all finite entries of a matrix; -inf (masked) entries are skipped, and
// with `mask` (an additive mask of the same size) so are the entries where it is not 0.
// Used to show why scores are scaled: Var(q·k) grows with d, Var(q·k / sqrt(d)) does not.
double finite_variance(const float* data, std::int64_t count, const float* mask = nullptr);

// Shannon entropy (natural log) of each row of weights [..., L, S] -> [..., L]. 0 for a row
// that attends one key, log(S) for a uniform row, 0 for an all-zero (fully masked) row.
Tensor row_entropy(const ConstTensorView& weights);

}  // namespace attnlens
