// Embind glue between the attnlens C++ library and the JS facade (api.js). No math here: every
// function converts JS values to library types, calls the library and converts the result back.
//
// Conventions:
//   - Raw bindings start with an underscore; api.js validates arguments and wraps them.
//   - Tensors cross as whole typed arrays: one bulk copy in (TypedArray.set over a view of the
//     destination vector) and one bulk copy out (a view followed at once by slice()), so JS
//     never holds a view into the wasm heap.
//   - Errors are returned, not thrown: a result { errorCode, message }. A JS exception thrown
//     through wasm frames would skip C++ destructors and leak; returning keeps the heap flat.
#include <attnlens/attnlens.hpp>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

using emscripten::val;

namespace {

using attnlens::Shape;
using attnlens::Tensor;

Shape shape_from_js(const val& array) {
  const auto n = array["length"].as<unsigned>();
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

template <typename T>
std::vector<T> copy_from_js(const val& typed) {
  std::vector<T> out(typed["length"].as<unsigned>());
  val(emscripten::typed_memory_view(out.size(), out.data())).call<void>("set", typed);
  return out;
}

template <typename T>
val copy_to_js(const T* data, std::size_t n) {
  return val(emscripten::typed_memory_view(n, data)).call<val>("slice");
}

val tensor_to_js(const Tensor& t) {
  val out = val::object();
  out.set("data", copy_to_js(t.data.data(), t.data.size()));
  out.set("shape", shape_to_js(t.shape));
  return out;
}

val matrix_to_js(const attnlens::RowMatrixXf& m) {
  val out = val::object();
  out.set("data", copy_to_js(m.data(), static_cast<std::size_t>(m.size())));
  out.set("shape", shape_to_js({m.rows(), m.cols()}));
  return out;
}

val vector_to_js(const Eigen::VectorXf& v) {
  val out = val::object();
  out.set("data", copy_to_js(v.data(), static_cast<std::size_t>(v.size())));
  out.set("shape", shape_to_js({v.size()}));
  return out;
}

val error_result(attnlens::ErrorCode code, const char* message) {
  val out = val::object();
  out.set("errorCode", val(attnlens::error_code_name(code)));
  out.set("message", val(std::string(message)));
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
    return error_result(attnlens::ErrorCode::OUT_OF_MEMORY,
                        "the WebAssembly heap could not grow to hold the result");
  } catch (const std::exception& e) {
    return error_result(attnlens::ErrorCode::INTERNAL, e.what());
  }
}

std::uint64_t seed_from_js(const val& v) {
  return static_cast<std::uint64_t>(v.as<double>());
}

// ---------------------------------------------------------------------------------------------

val error_codes() {
  val list = val::array();
  for (std::size_t i = 0; i < attnlens::kErrorCodeCount; ++i) {
    const auto code = static_cast<attnlens::ErrorCode>(i);
    val entry = val::object();
    entry.set("name", val(attnlens::error_code_name(code)));
    entry.set("description", val(attnlens::error_code_description(code)));
    list.set(i, entry);
  }
  return list;
}

val limits() {
  val out = val::object();
  out.set("maxElements", static_cast<double>(attnlens::kDefaultMaxElements));
  out.set("maxModelDim", attnlens::kMaxModelDim);
  out.set("maxHeads", attnlens::kMaxHeads);
  out.set("maxTokens", attnlens::kMaxTokensLimit);
  out.set("defaultMaxTokens", attnlens::kDefaultMaxTokens);
  out.set("maxTextBytes", static_cast<double>(attnlens::kMaxTextBytes));
  return out;
}

// Bytes currently allocated by malloc in the wasm heap (for leak tests).
double heap_used() {
  return static_cast<double>(mallinfo().uordblks);
}

// ---------------------------------------------------------------------------------------------
// attention(): the package's hot path (per keystroke on the page, in every benchmark), so it
// passes numbers only, no Embind values. api.js asks for a staging area (_attentionStage),
// writes the shapes and tensors into it with TypedArray.set (the one copy in), runs
// (_attentionRun), slices the results out of the heap (the one copy out) and releases them.
//
// Staging area, in 4-byte slots: a header of shapes, then q, k, v (float32) and the mask
// (float32, or bytes for a boolean mask). The header holds four shapes, q, k, v and mask, each
// as its rank followed by its dimensions (the mask's rank is 0 when there is none).
struct AttentionCall {
  std::vector<float> stage;
  std::size_t header_slots = 0;
  attnlens::AttentionResult result;
  std::string message;
};

AttentionCall& attention_call() {
  static AttentionCall call;
  return call;
}

// Returns the byte address of a staging area for `header_slots` shape slots, `floats` floats
// and `mask_bytes` bytes, or 0 when the heap cannot grow to hold it.
double attention_stage(double header_slots, double floats, double mask_bytes) {
  AttentionCall& call = attention_call();
  const auto slots = static_cast<std::size_t>(header_slots) + static_cast<std::size_t>(floats) +
                     (static_cast<std::size_t>(mask_bytes) + 3) / 4;
  try {
    call.stage.resize(slots);
  } catch (const std::bad_alloc&) {
    std::vector<float>().swap(call.stage);
    return 0;
  }
  call.header_slots = static_cast<std::size_t>(header_slots);
  return static_cast<double>(reinterpret_cast<std::uintptr_t>(call.stage.data()));
}

// Runs attention on the staged inputs. Returns -1 on success, else the index of the error code
// (the message is then in _attentionError()). mask_kind: 0 none, 1 boolean, 2 additive.
int attention_run(bool causal, bool bottom_right, double scale, bool return_weights,
                  double max_elements, bool streaming, int mask_kind, bool reference) {
  AttentionCall& call = attention_call();
  call.result = {};
  try {
    std::size_t at = 0;
    const auto next_slot = [&] {
      std::int32_t x = 0;
      if (at < call.header_slots) std::memcpy(&x, call.stage.data() + at, sizeof x);
      ++at;
      return static_cast<std::int64_t>(x);
    };
    const auto next_shape = [&] {
      Shape shape(static_cast<std::size_t>(std::max<std::int64_t>(next_slot(), 0)));
      for (auto& d : shape)
        d = next_slot();
      return shape;
    };
    const Shape qs = next_shape(), ks = next_shape(), vs = next_shape(), ms = next_shape();
    const float* q = call.stage.data() + call.header_slots;
    const float* k = q + attnlens::shape_numel(qs);
    const float* v = k + attnlens::shape_numel(ks);
    const float* mask = v + attnlens::shape_numel(vs);
    attnlens::AttentionOptions o;
    o.causal = causal;
    o.causal_align =
        bottom_right ? attnlens::CausalAlign::BottomRight : attnlens::CausalAlign::TopLeft;
    if (!std::isnan(scale)) o.scale = static_cast<float>(scale);
    o.return_weights = return_weights;
    o.max_elements = static_cast<std::int64_t>(max_elements);
    o.streaming = streaming;
    if (mask_kind == 1) {
      o.mask = attnlens::MaskView::boolean(reinterpret_cast<const std::uint8_t*>(mask), ms);
    } else if (mask_kind == 2) {
      o.mask = attnlens::MaskView::additive(mask, ms);
    }
    const auto run = reference ? &attnlens::attention_reference : &attnlens::attention;
    call.result = run({q, qs}, {k, ks}, {v, vs}, o);
    return -1;
  } catch (const attnlens::Error& e) {
    call.message = e.what();
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    call.message = "the WebAssembly heap could not grow to hold the result";
    return static_cast<int>(attnlens::ErrorCode::OUT_OF_MEMORY);
  } catch (const std::exception& e) {
    call.message = e.what();
    return static_cast<int>(attnlens::ErrorCode::INTERNAL);
  }
}

std::string attention_error() {
  return attention_call().message;
}

// Byte address of the last result's output (which = 0) or weights (1); 0 when absent.
double attention_result(int which) {
  const attnlens::Tensor& t =
      which == 0 ? attention_call().result.output : attention_call().result.weights;
  return t.data.empty() ? 0 : static_cast<double>(reinterpret_cast<std::uintptr_t>(t.data.data()));
}

// Frees the last result once JS has copied it out; a large staging area is freed too, a small
// one is kept for the next call (no allocation per call for the page's sizes).
void attention_release() {
  AttentionCall& call = attention_call();
  call.result = {};
  call.message.clear();
  constexpr std::size_t kKeep = 1 << 18;                                     // floats: 1 MiB
  if (call.stage.capacity() > kKeep) std::vector<float>().swap(call.stage);  // `= {}` keeps it
}

val weights_to_js(const attnlens::SelfAttentionWeights& w) {
  val out = val::object();
  out.set("wq", matrix_to_js(w.wq));
  out.set("wk", matrix_to_js(w.wk));
  out.set("wv", matrix_to_js(w.wv));
  out.set("wo", matrix_to_js(w.wo));
  if (w.bq.size()) out.set("bq", vector_to_js(w.bq));
  if (w.bk.size()) out.set("bk", vector_to_js(w.bk));
  if (w.bv.size()) out.set("bv", vector_to_js(w.bv));
  if (w.bo.size()) out.set("bo", vector_to_js(w.bo));
  return out;
}

attnlens::SelfAttentionWeights weights_from_js(const val& w, int dim) {
  attnlens::SelfAttentionWeights out;
  const auto matrix = [&](const char* name) {
    const auto data = copy_from_js<float>(w[name]);
    if (data.size() != static_cast<std::size_t>(dim) * static_cast<std::size_t>(dim)) {
      throw attnlens::Error(attnlens::ErrorCode::SHAPE_MISMATCH,
                            std::string(name) + " must hold modelDim * modelDim values");
    }
    return attnlens::RowMatrixXf(Eigen::Map<const attnlens::RowMatrixXf>(data.data(), dim, dim));
  };
  const auto bias = [&](const char* name) {
    if (w[name].isUndefined() || w[name].isNull()) return Eigen::VectorXf();
    const auto data = copy_from_js<float>(w[name]);
    return Eigen::VectorXf(
        Eigen::Map<const Eigen::VectorXf>(data.data(), static_cast<Eigen::Index>(data.size())));
  };
  out.wq = matrix("wq");
  out.wk = matrix("wk");
  out.wv = matrix("wv");
  out.wo = matrix("wo");
  out.bq = bias("bq");
  out.bk = bias("bk");
  out.bv = bias("bv");
  out.bo = bias("bo");
  return out;
}

val self_attention_init(int model_dim, int num_heads, const val& seed, const std::string& init,
                        bool bias) {
  return guarded([&] {
    attnlens::SelfAttentionConfig config;
    config.model_dim = model_dim;
    config.num_heads = num_heads;
    config.seed = seed_from_js(seed);
    config.init = attnlens::parse_init(init);
    config.bias = bias;
    const attnlens::SelfAttention layer(config);
    return weights_to_js(layer.weights());
  });
}

// Every stage of ATTNLENS_TRACE_STAGES under its JS name, and the scale.
val trace_to_js(const attnlens::Trace& t) {
  val out = val::object();
  out.set("scale", t.scale);
#define ATTNLENS_TRACE_TO_JS(member, name, shape, meaning) out.set(name, tensor_to_js(t.member));
  ATTNLENS_TRACE_STAGES(ATTNLENS_TRACE_TO_JS)
#undef ATTNLENS_TRACE_TO_JS
  return out;
}

// The trace's stages as [{ name, shape, meaning }], in data-flow order (for the .d.ts check).
val trace_stages() {
  val list = val::array();
  int i = 0;
#define ATTNLENS_TRACE_STAGE_ENTRY(member, name, shape, meaning) \
  {                                                              \
    val entry = val::object();                                   \
    entry.set("name", val(name));                                \
    entry.set("shape", val(shape));                              \
    entry.set("meaning", val(meaning));                          \
    list.set(i++, entry);                                        \
  }
  ATTNLENS_TRACE_STAGES(ATTNLENS_TRACE_STAGE_ENTRY)
#undef ATTNLENS_TRACE_STAGE_ENTRY
  return list;
}

val self_attention_forward(int model_dim, int num_heads, const val& weights, const val& x,
                           const val& x_shape, bool causal, bool trace) {
  return guarded([&] {
    const attnlens::SelfAttention layer(model_dim, num_heads, weights_from_js(weights, model_dim));
    const auto x_data = copy_from_js<float>(x);
    attnlens::ForwardOptions o;
    o.causal = causal;
    o.trace = trace;
    const auto r = layer.forward({x_data.data(), shape_from_js(x_shape)}, o);
    val out = val::object();
    if (r.trace) {
      // The trace's weights and output are the result's: copy them out once, share the arrays.
      const val trace = trace_to_js(*r.trace);
      out.set("trace", trace);
      out.set("output", trace["output"]);
      out.set("weights", trace["weights"]);
    } else {
      out.set("output", tensor_to_js(r.output));
      out.set("weights", tensor_to_js(r.weights));
    }
    return out;
  });
}

// sentence: a JS string (encoded to UTF-8 by Embind) or a Uint8Array of UTF-8 bytes.
val explain(const val& sentence, const val& opts) {
  return guarded([&] {
    std::string text;
    if (sentence.isString()) {
      text = sentence.as<std::string>();
    } else {
      const auto bytes = copy_from_js<std::uint8_t>(sentence);
      text.assign(bytes.begin(), bytes.end());
    }
    attnlens::ExplainOptions o;
    o.causal = opts["causal"].as<bool>();
    o.model_dim = opts["modelDim"].as<int>();
    o.num_heads = opts["numHeads"].as<int>();
    o.seed = seed_from_js(opts["seed"]);
    o.init = attnlens::parse_init(opts["init"].as<std::string>());
    o.positional = attnlens::parse_positional(opts["positional"].as<std::string>());
    o.max_tokens = opts["maxTokens"].as<int>();
    o.truncate = opts["truncate"].as<bool>();
    const attnlens::Explanation ex = attnlens::explain(text, o);

    val tokens = val::array();
    for (std::size_t i = 0; i < ex.tokens.size(); ++i) {
      val t = val::object();
      t.set("text", val(ex.tokens[i].text));
      t.set("byteStart", static_cast<double>(ex.tokens[i].begin));
      t.set("byteEnd", static_cast<double>(ex.tokens[i].end));
      tokens.set(i, t);
    }
    val pca = val::object();
    pca.set("original", matrix_to_js(ex.pca.original));
    pca.set("contextual", matrix_to_js(ex.pca.contextual));
    pca.set("components", matrix_to_js(ex.pca.components));
    pca.set("mean", vector_to_js(ex.pca.mean));
    val explained = val::array();
    explained.set(0, ex.pca.explained[0]);
    explained.set(1, ex.pca.explained[1]);
    pca.set("explained", explained);

    val stats = val::object();
    stats.set("totalTokens", static_cast<double>(ex.stats.total_tokens));
    stats.set("truncated", ex.stats.truncated);
    val raw = val::array();
    val scaled = val::array();
    for (std::size_t h = 0; h < ex.stats.raw_score_variance.size(); ++h) {
      raw.set(h, ex.stats.raw_score_variance[h]);
      scaled.set(h, ex.stats.scaled_score_variance[h]);
    }
    stats.set("rawScoreVariance", raw);
    stats.set("scaledScoreVariance", scaled);
    stats.set("entropy", tensor_to_js(ex.stats.entropy));

    val out = val::object();
    out.set("tokens", tokens);
    out.set("tokenEmbeddings", tensor_to_js(ex.token_embeddings));
    out.set("positions", tensor_to_js(ex.positions));
    out.set("embeddings", tensor_to_js(ex.embeddings));
    out.set("projections", weights_to_js(ex.projections));
    const val trace = trace_to_js(ex.trace);
    out.set("trace", trace);
    out.set("weights", trace["weights"]);  // the same numbers: copied out once
    out.set("meanWeights", tensor_to_js(ex.mean_weights));
    out.set("output", trace["output"]);
    out.set("contextual", tensor_to_js(ex.contextual));
    out.set("pca", pca);
    out.set("stats", stats);
    return out;
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens) {
  emscripten::constant("_version", std::string(attnlens::kVersion));
  emscripten::function("_errorCodes", &error_codes);
  emscripten::function("_limits", &limits);
  emscripten::function("_traceStages", &trace_stages);
  emscripten::function("_heapUsed", &heap_used);
  emscripten::function("_attentionStage", &attention_stage);
  emscripten::function("_attentionRun", &attention_run);
  emscripten::function("_attentionError", &attention_error);
  emscripten::function("_attentionResult", &attention_result);
  emscripten::function("_attentionRelease", &attention_release);
  emscripten::function("_selfAttentionInit", &self_attention_init);
  emscripten::function("_selfAttentionForward", &self_attention_forward);
  emscripten::function("_explain", &explain);
}
