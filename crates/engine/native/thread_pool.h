// The thread pool of Confab's CPU kernels' own loops (cpu_linear.cpp, cpu_attention.cpp);
// BLAS calls bring their own threads.
//
// Design:
// - One pool for the process (`Pool::shared`), as many threads as the physical cores this
//   process may run on (its CPU affinity, so `taskset` counts, and a cgroup CPU quota), or
//   CONFAB_CPU_THREADS. The calling thread is one of them: a pool of N starts N - 1 workers,
//   the first time a job needs them.
// - A job is `count` pieces. Every thread that joins it runs `work(next)`, taking pieces from
//   one shared counter until none are left; loops are cut into several pieces per thread
//   (`over_rows`), so a thread that joins late, is descheduled, or draws the dear pieces leaves
//   the rest to the others. The caller works too, and at the end waits only for pieces already
//   started.
// - Jobs below a work threshold (`kMinParallelWork`) run on the caller alone: no hand-off.
// - Waiting: a worker spins a while for the next job (a decode step's kernels come tens of
//   microseconds apart), then sleeps on a condition variable; the caller, once no piece is left
//   to take, spins a few microseconds for the ones still running, then sleeps until the last
//   one ends. Nobody spins on an idle pool.
// - One job at a time: a second caller (another MLX stream's thread, or a piece that splits
//   again) runs its job alone rather than wait for the pool.
// - Nothing waits for a worker that never joins: the caller takes whatever pieces are left, so
//   a job finishes with fewer workers than planned (a thread that failed to start, a child
//   process after fork).
//
// The class lives in a named namespace with inline functions, so the kernels' libraries share
// one pool.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#elif defined(__APPLE__)
#include <sys/sysctl.h>
#endif

namespace confab_cpu {

// Where the pool's size came from (reported by `confab doctor`).
enum class ThreadsFrom { kCores = 0, kEnv = 1, kEnvIgnored = 2 };

struct ThreadCount {
  int threads;
  ThreadsFrom from;
};

// Physical cores among the CPUs this process may run on, within its cgroup's CPU quota.
inline int physical_cores() {
  int cores = 0;
#if defined(__linux__)
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
    // Hyperthreads of one core list the same siblings: one entry per core.
    std::set<std::string> seen;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &allowed)) continue;
      std::string siblings = "cpu" + std::to_string(cpu);
      const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
      for (const char* name : {"core_cpus_list", "thread_siblings_list"}) {
        if (FILE* f = std::fopen((dir + name).c_str(), "r")) {
          char line[256] = {0};
          if (std::fgets(line, sizeof(line), f)) siblings = line;
          std::fclose(f);
          break;
        }
      }
      seen.insert(siblings);
    }
    cores = static_cast<int>(seen.size());
  }
  // A container's quota ("max 100000", or "200000 100000": two CPUs' worth).
  if (FILE* f = std::fopen("/sys/fs/cgroup/cpu.max", "r")) {
    char quota[32] = {0};
    long period = 0;
    if (std::fscanf(f, "%31s %ld", quota, &period) == 2 && period > 0 && std::string(quota) != "max") {
      const long cpus = std::max(1L, (std::atol(quota) + period - 1) / period);
      if (cores > 0) cores = static_cast<int>(std::min<long>(cores, cpus));
    }
    std::fclose(f);
  }
#elif defined(__APPLE__)
  int count = 0;
  size_t size = sizeof(count);
  if (sysctlbyname("hw.physicalcpu", &count, &size, nullptr, 0) == 0) cores = count;
#endif
  if (cores <= 0) cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores);
}

// CONFAB_CPU_THREADS (1 to 1024) when set to a count, else the physical cores.
inline ThreadCount configured_threads() {
  if (const char* env = std::getenv("CONFAB_CPU_THREADS"); env && *env) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (*end == '\0' && n >= 1 && n <= 1024) return {static_cast<int>(n), ThreadsFrom::kEnv};
    return {physical_cores(), ThreadsFrom::kEnvIgnored};
  }
  return {physical_cores(), ThreadsFrom::kCores};
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until `done()` or `limit` has passed; whether it is done.
template <class Done>
bool spin_until(Done&& done, std::chrono::microseconds limit) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() - start > limit) return done();
  }
}

class Pool {
 public:
  // How long a worker spins for the next job before it sleeps, and the caller for the last
  // running pieces.
  static constexpr std::chrono::microseconds kWorkerSpin{100}, kCallerSpin{5};

  explicit Pool(int threads) : threads_(std::max(1, threads)) {}

  // The shared one is never destroyed (its workers outlive static destructors); others (tests)
  // stop and join their workers.
  ~Pool() {
    if (workers_.empty()) return;
    stop_.store(true, std::memory_order_seq_cst);
    state_.fetch_add(kEpochOne, std::memory_order_seq_cst);
    {
      std::lock_guard<std::mutex> lock(mutex_);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  static Pool& shared() {
    static Pool* pool = new Pool(shared_count().threads);
    return *pool;
  }

  // The shared pool's size and where it came from, read once.
  static ThreadCount shared_count() {
    static const ThreadCount count = configured_threads();
    return count;
  }

  int threads() const { return threads_; }

  // Runs `work(next)` on up to min(threads, count) threads, the caller's among them, where
  // `next(i)` sets i to a piece not yet taken and returns false once all are. Returns when
  // every piece has run.
  template <class W>
  void run(int64_t count, W&& work) {
    std::atomic<int64_t> taken{0};
    auto next = [&taken, count](int64_t& i) {
      i = taken.fetch_add(1, std::memory_order_relaxed);
      return i < count;
    };
    if (count < 2 || threads_ < 2 || busy_.exchange(true, std::memory_order_acquire)) {
      work(next);
      return;
    }
    start_workers();
    auto body = [&] { work(next); };
    job_.store(&body, std::memory_order_relaxed);
    call_.store([](void* b) { (*static_cast<decltype(body)*>(b))(); }, std::memory_order_relaxed);
    seats_.store(static_cast<uint32_t>(std::min<int64_t>(count, threads_) - 1), std::memory_order_relaxed);
    open();
    std::exception_ptr error;
    try {
      body();
    } catch (...) {
      error = std::current_exception();
    }
    close_and_wait();  // also after a throw: the workers still use this frame's `body`
    std::exception_ptr from_worker = std::exchange(worker_error_, nullptr);
    if (!error) error = from_worker;
    busy_.store(false, std::memory_order_release);
    if (error) std::rethrow_exception(error);
  }

  // The workers' thread handles (tests read their CPU clocks).
  std::vector<std::thread::native_handle_type> worker_handles() {
    std::vector<std::thread::native_handle_type> handles;
    for (auto& t : workers_) handles.push_back(t.native_handle());
    return handles;
  }

 private:
  // state_: bit 63 = the job is open to new workers; bits 32-62 = the job's number (epoch);
  // bits 0-31 = workers inside it. A worker joins with a compare-and-swap that only succeeds on
  // the open job it saw, so none joins a job after it closed.
  static constexpr uint64_t kOpen = 1ull << 63, kEpochOne = 1ull << 32, kActive = kEpochOne - 1;
  static uint64_t epoch(uint64_t s) { return (s & ~kOpen) >> 32; }

  void start_workers() {
    std::call_once(started_, [this] {
      try {
        for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { work_loop(); });
      } catch (const std::system_error&) {
        // Fewer threads than asked (a process limit): those that started share the work, and
        // the caller does what they do not take.
      }
    });
  }

  // A new epoch, open (no worker is inside: the last job's waited for them).
  void open() {
    const uint64_t s = state_.load(std::memory_order_relaxed);
    state_.store((((s & ~kOpen) + kEpochOne) & ~kActive) | kOpen, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      {
        std::lock_guard<std::mutex> lock(mutex_);  // a sleeper is either waiting or sees the job
      }
      const uint32_t seats = seats_.load(std::memory_order_relaxed);
      if (seats + 1 >= static_cast<uint32_t>(threads_)) {
        wake_.notify_all();
      } else {
        for (uint32_t i = 0; i < seats; ++i) wake_.notify_one();
      }
    }
  }

  void close_and_wait() {
    const uint64_t s = state_.fetch_and(~kOpen, std::memory_order_acq_rel);
    if ((s & kActive) == 0) return;
    auto all_out = [this] { return (state_.load(std::memory_order_seq_cst) & kActive) == 0; };
    if (spin_until(all_out, kCallerSpin)) return;
    std::unique_lock<std::mutex> lock(done_mutex_);
    caller_sleeping_.store(true, std::memory_order_seq_cst);
    done_.wait(lock, all_out);
    caller_sleeping_.store(false, std::memory_order_relaxed);
  }

  void work_loop() {
    uint64_t seen = 0;  // the last epoch this worker joined or passed
    for (;;) {
      uint64_t s = state_.load(std::memory_order_acquire);
      auto fresh = [&] {
        s = state_.load(std::memory_order_seq_cst);
        return epoch(s) != seen || stop_.load(std::memory_order_relaxed);
      };
      if (!spin_until(fresh, kWorkerSpin)) {
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        wake_.wait(lock, fresh);
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
      }
      if (stop_.load(std::memory_order_relaxed)) return;
      seen = epoch(s);
      while ((s & kOpen) && epoch(s) == seen && (s & kActive) < seats_.load(std::memory_order_relaxed)) {
        if (state_.compare_exchange_weak(s, s + 1, std::memory_order_acquire, std::memory_order_acquire)) {
          try {
            call_.load(std::memory_order_relaxed)(job_.load(std::memory_order_relaxed));
          } catch (...) {
            // Rethrown by the caller once every worker is out (the caller reads it then).
            std::lock_guard<std::mutex> lock(error_mutex_);
            if (!worker_error_) worker_error_ = std::current_exception();
          }
          leave();
          break;
        }
      }
    }
  }

  void leave() {
    const uint64_t s = state_.fetch_sub(1, std::memory_order_seq_cst) - 1;
    if ((s & kActive) == 0 && !(s & kOpen) && caller_sleeping_.load(std::memory_order_seq_cst)) {
      {
        std::lock_guard<std::mutex> lock(done_mutex_);
      }
      done_.notify_one();
    }
  }

  const int threads_;
  std::vector<std::thread> workers_;
  std::once_flag started_;
  std::atomic<bool> busy_{false}, stop_{false}, caller_sleeping_{false};
  std::atomic<uint64_t> state_{0};
  std::atomic<uint32_t> seats_{0}, sleepers_{0};
  // The open job: `call_(job_)` runs the caller's `work(next)` on a worker.
  std::atomic<void*> job_{nullptr};
  std::atomic<void (*)(void*)> call_{nullptr};
  std::mutex mutex_, done_mutex_, error_mutex_;
  std::exception_ptr worker_error_;  // a worker's exception, for the caller
  std::condition_variable wake_, done_;
};

// Below this much work (multiply-adds, or the caller's measure) a loop runs on the caller:
// waking another thread would cost more than it saves.
constexpr int64_t kMinParallelWork = 1 << 16;
// A piece's least work, and most pieces per thread (more than one, so the threads even out).
constexpr int64_t kMinPieceWork = 1 << 14, kPiecesPerThread = 4;
// Pieces of a row range start on multiples of this many rows where they are that long (no two
// threads write one cache line of float32 outputs).
constexpr int64_t kRowAlign = 16;

// f(begin, end) over [0, rows), in pieces shared out among the pool's threads.
template <class F>
void over_rows(int64_t rows, int64_t work_per_row, F&& f, Pool& pool = Pool::shared()) {
  const int64_t work = rows * work_per_row;
  if (rows < 2 || work < kMinParallelWork || pool.threads() < 2) {
    f(0, rows);
    return;
  }
  const int64_t pieces = std::clamp<int64_t>(std::min(work / kMinPieceWork, pool.threads() * kPiecesPerThread), 2, rows);
  int64_t per = (rows + pieces - 1) / pieces;
  if (per >= kRowAlign) per = (per + kRowAlign - 1) / kRowAlign * kRowAlign;
  const int64_t count = (rows + per - 1) / per;
  pool.run(count, [&](auto next) {
    for (int64_t i; next(i);) f(i * per, std::min(rows, (i + 1) * per));
  });
}

// Pieces [0, count) shared out as the threads come free: each thread's `work(next)` takes
// pieces with `next(i)` (false when none are left) until they run out. `work` runs once per
// thread, and can set up per-thread scratch before its loop.
template <class W>
void over_pieces(int64_t count, int64_t work_per_piece, W&& work, Pool& pool = Pool::shared()) {
  if (count >= 2 && count * work_per_piece >= kMinParallelWork && pool.threads() > 1) {
    pool.run(count, work);
    return;
  }
  int64_t taken = 0;
  work([&](int64_t& i) {
    i = taken++;
    return i < count;
  });
}

}  // namespace confab_cpu
