#include "train_progress.hpp"

#include <cmath>

namespace attnlens::train {

std::string format_duration(double seconds) {
  const long s = std::lround(std::max(seconds, 0.0));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, s / 60 % 60);
  } else if (s >= 60) {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lds", s);
  }
  return buf;
}

Progress::Progress(std::int64_t first_step, std::int64_t total_steps, std::int64_t tokens_per_step,
                   std::int64_t line_every, bool tty, std::FILE* out)
    : total_(total_steps),
      tokens_per_step_(tokens_per_step),
      line_every_(line_every),
      tty_(tty),
      out_(out),
      start_(Clock::now()),
      window_start_(start_),
      window_first_step_(first_step) {}

double Progress::elapsed() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

std::string Progress::line(std::int64_t step, double lr) const {
  constexpr int kBar = 24;
  const std::int64_t done = step + 1;
  const double fraction = static_cast<double>(done) / static_cast<double>(total_);
  const int filled = static_cast<int>(fraction * kBar);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kBar - filled), '.');
  const double loss = window_steps_ > 0 ? window_loss_ / static_cast<double>(window_steps_) : 0.0;
  const double left = rate_ > 0.0 ? static_cast<double>(total_ - done) / rate_ : 0.0;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "step %6lld/%lld [%s] %5.1f%%  loss %.4f  lr %.2e  %5.1fk tok/s  %s elapsed  "
                "ETA %s",
                static_cast<long long>(done), static_cast<long long>(total_), bar.c_str(),
                100.0 * fraction, loss, lr, rate_ * static_cast<double>(tokens_per_step_) / 1000.0,
                format_duration(elapsed()).c_str(),
                rate_ > 0.0 ? format_duration(left).c_str() : "?");
  return buf;
}

void Progress::step(std::int64_t step, double loss, double lr) {
  window_loss_ += loss;
  ++window_steps_;
  const Clock::time_point now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - window_start_).count();
  if (seconds > 0.0) rate_ = static_cast<double>(step + 1 - window_first_step_) / seconds;
  const bool full_line = (step + 1) % line_every_ == 0 || step + 1 == total_;
  if (tty_) {
    std::fprintf(out_, "\r%s\033[K", line(step, lr).c_str());
    partial_line_ = true;
  }
  if (full_line) {
    if (tty_) {
      std::fputc('\n', out_);
    } else {
      std::fprintf(out_, "%s\n", line(step, lr).c_str());
    }
    partial_line_ = false;
    window_start_ = now;
    window_first_step_ = step + 1;
    window_loss_ = 0.0;
    window_steps_ = 0;
  }
  std::fflush(out_);
}

void Progress::message(const std::string& text) {
  if (partial_line_) std::fputs("\r\033[K", out_);
  partial_line_ = false;
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
}

}  // namespace attnlens::train
