// The inner loops of cpu_attention.cpp (included there only): one block of queries against
// one block of keys, flash-attention style (blocks_width.h), in two widths: 16 floats (one
// AVX-512 register) where the CPU has AVX-512 and the head size allows, else 8 (one AVX2
// register, with AVX-512 and AVX2+FMA clones on x86-64; GCC spills wider generic vectors on
// AVX2, and two SSE ones). `attend_block` picks one.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace {

#define INLINE inline __attribute__((always_inline))

// Keys per block; also the row length of the score tile.
constexpr int kKeyBlock = 64;
// Query rows per register tile.
constexpr int kTileRows = 4;

// Which keys one query row sees: [first, last] by index into the keys.
struct Visible {
  int64_t first, last;
};

// Up to this many rows score straight from the keys (`scores_direct`), more from a transposed
// block.
constexpr int kDirectRows = kTileRows;

#define CONFAB_ATTENTION_WIDTH 8
// Hot loops get AVX-512 and AVX2+FMA clones on x86-64 (x86-64-v3: cpu_linear's "avx2" clone
// has no FMA, and these loops are multiply-adds); the default build targets baseline SSE2.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CONFAB_ATTENTION_LOOP __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define CONFAB_ATTENTION_LOOP
#endif
namespace eight {
#include "blocks_width.h"
}  // namespace eight
#undef CONFAB_ATTENTION_WIDTH
#undef CONFAB_ATTENTION_LOOP

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CONFAB_ATTENTION_SIXTEEN 1
#define CONFAB_ATTENTION_WIDTH 16
#define CONFAB_ATTENTION_LOOP
#pragma GCC push_options
#pragma GCC target("avx512f,fma")
namespace sixteen {
#include "blocks_width.h"
}  // namespace sixteen
#pragma GCC pop_options
#undef CONFAB_ATTENTION_WIDTH
#undef CONFAB_ATTENTION_LOOP
#endif

// The head size every path takes (the narrow tiles' step of two vectors).
constexpr int kHeadStep = 2 * 8;

// Whether the 16-float loops run here: an AVX-512 CPU, and a head size they step through.
inline bool sixteen_wide(int64_t d) {
#ifdef CONFAB_ATTENTION_SIXTEEN
  static const bool avx512 = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  }();
  return avx512 && d % 32 == 0;
#else
  (void)d;
  return false;
#endif
}

// One block of keys for `rows` query rows (see blocks_width.h), in the widest loops that run.
inline void attend_block(const float* q, int64_t rows, int64_t d, const float* kt, const float* k, int64_t k_stride,
                         const float* v, int64_t v_stride, int64_t key0, int count, const Visible* visible, bool masked,
                         bool direct, float* s, float* o, float* row_max, float* row_sum) {
#ifdef CONFAB_ATTENTION_SIXTEEN
  if (sixteen_wide(d)) {
    return sixteen::attend_block(q, rows, d, kt, k, k_stride, v, v_stride, key0, count, visible, masked, direct, s, o,
                                 row_max, row_sum);
  }
#endif
  eight::attend_block(q, rows, d, kt, k, k_stride, v, v_stride, key0, count, visible, masked, direct, s, o, row_max,
                      row_sum);
}

}  // namespace
