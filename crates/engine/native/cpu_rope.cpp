// RoPE for one decode position, as the decode kernels in cpu_attention.cpp apply it to a
// row's new query and key heads.
//
// It follows MLX's own RoPE on a CPU (a graph of float32 ops: positions × scale, × inverse
// frequency, cos, sin, then x1·cos − x2·sin and x1·sin + x2·cos, each product rounded), so it
// agrees with mlx::fast::rope to the ulp: cos and sin come from the C library here, and MLX's
// sin differs from it by an ulp at some angles. Built apart from cpu_attention.cpp, without
// fused multiply-adds (-ffp-contract=off), so the products round as MLX's do.

#include "cpu_attention/rope.h"

#include <cmath>
#include <vector>

namespace confab_cpu {

void rope_heads(const RopeSpec& rope, int64_t position, const float* src, int64_t head_stride, int64_t dim_stride,
                int64_t heads, int64_t d, float* dst, int64_t dst_head_stride) {
  const int64_t half = rope.dims / 2;
  // MLX: positions = (arange + offset) · scale, theta = positions · inv_freq, all float32.
  const float at = static_cast<float>(position) * rope.scale;
  std::vector<float> cos_(half), sin_(half);
  for (int64_t i = 0; i < half; ++i) {
    const float theta = at * rope.inv_freq[i];
    cos_[i] = std::cos(theta);
    sin_[i] = std::sin(theta);
  }
  for (int64_t h = 0; h < heads; ++h) {
    const float* x = src + h * head_stride;
    float* y = dst + h * dst_head_stride;
    for (int64_t i = 0; i < half; ++i) {
      // Pairs (i, i + half), or (2i, 2i + 1) in the traditional layout.
      const int64_t a = rope.traditional ? 2 * i : i, b = rope.traditional ? 2 * i + 1 : i + half;
      const float x1 = x[a * dim_stride], x2 = x[b * dim_stride];
      const float p = x1 * cos_[i], q = x2 * sin_[i], r = x1 * sin_[i], s = x2 * cos_[i];
      y[a] = p - q;
      y[b] = r + s;
    }
    for (int64_t c = rope.dims; c < d; ++c) y[c] = x[c * dim_stride];
  }
}

void copy_heads(const float* src, int64_t head_stride, int64_t dim_stride, int64_t heads, int64_t d, float* dst,
                int64_t dst_head_stride) {
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t c = 0; c < d; ++c) dst[h * dst_head_stride + c] = src[h * head_stride + c * dim_stride];
  }
}

}  // namespace confab_cpu
