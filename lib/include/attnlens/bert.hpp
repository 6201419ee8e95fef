// attnlens — BERT-family encoders: Hugging Face's BertModel / BertForMaskedLM and
// DistilBertModel / DistilBertForMaskedLM, with every layer's (full) attention, a masked-LM
// backward pass and AdamW training.
//
// The architecture, for ids [B, T] (and token types [B, T] for BERT):
//   x = LayerNorm(word[ids] + position[0 .. T-1] + token_type[types])       (B, T, d)
//   for each layer (post-LayerNorm):
//     a = LayerNorm(x + attention_output(attention(q(x), k(x), v(x), padding mask)))
//     x = LayerNorm(a + output(gelu(intermediate(a))))                      d -> I -> d
//   masked-LM head, when the checkpoint has one:
//     logits = LayerNorm(gelu(transform(x))) · wordᵀ + bias                 (B, T, V), tied
// Attention is full (every query sees every key that is not padding), H heads of size d / H,
// through attnlens::attention() — the same kernels as everything else in the library. GELU is
// the exact erf form; LayerNorm epsilon comes from the config (BERT's 1e-12).
//
// DistilBERT is the same computation without token types, with its own names (q_lin, ...,
// sa_layer_norm, ffn.lin1, ..., vocab_transform, vocab_layer_norm, vocab_projector) and config
// keys (dim, n_layers, n_heads, hidden_dim). Checkpoint names are read in both styles: with or
// without the "bert." / "distilbert." prefix, LayerNorm parameters as weight/bias or as the old
// gamma/beta; pooler, next-sentence head and integer buffers (position_ids) are skipped.
//
// Parameters live in one flat float32 array; linear weights are held transposed from the
// checkpoint's [out, in] to [in, out], and each layer's query, key and value weights side by
// side as one [d, 3d] matrix, so the layers share GPT-2's kernels. to_tensors() gives the
// checkpoint's names and shapes back.
#pragma once

#include <attnlens/attention.hpp>
#include <attnlens/gpt2.hpp>
#include <attnlens/optim.hpp>
#include <attnlens/tensor.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnlens {

namespace detail {
struct BertWorkspace;  // activations and the parameter layout (lib/src/models/bert/workspace.hpp)
}  // namespace detail

// Which Hugging Face class family the names and config keys follow. RoBERTa is BERT's
// architecture under "roberta." / "lm_head." names, with position ids that start past the
// padding token (position_offset).
enum class BertFlavor { Bert, DistilBert, Roberta };

struct BertConfig {
  BertFlavor flavor = BertFlavor::Bert;
  int layers = 2;           // 1 .. kGpt2MaxLayers
  int heads = 2;            // divides d_model; 1 .. kGpt2MaxHeads
  int d_model = 128;        // hidden_size / dim; 1 .. kGpt2MaxModelDim
  int intermediate = 512;   // intermediate_size / hidden_dim; 1 .. 4 · kGpt2MaxModelDim
  int context = 512;        // max_position_embeddings; 1 .. kGpt2MaxContext
  int vocab_size = 30522;   // 1 .. kGpt2MaxVocab
  int type_vocab_size = 2;  // BERT's token types; 0 for DistilBERT (no token types)
  // The position table's row of a sequence's first token: 0 for BERT and DistilBERT, RoBERTa's
  // pad_token_id + 1 (its position ids count from there, modeling_roberta.py's
  // create_position_ids_from_input_ids). A sequence holds at most context - position_offset
  // tokens; RoBERTa 1 .. context - 1, the others 0.
  int position_offset = 0;
  float layer_norm_eps = 1e-12f;  // > 0 and finite
  bool mlm_head = true;           // has the masked-LM head (a BertModel checkpoint has none)
};

// Throws Error(BAD_ARGUMENT) naming the field when a size is out of range, d_model is not a
// multiple of heads, DistilBERT has token types, or eps is not positive; TOO_LARGE past
// kGpt2MaxParameters.
void validate(const BertConfig& config);

// Number of float parameters of a valid config.
std::int64_t bert_parameter_count(const BertConfig& config);

// Inputs of one call: ids [B, T]; token types [B, T] or null (all 0); attention mask [B, T]
// (1 = a token, 0 = padding) or null (no padding). Views: the caller keeps them alive.
struct BertInputs {
  TokenIds ids;
  const std::int32_t* token_types = nullptr;
  const std::int32_t* attention_mask = nullptr;
};

struct BertForwardOptions {
  bool attention = false;      // return every layer's attention weights
  bool hidden_states = false;  // return the embeddings' output and every layer's
  // Masked-LM logits: false = none; true = at the rows in `logit_rows` (flat b · T + t), or at
  // every row when it is empty. Needs the head (Error BAD_ARGUMENT without it).
  bool logits = false;
  std::vector<std::int64_t> logit_rows;
  std::int64_t max_elements = kDefaultMaxElements;
  // Heads switched off (attnlens/ablation.hpp); a mean runs over the tokens the attention mask
  // keeps. BAD_ARGUMENT names an entry outside the model or named twice.
  Ablation ablation;
  // Value-weighted attention into BertOutput::value_norms and value_weighted (ModelOutput).
  bool value_weighted = false;
  // Each head's write into the residual stream at these rows (ModelForwardOptions).
  std::vector<std::int64_t> head_output_rows;
};

struct BertOutput {
  Tensor logits;          // [B, T, V] for every row, or [R, V] for R asked rows
  Tensor attention;       // [layers, B, heads, T, T] when asked; padded keys get weight 0
  Tensor hidden_states;   // [layers + 1, B, T, d] when asked
  Tensor value_norms;     // [layers, B, heads, T] with value_weighted (ModelOutput)
  Tensor value_weighted;  // [layers, B, T, T] with value_weighted (ModelOutput)
  Tensor head_outputs;    // [layers, R, heads, d] for the R head_output_rows (ModelOutput)
};

class BertModel {
 public:
  // BERT's initialisation (deterministic per seed on every platform): matrices and embeddings
  // ~ N(0, 0.02²), biases 0, LayerNorm weight 1 and bias 0. Throws as validate(config).
  static BertModel random(const BertConfig& config, std::uint64_t seed);

  // Weights from named tensors as Hugging Face writes them (see the top of this header).
  // Throws Error(BAD_FILE) naming the tensor for a missing, duplicated, unexpected or wrongly
  // shaped one (with both shapes), a non-finite value, an untied decoder, or another family's
  // tensors; validate(config)'s errors for a bad config. Nothing is allocated for the
  // parameters before every tensor has been matched.
  static BertModel from_tensors(const BertConfig& config, const TensorList& tensors);

  // The same from a checkpoint file's tensors (F32, F16 or BF16; integer position_ids and
  // token_type_ids buffers, the pooler and the next-sentence head are passed over unread), each
  // read into the parameters after every name and shape is checked, through a buffer as large as
  // the largest tensor: no float32 copy of the whole file in between. The same errors, and
  // SafetensorsView::read_f32's for a tensor of another dtype or a non-finite value.
  static BertModel from_safetensors(const BertConfig& config, const SafetensorsView& file);

  BertModel(BertModel&&) noexcept;
  BertModel& operator=(BertModel&&) noexcept;
  ~BertModel();

  const BertConfig& config() const noexcept { return config_; }
  std::int64_t num_parameters() const noexcept { return static_cast<std::int64_t>(params_.size()); }
  const std::vector<float>& parameters() const noexcept { return params_; }

  // The parameters under Hugging Face's names and shapes for the flavor's masked-LM class
  // (bert.embeddings.word_embeddings.weight, ..., cls.predictions.bias; or distilbert.* and
  // vocab_*), linear weights [out, in]; the tied decoder is not repeated.
  TensorList to_tensors() const;

  // Throws EMPTY_INPUT, TOO_LARGE (T > context, a result over max_elements), BAD_ARGUMENT (an id
  // or type out of range, naming its [b, t]; a mask value other than 0/1; a sequence with no
  // token; logits without a head; a logit row out of range), OUT_OF_MEMORY.
  BertOutput forward(const BertInputs& inputs, const BertForwardOptions& options = {});

  // The logit lens: the masked-LM head on rows [R, d] of the stream (each layer's output is
  // normalised already), logits [R, V] (Model::unembed). BAD_ARGUMENT without the head.
  Tensor unembed(const Tensor& rows);

  // Masked-LM cross-entropy (nats per counted label) of labels [B, T] (-1 = not predicted) and
  // its gradient for every parameter (gradients()). Needs the head.
  float loss_and_gradients(const BertInputs& inputs, const TokenIds& labels);
  TensorList gradients() const;  // named and shaped as to_tensors()
  const std::vector<float>& gradient_data() const noexcept { return grads_; }

  // loss_and_gradients, clipping to the optimizer's max_grad_norm, then one AdamW step at lr.
  // Returns the loss before the update. An update that would leave a parameter non-finite is
  // NON_FINITE and changes nothing.
  float train_step(const BertInputs& inputs, const TokenIds& labels, float lr);

  // As Gpt2Model: rows of the batch split over threads, sums in a fixed order.
  void set_threads(int threads);
  int threads() const noexcept { return threads_; }
  void set_optimizer(const AdamWConfig& config);
  const AdamWConfig& optimizer_config() const noexcept { return adamw_config_; }
  std::int64_t steps() const noexcept;
  AdamWState optimizer_state() const;
  void set_optimizer_state(const AdamWState& state);
  float last_grad_norm() const noexcept { return last_grad_norm_; }
  const std::vector<ParamSegment>& segments() const noexcept { return segments_; }

 private:
  explicit BertModel(const BertConfig& config);

  BertConfig config_;
  std::vector<float> params_;
  std::vector<float> grads_;
  std::vector<ParamSegment> segments_;
  AdamWConfig adamw_config_;
  std::unique_ptr<AdamW> adamw_;
  std::unique_ptr<detail::BertWorkspace> work_;
  float last_grad_norm_ = 0.0f;
  int threads_ = 1;
};

}  // namespace attnlens
