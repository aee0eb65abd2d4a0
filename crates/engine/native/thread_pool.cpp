// The C entry points of the kernels' thread pool (thread_pool.h): its size, for `confab
// doctor`, and the checks the engine's tests run on pools of any size (src/cpu_threads.rs), so
// the splitting is proven on more threads than the machine that runs them has.

#include <pthread.h>
#include <time.h>
#if defined(__APPLE__)
#include <mach/mach.h>
#endif

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "thread_pool.h"

namespace {

using confab_cpu::Pool;
using Clock = std::chrono::steady_clock;

// A small number for each thread that asks, telling apart the threads that ran pieces.
int thread_tag() {
  static std::atomic<int> next{0};
  thread_local const int tag = next.fetch_add(1);
  return tag;
}

// The CPU time a thread has used, in ns (-1 when it cannot be read). macOS has no
// pthread_getcpuclockid: Mach's thread_info gives the same, in microseconds.
int64_t thread_cpu_ns(pthread_t thread) {
#if defined(__APPLE__)
  thread_basic_info_data_t info{};
  mach_msg_type_number_t count = THREAD_BASIC_INFO_COUNT;
  const auto port = pthread_mach_thread_np(thread);
  if (thread_info(port, THREAD_BASIC_INFO, reinterpret_cast<thread_info_t>(&info), &count) != KERN_SUCCESS) return -1;
  const int64_t seconds = static_cast<int64_t>(info.user_time.seconds) + info.system_time.seconds;
  const int64_t micros = static_cast<int64_t>(info.user_time.microseconds) + info.system_time.microseconds;
  return seconds * 1000000000 + micros * 1000;
#else
  clockid_t clock;
  timespec now{};
  if (pthread_getcpuclockid(thread, &clock) != 0 || clock_gettime(clock, &now) != 0) return -1;
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
#endif
}

int64_t workers_cpu_ns(Pool& pool) {
  int64_t sum = 0;
  for (auto handle : pool.worker_handles()) sum += thread_cpu_ns(handle);
  return sum;
}

void busy_for(int64_t ns) {
  const auto end = Clock::now() + std::chrono::nanoseconds(ns);
  while (Clock::now() < end) {
  }
}

Pool& pool_at(void* pool) { return pool ? *static_cast<Pool*>(pool) : Pool::shared(); }

// Enough work per piece that a job is always handed off.
constexpr int64_t kLargeWork = 1 << 20;

}  // namespace

extern "C" {

// The shared pool's thread count; `*from` says where it came from (0: the physical cores,
// 1: CONFAB_CPU_THREADS, 2: CONFAB_CPU_THREADS was not a count from 1 to 1024, so the cores).
int confab_cpu_threads(int* from) {
  const auto count = Pool::shared_count();
  if (from) *from = static_cast<int>(count.from);
  return count.threads;
}

// A pool of its own for the checks below (a null pool there means the shared one).
void* confab_cpu_pool_new(int threads) { return new Pool(threads); }

void confab_cpu_pool_free(void* pool) { delete static_cast<Pool*>(pool); }

// `count` pieces through over_pieces: piece i adds 1 to hits[i], records the tag of the
// thread that ran it in by_thread[i], and busy-waits cost_ns[i] (none when cost_ns is null);
// piece `sleeper` (-1: none) sleeps sleep_ms halfway. *caller = the calling thread's tag.
// Returns 0, or 1 when a piece index fell outside [0, count).
int confab_cpu_pool_check_pieces(void* pool, int64_t count, const int64_t* cost_ns, int64_t sleeper, int sleep_ms,
                                 int32_t* hits, int32_t* by_thread, int32_t* caller) {
  std::atomic<int> bad{0};
  *caller = thread_tag();
  confab_cpu::over_pieces(
      count, kLargeWork,
      [&](auto next) {
        for (int64_t i; next(i);) {
          if (i < 0 || i >= count) {
            bad.store(1);
            continue;
          }
          std::atomic_ref<int32_t>(hits[i]).fetch_add(1);
          by_thread[i] = thread_tag();
          const int64_t cost = cost_ns ? cost_ns[i] : 0;
          busy_for(cost / 2);
          if (i == sleeper) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
          busy_for(cost - cost / 2);
        }
      },
      pool_at(pool));
  return bad.load();
}

// over_rows over `rows` rows: hits[r] counts the calls that covered row r. Returns the number
// of calls (pieces), or -1 when a call's range was empty or out of bounds.
int64_t confab_cpu_pool_check_rows(void* pool, int64_t rows, int64_t work_per_row, int32_t* hits) {
  std::atomic<int64_t> calls{0};
  std::atomic<bool> bad{false};
  confab_cpu::over_rows(
      rows, work_per_row,
      [&](int64_t begin, int64_t end) {
        calls.fetch_add(1);
        if (begin < 0 || end > rows || begin >= end) {
          bad.store(true);
          return;
        }
        for (int64_t r = begin; r < end; ++r) std::atomic_ref<int32_t>(hits[r]).fetch_add(1);
      },
      pool_at(pool));
  return bad.load() ? -1 : calls.load();
}

// Nested: each of `outer` pieces runs over_rows over `inner` rows on the same pool (which
// then runs it on the thread that asks). hits is [outer, inner].
void confab_cpu_pool_check_nested(void* pool, int64_t outer, int64_t inner, int32_t* hits) {
  Pool& p = pool_at(pool);
  confab_cpu::over_pieces(
      outer, kLargeWork,
      [&](auto next) {
        for (int64_t i; next(i);) {
          confab_cpu::over_rows(
              inner, kLargeWork,
              [&](int64_t begin, int64_t end) {
                for (int64_t r = begin; r < end; ++r) std::atomic_ref<int32_t>(hits[i * inner + r]).fetch_add(1);
              },
              p);
        }
      },
      p);
}

// Waiting without spinning. A job of 4 pieces per thread where the caller's pieces busy-wait
// 1 ms each and the workers' pieces sleep sleep_ms: once the caller has no piece left it waits
// for the sleepers. *wait_ns and *wait_cpu_ns: the wall and CPU time of that wait. Then the
// pool idles idle_ms: *idle_cpu_ns is the CPU time its workers used meanwhile.
void confab_cpu_pool_check_waiting(void* pool, int sleep_ms, int idle_ms, int64_t* wait_ns, int64_t* wait_cpu_ns,
                                   int64_t* idle_cpu_ns) {
  Pool& p = pool_at(pool);
  const int caller = thread_tag();
  // Workers started and past their first job.
  confab_cpu::over_pieces(p.threads(), kLargeWork, [&](auto next) {
    for (int64_t i; next(i);) busy_for(100000);
  }, p);
  Clock::time_point wait_start;
  int64_t cpu_start = 0;
  confab_cpu::over_pieces(
      4 * p.threads(), kLargeWork,
      [&](auto next) {
        for (int64_t i; next(i);) {
          if (thread_tag() == caller) busy_for(1000000);
          else std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
        }
        if (thread_tag() == caller) {
          wait_start = Clock::now();
          cpu_start = thread_cpu_ns(pthread_self());
        }
      },
      p);
  *wait_cpu_ns = thread_cpu_ns(pthread_self()) - cpu_start;
  *wait_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - wait_start).count();
  const int64_t before = workers_cpu_ns(p);
  std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
  *idle_cpu_ns = workers_cpu_ns(p) - before;
}

// A piece that throws: piece `thrower` of `count` throws. Returns 1 when the exception reached
// the caller, and a job after it still covered every piece once; else 0.
int confab_cpu_pool_check_throw(void* pool, int64_t count, int64_t thrower) {
  Pool& p = pool_at(pool);
  bool caught = false;
  try {
    confab_cpu::over_pieces(count, kLargeWork, [&](auto next) {
      for (int64_t i; next(i);) {
        busy_for(20000);
        if (i == thrower) throw std::runtime_error("piece failed");
      }
    }, p);
  } catch (const std::runtime_error&) {
    caught = true;
  }
  std::vector<std::atomic<int>> hits(count);
  confab_cpu::over_pieces(count, kLargeWork, [&](auto next) {
    for (int64_t i; next(i);) hits[i].fetch_add(1);
  }, p);
  for (auto& h : hits) {
    if (h.load() != 1) return 0;
  }
  return caught ? 1 : 0;
}

}  // extern "C"
