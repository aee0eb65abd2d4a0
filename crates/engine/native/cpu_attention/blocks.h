// The inner loops of cpu_attention.cpp (included there only): one block of queries against
// one block of keys, flash-attention style (blocks_width.h), in three widths: 16 floats (one
// AVX-512 register) where the kernels use AVX-512 and the head size allows, 8 (one AVX2
// register) on AVX2, 4 in the portable loops. `attend_block` picks one.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "../cpu_isa.h"

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

// The portable loops: four floats, one SSE or NEON register. Eight (two registers each) ran
// 12x slower on SSE2, the compiler moving the halves through memory: a block of 63 query rows
// against 64 keys, d 64, took 738 µs against 60 µs in fours (22 µs with AVX2), a decode step's
// 3 rows 20.7 µs against 3.4 µs.
#define CONFAB_ATTENTION_WIDTH 4
namespace four {
#include "blocks_width.h"
}  // namespace four
#undef CONFAB_ATTENTION_WIDTH

// Eight floats: AVX2 with FMA, and AVX-512 (for head sizes the sixteen-float loops do not step
// through), each in an instruction-set region of its own, picked by `confab_cpu::isa()`.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CONFAB_ATTENTION_X86 1
#define CONFAB_ATTENTION_WIDTH 8
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace eight_avx2 {
#include "blocks_width.h"
}  // namespace eight_avx2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,fma")
namespace eight_avx512 {
#include "blocks_width.h"
}  // namespace eight_avx512
#pragma GCC pop_options
#undef CONFAB_ATTENTION_WIDTH

#define CONFAB_ATTENTION_WIDTH 16
#pragma GCC push_options
#pragma GCC target("avx512f,fma")
namespace sixteen {
#include "blocks_width.h"
}  // namespace sixteen
#pragma GCC pop_options
#undef CONFAB_ATTENTION_WIDTH
#endif

// The head size every path takes (the narrow tiles' step of two vectors).
constexpr int kHeadStep = 2 * 8;

// One block of keys for `rows` query rows (see blocks_width.h), in the widest loops the
// kernels' instruction set (confab_cpu::isa()) runs: 16 floats on AVX-512 when the head size
// is a multiple of 32, else 8; 4 in the portable loops.
inline void attend_block(const float* q, int64_t rows, int64_t d, const float* kt, const float* k, int64_t k_stride,
                         const float* v, int64_t v_stride, int64_t key0, int count, const Visible* visible, bool masked,
                         bool direct, float* s, float* o, float* row_max, float* row_sum) {
#ifdef CONFAB_ATTENTION_X86
  const confab_cpu::Isa isa = confab_cpu::isa();
  if (isa == confab_cpu::Isa::kAvx512 && d % 32 == 0) {
    return sixteen::attend_block(q, rows, d, kt, k, k_stride, v, v_stride, key0, count, visible, masked, direct, s, o,
                                 row_max, row_sum);
  }
  if (isa == confab_cpu::Isa::kAvx512) {
    return eight_avx512::attend_block(q, rows, d, kt, k, k_stride, v, v_stride, key0, count, visible, masked, direct,
                                      s, o, row_max, row_sum);
  }
  if (isa == confab_cpu::Isa::kAvx2) {
    return eight_avx2::attend_block(q, rows, d, kt, k, k_stride, v, v_stride, key0, count, visible, masked, direct, s,
                                    o, row_max, row_sum);
  }
#endif
  four::attend_block(q, rows, d, kt, k, k_stride, v, v_stride, key0, count, visible, masked, direct, s, o, row_max,
                     row_sum);
}

}  // namespace
