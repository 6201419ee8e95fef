// attnlens — models of every family behind one interface, and the registry that loads a
// checkpoint folder by its config.json's "model_type".
//
// A family is a folder under lib/src/models/ (gpt2/, bert/) and one entry in the registry
// (lib/src/models/registry.cpp): the model_type values it reads, the tokenizer files it takes
// and a loader. The WebAssembly bindings, the JS package and the page see only this interface:
// whether a model is causal and what it predicts come from ModelInfo, never from a family name.
// docs/architecture.md lists the steps to add a family.
#pragma once

#include <attnlens/bert.hpp>
#include <attnlens/bpe.hpp>
#include <attnlens/checkpoint.hpp>
#include <attnlens/gpt2.hpp>
#include <attnlens/lens.hpp>
#include <attnlens/safetensors.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlens {

// What a model predicts at each position.
enum class PredictionKind {
  NextToken,    // a causal language model: the token after each position
  MaskedToken,  // an encoder with a masked-LM head: the token at each [MASK]
};

// "next-token" or "masked-token".
const char* prediction_kind_name(PredictionKind kind) noexcept;

struct ModelInfo {
  std::string family;  // the registry's name: "gpt2", "bert", "distilbert", "llama", "qwen3", ...
  bool causal = true;  // attention masked to keys j <= i
  PredictionKind prediction = PredictionKind::NextToken;
  bool has_head = true;  // gives logits (an encoder checkpoint may lack its masked-LM head)
  int layers = 0;
  int heads = 0;
  // Key/value heads (grouped-query attention: query head h reads key/value head
  // h / (heads / kv_heads)); 0 when every query head has its own, as in GPT-2 and BERT.
  int kv_heads = 0;
  int head_dim = 0;  // width of one head; 0 when it is d_model / heads
  int d_model = 0;
  int context = 0;  // longest sequence
  int vocab_size = 0;
  int type_vocab_size = 0;            // token types (sentence A/B); 0 when the family has none
  std::string positions = "learned";  // "learned", "rotary" or "none"
  std::string norm = "layernorm";     // "layernorm", "rmsnorm" or "rmsnorm(1+w)"
  // Per layer, the keys a query sees: 0 every earlier one (or every one, in an encoder), W > 0
  // itself and the W - 1 before it (a sliding window, as Gemma 3's local layers) or, in an
  // encoder, itself and W - 1 on each side (ModernBERT's local layers). Empty when every layer
  // is 0.
  std::vector<int> windows;
  // Soft caps (Gemma 2): each scaled attention score x becomes score_softcap · tanh(x /
  // score_softcap) before the softmax, each logit logit_softcap · tanh(logit / logit_softcap).
  // 0: none.
  float score_softcap = 0.0f;
  float logit_softcap = 0.0f;
};

// One token of an encoded text: its id, the bytes of the text it stands for ([begin, end),
// empty for a special token such as [CLS]), its token type, which text of a pair it came from
// (0 or 1) and whether it is a special token the tokenizer added.
struct EncodedToken {
  std::int32_t id = 0;
  std::size_t begin = 0;
  std::size_t end = 0;
  std::int32_t type = 0;
  std::int32_t segment = 0;
  bool special = false;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // "byte-level BPE" or "WordPiece".
  virtual const char* kind() const noexcept = 0;
  virtual std::int32_t vocab_size() const noexcept = 0;
  // One more than the largest id a model paired with it needs an embedding row for: vocab_size()
  // but for special tokens past the vocabulary that only a text naming them produces (Gemma 3's
  // text models ship a tokenizer whose <image_soft_token> is past their 262 144 rows). Such an id
  // is refused by the model's forward, naming it, as any id past its vocabulary.
  virtual std::int32_t embedded_size() const noexcept { return vocab_size(); }
  // The tokens of `text` (UTF-8) with the family's special tokens ([CLS] ... [SEP] for BERT;
  // none for GPT-2). Throws INVALID_UTF8 naming the byte offset, TOO_LARGE.
  virtual std::vector<EncodedToken> encode(std::string_view text) const = 0;
  // A sentence pair ([CLS] A [SEP] B [SEP], types 0 and 1). Throws BAD_ARGUMENT for a tokenizer
  // without pairs (GPT-2's).
  virtual std::vector<EncodedToken> encode_pair(std::string_view a, std::string_view b) const;
  // The text of ids (bytes; a byte-level token may cut a UTF-8 character). BAD_ARGUMENT names
  // the index of an id out of range.
  virtual std::string decode(const std::vector<std::int32_t>& ids) const = 0;
  // How one token reads, for a figure: " the", "##ing", "[CLS]". BAD_ARGUMENT out of range.
  virtual std::string token_text(std::int32_t id) const = 0;
  // The id of a token as the vocabulary writes it, or -1.
  virtual std::int32_t token_to_id(std::string_view token) const = 0;
  // The [MASK] token's id, or -1 when the tokenizer has none.
  virtual std::int32_t mask_id() const noexcept { return -1; }
  // The id of the token an unknown word or character becomes (the file's unk_token, whatever
  // it is named), or -1 when the tokenizer has none (a byte-level BPE needs none).
  virtual std::int32_t unk_id() const noexcept { return -1; }
  // The special tokens' ids, ascending: begin and end of text, [CLS], padding, a vocabulary's
  // reserved ones; tokens that stand for no piece of text (a generation ends at one).
  virtual std::vector<std::int32_t> special_ids() const { return {}; }
  // The byte-fallback tokens' ids ("<0x00>" .. "<0xFF>" of a SentencePiece-style vocabulary),
  // ascending: pieces of text, but of no word (a probe of random tokens draws around them and
  // the special tokens).
  virtual std::vector<std::int32_t> byte_ids() const { return {}; }
  // The tokenizer's files, as a checkpoint folder holds them: (name, text).
  virtual std::vector<std::pair<std::string, std::string>> files() const = 0;
  // A sentence for a reader about how text is read, e.g. that lower-casing is BERT's default
  // because the folder does not say; empty when there is nothing to say.
  virtual std::string note() const { return {}; }
};

// Inputs of a forward pass or a training step: ids [B, T]; token types [B, T] or null (all 0);
// attention mask [B, T] (1 = token, 0 = padding) or null. Causal models take ids only.
struct ModelInputs {
  TokenIds ids;
  const std::int32_t* token_types = nullptr;
  const std::int32_t* attention_mask = nullptr;
};

struct ModelForwardOptions {
  bool attention = false;      // every layer's attention weights
  bool hidden_states = false;  // the residual stream before the first layer and after each
  bool logits = true;          // the prediction head's logits (needs ModelInfo::has_head)
  // Rows (b · T + t) to compute logits at; empty = every row. A figure shows the predictions of
  // a few positions: the vocabulary product is the largest share of a small model's step.
  std::vector<std::int64_t> logit_rows;
  std::int64_t max_elements = kDefaultMaxElements;
  // With attention: the query rows from this one on only (0: all). A figure drawn again after
  // an edit holds the rows before it and asks for the rest; a causal model's cache then copies
  // out only those. Must lie in [0, T], else Error(BAD_ARGUMENT).
  std::int64_t attention_from = 0;
  // Heads switched off (attnlens/ablation.hpp): BAD_ARGUMENT names an entry outside the model
  // or named twice. A forward with a cache and an ablation computes every row without the cache
  // and leaves it as it was (the cache keeps the rows of the model as trained).
  Ablation ablation;
  // Value-weighted attention (attnlens/ablation.hpp, value_weighted): what each weight carries,
  // ‖α_ij f_h(x_j)‖, from this forward's own values. Computed over every row; with a cache, every
  // row is computed without it (the cache is left as it was). In a model whose attention output
  // is normalised before it joins the stream (Gemma's sandwich norms), f_h and the heads' writes
  // below are what enters that norm: the norm mixes the heads, so no per-head part of the
  // stream's increment exists (and attribute() is refused for such a model).
  bool value_weighted = false;
  // Rows (b · T + t) at which to return each head's write into the residual stream (its slice
  // of the merged heads through its rows of the attention's output projection, without the
  // projection's bias, which belongs to no head; an ablated head writes what the ablation left).
  // BAD_ARGUMENT names a row outside [0, B · T). With a cache, computed without it.
  std::vector<std::int64_t> head_output_rows;
};

struct ModelOutput {
  Tensor logits;          // [B, T, V], or [R, V] for R asked rows; empty without logits
  Tensor attention;       // [layers, B, heads, T, T] when asked; [.., T - attention_from, T]
  Tensor hidden_states;   // [layers + 1, B, T, d] when asked
  Tensor value_norms;     // [layers, B, heads, T] with value_weighted: ‖f_h(x_j)‖ per key j
  Tensor value_weighted;  // [layers, B, T, T] with value_weighted: ‖Σ_h α^h_ij f_h(x_j)‖
  Tensor head_outputs;    // [layers, R, heads, d] for the R head_output_rows
};

// What a model keeps between calls on edits of one sentence: a causal model's keys, values and
// results for the prefix that did not change (Gpt2Cache). Made by Model::make_cache(); usable
// with that model only.
class ForwardCache {
 public:
  virtual ~ForwardCache() = default;
  // Tokens the last forward() took from the cache instead of computing them.
  virtual std::int64_t reused() const noexcept = 0;
  // Tokens whose results the cache holds.
  virtual std::int64_t tokens() const noexcept = 0;
};

class Model {
 public:
  virtual ~Model() = default;
  virtual ModelInfo info() const = 0;
  virtual std::int64_t num_parameters() const = 0;
  // Throws as the family's forward (BAD_ARGUMENT for inputs the family does not take, such as
  // token types for GPT-2).
  virtual ModelOutput forward(const ModelInputs& inputs, const ModelForwardOptions& options) = 0;
  // A cache for forward() on edits of one sentence, or null when the family has nothing to
  // reuse (an encoder's every row depends on every token).
  virtual std::unique_ptr<ForwardCache> make_cache() { return nullptr; }
  // forward() reusing `cache` where it can (the same results). BAD_ARGUMENT for a cache another
  // model made.
  virtual ModelOutput forward(const ModelInputs& inputs, const ModelForwardOptions& options,
                              ForwardCache& cache);
  // The logit lens (attnlens/lens.hpp): the prediction head applied to rows [R, d_model] of the
  // residual stream as ModelOutput::hidden_states holds them; logits [R, vocab_size]. A decoder
  // applies its final norm and its unembedding (on the last hidden state: its logits); BERT its
  // masked-LM head (its layers' outputs are normalised already). BAD_ARGUMENT without a head,
  // for rows of another width or none; NON_FINITE when a row or its logits are not finite.
  virtual Tensor unembed(const Tensor& rows) = 0;
  // Direct logit attribution (attnlens/lens.hpp) of `token`'s logit at row b · T + t of
  // `inputs`, with `ablation`'s heads off; token -1 splits the logit of the token the model ranks
  // first there. BAD_ARGUMENT names a row or token out of range, and
  // refuses a family whose norms come after each layer (BERT: nothing adds up before its head).
  virtual LogitAttribution attribute(const ModelInputs& inputs, std::int64_t row,
                                     std::int32_t token, const Ablation& ablation = {}) = 0;
  // The family's training loss (nats per counted target) and its gradients. Causal models:
  // targets[b, t] is predicted from ids[b, 0 .. t]. Masked-token models: targets are the labels
  // of the masked positions. -1 marks a position that is not counted.
  virtual float loss_and_gradients(const ModelInputs& inputs, const TokenIds& targets) = 0;
  // loss_and_gradients, clipping, one AdamW step at `lr`; returns the loss before the update.
  virtual float train_step(const ModelInputs& inputs, const TokenIds& targets, float lr) = 0;
  virtual TensorList gradients() const = 0;   // named as to_tensors()
  virtual TensorList to_tensors() const = 0;  // the checkpoint's names and shapes
  // config.json for the model (with the tokenizer's special ids when one is given).
  virtual std::string config_json(Dtype dtype, const Tokenizer* tokenizer) const = 0;
  virtual void set_optimizer(const AdamWConfig& config) = 0;
  virtual const AdamWConfig& optimizer_config() const = 0;
  virtual std::int64_t steps() const = 0;
  virtual float last_grad_norm() const = 0;
  // AdamW's moments and step count, to save a training run and resume it bit for bit.
  virtual AdamWState optimizer_state() const = 0;
  virtual void set_optimizer_state(const AdamWState& state) = 0;
  // Threads for loss_and_gradients() and train_step() (the family's set_threads rules).
  virtual void set_threads(int threads) = 0;
  virtual int threads() const = 0;
  // The family's own class, for code that needs it (tools, tests); null for other families.
  virtual Gpt2Model* gpt2() noexcept { return nullptr; }
  virtual BertModel* bert() noexcept { return nullptr; }
};

// Wrap a family's model or tokenizer in the interface.
std::unique_ptr<Model> as_model(Gpt2Model model);
std::unique_ptr<Model> as_model(BertModel model);
std::unique_ptr<Tokenizer> as_tokenizer(BpeTokenizer tokenizer);
// A byte-level BPE read as an encoder reads it: [CLS] text [SEP], with the vocabulary's
// "[CLS]", "[SEP]", "[MASK]" and "[PAD]" tokens (add_special_tokens). BAD_FILE without
// [CLS] or [SEP].
std::unique_ptr<Tokenizer> as_encoder_tokenizer(BpeTokenizer tokenizer);

// The files of a checkpoint folder: model.safetensors as bytes, the text files by name
// ("config.json", "vocab.json", "vocab.txt", ...). Views: the caller keeps them alive.
struct ModelFiles {
  const std::uint8_t* weights = nullptr;
  std::size_t weights_size = 0;
  std::map<std::string, std::string_view, std::less<>> texts;
};

struct LoadedModel {
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;  // null when the folder has no tokenizer files
  SafetensorsMetadata metadata;
};

struct ModelFamily {
  const char* name;                      // "gpt2"
  std::vector<std::string> model_types;  // config.json "model_type" values it reads
  bool causal;
  PredictionKind prediction;
  // Sets of files that make a tokenizer, in order of preference; a folder needs one whole set
  // (or none, for a model without a tokenizer).
  std::vector<std::vector<std::string>> tokenizer_files;
  std::vector<std::string> optional_files;  // read when present ("tokenizer_config.json")
  // Loads the folder; throws BAD_FILE naming the file and the entry at fault.
  LoadedModel (*load)(const ModelFiles& files);
};

// Every family, in the order the registry lists them.
const std::vector<ModelFamily>& model_families();

// The largest text file of each kind load_model() reads, in bytes (0: a name it does not read).
// Parsing a file grows the heap by several dozen times its size (JSON values, a vocabulary trie),
// and a WebAssembly heap never shrinks: a hostile 16 MB config.json took it to 1.4 GB. Each cap
// is many times the largest real file: config.json 1 MiB (a few KB), tokenizer_config.json 4 MiB
// (Gemma 3's, with every added token, about 1.2 MB), vocab.txt 16 MiB (multilingual BERT's,
// under 1 MB), vocab.json and merges.txt 32 MiB (Qwen's, under 3 MB), tokenizer.json 64 MiB
// (Gemma 3's, about 33 MB).
std::size_t max_text_file_bytes(std::string_view file_name) noexcept;

// The family of a config.json: its "model_type" (a GPT-2 config without one is GPT-2). Throws
// BAD_FILE naming the file and the model_type, and listing the families attnlens loads; BAD_FILE
// for a text over max_text_file_bytes("config.json"), before it is parsed.
const ModelFamily& family_of(std::string_view config_json,
                             std::string_view file_name = "config.json");

// Loads a checkpoint folder through its family. Throws BAD_FILE (naming the file: a missing
// file names the family's files; a text over max_text_file_bytes, before anything is parsed),
// and the family loader's errors.
LoadedModel load_model(const ModelFiles& files);

// The files of a model and tokenizer as a checkpoint folder: model.safetensors (F32, or F16
// rounded to nearest even), config.json and the tokenizer's files. Names and order as
// Hugging Face writes them; load_model() reads them back.
std::vector<std::pair<std::string, std::vector<std::uint8_t>>> save_model(
    const Model& model, const Tokenizer* tokenizer, const CheckpointSaveOptions& options = {});

// The compute threads every model's matrix products split their columns over, the calling
// thread included: 1 (no helpers) until set. Helpers wait between products, so a forward pays
// no thread start. Returns the number now in use: 1 in a WebAssembly build without threads.
// threads outside [1, 64] is BAD_ARGUMENT. The results are the same bits whatever the number
// (each output is summed by one thread, in the same order).
int set_compute_threads(int threads);
int compute_threads();

}  // namespace attnlens
