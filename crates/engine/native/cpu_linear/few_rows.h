// Products of a few rows of x with W (decode steps of a batch, a short turn): y[i, j] =
// Σ_p x[i, p] · w[j, p], W read straight from memory (included by cpu_linear.cpp only).
//
// Why not sgemm: it packs W into its own layout before multiplying, and for a few rows of x
// the packing costs more than the product (as for one row: see cpu_linear.cpp). Here tiles of
// 4 W rows × up to 4 x rows are held in registers while k is walked once, so each W row is
// read from memory once for all of x's rows, and its tile stays in L1 for the next x rows.
// While a tile is summed the next one is prefetched: with several x rows the loop is too slow
// for the hardware's own prefetching to keep the memory busy (8 rows: 2x faster with it).
//
// Every output is summed in the same order whatever m is (lanes of p mod the vector width,
// then across the lanes in a fixed order), so a row's result does not depend on how many
// other rows share the call: a sequence decodes to the same logits alone or in a batch.
#pragma once

#include <algorithm>
#include <cstdint>

#include "../cpu_isa.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FEW_ROWS_X86 1
#include <immintrin.h>
#endif

namespace {

// W rows per register tile.
constexpr int kFewTileW = 4;

// The loops around a tile, written into each version's namespace (so the version's instruction
// set, set for the whole region, applies to them too): W tiles outside, x rows inside, so a W
// tile is read from memory once. TX: x rows per tile (at most 4).
#define FEW_ROWS_DRIVER(TX)                                                                            \
  template <int NR>                                                                                    \
  inline void tiles_of(const float* x, int64_t m, const float* w, int64_t k, float* y, int64_t ldy,     \
                       const float* ahead) {                                                           \
    int64_t i = 0;                                                                                     \
    for (; i + (TX) <= m; i += (TX), ahead = nullptr) tile<(TX), NR>(x + i * k, k, w, y + i * ldy, ldy, ahead); \
    switch (m - i) {                                                                                   \
      case 1: tile<1, NR>(x + i * k, k, w, y + i * ldy, ldy, ahead); break;                            \
      case 2: if constexpr ((TX) > 2) tile<2, NR>(x + i * k, k, w, y + i * ldy, ldy, ahead); break;    \
      case 3: if constexpr ((TX) > 3) tile<3, NR>(x + i * k, k, w, y + i * ldy, ldy, ahead); break;    \
      default: break;                                                                                  \
    }                                                                                                  \
  }                                                                                                    \
  void rows(const float* x, int64_t m, const float* w, int64_t n, int64_t k, float* y, int64_t ldy) {   \
    int64_t j = 0;                                                                                     \
    for (; j + kFewTileW <= n; j += kFewTileW) {                                                       \
      const float* ahead = j + 2 * kFewTileW <= n ? w + (j + kFewTileW) * k : nullptr;                 \
      tiles_of<kFewTileW>(x, m, w + j * k, k, y + j, ldy, ahead);                                      \
    }                                                                                                  \
    switch (n - j) {                                                                                   \
      case 1: tiles_of<1>(x, m, w + j * k, k, y + j, ldy, nullptr); break;                             \
      case 2: tiles_of<2>(x, m, w + j * k, k, y + j, ldy, nullptr); break;                             \
      case 3: tiles_of<3>(x, m, w + j * k, k, y + j, ldy, nullptr); break;                             \
      default: break;                                                                                  \
    }                                                                                                  \
  }

// The portable version: 8 partial sums per output, then their sum in index order.
namespace few_plain {
template <int MR, int NR>
inline void tile(const float* x, int64_t k, const float* w, float* y, int64_t ldy, const float*) {
  constexpr int L = 8;
  float acc[MR][NR][L] = {};
  int64_t p = 0;
  for (; p + L <= k; p += L)
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j)
        for (int l = 0; l < L; ++l) acc[i][j][l] += x[i * k + p + l] * w[j * k + p + l];
  for (int l = 0; p + l < k; ++l)
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j][l] += x[i * k + p + l] * w[j * k + p + l];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) {
      float s = 0.0f;
      for (int l = 0; l < L; ++l) s += acc[i][j][l];
      y[i * ldy + j] = s;
    }
}
FEW_ROWS_DRIVER(2)
}  // namespace few_plain

#ifdef FEW_ROWS_X86

// Sixteen lanes; a 4 × 4 tile is 16 of the 32 registers. The tail of k goes through a masked
// load (missing lanes read 0 and add 0).
#pragma GCC push_options
#pragma GCC target("avx512f,fma")
namespace few_avx512 {
// The sum of the sixteen lanes: halves, quarters, pairs, then the last two. Through memory:
// GCC 12's headers for the 512-bit extracts trip its own -Wuninitialized.
inline float sum_lanes(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  const __m256 half = _mm256_add_ps(_mm256_load_ps(lanes), _mm256_load_ps(lanes + 8));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Accumulators are named variables, one per output of the tile: GCC stores an array of
// vectors back to memory on every step of the loop. Whole steps of 16 load plainly; the tail
// of k loads masked (missing lanes read 0 and add 0).
#define FEW_FULL(at) _mm512_loadu_ps(at)
#define FEW_MASKED(at) _mm512_maskz_loadu_ps(mask, at)
#define FEW_ROW(i, LOAD)                         \
  {                                              \
    const __m512 xv = LOAD(x + (i) * k + p);     \
    a##i##0 = _mm512_fmadd_ps(xv, w0, a##i##0);  \
    a##i##1 = _mm512_fmadd_ps(xv, w1, a##i##1);  \
    a##i##2 = _mm512_fmadd_ps(xv, w2, a##i##2);  \
    a##i##3 = _mm512_fmadd_ps(xv, w3, a##i##3);  \
  }
#define FEW_STEP(LOAD)                                                                             \
  {                                                                                                \
    const __m512 w0 = LOAD(wr[0] + p), w1 = LOAD(wr[1] + p), w2 = LOAD(wr[2] + p), w3 = LOAD(wr[3] + p); \
    FEW_ROW(0, LOAD)                                                                               \
    if constexpr (MR > 1) FEW_ROW(1, LOAD)                                                         \
    if constexpr (MR > 2) FEW_ROW(2, LOAD)                                                         \
    if constexpr (MR > 3) FEW_ROW(3, LOAD)                                                         \
  }
#define FEW_OUT(i)                                                        \
  {                                                                       \
    const __m512 row[4] = {a##i##0, a##i##1, a##i##2, a##i##3};          \
    for (int j = 0; j < NR; ++j) y[(i) * ldy + j] = sum_lanes(row[j]);   \
  }

// MR x rows × NR W rows (NR < 4: the missing W rows repeat the last, their sums dropped).
template <int MR, int NR>
inline void tile(const float* x, int64_t k, const float* w, float* y, int64_t ldy, const float* ahead) {
  const float* wr[4];
  for (int j = 0; j < 4; ++j) wr[j] = w + std::min(j, NR - 1) * k;
  __m512 a00 = _mm512_setzero_ps(), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00,
         a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00, a33 = a00;
  int64_t p = 0;
  if (ahead) {
    // The next W tile is on its way from memory while this one is summed.
    for (; p + 16 <= k; p += 16) {
      for (int j = 0; j < 4; ++j) _mm_prefetch(reinterpret_cast<const char*>(ahead + j * k + p), _MM_HINT_T0);
      FEW_STEP(FEW_FULL)
    }
  }
  for (; p + 16 <= k; p += 16) FEW_STEP(FEW_FULL)
  if (p < k) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (k - p)) - 1);
    FEW_STEP(FEW_MASKED)
  }
  FEW_OUT(0)
  if constexpr (MR > 1) FEW_OUT(1)
  if constexpr (MR > 2) FEW_OUT(2)
  if constexpr (MR > 3) FEW_OUT(3)
}
#undef FEW_FULL
#undef FEW_MASKED
#undef FEW_ROW
#undef FEW_STEP
#undef FEW_OUT
FEW_ROWS_DRIVER(4)
}  // namespace few_avx512
#pragma GCC pop_options

// Eight lanes; sixteen registers hold a 2 × 4 tile, its W rows and one x row.
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace few_avx2 {
inline float sum_lanes(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

#define FEW_FULL(at) _mm256_loadu_ps(at)
#define FEW_MASKED(at) _mm256_maskload_ps(at, mask)
// One W row's lanes against each x row's: x rows in registers, W rows streamed through one, so
// a 3 × 4 tile takes 12 accumulators + 3 x rows + 1 W row, all sixteen registers (with the
// four W rows held instead, three x rows would not fit: the tile stayed 2 × 4).
#define FEW_COLUMN(j, LOAD)                                            \
  {                                                                    \
    const __m256 wv = LOAD(wr[j] + p);                                 \
    a0##j = _mm256_fmadd_ps(x0, wv, a0##j);                            \
    if constexpr (MR > 1) a1##j = _mm256_fmadd_ps(x1, wv, a1##j);      \
    if constexpr (MR > 2) a2##j = _mm256_fmadd_ps(x2, wv, a2##j);      \
  }
#define FEW_STEP(LOAD)                                                 \
  {                                                                    \
    const __m256 x0 = LOAD(x + p);                                     \
    const __m256 x1 = MR > 1 ? LOAD(x + k + p) : x0;                   \
    const __m256 x2 = MR > 2 ? LOAD(x + 2 * k + p) : x0;               \
    FEW_COLUMN(0, LOAD)                                                \
    FEW_COLUMN(1, LOAD)                                                \
    FEW_COLUMN(2, LOAD)                                                \
    FEW_COLUMN(3, LOAD)                                                \
  }
#define FEW_OUT(i)                                                       \
  {                                                                      \
    const __m256 row[4] = {a##i##0, a##i##1, a##i##2, a##i##3};         \
    for (int j = 0; j < NR; ++j) y[(i) * ldy + j] = sum_lanes(row[j]);   \
  }

// As few_avx512::tile, three x rows at most.
template <int MR, int NR>
inline void tile(const float* x, int64_t k, const float* w, float* y, int64_t ldy, const float* ahead) {
  const float* wr[4];
  for (int j = 0; j < 4; ++j) wr[j] = w + std::min(j, NR - 1) * k;
  __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00,
         a20 = a00, a21 = a00, a22 = a00, a23 = a00;
  int64_t p = 0;
  if (ahead) {
    for (; p + 8 <= k; p += 8) {
      // A cache line (16 floats) of each of the next tile's rows every other step.
      if (p % 16 == 0) {
        for (int j = 0; j < 4; ++j) _mm_prefetch(reinterpret_cast<const char*>(ahead + j * k + p), _MM_HINT_T0);
      }
      FEW_STEP(FEW_FULL)
    }
  }
  for (; p + 8 <= k; p += 8) FEW_STEP(FEW_FULL)
  if (p < k) {
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(k - p)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    FEW_STEP(FEW_MASKED)
  }
  FEW_OUT(0)
  if constexpr (MR > 1) FEW_OUT(1)
  if constexpr (MR > 2) FEW_OUT(2)
}
#undef FEW_FULL
#undef FEW_MASKED
#undef FEW_COLUMN
#undef FEW_STEP
#undef FEW_OUT
FEW_ROWS_DRIVER(3)
}  // namespace few_avx2
#pragma GCC pop_options

#endif  // FEW_ROWS_X86

using FewRows = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*, int64_t);

// The version for the kernels' instruction set (confab_cpu::isa()), chosen once.
FewRows few_rows_for_the_isa() {
#ifdef FEW_ROWS_X86
  if (confab_cpu::isa() == confab_cpu::Isa::kAvx512) return few_avx512::rows;
  if (confab_cpu::isa() == confab_cpu::Isa::kAvx2) return few_avx2::rows;
#endif
  return few_plain::rows;
}

// y [m, n] (row stride ldy) = x [m, k] · w [n, k]ᵀ, x and w row-major and contiguous.
void few_rows(const float* x, int64_t m, const float* w, int64_t n, int64_t k, float* y, int64_t ldy) {
  static const FewRows chosen = few_rows_for_the_isa();
  chosen(x, m, w, n, k, y, ldy);
}

}  // namespace
