// Embind glue of the model module (attnlens_model.wasm): GPT-2 models, their tokenizer and
// checkpoints, for wasm/model.js. No math here: every function converts JS values to library
// types, calls the library and converts the result back.
//
// Conventions (as bindings.cpp):
//   - Raw bindings start with an underscore; model.js checks JS types and wraps them. Every
//     other rule (sizes, id ranges, file contents, optimizer settings) is the library's.
//   - Models and tokenizers live here, in a table of handles (small integers) that model.js
//     holds; _dispose(handle) frees one. JS never holds a view into the wasm heap: results are
//     copied out with slice() at once.
//   - Errors are returned, not thrown: a result { errorCode, message } (a JS exception thrown
//     through wasm frames would skip C++ destructors and leak).
//   - model.safetensors (up to hundreds of MB) is not passed as a JS value: model.js asks for a
//     staging buffer of its own (_stageFile gives an id and an address), copies the file into it
//     in chunks (reporting progress), and _loadModel reads it there and frees it (_unstage frees
//     it when the load fails before).
//   - Typed arrays from JS are plain views that model.js made (api.js readTyped): their length
//     is their real one.
#include <attnlens/attnlens.hpp>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using emscripten::val;

namespace {

using attnlens::ErrorCode;

[[noreturn]] void fail(ErrorCode code, std::initializer_list<std::string_view> parts) {
  std::string message;
  for (std::string_view part : parts)
    message += part;
  throw attnlens::Error(code, message);
}

std::string number_text(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.15g", x);
  return buffer;
}

template <typename T>
val copy_to_js(const T* data, std::size_t n) {
  return val(emscripten::typed_memory_view(n, data)).call<val>("slice");
}

val shape_to_js(const attnlens::Shape& shape) {
  val array = val::array();
  for (std::size_t i = 0; i < shape.size(); ++i)
    array.set(i, static_cast<double>(shape[i]));
  return array;
}

val tensor_to_js(const attnlens::Tensor& t) {
  val out = val::object();
  out.set("data", copy_to_js(t.data.data(), t.data.size()));
  out.set("shape", shape_to_js(t.shape));
  return out;
}

// Runs `body`, turning any C++ exception into an error result { errorCode, message }.
template <typename Body>
val guarded(Body&& body) {
  const auto error = [](ErrorCode code, const char* message) {
    val out = val::object();
    out.set("errorCode", std::string(attnlens::error_code_name(code)));
    out.set("message", std::string(message));
    return out;
  };
  try {
    return body();
  } catch (const attnlens::Error& e) {
    return error(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return error(ErrorCode::OUT_OF_MEMORY, "the WebAssembly heap could not grow to hold the model");
  } catch (const std::length_error&) {
    // A container asked for more than a 32-bit address space can hold (std::vector::max_size).
    return error(
        ErrorCode::TOO_LARGE,
        "the model's sizes need more memory than a WebAssembly module can address (4 GiB)");
  } catch (const std::exception& e) {
    return error(ErrorCode::INTERNAL, e.what());
  }
}

// A JS string (encoded to UTF-8 by Embind) or a Uint8Array of UTF-8 bytes, as bytes.
std::string text_from_js(const val& text) {
  if (text.isString()) return text.as<std::string>();
  std::string bytes(text["length"].as<unsigned>(), '\0');
  val(emscripten::typed_memory_view(bytes.size(), reinterpret_cast<std::uint8_t*>(bytes.data())))
      .call<void>("set", text);
  return bytes;
}

// An Int32Array from JS (model.js made it) as a vector.
std::vector<std::int32_t> ids_from_js(const val& ids) {
  std::vector<std::int32_t> out(ids["length"].as<unsigned>());
  val(emscripten::typed_memory_view(out.size(), out.data())).call<void>("set", ids);
  return out;
}

// An integer the library takes as an int (model.js has checked it is a JS number).
int int_from_js(const val& x, const char* name) {
  const double d = x.as<double>();
  if (!(std::floor(d) == d) || std::abs(d) > 2147483647.0) {
    fail(ErrorCode::BAD_ARGUMENT,
         {name, " must be an integer that fits 32 bits; got ", number_text(d)});
  }
  return static_cast<int>(d);
}

std::int64_t int64_from_js(const val& x, const char* name) {
  const double d = x.as<double>();
  if (!(std::floor(d) == d) || std::abs(d) > 9007199254740991.0) {
    fail(ErrorCode::BAD_ARGUMENT, {name, " must be a safe integer; got ", number_text(d)});
  }
  return static_cast<std::int64_t>(d);
}

// A float setting: finite in float32 (the library checks its range).
float float_from_js(const val& x, const char* name) {
  const double d = x.as<double>();
  const auto f = static_cast<float>(d);
  if (!std::isfinite(f)) {
    fail(ErrorCode::BAD_ARGUMENT,
         {name, " must be a finite number (in float32); got ", number_text(d)});
  }
  return f;
}

// ---------------------------------------------------------------------------------------------
// The table of models and tokenizers.

struct Entry {
  std::optional<attnlens::Gpt2Model> model;  // absent for a tokenizer alone
  std::optional<attnlens::BpeTokenizer> tokenizer;
  std::optional<attnlens::LrSchedule> schedule;  // setOptimizer's, when given
};

std::map<int, Entry>& entries() {
  static std::map<int, Entry> table;
  return table;
}

int add_entry(Entry entry) {
  static int next = 1;
  entries().emplace(next, std::move(entry));
  return next++;
}

Entry& entry_of(int handle) {
  const auto it = entries().find(handle);
  if (it == entries().end())
    fail(ErrorCode::INTERNAL, {"no model has handle ", number_text(handle)});
  return it->second;
}

attnlens::Gpt2Model& model_of(int handle) {
  Entry& e = entry_of(handle);
  if (!e.model) fail(ErrorCode::INTERNAL, {"handle ", number_text(handle), " is a tokenizer"});
  return *e.model;
}

const attnlens::BpeTokenizer& tokenizer_of(int handle) {
  Entry& e = entry_of(handle);
  if (!e.tokenizer) {
    fail(ErrorCode::BAD_ARGUMENT,
         {"this model has no tokenizer: load it with vocab.json and merges.txt (or pass ids)"});
  }
  return *e.tokenizer;
}

val config_to_js(const attnlens::Gpt2Config& c) {
  val out = val::object();
  out.set("layers", c.layers);
  out.set("heads", c.heads);
  out.set("dModel", c.d_model);
  out.set("context", c.context);
  out.set("vocabSize", c.vocab_size);
  out.set("attentionNorm", c.attention_norm);
  return out;
}

val entry_to_js(int handle) {
  const Entry& e = entry_of(handle);
  val out = val::object();
  out.set("handle", handle);
  if (e.model) {
    out.set("config", config_to_js(e.model->config()));
    out.set("parameters", static_cast<double>(e.model->num_parameters()));
  }
  out.set("tokenizerSize", e.tokenizer ? e.tokenizer->vocab_size() : 0);
  return out;
}

void dispose(int handle) {
  entries().erase(handle);
}

// ---------------------------------------------------------------------------------------------
// Loading and creating.

// model.safetensors of each load in flight, by staging id: every load has its own buffer, so
// two loads never see each other's bytes, and a failed load frees only its own.
std::map<int, std::vector<std::uint8_t>>& staged_files() {
  static std::map<int, std::vector<std::uint8_t>> files;
  return files;
}

// A new staging buffer of `size` bytes for one load's model.safetensors (JS fills all of it):
// { id, address }, or null when the heap cannot grow to hold it.
val stage_file(double size) {
  static int next = 1;
  std::vector<std::uint8_t> bytes;
  try {
    bytes.resize(static_cast<std::size_t>(size));
  } catch (const std::exception&) {  // std::bad_alloc, or std::length_error past max_size()
    return val::null();
  }
  const int id = next++;
  const auto address = static_cast<double>(reinterpret_cast<std::uintptr_t>(bytes.data()));
  staged_files().emplace(id, std::move(bytes));
  val out = val::object();
  out.set("id", id);
  out.set("address", address);
  return out;
}

// Frees a staging buffer (nothing if `id` was consumed or freed already).
void unstage(int id) {
  staged_files().erase(id);
}

// Loads the staged model.safetensors `id` with config.json and, when both are not null,
// vocab.json and merges.txt (strings or UTF-8 bytes). The staged bytes are freed whatever
// happens. Returns entry_to_js() of the new model.
val load_model(int id, const val& config_json, const val& vocab_json, const val& merges_txt) {
  val result = guarded([&] {
    const auto staged = staged_files().find(id);
    if (staged == staged_files().end())
      fail(ErrorCode::INTERNAL, {"no staged model.safetensors has id ", number_text(id)});
    const std::vector<std::uint8_t>& bytes = staged->second;
    const std::string config = text_from_js(config_json);
    std::optional<std::string> vocab;
    std::optional<std::string> merges;
    if (!vocab_json.isNull()) vocab = text_from_js(vocab_json);
    if (!merges_txt.isNull()) merges = text_from_js(merges_txt);
    attnlens::CheckpointFileViews files;
    files.model_safetensors = bytes.data();
    files.model_safetensors_size = bytes.size();
    files.config_json = config;
    if (vocab) files.vocab_json = *vocab;
    if (merges) files.merges_txt = *merges;
    attnlens::Checkpoint checkpoint = attnlens::load_checkpoint(files);
    unstage(id);
    Entry entry;
    entry.model = std::move(checkpoint.model);
    entry.tokenizer = std::move(checkpoint.tokenizer);
    return entry_to_js(add_entry(std::move(entry)));
  });
  unstage(id);
  return result;
}

// config: { layers, heads, dModel, context, vocabSize, attentionNorm } (each optional:
// Gpt2Config's defaults; JS types checked by model.js);
// seed: a number; vocab_json / merges_txt: a tokenizer for the model, or both null.
val create_model(const val& config, const val& seed, const val& vocab_json, const val& merges_txt) {
  return guarded([&] {
    attnlens::Gpt2Config c;
    const auto given = [&](const char* key) { return !config[key].isUndefined(); };
    if (given("layers")) c.layers = int_from_js(config["layers"], "config.layers");
    if (given("heads")) c.heads = int_from_js(config["heads"], "config.heads");
    if (given("dModel")) c.d_model = int_from_js(config["dModel"], "config.dModel");
    if (given("context")) c.context = int_from_js(config["context"], "config.context");
    if (given("vocabSize")) c.vocab_size = int_from_js(config["vocabSize"], "config.vocabSize");
    if (given("attentionNorm")) c.attention_norm = config["attentionNorm"].as<bool>();
    const double s = seed.as<double>();
    if (!(std::floor(s) == s) || s < 0 || s > 9007199254740991.0) {
      fail(ErrorCode::BAD_ARGUMENT,
           {"seed must be an integer from 0 to 2^53 - 1; got ", number_text(s)});
    }
    Entry entry;
    if (!vocab_json.isNull()) {
      entry.tokenizer =
          attnlens::BpeTokenizer::from_files(text_from_js(vocab_json), text_from_js(merges_txt));
      if (entry.tokenizer->vocab_size() > c.vocab_size) {
        fail(ErrorCode::BAD_ARGUMENT,
             {"the tokenizer has ", number_text(entry.tokenizer->vocab_size()),
              " tokens but config.vocabSize is ", number_text(c.vocab_size)});
      }
    }
    entry.model = attnlens::Gpt2Model::random(c, static_cast<std::uint64_t>(s));
    return entry_to_js(add_entry(std::move(entry)));
  });
}

val load_tokenizer(const val& vocab_json, const val& merges_txt) {
  return guarded([&] {
    Entry entry;
    entry.tokenizer =
        attnlens::BpeTokenizer::from_files(text_from_js(vocab_json), text_from_js(merges_txt));
    return entry_to_js(add_entry(std::move(entry)));
  });
}

// options: { dtype: "F32" | "F16" }. Returns the checkpoint's files: model.safetensors as a
// Uint8Array, the rest as strings (vocab.json and merges.txt only with a tokenizer).
val save(int handle, const val& dtype) {
  return guarded([&] {
    Entry& e = entry_of(handle);
    attnlens::CheckpointSaveOptions options;
    const std::string d = dtype.as<std::string>();
    if (d == "F16") {
      options.dtype = attnlens::Dtype::F16;
    } else if (d != "F32") {
      fail(ErrorCode::BAD_ARGUMENT, {"dtype must be \"F32\" or \"F16\"; got \"", d, "\""});
    }
    const attnlens::CheckpointFiles files =
        attnlens::save_checkpoint(model_of(handle), e.tokenizer ? &*e.tokenizer : nullptr, options);
    val out = val::object();
    out.set("model.safetensors",
            copy_to_js(files.model_safetensors.data(), files.model_safetensors.size()));
    out.set("config.json", files.config_json);
    if (e.tokenizer) {
      out.set("vocab.json", files.vocab_json);
      out.set("merges.txt", files.merges_txt);
    }
    return out;
  });
}

// ---------------------------------------------------------------------------------------------
// The tokenizer.

val encode(int handle, const val& text) {
  return guarded([&] {
    const std::vector<std::int32_t> ids = tokenizer_of(handle).encode(text_from_js(text));
    val out = val::object();
    out.set("ids", copy_to_js(ids.data(), ids.size()));
    return out;
  });
}

// Returns { ids: Int32Array, begins, ends: Float64Array of byte offsets }.
val tokens(int handle, const val& text) {
  return guarded([&] {
    const std::vector<attnlens::BpeToken> t = tokenizer_of(handle).tokens(text_from_js(text));
    std::vector<std::int32_t> ids(t.size());
    std::vector<double> begins(t.size());
    std::vector<double> ends(t.size());
    for (std::size_t i = 0; i < t.size(); ++i) {
      ids[i] = t[i].id;
      begins[i] = static_cast<double>(t[i].begin);
      ends[i] = static_cast<double>(t[i].end);
    }
    val out = val::object();
    out.set("ids", copy_to_js(ids.data(), ids.size()));
    out.set("begins", copy_to_js(begins.data(), begins.size()));
    out.set("ends", copy_to_js(ends.data(), ends.size()));
    return out;
  });
}

// Returns { bytes: Uint8Array }: the tokens' bytes, which need not be valid UTF-8 (model.js
// decodes them with U+FFFD for a cut character).
val decode(int handle, const val& ids) {
  return guarded([&] {
    const std::vector<std::int32_t> v = ids_from_js(ids);
    const std::string bytes = tokenizer_of(handle).decode(v);
    val out = val::object();
    out.set("bytes", copy_to_js(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
    return out;
  });
}

// ---------------------------------------------------------------------------------------------
// The model.

attnlens::TokenIds token_ids(const std::vector<std::int32_t>& ids, int batch, int length) {
  return {ids.data(), batch, length};
}

// ids: Int32Array of batch x length ids. options: { attention, residuals } booleans (model.js
// made them). Returns { logits, attention?, residuals? } as the library's shapes.
val forward(int handle, const val& ids, int batch, int length, bool attention, bool residuals) {
  return guarded([&] {
    const std::vector<std::int32_t> v = ids_from_js(ids);
    attnlens::Gpt2ForwardOptions o;
    o.attention = attention;
    o.residuals = residuals;
    const attnlens::Gpt2Output r = model_of(handle).forward(token_ids(v, batch, length), o);
    val out = val::object();
    out.set("logits", tensor_to_js(r.logits));
    if (attention) out.set("attention", tensor_to_js(r.attention));
    if (residuals) out.set("residuals", tensor_to_js(r.residuals));
    return out;
  });
}

// Returns { loss, grads: { "<tensor name>": { data, shape } } } for ids and targets, both
// batch x length.
val gradients(int handle, const val& ids, const val& targets, int batch, int length) {
  return guarded([&] {
    const std::vector<std::int32_t> x = ids_from_js(ids);
    const std::vector<std::int32_t> y = ids_from_js(targets);
    attnlens::Gpt2Model& model = model_of(handle);
    const float loss =
        model.loss_and_gradients(token_ids(x, batch, length), token_ids(y, batch, length));
    val grads = val::object();
    for (const auto& [name, tensor] : model.gradients())
      grads.set(name, tensor_to_js(tensor));
    val out = val::object();
    out.set("loss", loss);
    out.set("grads", grads);
    return out;
  });
}

// One AdamW step on batch x (length + 1) ids. lr: a number, or null to take it from
// setOptimizer's schedule at the current step. Returns { loss, lr, step, gradNorm }.
val train_step(int handle, const val& batch_ids, int batch, int length_plus_one, const val& lr) {
  return guarded([&] {
    const std::vector<std::int32_t> v = ids_from_js(batch_ids);
    Entry& e = entry_of(handle);
    attnlens::Gpt2Model& model = model_of(handle);
    float rate = 0;
    if (!lr.isNull()) {
      rate = float_from_js(lr, "lr");
    } else if (e.schedule) {
      rate = attnlens::learning_rate(*e.schedule, model.steps());
    } else {
      fail(ErrorCode::BAD_ARGUMENT,
           {"trainStep needs options.lr, or a schedule given to setOptimizer()"});
    }
    const float loss = model.train_step(token_ids(v, batch, length_plus_one), rate);
    val out = val::object();
    out.set("loss", loss);
    out.set("lr", rate);
    out.set("step", static_cast<double>(model.steps()));
    out.set("gradNorm", model.last_grad_norm());
    return out;
  });
}

val adamw_to_js(const attnlens::AdamWConfig& c) {
  val out = val::object();
  out.set("beta1", c.beta1);
  out.set("beta2", c.beta2);
  out.set("eps", c.eps);
  out.set("weightDecay", c.weight_decay);
  out.set("maxGradNorm", c.max_grad_norm);
  return out;
}

val schedule_to_js(const attnlens::LrSchedule& s) {
  val out = val::object();
  out.set("maxLr", s.max_lr);
  out.set("minLr", s.min_lr);
  out.set("warmupSteps", static_cast<double>(s.warmup_steps));
  out.set("totalSteps", static_cast<double>(s.total_steps));
  return out;
}

// Returns { adamw: {...}, schedule: {...} | null, steps }: the model's optimizer settings.
val optimizer_to_js(int handle) {
  const Entry& e = entry_of(handle);
  const attnlens::Gpt2Model& model = model_of(handle);
  val out = val::object();
  out.set("adamw", adamw_to_js(model.optimizer_config()));
  out.set("schedule", e.schedule ? schedule_to_js(*e.schedule) : val::null());
  out.set("steps", static_cast<double>(model.steps()));
  return out;
}

val optimizer(int handle) {
  return guarded([&] { return optimizer_to_js(handle); });
}

// options: { beta1, beta2, eps, weightDecay, maxGradNorm, schedule: { maxLr, minLr,
// warmupSteps, totalSteps } | null }, each optional: an absent setting keeps its value (the
// library's default at first); schedule null removes the schedule. Returns the settings.
val set_optimizer(int handle, const val& options) {
  return guarded([&] {
    Entry& e = entry_of(handle);
    attnlens::Gpt2Model& model = model_of(handle);
    attnlens::AdamWConfig c = model.optimizer_config();
    const auto given = [&](const val& o, const char* key) { return !o[key].isUndefined(); };
    if (given(options, "beta1")) c.beta1 = float_from_js(options["beta1"], "beta1");
    if (given(options, "beta2")) c.beta2 = float_from_js(options["beta2"], "beta2");
    if (given(options, "eps")) c.eps = float_from_js(options["eps"], "eps");
    if (given(options, "weightDecay")) {
      c.weight_decay = float_from_js(options["weightDecay"], "weightDecay");
    }
    if (given(options, "maxGradNorm")) {
      c.max_grad_norm = float_from_js(options["maxGradNorm"], "maxGradNorm");
    }
    std::optional<attnlens::LrSchedule> schedule = e.schedule;
    if (given(options, "schedule")) {
      const val s = options["schedule"];
      if (s.isNull()) {
        schedule.reset();
      } else {
        attnlens::LrSchedule l = schedule.value_or(attnlens::LrSchedule{});
        if (given(s, "maxLr")) l.max_lr = float_from_js(s["maxLr"], "schedule.maxLr");
        if (given(s, "minLr")) l.min_lr = float_from_js(s["minLr"], "schedule.minLr");
        if (given(s, "warmupSteps")) {
          l.warmup_steps = int64_from_js(s["warmupSteps"], "schedule.warmupSteps");
        }
        if (given(s, "totalSteps")) {
          l.total_steps = int64_from_js(s["totalSteps"], "schedule.totalSteps");
        }
        attnlens::validate(l);
        schedule = l;
      }
    }
    model.set_optimizer(c);
    e.schedule = schedule;
    return optimizer_to_js(handle);
  });
}

// Bytes currently allocated by malloc in the wasm heap (for leak tests).
double heap_used() {
  return static_cast<double>(mallinfo().uordblks);
}

// What model.js needs to know of the library: limits and defaults.
val description() {
  val limits = val::object();
  limits.set("maxTextBytes", static_cast<double>(attnlens::kMaxBpeTextBytes));
  limits.set("maxElements", static_cast<double>(attnlens::kDefaultMaxElements));
  val defaults = val::object();
  defaults.set("adamw", adamw_to_js(attnlens::AdamWConfig{}));
  defaults.set("schedule", schedule_to_js(attnlens::LrSchedule{}));
  defaults.set("config", config_to_js(attnlens::Gpt2Config{}));
  val out = val::object();
  out.set("version", std::string(attnlens::kVersion));
  out.set("limits", limits);
  out.set("defaults", defaults);
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_model) {
  emscripten::function("_description", &description);
  emscripten::function("_heapUsed", &heap_used);
  emscripten::function("_stageFile", &stage_file);
  emscripten::function("_unstage", &unstage);
  emscripten::function("_loadModel", &load_model);
  emscripten::function("_createModel", &create_model);
  emscripten::function("_loadTokenizer", &load_tokenizer);
  emscripten::function("_dispose", &dispose);
  emscripten::function("_save", &save);
  emscripten::function("_encode", &encode);
  emscripten::function("_tokens", &tokens);
  emscripten::function("_decode", &decode);
  emscripten::function("_forward", &forward);
  emscripten::function("_gradients", &gradients);
  emscripten::function("_trainStep", &train_step);
  emscripten::function("_optimizer", &optimizer);
  emscripten::function("_setOptimizer", &set_optimizer);
}
