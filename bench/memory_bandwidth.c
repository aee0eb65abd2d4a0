// The machine's memory-read limit, the bound on a decode step that reads every weight once:
// a streaming read (sum) of a buffer far larger than the caches, on one thread and on two, best
// of several passes, in GB/s (10^9 bytes). Built and run by bench/memory_bandwidth.py.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BYTES (1024L * 1024 * 1024)  // 1 GiB: hundreds of times the last-level cache
#define PASSES 5

static float* buffer;

struct part {
  const float* from;
  long count;
  float sum;
};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// Sixteen partial sums, so the compiler vectorizes the loop and no add waits on the last.
static void* read_part(void* arg) {
  struct part* p = arg;
  float acc[16] = {0};
  for (long i = 0; i + 16 <= p->count; i += 16)
    for (int j = 0; j < 16; ++j) acc[j] += p->from[i + j];
  float s = 0;
  for (int j = 0; j < 16; ++j) s += acc[j];
  p->sum = s;
  return NULL;
}

static double best_gbs(int threads) {
  const long floats = BYTES / 4;
  double best = 0;
  float sink = 0;
  for (int pass = 0; pass < PASSES; ++pass) {
    struct part parts[2];
    pthread_t ids[2];
    const double start = now();
    for (int t = 0; t < threads; ++t) {
      parts[t] = (struct part){buffer + t * (floats / threads), floats / threads, 0};
      if (t > 0) pthread_create(&ids[t], NULL, read_part, &parts[t]);
    }
    read_part(&parts[0]);
    for (int t = 1; t < threads; ++t) pthread_join(ids[t], NULL);
    const double seconds = now() - start;
    for (int t = 0; t < threads; ++t) sink += parts[t].sum;
    const double gbs = BYTES / seconds / 1e9;
    if (gbs > best) best = gbs;
  }
  if (sink == 12345.0f) printf(" ");  // keeps the sums alive
  return best;
}

int main(void) {
  buffer = aligned_alloc(64, BYTES);
  if (!buffer) {
    fprintf(stderr, "no memory for the buffer\n");
    return 1;
  }
  for (long i = 0; i < BYTES / 4; ++i) buffer[i] = (float)(i & 1023);  // every page really mapped
  const double one = best_gbs(1), two = best_gbs(2);
  printf("{\"one_thread_gbs\": %.2f, \"two_threads_gbs\": %.2f}\n", one, two);
  free(buffer);
  return 0;
}
