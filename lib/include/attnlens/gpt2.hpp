// attnlens — a GPT-2 model: forward with every layer's attention, backward, AdamW training.
//
// The architecture of OpenAI's GPT-2 (and Hugging Face's GPT2LMHeadModel), for ids [B, T]:
//   x = wte[ids] + wpe[0 .. T-1]                                       x is (B, T, d)
//   for each block:  a = x + c_proj(attention(c_attn(ln_1(x))))       causal, H heads
//                                       (c_attn(x) without Gpt2Config::attention_norm)
//                    x = a + mlp.c_proj(gelu_tanh(mlp.c_fc(ln_2(a))))  d -> 4d -> d
//   logits = ln_f(x) · wteᵀ                                            (B, T, V), tied
// LayerNorm epsilon 1e-5; GELU with the tanh approximation; projections y = x W + b with W
// stored [in, out] (Hugging Face's Conv1D layout). q, k and v are the three column blocks of
// c_attn's output, heads contiguous within each; the attention itself is attnlens::attention()
// with causal = true — the same kernels as everything else in the library.
//
// Parameters live in one flat float32 array in checkpoint order (see to_tensors()), gradients
// in a second array of the same layout, so AdamW and clipping run over one array each. The
// gradients and AdamW's two moment arrays are allocated by the first call that needs them:
// inference holds the parameters and the activations of one block only. All storage is
// row-major float32.
#pragma once

#include <attnlens/ablation.hpp>
#include <attnlens/attention.hpp>
#include <attnlens/lens.hpp>
#include <attnlens/optim.hpp>
#include <attnlens/tensor.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace attnlens {

class SafetensorsView;  // <attnlens/safetensors.hpp>

namespace detail {
struct Gpt2Workspace;  // activations and the parameter layout (lib/src/models/gpt2/workspace.hpp)
struct Readout;        // the final norm and unembedding, for the logit lens (lib/src/nn/lens.hpp)
}  // namespace detail

// Largest sizes Gpt2Config accepts (GPT-2 XL, 48 x 25 x 1600, fits with room to spare).
inline constexpr int kGpt2MaxLayers = 128;
inline constexpr int kGpt2MaxHeads = 128;
inline constexpr int kGpt2MaxModelDim = 8192;
inline constexpr int kGpt2MaxContext = 16384;
inline constexpr int kGpt2MaxVocab = 1 << 21;
// Largest parameter count (2^31 floats = 8 GiB); over it is Error(TOO_LARGE).
inline constexpr std::int64_t kGpt2MaxParameters = std::int64_t{1} << 31;
// Most threads Gpt2Model::set_threads accepts.
inline constexpr int kGpt2MaxThreads = 64;

struct Gpt2Config {
  int layers = 2;        // transformer blocks; 1 .. kGpt2MaxLayers
  int heads = 4;         // attention heads per block; 1 .. kGpt2MaxHeads, divides d_model
  int d_model = 128;     // residual width d; 1 .. kGpt2MaxModelDim
  int context = 128;     // positions (rows of wpe), the longest T; 1 .. kGpt2MaxContext
  int vocab_size = 256;  // tokens (rows of wte); ids are 0 .. vocab_size - 1; <= kGpt2MaxVocab
  // GPT-2's LayerNorm ln_1 before each block's attention. false: attention reads the residual
  // stream as it is, and the blocks have no h.{i}.ln_1 tensors (ln_2 and ln_f stay). Not a
  // GPT-2 setting: config.json records it as "attnlens_attention_norm": false, which other
  // GPT-2 loaders ignore. The training page's models use it: with ln_1, its small models learn
  // a shifted copying circuit instead of the textbook induction head (web/train/RECIPE.md).
  bool attention_norm = true;
};

// Throws Error(BAD_ARGUMENT) naming the field ("layers", "heads", "d_model", "context",
// "vocab_size") when it is out of range or d_model is not a multiple of heads, and
// Error(TOO_LARGE) when the parameter count exceeds kGpt2MaxParameters.
void validate(const Gpt2Config& config);

// Number of float parameters of a (valid) config: V d + C d + layers (12 d² + 13 d) + 2 d, less
// 2 d per layer without attention_norm.
std::int64_t gpt2_parameter_count(const Gpt2Config& config);

// Named tensors in checkpoint order, e.g. {"wte.weight", [V, d]}, {"h.0.ln_1.weight", [d]}.
using TensorList = std::vector<std::pair<std::string, Tensor>>;

// Token ids, row-major [batch, length]; a view: the caller keeps the data alive during the call.
struct TokenIds {
  const std::int32_t* data = nullptr;
  std::int64_t batch = 0;   // B >= 1
  std::int64_t length = 0;  // T >= 1
};

struct Gpt2ForwardOptions {
  // Return every layer's attention weights. Default: false.
  bool attention = false;
  // Return the residual stream before the first block and after each block. Default: false.
  bool residuals = false;
  // Cap on the elements of each returned tensor; over it is Error(TOO_LARGE).
  std::int64_t max_elements = kDefaultMaxElements;
  // Which rows' logits to compute: false = none (Gpt2Output::logits empty), true = those in
  // `logit_rows` (flat b · T + t, any order, repeats allowed), or every row when it is empty.
  // The unembedding (V × d multiply-adds per row: 38.6 M for GPT-2 small) is most of a short
  // forward's work; a figure that shows one row's predictions at first asks for that row only.
  // A row outside [0, B · T) is Error(BAD_ARGUMENT), before anything is computed.
  bool logits = true;
  std::vector<std::int64_t> logit_rows;
  // With attention: the query rows from this one on only, [layers, B, heads, T - attention_from,
  // T] (0: every row). A caller that holds the rows before an edit (a figure drawn again after a
  // keystroke) asks for those the edit changed: a cached forward then copies out only them. Must
  // lie in [0, T], else Error(BAD_ARGUMENT).
  std::int64_t attention_from = 0;
  // Heads switched off (attnlens/ablation.hpp); Error(BAD_ARGUMENT) names an entry outside the
  // model or named twice. Not with a cache (its rows are the model's as trained).
  Ablation ablation;
  // Value-weighted attention into Gpt2Output::value_norms and value_weighted (ModelForwardOptions).
  bool value_weighted = false;
  // Each head's write into the residual stream at these rows (ModelForwardOptions); not cached.
  std::vector<std::int64_t> head_output_rows;
};

struct Gpt2Output {
  Tensor logits;          // [B, T, V]: unnormalised next-token scores at each position; [R, V] for
                          // the R rows of Gpt2ForwardOptions::logit_rows, in that order; empty when
                          // Gpt2ForwardOptions::logits is false
  Tensor attention;       // [layers, B, heads, T, T] when asked (for B = 1 the data is exactly
                          // [layers, heads, T, T]); causal: the upper triangles are exactly 0;
                          // [layers, B, heads, T - from, T] with attention_from
  Tensor residuals;       // [layers + 1, B, T, d] when asked: entry 0 is wte[ids] + wpe, entry
                          // l + 1 the stream after block l (before ln_f)
  Tensor value_norms;     // [layers, B, heads, T] with value_weighted (ModelOutput)
  Tensor value_weighted;  // [layers, B, T, T] with value_weighted (ModelOutput)
  Tensor head_outputs;    // [layers, R, heads, d] for the R head_output_rows (ModelOutput)
};

class Gpt2Model;

// What a causal model computed for a sentence, kept so that the next call on an edited sentence
// recomputes only from the first token that changed: every layer's keys and values, and the
// rows of logits, attention and residual streams the calls asked for. It also keeps each row's
// final LayerNorm output, so that logits a call did not ask for are computed by a later call that
// does (the same ids: only the unembedding of those rows runs). A cache belongs to the
// model that filled it and to the weights it had (a training step makes it start over); another
// model's cache, or a cache after clear(), is refilled from the first token, never reused
// wrongly. Memory: 2 · layers · T · d floats for keys and values, T · d for the final
// LayerNorm's rows, plus the kept rows (T · V logits, layers · heads · T² attention,
// (layers + 1) · T · d residuals), freed by clear() or the destructor.
class Gpt2Cache {
 public:
  Gpt2Cache();
  Gpt2Cache(Gpt2Cache&&) noexcept;
  Gpt2Cache& operator=(Gpt2Cache&&) noexcept;
  ~Gpt2Cache();
  // Tokens whose results the cache holds (0 when empty).
  std::int64_t tokens() const noexcept;
  // Tokens the last forward() took from the cache rather than computing.
  std::int64_t reused() const noexcept;
  void clear() noexcept;

 private:
  friend class Gpt2Model;
  struct Data;
  std::unique_ptr<Data> data_;
};

class Gpt2Model {
 public:
  // GPT-2's initialisation, deterministic for a seed on every platform (attnlens::Rng): every
  // matrix and embedding ~ N(0, 0.02²), the two residual projections of each block (attn.c_proj
  // and mlp.c_proj weights) ~ N(0, (0.02 / sqrt(2 · layers))²), biases 0, LayerNorm weight 1 and
  // bias 0. Throws as validate(config), OUT_OF_MEMORY when the parameters do not fit.
  static Gpt2Model random(const Gpt2Config& config, std::uint64_t seed);

  // Weights from named tensors (a checkpoint read by the safetensors reader). Names as in Hugging
  // Face's GPT-2 files, each optionally prefixed with "transformer.". Ignored: the causal-mask
  // buffers "h.{i}.attn.bias" / "h.{i}.attn.masked_bias" and a "lm_head.weight" that equals
  // wte.weight (the unembedding is tied). Throws Error(BAD_FILE) naming the tensor for a missing,
  // duplicated, unexpected or wrongly shaped tensor (with both shapes), a non-finite value, an
  // untied lm_head.weight, or tensors of another architecture ("this looks like a BERT
  // checkpoint: ..."); validate(config)'s errors for a bad config.
  static Gpt2Model from_tensors(const Gpt2Config& config, const TensorList& tensors);

  // The same from a checkpoint file's tensors (F32, F16 or BF16), each read straight into the
  // model's parameters after every name and shape is checked: no float32 copy of the file in
  // between (for GPT-2 small, 500 MB less at the peak of a load). The same errors, and
  // SafetensorsView::read_f32's for a tensor of another dtype or a non-finite value.
  static Gpt2Model from_safetensors(const Gpt2Config& config, const SafetensorsView& file);

  Gpt2Model(Gpt2Model&&) noexcept;
  Gpt2Model& operator=(Gpt2Model&&) noexcept;
  ~Gpt2Model();

  const Gpt2Config& config() const noexcept { return config_; }
  std::int64_t num_parameters() const noexcept { return static_cast<std::int64_t>(params_.size()); }
  // The flat parameter array, in checkpoint order (to_tensors() slices it).
  const std::vector<float>& parameters() const noexcept { return params_; }

  // The parameters as named tensors in Hugging Face's order and shapes, without a prefix:
  // wte.weight, wpe.weight, then per block h.{i}.ln_1.{weight,bias}, h.{i}.attn.c_attn.{weight,
  // bias}, h.{i}.attn.c_proj.{weight,bias}, h.{i}.ln_2.{weight,bias}, h.{i}.mlp.c_fc.{weight,bias},
  // h.{i}.mlp.c_proj.{weight,bias}, then ln_f.{weight,bias}; no ln_1 tensors without
  // config().attention_norm.
  TensorList to_tensors() const;

  // Logits (and, when asked, attention weights and residual streams) for ids [B, T].
  // Throws EMPTY_INPUT (B or T is 0), TOO_LARGE (T > context, or a result over
  // options.max_elements), BAD_ARGUMENT (null data, an id outside [0, vocab_size) — the message
  // names its [b, t] position), OUT_OF_MEMORY. Reuses buffers kept in the model between calls,
  // so one model must not run two calls at once.
  Gpt2Output forward(const TokenIds& ids, const Gpt2ForwardOptions& options = {});

  // The same results for one sequence ids [1, T], computed from the first token that differs
  // from what `cache` holds (a causal model's earlier rows do not depend on later tokens):
  // appending a token computes one row per layer; deleting the last tokens computes nothing;
  // an edit at t recomputes rows t .. T-1. The results equal a full forward() within float32
  // rounding: the matrix products see fewer rows and may sum in other blocks (the batch rule of
  // tests/js/model.test.mjs, 1e-4 on logits). Throws as forward(), and BAD_ARGUMENT for a batch
  // of more than one sequence.
  Gpt2Output forward(const TokenIds& ids, Gpt2Cache& cache, const Gpt2ForwardOptions& options = {});

  // The logit lens: ln_f and the tied unembedding on rows [R, d] of the residual stream
  // (Model::unembed).
  Tensor unembed(const Tensor& rows) const;

  // Direct logit attribution of `token`'s logit at row b · T + t of ids (attnlens/lens.hpp,
  // Model::attribute), with `ablation`'s heads off.
  LogitAttribution attribute(const TokenIds& ids, std::int64_t row, std::int32_t token,
                             const Ablation& ablation = {});

  // Mean cross-entropy (nats per token) of predicting targets[b, t] from ids[b, 0 .. t], over
  // the targets that are not -1 (a target of -1 is ignored), with no gradients.
  // Throws as forward(), plus SHAPE_MISMATCH (targets not [B, T]), BAD_ARGUMENT (a target
  // outside [0, vocab_size) other than -1, or every target -1).
  float loss(const TokenIds& inputs, const TokenIds& targets);

  // The same loss, and its gradient for every parameter, kept in the model (gradients()).
  float loss_and_gradients(const TokenIds& inputs, const TokenIds& targets);

  // The gradients of the last loss_and_gradients() or train_step() (after clipping, for the
  // latter), named and shaped as to_tensors(). Zeros before the first.
  TensorList gradients() const;
  // The flat gradient array, same layout as parameters(); empty before the first gradient (the
  // array is allocated then, so a model used only for inference holds its parameters alone).
  const std::vector<float>& gradient_data() const noexcept { return grads_; }

  // One AdamW step on a batch of sequences [B, T + 1]: inputs are batch[:, :T], targets
  // batch[:, 1:]. Computes the loss and gradients, clips the gradients to the optimizer's
  // max_grad_norm, then updates every parameter at learning rate `lr`. Returns the loss before
  // the update. Throws as loss_and_gradients() (T + 1 >= 2 is required), BAD_ARGUMENT for a bad
  // lr, NON_FINITE when the gradient norm is not finite (then the parameters are unchanged).
  float train_step(const TokenIds& batch, float lr);
  // The same with separate inputs and targets [B, T] (targets may hold -1 to skip a position).
  float train_step(const TokenIds& inputs, const TokenIds& targets, float lr);

  // Threads for loss_and_gradients() and train_step(): the batch's rows are split into
  // min(threads, B) contiguous shares, each thread runs forward and backward on its share, and
  // the gradients and losses are summed in share order. Results are bit-identical for the same
  // thread count on every run; a different count changes the order of those sums (last bits).
  // forward() and loss() use one thread. Default 1; 1 .. kGpt2MaxThreads, and only 1 in a
  // WebAssembly build without threads. Throws Error(BAD_ARGUMENT) otherwise.
  void set_threads(int threads);
  int threads() const noexcept { return threads_; }

  // The optimizer's settings; changing them keeps the moments. Throws as validate(AdamWConfig).
  void set_optimizer(const AdamWConfig& config);
  const AdamWConfig& optimizer_config() const noexcept { return adamw_config_; }
  // AdamW steps taken so far.
  std::int64_t steps() const noexcept;
  // AdamW's moments and step count (empty moments and 0 steps before the first train_step()),
  // to save a training run with parameters() and resume it.
  AdamWState optimizer_state() const;
  // Restores optimizer_state() of a model with the same config (after loading its parameters),
  // so that the following train_step() calls give the same bits as that model's would. Empty
  // moments with 0 steps forget the optimizer's state. Throws as AdamW::set_state (the moments
  // must hold num_parameters() values).
  void set_optimizer_state(const AdamWState& state);
  // The global gradient norm before clipping of the last train_step() (0 before the first).
  float last_grad_norm() const noexcept { return last_grad_norm_; }

  // Segments of the flat parameter array with their weight-decay rule: every 2-D tensor
  // (embeddings and matrices) decays, 1-D tensors (biases, LayerNorm) do not — as nanoGPT.
  const std::vector<ParamSegment>& segments() const noexcept { return segments_; }

 private:
  explicit Gpt2Model(const Gpt2Config& config);
  detail::Readout readout() const;

  Gpt2Config config_;
  std::vector<float> params_;
  std::vector<float> grads_;
  std::vector<ParamSegment> segments_;
  AdamWConfig adamw_config_;
  std::unique_ptr<AdamW> adamw_;
  std::unique_ptr<detail::Gpt2Workspace> work_;
  // Unique among models and changed whenever the parameters change (training steps): a cache
  // filled under another stamp is stale.
  std::uint64_t stamp_ = 0;
  float last_grad_norm_ = 0.0f;
  int threads_ = 1;
};

}  // namespace attnlens
