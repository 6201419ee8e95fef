#include "core/parallel.hpp"

#include <attnlens/model.hpp>

#include "core/check.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace attnlens::detail {
namespace {

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
constexpr bool kThreads = true;
#else
constexpr bool kThreads = false;
#endif

// A job's parts are claimed one at a time, under the mutex, by whoever comes first: the helpers
// woken for it and the calling thread itself, which goes on claiming after its first part. So a
// helper that is slow to wake (or, in WebAssembly, still loading as a Web Worker) delays nothing:
// the caller runs the part. Between jobs a helper spins briefly before it sleeps: a forward's
// products come one after another, tens of microseconds apart, and waking a sleeping thread (a
// futex; in WebAssembly Atomics.wait) costs about as much.
class Pool {
 public:
  ~Pool() { resize(1); }

  int resize(int threads) {
    std::lock_guard<std::mutex> running(run_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (std::thread& t : helpers_)
      t.join();
    helpers_.clear();
    stop_ = false;
    // (A helper counts jobs from now, not from when its thread gets to start.)
    const std::uint64_t now = generation_.load(std::memory_order_acquire);
    for (int i = 1; i < threads; ++i) {
      try {
        helpers_.emplace_back([this, now] { serve(now); });
      } catch (const std::exception&) {
        break;  // as many as could be made
      }
    }
    return threads_now();
  }

  int threads_now() const { return 1 + static_cast<int>(helpers_.size()); }

  void run(std::int64_t most, const std::function<void(int, int)>& part) {
    std::unique_lock<std::mutex> running(run_, std::try_to_lock);
    const int parts =
        running.owns_lock() ? static_cast<int>(std::min<std::int64_t>(most, threads_now())) : 1;
    if (parts <= 1) {
      part(0, 1);
      return;
    }
    std::uint64_t generation = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &part;
      parts_ = parts;
      next_ = 0;
      errors_.assign(static_cast<std::size_t>(parts), nullptr);
      remaining_.store(parts, std::memory_order_relaxed);
      generation = generation_.fetch_add(1, std::memory_order_release) + 1;
    }
    wake_.notify_all();
    work(generation);
    for (int spin = 0; remaining_.load(std::memory_order_acquire) != 0; ++spin) {
      if (spin > 4096) {
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [&] { return remaining_.load(std::memory_order_acquire) == 0; });
      }
    }
    std::exception_ptr error;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = nullptr;
      for (const std::exception_ptr& e : errors_) {
        if (e && !error) error = e;
      }
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  // Runs parts of job `generation` while any is unclaimed.
  void work(std::uint64_t generation) {
    for (;;) {
      int index = 0, parts = 0;
      const std::function<void(int, int)>* job = nullptr;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (generation_.load(std::memory_order_relaxed) != generation || job_ == nullptr ||
            next_ >= parts_)
          return;
        index = next_++;
        parts = parts_;
        job = job_;
      }
      std::exception_ptr error;
      try {
        (*job)(index, parts);
      } catch (...) {
        error = std::current_exception();
      }
      if (error) {
        std::lock_guard<std::mutex> lock(mutex_);
        errors_[static_cast<std::size_t>(index)] = error;
      }
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_all();
      }
    }
  }

  void serve(std::uint64_t seen) {
    for (;;) {
      // Spin a little, then sleep until the next job.
      for (int spin = 0; spin < 20000 && generation_.load(std::memory_order_acquire) == seen;
           ++spin) {
      }
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock,
                   [&] { return stop_ || generation_.load(std::memory_order_acquire) != seen; });
        if (stop_) return;
        seen = generation_.load(std::memory_order_acquire);
      }
      work(seen);
    }
  }

  std::mutex run_;    // one job at a time
  std::mutex mutex_;  // guards what follows, and the sleeps
  std::condition_variable wake_, done_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> remaining_{0};
  bool stop_ = false;
  const std::function<void(int, int)>* job_ = nullptr;
  int parts_ = 0;
  int next_ = 0;
  std::vector<std::exception_ptr> errors_;
  std::vector<std::thread> helpers_;
};

Pool& pool() {
  static Pool instance;
  return instance;
}

}  // namespace

int set_compute_threads(int threads) {
  if (!kThreads) return 1;
  return pool().resize(std::max(1, threads));
}

int compute_threads() {
  return kThreads ? pool().threads_now() : 1;
}

void parallel_parts(std::int64_t most, const std::function<void(int, int)>& part) {
  if (!kThreads || most <= 1) {
    part(0, 1);
    return;
  }
  pool().run(most, part);
}

}  // namespace attnlens::detail

namespace attnlens {

int set_compute_threads(int threads) {
  if (threads < 1 || threads > 64) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "threads is ", threads, "; it must be in [1, 64]");
  }
  return detail::set_compute_threads(threads);
}

int compute_threads() {
  return detail::compute_threads();
}

}  // namespace attnlens
