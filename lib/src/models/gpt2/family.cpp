// GPT-2 behind the model interface: Gpt2Model and its byte-level BPE tokenizer.
#include "models/gpt2/family.hpp"

#include "core/check.hpp"

namespace attnlens {
namespace {

constexpr std::string_view kEndOfText = "<|endoftext|>";

class Gpt2Adapter;

// Gpt2Cache behind the family-neutral interface, tied to the adapter that made it.
struct Gpt2ForwardCache final : ForwardCache {
  explicit Gpt2ForwardCache(const Gpt2Adapter* owner) : owner(owner) {}
  std::int64_t reused() const noexcept override { return cache.reused(); }
  std::int64_t tokens() const noexcept override { return cache.tokens(); }
  const Gpt2Adapter* owner;
  Gpt2Cache cache;
};

class Gpt2Adapter final : public Model {
 public:
  explicit Gpt2Adapter(Gpt2Model model) : model_(std::move(model)) {}

  std::unique_ptr<ForwardCache> make_cache() override {
    return std::make_unique<Gpt2ForwardCache>(this);
  }
  ModelOutput forward(const ModelInputs& in, const ModelForwardOptions& options,
                      ForwardCache& cache) override {
    auto* mine = dynamic_cast<Gpt2ForwardCache*>(&cache);
    if (mine == nullptr || mine->owner != this) return Model::forward(in, options, cache);
    refuse_extras(in);
    Gpt2ForwardOptions o;
    o.attention = options.attention;
    o.residuals = options.hidden_states;
    o.max_elements = options.max_elements;
    o.logits = options.logits;
    o.logit_rows = options.logit_rows;
    o.attention_from = options.attention_from;
    o.ablation = options.ablation;
    o.value_weighted = options.value_weighted;
    o.head_output_rows = options.head_output_rows;
    return finish(model_.forward(in.ids, mine->cache, o));
  }

  ModelInfo info() const override {
    const Gpt2Config& c = model_.config();
    ModelInfo i;
    i.family = "gpt2";
    i.causal = true;
    i.prediction = PredictionKind::NextToken;
    i.layers = c.layers;
    i.heads = c.heads;
    i.d_model = c.d_model;
    i.context = c.context;
    i.vocab_size = c.vocab_size;
    return i;
  }
  std::int64_t num_parameters() const override { return model_.num_parameters(); }

  ModelOutput forward(const ModelInputs& in, const ModelForwardOptions& options) override {
    refuse_extras(in);
    Gpt2ForwardOptions o;
    o.attention = options.attention;
    o.residuals = options.hidden_states;
    o.max_elements = options.max_elements;
    o.logits = options.logits;
    o.logit_rows = options.logit_rows;
    o.attention_from = options.attention_from;
    o.ablation = options.ablation;
    o.value_weighted = options.value_weighted;
    o.head_output_rows = options.head_output_rows;
    return finish(model_.forward(in.ids, o));
  }

  // A GPT-2 output as the interface's (the logits of the rows asked for, computed by the model).
  static ModelOutput finish(Gpt2Output r) {
    ModelOutput out;
    out.logits = std::move(r.logits);
    out.attention = std::move(r.attention);
    out.hidden_states = std::move(r.residuals);
    out.value_norms = std::move(r.value_norms);
    out.value_weighted = std::move(r.value_weighted);
    out.head_outputs = std::move(r.head_outputs);
    return out;
  }
  Tensor unembed(const Tensor& rows) override { return model_.unembed(rows); }
  LogitAttribution attribute(const ModelInputs& in, std::int64_t row, std::int32_t token,
                             const Ablation& ablation) override {
    refuse_extras(in);
    return model_.attribute(in.ids, row, token, ablation);
  }
  float loss_and_gradients(const ModelInputs& in, const TokenIds& targets) override {
    refuse_extras(in);
    return model_.loss_and_gradients(in.ids, targets);
  }
  float train_step(const ModelInputs& in, const TokenIds& targets, float lr) override {
    refuse_extras(in);
    return model_.train_step(in.ids, targets, lr);
  }
  TensorList gradients() const override { return model_.gradients(); }
  TensorList to_tensors() const override { return model_.to_tensors(); }
  std::string config_json(Dtype dtype, const Tokenizer* tokenizer) const override {
    const std::int32_t eot = tokenizer != nullptr ? tokenizer->token_to_id(kEndOfText) : -1;
    return gpt2_config_json(model_.config(), dtype, eot);
  }
  void set_optimizer(const AdamWConfig& config) override { model_.set_optimizer(config); }
  const AdamWConfig& optimizer_config() const override { return model_.optimizer_config(); }
  std::int64_t steps() const override { return model_.steps(); }
  float last_grad_norm() const override { return model_.last_grad_norm(); }
  AdamWState optimizer_state() const override { return model_.optimizer_state(); }
  void set_optimizer_state(const AdamWState& state) override { model_.set_optimizer_state(state); }
  void set_threads(int threads) override { model_.set_threads(threads); }
  int threads() const override { return model_.threads(); }
  Gpt2Model* gpt2() noexcept override { return &model_; }

 private:
  static void refuse_extras(const ModelInputs& in) {
    if (in.token_types != nullptr || in.attention_mask != nullptr) {
      detail::fail(ErrorCode::BAD_ARGUMENT,
                   "GPT-2 takes ids only: no token types and no attention mask (pad with a "
                   "batch of equal lengths instead)");
    }
  }
  Gpt2Model model_;
};

class BpeAdapter final : public Tokenizer {
 public:
  explicit BpeAdapter(BpeTokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}
  const char* kind() const noexcept override { return "byte-level BPE"; }
  std::int32_t vocab_size() const noexcept override { return tokenizer_.vocab_size(); }
  std::vector<EncodedToken> encode(std::string_view text) const override {
    std::vector<EncodedToken> out;
    for (const BpeToken& t : tokenizer_.tokens(text))
      out.push_back(EncodedToken{t.id, t.begin, t.end, 0, 0, false});
    return out;
  }
  std::string decode(const std::vector<std::int32_t>& ids) const override {
    return tokenizer_.decode(ids);
  }
  std::string token_text(std::int32_t id) const override { return tokenizer_.token_bytes(id); }
  std::int32_t token_to_id(std::string_view token) const override {
    return tokenizer_.token_to_id(token);
  }
  std::vector<std::int32_t> special_ids() const override {
    const std::int32_t eot = tokenizer_.token_to_id(kEndOfText);
    return eot >= 0 ? std::vector<std::int32_t>{eot} : std::vector<std::int32_t>{};
  }
  std::vector<std::pair<std::string, std::string>> files() const override {
    return {{"vocab.json", tokenizer_.to_vocab_json()}, {"merges.txt", tokenizer_.to_merges_txt()}};
  }

 private:
  BpeTokenizer tokenizer_;
};

}  // namespace

std::unique_ptr<Model> as_model(Gpt2Model model) {
  return std::make_unique<Gpt2Adapter>(std::move(model));
}

std::unique_ptr<Tokenizer> as_tokenizer(BpeTokenizer tokenizer) {
  return std::make_unique<BpeAdapter>(std::move(tokenizer));
}

namespace detail {

LoadedModel load_gpt2(const ModelFiles& files) {
  for (const auto& [name, text] : files.texts) {
    if (name != "config.json" && name != "vocab.json" && name != "merges.txt") {
      fail(ErrorCode::BAD_FILE, name, ": not a file of a GPT-2 checkpoint (model.safetensors, ",
           "config.json, vocab.json, merges.txt)");
    }
  }
  CheckpointFileViews views;
  views.model_safetensors = files.weights;
  views.model_safetensors_size = files.weights_size;
  views.config_json = files.texts.at("config.json");
  const auto vocab = files.texts.find("vocab.json");
  const auto merges = files.texts.find("merges.txt");
  if (vocab != files.texts.end()) views.vocab_json = vocab->second;
  if (merges != files.texts.end()) views.merges_txt = merges->second;
  if (views.vocab_json.has_value() != views.merges_txt.has_value()) {
    fail(ErrorCode::BAD_FILE, views.vocab_json ? "merges.txt" : "vocab.json",
         ": missing; the tokenizer needs both vocab.json and merges.txt");
  }
  Checkpoint checkpoint = load_checkpoint(views);
  LoadedModel out;
  out.model = as_model(std::move(checkpoint.model));
  if (checkpoint.tokenizer) out.tokenizer = as_tokenizer(std::move(*checkpoint.tokenizer));
  out.metadata = std::move(checkpoint.metadata);
  return out;
}

}  // namespace detail
}  // namespace attnlens
