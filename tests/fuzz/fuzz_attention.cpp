// attention() against attention_reference(), on inputs decoded from the fuzzer's bytes: ranks 2
// to 4, grouped-query heads, small dimensions (sometimes 0 or inconsistent), causal masks with
// either alignment, boolean and additive masks at several broadcast shapes, scales, size limits,
// streaming, and values that are sometimes NaN or infinite.
//
// Both must throw the same error code, or both must return results of the same shape that agree
// within the bound derived in `row_bound`, with every masked weight exactly 0 and every weight
// row summing to 1 (or all 0 when the row sees no key). Values stay in a range where no score
// overflows float32 (|q|, |k| <= 512, E <= 16, |scale| <= 1000: |scores| < 5e9), where the bound
// holds.
#include "fuzz.hpp"

#include <attnlens/attention.hpp>

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace {

using attnlens::Shape;

constexpr double kU = 0x1p-24;  // unit roundoff of float32
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

struct Case {
  int rank = 2;
  std::int64_t B = 1, H = 1, Hkv = 1, L = 0, S = 0, E = 0, Ev = 0;
  bool perturbed = false;  // shapes made inconsistent on purpose
  Shape qs, ks, vs;
  std::vector<float> q, k, v;
  attnlens::MaskKind mask_kind = attnlens::MaskKind::None;
  Shape mask_shape;
  std::vector<std::uint8_t> bool_mask;
  std::vector<float> add_mask;
  attnlens::AttentionOptions options;
};

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (const std::int64_t d : s)
    n *= d;
  return n;
}

// Values (int8 / 16) * 2^g: multiples of 2^(g-4) in [-8 * 2^g, 8 * 2^g], g in [-6, 6].
std::vector<float> decode_values(FuzzedDataProvider& in, std::int64_t n) {
  const float step = std::ldexp(1.0f, in.ConsumeIntegralInRange<int>(-6, 6) - 4);
  std::vector<float> values(static_cast<std::size_t>(n));
  for (float& x : values)
    x = static_cast<float>(in.ConsumeIntegral<std::int8_t>()) * step;
  return values;
}

// Sometimes one entry becomes NaN or an infinity (both implementations must say NON_FINITE).
void poison(FuzzedDataProvider& in, std::vector<float>& values, bool allow_minus_inf) {
  const int kind = in.ConsumeIntegralInRange(0, 15);
  const std::uint16_t at = in.ConsumeIntegral<std::uint16_t>();
  if (values.empty() || kind > 3 || kind == 0) return;
  if (kind == 3 && !allow_minus_inf) return;
  values[at % values.size()] = kind == 1 ? kNaN : kind == 2 ? kInf : -kInf;
}

Case decode(FuzzedDataProvider& in) {
  Case c;
  c.rank = in.ConsumeIntegralInRange<int>(2, 4);
  if (c.rank >= 3) c.B = in.ConsumeIntegralInRange<int>(1, 3);
  if (c.rank == 4) {
    c.H = in.ConsumeIntegralInRange<int>(1, 4);
    c.Hkv = in.ConsumeIntegralInRange<int>(1, 4);  // not always a divisor of H: then SHAPE_MISMATCH
    c.perturbed = c.H % c.Hkv != 0;
  }
  c.L = in.ConsumeIntegralInRange<int>(0, 23);
  c.S = in.ConsumeIntegralInRange<int>(0, 23);
  c.E = in.ConsumeIntegralInRange<int>(0, 16);
  c.Ev = in.ConsumeIntegralInRange<int>(0, 16);
  auto lead = [&](std::int64_t heads) {
    if (c.rank == 2) return Shape{};
    if (c.rank == 3) return Shape{c.B};
    return Shape{c.B, heads};
  };
  auto with = [](Shape s, std::int64_t a, std::int64_t b) {
    s.push_back(a);
    s.push_back(b);
    return s;
  };
  c.qs = with(lead(c.H), c.L, c.E);
  c.ks = with(lead(c.Hkv), c.S, c.E);
  c.vs = with(lead(c.Hkv), c.S, c.Ev);
  // Up to one case in four gets inconsistent shapes: k's E, v's S, k's rank or v's batch.
  const int perturb = in.ConsumeIntegralInRange(0, 15);
  if (perturb == 1) c.ks.back() += 1;
  if (perturb == 2) c.vs[c.vs.size() - 2] += 1;
  if (perturb == 3 && c.rank > 2) c.ks.erase(c.ks.begin());
  if (perturb == 4 && c.rank > 2) c.vs.front() += 1;
  c.perturbed =
      c.perturbed || perturb == 1 || perturb == 2 || (perturb >= 3 && perturb <= 4 && c.rank > 2);
  c.q = decode_values(in, numel(c.qs));
  c.k = decode_values(in, numel(c.ks));
  c.v = decode_values(in, numel(c.vs));
  poison(in, in.ConsumeBool() ? c.q : in.ConsumeBool() ? c.k : c.v, true);

  attnlens::AttentionOptions& o = c.options;
  o.causal = in.ConsumeBool();
  o.causal_align =
      in.ConsumeBool() ? attnlens::CausalAlign::BottomRight : attnlens::CausalAlign::TopLeft;
  o.streaming = in.ConsumeIntegralInRange(0, 3) == 3;
  o.return_weights = in.ConsumeBool();
  const float scales[] = {1.0f, 0.5f, -1.0f, 0.0f, 3.0f, 1000.0f, -0.01f, kNaN, kInf, -kInf};
  const int s = in.ConsumeIntegralInRange(0, 15);
  if (s < 10) o.scale = scales[s];
  if (in.ConsumeIntegralInRange(0, 7) == 7) o.max_elements = 4 * in.ConsumeIntegralInRange(1, 255);

  const int mask = in.ConsumeIntegralInRange(0, 3);
  if (mask >= 2) {
    Shape target = c.rank == 2 ? Shape{} : c.rank == 3 ? Shape{c.B} : Shape{c.B, c.H};
    target.push_back(c.L);
    target.push_back(c.S);
    // [L, S] (half the cases), the full score shape, its leading dimensions 1, or [L + 1, S],
    // which never broadcasts.
    const int layout = in.ConsumeIntegralInRange(0, 7);
    c.mask_shape = layout < 4 ? Shape{c.L, c.S} : target;
    if (layout == 6) std::fill(c.mask_shape.begin(), c.mask_shape.end() - 2, 1);
    if (layout == 7) c.mask_shape = {c.L + 1, c.S};
    c.perturbed = c.perturbed || layout == 7;
    const std::int64_t n = numel(c.mask_shape);
    if (mask == 2) {
      c.mask_kind = attnlens::MaskKind::Boolean;
      c.bool_mask.resize(static_cast<std::size_t>(n));
      for (std::uint8_t& b : c.bool_mask)
        b = in.ConsumeIntegralInRange(0, 3) != 0 ? 1 : 0;
    } else {
      c.mask_kind = attnlens::MaskKind::Additive;
      const float table[] = {0, 0, 0, 0, -kInf, -1, 1, -3.5f, 2.25f, -1e4f, 1e4f, -100};
      c.add_mask.resize(static_cast<std::size_t>(n));
      for (float& m : c.add_mask)
        m = in.PickValueInArray(table);
      poison(in, c.add_mask, false);
    }
  }
  if (c.mask_kind == attnlens::MaskKind::Boolean) {
    o.mask = attnlens::MaskView::boolean(c.bool_mask.data(), c.mask_shape);
  } else if (c.mask_kind == attnlens::MaskKind::Additive) {
    o.mask = attnlens::MaskView::additive(c.add_mask.data(), c.mask_shape);
  }
  return c;
}

struct Outcome {
  std::optional<attnlens::AttentionResult> result;
  attnlens::ErrorCode code{};
  std::string message;
};

template <typename F>
Outcome run(F&& f) {
  Outcome out;
  try {
    out.result = f();
  } catch (const attnlens::Error& e) {
    out.code = e.code();
    out.message = e.what();
  }
  return out;
}

// The mask's value at score index (b, h, i, j), broadcast from the right; 0 without a mask.
// For a boolean mask: 0 (may attend) or -inf.
double mask_at(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
  if (c.mask_kind == attnlens::MaskKind::None) return 0.0;
  std::vector<std::int64_t> idx;  // the score index at q's rank
  if (c.rank >= 3) idx.push_back(b);
  if (c.rank == 4) idx.push_back(h);
  idx.push_back(i);
  idx.push_back(j);
  const std::size_t mr = c.mask_shape.size();
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < mr; ++d) {
    const std::int64_t dim = c.mask_shape[d];
    flat = flat * dim + (dim == 1 ? 0 : idx[idx.size() - mr + d]);
  }
  const auto at = static_cast<std::size_t>(flat);
  if (c.mask_kind == attnlens::MaskKind::Boolean) {
    return c.bool_mask[at] != 0 ? 0.0 : -std::numeric_limits<double>::infinity();
  }
  return c.add_mask[at];
}

// Bound on |attention - attention_reference| for one query row, derived per implementation and
// doubled (each may err either way). u = 2^-24. For each visible key j, in float32:
//   - the logit  scale * (q . k_j) + m_j  is off by at most
//       Delta = |scale| (E + 2) u P + 6 u A + 4 u
//     where P = max_j sum_e |q_e k_je| (a dot product of E terms errs by <= E u P, in any
//     order or with FMA; +2 covers rounding q . k before and after scaling), A = max_j
//     (|scale q . k_j| + |m_j|) (scaling, adding the mask, folding log2(e) into the scale and
//     subtracting the row maximum each round once, on values <= 2A), and 4u = exp's own 2 ulp;
//   - so each weight is within a factor exp(+-2 Delta) of the exact one (numerator and the
//     normaliser move), times 1 +- (S + 1) u for summing S exps and dividing;
//   - and each output o_c = sum_j w_j v_jc adds S u max|v_c| for its own sum.
// With V_c = max over visible j of |v_jc|:
//   |o - o_exact| <= V_c (expm1(2 Delta) + (2S + 2) u exp(2 Delta)),
//   |w - w_exact| <= expm1(2 Delta) + (S + 1) u exp(2 Delta)   (weights are <= 1).
// Exps below 2^-125 may be flushed to 0 (kernels.cpp): S * 2^-120 more, absolute.
struct RowBound {
  bool any_visible = false;
  double delta = 0.0;
};

bool visible(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
  if (c.options.causal) {
    const std::int64_t shift =
        c.options.causal_align == attnlens::CausalAlign::BottomRight ? c.S - c.L : 0;
    if (j > i + shift) return false;
  }
  return mask_at(c, b, h, i, j) != -std::numeric_limits<double>::infinity();
}

RowBound row_bound(const Case& c, std::int64_t b, std::int64_t h, std::int64_t i, double scale) {
  const std::int64_t kh = h / (c.H / c.Hkv);
  const float* q = c.q.data() + ((b * c.H + h) * c.L + i) * c.E;
  RowBound r;
  double P = 0.0, A = 0.0;
  for (std::int64_t j = 0; j < c.S; ++j) {
    if (!visible(c, b, h, i, j)) continue;
    r.any_visible = true;
    const float* k = c.k.data() + ((b * c.Hkv + kh) * c.S + j) * c.E;
    double dot = 0.0, abs_dot = 0.0;
    for (std::int64_t e = 0; e < c.E; ++e) {
      dot += static_cast<double>(q[e]) * k[e];
      abs_dot += std::abs(static_cast<double>(q[e]) * k[e]);
    }
    P = std::max(P, abs_dot);
    A = std::max(A, std::abs(scale * dot) + std::abs(mask_at(c, b, h, i, j)));
  }
  r.delta = std::abs(scale) * static_cast<double>(c.E + 2) * kU * P + 6 * kU * A + 4 * kU;
  return r;
}

std::string where(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t j) {
  return "[" + std::to_string(b) + ", " + std::to_string(h) + ", " + std::to_string(i) + ", " +
         std::to_string(j) + "]";
}

void compare(const Case& c, const attnlens::AttentionResult& fast,
             const attnlens::AttentionResult& ref) {
  Shape out_shape = c.qs;
  out_shape.back() = c.Ev;
  Shape w_shape = c.qs;
  w_shape.back() = c.S;
  for (const auto* r : {&fast, &ref}) {
    const char* name = r == &fast ? "attention" : "attention_reference";
    fuzz::check(r->output.shape == out_shape && r->output.numel() == numel(out_shape),
                "%s output is %s, expected %s", name,
                attnlens::shape_to_string(r->output.shape).c_str(),
                attnlens::shape_to_string(out_shape).c_str());
    if (c.options.return_weights) {
      fuzz::check(r->weights.shape == w_shape && r->weights.numel() == numel(w_shape),
                  "%s weights are %s, expected %s", name,
                  attnlens::shape_to_string(r->weights.shape).c_str(),
                  attnlens::shape_to_string(w_shape).c_str());
    }
  }
  const double scale = c.options.scale ? static_cast<double>(*c.options.scale)
                                       : 1.0 / std::sqrt(static_cast<double>(c.E));
  const double S = static_cast<double>(c.S);
  const double flush = S * 0x1p-120;
  for (std::int64_t b = 0; b < c.B; ++b) {
    for (std::int64_t h = 0; h < c.H; ++h) {
      const std::int64_t kh = h / (c.H / c.Hkv);
      for (std::int64_t i = 0; i < c.L; ++i) {
        const RowBound rb = row_bound(c, b, h, i, scale);
        const double grow = std::exp(2 * rb.delta);
        for (std::int64_t x = 0; x < c.Ev; ++x) {
          const auto at = static_cast<std::size_t>(((b * c.H + h) * c.L + i) * c.Ev + x);
          const float f = fast.output.data[at], r = ref.output.data[at];
          fuzz::check(std::isfinite(f) && std::isfinite(r), "output %s: attention %g, reference %g",
                      where(b, h, i, x).c_str(), static_cast<double>(f), static_cast<double>(r));
          if (!rb.any_visible) {
            fuzz::check(f == 0.0f && r == 0.0f,
                        "output %s sees no key: attention %g, reference %g (want 0)",
                        where(b, h, i, x).c_str(), static_cast<double>(f), static_cast<double>(r));
            continue;
          }
          double V = 0.0;
          for (std::int64_t j = 0; j < c.S; ++j) {
            if (visible(c, b, h, i, j)) {
              V = std::max(
                  V, std::abs(static_cast<double>(
                         c.v[static_cast<std::size_t>(((b * c.Hkv + kh) * c.S + j) * c.Ev + x)])));
            }
          }
          // All visible v are 0 in this column: the output is exactly 0 in both, whatever the
          // weights are (V * inf would make the bound NaN when the score bound overflows).
          const double bound =
              V == 0.0 ? 0.0
                       : 2 * (V * (std::expm1(2 * rb.delta) + (2 * S + 2) * kU * grow) + V * flush);
          const double diff = std::abs(static_cast<double>(f) - r);
          fuzz::check(diff <= bound,
                      "output %s: attention %.9g, reference %.9g, |diff| %.3g > bound %.3g",
                      where(b, h, i, x).c_str(), static_cast<double>(f), static_cast<double>(r),
                      diff, bound);
        }
        if (!c.options.return_weights) continue;
        const double w_bound = 2 * (std::expm1(2 * rb.delta) + (S + 1) * kU * grow + flush);
        const double sum_tol = (S + 5) * kU + flush;
        double sum_f = 0.0, sum_r = 0.0;
        for (std::int64_t j = 0; j < c.S; ++j) {
          const auto at = static_cast<std::size_t>(((b * c.H + h) * c.L + i) * c.S + j);
          const float f = fast.weights.data[at], r = ref.weights.data[at];
          if (!visible(c, b, h, i, j)) {
            fuzz::check(f == 0.0f && r == 0.0f, "masked weight %s: attention %g, reference %g",
                        where(b, h, i, j).c_str(), static_cast<double>(f), static_cast<double>(r));
            continue;
          }
          const double diff = std::abs(static_cast<double>(f) - r);
          fuzz::check(diff <= w_bound,
                      "weight %s: attention %.9g, reference %.9g, |diff| %.3g > bound %.3g",
                      where(b, h, i, j).c_str(), static_cast<double>(f), static_cast<double>(r),
                      diff, w_bound);
          sum_f += f;
          sum_r += r;
        }
        const double want = rb.any_visible ? 1.0 : 0.0;
        fuzz::check(std::abs(sum_f - want) <= sum_tol && std::abs(sum_r - want) <= sum_tol,
                    "weight row %s sums: attention %.9g, reference %.9g, want %g +- %.3g",
                    where(b, h, i, -1).c_str(), sum_f, sum_r, want, sum_tol);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const Case c = decode(in);
  const attnlens::ConstTensorView q{c.q.data(), c.qs}, k{c.k.data(), c.ks}, v{c.v.data(), c.vs};
  const Outcome fast = run([&] { return attnlens::attention(q, k, v, c.options); });
  const Outcome ref = run([&] { return attnlens::attention_reference(q, k, v, c.options); });
  if (!fast.result || !ref.result) {
    fuzz::check(
        !fast.result && !ref.result && fast.code == ref.code,
        "attention %s, attention_reference %s",
        fast.result
            ? "returned"
            : (std::string("threw ") + attnlens::error_code_name(fast.code) + ": " + fast.message)
                  .c_str(),
        ref.result
            ? "returned"
            : (std::string("threw ") + attnlens::error_code_name(ref.code) + ": " + ref.message)
                  .c_str());
    return 0;
  }
  fuzz::check(!c.perturbed, "attention accepted inconsistent shapes: q %s, k %s, v %s, mask %s",
              attnlens::shape_to_string(c.qs).c_str(), attnlens::shape_to_string(c.ks).c_str(),
              attnlens::shape_to_string(c.vs).c_str(),
              attnlens::shape_to_string(c.mask_shape).c_str());
  compare(c, *fast.result, *ref.result);
  return 0;
}
