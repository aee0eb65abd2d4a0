// 4-bit weights in MLX's affine layout, unpacked in vector lanes (included by cpu_linear.cpp
// only): whole rows widened to float32 (out[i] = scale[g] · q[i] + bias[g], q unpacked low bits
// first, g = i / group), and one-row products (a decode step) on AVX-512, for 8-bit rows too.
//
// Why intrinsics: written as plain loops, the compiler vectorizes the widening across packed
// words and then stores every float on its own (a transpose): a prompt's products spent as long
// widening 4-bit weights as multiplying them. Here one word's eight values (AVX2), or two words'
// sixteen (AVX-512), are shifted into lanes at once. The widening's arithmetic is the plain
// loop's, `scale · q + bias` as one fused multiply-add; the cpu_linear tests hold the products
// to MLX's quantized matmul.
#pragma once

#include <algorithm>
#include <cstdint>

#include "loops.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define DEQUANTIZE_X86 1
#include <immintrin.h>
#endif

namespace {

namespace dequantize_plain {
void row_q4(const uint32_t* packed, const float* scales, const float* biases, int64_t k, int group, float* out) {
  for (int64_t i = 0; i < k; ++i) {
    const uint32_t q = (packed[i / 8] >> (4 * (i % 8))) & 15u;
    out[i] = scales[i / group] * float(q) + biases[i / group];
  }
}
}  // namespace dequantize_plain

#ifdef DEQUANTIZE_X86
#pragma GCC push_options
#pragma GCC target("avx512f,fma")
// GCC 12 reports the intrinsics' own `_mm512_undefined_*` placeholders (its bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace dequantize_avx512 {
// group is a multiple of 16 (checked by the caller).
void row_q4(const uint32_t* packed, const float* scales, const float* biases, int64_t k, int group, float* out) {
  const __m512i shifts = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
  const __m512i words = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  const __m512i mask = _mm512_set1_epi32(15);
  for (int64_t i = 0; i < k; i += 16) {
    const __m128i two = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(packed + i / 8));
    const __m512i spread = _mm512_permutexvar_epi32(words, _mm512_castsi128_si512(two));
    const __m512 q = _mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srlv_epi32(spread, shifts), mask));
    const int64_t g = i / group;
    _mm512_storeu_ps(out + i, _mm512_fmadd_ps(_mm512_set1_ps(scales[g]), q, _mm512_set1_ps(biases[g])));
  }
}

// y[r] = Σ_g scale · (q·x over group g) + bias · Σ x over g, for `rows` rows; x_split and
// x_group_sums as for loops.h's rows_dot_q4 (per group, the even-indexed values of x, then the
// odd-indexed). A group's sixteen bytes become sixteen lanes of low nibbles and sixteen of high
// nibbles; half a group (group / 2) is a multiple of 16 (checked by the caller).
void rows_dot_q4(const uint8_t* packed, const float* scales, const float* biases, const float* x_split,
                 const float* x_group_sums, int64_t rows, int64_t k, int group, float* y) {
  const int64_t groups = k / group, half = group / 2;
  const __m512i mask = _mm512_set1_epi32(15);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = packed + r * k / 2;
    __m512 acc = _mm512_setzero_ps();
    float rest = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* bytes = row + g * half;
      const float* even = x_split + g * group;
      const float* odd = even + half;
      __m512 qx = _mm512_setzero_ps();
      for (int64_t t = 0; t < half; t += 16) {
        const __m512i q = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + t)));
        qx = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_and_si512(q, mask)), _mm512_loadu_ps(even + t), qx);
        qx = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(q, 4)), _mm512_loadu_ps(odd + t), qx);
      }
      acc = _mm512_fmadd_ps(_mm512_set1_ps(scales[r * groups + g]), qx, acc);
      rest += biases[r * groups + g] * x_group_sums[g];
    }
    y[r] = rest + _mm512_reduce_add_ps(acc);
  }
}

// The same for 8-bit rows (byte i of a row is value i); the group is a multiple of 16.
void rows_dot_q8(const uint8_t* packed, const float* scales, const float* biases, const float* x,
                 const float* x_group_sums, int64_t rows, int64_t k, int group, float* y) {
  const int64_t groups = k / group;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = packed + r * k;
    __m512 acc = _mm512_setzero_ps();
    float rest = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* bytes = row + g * group;
      const float* xg = x + g * group;
      __m512 qx = _mm512_setzero_ps();
      for (int64_t t = 0; t < group; t += 16) {
        const __m512i q = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + t)));
        qx = _mm512_fmadd_ps(_mm512_cvtepi32_ps(q), _mm512_loadu_ps(xg + t), qx);
      }
      acc = _mm512_fmadd_ps(_mm512_set1_ps(scales[r * groups + g]), qx, acc);
      rest += biases[r * groups + g] * x_group_sums[g];
    }
    y[r] = rest + _mm512_reduce_add_ps(acc);
  }
}

// Several rows of x on the same weights (a verifying pass, a few prompt tokens): each group's
// values are widened once and multiplied into C rows' sums, so the widening, which costs more
// than the multiply-adds on one row, is shared. Each row's sums run in the one-row loop's
// order (rows_dot_q4 above), so its result is bit for bit what it would be alone. x rows are
// k apart, their group sums `groups` apart, y's rows `ld` apart.
template <int C>
void q4_rows(const uint8_t* packed, const float* scales, const float* biases, const float* x_split,
             const float* x_group_sums, int64_t rows, int64_t k, int group, float* y, int64_t ld) {
  const int64_t groups = k / group, half = group / 2;
  const __m512i mask = _mm512_set1_epi32(15);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = packed + r * k / 2;
    __m512 acc[C];
    float rest[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps(), rest[c] = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* bytes = row + g * half;
      __m512 qx[C];
      for (int c = 0; c < C; ++c) qx[c] = _mm512_setzero_ps();
      for (int64_t t = 0; t < half; t += 16) {
        const __m512i q = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + t)));
        const __m512 lo = _mm512_cvtepi32_ps(_mm512_and_si512(q, mask));
        const __m512 hi = _mm512_cvtepi32_ps(_mm512_srli_epi32(q, 4));
        for (int c = 0; c < C; ++c) {
          const float* even = x_split + c * k + g * group;
          qx[c] = _mm512_fmadd_ps(lo, _mm512_loadu_ps(even + t), qx[c]);
          qx[c] = _mm512_fmadd_ps(hi, _mm512_loadu_ps(even + half + t), qx[c]);
        }
      }
      const __m512 scale = _mm512_set1_ps(scales[r * groups + g]);
      const float bias = biases[r * groups + g];
      for (int c = 0; c < C; ++c) {
        acc[c] = _mm512_fmadd_ps(scale, qx[c], acc[c]);
        rest[c] += bias * x_group_sums[c * groups + g];
      }
    }
    for (int c = 0; c < C; ++c) y[c * ld + r] = rest[c] + _mm512_reduce_add_ps(acc[c]);
  }
}

// The same for 8-bit rows (rows_dot_q8 above).
template <int C>
void q8_rows(const uint8_t* packed, const float* scales, const float* biases, const float* x,
             const float* x_group_sums, int64_t rows, int64_t k, int group, float* y, int64_t ld) {
  const int64_t groups = k / group;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = packed + r * k;
    __m512 acc[C];
    float rest[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps(), rest[c] = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* bytes = row + g * group;
      __m512 qx[C];
      for (int c = 0; c < C; ++c) qx[c] = _mm512_setzero_ps();
      for (int64_t t = 0; t < group; t += 16) {
        const __m512 q =
            _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + t))));
        for (int c = 0; c < C; ++c) qx[c] = _mm512_fmadd_ps(q, _mm512_loadu_ps(x + c * k + g * group + t), qx[c]);
      }
      const __m512 scale = _mm512_set1_ps(scales[r * groups + g]);
      const float bias = biases[r * groups + g];
      for (int c = 0; c < C; ++c) {
        acc[c] = _mm512_fmadd_ps(scale, qx[c], acc[c]);
        rest[c] += bias * x_group_sums[c * groups + g];
      }
    }
    for (int c = 0; c < C; ++c) y[c * ld + r] = rest[c] + _mm512_reduce_add_ps(acc[c]);
  }
}
}  // namespace dequantize_avx512
#pragma GCC diagnostic pop
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace dequantize_avx2 {
// group is a multiple of 8 (always: a 4-bit group fills whole words).
void row_q4(const uint32_t* packed, const float* scales, const float* biases, int64_t k, int group, float* out) {
  const __m256i shifts = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  const __m256i mask = _mm256_set1_epi32(15);
  for (int64_t i = 0; i < k; i += 8) {
    const __m256i word = _mm256_set1_epi32(static_cast<int>(packed[i / 8]));
    const __m256 q = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srlv_epi32(word, shifts), mask));
    const int64_t g = i / group;
    _mm256_storeu_ps(out + i, _mm256_fmadd_ps(_mm256_set1_ps(scales[g]), q, _mm256_set1_ps(biases[g])));
  }
}

// The sum of the eight lanes: halves, pairs, then the last two.
inline float sum_lanes(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// As dequantize_avx512::rows_dot_q4, eight bytes (sixteen values) a step: half a group is a
// multiple of 8 (checked by the caller). A group's q·x goes to two sets of lanes (low and high
// nibbles), so the multiply-adds of one step do not wait on each other. (loops.h's loop, which
// AVX2 CPUs ran before, scaled every value and ran at a third of the memory's speed.)
void rows_dot_q4(const uint8_t* packed, const float* scales, const float* biases, const float* x_split,
                 const float* x_group_sums, int64_t rows, int64_t k, int group, float* y) {
  const int64_t groups = k / group, half = group / 2;
  const __m256i mask = _mm256_set1_epi32(15);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = packed + r * k / 2;
    __m256 acc = _mm256_setzero_ps();
    float rest = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* bytes = row + g * half;
      const float* even = x_split + g * group;
      const float* odd = even + half;
      __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
      for (int64_t t = 0; t < half; t += 8) {
        const __m256i q = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + t)));
        lo = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(q, mask)), _mm256_loadu_ps(even + t), lo);
        hi = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(q, 4)), _mm256_loadu_ps(odd + t), hi);
      }
      acc = _mm256_fmadd_ps(_mm256_set1_ps(scales[r * groups + g]), _mm256_add_ps(lo, hi), acc);
      rest += biases[r * groups + g] * x_group_sums[g];
    }
    y[r] = rest + sum_lanes(acc);
  }
}

// The same for 8-bit rows (byte i of a row is value i); the group is a multiple of 8. Sixteen
// bytes a step, their two halves into two sets of lanes.
void rows_dot_q8(const uint8_t* packed, const float* scales, const float* biases, const float* x,
                 const float* x_group_sums, int64_t rows, int64_t k, int group, float* y) {
  const int64_t groups = k / group;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = packed + r * k;
    __m256 acc = _mm256_setzero_ps();
    float rest = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* bytes = row + g * group;
      const float* xg = x + g * group;
      __m256 a = _mm256_setzero_ps(), b = _mm256_setzero_ps();
      int64_t t = 0;
      for (; t + 16 <= group; t += 16) {
        const __m128i sixteen = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + t));
        a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sixteen)), _mm256_loadu_ps(xg + t), a);
        b = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_unpackhi_epi64(sixteen, sixteen))),
                            _mm256_loadu_ps(xg + t + 8), b);
      }
      if (t < group) {
        const __m128i eight = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + t));
        a = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(eight)), _mm256_loadu_ps(xg + t), a);
      }
      acc = _mm256_fmadd_ps(_mm256_set1_ps(scales[r * groups + g]), _mm256_add_ps(a, b), acc);
      rest += biases[r * groups + g] * x_group_sums[g];
    }
    y[r] = rest + sum_lanes(acc);
  }
}

// Several rows of x on the same weights, as dequantize_avx512::q4_rows, in rows_dot_q4's order.
template <int C>
void q4_rows(const uint8_t* packed, const float* scales, const float* biases, const float* x_split,
             const float* x_group_sums, int64_t rows, int64_t k, int group, float* y, int64_t ld) {
  const int64_t groups = k / group, half = group / 2;
  const __m256i mask = _mm256_set1_epi32(15);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = packed + r * k / 2;
    __m256 acc[C];
    float rest[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps(), rest[c] = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* bytes = row + g * half;
      __m256 lo[C], hi[C];
      for (int c = 0; c < C; ++c) lo[c] = _mm256_setzero_ps(), hi[c] = _mm256_setzero_ps();
      for (int64_t t = 0; t < half; t += 8) {
        const __m256i q = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + t)));
        const __m256 low = _mm256_cvtepi32_ps(_mm256_and_si256(q, mask));
        const __m256 high = _mm256_cvtepi32_ps(_mm256_srli_epi32(q, 4));
        for (int c = 0; c < C; ++c) {
          const float* even = x_split + c * k + g * group;
          lo[c] = _mm256_fmadd_ps(low, _mm256_loadu_ps(even + t), lo[c]);
          hi[c] = _mm256_fmadd_ps(high, _mm256_loadu_ps(even + half + t), hi[c]);
        }
      }
      const __m256 scale = _mm256_set1_ps(scales[r * groups + g]);
      const float bias = biases[r * groups + g];
      for (int c = 0; c < C; ++c) {
        acc[c] = _mm256_fmadd_ps(scale, _mm256_add_ps(lo[c], hi[c]), acc[c]);
        rest[c] += bias * x_group_sums[c * groups + g];
      }
    }
    for (int c = 0; c < C; ++c) y[c * ld + r] = rest[c] + sum_lanes(acc[c]);
  }
}

// The same for 8-bit rows, in rows_dot_q8's order.
template <int C>
void q8_rows(const uint8_t* packed, const float* scales, const float* biases, const float* x,
             const float* x_group_sums, int64_t rows, int64_t k, int group, float* y, int64_t ld) {
  const int64_t groups = k / group;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = packed + r * k;
    __m256 acc[C];
    float rest[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps(), rest[c] = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* bytes = row + g * group;
      __m256 a[C], b[C];
      for (int c = 0; c < C; ++c) a[c] = _mm256_setzero_ps(), b[c] = _mm256_setzero_ps();
      int64_t t = 0;
      for (; t + 16 <= group; t += 16) {
        const __m128i sixteen = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + t));
        const __m256 first = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(sixteen));
        const __m256 second = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_unpackhi_epi64(sixteen, sixteen)));
        for (int c = 0; c < C; ++c) {
          const float* xg = x + c * k + g * group;
          a[c] = _mm256_fmadd_ps(first, _mm256_loadu_ps(xg + t), a[c]);
          b[c] = _mm256_fmadd_ps(second, _mm256_loadu_ps(xg + t + 8), b[c]);
        }
      }
      if (t < group) {
        const __m256 eight =
            _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + t))));
        for (int c = 0; c < C; ++c) a[c] = _mm256_fmadd_ps(eight, _mm256_loadu_ps(x + c * k + g * group + t), a[c]);
      }
      const __m256 scale = _mm256_set1_ps(scales[r * groups + g]);
      const float bias = biases[r * groups + g];
      for (int c = 0; c < C; ++c) {
        acc[c] = _mm256_fmadd_ps(scale, _mm256_add_ps(a[c], b[c]), acc[c]);
        rest[c] += bias * x_group_sums[c * groups + g];
      }
    }
    for (int c = 0; c < C; ++c) y[c * ld + r] = rest[c] + sum_lanes(acc[c]);
  }
}
}  // namespace dequantize_avx2
#pragma GCC pop_options
#endif  // DEQUANTIZE_X86

using RowQ4 = void (*)(const uint32_t*, const float*, const float*, int64_t, int, float*);

// The widest widening the kernels use (confab_cpu::isa()) for this group size.
RowQ4 row_q4_for(int group) {
#ifdef DEQUANTIZE_X86
  if (confab_cpu::isa() == confab_cpu::Isa::kAvx512 && group % 16 == 0) return dequantize_avx512::row_q4;
  if (confab_cpu::isa() >= confab_cpu::Isa::kAvx2) return dequantize_avx2::row_q4;
#endif
  (void)group;
  return dequantize_plain::row_q4;
}

// The one-row product of 4-bit weights: AVX-512 where the kernels use it and half a group fills
// its lanes, else loops.h's (compiler-vectorized) loop.
RowsDot rows_dot_q4_for(int group) {
#ifdef DEQUANTIZE_X86
  if (confab_cpu::isa() == confab_cpu::Isa::kAvx512 && (group / 2) % 16 == 0) return dequantize_avx512::rows_dot_q4;
  if (confab_cpu::isa() >= confab_cpu::Isa::kAvx2 && (group / 2) % 8 == 0) return dequantize_avx2::rows_dot_q4;
#endif
  (void)group;
  return rows_dot_q4_loop();
}

// The same for 8-bit weights (a group fills the lanes).
RowsDot rows_dot_q8_for(int group) {
#ifdef DEQUANTIZE_X86
  if (confab_cpu::isa() == confab_cpu::Isa::kAvx512 && group % 16 == 0) return dequantize_avx512::rows_dot_q8;
  if (confab_cpu::isa() >= confab_cpu::Isa::kAvx2 && group % 8 == 0) return dequantize_avx2::rows_dot_q8;
#endif
  (void)group;
  return rows_dot_q8_loop();
}

// Products of several rows of x on the same quantized rows of W (each row's result bit for bit
// the one-row product's): `by_count[c - 1]` takes c rows of x (k apart; their group sums
// `groups` apart; y's rows ld apart), for c from 1 to 4.
using RowsKernel = void (*)(const uint8_t*, const float*, const float*, const float*, const float*, int64_t, int64_t,
                            int, float*, int64_t);
using RowsKernels = RowsKernel[4];

// m rows of x: W's rows a tile at a time (its bytes stay in the first-level cache), x's rows up
// to four at a time.
void many_rows(const RowsKernels& by_count, int bits, const uint8_t* packed, const float* scales, const float* biases,
               const float* x, const float* x_group_sums, int64_t rows, int64_t k, int group, float* y, int64_t ld,
               int64_t m) {
  const int64_t groups = k / group, tile = 32, row_bytes = k * bits / 8;
  for (int64_t r0 = 0; r0 < rows; r0 += tile) {
    const int64_t r = std::min(tile, rows - r0);
    for (int64_t i = 0; i < m; i += 4) {
      by_count[std::min<int64_t>(4, m - i) - 1](packed + r0 * row_bytes, scales + r0 * groups, biases + r0 * groups,
                                                x + i * k, x_group_sums + i * groups, r, k, group, y + i * ld + r0, ld);
    }
  }
}

#ifdef DEQUANTIZE_X86
constexpr RowsKernels kAvx512Q4 = {dequantize_avx512::q4_rows<1>, dequantize_avx512::q4_rows<2>,
                                   dequantize_avx512::q4_rows<3>, dequantize_avx512::q4_rows<4>};
constexpr RowsKernels kAvx512Q8 = {dequantize_avx512::q8_rows<1>, dequantize_avx512::q8_rows<2>,
                                   dequantize_avx512::q8_rows<3>, dequantize_avx512::q8_rows<4>};
constexpr RowsKernels kAvx2Q4 = {dequantize_avx2::q4_rows<1>, dequantize_avx2::q4_rows<2>, dequantize_avx2::q4_rows<3>,
                                 dequantize_avx2::q4_rows<4>};
constexpr RowsKernels kAvx2Q8 = {dequantize_avx2::q8_rows<1>, dequantize_avx2::q8_rows<2>, dequantize_avx2::q8_rows<3>,
                                 dequantize_avx2::q8_rows<4>};
#endif

// The several-row kernels for this group size where the kernels' instruction set has them (as
// rows_dot_q4_for picks); nullptr: run the one-row product once per row of x.
const RowsKernels* rows_q4_for(int group) {
#ifdef DEQUANTIZE_X86
  if (confab_cpu::isa() == confab_cpu::Isa::kAvx512 && (group / 2) % 16 == 0) return &kAvx512Q4;
  if (confab_cpu::isa() >= confab_cpu::Isa::kAvx2 && (group / 2) % 8 == 0) return &kAvx2Q4;
#endif
  (void)group;
  return nullptr;
}

const RowsKernels* rows_q8_for(int group) {
#ifdef DEQUANTIZE_X86
  if (confab_cpu::isa() == confab_cpu::Isa::kAvx512 && group % 16 == 0) return &kAvx512Q8;
  if (confab_cpu::isa() >= confab_cpu::Isa::kAvx2 && group % 8 == 0) return &kAvx2Q8;
#endif
  (void)group;
  return nullptr;
}

// One row of k 4-bit weights (k / group groups) widened to float32.
void dequantize_row_q4(const uint32_t* packed, const float* scales, const float* biases, int64_t k, int group,
                       float* out) {
  row_q4_for(group)(packed, scales, biases, k, group, out);
}

}  // namespace
