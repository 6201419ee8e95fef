// Embind glue between the attnlens C++ library and the JS facade (api.js). No math here: every
// function converts JS values to library types, calls the library and converts the result back.
//
// Conventions:
//   - Raw bindings start with an underscore; api.js checks what only JS can see (JS types,
//     typed-array kinds, data length against the shape, option names) and wraps them. Every
//     other rule (shapes, ranges, limits, defaults, choices) is the library's, checked here or
//     in the library, and described to JS by _description().
//   - Tensors cross as whole typed arrays: one bulk copy in (TypedArray.set over a view of the
//     destination vector) and one bulk copy out (a view followed at once by slice()), so JS
//     never holds a view into the wasm heap.
//   - Errors are returned, not thrown: a result { errorCode, message }. A JS exception thrown
//     through wasm frames would skip C++ destructors and leak; returning keeps the heap flat.
#include <attnlens/attnlens.hpp>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

using emscripten::val;

namespace {

using attnlens::ErrorCode;
using attnlens::Shape;
using attnlens::Tensor;

// Throws attnlens::Error with the parts joined (out of line: one copy of the string code).
[[noreturn, gnu::noinline]] void fail(ErrorCode code,
                                      std::initializer_list<std::string_view> parts) {
  std::string message;
  for (std::string_view part : parts)
    message += part;
  throw attnlens::Error(code, message);
}

// A number for a message: up to 15 significant digits, as JS prints most numbers (1e+39, 0.5).
std::string number_text(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.15g", x);
  return buffer;
}

// val::set and operator[] are templates that the compiler copies into every call site; these
// out-of-line forms keep each property a call (the module is in the element's size budget).
[[gnu::noinline]] void put(val& object, const char* key, const val& value) {
  object.set(key, value);
}
[[gnu::noinline]] void put_number(val& object, const char* key, double value) {
  object.set(key, value);
}
[[gnu::noinline]] void put_bool(val& object, const char* key, bool value) {
  object.set(key, value);
}
[[gnu::noinline]] void put_string(val& object, const char* key, std::string_view value) {
  object.set(key, val(std::string(value)));
}
[[gnu::noinline]] val get(const val& object, const char* key) {
  return object[key];
}

// ---------------------------------------------------------------------------------------------
// Numbers from JS. api.js has checked that each is a JS number; what it holds is checked here.

// An integer option that the library takes as an int.
[[gnu::noinline]] int int_from_js(double x, const char* name) {
  if (!(std::floor(x) == x) || std::abs(x) > std::numeric_limits<int>::max()) {
    fail(ErrorCode::BAD_ARGUMENT,
         {name, " must be an integer that fits 32 bits; got ", number_text(x)});
  }
  return static_cast<int>(x);
}

// A seed: an integer 0 .. 2^53 - 1 (every such JS number is exact).
[[gnu::noinline]] std::uint64_t seed_from_js(double x) {
  if (!(std::floor(x) == x) || x < 0 || x > 9007199254740991.0) {
    fail(ErrorCode::BAD_ARGUMENT,
         {"seed must be an integer from 0 to 2^53 - 1 (Number.MAX_SAFE_INTEGER); got ",
          number_text(x)});
  }
  return static_cast<std::uint64_t>(x);
}

// A limit such as maxElements: an integer >= 1 (2^53 and above are exact in double).
[[gnu::noinline]] std::int64_t limit_from_js(double x, const char* name) {
  if (!(std::floor(x) == x) || x < 1) {
    fail(ErrorCode::BAD_ARGUMENT,
         {name, " must be an integer of at least 1; got ", number_text(x)});
  }
  return x >= 9.2e18 ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(x);
}

// The scale: NaN means unset; a finite JS number must also be finite in float32.
[[gnu::noinline]] std::optional<float> scale_from_js(double x) {
  if (std::isnan(x)) return std::nullopt;
  const auto f = static_cast<float>(x);
  if (std::isfinite(x) && !std::isfinite(f)) {
    fail(ErrorCode::NON_FINITE, {"scale is ", number_text(x),
                                 ": finite in JS, but beyond float32's range (largest "
                                 "3.4028234663852886e+38); attention computes in float32"});
  }
  return f;
}

Shape shape_from_js(const val& array) {
  const auto n = get(array, "length").as<unsigned>();
  Shape shape(n);
  for (unsigned i = 0; i < n; ++i)
    shape[i] = static_cast<std::int64_t>(array[i].as<double>());
  return shape;
}

val shape_to_js(const Shape& shape) {
  val array = val::array();
  for (std::size_t i = 0; i < shape.size(); ++i)
    array.set(i, static_cast<double>(shape[i]));
  return array;
}

// A { data: Float32Array, shape } from api.js (data a plain Float32Array whose length api.js
// checked against the shape) as an owning tensor.
[[gnu::noinline]] Tensor tensor_from_js(const val& t) {
  Shape shape = shape_from_js(get(t, "shape"));
  std::vector<float> data(get(get(t, "data"), "length").as<unsigned>());
  val(emscripten::typed_memory_view(data.size(), data.data())).call<void>("set", get(t, "data"));
  return Tensor(std::move(shape), std::move(data));
}

template <typename T>
val copy_to_js(const T* data, std::size_t n) {
  return val(emscripten::typed_memory_view(n, data)).call<val>("slice");
}

val tensor_to_js(const Tensor& t) {
  val out = val::object();
  put(out, "data", copy_to_js(t.data.data(), t.data.size()));
  put(out, "shape", shape_to_js(t.shape));
  return out;
}

// The same, its numbers written into `old`'s data (an earlier result's tensor) when that is a
// Float32Array of the same length not yet in `used` (a Set of the arrays this result already
// took, so that no two of its tensors share one): a fresh multi-megabyte typed array costs
// Chromium several times the copy (its pages are touched for the first time), a reused one only
// the copy.
val tensor_to_js(const Tensor& t, const val& old, const val& used) {
  if (old.isUndefined() || old.isNull()) return tensor_to_js(t);
  const val data = get(old, "data");
  const bool fits = data.instanceof
      (val::global("Float32Array")) &&
          get(data, "length").as<double>() == static_cast<double>(t.data.size());
  if (!fits || used.call<bool>("has", data)) return tensor_to_js(t);
  used.call<void>("add", data);
  data.call<void>("set", val(emscripten::typed_memory_view(t.data.size(), t.data.data())));
  val out = val::object();
  put(out, "data", data);
  put(out, "shape", shape_to_js(t.shape));
  return out;
}

// `key` of an object, or undefined when the object is undefined or null.
val member(const val& object, const char* key) {
  return object.isUndefined() || object.isNull() ? val::undefined() : get(object, key);
}

val matrix_to_js(const attnlens::RowMatrixXf& m) {
  val out = val::object();
  put(out, "data", copy_to_js(m.data(), static_cast<std::size_t>(m.size())));
  put(out, "shape", shape_to_js({m.rows(), m.cols()}));
  return out;
}

val vector_to_js(const Eigen::VectorXf& v) {
  val out = val::object();
  put(out, "data", copy_to_js(v.data(), static_cast<std::size_t>(v.size())));
  put(out, "shape", shape_to_js({v.size()}));
  return out;
}

val error_result(ErrorCode code, const char* message) {
  val out = val::object();
  put_string(out, "errorCode", attnlens::error_code_name(code));
  put_string(out, "message", message);
  return out;
}

// Runs `body`, turning any C++ exception into an error result.
template <typename Body>
val guarded(Body&& body) {
  try {
    return body();
  } catch (const attnlens::Error& e) {
    return error_result(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return error_result(ErrorCode::OUT_OF_MEMORY,
                        "the WebAssembly heap could not grow to hold the result");
  } catch (const std::exception& e) {
    return error_result(ErrorCode::INTERNAL, e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// attention(): the package's hot path (per keystroke on the page, in every benchmark), so it
// passes numbers only, no Embind values. api.js asks for a staging area (_attentionStage),
// writes the options, shapes and tensors into it with typed-array stores (the one copy in),
// runs (_attentionRun), reads the results' shapes and addresses from it, slices the results
// out of the heap (the one copy out) and releases them (_attentionRelease).
//
// The staging area starts with a header of named 8-byte slots (doubles: exact for integers up
// to 2^53, NaN for "unset"), described once by ATTNLENS_STAGE_SLOTS; _description().stage
// gives JS each name's slot index. Tensor data follows the header wherever JS puts it: the
// *At slots hold byte offsets from the start of the area, checked here against its size.
constexpr int kMaxStagedRank = 8;  // dimensions a shape slot holds (attention takes 2 to 4)

// X(name, slots): written by JS unless marked "out".
#define ATTNLENS_STAGE_SLOTS(X)                                               \
  X(causal, 1)        /* 0 or 1 */                                            \
  X(causalAlign, 1)   /* index into choices.causalAlign */                    \
  X(returnWeights, 1) /* 0 or 1 */                                            \
  X(streaming, 1)     /* 0 or 1 */                                            \
  X(reference, 1)     /* 1: attention_reference() */                          \
  X(scale, 1)         /* NaN: the default 1 / sqrt(E) */                      \
  X(maxElements, 1)   /* AttentionOptions::max_elements */                    \
  X(maxWork, 1)       /* AttentionOptions::max_work */                        \
  X(maskKind, 1)      /* a value of stage.maskKinds */                        \
  X(qRank, 1)                                                                 \
  X(qShape, kMaxStagedRank)                                                   \
  X(qAt, 1) /* byte offset of q's float32 data */                             \
  X(kRank, 1)                                                                 \
  X(kShape, kMaxStagedRank)                                                   \
  X(kAt, 1)                                                                   \
  X(vRank, 1)                                                                 \
  X(vShape, kMaxStagedRank)                                                   \
  X(vAt, 1)                                                                   \
  X(maskRank, 1)                                                              \
  X(maskShape, kMaxStagedRank)                                                \
  X(maskAt, 1)     /* bytes (boolean) or float32 (additive) */                \
  X(outputRank, 1) /* out: the output's shape and heap address after a run */ \
  X(outputShape, kMaxStagedRank)                                              \
  X(outputAddress, 1)                                                         \
  X(weightsRank, 1) /* out: the weights', 0 when not returned */              \
  X(weightsShape, kMaxStagedRank)                                             \
  X(weightsAddress, 1)

namespace slot {
enum Index : int {
#define ATTNLENS_STAGE_ENUM(name, slots) name, name##Last = name + (slots)-1,
  ATTNLENS_STAGE_SLOTS(ATTNLENS_STAGE_ENUM)
#undef ATTNLENS_STAGE_ENUM
      count
};
}  // namespace slot

struct AttentionCall {
  std::vector<double> stage;  // header slots, then the data JS places after them
  attnlens::AttentionResult result;
  std::string message;
};

AttentionCall& attention_call() {
  static AttentionCall call;
  return call;
}

// Returns the byte address of a staging area: a zeroed header and then `data_bytes` bytes for JS
// to fill (not cleared: JS writes all of them), or 0 when the heap cannot grow to hold it.
double attention_stage(double data_bytes) {
  AttentionCall& call = attention_call();
  const auto slots = slot::count + (static_cast<std::size_t>(data_bytes) + 7) / 8;
  try {
    call.stage.resize(slots);
  } catch (const std::bad_alloc&) {
    std::vector<double>().swap(call.stage);
    return 0;
  }
  std::fill(call.stage.begin(), call.stage.begin() + slot::count, 0.0);
  return static_cast<double>(reinterpret_cast<std::uintptr_t>(call.stage.data()));
}

// A tensor's shape from its rank slot and shape slots.
Shape staged_shape(const std::vector<double>& stage, slot::Index rank_slot, slot::Index shape_slot,
                   const char* name) {
  const double rank = stage[rank_slot];
  if (!(rank >= 0 && rank <= kMaxStagedRank)) {
    fail(ErrorCode::INTERNAL, {"staged ", name, " rank ", number_text(rank)});
  }
  Shape shape(static_cast<std::size_t>(rank));
  for (std::size_t i = 0; i < shape.size(); ++i)
    shape[i] = static_cast<std::int64_t>(stage[shape_slot + i]);
  return shape;
}

// The address of `count` elements of `size` bytes staged at the byte offset in `at_slot`,
// checked to lie inside the data part of the staging area.
const void* staged_data(const std::vector<double>& stage, slot::Index at_slot, std::int64_t count,
                        std::size_t size, const char* name) {
  const double at = stage[at_slot];
  const double header = slot::count * sizeof(double);
  const double end = static_cast<double>(stage.size() * sizeof(double));
  if (!(at >= header && std::floor(at) == at && at + static_cast<double>(count) * size <= end &&
        static_cast<std::int64_t>(at) % static_cast<std::int64_t>(size) == 0)) {
    fail(ErrorCode::INTERNAL, {"staged ", name, " data does not fit the staging area"});
  }
  return reinterpret_cast<const char*>(stage.data()) + static_cast<std::size_t>(at);
}

[[gnu::noinline]] void write_result_shape(std::vector<double>& stage, const Tensor& t,
                                          slot::Index rank_slot, slot::Index shape_slot,
                                          slot::Index address_slot) {
  stage[rank_slot] = static_cast<double>(t.shape.size());
  for (std::size_t i = 0; i < t.shape.size(); ++i)
    stage[shape_slot + i] = static_cast<double>(t.shape[i]);
  stage[address_slot] = static_cast<double>(reinterpret_cast<std::uintptr_t>(t.data.data()));
}

// Runs attention on the staged call. Returns -1 on success (the result's shapes and addresses
// are then in the header), else the index of the error code (the message is in
// _attentionError()).
int attention_run() {
  AttentionCall& call = attention_call();
  call.result = {};
  try {
    std::vector<double>& stage = call.stage;
    if (stage.size() < slot::count) fail(ErrorCode::INTERNAL, {"attention ran without a stage"});
    const Shape qs = staged_shape(stage, slot::qRank, slot::qShape, "q");
    const Shape ks = staged_shape(stage, slot::kRank, slot::kShape, "k");
    const Shape vs = staged_shape(stage, slot::vRank, slot::vShape, "v");
    const Shape ms = staged_shape(stage, slot::maskRank, slot::maskShape, "mask");
    const auto mask_kind = static_cast<attnlens::MaskKind>(static_cast<int>(stage[slot::maskKind]));
    const auto q = static_cast<const float*>(
        staged_data(stage, slot::qAt, attnlens::shape_numel(qs, "q"), sizeof(float), "q"));
    const auto k = static_cast<const float*>(
        staged_data(stage, slot::kAt, attnlens::shape_numel(ks, "k"), sizeof(float), "k"));
    const auto v = static_cast<const float*>(
        staged_data(stage, slot::vAt, attnlens::shape_numel(vs, "v"), sizeof(float), "v"));
    attnlens::AttentionOptions o;
    o.causal = stage[slot::causal] != 0;
    o.causal_align = static_cast<attnlens::CausalAlign>(static_cast<int>(stage[slot::causalAlign]));
    o.scale = scale_from_js(stage[slot::scale]);
    o.return_weights = stage[slot::returnWeights] != 0;
    o.max_elements = limit_from_js(stage[slot::maxElements], "maxElements");
    o.max_work = limit_from_js(stage[slot::maxWork], "maxWork");
    o.streaming = stage[slot::streaming] != 0;
    const std::int64_t mask_count = attnlens::shape_numel(ms, "mask");
    if (mask_kind == attnlens::MaskKind::Boolean) {
      o.mask = attnlens::MaskView::boolean(
          static_cast<const std::uint8_t*>(staged_data(stage, slot::maskAt, mask_count, 1, "mask")),
          ms);
    } else if (mask_kind == attnlens::MaskKind::Additive) {
      o.mask =
          attnlens::MaskView::additive(static_cast<const float*>(staged_data(
                                           stage, slot::maskAt, mask_count, sizeof(float), "mask")),
                                       ms);
    }
    const auto run =
        stage[slot::reference] != 0 ? &attnlens::attention_reference : &attnlens::attention;
    call.result = run({q, qs}, {k, ks}, {v, vs}, o);
    write_result_shape(stage, call.result.output, slot::outputRank, slot::outputShape,
                       slot::outputAddress);
    write_result_shape(stage, call.result.weights, slot::weightsRank, slot::weightsShape,
                       slot::weightsAddress);
    return -1;
  } catch (const attnlens::Error& e) {
    call.message = e.what();
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    call.message = "the WebAssembly heap could not grow to hold the result";
    return static_cast<int>(ErrorCode::OUT_OF_MEMORY);
  } catch (const std::exception& e) {
    call.message = e.what();
    return static_cast<int>(ErrorCode::INTERNAL);
  }
}

std::string attention_error() {
  return attention_call().message;
}

// Frees the last result once JS has copied it out; a large staging area is freed too, a small
// one is kept for the next call (no allocation per call for the page's sizes).
void attention_release() {
  AttentionCall& call = attention_call();
  call.result = {};
  call.message.clear();
  constexpr std::size_t kKeep = 1 << 17;                                      // doubles: 1 MiB
  if (call.stage.capacity() > kKeep) std::vector<double>().swap(call.stage);  // `= {}` keeps it
}

// Bytes currently allocated by malloc in the wasm heap (for leak tests). mallinfo's fields are
// ints: read as unsigned, so that more than 2 GiB in use (GPT-2 medium with its weights packed:
// 2.6 GB) is not negative; wasm32's heap is at most 4 GiB.
double heap_used() {
  return static_cast<double>(static_cast<unsigned>(mallinfo().uordblks));
}

// ---------------------------------------------------------------------------------------------
// selfAttention(): api.js keeps the validated weights this returns and passes them to every
// forward pass, so the layer never aliases arrays the caller holds.

val weights_to_js(const attnlens::SelfAttentionWeights& w) {
  val out = val::object();
  put(out, "wq", matrix_to_js(w.wq));
  put(out, "wk", matrix_to_js(w.wk));
  put(out, "wv", matrix_to_js(w.wv));
  put(out, "wo", matrix_to_js(w.wo));
  if (w.bq.size()) put(out, "bq", vector_to_js(w.bq));
  if (w.bk.size()) put(out, "bk", vector_to_js(w.bk));
  if (w.bv.size()) put(out, "bv", vector_to_js(w.bv));
  if (w.bo.size()) put(out, "bo", vector_to_js(w.bo));
  return out;
}

// A weight matrix (rank 2) or bias (rank 1) from { data, shape }; the library checks the sizes
// against modelDim. Another rank is a shape mismatch named here.
attnlens::RowMatrixXf matrix_from_js(const val& t, const char* name) {
  const Tensor m = tensor_from_js(t);
  if (m.shape.size() != 2) {
    fail(ErrorCode::SHAPE_MISMATCH,
         {"weights.", name, " has shape ", attnlens::shape_to_string(m.shape),
          " but must be [modelDim, modelDim]"});
  }
  return Eigen::Map<const attnlens::RowMatrixXf>(m.data.data(), m.shape[0], m.shape[1]);
}

Eigen::VectorXf bias_from_js(const val& t, const char* name) {
  if (t.isUndefined()) return {};
  const Tensor b = tensor_from_js(t);
  if (b.shape.size() != 1) {
    fail(ErrorCode::SHAPE_MISMATCH,
         {"weights.", name, " has shape ", attnlens::shape_to_string(b.shape),
          " but must be [modelDim]"});
  }
  return Eigen::Map<const Eigen::VectorXf>(b.data.data(), b.shape[0]);
}

attnlens::SelfAttentionWeights weights_from_js(const val& w) {
  attnlens::SelfAttentionWeights out;
  out.wq = matrix_from_js(get(w, "wq"), "wq");
  out.wk = matrix_from_js(get(w, "wk"), "wk");
  out.wv = matrix_from_js(get(w, "wv"), "wv");
  out.wo = matrix_from_js(get(w, "wo"), "wo");
  out.bq = bias_from_js(get(w, "bq"), "bq");
  out.bk = bias_from_js(get(w, "bk"), "bk");
  out.bv = bias_from_js(get(w, "bv"), "bv");
  out.bo = bias_from_js(get(w, "bo"), "bo");
  return out;
}

// config: { modelDim?, numHeads?, seed?, init?, bias?, weights? } with JS types checked by
// api.js. Returns { modelDim, numHeads, weights }: the layer's validated weights, copied.
val self_attention_create(const val& config) {
  return guarded([&] {
    attnlens::SelfAttentionConfig c;
    if (!get(config, "modelDim").isUndefined()) {
      c.model_dim = int_from_js(get(config, "modelDim").as<double>(), "modelDim");
    }
    if (!get(config, "numHeads").isUndefined()) {
      c.num_heads = int_from_js(get(config, "numHeads").as<double>(), "numHeads");
    }
    if (!get(config, "seed").isUndefined()) c.seed = seed_from_js(get(config, "seed").as<double>());
    if (!get(config, "init").isUndefined()) {
      c.init = attnlens::parse_init(get(config, "init").as<std::string>());
    }
    if (!get(config, "bias").isUndefined()) c.bias = get(config, "bias").as<bool>();
    const attnlens::SelfAttention layer =
        get(config, "weights").isUndefined()
            ? attnlens::SelfAttention(c)
            : attnlens::SelfAttention(c.model_dim, c.num_heads,
                                      weights_from_js(get(config, "weights")));
    val out = val::object();
    put_number(out, "modelDim", layer.model_dim());
    put_number(out, "numHeads", layer.num_heads());
    put(out, "weights", weights_to_js(layer.weights()));
    return out;
  });
}

// Every stage of ATTNLENS_TRACE_STAGES under its JS name, and the scale; each written into the
// same stage of `old` (an earlier trace, or undefined) where it fits (tensor_to_js above). The
// trace was made with trace_results = false: its weights and output are `result`'s (the JS
// tensors of the result's weights and output), one array for both.
val trace_to_js(const attnlens::Trace& t, const val& result, const val& old = val::undefined(),
                const val& used = val::undefined()) {
  val out = val::object();
  put_number(out, "scale", t.scale);
#define ATTNLENS_TRACE_TO_JS(field, name, shape, meaning)                        \
  if (std::string_view(name) == "weights" || std::string_view(name) == "output") \
    put(out, name, get(result, name));                                           \
  else                                                                           \
    put(out, name, tensor_to_js(t.field, member(old, name), used));
  ATTNLENS_TRACE_STAGES(ATTNLENS_TRACE_TO_JS)
#undef ATTNLENS_TRACE_TO_JS
  return out;
}

// weights: as _selfAttentionCreate returned them; x: { data, shape }; options: { causal?,
// trace? } with JS types checked by api.js.
val self_attention_forward(int model_dim, int num_heads, const val& weights, const val& x,
                           const val& options) {
  return guarded([&] {
    const attnlens::SelfAttention layer(model_dim, num_heads, weights_from_js(weights));
    const Tensor input = tensor_from_js(x);
    attnlens::ForwardOptions o;
    if (!get(options, "causal").isUndefined()) o.causal = get(options, "causal").as<bool>();
    if (!get(options, "trace").isUndefined()) o.trace = get(options, "trace").as<bool>();
    o.trace_results = false;  // the trace's weights and output are the result's arrays
    const auto r = layer.forward(input.view(), o);
    val out = val::object();
    if (r.trace) put(out, "trace", val::null());  // (set below: the keys keep their order)
    put(out, "output", tensor_to_js(r.output));
    put(out, "weights", tensor_to_js(r.weights));
    if (r.trace) put(out, "trace", trace_to_js(*r.trace, out));
    return out;
  });
}

// ---------------------------------------------------------------------------------------------
// explain()

val explain_options_to_js(const attnlens::ExplainOptions& o) {
  val out = val::object();
  put_bool(out, "causal", o.causal);
  put_number(out, "modelDim", o.model_dim);
  put_number(out, "numHeads", o.num_heads);
  put_number(out, "seed", static_cast<double>(o.seed));
  put_string(out, "init", attnlens::init_name(o.init));
  put_string(out, "positional", attnlens::positional_name(o.positional));
  put_number(out, "maxTokens", o.max_tokens);
  put_bool(out, "truncate", o.truncate);
  put_bool(out, "trace", o.trace);
  if (o.trace_head) put_number(out, "traceHead", *o.trace_head);
  return out;
}

// options: the given ExplainOptions keys (JS types checked by api.js); the rest keep the
// library's defaults.
attnlens::ExplainOptions explain_options_from_js(const val& opts) {
  attnlens::ExplainOptions o;
  const auto given = [&](const char* key) { return !opts[key].isUndefined(); };
  if (given("causal")) o.causal = get(opts, "causal").as<bool>();
  if (given("modelDim")) o.model_dim = int_from_js(get(opts, "modelDim").as<double>(), "modelDim");
  if (given("numHeads")) o.num_heads = int_from_js(get(opts, "numHeads").as<double>(), "numHeads");
  if (given("seed")) o.seed = seed_from_js(get(opts, "seed").as<double>());
  if (given("init")) o.init = attnlens::parse_init(get(opts, "init").as<std::string>());
  if (given("positional")) {
    o.positional = attnlens::parse_positional(get(opts, "positional").as<std::string>());
  }
  if (given("maxTokens"))
    o.max_tokens = int_from_js(get(opts, "maxTokens").as<double>(), "maxTokens");
  if (given("truncate")) o.truncate = get(opts, "truncate").as<bool>();
  if (given("trace")) o.trace = get(opts, "trace").as<bool>();
  if (given("traceHead"))
    o.trace_head = int_from_js(get(opts, "traceHead").as<double>(), "traceHead");
  return o;
}

// sentence: a JS string (encoded to UTF-8 by Embind) or a Uint8Array of UTF-8 bytes; api.js has
// checked that its UTF-8 length cannot exceed the library's limit by much (see api.js).
val explain(const val& sentence, const val& opts) {
  return guarded([&] {
    std::string text;
    if (sentence.isString()) {
      text = sentence.as<std::string>();
    } else {
      text.resize(get(sentence, "length").as<unsigned>());
      val(emscripten::typed_memory_view(text.size(), reinterpret_cast<std::uint8_t*>(text.data())))
          .call<void>("set", sentence);
    }
    attnlens::ExplainOptions o = explain_options_from_js(opts);
    o.trace_results = false;  // the trace's weights and output are the result's arrays (below)
    const attnlens::Explanation ex = attnlens::explain(text, o);

    val tokens = val::array();
    for (std::size_t i = 0; i < ex.tokens.size(); ++i) {
      val t = val::object();
      put_string(t, "text", ex.tokens[i].text);
      put_number(t, "byteStart", static_cast<double>(ex.tokens[i].begin));
      put_number(t, "byteEnd", static_cast<double>(ex.tokens[i].end));
      tokens.set(i, t);
    }
    val pca = val::object();
    put(pca, "original", matrix_to_js(ex.pca.original));
    put(pca, "contextual", matrix_to_js(ex.pca.contextual));
    put(pca, "components", matrix_to_js(ex.pca.components));
    put(pca, "mean", vector_to_js(ex.pca.mean));
    val explained = val::array();
    explained.set(0, ex.pca.explained[0]);
    explained.set(1, ex.pca.explained[1]);
    put(pca, "explained", explained);

    val stats = val::object();
    put_number(stats, "totalTokens", static_cast<double>(ex.stats.total_tokens));
    put_bool(stats, "truncated", ex.stats.truncated);
    val raw = val::array();
    val scaled = val::array();
    for (std::size_t h = 0; h < ex.stats.raw_score_variance.size(); ++h) {
      raw.set(h, ex.stats.raw_score_variance[h]);
      scaled.set(h, ex.stats.scaled_score_variance[h]);
    }
    put(stats, "rawScoreVariance", raw);
    put(stats, "scaledScoreVariance", scaled);
    put(stats, "entropy", tensor_to_js(ex.stats.entropy));

    val out = val::object();
    put(out, "tokens", tokens);
    put(out, "tokenEmbeddings", tensor_to_js(ex.token_embeddings));
    put(out, "positions", tensor_to_js(ex.positions));
    put(out, "embeddings", tensor_to_js(ex.embeddings));
    put(out, "projections", weights_to_js(ex.projections));
    // options.into: an earlier result whose large arrays this one reuses (api.js has checked it
    // is one); the trace's weights and output are the result's.
    const val into = get(opts, "into");
    const val used = val::global("Set").new_();
    put(out, "trace", val::null());  // (set below: the keys keep this order)
    put(out, "weights", tensor_to_js(ex.weights, member(into, "weights"), used));
    put(out, "output", tensor_to_js(ex.output, member(into, "output"), used));
    if (o.trace) put(out, "trace", trace_to_js(ex.trace, out, member(into, "trace"), used));
    put(out, "meanWeights", tensor_to_js(ex.mean_weights, member(into, "meanWeights"), used));
    put(out, "contextual", tensor_to_js(ex.contextual));
    put(out, "pca", pca);
    put(out, "stats", stats);
    put(out, "options", explain_options_to_js(o));
    return out;
  });
}

// ---------------------------------------------------------------------------------------------
// The rest of the library's rules that JS needs before a call: limits, defaults, choice lists,
// error codes, trace stages and the staging layout, as one JSON text (JSON.parse in api.js: far
// less code in the module than building the objects value by value). Nothing here is repeated
// in JS.

// A tiny JSON writer: objects and arrays of strings, numbers and booleans. Its methods stay out
// of line, so that each of the description's entries costs a call, not a copy of the code.
class Json {
 public:
  [[gnu::noinline]] Json& open(char bracket) {
    separate();
    text_ += bracket;
    first_ = true;
    return *this;
  }
  [[gnu::noinline]] Json& close(char bracket) {
    text_ += bracket;
    first_ = false;
    return *this;
  }
  [[gnu::noinline]] Json& key(std::string_view name) {
    string(name);
    text_ += ':';
    first_ = true;
    return *this;
  }
  [[gnu::noinline]] Json& string(std::string_view value) {
    separate();
    text_ += '"';
    for (char c : value) {
      if (c == '"' || c == '\\') text_ += '\\';
      text_ += c;
    }
    text_ += '"';
    return *this;
  }
  [[gnu::noinline]] Json& number(double value) {
    separate();
    text_ += number_text(value);
    return *this;
  }
  [[gnu::noinline]] Json& boolean(bool value) {
    separate();
    text_ += value ? "true" : "false";
    return *this;
  }
  template <std::size_t N>
  Json& strings(const std::array<std::string_view, N>& values) {
    open('[');
    for (std::string_view v : values)
      string(v);
    return close(']');
  }
  std::string text() const { return text_; }

 private:
  [[gnu::noinline]] void separate() {
    if (!first_) text_ += ',';
    first_ = false;
  }
  std::string text_;
  bool first_ = true;
};

std::string description() {
  Json j;
  j.open('{');
  j.key("limits").open('{');
  j.key("maxElements").number(static_cast<double>(attnlens::kDefaultMaxElements));
  j.key("maxWork").number(static_cast<double>(attnlens::kDefaultMaxWork));
  j.key("maxModelDim").number(attnlens::kMaxModelDim);
  j.key("maxHeads").number(attnlens::kMaxHeads);
  j.key("maxTokens").number(attnlens::kMaxTokensLimit);
  j.key("defaultMaxTokens").number(attnlens::kDefaultMaxTokens);
  j.key("maxTextBytes").number(static_cast<double>(attnlens::kMaxTextBytes));
  j.close('}');

  j.key("defaults").open('{');
  const attnlens::AttentionOptions a;
  j.key("attention").open('{');
  j.key("causal").boolean(a.causal);
  j.key("causalAlign").string(attnlens::causal_align_name(a.causal_align));
  j.key("returnWeights").boolean(a.return_weights);
  j.key("maxElements").number(static_cast<double>(a.max_elements));
  j.key("maxWork").number(static_cast<double>(a.max_work));
  j.key("streaming").boolean(a.streaming);
  j.close('}');
  const attnlens::SelfAttentionConfig c;
  j.key("selfAttention").open('{');
  j.key("modelDim").number(c.model_dim);
  j.key("numHeads").number(c.num_heads);
  j.key("seed").number(static_cast<double>(c.seed));
  j.key("init").string(attnlens::init_name(c.init));
  j.key("bias").boolean(c.bias);
  j.close('}');
  const attnlens::ForwardOptions f;
  j.key("forward").open('{');
  j.key("causal").boolean(f.causal);
  j.key("trace").boolean(f.trace);
  j.close('}');
  const attnlens::ExplainOptions e;
  j.key("explain").open('{');
  j.key("causal").boolean(e.causal);
  j.key("modelDim").number(e.model_dim);
  j.key("numHeads").number(e.num_heads);
  j.key("seed").number(static_cast<double>(e.seed));
  j.key("init").string(attnlens::init_name(e.init));
  j.key("positional").string(attnlens::positional_name(e.positional));
  j.key("maxTokens").number(e.max_tokens);
  j.key("truncate").boolean(e.truncate);
  j.key("trace").boolean(e.trace);
  j.close('}');
  j.close('}');

  j.key("choices").open('{');
  j.key("init").strings(attnlens::kInitNames);
  j.key("positional").strings(attnlens::kPositionalNames);
  j.key("causalAlign").strings(attnlens::kCausalAlignNames);
  j.close('}');

  j.key("errorCodes").open('[');
  for (std::size_t i = 0; i < attnlens::kErrorCodeCount; ++i) {
    const auto code = static_cast<ErrorCode>(i);
    j.open('{');
    j.key("name").string(attnlens::error_code_name(code));
    j.key("description").string(attnlens::error_code_description(code));
    j.close('}');
  }
  j.close(']');

  j.key("traceStages").open('[');
#define ATTNLENS_TRACE_STAGE_JSON(member, name, shape, meaning)    \
  j.open('{').key("name").string(name).key("shape").string(shape); \
  j.key("meaning").string(meaning).close('}');
  ATTNLENS_TRACE_STAGES(ATTNLENS_TRACE_STAGE_JSON)
#undef ATTNLENS_TRACE_STAGE_JSON
  j.close(']');

  j.key("stage").open('{');
  j.key("slots").open('{');
#define ATTNLENS_STAGE_JSON(name, count) j.key(#name).number(slot::name);
  ATTNLENS_STAGE_SLOTS(ATTNLENS_STAGE_JSON)
#undef ATTNLENS_STAGE_JSON
  j.close('}');
  j.key("headerBytes").number(slot::count * sizeof(double));
  j.key("maxRank").number(kMaxStagedRank);
  j.key("maskKinds").open('{');
  j.key("none").number(static_cast<int>(attnlens::MaskKind::None));
  j.key("boolean").number(static_cast<int>(attnlens::MaskKind::Boolean));
  j.key("additive").number(static_cast<int>(attnlens::MaskKind::Additive));
  j.close('}');
  j.close('}');
  j.close('}');
  return j.text();
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens) {
  emscripten::constant("_version", std::string(attnlens::kVersion));
  emscripten::function("_description", &description);
  emscripten::function("_heapUsed", &heap_used);
  emscripten::function("_attentionStage", &attention_stage);
  emscripten::function("_attentionRun", &attention_run);
  emscripten::function("_attentionError", &attention_error);
  emscripten::function("_attentionRelease", &attention_release);
  emscripten::function("_selfAttentionCreate", &self_attention_create);
  emscripten::function("_selfAttentionForward", &self_attention_forward);
  emscripten::function("_explain", &explain);
}
