// The block's families (Llama, Mistral, Qwen2, Qwen3, Gemma 2, Gemma 3 and the encoder ModernBERT)
// behind the model interface: config.json and model.safetensors.
#include "core/check.hpp"
#include "models/llama/model.hpp"

#include <algorithm>
#include <climits>

namespace attnlens {
namespace {

using detail::LlamaModel;

class LlamaAdapter;

// The block's prefix cache behind the family-neutral interface, tied to the adapter that made it.
struct LlamaForwardCache final : ForwardCache {
  explicit LlamaForwardCache(const LlamaAdapter* owner) : owner(owner) {}
  std::int64_t reused() const noexcept override { return cache.reused(); }
  std::int64_t tokens() const noexcept override { return cache.tokens(); }
  const LlamaAdapter* owner;
  detail::DecoderCache cache;
};

class LlamaAdapter final : public Model {
 public:
  explicit LlamaAdapter(LlamaModel model) : model_(std::move(model)) {}

  std::unique_ptr<ForwardCache> make_cache() override {
    return std::make_unique<LlamaForwardCache>(this);
  }
  ModelOutput forward(const ModelInputs& in, const ModelForwardOptions& options,
                      ForwardCache& cache) override {
    auto* mine = dynamic_cast<LlamaForwardCache*>(&cache);
    if (mine == nullptr || mine->owner != this) return Model::forward(in, options, cache);
    refuse_extras(in);
    return model_.forward(in.ids, mine->cache, decoder_options(options));
  }

  ModelInfo info() const override {
    const detail::LlamaConfig& c = model_.config();
    const detail::BlockSpec& b = c.spec.block;
    ModelInfo i;
    i.family = c.model_type;
    i.causal = c.spec.causal;
    i.prediction = c.spec.causal ? PredictionKind::NextToken : PredictionKind::MaskedToken;
    i.layers = static_cast<int>(c.spec.layers);
    i.heads = static_cast<int>(b.heads);
    i.kv_heads = static_cast<int>(b.kv_heads);
    i.head_dim = static_cast<int>(b.head_dim);
    i.d_model = static_cast<int>(b.d_model);
    i.context = static_cast<int>(std::min<std::int64_t>(c.spec.context, INT_MAX));
    i.vocab_size = static_cast<int>(c.spec.vocab_size);
    i.positions = detail::position_kind_name(b.positions);
    i.norm = detail::norm_kind_name(b.norm);
    bool windowed = false;
    for (const detail::LayerAttention& a : c.spec.layer_attention) {
      i.windows.push_back(static_cast<int>(std::min<std::int64_t>(a.window, INT_MAX)));
      windowed = windowed || a.window > 0;
    }
    if (!windowed) i.windows.clear();
    i.score_softcap = b.attn_softcap;
    i.logit_softcap = c.spec.final_softcap;
    return i;
  }
  std::int64_t num_parameters() const override { return model_.num_parameters(); }

  ModelOutput forward(const ModelInputs& in, const ModelForwardOptions& options) override {
    refuse_extras(in);
    return model_.forward(in.ids, decoder_options(options));
  }

  Tensor unembed(const Tensor& rows) override { return model_.unembed(rows); }
  LogitAttribution attribute(const ModelInputs& in, std::int64_t row, std::int32_t token,
                             const Ablation& ablation) override {
    refuse_extras(in);
    return model_.attribute(in.ids, row, token, ablation);
  }

  float loss_and_gradients(const ModelInputs&, const TokenIds&) override { no_training(); }
  float train_step(const ModelInputs&, const TokenIds&, float) override { no_training(); }
  TensorList gradients() const override { no_training(); }
  TensorList to_tensors() const override { return model_.to_tensors(); }
  std::string config_json(Dtype dtype, const Tokenizer*) const override {
    return detail::llama_config_json(model_.config(), dtype);
  }
  void set_optimizer(const AdamWConfig& config) override {
    validate(config);
    adamw_ = config;
  }
  const AdamWConfig& optimizer_config() const override { return adamw_; }
  std::int64_t steps() const override { return 0; }
  float last_grad_norm() const override { return 0.0f; }
  AdamWState optimizer_state() const override { return {}; }
  void set_optimizer_state(const AdamWState&) override { no_training(); }
  void set_threads(int threads) override {
    if (threads < 1 || threads > 64) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "threads is ", threads, "; it must be in [1, 64]");
    }
    threads_ = threads;
  }
  int threads() const override { return threads_; }

 private:
  void refuse_extras(const ModelInputs& in) const {
    if (in.token_types != nullptr || in.attention_mask != nullptr) {
      detail::fail(ErrorCode::BAD_ARGUMENT, "a ", model_.config().model_type,
                   " model takes ids only: no token types and no attention mask (pad with a "
                   "batch of equal lengths instead)");
    }
  }
  static detail::DecoderForward decoder_options(const ModelForwardOptions& options) {
    detail::DecoderForward o;
    o.attention = options.attention;
    o.hidden_states = options.hidden_states;
    o.logits = options.logits;
    o.logit_rows = options.logit_rows;
    o.max_elements = options.max_elements;
    o.attention_from = options.attention_from;
    o.ablation = options.ablation;
    o.value_weighted = options.value_weighted;
    o.head_output_rows = options.head_output_rows;
    return o;
  }
  [[noreturn]] void no_training() const {
    detail::fail(ErrorCode::BAD_ARGUMENT, "attnlens computes the forward pass of ",
                 model_.config().model_type,
                 " models; it does not train them (no loss, gradients or optimizer steps)");
  }
  LlamaModel model_;
  AdamWConfig adamw_;
  int threads_ = 1;
};

}  // namespace

namespace detail {

LoadedModel load_llama(const ModelFiles& files) {
  for (const auto& [name, text] : files.texts) {
    if (name == "config.json" || name == "tokenizer.json" || name == "tokenizer_config.json")
      continue;
    fail(ErrorCode::BAD_FILE, name,
         ": not a file of a Llama-family, Gemma or ModernBERT checkpoint (model.safetensors, "
         "config.json, tokenizer.json, tokenizer_config.json)");
  }
  if (files.texts.count("tokenizer_config.json") != 0 && files.texts.count("tokenizer.json") == 0) {
    fail(ErrorCode::BAD_FILE,
         "tokenizer_config.json was given without the tokenizer's file (tokenizer.json)");
  }
  const LlamaConfig config = parse_llama_config(files.texts.at("config.json"));
  if (files.weights == nullptr && files.weights_size != 0) {
    fail(ErrorCode::BAD_ARGUMENT, "model.safetensors is null but its size is ", files.weights_size);
  }
  const SafetensorsView view(files.weights, files.weights_size, "model.safetensors");
  LoadedModel out;
  try {
    out.model = std::make_unique<LlamaAdapter>(LlamaModel::from_safetensors(config, view));
  } catch (const Error& e) {
    fail_in_file(e, "model.safetensors");
  }
  out.metadata = view.metadata();
  out.tokenizer = load_tokenizer_json(files, static_cast<std::int32_t>(config.spec.vocab_size),
                                      !config.spec.causal);
  return out;
}

}  // namespace detail
}  // namespace attnlens
