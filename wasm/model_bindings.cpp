// Embind glue of the model module (attnlens_model.wasm): models of every family (model.hpp),
// their tokenizers and checkpoints, for wasm/model.js. No math here: every function converts JS
// values to library types, calls the library and converts the result back.
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
#include <attnlens/model.hpp>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <malloc.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <memory>
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
// The table of models and tokenizers. Every family is behind attnlens::Model and
// attnlens::Tokenizer (model.hpp): nothing below names a family, except createModel's and
// loadTokenizer's GPT-2 (the training page's models).

struct Entry {
  std::unique_ptr<attnlens::Model> model;  // null for a tokenizer alone or a cache
  std::unique_ptr<attnlens::Tokenizer> tokenizer;
  std::optional<attnlens::LrSchedule> schedule;   // setOptimizer's, when given
  std::unique_ptr<attnlens::ForwardCache> cache;  // a forward cache of model `owner`
  int owner = 0;
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

attnlens::Model& model_of(int handle) {
  Entry& e = entry_of(handle);
  if (!e.model) fail(ErrorCode::INTERNAL, {"handle ", number_text(handle), " is a tokenizer"});
  return *e.model;
}

const attnlens::Tokenizer& tokenizer_of(int handle) {
  Entry& e = entry_of(handle);
  if (!e.tokenizer) {
    fail(ErrorCode::BAD_ARGUMENT,
         {"this model has no tokenizer: load it with its tokenizer's files (or pass ids)"});
  }
  return *e.tokenizer;
}

val info_to_js(attnlens::Model& model) {
  const attnlens::ModelInfo i = model.info();
  val out = val::object();
  out.set("family", i.family);
  out.set("causal", i.causal);
  out.set("prediction", std::string(attnlens::prediction_kind_name(i.prediction)));
  out.set("hasHead", i.has_head);
  out.set("layers", i.layers);
  out.set("heads", i.heads);
  // Grouped-query heads: query head h reads K/V head h / (heads / kvHeads).
  out.set("kvHeads", i.kv_heads > 0 ? i.kv_heads : i.heads);
  out.set("dModel", i.d_model);
  out.set("headDim", i.head_dim > 0 ? i.head_dim : i.d_model / i.heads);
  out.set("context", i.context);
  out.set("vocabSize", i.vocab_size);
  out.set("typeVocabSize", i.type_vocab_size);
  out.set("positions", i.positions);
  out.set("norm", i.norm);
  // Per layer, the keys a query sees (0: every earlier one); [] when no layer has a window.
  val windows = val::array();
  for (std::size_t l = 0; l < i.windows.size(); ++l)
    windows.set(l, i.windows[l]);
  out.set("windows", windows);
  // Soft caps (Gemma 2): scores and logits pass through c · tanh(x / c); 0 when none.
  out.set("scoreSoftcap", i.score_softcap);
  out.set("logitSoftcap", i.logit_softcap);
  if (const attnlens::Gpt2Model* gpt2 = model.gpt2())
    out.set("attentionNorm", gpt2->config().attention_norm);
  return out;
}

val entry_to_js(int handle) {
  Entry& e = entry_of(handle);
  val out = val::object();
  out.set("handle", handle);
  if (e.model) {
    out.set("config", info_to_js(*e.model));
    out.set("parameters", static_cast<double>(e.model->num_parameters()));
  }
  val tokenizer = val::null();
  if (e.tokenizer) {
    tokenizer = val::object();
    tokenizer.set("kind", std::string(e.tokenizer->kind()));
    tokenizer.set("size", e.tokenizer->vocab_size());
    tokenizer.set("maskId", e.tokenizer->mask_id());
    // How the mask is written in a text: "[MASK]" (BERT, ModernBERT), "<mask>" (RoBERTa).
    const std::int32_t mask = e.tokenizer->mask_id();
    tokenizer.set("maskText", mask >= 0 ? e.tokenizer->token_text(mask) : std::string());
    tokenizer.set("unkId", e.tokenizer->unk_id());
    const std::vector<std::int32_t> special = e.tokenizer->special_ids();
    tokenizer.set("specialIds", copy_to_js(special.data(), special.size()));
    const std::vector<std::int32_t> bytes = e.tokenizer->byte_ids();
    tokenizer.set("byteIds", copy_to_js(bytes.data(), bytes.size()));
    tokenizer.set("note", e.tokenizer->note());
  }
  out.set("tokenizer", tokenizer);
  return out;
}

// Frees a model, tokenizer or cache; a model's caches go with it.
void dispose(int handle) {
  entries().erase(handle);
  for (auto it = entries().begin(); it != entries().end();) {
    it = it->second.owner == handle ? entries().erase(it) : std::next(it);
  }
}

// { cache }: the handle of a new forward cache for the model (0 when its family has nothing to
// reuse).
val create_cache(int handle) {
  return guarded([&] {
    std::unique_ptr<attnlens::ForwardCache> cache = model_of(handle).make_cache();
    int id = 0;
    if (cache) {
      Entry entry;
      entry.cache = std::move(cache);
      entry.owner = handle;
      id = add_entry(std::move(entry));
    }
    val out = val::object();
    out.set("cache", id);
    return out;
  });
}

// { tokens, reused } of a cache.
val cache_info(int handle) {
  const attnlens::ForwardCache& c = *entry_of(handle).cache;
  val out = val::object();
  out.set("tokens", static_cast<double>(c.tokens()));
  out.set("reused", static_cast<double>(c.reused()));
  return out;
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

// The family of a config.json's text: { name, causal, prediction, tokenizerFiles,
// optionalFiles } (model.js checks the folder's files against it before copying weights).
val family_to_js(const attnlens::ModelFamily& f) {
  val out = val::object();
  out.set("name", std::string(f.name));
  val types = val::array();
  for (std::size_t i = 0; i < f.model_types.size(); ++i)
    types.set(i, f.model_types[i]);
  out.set("modelTypes", types);
  out.set("causal", f.causal);
  out.set("prediction", std::string(attnlens::prediction_kind_name(f.prediction)));
  val sets = val::array();
  for (std::size_t i = 0; i < f.tokenizer_files.size(); ++i) {
    val set = val::array();
    for (std::size_t j = 0; j < f.tokenizer_files[i].size(); ++j)
      set.set(j, f.tokenizer_files[i][j]);
    sets.set(i, set);
  }
  out.set("tokenizerFiles", sets);
  val optional = val::array();
  for (std::size_t i = 0; i < f.optional_files.size(); ++i)
    optional.set(i, f.optional_files[i]);
  out.set("optionalFiles", optional);
  return out;
}

val family_of(const val& config_json) {
  return guarded([&] { return family_to_js(attnlens::family_of(text_from_js(config_json))); });
}

// Loads the staged model.safetensors `id` with the folder's text files (an object of name ->
// string or UTF-8 bytes; model.js has checked them against the family). The staged bytes are
// freed whatever happens. Returns entry_to_js() of the new model.
val load_model(int id, const val& texts) {
  val result = guarded([&] {
    const auto staged = staged_files().find(id);
    if (staged == staged_files().end())
      fail(ErrorCode::INTERNAL, {"no staged model.safetensors has id ", number_text(id)});
    const std::vector<std::uint8_t>& bytes = staged->second;
    std::map<std::string, std::string> contents;
    const val names = val::global("Object").call<val>("keys", texts);
    for (unsigned i = 0, n = names["length"].as<unsigned>(); i < n; ++i) {
      const std::string name = names[i].as<std::string>();
      contents.emplace(name, text_from_js(texts[name]));
    }
    attnlens::ModelFiles files;
    files.weights = bytes.data();
    files.weights_size = bytes.size();
    for (const auto& [name, text] : contents)
      files.texts.emplace(name, text);
    attnlens::LoadedModel loaded = attnlens::load_model(files);
    unstage(id);
    Entry entry;
    entry.model = std::move(loaded.model);
    entry.tokenizer = std::move(loaded.tokenizer);
    return entry_to_js(add_entry(std::move(entry)));
  });
  unstage(id);
  return result;
}

// A GPT-2 with GPT-2's initialisation (the training page's models). config: { layers, heads,
// dModel, context, vocabSize, attentionNorm } (each optional: Gpt2Config's defaults; JS types
// checked by model.js); seed: a number; vocab_json / merges_txt: a tokenizer, or both null.
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
      attnlens::BpeTokenizer tokenizer =
          attnlens::BpeTokenizer::from_files(text_from_js(vocab_json), text_from_js(merges_txt));
      if (tokenizer.vocab_size() > c.vocab_size) {
        fail(ErrorCode::BAD_ARGUMENT,
             {"the tokenizer has ", number_text(tokenizer.vocab_size()),
              " tokens but config.vocabSize is ", number_text(c.vocab_size)});
      }
      entry.tokenizer = attnlens::as_tokenizer(std::move(tokenizer));
    }
    entry.model = attnlens::as_model(attnlens::Gpt2Model::random(c, static_cast<std::uint64_t>(s)));
    return entry_to_js(add_entry(std::move(entry)));
  });
}

val load_tokenizer(const val& vocab_json, const val& merges_txt) {
  return guarded([&] {
    Entry entry;
    entry.tokenizer = attnlens::as_tokenizer(
        attnlens::BpeTokenizer::from_files(text_from_js(vocab_json), text_from_js(merges_txt)));
    return entry_to_js(add_entry(std::move(entry)));
  });
}

// options: { dtype: "F32" | "F16" }. Returns the checkpoint's files: model.safetensors as a
// Uint8Array, the text files as strings.
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
    const auto files = attnlens::save_model(model_of(handle), e.tokenizer.get(), options);
    val out = val::object();
    for (const auto& [name, bytes] : files) {
      if (name == "model.safetensors") {
        out.set(name, copy_to_js(bytes.data(), bytes.size()));
      } else {
        out.set(name, std::string(bytes.begin(), bytes.end()));
      }
    }
    return out;
  });
}

// ---------------------------------------------------------------------------------------------
// The tokenizer.

// text: a string; pair: a second string or null. Returns { ids: Int32Array, types, segments:
// Int32Array, begins, ends: Float64Array of byte offsets (into the text of its segment),
// special: Uint8Array }.
val encode(int handle, const val& text, const val& pair) {
  return guarded([&] {
    const attnlens::Tokenizer& t = tokenizer_of(handle);
    const std::vector<attnlens::EncodedToken> tokens =
        pair.isNull() ? t.encode(text_from_js(text))
                      : t.encode_pair(text_from_js(text), text_from_js(pair));
    const std::size_t n = tokens.size();
    std::vector<std::int32_t> ids(n), types(n), segments(n);
    std::vector<double> begins(n), ends(n);
    std::vector<std::uint8_t> special(n);
    for (std::size_t i = 0; i < n; ++i) {
      ids[i] = tokens[i].id;
      types[i] = tokens[i].type;
      segments[i] = tokens[i].segment;
      begins[i] = static_cast<double>(tokens[i].begin);
      ends[i] = static_cast<double>(tokens[i].end);
      special[i] = tokens[i].special ? 1 : 0;
    }
    val out = val::object();
    out.set("ids", copy_to_js(ids.data(), n));
    out.set("types", copy_to_js(types.data(), n));
    out.set("segments", copy_to_js(segments.data(), n));
    out.set("begins", copy_to_js(begins.data(), n));
    out.set("ends", copy_to_js(ends.data(), n));
    out.set("special", copy_to_js(special.data(), n));
    return out;
  });
}

// Returns { bytes: Uint8Array }: the tokens' text, which need not be valid UTF-8 (model.js
// decodes it with U+FFFD for a cut character).
val decode(int handle, const val& ids) {
  return guarded([&] {
    const std::string bytes = tokenizer_of(handle).decode(ids_from_js(ids));
    val out = val::object();
    out.set("bytes", copy_to_js(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
    return out;
  });
}

// Returns { texts: [Uint8Array] }: how each token of `ids` reads on its own.
val token_texts(int handle, const val& ids) {
  return guarded([&] {
    const attnlens::Tokenizer& t = tokenizer_of(handle);
    val texts = val::array();
    const std::vector<std::int32_t> v = ids_from_js(ids);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::string bytes = t.token_text(v[i]);
      texts.set(i, copy_to_js(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
    }
    val out = val::object();
    out.set("texts", texts);
    return out;
  });
}

// ---------------------------------------------------------------------------------------------
// The model.

// ids (and types and mask when not null): Int32Arrays of batch x length, made by model.js.
struct Inputs {
  std::vector<std::int32_t> ids, types, mask;
  attnlens::ModelInputs view;
};

Inputs inputs_from_js(const val& ids, int batch, int length, const val& types, const val& mask) {
  Inputs in;
  in.ids = ids_from_js(ids);
  in.view.ids = attnlens::TokenIds{in.ids.data(), batch, length};
  if (!types.isNull()) {
    in.types = ids_from_js(types);
    in.view.token_types = in.types.data();
  }
  if (!mask.isNull()) {
    in.mask = ids_from_js(mask);
    in.view.attention_mask = in.mask.data();
  }
  return in;
}

// options: { attention, hiddenStates, logits: booleans; logitRows: Float64Array or null;
// attentionFrom: an integer; ablate: Int32Array of [layer, head] pairs or null; ablation: "zero"
// or "mean"; valueWeighted: a boolean } (JS types checked by model.js); cache: a cache handle of
// this model (model.js checks), or 0. Returns { logits?, attention?, hiddenStates? } as the
// library's shapes.
// options.ablate ([layer, head] pairs flat, an Int32Array; model.js checked the list's shape and
// kinds) and options.ablation ("zero" | "mean"); no heads when ablate is null.
attnlens::Ablation ablation_from_js(const val& options) {
  attnlens::Ablation out;
  const val ablate = options["ablate"];
  if (ablate.isNull()) return out;
  const std::vector<std::int32_t> pairs = ids_from_js(ablate);
  for (std::size_t i = 0; i + 1 < pairs.size(); i += 2)
    out.heads.push_back({pairs[i], pairs[i + 1]});
  out.kind = options["ablation"].as<std::string>() == "mean" ? attnlens::AblationKind::Mean
                                                             : attnlens::AblationKind::Zero;
  return out;
}

// Rows b · T + t (a Float64Array or null: none).
std::vector<std::int64_t> rows_from_js(const val& rows) {
  std::vector<std::int64_t> out;
  if (rows.isNull() || rows.isUndefined()) return out;
  std::vector<double> r(rows["length"].as<unsigned>());
  val(emscripten::typed_memory_view(r.size(), r.data())).call<void>("set", rows);
  for (const double x : r)
    out.push_back(static_cast<std::int64_t>(x));
  return out;
}

val forward(int handle, const val& ids, int batch, int length, const val& types, const val& mask,
            const val& options, int cache) {
  return guarded([&] {
    const Inputs in = inputs_from_js(ids, batch, length, types, mask);
    attnlens::ModelForwardOptions o;
    o.attention = options["attention"].as<bool>();
    o.hidden_states = options["hiddenStates"].as<bool>();
    o.logits = options["logits"].as<bool>();
    o.attention_from = static_cast<std::int64_t>(options["attentionFrom"].as<double>());
    o.value_weighted = options["valueWeighted"].as<bool>();
    o.ablation = ablation_from_js(options);
    o.logit_rows = rows_from_js(options["logitRows"]);
    o.head_output_rows = rows_from_js(options["headOutputRows"]);
    attnlens::Model& model = model_of(handle);
    const attnlens::ModelOutput r =
        cache == 0 ? model.forward(in.view, o) : model.forward(in.view, o, *entry_of(cache).cache);
    val out = val::object();
    if (o.logits) out.set("logits", tensor_to_js(r.logits));
    if (o.attention) out.set("attention", tensor_to_js(r.attention));
    if (o.hidden_states) out.set("hiddenStates", tensor_to_js(r.hidden_states));
    if (o.value_weighted) {
      out.set("valueNorms", tensor_to_js(r.value_norms));
      out.set("valueWeighted", tensor_to_js(r.value_weighted));
    }
    if (!o.head_output_rows.empty()) out.set("headOutputs", tensor_to_js(r.head_outputs));
    return out;
  });
}

// The logit lens: logits { data, shape: [R, V] } of rows (a Float32Array of R · d_model values of
// the residual stream; model.js checked its length).
val unembed(int handle, const val& rows, int count) {
  return guarded([&] {
    const unsigned n = rows["length"].as<unsigned>();
    attnlens::Tensor t({count, count > 0 ? static_cast<std::int64_t>(n) / count : 0});
    val(emscripten::typed_memory_view(t.data.size(), t.data.data())).call<void>("set", rows);
    return tensor_to_js(model_of(handle).unembed(t));
  });
}

// Direct logit attribution of `token` (-1: the model's first) at row b · T + t of ids:
// { row, token, logit, scale, embeddings, heads: { data, shape: [layers, heads] },
// attentionBias, mlps: { data, shape: [layers] }, constant, total }.
val attribute(int handle, const val& ids, int batch, int length, double row, int token,
              const val& options) {
  return guarded([&] {
    const Inputs in = inputs_from_js(ids, batch, length, val::null(), val::null());
    attnlens::Ablation ablation = ablation_from_js(options);
    const attnlens::LogitAttribution a =
        model_of(handle).attribute(in.view, static_cast<std::int64_t>(row), token, ablation);
    val out = val::object();
    out.set("row", static_cast<double>(a.row));
    out.set("token", a.token);
    out.set("logit", a.logit);
    out.set("scale", a.scale);
    out.set("embeddings", a.embeddings);
    out.set("heads", tensor_to_js(a.heads));
    out.set("attentionBias", tensor_to_js(a.attention_bias));
    out.set("mlps", tensor_to_js(a.mlps));
    out.set("constant", a.constant);
    out.set("total", a.total());
    return out;
  });
}

// Returns { loss, grads: { "<tensor name>": { data, shape } } } for ids and targets, both
// batch x length (the family's objective; model.js shifted a causal batch already).
val gradients(int handle, const val& ids, const val& targets, int batch, int length,
              const val& types, const val& mask) {
  return guarded([&] {
    const Inputs in = inputs_from_js(ids, batch, length, types, mask);
    const std::vector<std::int32_t> y = ids_from_js(targets);
    attnlens::Model& model = model_of(handle);
    const float loss =
        model.loss_and_gradients(in.view, attnlens::TokenIds{y.data(), batch, length});
    val grads = val::object();
    for (const auto& [name, tensor] : model.gradients())
      grads.set(name, tensor_to_js(tensor));
    val out = val::object();
    out.set("loss", loss);
    out.set("grads", grads);
    return out;
  });
}

// One AdamW step on inputs and targets, both batch x length. lr: a number, or null to take it
// from setOptimizer's schedule at the current step. Returns { loss, lr, step, gradNorm }.
val train_step(int handle, const val& ids, const val& targets, int batch, int length,
               const val& types, const val& mask, const val& lr) {
  return guarded([&] {
    const Inputs in = inputs_from_js(ids, batch, length, types, mask);
    const std::vector<std::int32_t> y = ids_from_js(targets);
    Entry& e = entry_of(handle);
    attnlens::Model& model = model_of(handle);
    float rate = 0;
    if (!lr.isNull()) {
      rate = float_from_js(lr, "lr");
    } else if (e.schedule) {
      rate = attnlens::learning_rate(*e.schedule, model.steps());
    } else {
      fail(ErrorCode::BAD_ARGUMENT,
           {"trainStep needs options.lr, or a schedule given to setOptimizer()"});
    }
    const float loss = model.train_step(in.view, attnlens::TokenIds{y.data(), batch, length}, rate);
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
  const attnlens::Model& model = model_of(handle);
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
    attnlens::Model& model = model_of(handle);
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

// Bytes currently allocated by malloc in the wasm heap (for leak tests). mallinfo's fields are
// ints: read as unsigned, so that more than 2 GiB in use (GPT-2 medium with its weights packed:
// 2.6 GB) is not negative; wasm32's heap is at most 4 GiB.
double heap_used() {
  return static_cast<double>(static_cast<unsigned>(mallinfo().uordblks));
}

// What model.js needs to know of the library: limits and defaults.
val description() {
  val limits = val::object();
  limits.set("maxTextBytes", static_cast<double>(attnlens::kMaxBpeTextBytes));
  limits.set("maxElements", static_cast<double>(attnlens::kDefaultMaxElements));
  val defaults = val::object();
  defaults.set("adamw", adamw_to_js(attnlens::AdamWConfig{}));
  defaults.set("schedule", schedule_to_js(attnlens::LrSchedule{}));
  const attnlens::Gpt2Config gpt2;
  val config = val::object();
  config.set("layers", gpt2.layers);
  config.set("heads", gpt2.heads);
  config.set("dModel", gpt2.d_model);
  config.set("context", gpt2.context);
  config.set("vocabSize", gpt2.vocab_size);
  config.set("attentionNorm", gpt2.attention_norm);
  defaults.set("config", config);
  val out = val::object();
  out.set("version", std::string(attnlens::kVersion));
  out.set("limits", limits);
  out.set("defaults", defaults);
  val families = val::array();
  for (std::size_t i = 0; i < attnlens::model_families().size(); ++i)
    families.set(i, family_to_js(attnlens::model_families()[i]));
  out.set("families", families);
  return out;
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlens_model) {
  emscripten::function("_description", &description);
  emscripten::function("_setComputeThreads", &attnlens::set_compute_threads);
  emscripten::function("_computeThreads", &attnlens::compute_threads);
  emscripten::function("_heapUsed", &heap_used);
  emscripten::function("_familyOf", &family_of);
  emscripten::function("_stageFile", &stage_file);
  emscripten::function("_unstage", &unstage);
  emscripten::function("_loadModel", &load_model);
  emscripten::function("_createModel", &create_model);
  emscripten::function("_loadTokenizer", &load_tokenizer);
  emscripten::function("_dispose", &dispose);
  emscripten::function("_createCache", &create_cache);
  emscripten::function("_cacheInfo", &cache_info);
  emscripten::function("_save", &save);
  emscripten::function("_encode", &encode);
  emscripten::function("_decode", &decode);
  emscripten::function("_tokenTexts", &token_texts);
  emscripten::function("_forward", &forward);
  emscripten::function("_unembed", &unembed);
  emscripten::function("_attribute", &attribute);
  emscripten::function("_gradients", &gradients);
  emscripten::function("_trainStep", &train_step);
  emscripten::function("_optimizer", &optimizer);
  emscripten::function("_setOptimizer", &set_optimizer);
}
