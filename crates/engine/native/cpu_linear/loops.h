// The vectorized inner loops of cpu_linear.cpp (included there only): widening bfloat16,
// dequantizing MLX's affine groups, and one-row dot products straight from bfloat16 or 4/8-bit
// weights. Plain C++ written so the compiler vectorizes it (no intrinsics, loops_body.h),
// compiled for AVX-512, AVX2+FMA and the baseline on x86-64 and picked by `confab_cpu::isa()`
// (not by target_clones, whose choice follows the CPU alone and could not be capped).
#pragma once

#include <cstdint>
#include <cstring>

#include "../cpu_isa.h"

namespace {

namespace loops_plain {
#include "loops_body.h"
}  // namespace loops_plain

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LOOPS_X86 1
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace loops_avx2 {
#include "loops_body.h"
}  // namespace loops_avx2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,fma")
namespace loops_avx512 {
#include "loops_body.h"
}  // namespace loops_avx512
#pragma GCC pop_options
#endif

// `loops_<isa>::name` for the instruction set the kernels use.
#ifdef LOOPS_X86
#define LOOPS_PICK(name)                                     \
  (confab_cpu::isa() == confab_cpu::Isa::kAvx512 ? loops_avx512::name \
   : confab_cpu::isa() == confab_cpu::Isa::kAvx2 ? loops_avx2::name   \
                                                 : loops_plain::name)
#else
#define LOOPS_PICK(name) loops_plain::name
#endif

void widen_bf16(const uint16_t* in, float* out, int64_t n) {
  static const auto chosen = LOOPS_PICK(widen_bf16);
  chosen(in, out, n);
}

template <int Bits>
void dequantize_group(const uint32_t* packed, float scale, float bias, float* out, int group) {
  static const auto chosen = LOOPS_PICK(dequantize_group<Bits>);
  chosen(packed, scale, bias, out, group);
}

void rows_dot_bf16(const uint16_t* w, const float* x, int64_t rows, int64_t k, float* y) {
  static const auto chosen = LOOPS_PICK(rows_dot_bf16);
  chosen(w, x, rows, k, y);
}

// Quantized one-row products (loops_body.h): the same signature for 4 and 8 bits.
using RowsDot = void (*)(const uint8_t*, const float*, const float*, const float*, const float*, int64_t, int64_t,
                         int, float*);

RowsDot rows_dot_q4_loop() { return LOOPS_PICK(rows_dot_q4); }
RowsDot rows_dot_q8_loop() { return LOOPS_PICK(rows_dot_q8); }

#undef LOOPS_PICK

}  // namespace
