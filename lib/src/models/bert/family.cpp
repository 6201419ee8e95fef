// BERT, DistilBERT and RoBERTa behind the model interface: config.json, model.safetensors and
// the tokenizer's files (WordPiece, or RoBERTa's byte-level BPE).
#include "models/bert/family.hpp"

#include "core/check.hpp"
#include "io/json.hpp"
#include "models/bert/layout.hpp"
#include "nn/causal_rows.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>

namespace attnlens {
namespace {

using detail::JsonValue;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

int size_key(const JsonValue& root, std::string_view key, std::string_view file_name,
             std::string_view family, int lo = 1) {
  const JsonValue* value = root.find(key);
  if (value == nullptr) {
    detail::fail(ErrorCode::BAD_FILE, file_name, ": the key \"", key, "\" is missing; a ", family,
                 " config gives it");
  }
  if (!value->is_integer() || value->as_integer() < lo || value->as_integer() > INT_MAX) {
    detail::fail(ErrorCode::BAD_FILE, file_name, ": \"", key, "\" must be an integer >= ", lo,
                 ", not ", value->is_number() ? "the number given" : value->kind_name());
  }
  return static_cast<int>(value->as_integer());
}

const std::string* string_key(const JsonValue& root, std::string_view key,
                              std::string_view file_name) {
  const JsonValue* value = root.find(key);
  if (value == nullptr || value->is_null()) return nullptr;
  if (!value->is_string()) {
    detail::fail(ErrorCode::BAD_FILE, file_name, ": \"", key, "\" must be a string, not ",
                 value->kind_name());
  }
  return &value->as_string();
}

void require_false(const JsonValue& root, std::string_view key, std::string_view file_name,
                   std::string_view why) {
  const JsonValue* value = root.find(key);
  if (value != nullptr && !(value->is_bool() && !value->as_bool())) {
    detail::fail(ErrorCode::BAD_FILE, file_name, ": \"", key, "\" must be false: ", why);
  }
}

std::string number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.7g", x);
  std::string s = buffer;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

class BertAdapter final : public Model {
 public:
  explicit BertAdapter(BertModel model) : model_(std::move(model)) {}
  using Model::forward;

  ModelInfo info() const override {
    const BertConfig& c = model_.config();
    ModelInfo i;
    i.family = detail::bert_names(c.flavor).family;
    i.causal = false;
    i.prediction = PredictionKind::MaskedToken;
    i.has_head = c.mlm_head;
    i.layers = c.layers;
    i.heads = c.heads;
    i.d_model = c.d_model;
    i.context = c.context - c.position_offset;  // tokens, not position rows
    i.vocab_size = c.vocab_size;
    i.type_vocab_size = c.type_vocab_size;
    return i;
  }
  std::int64_t num_parameters() const override { return model_.num_parameters(); }
  ModelOutput forward(const ModelInputs& in, const ModelForwardOptions& options) override {
    BertForwardOptions o;
    o.attention = options.attention;
    o.hidden_states = options.hidden_states;
    o.logits = options.logits && model_.config().mlm_head;
    o.logit_rows = options.logit_rows;
    o.max_elements = options.max_elements;
    o.ablation = options.ablation;
    o.value_weighted = options.value_weighted;
    o.head_output_rows = options.head_output_rows;
    if (options.logits && !model_.config().mlm_head && !options.logit_rows.empty()) {
      o.logits = true;  // asked for rows explicitly: say there is no head
    }
    detail::check_attention_from(options.attention_from, in.ids.length);
    BertOutput r = model_.forward(BertInputs{in.ids, in.token_types, in.attention_mask}, o);
    return ModelOutput{std::move(r.logits),
                       detail::attention_rows_from(std::move(r.attention), options.attention_from),
                       std::move(r.hidden_states),
                       std::move(r.value_norms),
                       std::move(r.value_weighted),
                       std::move(r.head_outputs)};
  }
  Tensor unembed(const Tensor& rows) override { return model_.unembed(rows); }
  LogitAttribution attribute(const ModelInputs&, std::int64_t, std::int32_t,
                             const Ablation&) override {
    detail::fail(ErrorCode::BAD_ARGUMENT,
                 "direct logit attribution splits the residual stream before a final norm; ",
                 detail::bert_names(model_.config().flavor).name,
                 " normalises after every layer, so its layers' writes do not add up to a logit "
                 "(the logit lens, unembed(), reads it layer by layer)");
  }
  float loss_and_gradients(const ModelInputs& in, const TokenIds& targets) override {
    return model_.loss_and_gradients(BertInputs{in.ids, in.token_types, in.attention_mask},
                                     targets);
  }
  float train_step(const ModelInputs& in, const TokenIds& targets, float lr) override {
    return model_.train_step(BertInputs{in.ids, in.token_types, in.attention_mask}, targets, lr);
  }
  TensorList gradients() const override { return model_.gradients(); }
  TensorList to_tensors() const override { return model_.to_tensors(); }
  std::string config_json(Dtype dtype, const Tokenizer* tokenizer) const override {
    const BertConfig& c = model_.config();
    if (c.flavor == BertFlavor::Roberta) {
      // The padding id is what the position ids count from: the model's, not the tokenizer's.
      return detail::bert_config_json(c, dtype, c.position_offset - 1);
    }
    const std::int32_t pad = tokenizer != nullptr ? tokenizer->token_to_id("[PAD]") : -1;
    return detail::bert_config_json(c, dtype, pad < 0 ? 0 : pad);
  }
  void set_optimizer(const AdamWConfig& config) override { model_.set_optimizer(config); }
  const AdamWConfig& optimizer_config() const override { return model_.optimizer_config(); }
  std::int64_t steps() const override { return model_.steps(); }
  float last_grad_norm() const override { return model_.last_grad_norm(); }
  AdamWState optimizer_state() const override { return model_.optimizer_state(); }
  void set_optimizer_state(const AdamWState& state) override { model_.set_optimizer_state(state); }
  void set_threads(int threads) override { model_.set_threads(threads); }
  int threads() const override { return model_.threads(); }
  BertModel* bert() noexcept override { return &model_; }

 private:
  BertModel model_;
};

}  // namespace

std::unique_ptr<Model> as_model(BertModel model) {
  return std::make_unique<BertAdapter>(std::move(model));
}

namespace detail {

BertConfig parse_bert_config(std::string_view config_json, std::string_view file_name) {
  const JsonValue root = parse_json(config_json, file_name);
  if (!root.is_object()) fail(ErrorCode::BAD_FILE, file_name, ": not a JSON object");
  const std::string* type = string_key(root, "model_type", file_name);
  if (type == nullptr || (*type != "bert" && *type != "distilbert" && *type != "roberta")) {
    fail(ErrorCode::BAD_FILE, file_name, ": model_type is ",
         type == nullptr ? std::string("missing") : "\"" + *type + "\"",
         "; a BERT-family config says \"bert\", \"distilbert\" or \"roberta\"");
  }
  BertConfig c;
  if (*type == "bert" || *type == "roberta") {
    // RobertaConfig is BertConfig with other defaults (modeling_roberta.py's embeddings differ
    // only in their position ids).
    const bool roberta = *type == "roberta";
    const char* family = roberta ? "RoBERTa" : "BERT";
    c.flavor = roberta ? BertFlavor::Roberta : BertFlavor::Bert;
    c.layers = size_key(root, "num_hidden_layers", file_name, family);
    c.heads = size_key(root, "num_attention_heads", file_name, family);
    c.d_model = size_key(root, "hidden_size", file_name, family);
    c.intermediate = size_key(root, "intermediate_size", file_name, family);
    c.context = size_key(root, "max_position_embeddings", file_name, family);
    c.vocab_size = size_key(root, "vocab_size", file_name, family);
    c.type_vocab_size = root.find("type_vocab_size") != nullptr
                            ? size_key(root, "type_vocab_size", file_name, family, 0)
                            : 2;
    if (roberta) {
      // Position ids count from pad_token_id + 1 (RobertaConfig's default pad_token_id is 1).
      const int pad = root.find("pad_token_id") != nullptr
                          ? size_key(root, "pad_token_id", file_name, family, 0)
                          : 1;
      if (pad > c.context - 2) {
        fail(ErrorCode::BAD_FILE, file_name, ": \"pad_token_id\" is ", pad,
             "; RoBERTa's position ids start at pad_token_id + 1, so it must be below "
             "max_position_embeddings - 1 = ",
             c.context - 1, " for one token to have a position");
      }
      c.position_offset = pad + 1;
    }
    if (const JsonValue* eps = root.find("layer_norm_eps")) {
      if (!eps->is_number() || !(eps->as_number() > 0.0)) {
        fail(ErrorCode::BAD_FILE, file_name, ": \"layer_norm_eps\" must be a positive number");
      }
      c.layer_norm_eps = static_cast<float>(eps->as_number());
    }
    if (const std::string* position = string_key(root, "position_embedding_type", file_name)) {
      if (*position != "absolute") {
        fail(ErrorCode::BAD_FILE, file_name, ": position_embedding_type is \"", *position,
             "\"; attnlens computes ", family, " with absolute (learned) position embeddings only");
      }
    }
    if (const std::string* act = string_key(root, "hidden_act", file_name)) {
      if (*act != "gelu") {
        fail(ErrorCode::BAD_FILE, file_name, ": hidden_act is \"", *act, "\"; attnlens computes ",
             family, " with the exact GELU (\"gelu\")");
      }
    }
    const std::string why = std::string("attnlens loads ") + family + " as an encoder";
    require_false(root, "is_decoder", file_name, why);
    require_false(root, "add_cross_attention", file_name, why);
  } else {
    c.flavor = BertFlavor::DistilBert;
    c.layers = size_key(root, "n_layers", file_name, "DistilBERT");
    c.heads = size_key(root, "n_heads", file_name, "DistilBERT");
    c.d_model = size_key(root, "dim", file_name, "DistilBERT");
    c.intermediate = size_key(root, "hidden_dim", file_name, "DistilBERT");
    c.context = size_key(root, "max_position_embeddings", file_name, "DistilBERT");
    c.vocab_size = size_key(root, "vocab_size", file_name, "DistilBERT");
    c.type_vocab_size = 0;
    if (const std::string* act = string_key(root, "activation", file_name)) {
      if (*act != "gelu") {
        fail(ErrorCode::BAD_FILE, file_name, ": activation is \"", *act,
             "\"; attnlens computes DistilBERT with the exact GELU (\"gelu\")");
      }
    }
  }
  try {
    validate(c);
  } catch (const Error& e) {
    fail(e.code() == ErrorCode::TOO_LARGE ? ErrorCode::TOO_LARGE : ErrorCode::BAD_FILE, file_name,
         ": ", e.what());
  }
  return c;
}

std::string bert_config_json(const BertConfig& c, Dtype dtype, std::int32_t pad_token_id) {
  const char* torch_dtype = dtype == Dtype::F16 ? "float16" : "float32";
  std::vector<std::pair<std::string, std::string>> entries;
  const auto q = [](std::string_view s) { return "\"" + std::string(s) + "\""; };
  if (c.flavor != BertFlavor::DistilBert) {
    const bool roberta = c.flavor == BertFlavor::Roberta;
    const std::string prefix = roberta ? "Roberta" : "Bert";
    entries = {
        {"architectures",
         "[\n    \"" + prefix + (c.mlm_head ? "ForMaskedLM" : "Model") + "\"\n  ]"},
        {"attention_probs_dropout_prob", "0.0"},
        {"classifier_dropout", "null"},
        {"hidden_act", q("gelu")},
        {"hidden_dropout_prob", "0.0"},
        {"hidden_size", std::to_string(c.d_model)},
        {"initializer_range", "0.02"},
        {"intermediate_size", std::to_string(c.intermediate)},
        {"layer_norm_eps", number(c.layer_norm_eps)},
        {"max_position_embeddings", std::to_string(c.context)},
        {"model_type", q(roberta ? "roberta" : "bert")},
        {"num_attention_heads", std::to_string(c.heads)},
        {"num_hidden_layers", std::to_string(c.layers)},
        {"pad_token_id", std::to_string(pad_token_id)},
        {"position_embedding_type", q("absolute")},
        {"torch_dtype", q(torch_dtype)},
        {"type_vocab_size", std::to_string(c.type_vocab_size)},
        {"use_cache", "true"},
        {"vocab_size", std::to_string(c.vocab_size)},
    };
  } else {
    entries = {
        {"activation", q("gelu")},
        {"architectures",
         c.mlm_head ? "[\n    \"DistilBertForMaskedLM\"\n  ]" : "[\n    \"DistilBertModel\"\n  ]"},
        {"attention_dropout", "0.0"},
        {"dim", std::to_string(c.d_model)},
        {"dropout", "0.0"},
        {"hidden_dim", std::to_string(c.intermediate)},
        {"initializer_range", "0.02"},
        {"max_position_embeddings", std::to_string(c.context)},
        {"model_type", q("distilbert")},
        {"n_heads", std::to_string(c.heads)},
        {"n_layers", std::to_string(c.layers)},
        {"pad_token_id", std::to_string(pad_token_id)},
        {"qa_dropout", "0.1"},
        {"seq_classif_dropout", "0.2"},
        {"sinusoidal_pos_embds", "false"},
        {"tie_weights_", "true"},
        {"torch_dtype", q(torch_dtype)},
        {"vocab_size", std::to_string(c.vocab_size)},
    };
  }
  std::string out = "{\n";
  for (std::size_t i = 0; i < entries.size(); ++i)
    out += "  \"" + entries[i].first + "\": " + entries[i].second +
           (i + 1 < entries.size() ? ",\n" : "\n");
  return out + "}\n";
}

LoadedModel load_bert(const ModelFiles& files) {
  static const char* const known[] = {"config.json",           "vocab.txt",  "tokenizer.json",
                                      "tokenizer_config.json", "vocab.json", "merges.txt"};
  for (const auto& [name, text] : files.texts) {
    if (std::find(std::begin(known), std::end(known), name) == std::end(known)) {
      fail(ErrorCode::BAD_FILE, name, ": not a file of a BERT checkpoint (model.safetensors, ",
           "config.json, and tokenizer.json, vocab.txt with tokenizer_config.json, or vocab.json ",
           "with merges.txt)");
    }
  }
  BertConfig config = parse_bert_config(files.texts.at("config.json"));
  if (files.weights == nullptr && files.weights_size != 0) {
    fail(ErrorCode::BAD_ARGUMENT, "model.safetensors is null but its size is ", files.weights_size);
  }
  const SafetensorsView view(files.weights, files.weights_size, "model.safetensors");
  config.mlm_head =
      std::any_of(view.tensors().begin(), view.tensors().end(), [&](const SafetensorsEntry& e) {
        std::string_view n = e.name;
        return starts_with(n, "cls.predictions.") || starts_with(n, "vocab_transform.") ||
               starts_with(n, "vocab_projector.") || starts_with(n, "lm_head.");
      });
  try {
    validate(config);
  } catch (const Error& e) {
    fail(e.code(), "config.json: ", e.what());
  }
  // BertModel::from_safetensors matches every name and shape before it allocates the
  // parameters, then reads each tensor from the file's bytes into them.
  LoadedModel out;
  try {
    out.model = as_model(BertModel::from_safetensors(config, view));
  } catch (const Error& e) {
    fail_in_file(e, "model.safetensors");
  }
  out.metadata = view.metadata();
  if (config.flavor == BertFlavor::Roberta) {
    // RoBERTa's tokenizer is GPT-2's byte-level BPE with <s> ... </s>: read from vocab.json and
    // merges.txt, which its folders ship beside tokenizer.json (the tokenizer.json pipeline
    // reads decoder tokenizers, not an encoder's template and mask).
    const bool bpe = files.texts.count("vocab.json") != 0 || files.texts.count("merges.txt") != 0;
    // (The package and the page never pass tokenizer.json alone: the registry lists it as
    // optional beside vocab.json + merges.txt, and a folder without those fails there first.)
    if (!bpe && files.texts.count("tokenizer.json") != 0) {
      fail(ErrorCode::BAD_FILE, "tokenizer.json: attnlens reads a RoBERTa tokenizer from ",
           "vocab.json and merges.txt (a RoBERTa folder has them beside tokenizer.json)");
    }
    ModelFiles bpe_files;
    for (const char* name : {"vocab.json", "merges.txt"}) {
      const auto it = files.texts.find(name);
      if (it != files.texts.end()) bpe_files.texts.emplace(it->first, it->second);
    }
    out.tokenizer = load_wordpiece(bpe_files, config.vocab_size);
    // BERT's [CLS] / [SEP] names would make BERT's pairs (type 1), which RoBERTa's one token type
    // cannot read.
    if (out.tokenizer != nullptr && out.tokenizer->token_to_id("<s>") < 0) {
      fail(ErrorCode::BAD_FILE,
           "vocab.json: a RoBERTa tokenizer writes <s> ... </s>, and this one ", "has no \"<s>\"",
           out.tokenizer->token_to_id("[CLS]") >= 0 ? " (it has BERT's [CLS])" : "");
    }
  } else {
    out.tokenizer = load_wordpiece(files, config.vocab_size);
  }
  return out;
}

}  // namespace detail
}  // namespace attnlens
