// One block of queries against one block of keys, flash-attention style, for vectors of
// CONFAB_ATTENTION_WIDTH floats (included by blocks.h only, once per width and instruction set,
// each time inside a namespace of its own and, but for the baseline, an instruction-set region).
// Plain C++ with GCC/Clang vector types (no intrinsics): the compiler picks the instructions.
// No include guard.

constexpr int kWidth = CONFAB_ATTENTION_WIDTH;
typedef float Vec __attribute__((vector_size(kWidth * 4)));
typedef int32_t IVec __attribute__((vector_size(kWidth * 4)));

INLINE Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

INLINE void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

INLINE Vec splat(float x) { return Vec{} + x; }

// Lane-wise `mask ? a : b` for a comparison's mask (all bits set or none), written with bit
// operations: GCC and Clang agree on those for vector types, not on `?:`.
INLINE Vec select(IVec mask, Vec a, Vec b) {
  IVec ia, ib;
  std::memcpy(&ia, &a, sizeof ia);
  std::memcpy(&ib, &b, sizeof ib);
  const IVec bits = (mask & ia) | (~mask & ib);
  Vec out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// e^x for x ≤ 0 (scores minus their running maximum), 0 below -87 (where float32 e^x is a
// denormal or 0; -inf marks a masked key). Cephes' expf: x = n·ln2 + r, |r| ≤ ln2/2, a degree-5
// polynomial for e^r, 2^n from the exponent bits; within 2 ulp of the exact value.
INLINE Vec exp_nonpositive(Vec x) {
  const IVec tiny = x < splat(-87.0f);
  const Vec clamped = select(tiny, splat(-87.0f), x);
  const Vec magic = splat(12582912.0f);  // 1.5·2^23: adding it rounds to an integer
  const Vec n = (clamped * splat(1.44269504088896341f) + magic) - magic;
  Vec r = clamped - n * splat(0.693359375f);
  r = r - n * splat(-2.12194440e-4f);
  Vec p = splat(1.9875691500e-4f);
  p = p * r + splat(1.3981999507e-3f);
  p = p * r + splat(8.3334519073e-3f);
  p = p * r + splat(4.1665795894e-2f);
  p = p * r + splat(1.6666665459e-1f);
  p = p * r + splat(5.0000001201e-1f);
  p = p * r * r + r + splat(1.0f);
  const IVec bits = (__builtin_convertvector(n, IVec) + 127) << 23;
  Vec two_n;
  std::memcpy(&two_n, &bits, sizeof two_n);
  const Vec y = p * two_n;
  return select(tiny, Vec{}, y);
}

#if CONFAB_ATTENTION_WIDTH >= 8
// The wide widths are built by GCC only (blocks.h), so its __builtin_shuffle may serve.
// Lane l of the result: ((0 + v[l][0]) + v[l][1]) + … + v[l][kWidth - 1], each vector's lanes
// summed in lane order, as a scalar loop over its lanes would; for kWidth vectors at once.
// v is transposed in place first: log2(kWidth) rounds, each swapping the off-diagonal blocks
// of size b of each pair of rows b apart.
template <int B, bool Upper, int... L>
constexpr IVec swap_blocks(std::integer_sequence<int, L...>) {
  return IVec{(Upper ? ((L & B) ? kWidth + L : L + B) : ((L & B) ? kWidth + L - B : L))...};
}

template <int B>
INLINE void swap_round(Vec* v) {
  constexpr IVec lower = swap_blocks<B, false>(std::make_integer_sequence<int, kWidth>{});
  constexpr IVec upper = swap_blocks<B, true>(std::make_integer_sequence<int, kWidth>{});
  for (int i = 0; i < kWidth; ++i) {
    if (i & B) continue;
    const Vec x = v[i], y = v[i + B];
    v[i] = __builtin_shuffle(x, y, lower);
    v[i + B] = __builtin_shuffle(x, y, upper);
  }
}

INLINE Vec lane_sums(Vec* v) {
  if constexpr (kWidth >= 16) swap_round<8>(v);
  swap_round<4>(v);
  swap_round<2>(v);
  swap_round<1>(v);
  Vec sum = {};
  for (int i = 0; i < kWidth; ++i) sum += v[i];
  return sum;
}
#endif

// S[rows, kKeyBlock] = Q[rows, d] · Kt[d, kKeyBlock] for R ≤ kTileRows rows.
// Each step of the inner loop: R broadcasts times two vectors, R·2 accumulators in registers.
template <int R>
INLINE void scores_tile(const float* q, int64_t d, const float* kt, float* s) {
  for (int c = 0; c < kKeyBlock; c += 2 * kWidth) {
    Vec acc0[R] = {}, acc1[R] = {};
    for (int64_t i = 0; i < d; ++i) {
      const Vec k0 = load(kt + i * kKeyBlock + c), k1 = load(kt + i * kKeyBlock + c + kWidth);
      for (int r = 0; r < R; ++r) {
        const float x = q[r * d + i];
        acc0[r] += x * k0;
        acc1[r] += x * k1;
      }
    }
    for (int r = 0; r < R; ++r) {
      store(s + r * kKeyBlock + c, acc0[r]);
      store(s + r * kKeyBlock + c + kWidth, acc1[r]);
    }
  }
}

// The same for a few rows (a decode step) straight from the keys in place (rows `k_stride`
// apart): one dot product per row and key, the key loaded once for all rows. Transposing a
// block would cost more than these few products. A dot product's lanes sum in lane order
// (from 0.0f, one lane at a time); where the loops are wide, kWidth keys' sums go at once
// (`lane_sums`), in the same order, so the scores are the same bits either way.
template <int R>
INLINE void scores_direct(const float* q, int64_t d, const float* k, int64_t k_stride, int count, float* s) {
  int j = 0;
#if CONFAB_ATTENTION_WIDTH >= 8
  for (; j + kWidth <= count; j += kWidth) {
    for (int r = 0; r < R; ++r) {
      // kWidth keys' sums side by side: independent chains, each in the one-key loop's order.
      Vec acc[kWidth] = {};
      for (int64_t c = 0; c < d; c += kWidth) {
        const Vec x = load(q + r * d + c);
        for (int t = 0; t < kWidth; ++t) acc[t] += x * load(k + (j + t) * k_stride + c);
      }
      store(s + r * kKeyBlock + j, lane_sums(acc));
    }
  }
#endif
  for (; j < count; ++j) {
    const float* key = k + j * k_stride;
    Vec acc[R] = {};
    for (int64_t c = 0; c < d; c += kWidth) {
      const Vec x = load(key + c);
      for (int r = 0; r < R; ++r) acc[r] += load(q + r * d + c) * x;
    }
    for (int r = 0; r < R; ++r) {
      float sum = 0.0f;
      for (int i = 0; i < kWidth; ++i) sum += acc[r][i];
      s[r * kKeyBlock + j] = sum;
    }
  }
}

// O[rows, d] += P[rows, count] · V[count, d] (V rows `v_stride` apart), R ≤ kTileRows rows,
// N vectors of each row at a time: N · R sums, one per lane, each over the keys in order.
template <int R, int N>
INLINE void values_columns(const float* p, const float* v, int64_t v_stride, int count, int64_t c, int64_t d, float* o) {
  Vec acc[N][R];
  for (int r = 0; r < R; ++r)
    for (int n = 0; n < N; ++n) acc[n][r] = load(o + r * d + c + n * kWidth);
  for (int j = 0; j < count; ++j) {
    Vec x[N];
    for (int n = 0; n < N; ++n) x[n] = load(v + j * v_stride + c + n * kWidth);
    for (int r = 0; r < R; ++r) {
      const float w = p[r * kKeyBlock + j];
      for (int n = 0; n < N; ++n) acc[n][r] += w * x[n];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int n = 0; n < N; ++n) store(o + r * d + c + n * kWidth, acc[n][r]);
}

// Four vectors at a time where the registers hold them (sixteen-float lanes: 32 registers) and
// the head size allows, else two: more sums in flight, the same sums.
template <int R>
INLINE void values_tile(const float* p, const float* v, int64_t v_stride, int count, int64_t d, float* o) {
  int64_t c = 0;
  if constexpr (kWidth == 16) {
    for (; c + 4 * kWidth <= d; c += 4 * kWidth) values_columns<R, 4>(p, v, v_stride, count, c, d, o);
  }
  for (; c < d; c += 2 * kWidth) values_columns<R, 2>(p, v, v_stride, count, c, d, o);
}

// One block of keys (`count` ≤ kKeyBlock of them, from index `key0`) for `rows` query rows:
// - q: the rows, pre-scaled, [rows, d]; kt: the keys transposed, [d, kKeyBlock], zero-padded,
//   or with `direct` (rows ≤ kDirectRows), k: the block's first key, rows `k_stride` apart;
// - v: the block's first value row, rows `v_stride` apart;
// - visible[r]: row r's visible keys (indices into all keys);
// - s: scratch [rows, kKeyBlock]; o [rows, d], row_max and row_sum [rows]: the running
//   (unnormalised) output, maximum score and sum of e^(score - maximum) per row.
// `masked`: some row does not see all of the block (else no row's bounds are checked).
void attend_block(const float* q, int64_t rows, int64_t d, const float* kt, const float* k, int64_t k_stride,
                  const float* v, int64_t v_stride, int64_t key0, int count, const Visible* visible, bool masked,
                  bool direct, float* s, float* o, float* row_max, float* row_sum) {
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  int64_t r = 0;
  if (direct && rows <= kDirectRows) {
    switch (rows) {
      case 1: scores_direct<1>(q, d, k, k_stride, count, s); break;
      case 2: scores_direct<2>(q, d, k, k_stride, count, s); break;
      case 3: scores_direct<3>(q, d, k, k_stride, count, s); break;
      case 4: scores_direct<4>(q, d, k, k_stride, count, s); break;
      default: break;
    }
    r = rows;
  }
  for (; r + kTileRows <= rows; r += kTileRows) scores_tile<kTileRows>(q + r * d, d, kt, s + r * kKeyBlock);
  switch (rows - r) {
    case 1: scores_tile<1>(q + r * d, d, kt, s + r * kKeyBlock); break;
    case 2: scores_tile<2>(q + r * d, d, kt, s + r * kKeyBlock); break;
    case 3: scores_tile<3>(q + r * d, d, kt, s + r * kKeyBlock); break;
    default: break;
  }
  for (r = 0; r < rows; ++r) {
    float* row = s + r * kKeyBlock;
    // Keys past the block's end, and keys this row must not see, score -inf.
    int64_t lo = 0, hi = count;  // visible part of the block: [lo, hi)
    if (masked) {
      lo = std::max<int64_t>(0, visible[r].first - key0);
      hi = std::min<int64_t>(count, visible[r].last - key0 + 1);
    }
    for (int64_t j = 0; j < kKeyBlock; ++j) row[j] = j < lo || j >= hi ? kMasked : row[j];
    if (lo >= hi) {
      // Nothing visible here: contributes e^-inf = 0 to every key's weight.
      for (int j = 0; j < kKeyBlock; ++j) row[j] = 0.0f;
      continue;
    }
    Vec top = load(row);
    for (int c = kWidth; c < kKeyBlock; c += kWidth) {
      const Vec x = load(row + c);
      top = select(x > top, x, top);
    }
    float block_max = top[0];
    for (int i = 1; i < kWidth; ++i) block_max = std::max(block_max, top[i]);
    const float old_max = row_max[r], new_max = std::max(old_max, block_max);
    if (new_max > old_max) {
      // Rescale what was summed so far to the new maximum (e^-inf = 0 on the first block).
      const float shrink = old_max == kMasked ? 0.0f : exp_nonpositive(splat(old_max - new_max))[0];
      row_sum[r] *= shrink;
      float* out = o + r * d;
      for (int64_t c = 0; c < d; c += kWidth) store(out + c, load(out + c) * shrink);
      row_max[r] = new_max;
    }
    Vec sum{};
    for (int c = 0; c < kKeyBlock; c += kWidth) {
      const Vec e = exp_nonpositive(load(row + c) - new_max);
      store(row + c, e);
      sum += e;
    }
    float total = 0.0f;
    for (int i = 0; i < kWidth; ++i) total += sum[i];
    row_sum[r] += total;
  }
  for (r = 0; r + kTileRows <= rows; r += kTileRows) {
    values_tile<kTileRows>(s + r * kKeyBlock, v, v_stride, count, d, o + r * d);
  }
  switch (rows - r) {
    case 1: values_tile<1>(s + r * kKeyBlock, v, v_stride, count, d, o + r * d); break;
    case 2: values_tile<2>(s + r * kKeyBlock, v, v_stride, count, d, o + r * d); break;
    case 3: values_tile<3>(s + r * kKeyBlock, v, v_stride, count, d, o + r * d); break;
    default: break;
  }
}
