// Confab's linear layer for MLX's CPU device: y = x · Wᵀ, with W dense (float32, bfloat16,
// float16), MLX-affine-quantized (4 or 8 bits) or MXFP4 (MLX's `mxfp4` mode: e2m1 values, two a
// byte, low nibble first, one e8m0 scale per 32), computed in float32.
//
// Why it exists: on a CPU, MLX hands every matmul to sgemm. For one row (a decode step)
// OpenBLAS's sgemm packs the whole weight matrix first and runs about 3x slower than sgemv;
// half-precision and quantized weights take MLX's scalar loops, about 10x slower than BLAS.
// Here a product of one or a few rows (decode steps, a short turn) reads W once with our own
// register-tiled loop (`few_rows`), and weights stored in another format are widened to
// float32 a block of rows at a time (64 KB, in cache) on their way to it, so the memory held
// stays that of the stored weights. The math is MLX's: the same dequantization
// (scale · q + bias per group), float32 accumulation, one rounding to the output dtype.
//
// The C entry point builds a graph node (a Primitive) on the CPU stream; the work runs on that
// stream's thread like MLX's own kernels. Scratch space comes from MLX's allocator, so it is
// counted in MLX's memory figures.

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "mlx/allocator.h"
#include "mlx/array.h"
#include "mlx/backend/cpu/encoder.h"
#include "mlx/ops.h"
#include "mlx/primitives.h"

#include "cpu_linear/four_bit.h"
#include "cpu_linear/few_rows.h"
#include "cpu_linear/loops.h"
#include "cpu_isa.h"
#include "thread_pool.h"

namespace mx = mlx::core;

namespace {

using confab_cpu::over_pieces;
using confab_cpu::over_rows;

// CBLAS, found at run time in the BLAS that libmlx already loaded (OpenBLAS on Linux).
enum { RowMajor = 101, NoTrans = 111, Trans = 112 };
using Sgemv = void (*)(int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);

struct Blas {
  Sgemv sgemv = nullptr;
  Sgemm sgemm = nullptr;
  bool ok() const { return sgemv && sgemm; }
};

const Blas& blas() {
  static const Blas found = [] {
    Blas b;
    b.sgemv = reinterpret_cast<Sgemv>(dlsym(RTLD_DEFAULT, "cblas_sgemv"));
    b.sgemm = reinterpret_cast<Sgemm>(dlsym(RTLD_DEFAULT, "cblas_sgemm"));
    return b;
  }();
  return found;
}

void widen(const mx::array& a, const void* data, float* out, int64_t n) {
  switch (a.dtype()) {
    case mx::float32:
      std::memcpy(out, data, n * 4);
      break;
    case mx::bfloat16:
      widen_bf16(static_cast<const uint16_t*>(data), out, n);
      break;
    case mx::float16: {
      auto in = static_cast<const mx::float16_t*>(data);
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
      break;
    }
    default:
      throw std::invalid_argument("confab cpu_linear: unsupported dtype");
  }
}

float scalar_at(const mx::array& a, const void* data, int64_t i) {
  switch (a.dtype()) {
    case mx::float32:
      return static_cast<const float*>(data)[i];
    case mx::bfloat16:
      return static_cast<float>(static_cast<const mx::bfloat16_t*>(data)[i]);
    case mx::float16:
      return static_cast<float>(static_cast<const mx::float16_t*>(data)[i]);
    default:
      throw std::invalid_argument("confab cpu_linear: unsupported scale dtype");
  }
}

// How a quantized W is stored (the Rust side's `QuantMode`): MLX's affine groups (scale · q +
// bias) or MXFP4 (e2m1 · 2^(scale − 127), no biases).
enum Mode { kAffine = 0, kMxfp4 = 1 };

// The 16 e2m1 values (sign, two exponent bits, one mantissa bit), as MLX reads them.
constexpr float kE2m1[16] = {0.0f,  0.5f,  1.0f,  1.5f,  2.0f,  3.0f,  4.0f,  6.0f,
                             -0.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f};

// One MXFP4 row of k values (k / 2 bytes, k / 32 scale bytes) as float32.
void dequantize_row_mxfp4(const uint8_t* packed, const uint8_t* scales, int64_t k, float* out) {
  for (int64_t g = 0; g < k / 32; ++g) {
    const float scale = std::ldexp(1.0f, static_cast<int>(scales[g]) - 127);
    const uint8_t* bytes = packed + g * 16;
    float* dst = out + g * 32;
    for (int i = 0; i < 16; ++i) {
      dst[2 * i] = kE2m1[bytes[i] & 0xF] * scale;
      dst[2 * i + 1] = kE2m1[bytes[i] >> 4] * scale;
    }
  }
}

// What the weight of one linear layer looks like, with raw pointers valid while the task runs.
struct Weight {
  const mx::array* w;
  const void* data;
  // Quantized only.
  const mx::array* scales = nullptr;
  const void* scales_data = nullptr;
  const void* biases_data = nullptr;
  int group = 0, bits = 0, mode = kAffine;
  int64_t n = 0, k = 0;

  bool dense_f32() const { return bits == 0 && w->dtype() == mx::float32; }

  // Rows [r0, r0 + rows) as a weight of their own.
  Weight rows(int64_t r0, int64_t count) const {
    Weight part = *this;
    part.n = count;
    if (bits == 0) {
      part.data = static_cast<const char*>(data) + r0 * k * w->itemsize();
    } else {
      const int64_t groups = k / group, scale_size = scales->itemsize();
      part.data = static_cast<const char*>(data) + r0 * k * bits / 8;
      part.scales_data = static_cast<const char*>(scales_data) + r0 * groups * scale_size;
      if (biases_data) part.biases_data = static_cast<const char*>(biases_data) + r0 * groups * scale_size;
    }
    return part;
  }

  // Rows [r0, r0 + rows) as float32 into `out` ([rows, k], row-major), on the pool's threads.
  void widen_rows(int64_t r0, int64_t rows, float* out) const {
    over_rows(rows, k, [&](int64_t a, int64_t b) { widen_rows_here(r0 + a, b - a, out + a * k); });
  }

  void widen_rows_here(int64_t r0, int64_t rows, float* out) const {
    if (bits == 0) {
      auto esize = w->itemsize();
      widen(*w, static_cast<const char*>(data) + r0 * k * esize, out, rows * k);
      return;
    }
    const int64_t words_per_row = k * bits / 32, groups_per_row = k / group;
    auto packed = static_cast<const uint32_t*>(data);
    if (mode == kMxfp4) {
      auto bytes = static_cast<const uint8_t*>(data), scale_bytes = static_cast<const uint8_t*>(scales_data);
      for (int64_t r = r0; r < r0 + rows; ++r) {
        dequantize_row_mxfp4(bytes + r * k / 2, scale_bytes + r * groups_per_row, k, out + (r - r0) * k);
      }
      return;
    }
    if (bits == 4) {
      // Whole rows at a time, with the scales and biases as float32.
      const bool f32 = scales->dtype() == mx::float32;
      std::vector<float> s(f32 ? 0 : groups_per_row), b(f32 ? 0 : groups_per_row);
      for (int64_t r = r0; r < r0 + rows; ++r) {
        const int64_t first = r * groups_per_row;
        if (!f32) {
          for (int64_t g = 0; g < groups_per_row; ++g) {
            s[g] = scalar_at(*scales, scales_data, first + g);
            b[g] = scalar_at(*scales, biases_data, first + g);
          }
        }
        const float* rs = f32 ? static_cast<const float*>(scales_data) + first : s.data();
        const float* rb = f32 ? static_cast<const float*>(biases_data) + first : b.data();
        dequantize_row_q4(packed + r * words_per_row, rs, rb, k, group, out + (r - r0) * k);
      }
      return;
    }
    for (int64_t r = r0; r < r0 + rows; ++r) {
      for (int64_t g = 0; g < groups_per_row; ++g) {
        float s = scalar_at(*scales, scales_data, r * groups_per_row + g);
        float b = scalar_at(*scales, biases_data, r * groups_per_row + g);
        const uint32_t* src = packed + r * words_per_row + g * group * bits / 32;
        float* dst = out + (r - r0) * k + g * group;
        dequantize_group<8>(src, s, b, dst, group);
      }
    }
  }
};

struct Scratch {
  mx::allocator::Buffer buffer{nullptr};
  explicit Scratch(size_t bytes) : buffer(bytes ? mx::allocator::malloc(bytes) : mx::allocator::Buffer{nullptr}) {}
  ~Scratch() {
    if (buffer.ptr()) mx::allocator::free(buffer);
  }
  float* floats() { return static_cast<float*>(buffer.raw_ptr()); }
};

// Float32 scratch per widened block (of W's rows, or of half-precision x rows): 64 KB, small
// beside the activations so peak memory stays that of MLX's own path, and enough for BLAS.
constexpr int64_t kBlockFloats = 16 * 1024;

// A prompt chunk's rows take `few_rows` too, up to this many (the engine's prefill chunk), and
// at any count where W is stored otherwise than as float32: each thread widens and multiplies
// blocks of its own, and the threads meet once per product. Through sgemm a block at a time,
// every 64 KB block cost two hand-offs between the cores (the widening, then BLAS's threads):
// a 37-token prompt makes about 5,000 blocks of SmolLM2-135M, and the hand-offs took longer
// than the arithmetic (prefill 146 → 268 tok/s at 37 tokens, 193 → 498 at 128, with 4-bit
// weights). Larger products of float32 W go to sgemm, whose packing then pays.
constexpr int64_t kByBlocksRows = 512;

// x rows per `few_rows` call when a prompt goes by blocks: about 256 KB of them, so they stay
// in L2 while each block of W is walked.
int64_t x_slice_rows(int64_t k) {
  return std::max<int64_t>(32, (256 * 1024 / 4) / k);
}

// Rows of W per BLAS call when rows are widened or gated.
int64_t block_rows(int64_t k) {
  return std::max<int64_t>(32, kBlockFloats / k);
}

// Stores float32 results into the output array, converting when it is half precision.
// Rows [row0, row0 + m), columns [col, col + cols) of y come from `tile` (leading dimension ld).
void store(mx::array& y, int64_t n, int64_t row0, int64_t m, int64_t col, int64_t cols, const float* tile, int64_t ld) {
  for (int64_t i = 0; i < m; ++i) {
    const float* src = tile + i * ld;
    if (y.dtype() == mx::bfloat16) {
      auto dst = y.data<mx::bfloat16_t>() + (row0 + i) * n + col;
      for (int64_t j = 0; j < cols; ++j) dst[j] = static_cast<mx::bfloat16_t>(src[j]);
    } else {
      auto dst = y.data<mx::float16_t>() + (row0 + i) * n + col;
      for (int64_t j = 0; j < cols; ++j) dst[j] = static_cast<mx::float16_t>(src[j]);
    }
  }
}

// Gated feed-forward: W's rows are [gate; up], and the output is act(gate) · up, so the
// [m, 2·hidden] projection never exists in memory. Same formulas as MLX's silu and
// gelu_approx.
enum Gate { kNone = 0, kSilu = 1, kGeluTanh = 2 };

void gate(int act, const float* g, const float* u, float* out, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const float x = g[j];
    const float a = act == kSilu ? x * (1.0f / (1.0f + std::exp(-x)))
                                 : 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    out[j] = a * u[j];
  }
}

// A product of at most this many rows on W stored as bfloat16, or as 4- or 8-bit with float32
// scales, goes through the fused one-row loops inside each block of W's rows: W is read from
// memory once (the block stays in cache for the other rows), and every row's result is bit for
// bit what it would be alone. Packed rows widen each group once for up to four rows of x
// (four_bit.h's `q4_rows`, `q8_rows`), which costs more than their multiply-adds. A speculative
// verify of 9 positions on the default model's 4-bit weights then costs about three decode
// steps on a CPU (compute, not memory, bounds these loops there), where widening W to float32
// for sgemm cost several more.
constexpr int64_t kFusedRows = 16;

// Whether W has a fused loop over its stored format (dense float32 has `few_rows`, bfloat16 and
// affine 4- and 8-bit with float32 scales their dot loops).
bool fused_format(const Weight& wt) {
  if (wt.bits == 0) return wt.w->dtype() == mx::float32 || wt.w->dtype() == mx::bfloat16;
  return wt.mode == kAffine && (wt.bits == 4 || wt.bits == 8) && wt.scales->dtype() == mx::float32;
}

// Rows straight from the stored format: y [m, n] (leading dimension ld) float32 = x [m, k]
// float32 · Wᵀ, each row as it would be alone. One row of a format without a fused loop goes
// through sgemv on widened blocks.
void row_product(const float* x, int64_t m, const Weight& wt, float* y, int64_t ld) {
  const auto& b = blas();
  const int64_t n = wt.n, k = wt.k;
  if (wt.dense_f32()) {
    // The loop a few rows take too, so a row's result is the same alone or in a batch.
    auto w = static_cast<const float*>(wt.data);
    const int64_t piece = 64, count = (n + piece - 1) / piece;
    over_pieces(count, piece * k * m, [&](auto next) {
      for (int64_t i; next(i);) few_rows(x, m, w + i * piece * k, std::min(piece, n - i * piece), k, y + i * piece, ld);
    });
  } else if (wt.bits == 0 && wt.w->dtype() == mx::bfloat16) {
    auto w = static_cast<const uint16_t*>(wt.data);
    over_rows(n, k * m, [&](int64_t r0, int64_t r1) {
      for (int64_t i = 0; i < m; ++i) rows_dot_bf16(w + r0 * k, x + i * k, r1 - r0, k, y + i * ld + r0);
    });
  } else if (wt.bits > 0 && fused_format(wt)) {
    const int group = wt.group;
    const int64_t groups = k / group;
    // Each row's sums per group (and, for 4 bits, its values in the packed order).
    std::vector<float> sums(m * groups, 0.0f);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < k; ++j) sums[i * groups + j / group] += x[i * k + j];
    }
    auto packed = static_cast<const uint8_t*>(wt.data);
    auto scales = static_cast<const float*>(wt.scales_data), biases = static_cast<const float*>(wt.biases_data);
    if (wt.bits == 8) {
      const RowsDot dot = rows_dot_q8_for(group);
      const RowsKernels* many = m > 1 ? rows_q8_for(group) : nullptr;
      over_rows(n, k * m, [&](int64_t r0, int64_t r1) {
        if (many) {
          many_rows(*many, 8, packed + r0 * k, scales + r0 * groups, biases + r0 * groups, x, sums.data(), r1 - r0, k, group,
                    y + r0, ld, m);
          return;
        }
        for (int64_t i = 0; i < m; ++i) {
          dot(packed + r0 * k, scales + r0 * groups, biases + r0 * groups, x + i * k, sums.data() + i * groups, r1 - r0, k,
              group, y + i * ld + r0);
        }
      });
      return;
    }
    std::vector<float> split(m * k);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < k; ++j) {
        const int64_t g = j / group, at = j % group;
        split[i * k + g * group + (at % 2) * (group / 2) + at / 2] = x[i * k + j];
      }
    }
    const RowsDot dot = rows_dot_q4_for(group);
    const RowsKernels* many = m > 1 ? rows_q4_for(group) : nullptr;
    over_rows(n, k * m, [&](int64_t r0, int64_t r1) {
      if (many) {
        many_rows(*many, 4, packed + r0 * k / 2, scales + r0 * groups, biases + r0 * groups, split.data(), sums.data(),
                  r1 - r0, k, group, y + r0, ld, m);
        return;
      }
      for (int64_t i = 0; i < m; ++i) {
        dot(packed + r0 * k / 2, scales + r0 * groups, biases + r0 * groups, split.data() + i * k, sums.data() + i * groups,
            r1 - r0, k, group, y + i * ld + r0);
      }
    });
  } else {
    const int64_t rows = block_rows(k);
    Scratch block(rows * k * 4);
    for (int64_t r0 = 0; r0 < n; r0 += rows) {
      const int64_t r = std::min(rows, n - r0);
      wt.widen_rows(r0, r, block.floats());
      b.sgemv(RowMajor, NoTrans, r, k, 1.0f, block.floats(), k, x, 1, 0.0f, y + r0, 1);
    }
  }
}

// Several rows: y [m, n] = x [m, k] float32 · Wᵀ, writing rows [row0, row0 + m) of y. With a
// gate, block j of the gate rows and block j of the up rows make block j of y.
// - By blocks (up to kByBlocksRows rows, and any count of rows on W stored otherwise than as
//   float32): `few_rows` on blocks of W's rows (widened to float32 when W is stored otherwise),
//   the threads taking blocks as they come free, so W is read from memory once and the threads
//   meet once per product.
// - More rows on float32 W: sgemm, on W whole when nothing follows, else a block of W's rows at
//   a time, gated on the way to y.
void rows_product(const float* x, int64_t row0, int64_t m, const Weight& wt, int act, mx::array& y) {
  const auto& b = blas();
  const int64_t k = wt.k, n = act == kNone ? wt.n : wt.n / 2;
  const bool y_f32 = y.dtype() == mx::float32, dense = wt.dense_f32();
  const bool by_blocks = m <= kByBlocksRows || !dense;
  float* y_rows = y_f32 ? y.data<float>() + row0 * n : nullptr;
  if (dense && y_f32 && act == kNone && !by_blocks) {
    b.sgemm(RowMajor, NoTrans, Trans, m, n, k, 1.0f, x, k, static_cast<const float*>(wt.data), k, 0.0f, y_rows, n);
    return;
  }
  const int64_t rows = block_rows(k);
  const int parts = act == kNone ? 1 : 2;
  // Blocks of W's rows, with scratch of their own (each thread has its own).
  struct Blocks {
    Scratch block, tiles, gated;
  };
  auto make = [&] {
    return Blocks{Scratch(dense ? 0 : rows * k * 4), Scratch(parts * m * rows * 4),
                  Scratch(act != kNone && !y_f32 ? m * rows * 4 : 0)};
  };
  // W's rows [r0, r0 + r): its block of y.
  auto one = [&](Blocks& sc, int64_t r0, int64_t r) {
    for (int part = 0; part < parts; ++part) {
      const int64_t first = r0 + part * n;  // the up rows follow the gate rows
      const float* w = static_cast<const float*>(wt.data) + first * k;
      if (!dense) {
        wt.widen_rows_here(first, r, sc.block.floats());
        w = sc.block.floats();
      }
      float* out = act == kNone && y_f32 ? y_rows + r0 : sc.tiles.floats() + part * m * r;
      const int64_t ld = act == kNone && y_f32 ? n : r;
      if (by_blocks) {
        const int64_t slice = x_slice_rows(k);
        for (int64_t i = 0; i < m; i += slice) few_rows(x + i * k, std::min(slice, m - i), w, r, k, out + i * ld, ld);
      } else b.sgemm(RowMajor, NoTrans, Trans, m, r, k, 1.0f, x, k, w, k, 0.0f, out, ld);
    }
    if (act == kNone) {
      if (!y_f32) store(y, n, row0, m, r0, r, sc.tiles.floats(), r);
      return;
    }
    float* dst = y_f32 ? y_rows + r0 : sc.gated.floats();
    const int64_t ld = y_f32 ? n : r;
    for (int64_t i = 0; i < m; ++i) {
      gate(act, sc.tiles.floats() + i * r, sc.tiles.floats() + m * r + i * r, dst + i * ld, r);
    }
    if (!y_f32) store(y, n, row0, m, r0, r, sc.gated.floats(), r);
  };
  const int64_t count = (n + rows - 1) / rows;
  if (by_blocks) {
    // BLAS threads a prompt's big products itself; `few_rows` is one thread's loop, so the
    // pool's threads share the blocks out between them.
    over_pieces(count, rows * k * m, [&](auto next) {
      Blocks sc = make();
      for (int64_t i; next(i);) one(sc, i * rows, std::min(rows, n - i * rows));
    });
  } else {
    Blocks sc = make();
    for (int64_t i = 0; i < count; ++i) one(sc, i * rows, std::min(rows, n - i * rows));
  }
}

class CpuLinear : public mx::Primitive {
 public:
  CpuLinear(mx::Stream stream, int group, int bits, int mode, int act, bool round_to_input)
      : mx::Primitive(stream), group_(group), bits_(bits), mode_(mode), act_(act), round_(round_to_input) {}

  void eval_gpu(const std::vector<mx::array>&, std::vector<mx::array>&) override {
    throw std::runtime_error("confab cpu_linear runs on the CPU device only");
  }

  const char* name() const override { return "ConfabCpuLinear"; }

  bool is_equivalent(const mx::Primitive& other) const override {
    auto o = dynamic_cast<const CpuLinear*>(&other);
    return o && o->group_ == group_ && o->bits_ == bits_ && o->mode_ == mode_ && o->act_ == act_ && o->round_ == round_;
  }

  void eval_cpu(const std::vector<mx::array>& inputs, std::vector<mx::array>& outputs) override {
    const mx::array& x = inputs[0];
    mx::array& y = outputs[0];
    y.set_data(mx::allocator::malloc(y.nbytes()));
    Weight wt{&inputs[1], inputs[1].data<void>()};
    wt.n = inputs[1].shape(0);
    wt.k = x.shape(-1);
    if (bits_ > 0) {
      wt.scales = &inputs[2];
      wt.scales_data = inputs[2].data<void>();
      wt.biases_data = mode_ == kAffine ? inputs[3].data<void>() : nullptr;
      wt.group = group_;
      wt.bits = bits_;
      wt.mode = mode_;
    }
    const int64_t m = x.size() / wt.k;
    auto& encoder = mx::cpu::get_command_encoder(stream());
    for (auto& in : inputs) encoder.set_input_array(in);
    encoder.set_output_array(y);
    // The arrays' buffers stay alive until the stream has run this task (MLX holds them).
    encoder.dispatch([x = mx::array::unsafe_weak_copy(x), y = mx::array::unsafe_weak_copy(y),
                      w = mx::array::unsafe_weak_copy(inputs[1]),
                      s = bits_ > 0 ? mx::array::unsafe_weak_copy(inputs[2]) : mx::array(0.0f), wt, m,
                      act = act_, round = round_]() mutable {
      wt.w = &w;
      wt.scales = &s;
      compute(x, y, wt, m, act);
      if (round && x.dtype() != mx::float32) {
        float* out = y.data<float>();
        for (size_t i = 0; i < y.size(); ++i) {
          out[i] = x.dtype() == mx::bfloat16 ? static_cast<float>(static_cast<mx::bfloat16_t>(out[i]))
                                             : static_cast<float>(static_cast<mx::float16_t>(out[i]));
        }
      }
    });
  }

 private:
  static void compute(const mx::array& x, mx::array& y, Weight& wt, int64_t m, int act) {
    const bool x_f32 = x.dtype() == mx::float32;
    // MXFP4 rows are widened block by block into the float tiles (`few_rows`, per ISA) at any
    // count of rows: there is no fused one-row loop for them. Dense float32 rows take
    // `few_rows` there too.
    const bool fused = m == 1 || (m <= kFusedRows && fused_format(wt) && !wt.dense_f32());
    const bool by_rows = !fused || wt.mode == kMxfp4;
    if (by_rows && x_f32) {
      rows_product(x.data<float>(), 0, m, wt, act, y);
      return;
    }
    if (by_rows) {
      // Half-precision rows are widened a slice at a time.
      const int64_t slice = std::max<int64_t>(1, kBlockFloats / wt.k);
      Scratch x_wide(std::min(slice, m) * wt.k * 4);
      for (int64_t i0 = 0; i0 < m; i0 += slice) {
        const int64_t rows = std::min(slice, m - i0);
        widen(x, static_cast<const char*>(x.data<void>()) + i0 * wt.k * x.itemsize(), x_wide.floats(), rows * wt.k);
        rows_product(x_wide.floats(), i0, rows, wt, act, y);
      }
      return;
    }
    Scratch x_wide(x_f32 ? 0 : x.size() * 4);
    const float* xf = x_f32 ? x.data<float>() : x_wide.floats();
    if (!x_f32) widen(x, x.data<void>(), x_wide.floats(), x.size());
    // Straight into a float32 output; through float32 scratch otherwise.
    const int64_t n = act == kNone ? wt.n : wt.n / 2;
    if (act == kNone && y.dtype() != mx::float32) {
      // Half-precision output, through float32 scratch a slice of W's rows at a time (the
      // output may be vocabulary-sized).
      const int64_t slice = 4096;
      Scratch part(m * std::min(slice, n) * 4);
      for (int64_t r0 = 0; r0 < n; r0 += slice) {
        const int64_t r = std::min(slice, n - r0);
        row_product(xf, m, wt.rows(r0, r), part.floats(), r);
        store(y, n, 0, m, r0, r, part.floats(), r);
      }
      return;
    }
    if (act == kNone) {
      row_product(xf, m, wt, y.data<float>(), n);
      return;
    }
    // Gated: the [gate; up] rows into scratch, then act(gate) · up into y.
    Scratch full(m * wt.n * 4), gated(y.dtype() == mx::float32 ? 0 : n * 4);
    row_product(xf, m, wt, full.floats(), wt.n);
    for (int64_t i = 0; i < m; ++i) {
      const float* g = full.floats() + i * wt.n;
      if (y.dtype() == mx::float32) {
        gate(act, g, g + n, y.data<float>() + i * n, n);
      } else {
        gate(act, g, g + n, gated.floats(), n);
        store(y, n, i, 1, 0, n, gated.floats(), n);
      }
    }
  }

  int group_, bits_, mode_, act_;
  // A float32 output holding values rounded to the input's half precision (what MLX's matmul
  // followed by a cast to float32 gives, without the half-precision copy).
  bool round_;
};

bool is_float(mx::Dtype d) { return d == mx::float32 || d == mx::bfloat16 || d == mx::float16; }

mx::array row_major(const mx::array& a, mx::Stream s) {
  if (a.is_available() && a.flags().row_contiguous) return a;
  return mx::contiguous(a, false, s);
}

void write_error(char* err, size_t len, const std::string& message) {
  if (!err || len == 0) return;
  std::snprintf(err, len, "%s", message.c_str());
}

void copy_text(char* out, size_t len, const char* text) {
  if (out && len > 0) std::snprintf(out, len, "%s", text ? text : "");
}

}  // namespace

extern "C" {

// Whether this build can run the kernel: the BLAS entry points were found.
int confab_cpu_linear_available() { return blas().ok() ? 1 : 0; }

// The instruction set the CPU kernels' tiles use (cpu_isa.h): 0 portable, 1 AVX2, 2 AVX-512.
int confab_cpu_isa() { return static_cast<int>(confab_cpu::isa()); }

// The BLAS found above, for `confab doctor`: the file that provides cblas_sgemm, and, when it
// is OpenBLAS, its core and build description (empty strings when unknown). Returns 0.
int confab_blas_describe(char* library, size_t library_len, char* core, size_t core_len, char* config,
                         size_t config_len) {
  copy_text(library, library_len, "");
  copy_text(core, core_len, "");
  copy_text(config, config_len, "");
  Dl_info info{};
  if (blas().sgemm && dladdr(reinterpret_cast<void*>(blas().sgemm), &info) && info.dli_fname) {
    copy_text(library, library_len, info.dli_fname);
  }
  using Text = char* (*)();
  if (auto name = reinterpret_cast<Text>(dlsym(RTLD_DEFAULT, "openblas_get_corename"))) copy_text(core, core_len, name());
  if (auto text = reinterpret_cast<Text>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) copy_text(config, config_len, text());
  return 0;
}

// *out = x · Wᵀ on the CPU stream, as a new heap-allocated mlx::core::array (what mlx-c's
// `mlx_array.ctx` holds); arrays come in as such `ctx` pointers.
// - scales/biases: null for a dense W; biases null in mode 1 (MXFP4: group 32, bits 4, uint8
//   e8m0 scales).
// - gate_activation 1 (silu) or 2 (gelu, tanh approximation): W's rows are [gate; up] and the
//   result is act(x · Gateᵀ) · (x · Upᵀ).
// - float32_out 1: a float32 result rounded to x's precision (logits); else x's dtype.
// Returns 0, or 1 with a message in `err`.
int confab_cpu_linear(void** out, void* x_ctx, void* w_ctx, void* scales_ctx, void* biases_ctx, int group_size,
                      int bits, int mode, int gate_activation, int float32_out, char* err, size_t err_len) {
  try {
    if (!blas().ok()) throw std::runtime_error("no CBLAS (cblas_sgemv/cblas_sgemm) in the loaded libraries");
    const auto& x = *static_cast<mx::array*>(x_ctx);
    const auto& w = *static_cast<mx::array*>(w_ctx);
    const bool quantized = scales_ctx != nullptr;
    auto s = mx::default_stream(mx::Device::cpu);
    if (x.ndim() < 1 || w.ndim() != 2 || !is_float(x.dtype())) throw std::invalid_argument("x must be float [..., k], w [n, k]");
    const int k = x.shape(-1);
    if (gate_activation < kNone || gate_activation > kGeluTanh || (gate_activation != kNone && w.shape(0) % 2 != 0)) {
      throw std::invalid_argument("bad gate");
    }
    const int n = gate_activation == kNone ? w.shape(0) : w.shape(0) / 2;
    std::vector<mx::array> inputs{row_major(mx::reshape(x, {-1, k}, s), s), row_major(w, s)};
    if (quantized && mode == kMxfp4) {
      const auto& scales = *static_cast<mx::array*>(scales_ctx);
      if (bits != 4 || group_size != 32 || k % 32 != 0 || w.dtype() != mx::uint32 || w.shape(1) * 8 != k ||
          scales.dtype() != mx::uint8 || scales.ndim() != 2 || scales.shape(0) != w.shape(0) || scales.shape(1) != k / 32) {
        throw std::invalid_argument("unsupported MXFP4 layout (want uint32 [n, k/8], uint8 scales [n, k/32], group 32)");
      }
      inputs.push_back(row_major(scales, s));
    } else if (quantized) {
      const auto& scales = *static_cast<mx::array*>(scales_ctx);
      if (mode != kAffine || !biases_ctx) throw std::invalid_argument("unknown quantization mode");
      const auto& biases = *static_cast<mx::array*>(biases_ctx);
      if ((bits != 4 && bits != 8) || group_size <= 0 || k % group_size != 0 || group_size % (32 / bits) != 0 ||
          w.dtype() != mx::uint32 || w.shape(1) * 32 / bits != k || !is_float(scales.dtype()) ||
          scales.dtype() != biases.dtype()) {
        throw std::invalid_argument("unsupported quantized layout");
      }
      inputs.push_back(row_major(scales, s));
      inputs.push_back(row_major(biases, s));
    } else if (!quantized && (!is_float(w.dtype()) || w.shape(1) != k)) {
      throw std::invalid_argument("w must be float [n, k]");
    }
    auto shape = x.shape();
    shape.back() = n;
    const int m = inputs[0].shape(0);
    auto rows = mx::array({m, n}, float32_out ? mx::float32 : x.dtype(),
                          std::make_shared<CpuLinear>(s, quantized ? group_size : 0, quantized ? bits : 0, quantized ? mode : 0, gate_activation,
                                                      float32_out != 0),
                          std::move(inputs));
    *out = new mx::array(mx::reshape(rows, shape, s));
    return 0;
  } catch (const std::exception& e) {
    write_error(err, err_len, e.what());
    return 1;
  }
}

}  // extern "C"
