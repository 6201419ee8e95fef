// The trainer's progress line: step count, a bar, loss, learning rate, tokens per second and
// the time left.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace attnlens::train {

// "1h02m", "3m07s", "12s".
std::string format_duration(double seconds);

class Progress {
 public:
  // total_steps: the run's last step; tokens_per_step: B · T; line_every: steps between lines;
  // tty: redraw one line in place with '\r' after every step (a terminal) instead of printing
  // only every line_every steps (a log file: no '\r' at all).
  Progress(std::int64_t first_step, std::int64_t total_steps, std::int64_t tokens_per_step,
           std::int64_t line_every, bool tty, std::FILE* out = stdout);

  // After step `step` (0-based) with its loss and learning rate. Rates and the ETA come from
  // the steps since the last printed line (the machine is shared: recent speed is the honest
  // estimate).
  void step(std::int64_t step, double loss, double lr);

  // Prints a message on its own line (clearing a progress line being redrawn).
  void message(const std::string& text);

  // Seconds since construction.
  double elapsed() const;

 private:
  using Clock = std::chrono::steady_clock;
  std::string line(std::int64_t step, double lr) const;

  std::int64_t total_;
  std::int64_t tokens_per_step_;
  std::int64_t line_every_;
  bool tty_;
  std::FILE* out_;
  Clock::time_point start_;
  Clock::time_point window_start_;
  std::int64_t window_first_step_;
  double window_loss_ = 0.0;
  std::int64_t window_steps_ = 0;
  double rate_ = 0.0;  // steps per second over the last window
  bool partial_line_ = false;
};

}  // namespace attnlens::train
