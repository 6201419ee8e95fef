#include "train_state.hpp"

#include <attnlens/checkpoint.hpp>
#include <attnlens/safetensors.hpp>
#include <attnlens/status.hpp>

#include "core/check.hpp"
#include "corpus/io.hpp"
#include "io/json.hpp"

#include <cstdio>
#include <filesystem>

namespace attnlens::train {
namespace {

constexpr std::size_t kMaxStateFile = std::size_t{1} << 31;

std::string number(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// Writes through path + ".tmp" and a rename, so a reader never sees half a file.
void write_atomically(const std::string& path, std::string_view bytes) {
  const std::string tmp = path + ".tmp";
  corpus::write_file(tmp, bytes);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) detail::fail(ErrorCode::BAD_FILE, path, ": cannot replace it (", ec.message(), ")");
}

std::string_view as_text(const std::vector<std::uint8_t>& bytes) {
  return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

const detail::JsonValue& member(const detail::JsonValue& object, std::string_view key,
                                const std::string& file) {
  const detail::JsonValue* v = object.find(key);
  if (v == nullptr) detail::fail(ErrorCode::BAD_FILE, file, ": \"", key, "\" is missing");
  return *v;
}

double number_member(const detail::JsonValue& object, std::string_view key,
                     const std::string& file) {
  const detail::JsonValue& v = member(object, key, file);
  if (!v.is_number()) detail::fail(ErrorCode::BAD_FILE, file, ": \"", key, "\" is not a number");
  return v.as_number();
}

// The "step" metadata entry of a safetensors file.
std::string metadata_step(const SafetensorsView& view) {
  for (const auto& [key, value] : view.metadata())
    if (key == "step") return value;
  return std::string();
}

}  // namespace

std::string curve_json(const std::vector<CurvePoint>& curve, const std::string& indent) {
  std::string out = "[";
  for (std::size_t i = 0; i < curve.size(); ++i) {
    const CurvePoint& p = curve[i];
    out += i == 0 ? "\n" : ",\n";
    out += indent + "  {\"step\": " + std::to_string(p.step) +
           ", \"tokens\": " + std::to_string(p.tokens) + ", \"seconds\": " + number(p.seconds) +
           ", \"train_loss\": " + number(p.train_loss) + ", \"lr\": " + number(p.lr) +
           ", \"heldout_loss\": " + number(p.heldout_loss) +
           ", \"previous_token\": " + number(p.previous_token) +
           (p.next_token >= 0.0 ? ", \"next_token\": " + number(p.next_token) : std::string()) +
           ", \"induction\": " + number(p.induction) +
           ", \"first_copy_loss\": " + number(p.first_copy_loss) +
           ", \"second_copy_loss\": " + number(p.second_copy_loss) + "}";
  }
  out += curve.empty() ? "]" : "\n" + indent + "]";
  return out;
}

void save_state(const std::string& dir, const Model& model, const TrainState& state) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) detail::fail(ErrorCode::BAD_FILE, dir, ": cannot create the folder (", ec.message(), ")");
  const std::string step = std::to_string(state.step);

  CheckpointSaveOptions options;
  options.metadata = {{"step", step}};
  for (const auto& [name, bytes] : save_model(model, nullptr, options)) {
    write_atomically(dir + "/" + name,
                     std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }

  AdamWState adam = model.optimizer_state();
  const std::int64_t n = static_cast<std::int64_t>(adam.m.size());
  const TensorList moments = {{"m", Tensor({n}, std::move(adam.m))},
                              {"v", Tensor({n}, std::move(adam.v))}};
  const std::vector<std::uint8_t> optimizer =
      write_safetensors(moments, {{"adamw_steps", std::to_string(adam.steps)}, {"step", step}},
                        Dtype::F32, "optimizer.safetensors");
  write_atomically(dir + "/optimizer.safetensors", as_text(optimizer));

  std::string json = "{\n  \"fingerprint\": ";
  detail::append_json_string(json, state.fingerprint);
  json += ",\n  \"step\": " + step + ",\n  \"seconds\": " + number(state.seconds) +
          ",\n  \"curve\": " + curve_json(state.curve, "  ") + "\n}\n";
  write_atomically(dir + "/state.json", json);
}

std::optional<TrainState> load_state(const std::string& dir, const std::string& fingerprint,
                                     std::unique_ptr<Model>& model) {
  const std::string state_path = dir + "/state.json";
  if (!std::filesystem::exists(state_path)) return std::nullopt;
  const std::string text = corpus::read_file(state_path, kMaxStateFile);
  const detail::JsonValue root = detail::parse_json(text, state_path);
  const detail::JsonValue& fp = member(root, "fingerprint", state_path);
  if (!fp.is_string() || fp.as_string() != fingerprint) {
    detail::fail(ErrorCode::BAD_FILE, state_path,
                 ": this state belongs to a run with other settings or data; remove ", dir,
                 " or pass --fresh to start over");
  }
  TrainState state;
  state.fingerprint = fingerprint;
  state.step = static_cast<std::int64_t>(number_member(root, "step", state_path));
  state.seconds = number_member(root, "seconds", state_path);
  const detail::JsonValue& curve = member(root, "curve", state_path);
  if (!curve.is_array())
    detail::fail(ErrorCode::BAD_FILE, state_path, ": \"curve\" is not an array");
  for (const detail::JsonValue& p : curve.items()) {
    CurvePoint c;
    c.step = static_cast<std::int64_t>(number_member(p, "step", state_path));
    c.tokens = static_cast<std::int64_t>(number_member(p, "tokens", state_path));
    c.seconds = number_member(p, "seconds", state_path);
    c.train_loss = number_member(p, "train_loss", state_path);
    c.lr = number_member(p, "lr", state_path);
    c.heldout_loss = number_member(p, "heldout_loss", state_path);
    c.previous_token = number_member(p, "previous_token", state_path);
    if (p.find("next_token") != nullptr) c.next_token = number_member(p, "next_token", state_path);
    c.induction = number_member(p, "induction", state_path);
    // Older states (before the first copy was recorded) lack it: -1, not measured.
    if (p.find("first_copy_loss") != nullptr)
      c.first_copy_loss = number_member(p, "first_copy_loss", state_path);
    c.second_copy_loss = number_member(p, "second_copy_loss", state_path);
    state.curve.push_back(c);
  }

  const std::string step = std::to_string(state.step);
  const std::string weights = corpus::read_file(dir + "/model.safetensors", kMaxStateFile);
  const std::string config = corpus::read_file(dir + "/config.json", kMaxStateFile);
  const std::string moments = corpus::read_file(dir + "/optimizer.safetensors", kMaxStateFile);
  ModelFiles files;
  files.weights = reinterpret_cast<const std::uint8_t*>(weights.data());
  files.weights_size = weights.size();
  files.texts.emplace("config.json", config);
  LoadedModel loaded = load_model(files);
  const SafetensorsView weight_view(files.weights, files.weights_size, dir + "/model.safetensors");
  const SafetensorsView moment_view(reinterpret_cast<const std::uint8_t*>(moments.data()),
                                    moments.size(), dir + "/optimizer.safetensors");
  if (metadata_step(weight_view) != step || metadata_step(moment_view) != step) {
    detail::fail(ErrorCode::BAD_FILE, dir, ": state.json is at step ", step,
                 " but model.safetensors and optimizer.safetensors are at steps ",
                 metadata_step(weight_view), " and ", metadata_step(moment_view));
  }
  AdamWState adam;
  adam.m = moment_view.read_f32("m").data;
  adam.v = moment_view.read_f32("v").data;
  for (const auto& [key, value] : moment_view.metadata())
    if (key == "adamw_steps") adam.steps = std::stoll(value);

  Model& restored = *loaded.model;
  restored.set_threads(model->threads());
  restored.set_optimizer(model->optimizer_config());
  restored.set_optimizer_state(adam);
  model = std::move(loaded.model);
  return state;
}

}  // namespace attnlens::train
