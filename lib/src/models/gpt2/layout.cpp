#include "models/gpt2/layout.hpp"

namespace attnlens::detail {

Gpt2Layout gpt2_layout(const Gpt2Config& config) {
  const std::int64_t V = config.vocab_size, C = config.context, d = config.d_model;
  Gpt2Layout layout;
  auto add = [&](std::string name, Gpt2Role role, Shape shape) {
    Gpt2TensorInfo info;
    info.name = std::move(name);
    info.role = role;
    info.count = shape_numel(shape);
    info.shape = std::move(shape);
    info.offset = layout.total;
    layout.total += info.count;
    layout.tensors.push_back(std::move(info));
    return layout.tensors.back().offset;
  };
  layout.wte = add("wte.weight", Gpt2Role::Embedding, {V, d});
  layout.wpe = add("wpe.weight", Gpt2Role::Embedding, {C, d});
  for (int i = 0; i < config.layers; ++i) {
    const std::string h = "h." + std::to_string(i) + ".";
    Gpt2BlockOffsets b;
    if (config.attention_norm) {
      b.ln1_w = add(h + "ln_1.weight", Gpt2Role::NormWeight, {d});
      b.ln1_b = add(h + "ln_1.bias", Gpt2Role::Bias, {d});
    }
    b.attn_w = add(h + "attn.c_attn.weight", Gpt2Role::Matrix, {d, 3 * d});
    b.attn_b = add(h + "attn.c_attn.bias", Gpt2Role::Bias, {3 * d});
    b.attn_proj_w = add(h + "attn.c_proj.weight", Gpt2Role::ResidualMatrix, {d, d});
    b.attn_proj_b = add(h + "attn.c_proj.bias", Gpt2Role::Bias, {d});
    b.ln2_w = add(h + "ln_2.weight", Gpt2Role::NormWeight, {d});
    b.ln2_b = add(h + "ln_2.bias", Gpt2Role::Bias, {d});
    b.fc_w = add(h + "mlp.c_fc.weight", Gpt2Role::Matrix, {d, 4 * d});
    b.fc_b = add(h + "mlp.c_fc.bias", Gpt2Role::Bias, {4 * d});
    b.fc_proj_w = add(h + "mlp.c_proj.weight", Gpt2Role::ResidualMatrix, {4 * d, d});
    b.fc_proj_b = add(h + "mlp.c_proj.bias", Gpt2Role::Bias, {d});
    layout.blocks.push_back(b);
  }
  layout.lnf_w = add("ln_f.weight", Gpt2Role::NormWeight, {d});
  layout.lnf_b = add("ln_f.bias", Gpt2Role::Bias, {d});
  return layout;
}

}  // namespace attnlens::detail
