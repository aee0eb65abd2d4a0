/* mlx-rs seeds its default random state from mach_approximate_time(), an Apple call.
 * Off Apple platforms this provides it from the monotonic clock, in nanoseconds. */
#include <stdint.h>
#include <time.h>

uint64_t mach_approximate_time(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}
