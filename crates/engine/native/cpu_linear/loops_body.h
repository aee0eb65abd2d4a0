// The bodies of loops.h's loops (included by loops.h only, once per instruction set, each time
// inside a namespace of its own and an instruction-set region). No include guard.

void widen_bf16(const uint16_t* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits = uint32_t(in[i]) << 16;
    std::memcpy(out + i, &bits, 4);
  }
}

// One group of `group` weights: w = scale · q + bias, q unpacked low bits first (MLX's layout).
template <int Bits>
void dequantize_group(const uint32_t* packed, float scale, float bias, float* out, int group) {
  constexpr int per_word = 32 / Bits;
  constexpr uint32_t mask = (1u << Bits) - 1;
  for (int w = 0; w < group / per_word; ++w) {
    uint32_t word = packed[w];
    for (int j = 0; j < per_word; ++j) {
      out[w * per_word + j] = scale * float((word >> (Bits * j)) & mask) + bias;
    }
  }
}

// One-row products straight from the stored format: y[r] = Σ w[r, i] · x[i]. Sixteen partial
// sums per row keep the loop vectorizable without reassociating float math.
constexpr int kLanes = 16;

void rows_dot_bf16(const uint16_t* w, const float* x, int64_t rows, int64_t k, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* row = w + r * k;
    float acc[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= k; i += kLanes) {
      for (int j = 0; j < kLanes; ++j) {
        uint32_t bits = uint32_t(row[i + j]) << 16;
        float v;
        std::memcpy(&v, &bits, 4);
        acc[j] += v * x[i + j];
      }
    }
    float sum = 0.0f;
    for (; i < k; ++i) {
      uint32_t bits = uint32_t(row[i]) << 16;
      float v;
      std::memcpy(&v, &bits, 4);
      sum += v * x[i];
    }
    for (int j = 0; j < kLanes; ++j) sum += acc[j];
    y[r] = sum;
  }
}

// Quantized: per group, y += scale · Σ q·x + bias · Σ x, with Σ x per group computed once.
// MLX packs values low bits first, so in memory byte t of a 4-bit row holds values 2t (low
// nibble) and 2t + 1 (high nibble); `x_split` is x rearranged to match: per group, the
// even-indexed values, then the odd-indexed ones. Loops run over bytes, which vectorizes.
// Each group's q·x stays in kLanes partial sums, scaled and added to the row's partial sums,
// which are added across once per row: a group is 32 values, and adding its lanes across every
// group cost more than its multiply-adds.
void rows_dot_q4(const uint8_t* packed, const float* scales, const float* biases, const float* x_split,
                           const float* x_group_sums, int64_t rows, int64_t k, int group, float* y) {
  const int64_t groups = k / group, half = group / 2;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = packed + r * k / 2;
    float acc[kLanes] = {};
    float rest = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* bytes = row + g * half;
      const float* even = x_split + g * group;
      const float* odd = even + half;
      const float scale = scales[r * groups + g];
      int64_t t = 0;
      for (; t + kLanes <= half; t += kLanes) {
        for (int j = 0; j < kLanes; ++j) {
          acc[j] += scale * (float(bytes[t + j] & 15) * even[t + j] + float(bytes[t + j] >> 4) * odd[t + j]);
        }
      }
      float qx = 0.0f;
      for (; t < half; ++t) qx += float(bytes[t] & 15) * even[t] + float(bytes[t] >> 4) * odd[t];
      rest += scale * qx + biases[r * groups + g] * x_group_sums[g];
    }
    for (int j = 0; j < kLanes; ++j) rest += acc[j];
    y[r] = rest;
  }
}

// 8 bits: byte i of a row is value i. Partial sums as for 4 bits.
void rows_dot_q8(const uint8_t* packed, const float* scales, const float* biases, const float* x,
                           const float* x_group_sums, int64_t rows, int64_t k, int group, float* y) {
  const int64_t groups = k / group;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* row = packed + r * k;
    float acc[kLanes] = {};
    float rest = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      const uint8_t* bytes = row + g * group;
      const float* xg = x + g * group;
      const float scale = scales[r * groups + g];
      int64_t t = 0;
      for (; t + kLanes <= group; t += kLanes) {
        for (int j = 0; j < kLanes; ++j) acc[j] += scale * (float(bytes[t + j]) * xg[t + j]);
      }
      float qx = 0.0f;
      for (; t < group; ++t) qx += float(bytes[t]) * xg[t];
      rest += scale * qx + biases[r * groups + g] * x_group_sums[g];
    }
    for (int j = 0; j < kLanes; ++j) rest += acc[j];
    y[r] = rest;
  }
}
