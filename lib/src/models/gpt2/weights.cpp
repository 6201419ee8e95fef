// GPT-2 weights: the seeded initialisation, and named tensors in and out (the seam with the
// checkpoint readers and writers).
#include <attnlens/gpt2.hpp>
#include <attnlens/random.hpp>
#include <attnlens/safetensors.hpp>

#include "core/check.hpp"
#include "models/gpt2/layout.hpp"
#include "models/gpt2/workspace.hpp"
#include "models/tensor_source.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

namespace attnlens {
namespace {

using detail::Gpt2Role;
using detail::Gpt2TensorInfo;

constexpr std::string_view kPrefix = "transformer.";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

// Names that only other architectures use, with the family they point to.
const char* foreign_family(std::string_view name) {
  if (starts_with(name, "bert.") || contains(name, "embeddings.word_embeddings") ||
      contains(name, "attention.self.query")) {
    return "BERT";
  }
  if (contains(name, "self_attn.q_proj") || contains(name, "embed_tokens") ||
      contains(name, "mlp.gate_proj")) {
    return "LLaMA-style (LLaMA, Mistral, Qwen)";
  }
  if (starts_with(name, "gpt_neox.")) return "GPT-NeoX";
  if (contains(name, "encoder.block.") || contains(name, "decoder.block.")) return "T5";
  return nullptr;
}

// The block index i of "h.{i}.*", else -1.
long block_index(std::string_view name) {
  if (!starts_with(name, "h.")) return -1;
  const std::string_view digits = name.substr(2, name.find('.', 2) - 2);
  if (digits.empty() || digits.size() > 6 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -1;
  }
  return std::stol(std::string(digits));
}

// For "h.{i}.attn.bias" and "h.{i}.attn.masked_bias": the block index i, else -1.
long mask_buffer_block(std::string_view name) {
  if (!ends_with(name, ".attn.bias") && !ends_with(name, ".attn.masked_bias")) return -1;
  return block_index(name);
}

}  // namespace

Gpt2Model Gpt2Model::random(const Gpt2Config& config, std::uint64_t seed) {
  Gpt2Model model(config);
  Rng rng(seed);
  const double std_matrix = 0.02;
  const double std_residual = 0.02 / std::sqrt(2.0 * config.layers);
  for (const Gpt2TensorInfo& t : model.work_->layout.tensors) {
    float* p = model.params_.data() + t.offset;
    switch (t.role) {
      case Gpt2Role::NormWeight:
        std::fill(p, p + t.count, 1.0f);
        break;
      case Gpt2Role::Bias:
        std::fill(p, p + t.count, 0.0f);
        break;
      case Gpt2Role::Embedding:
      case Gpt2Role::Matrix:
      case Gpt2Role::ResidualMatrix: {
        const double sd = t.role == Gpt2Role::ResidualMatrix ? std_residual : std_matrix;
        for (std::int64_t i = 0; i < t.count; ++i)
          p[i] = static_cast<float>(sd * rng.normal());
        break;
      }
    }
  }
  return model;
}

namespace {

// The checks of from_tensors, before anything is read or allocated: every source's name known
// (or ignored), none twice, shapes as the config needs them, none missing, a lm_head of wte's
// shape. Returns, in the order given, each source with the layout tensor it fills.
struct Plan {
  std::vector<std::pair<const detail::TensorSource*, std::size_t>>
      fills;  // (source, index in layout.tensors)
  const detail::TensorSource* lm_head = nullptr;
};

Plan plan_sources(const Gpt2Config& config, const detail::Gpt2Layout& layout,
                  const std::vector<detail::TensorSource>& tensors) {
  // Another architecture's checkpoint would fail on its first name; say what it is instead.
  for (const detail::TensorSource& tensor : tensors) {
    if (const char* family = foreign_family(*tensor.name)) {
      detail::fail(ErrorCode::BAD_FILE, "this looks like a ", family, " checkpoint: it holds '",
                   *tensor.name, "' ", shape_to_string(*tensor.shape),
                   "; attnlens loads GPT-2-style checkpoints (wte.weight, wpe.weight, "
                   "h.0.attn.c_attn.weight, ...)");
    }
  }

  std::map<std::string_view, std::size_t> index;
  for (std::size_t i = 0; i < layout.tensors.size(); ++i)
    index.emplace(layout.tensors[i].name, i);
  std::vector<const std::string*> found(layout.tensors.size(), nullptr);
  Plan plan;

  for (const detail::TensorSource& tensor : tensors) {
    const std::string& full_name = *tensor.name;
    std::string_view name = full_name;
    if (starts_with(name, kPrefix)) name.remove_prefix(kPrefix.size());
    if (name == "lm_head.weight") {
      if (plan.lm_head != nullptr) {
        detail::fail(ErrorCode::BAD_FILE, "tensor 'lm_head.weight' appears twice ('",
                     *plan.lm_head->name, "' and '", full_name, "')");
      }
      plan.lm_head = &tensor;
      continue;
    }
    const long buffer_block = mask_buffer_block(name);
    if (buffer_block >= 0 && buffer_block < config.layers) continue;  // causal-mask buffer
    const auto it = index.find(name);
    if (it == index.end()) {
      const long block = block_index(name);
      if (!config.attention_norm && block >= 0 && block < config.layers &&
          name.find(".ln_1.") != std::string_view::npos) {
        detail::fail(ErrorCode::BAD_FILE, "unexpected tensor '", full_name, "' ",
                     shape_to_string(*tensor.shape),
                     ": the config has no LayerNorm before attention (attention_norm false, "
                     "\"attnlens_attention_norm\": false in config.json), so no ln_1 tensors");
      }
      if (starts_with(name, "h.")) {
        detail::fail(ErrorCode::BAD_FILE, "unexpected tensor '", full_name, "' ",
                     shape_to_string(*tensor.shape), ": the config has ", config.layers,
                     " layers (h.0 .. h.", config.layers - 1, ") and a GPT-2 block holds ",
                     config.attention_norm ? "ln_1, " : "",
                     "attn.c_attn, attn.c_proj, ln_2, mlp.c_fc and mlp.c_proj weights and "
                     "biases");
      }
      detail::fail(ErrorCode::BAD_FILE, "unexpected tensor '", full_name, "' ",
                   shape_to_string(*tensor.shape),
                   "; a GPT-2 checkpoint holds wte, wpe, h.{i}.* and ln_f tensors");
    }
    const Gpt2TensorInfo& info = layout.tensors[it->second];
    if (found[it->second] != nullptr) {
      detail::fail(ErrorCode::BAD_FILE, "tensor '", info.name, "' appears twice ('",
                   *found[it->second], "' and '", full_name, "')");
    }
    found[it->second] = &full_name;
    if (*tensor.shape != info.shape) {
      detail::fail(ErrorCode::BAD_FILE, "tensor '", full_name, "' has shape ",
                   shape_to_string(*tensor.shape), " but the config (layers ", config.layers,
                   ", heads ", config.heads, ", d_model ", config.d_model, ", context ",
                   config.context, ", vocab_size ", config.vocab_size, ") needs ",
                   shape_to_string(info.shape));
    }
    detail::require_consistent(tensor);
    plan.fills.emplace_back(&tensor, it->second);
  }

  std::int64_t missing = 0;
  const Gpt2TensorInfo* first_missing = nullptr;
  for (std::size_t i = 0; i < found.size(); ++i) {
    if (found[i] != nullptr) continue;
    if (missing++ == 0) first_missing = &layout.tensors[i];
  }
  if (first_missing != nullptr) {
    detail::fail(ErrorCode::BAD_FILE, "tensor '", first_missing->name, "' ",
                 shape_to_string(first_missing->shape), " is missing", missing > 1 ? " (and " : "",
                 missing > 1 ? std::to_string(missing - 1) : std::string(),
                 missing > 1 ? " more)" : "", "; ", tensors.size(), " tensors were given",
                 first_missing->name.find(".ln_1.") != std::string::npos
                     ? " (a model without the LayerNorm before attention needs "
                       "\"attnlens_attention_norm\": false in config.json)"
                     : "");
  }

  const Gpt2TensorInfo& wte = layout.tensors.front();
  if (plan.lm_head != nullptr) {
    if (*plan.lm_head->shape != wte.shape) {
      detail::fail(ErrorCode::BAD_FILE, "tensor '", *plan.lm_head->name, "' has shape ",
                   shape_to_string(*plan.lm_head->shape), " but the tied unembedding needs wte's ",
                   shape_to_string(wte.shape));
    }
    detail::require_consistent(*plan.lm_head);
  }
  return plan;
}

// Writes every planned tensor into params (laid out as `layout`), in the order given, each
// checked finite where it lands; then compares a lm_head with wte.
void fill(float* params, const detail::Gpt2Layout& layout, const Plan& plan) {
  for (const auto& [tensor, i] : plan.fills) {
    const Gpt2TensorInfo& info = layout.tensors[i];
    float* out = params + info.offset;
    tensor->read(out);
    detail::require_finite(*tensor, out, "weights must be finite numbers");
  }
  if (plan.lm_head != nullptr) {
    const Gpt2TensorInfo& wte = layout.tensors.front();
    std::vector<float> lm_head(static_cast<std::size_t>(wte.count));
    plan.lm_head->read(lm_head.data());
    const float* w = params + wte.offset;
    for (std::int64_t i = 0; i < wte.count; ++i) {
      // Compared by value: a NaN in lm_head differs from every wte value and is reported.
      if (!(lm_head[static_cast<std::size_t>(i)] == w[i])) {
        detail::fail(ErrorCode::BAD_FILE, "tensor '", *plan.lm_head->name,
                     "' differs from wte.weight at ", "flat index ", i, " (",
                     lm_head[static_cast<std::size_t>(i)], " vs ", w[i],
                     "); GPT-2 ties the unembedding to wte and attnlens cannot load an "
                     "untied lm_head");
      }
    }
  }
}

}  // namespace

Gpt2Model Gpt2Model::from_tensors(const Gpt2Config& config, const TensorList& tensors) {
  validate(config);
  // Names and shapes are matched against the layout before the parameters are allocated, so a
  // config whose sizes the tensors do not fill is an error naming a tensor, not an allocation
  // of what the config claims (gigabytes, for a small file and a large config).
  const detail::Gpt2Layout layout = detail::gpt2_layout(config);
  const std::vector<detail::TensorSource> sources = detail::tensor_sources(tensors);
  const Plan plan = plan_sources(config, layout, sources);
  Gpt2Model model(config);
  fill(model.params_.data(), layout, plan);
  return model;
}

Gpt2Model Gpt2Model::from_safetensors(const Gpt2Config& config, const SafetensorsView& file) {
  validate(config);
  const detail::Gpt2Layout layout = detail::gpt2_layout(config);
  // The causal-mask buffers (often U8 or bool) are neither read nor counted as given.
  const std::vector<detail::TensorSource> sources =
      detail::tensor_sources(file, [&](const SafetensorsEntry& entry) {
        std::string_view name = entry.name;
        if (starts_with(name, kPrefix)) name.remove_prefix(kPrefix.size());
        const long buffer_block = mask_buffer_block(name);
        return !(buffer_block >= 0 && buffer_block < config.layers);
      });
  const Plan plan = plan_sources(config, layout, sources);
  Gpt2Model model(config);
  fill(model.params_.data(), layout, plan);
  return model;
}

TensorList Gpt2Model::to_tensors() const {
  TensorList out;
  for (const Gpt2TensorInfo& t : work_->layout.tensors) {
    const auto begin = params_.begin() + t.offset;
    out.emplace_back(t.name, Tensor(t.shape, std::vector<float>(begin, begin + t.count)));
  }
  return out;
}

}  // namespace attnlens
