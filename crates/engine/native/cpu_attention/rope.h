// RoPE for one position (native/cpu_rope.cpp), for the decode kernels of cpu_attention.cpp.
#pragma once

#include <cstdint>

namespace confab_cpu {

// MLX's RoPE parameters: the first `dims` features rotate (pairs (i, i + dims/2), or
// (2i, 2i + 1) when `traditional`), the angle of pair i at position p is p · scale ·
// inv_freq[i] (dims/2 of them); the other features pass through.
struct RopeSpec {
  int64_t dims;
  bool traditional;
  float scale;
  const float* inv_freq;
};

// Rotates `heads` heads of `d` features (head h's feature c at src[h·head_stride +
// c·dim_stride]) as at `position`, into dst (head h at dst + h·dst_head_stride, contiguous).
void rope_heads(const RopeSpec& rope, int64_t position, const float* src, int64_t head_stride, int64_t dim_stride,
                int64_t heads, int64_t d, float* dst, int64_t dst_head_stride);

// The same layout change without the rotation (values).
void copy_heads(const float* src, int64_t head_stride, int64_t dim_stride, int64_t heads, int64_t d, float* dst,
                int64_t dst_head_stride);

}  // namespace confab_cpu
