// Two cores for the CPU kernels' own loops (cpu_linear.cpp, cpu_attention.cpp). One helper
// thread for the process: the class lives in a named namespace so both files share it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace confab_cpu {

// A second core for the loops above. BLAS calls bring their own threads; Confab's own loops
// split their rows with one helper thread, which spins briefly after each job because decode
// calls come every few microseconds, then sleeps.
class Helper {
 public:
  static Helper& get() {
    static Helper* helper = new Helper();  // never destroyed: the thread outlives statics
    return *helper;
  }

  // f(begin, end) over [0, n): the upper part on the helper, the lower part here.
  template <class F>
  void split(int64_t n, F&& f) {
    // One caller at a time (MLX runs one thread per stream); another runs its rows alone.
    std::unique_lock<std::mutex> caller(caller_, std::try_to_lock);
    if (!caller.owns_lock()) {
      f(0, n);
      return;
    }
    const int64_t mid = n / 2;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = [&f, mid, n] { f(mid, n); };
      pending_.store(true, std::memory_order_release);
    }
    wake_.notify_one();
    f(0, mid);
    while (pending_.load(std::memory_order_acquire) || busy_.load(std::memory_order_acquire)) {
      std::this_thread::yield();
    }
  }

 private:
  Helper() : thread_([this] { loop(); }) { thread_.detach(); }

  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        // Spin for a while (about 100 µs) before sleeping.
        for (int i = 0; i < 20000 && !pending_.load(std::memory_order_acquire); ++i) {
#if defined(__x86_64__)
          __builtin_ia32_pause();
#endif
        }
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return pending_.load(std::memory_order_acquire); });
        job = std::move(job_);
        busy_.store(true, std::memory_order_release);
        pending_.store(false, std::memory_order_release);
      }
      job();
      busy_.store(false, std::memory_order_release);
    }
  }

  std::mutex caller_, mutex_;
  std::condition_variable wake_;
  std::function<void()> job_;
  std::atomic<bool> pending_{false}, busy_{false};
  std::thread thread_;
};

// Splits across two cores when there is enough work to pay for the hand-off.
template <class F>
void over_rows(int64_t rows, int64_t work_per_row, F&& f) {
  if (rows >= 2 && rows * work_per_row >= (1 << 16) && std::thread::hardware_concurrency() > 1) {
    Helper::get().split(rows, f);
  } else {
    f(0, rows);
  }
}

// Pieces [0, count) shared out as the cores come free: each core's `work(next)` takes pieces
// with `next(i)` (false when none are left) until they run out, so a helper that wakes late or a
// piece that runs slow leaves no core waiting at the end. `work` runs once per core, and can
// set up per-core scratch before its loop.
template <class W>
void over_pieces(int64_t count, int64_t work_per_piece, W&& work) {
  std::atomic<int64_t> taken{0};
  auto next = [&](int64_t& i) {
    i = taken.fetch_add(1, std::memory_order_relaxed);
    return i < count;
  };
  if (count >= 2 && count * work_per_piece >= (1 << 16) && std::thread::hardware_concurrency() > 1) {
    Helper::get().split(2, [&](int64_t, int64_t) { work(next); });
  } else {
    work(next);
  }
}

}  // namespace confab_cpu
