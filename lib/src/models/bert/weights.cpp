// BERT-family weights to and from Hugging Face's named tensors.
#include <attnlens/bert.hpp>
#include <attnlens/safetensors.hpp>

#include "core/check.hpp"
#include "models/bert/layout.hpp"
#include "models/bert/workspace.hpp"
#include "models/tensor_source.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>

namespace attnlens {
namespace {

using detail::BertFileTensor;
using detail::BertLayout;

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The canonical form of a checkpoint name: without the class prefix ("bert." / "distilbert."),
// LayerNorm's old gamma / beta as weight / bias.
std::string canonical(std::string_view name, BertFlavor flavor) {
  const std::string_view prefix = detail::bert_prefix(flavor);
  if (starts_with(name, prefix)) name.remove_prefix(prefix.size());
  std::string out(name);
  if (ends_with(out, ".gamma")) out.replace(out.size() - 6, 6, ".weight");
  if (ends_with(out, ".beta")) out.replace(out.size() - 5, 5, ".bias");
  return out;
}

// Tensors a checkpoint may hold that the model does not use: the pooler and next-sentence head
// (BertForPreTraining, BertModel), and the tied decoder (checked separately).
bool skipped(std::string_view name) {
  return starts_with(name, "pooler.") || starts_with(name, "cls.seq_relationship.");
}

// Names that belong to other architectures, with the family they point to.
const char* foreign_family(std::string_view name) {
  if (starts_with(name, "h.") || starts_with(name, "transformer.h.") || name == "wte.weight") {
    return "GPT-2";
  }
  if (starts_with(name, "roberta.")) return "RoBERTa";
  if (starts_with(name, "bert.")) return "BERT";
  if (starts_with(name, "albert.")) return "ALBERT";
  if (name.find("self_attn.q_proj") != std::string_view::npos) return "LLaMA-style";
  return nullptr;
}

std::string config_text(const BertConfig& c) {
  std::string s = "layers " + std::to_string(c.layers) + ", heads " + std::to_string(c.heads) +
                  ", d_model " + std::to_string(c.d_model) + ", intermediate " +
                  std::to_string(c.intermediate) + ", context " + std::to_string(c.context) +
                  ", vocab_size " + std::to_string(c.vocab_size);
  if (c.flavor != BertFlavor::DistilBert)
    s += ", type_vocab_size " + std::to_string(c.type_vocab_size);
  return s;
}

// Copies a file tensor's values into the flat array (transposing linear weights).
void place(const BertFileTensor& f, const float* values, float* base) {
  if (!f.transposed) {
    std::copy(values, values + shape_numel(f.shape), base + f.offset);
    return;
  }
  const std::int64_t out = f.shape[0], in = f.shape[1];
  for (std::int64_t o = 0; o < out; ++o) {
    for (std::int64_t i = 0; i < in; ++i)
      base[f.offset + i * f.width + f.column + o] = values[o * in + i];
  }
}

// The reverse: a file tensor's values read from the flat array.
Tensor take(const BertFileTensor& f, const float* base) {
  Tensor t(f.shape);
  if (!f.transposed) {
    std::copy(base + f.offset, base + f.offset + t.numel(), t.data.begin());
    return t;
  }
  const std::int64_t out = f.shape[0], in = f.shape[1];
  for (std::int64_t o = 0; o < out; ++o) {
    for (std::int64_t i = 0; i < in; ++i)
      t.data[static_cast<std::size_t>(o * in + i)] = base[f.offset + i * f.width + f.column + o];
  }
  return t;
}

std::string full_name(const BertFileTensor& f, BertFlavor flavor) {
  return f.encoder ? detail::bert_prefix(flavor) + f.name : f.name;
}

TensorList named(const BertLayout& layout, BertFlavor flavor, const float* base) {
  TensorList out;
  for (const BertFileTensor& f : layout.files)
    out.emplace_back(full_name(f, flavor), take(f, base));
  return out;
}

}  // namespace

namespace {

// The checks of from_tensors, before anything is read or allocated: every name known (or
// skipped), none twice, shapes as the config needs them, none missing. Returns, in the order
// given, each source with the file tensor of the layout it fills, and the tied decoder's weight
// and bias when the checkpoint has them.
struct Plan {
  std::vector<std::pair<const detail::TensorSource*, std::size_t>>
      fills;  // (source, index in layout.files)
  const detail::TensorSource* tied = nullptr;
  const detail::TensorSource* tied_bias = nullptr;
};

Plan plan_sources(const BertConfig& config, const BertLayout& layout,
                  const std::vector<detail::TensorSource>& tensors) {
  const BertFlavor flavor = config.flavor;
  const char* const decoder_weight = flavor == BertFlavor::Bert ? "cls.predictions.decoder.weight"
                                     : flavor == BertFlavor::Roberta ? "lm_head.decoder.weight"
                                                                     : "vocab_projector.weight";
  const char* const decoder_bias = flavor == BertFlavor::Bert      ? "cls.predictions.decoder.bias"
                                   : flavor == BertFlavor::Roberta ? "lm_head.decoder.bias"
                                                                   : nullptr;

  const std::string_view own_prefix = detail::bert_prefix(flavor);
  for (const detail::TensorSource& tensor : tensors) {
    if (starts_with(*tensor.name, own_prefix)) continue;
    if (const char* family = foreign_family(*tensor.name)) {
      detail::fail(ErrorCode::BAD_FILE, "this looks like a ", family, " checkpoint: it holds '",
                   *tensor.name, "' ", shape_to_string(*tensor.shape), "; the config says ",
                   detail::bert_names(flavor).family);
    }
  }

  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < layout.files.size(); ++i)
    index.emplace(layout.files[i].name, i);
  std::vector<const std::string*> found(layout.files.size(), nullptr);
  Plan plan;

  for (const detail::TensorSource& tensor : tensors) {
    const std::string& name = *tensor.name;
    const std::string key = canonical(name, flavor);
    if (skipped(key)) continue;
    if (key == decoder_weight) {
      plan.tied = &tensor;
      continue;
    }
    if (decoder_bias != nullptr && key == decoder_bias) {
      plan.tied_bias = &tensor;
      continue;
    }
    const auto it = index.find(key);
    if (it == index.end()) {
      const bool head =
          starts_with(key, "cls.") || starts_with(key, "vocab_") || starts_with(key, "lm_head.");
      detail::fail(ErrorCode::BAD_FILE, "unexpected tensor '", name, "' ",
                   shape_to_string(*tensor.shape),
                   head && !config.mlm_head
                       ? std::string("; the model was read without a masked-LM head")
                       : "; the config (" + config_text(config) + ") has no such tensor");
    }
    const BertFileTensor& f = layout.files[it->second];
    if (found[it->second] != nullptr) {
      detail::fail(ErrorCode::BAD_FILE, "tensor '", full_name(f, flavor), "' appears twice ('",
                   *found[it->second], "' and '", name, "')");
    }
    found[it->second] = &name;
    if (*tensor.shape != f.shape) {
      detail::fail(ErrorCode::BAD_FILE, "tensor '", name, "' has shape ",
                   shape_to_string(*tensor.shape), " but the config (", config_text(config),
                   ") needs ", shape_to_string(f.shape));
    }
    detail::require_consistent(tensor);
    plan.fills.emplace_back(&tensor, it->second);
  }
  std::int64_t missing = 0;
  const BertFileTensor* first_missing = nullptr;
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (found[i] == nullptr && missing++ == 0) first_missing = &layout.files[i];
  }
  if (first_missing != nullptr) {
    detail::fail(ErrorCode::BAD_FILE, "tensor '", full_name(*first_missing, flavor), "' ",
                 shape_to_string(first_missing->shape), " is missing",
                 missing > 1 ? " (and " + std::to_string(missing - 1) + " more)" : std::string(),
                 "; ", tensors.size(), " tensors were given");
  }
  return plan;
}

// Reads each planned tensor (through one buffer as large as the largest, checked finite there)
// into params, transposing linear weights; then checks a tied decoder against the embeddings.
void fill(float* params, const BertConfig& config, const BertLayout& layout, const Plan& plan) {
  std::int64_t largest = 0;
  for (const auto& [tensor, i] : plan.fills)
    largest = std::max(largest, tensor->values);
  if (plan.tied != nullptr) largest = std::max(largest, plan.tied->values);
  if (plan.tied_bias != nullptr) largest = std::max(largest, plan.tied_bias->values);
  std::vector<float> buffer(static_cast<std::size_t>(largest));
  for (const auto& [tensor, i] : plan.fills) {
    tensor->read(buffer.data());
    detail::require_finite(*tensor, buffer.data(), "weights must be finite");
    place(layout.files[i], buffer.data(), params);
  }

  // The decoder is tied to the word embeddings (Hugging Face saves it once, or twice equal).
  if (const detail::TensorSource* tied = plan.tied) {
    if (!config.mlm_head || *tied->shape != Shape{config.vocab_size, config.d_model}) {
      detail::fail(ErrorCode::BAD_FILE, "tensor '", *tied->name, "' has shape ",
                   shape_to_string(*tied->shape),
                   " but the tied decoder needs the word embeddings' ",
                   shape_to_string(Shape{config.vocab_size, config.d_model}));
    }
    detail::require_consistent(*tied);
    tied->read(buffer.data());
    const float* w = params + layout.word;
    for (std::int64_t i = 0; i < tied->values; ++i) {
      if (!(buffer[static_cast<std::size_t>(i)] == w[i])) {
        detail::fail(ErrorCode::BAD_FILE, "tensor '", *tied->name,
                     "' differs from the word embeddings at flat index ", i, " (",
                     buffer[static_cast<std::size_t>(i)], " vs ", w[i],
                     "); attnlens ties the decoder to them and cannot load an untied one");
      }
    }
  }
  if (const detail::TensorSource* bias = plan.tied_bias) {
    const float* b = params + layout.decoder_b;
    bool same = config.mlm_head && *bias->shape == Shape{config.vocab_size} &&
                bias->values == config.vocab_size;
    if (same) {
      bias->read(buffer.data());
      same = std::equal(buffer.begin(), buffer.begin() + bias->values, b);
    }
    if (!same) {
      detail::fail(ErrorCode::BAD_FILE, "tensor '", *bias->name, "' differs from ",
                   config.flavor == BertFlavor::Roberta ? "lm_head.bias" : "cls.predictions.bias",
                   "; the two names are one parameter");
    }
  }
}

// Integer buffers some checkpoints hold (position_ids, token_type_ids): not weights.
bool is_buffer(const SafetensorsEntry& e) {
  const bool is_float = e.dtype == Dtype::F32 || e.dtype == Dtype::F16 || e.dtype == Dtype::BF16;
  return !is_float && (ends_with(e.name, "position_ids") || ends_with(e.name, "token_type_ids"));
}

}  // namespace

BertModel BertModel::from_tensors(const BertConfig& config, const TensorList& tensors) {
  validate(config);
  const BertLayout layout = detail::bert_layout(config);
  const std::vector<detail::TensorSource> sources = detail::tensor_sources(tensors);
  const Plan plan = plan_sources(config, layout, sources);
  BertModel model(config);
  fill(model.params_.data(), config, layout, plan);
  return model;
}

BertModel BertModel::from_safetensors(const BertConfig& config, const SafetensorsView& file) {
  validate(config);
  const BertLayout layout = detail::bert_layout(config);
  const std::string_view prefix = detail::bert_prefix(config.flavor);
  // Neither read nor counted as given: integer buffers, the pooler and next-sentence head.
  const std::vector<detail::TensorSource> sources =
      detail::tensor_sources(file, [&](const SafetensorsEntry& e) {
        std::string_view n = e.name;
        if (starts_with(n, prefix)) n.remove_prefix(prefix.size());
        return !is_buffer(e) && !skipped(n);
      });
  const Plan plan = plan_sources(config, layout, sources);
  BertModel model(config);
  fill(model.params_.data(), config, layout, plan);
  return model;
}

TensorList BertModel::to_tensors() const {
  return named(work_->layout, config_.flavor, params_.data());
}

TensorList BertModel::gradients() const {
  if (grads_.empty()) {
    const std::vector<float> zeros(params_.size(), 0.0f);
    return named(work_->layout, config_.flavor, zeros.data());
  }
  return named(work_->layout, config_.flavor, grads_.data());
}

}  // namespace attnlens
