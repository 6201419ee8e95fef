// BERT-family weights to and from Hugging Face's named tensors.
#include <attnlens/bert.hpp>

#include "core/check.hpp"
#include "models/bert/layout.hpp"
#include "models/bert/workspace.hpp"

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
  if (starts_with(name, "albert.")) return "ALBERT";
  if (name.find("self_attn.q_proj") != std::string_view::npos) return "LLaMA-style";
  return nullptr;
}

void require_consistent(const std::string& name, const Tensor& t) {
  const std::int64_t n = shape_numel(t.shape, name.c_str());
  if (n != t.numel()) {
    detail::fail(ErrorCode::BAD_FILE, "tensor '", name, "' has shape ", shape_to_string(t.shape),
                 " (", n, " elements) but holds ", t.numel(), " values");
  }
}

std::string config_text(const BertConfig& c) {
  std::string s = "layers " + std::to_string(c.layers) + ", heads " + std::to_string(c.heads) +
                  ", d_model " + std::to_string(c.d_model) + ", intermediate " +
                  std::to_string(c.intermediate) + ", context " + std::to_string(c.context) +
                  ", vocab_size " + std::to_string(c.vocab_size);
  if (c.flavor == BertFlavor::Bert) s += ", type_vocab_size " + std::to_string(c.type_vocab_size);
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

BertModel BertModel::from_tensors(const BertConfig& config, const TensorList& tensors) {
  validate(config);
  const BertLayout layout = detail::bert_layout(config);
  const BertFlavor flavor = config.flavor;
  const char* const decoder_weight =
      flavor == BertFlavor::Bert ? "cls.predictions.decoder.weight" : "vocab_projector.weight";
  const char* const decoder_bias =
      flavor == BertFlavor::Bert ? "cls.predictions.decoder.bias" : nullptr;

  for (const auto& [name, tensor] : tensors) {
    if (const char* family = foreign_family(name)) {
      detail::fail(ErrorCode::BAD_FILE, "this looks like a ", family, " checkpoint: it holds '",
                   name, "' ", shape_to_string(tensor.shape), "; the config says ",
                   flavor == BertFlavor::Bert ? "bert" : "distilbert");
    }
  }

  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < layout.files.size(); ++i)
    index.emplace(layout.files[i].name, i);
  std::vector<const std::string*> found(layout.files.size(), nullptr);
  std::vector<const Tensor*> source(layout.files.size(), nullptr);
  const Tensor* tied = nullptr;
  const std::string* tied_name = nullptr;
  const Tensor* tied_bias = nullptr;
  const std::string* tied_bias_name = nullptr;

  for (const auto& [name, tensor] : tensors) {
    const std::string key = canonical(name, flavor);
    if (skipped(key)) continue;
    if (key == decoder_weight) {
      tied = &tensor;
      tied_name = &name;
      continue;
    }
    if (decoder_bias != nullptr && key == decoder_bias) {
      tied_bias = &tensor;
      tied_bias_name = &name;
      continue;
    }
    const auto it = index.find(key);
    if (it == index.end()) {
      const bool head = starts_with(key, "cls.") || starts_with(key, "vocab_");
      detail::fail(ErrorCode::BAD_FILE, "unexpected tensor '", name, "' ",
                   shape_to_string(tensor.shape),
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
    if (tensor.shape != f.shape) {
      detail::fail(ErrorCode::BAD_FILE, "tensor '", name, "' has shape ",
                   shape_to_string(tensor.shape), " but the config (", config_text(config),
                   ") needs ", shape_to_string(f.shape));
    }
    require_consistent(name, tensor);
    for (std::int64_t i = 0; i < tensor.numel(); ++i) {
      const float x = tensor.data[static_cast<std::size_t>(i)];
      if (!std::isfinite(x)) {
        detail::fail(ErrorCode::BAD_FILE, "tensor '", name, "' holds ", x, " at flat index ", i,
                     " (shape ", shape_to_string(tensor.shape), "); weights must be finite");
      }
    }
    source[it->second] = &tensor;
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

  BertModel model(config);
  for (std::size_t i = 0; i < layout.files.size(); ++i)
    place(layout.files[i], source[i]->data.data(), model.params_.data());

  // The decoder is tied to the word embeddings (Hugging Face saves it once, or twice equal).
  if (tied != nullptr) {
    if (!config.mlm_head || tied->shape != Shape{config.vocab_size, config.d_model}) {
      detail::fail(ErrorCode::BAD_FILE, "tensor '", *tied_name, "' has shape ",
                   shape_to_string(tied->shape),
                   " but the tied decoder needs the word embeddings' ",
                   shape_to_string(Shape{config.vocab_size, config.d_model}));
    }
    require_consistent(*tied_name, *tied);
    const float* w = model.params_.data() + layout.word;
    for (std::int64_t i = 0; i < tied->numel(); ++i) {
      if (!(tied->data[static_cast<std::size_t>(i)] == w[i])) {
        detail::fail(ErrorCode::BAD_FILE, "tensor '", *tied_name,
                     "' differs from the word embeddings at flat index ", i, " (",
                     tied->data[static_cast<std::size_t>(i)], " vs ", w[i],
                     "); attnlens ties the decoder to them and cannot load an untied one");
      }
    }
  }
  if (tied_bias != nullptr) {
    const float* b = model.params_.data() + layout.decoder_b;
    const bool same = config.mlm_head && tied_bias->shape == Shape{config.vocab_size} &&
                      tied_bias->numel() == config.vocab_size &&
                      std::equal(tied_bias->data.begin(), tied_bias->data.end(), b);
    if (!same) {
      detail::fail(ErrorCode::BAD_FILE, "tensor '", *tied_bias_name,
                   "' differs from cls.predictions.bias; they are one parameter in BERT");
    }
  }
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
