// The trainer's resumable state: the weights, AdamW's moments and the training curve so far,
// written every few hundred steps into a work folder, so an interrupted `npm run train`
// continues where it stopped and ends with the same bits as an uninterrupted run.
#pragma once

#include <attnlens/model.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attnlens::train {

// One point of the training curve.
struct CurvePoint {
  std::int64_t step = 0;         // steps done
  std::int64_t tokens = 0;       // tokens seen (step · B · T)
  double seconds = 0.0;          // wall time of training so far (evaluations included)
  double train_loss = 0.0;       // mean training-batch loss over the steps since the last point
  double lr = 0.0;               // learning rate of the last step
  double heldout_loss = -1.0;    // held-out loss on the trainer's fixed windows; -1 if not measured
  double previous_token = -1.0;  // best head's previous-token score; -1 if not measured
  double next_token = -1.0;      // best head's next-token score (encoders); -1 if not measured
  double induction = -1.0;       // best head's induction score; -1 if not measured
  double first_copy_loss = -1.0;   // induction probe loss on the first copy; -1 if not measured
  double second_copy_loss = -1.0;  // induction probe loss on the second copy; -1 if not measured
};

struct TrainState {
  std::string fingerprint;  // the run's settings and data; a state resumes only the same run
  std::int64_t step = 0;    // steps done
  double seconds = 0.0;     // wall time so far
  std::vector<CurvePoint> curve;
};

// Writes dir/model.safetensors (F32), dir/optimizer.safetensors (AdamW's m and v) and
// dir/state.json, each through a temporary file and a rename, state.json last: a state.json
// always describes complete weight files (both carry the step in their metadata, checked on
// loading). Creates dir if needed. Throws Error(BAD_FILE) naming a file that cannot be written.
void save_state(const std::string& dir, const Model& model, const TrainState& state);

// Reads a state written by save_state into `model` (weights and optimizer; the model's threads
// and optimizer settings are kept) and returns it, or std::nullopt when dir/state.json does
// not exist. Throws Error(BAD_FILE) naming the file when
// the state is damaged or its files disagree, and when its fingerprint differs from
// `fingerprint` (another run's state: the message says to remove the folder or pass --fresh).
std::optional<TrainState> load_state(const std::string& dir, const std::string& fingerprint,
                                     std::unique_ptr<Model>& model);

// JSON text of curve points (an array), and the reverse (for state.json and eval.json).
std::string curve_json(const std::vector<CurvePoint>& curve, const std::string& indent);

}  // namespace attnlens::train
