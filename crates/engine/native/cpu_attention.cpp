// Confab's attention for MLX's CPU device: softmax(q·kᵀ·scale + mask)·v, float32.
//
// Why it exists: on a CPU, MLX's scaled_dot_product_attention falls back to plain ops: it
// repeats the keys and values of grouped-query heads, materialises the [L, T] scores (and a
// mask array for sliding windows), and runs three passes over them. Here the keys and values
// are read in place from the cache (any strides, the heads of a group sharing one read), the
// causal and sliding-window masks are bounds computed per row, and the work goes a block at a
// time, flash-attention style: for a block of query rows (all heads of a group at once) and a
// block of 64 keys, scores by a register-tiled product, an online softmax (running maximum and
// sum), then the weighted values added into the running output. A prefill chunk and a 30-token
// turn over a long cache run as matmul-like tiles; a decode step over a long cache splits its keys in two.
//
// The math is MLX's (q scaled first, float32 throughout, softmax with the maximum subtracted);
// the sums run in another order, so results agree to float32 rounding (tests/cpu_attention.rs).
//
// The C entry point builds a graph node (a Primitive) on the CPU stream, like cpu_linear.cpp.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "mlx/allocator.h"
#include "mlx/array.h"
#include "mlx/backend/cpu/encoder.h"
#include "mlx/ops.h"
#include "mlx/primitives.h"

#include "cpu_attention/blocks.h"
#include "cpu_attention/rope.h"
#include "thread_pool.h"

namespace mx = mlx::core;

namespace {

using confab_cpu::over_pieces;

// Query rows per block (the heads of a group times consecutive queries), so a block's scores
// and output stay in L2 and each key block is transposed once for many rows.
constexpr int64_t kQueryRows = 64;

// A decode step (one query block per group) over at least this many keys splits them in two,
// so two threads work when there are fewer groups than that. (Always two, whatever the pool's
// size: a result does not depend on the machine.)
constexpr int64_t kSplitKeys = 512;

// An array's data and element strides, as [batch, heads, positions, dim].
struct View {
  const float* data;
  int64_t batch, head, pos, dim;
  const float* at(int64_t b, int64_t h, int64_t p) const { return data + b * batch + h * head + p * pos; }
};

View view(const mx::array& a) { return {a.data<float>(), a.strides(0), a.strides(1), a.strides(2), a.strides(3)}; }

struct Shape {
  int64_t batch, heads, kv_heads, queries, keys, d;
  float scale;
  bool causal;
  int64_t first_query;  // position of query 0 among the keys (key i is at position i)
  int64_t window;       // 0: none; else a query at p sees keys p - window + 1 ..= p
  int64_t group() const { return heads / kv_heads; }
  int64_t block_queries() const { return std::max<int64_t>(1, kQueryRows / group()); }
  Visible visible(int64_t query) const {
    const int64_t p = first_query + query;
    return {window > 0 ? std::max<int64_t>(0, p - window + 1) : 0, causal ? std::min(keys - 1, p) : keys - 1};
  }
};

// One unit of work: a group's block of queries, against the keys it sees or a part of them.
struct Job {
  int64_t b, kv_head, query0, queries, key_first, key_last;  // keys [key_first, key_last]
  int partial = -1;  // where a part's results go to be merged; -1: the whole block, written out
};

// What one part of the keys gave each row: unnormalised output, maximum, sum.
struct Partial {
  std::vector<float> out, max, sum;
};

struct Scratch {
  std::vector<float> q, kt, s, o, max, sum;
  std::vector<Visible> visible;
  Scratch(int64_t rows, int64_t d)
      : q(rows * d), kt(d * kKeyBlock), s(rows * kKeyBlock), o(rows * d), max(rows), sum(rows), visible(rows) {}
};

// Where row (g, i) of a job goes in the output [B, L, heads, d].
float* out_row(const Shape& sh, const Job& job, int64_t g, int64_t i, float* out) {
  return out + ((job.b * sh.queries + job.query0 + i) * sh.heads + job.kv_head * sh.group() + g) * sh.d;
}

// Runs one job; rows are ordered head-major (row = g · queries + i). A whole block's rows are
// normalised into `out`; a part's go to `partials[job.partial]`.
void run_job(const Shape& sh, const View& q, const View& k, const View& v, const Job& job, Scratch& sc,
             std::vector<Partial>& partials, float* out) {
  const int64_t group = sh.group(), d = sh.d, rows = group * job.queries;
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t i = 0; i < job.queries; ++i) {
      const int64_t row = g * job.queries + i;
      const float* src = q.at(job.b, job.kv_head * group + g, job.query0 + i);
      float* dst = sc.q.data() + row * d;
      for (int64_t c = 0; c < d; ++c) dst[c] = src[c * q.dim] * sh.scale;
      sc.visible[row] = sh.visible(job.query0 + i);
    }
  }
  std::fill(sc.o.begin(), sc.o.begin() + rows * d, 0.0f);
  std::fill(sc.max.begin(), sc.max.begin() + rows, -std::numeric_limits<float>::infinity());
  std::fill(sc.sum.begin(), sc.sum.begin() + rows, 0.0f);
  // Rows' bounds grow with the query: the first row sees the fewest recent keys, the last the
  // fewest old ones.
  const Visible first = sc.visible[0], last = sc.visible[job.queries - 1];
  const bool direct = rows <= kDirectRows && k.dim == 1;
  for (int64_t key0 = job.key_first; key0 <= job.key_last; key0 += kKeyBlock) {
    const int count = static_cast<int>(std::min<int64_t>(kKeyBlock, job.key_last + 1 - key0));
    // Keys transposed into [d, kKeyBlock]: the score tile's loads are then contiguous. A few
    // rows with contiguous keys read them in place instead.
    if (!direct) {
      for (int j = 0; j < count; ++j) {
        const float* key = k.at(job.b, job.kv_head, key0 + j);
        for (int64_t c = 0; c < d; ++c) sc.kt[c * kKeyBlock + j] = key[c * k.dim];
      }
      for (int64_t c = 0; c < d && count < kKeyBlock; ++c) {
        std::fill(sc.kt.begin() + c * kKeyBlock + count, sc.kt.begin() + (c + 1) * kKeyBlock, 0.0f);
      }
    }
    const bool masked = first.last < key0 + count - 1 || last.first > key0;
    attend_block(sc.q.data(), rows, d, sc.kt.data(), k.at(job.b, job.kv_head, key0), k.pos,
                 v.at(job.b, job.kv_head, key0), v.pos, key0, count, sc.visible.data(), masked, direct, sc.s.data(),
                 sc.o.data(), sc.max.data(), sc.sum.data());
  }
  if (job.partial >= 0) {
    Partial& p = partials[job.partial];
    p.out.assign(sc.o.begin(), sc.o.begin() + rows * d);
    p.max.assign(sc.max.begin(), sc.max.begin() + rows);
    p.sum.assign(sc.sum.begin(), sc.sum.begin() + rows);
    return;
  }
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t i = 0; i < job.queries; ++i) {
      const int64_t row = g * job.queries + i;
      const float inv = sc.sum[row] > 0.0f ? 1.0f / sc.sum[row] : 0.0f;
      const float* src = sc.o.data() + row * d;
      float* dst = out_row(sh, job, g, i, out);
      for (int64_t c = 0; c < d; ++c) dst[c] = src[c] * inv;
    }
  }
}

// The jobs for the whole call: per batch row, group and block of queries, the keys the block
// sees; a decode step over a long cache with fewer than four groups splits them in two
// (partials 2n and 2n + 1 of the n-th split block). Dearest first: the threads take the next job
// as they come free, so the cheap ones at the end even out their finishing times.
std::vector<Job> plan(const Shape& sh) {
  std::vector<Job> jobs;
  const int64_t block = sh.block_queries();
  const int64_t blocks = (sh.queries + block - 1) / block;
  int partials = 0;
  for (int64_t qb = 0; qb < blocks; ++qb) {
    for (int64_t b = 0; b < sh.batch; ++b) {
      for (int64_t h = 0; h < sh.kv_heads; ++h) {
        const int64_t query0 = qb * block, n = std::min(block, sh.queries - query0);
        const int64_t key_first = sh.visible(query0).first, key_last = sh.visible(query0 + n - 1).last;
        const int64_t keys = key_last - key_first + 1;
        const bool split = blocks == 1 && keys >= kSplitKeys && sh.batch * sh.kv_heads < 4;
        if (!split) {
          jobs.push_back({b, h, query0, n, key_first, key_last});
          continue;
        }
        const int64_t half = (keys / 2 + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
        jobs.push_back({b, h, query0, n, key_first, key_first + half - 1, partials++});
        jobs.push_back({b, h, query0, n, key_first + half, key_last, partials++});
      }
    }
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) {
    return a.queries * (a.key_last - a.key_first + 1) > b.queries * (b.key_last - b.key_first + 1);
  });
  return jobs;
}

// A split block's two parts (partials a and b) merged by their maxima, normalised into `out`.
void merge_pair(const Shape& sh, const Job& job, const Partial& a, const Partial& b, float* out) {
  const int64_t group = sh.group(), d = sh.d;
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t i = 0; i < job.queries; ++i) {
      const int64_t row = g * job.queries + i;
      const float m = std::max(a.max[row], b.max[row]);
      const float wa = a.sum[row] > 0.0f ? std::exp(a.max[row] - m) : 0.0f;
      const float wb = b.sum[row] > 0.0f ? std::exp(b.max[row] - m) : 0.0f;
      const float sum = a.sum[row] * wa + b.sum[row] * wb;
      const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
      const float *x = a.out.data() + row * d, *y = b.out.data() + row * d;
      float* dst = out_row(sh, job, g, i, out);
      for (int64_t c = 0; c < d; ++c) dst[c] = (x[c] * wa + y[c] * wb) * inv;
    }
  }
}

// The split blocks' two parts merged, normalised into `out`.
void merge(const Shape& sh, const std::vector<Job>& jobs, const std::vector<Partial>& partials, float* out) {
  for (const Job& job : jobs) {
    if (job.partial < 0 || job.partial % 2 != 0) continue;
    merge_pair(sh, job, partials[job.partial], partials[job.partial + 1], out);
  }
}

// Values are read a row at a time: a value array whose last axis is not contiguous is copied
// first (the engine's caches never are: this is for other callers).
View contiguous_values(const mx::array& v, std::vector<float>& copy) {
  View from = view(v);
  if (from.dim == 1) return from;
  const int64_t b = v.shape(0), h = v.shape(1), t = v.shape(2), d = v.shape(3);
  copy.resize(b * h * t * d);
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < h; ++j)
      for (int64_t p = 0; p < t; ++p)
        for (int64_t c = 0; c < d; ++c) copy[((i * h + j) * t + p) * d + c] = from.at(i, j, p)[c * from.dim];
  return {copy.data(), h * t * d, t * d, d, 1};
}

void attention(const Shape& sh, const mx::array& q, const mx::array& k, const mx::array& v, float* out) {
  std::vector<float> v_copy;
  const View qv = view(q), kv = view(k), vv = contiguous_values(v, v_copy);
  const std::vector<Job> jobs = plan(sh);
  const int64_t max_rows = sh.group() * std::min(sh.block_queries(), sh.queries);
  std::vector<Partial> partials(jobs.size());
  const int64_t work = max_rows * sh.d * std::max<int64_t>(1, sh.keys / static_cast<int64_t>(jobs.size()));
  over_pieces(static_cast<int64_t>(jobs.size()), work, [&](auto next) {
    Scratch scratch(max_rows, sh.d);
    for (int64_t i; next(i);) run_job(sh, qv, kv, vv, jobs[i], scratch, partials, out);
  });
  merge(sh, jobs, partials, out);
}

class CpuAttention : public mx::Primitive {
 public:
  CpuAttention(mx::Stream stream, float scale, bool causal, int64_t first_query, int64_t window)
      : mx::Primitive(stream), scale_(scale), causal_(causal), first_query_(first_query), window_(window) {}

  void eval_gpu(const std::vector<mx::array>&, std::vector<mx::array>&) override {
    throw std::runtime_error("confab cpu_attention runs on the CPU device only");
  }

  const char* name() const override { return "ConfabCpuAttention"; }

  bool is_equivalent(const mx::Primitive& other) const override {
    auto o = dynamic_cast<const CpuAttention*>(&other);
    return o && o->scale_ == scale_ && o->causal_ == causal_ && o->first_query_ == first_query_ && o->window_ == window_;
  }

  void eval_cpu(const std::vector<mx::array>& inputs, std::vector<mx::array>& outputs) override {
    mx::array& y = outputs[0];
    y.set_data(mx::allocator::malloc(y.nbytes()));
    const mx::array &q = inputs[0], &k = inputs[1], &v = inputs[2];
    Shape sh{q.shape(0), q.shape(1), k.shape(1), q.shape(2), k.shape(2), q.shape(3),
             scale_,     causal_,    first_query_, window_};
    auto& encoder = mx::cpu::get_command_encoder(stream());
    for (auto& in : inputs) encoder.set_input_array(in);
    encoder.set_output_array(y);
    encoder.dispatch([q = mx::array::unsafe_weak_copy(q), k = mx::array::unsafe_weak_copy(k), v = mx::array::unsafe_weak_copy(v),
                      y = mx::array::unsafe_weak_copy(y), sh]() mutable { attention(sh, q, k, v, y.data<float>()); });
  }

 private:
  float scale_;
  bool causal_;
  int64_t first_query_, window_;
};

// ---- Decode steps: one new token for each of several sequences, each with its own cache ----
//
// A batched decode step would otherwise run, per row and layer, its own slices of the batch,
// MLX's RoPE (about twenty small ops on a CPU), cache updates and attention call: most of a
// step's time at 8 rows. Here a layer's step is one cache write per row and buffer
// (`CacheWrite`, in place like MLX's slice update) and one attention node for all rows
// (`DecodeAttention`), RoPE applied inside both.

// One token's projection per batch row, head-major: row b's head h, feature c at
// data[b·row + h·head + c·dim]. From [B, 1, n·d] or [B, 1, n, d], any strides.
struct Heads {
  const float* data;
  int64_t row, head, dim;
  const float* at(int64_t b, int64_t h) const { return data + b * row + h * head; }
};

Heads heads_view(const mx::array& a, int64_t d) {
  if (a.ndim() == 3) return {a.data<float>(), a.strides(0), d * a.strides(2), a.strides(2)};
  return {a.data<float>(), a.strides(0), a.strides(2), a.strides(3)};
}

// RoPE's parameters, owned (dims 0: no rotation).
struct Rope {
  int64_t dims = 0;
  bool traditional = false;
  float scale = 1.0f;
  std::vector<float> inv_freq;
  confab_cpu::RopeSpec spec() const { return {dims, traditional, scale, inv_freq.data()}; }
  bool operator==(const Rope& o) const {
    return dims == o.dims && traditional == o.traditional && scale == o.scale && inv_freq == o.inv_freq;
  }
};

// `heads` heads of row `row` of `src`, rotated as at `position` where `rope` says so, into
// dst (head h at dst + h·dst_head).
void place_heads(const Rope& rope, const Heads& src, int64_t row, int64_t position, int64_t heads, int64_t d,
                 float* dst, int64_t dst_head) {
  if (rope.dims > 0) {
    confab_cpu::rope_heads(rope.spec(), position, src.at(row, 0), src.head, src.dim, heads, d, dst, dst_head);
  } else {
    confab_cpu::copy_heads(src.at(row, 0), src.head, src.dim, heads, d, dst, dst_head);
  }
}

// Writes row `row` of a token's keys (rotated) or values, [B, 1, kv_heads·d], into one
// sequence's cache buffer [1, kv_heads, capacity, d] at `position`. Like MLX's slice update:
// into the buffer itself when nothing else holds it, else into a new buffer holding a copy of
// the first `position` positions (the rest is never read before it is written).
class CacheWrite : public mx::Primitive {
 public:
  CacheWrite(mx::Stream stream, int64_t row, int64_t position, Rope rope)
      : mx::Primitive(stream), row_(row), position_(position), rope_(std::move(rope)) {}

  void eval_gpu(const std::vector<mx::array>&, std::vector<mx::array>&) override {
    throw std::runtime_error("confab cache write runs on the CPU device only");
  }

  const char* name() const override { return "ConfabCacheWrite"; }

  bool is_equivalent(const mx::Primitive& other) const override {
    auto o = dynamic_cast<const CacheWrite*>(&other);
    return o && o->row_ == row_ && o->position_ == position_ && o->rope_ == rope_;
  }

  void eval_cpu(const std::vector<mx::array>& inputs, std::vector<mx::array>& outputs) override {
    const mx::array &buffer = inputs[0], &fresh = inputs[1];
    mx::array& out = outputs[0];
    const bool in_place = buffer.is_donatable() && buffer.flags().row_contiguous && buffer.data_size() == buffer.size();
    if (in_place) {
      out.copy_shared_buffer(buffer);
    } else {
      out.set_data(mx::allocator::malloc(out.nbytes()));
    }
    auto& encoder = mx::cpu::get_command_encoder(stream());
    for (auto& in : inputs) encoder.set_input_array(in);
    encoder.set_output_array(out);
    encoder.dispatch([buffer = mx::array::unsafe_weak_copy(buffer), fresh = mx::array::unsafe_weak_copy(fresh),
                      out = mx::array::unsafe_weak_copy(out), in_place, row = row_, position = position_,
                      rope = rope_]() mutable {
      const int64_t heads = out.shape(1), capacity = out.shape(2), d = out.shape(3);
      float* dst = out.data<float>();
      if (!in_place) {
        const View from = view(buffer);
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t p = 0; p < position; ++p) {
            const float* x = from.at(0, h, p);
            float* y = dst + (h * capacity + p) * d;
            for (int64_t c = 0; c < d; ++c) y[c] = x[c * from.dim];
          }
      }
      place_heads(rope, heads_view(fresh, d), row, position, heads, d, dst + position * d, capacity * d);
    });
  }

 private:
  int64_t row_, position_;
  Rope rope_;
};

// One query per row, each row over its own cache: row b's query (rotated to position
// lens[b] - 1) against the first lens[b] positions of keys[b] and values[b]
// ([1, kv_heads, capacity_b, d], read in place). Each row's work is exactly what a one-row
// call of `attention` does (the same jobs, key splits and order of sums), so a row's result
// does not depend on the rows it is batched with. out is [B, heads·d].
void decode(const std::vector<int64_t>& lens, int64_t heads, float scale, const Rope& rope, const mx::array& q,
            const std::vector<mx::array>& keys, const std::vector<mx::array>& values, float* out) {
  const int64_t rows = static_cast<int64_t>(lens.size()), d = keys[0].shape(3), kv_heads = keys[0].shape(1);
  std::vector<float> rotated(rows * heads * d);
  const Heads qv = heads_view(q, d);
  for (int64_t b = 0; b < rows; ++b) place_heads(rope, qv, b, lens[b] - 1, heads, d, rotated.data() + b * heads * d, d);

  struct RowJob {
    int64_t row;
    Job job;
  };
  std::vector<Shape> shapes;
  std::vector<View> qs, ks, vs;
  std::vector<std::vector<float>> v_copies(rows);
  std::vector<RowJob> jobs;
  int partials = 0;
  int64_t work = 0;
  for (int64_t b = 0; b < rows; ++b) {
    const Shape sh{1, heads, kv_heads, 1, lens[b], d, scale, true, lens[b] - 1, 0};
    shapes.push_back(sh);
    qs.push_back({rotated.data() + b * heads * d, heads * d, d, 0, 1});
    ks.push_back(view(keys[b]));
    vs.push_back(contiguous_values(values[b], v_copies[b]));
    int split = 0;
    for (Job job : plan(sh)) {
      if (job.partial >= 0) {
        job.partial += partials;
        ++split;
      }
      work += sh.group() * d * (job.key_last - job.key_first + 1);
      jobs.push_back({b, job});
    }
    partials += split;
  }
  // Dearest first: the pool's threads take the next job as they come free, so the cheap ones
  // at the end even out their finishing times.
  std::stable_sort(jobs.begin(), jobs.end(), [](const RowJob& a, const RowJob& b) {
    return a.job.key_last - a.job.key_first > b.job.key_last - b.job.key_first;
  });

  std::vector<Partial> parts(partials);
  const int64_t count = static_cast<int64_t>(jobs.size());
  // (`work` counted per key/value head: a one-row step splits over the threads where the
  // one-row `attention` would.)
  over_pieces(count, work / kv_heads / std::max<int64_t>(1, count), [&](auto next) {
    Scratch scratch(shapes[0].group(), d);
    for (int64_t i; next(i);) {
      const RowJob& rj = jobs[i];
      run_job(shapes[rj.row], qs[rj.row], ks[rj.row], vs[rj.row], rj.job, scratch, parts, out + rj.row * heads * d);
    }
  });
  for (const RowJob& rj : jobs) {
    if (rj.job.partial < 0 || rj.job.partial % 2 != 0) continue;
    merge_pair(shapes[rj.row], rj.job, parts[rj.job.partial], parts[rj.job.partial + 1], out + rj.row * heads * d);
  }
}

class DecodeAttention : public mx::Primitive {
 public:
  DecodeAttention(mx::Stream stream, std::vector<int64_t> lens, int64_t heads, float scale, Rope rope)
      : mx::Primitive(stream), lens_(std::move(lens)), heads_(heads), scale_(scale), rope_(std::move(rope)) {}

  void eval_gpu(const std::vector<mx::array>&, std::vector<mx::array>&) override {
    throw std::runtime_error("confab decode attention runs on the CPU device only");
  }

  const char* name() const override { return "ConfabDecodeAttention"; }

  bool is_equivalent(const mx::Primitive& other) const override {
    auto o = dynamic_cast<const DecodeAttention*>(&other);
    return o && o->lens_ == lens_ && o->heads_ == heads_ && o->scale_ == scale_ && o->rope_ == rope_;
  }

  void eval_cpu(const std::vector<mx::array>& inputs, std::vector<mx::array>& outputs) override {
    mx::array& y = outputs[0];
    y.set_data(mx::allocator::malloc(y.nbytes()));
    auto& encoder = mx::cpu::get_command_encoder(stream());
    for (auto& in : inputs) encoder.set_input_array(in);
    encoder.set_output_array(y);
    const size_t rows = lens_.size();
    std::vector<mx::array> keys, values;
    for (size_t b = 0; b < rows; ++b) {
      keys.push_back(mx::array::unsafe_weak_copy(inputs[1 + b]));
      values.push_back(mx::array::unsafe_weak_copy(inputs[1 + rows + b]));
    }
    encoder.dispatch([q = mx::array::unsafe_weak_copy(inputs[0]), keys = std::move(keys), values = std::move(values),
                      y = mx::array::unsafe_weak_copy(y), lens = lens_, heads = heads_, scale = scale_,
                      rope = rope_]() mutable { decode(lens, heads, scale, rope, q, keys, values, y.data<float>()); });
  }

 private:
  std::vector<int64_t> lens_;
  int64_t heads_;
  float scale_;
  Rope rope_;
};

Rope make_rope(int64_t dims, int traditional, float scale, const float* inv_freq) {
  Rope rope;
  rope.dims = dims;
  rope.traditional = traditional != 0;
  rope.scale = scale;
  if (dims > 0) rope.inv_freq.assign(inv_freq, inv_freq + dims / 2);
  return rope;
}

// A [B, 1, n·d] or [B, 1, n, d] float32 projection of B rows with n heads of d.
void check_heads(const mx::array& a, int64_t rows, int64_t n, int64_t d, const char* what) {
  const bool shaped = (a.ndim() == 3 && a.shape(2) == n * d) || (a.ndim() == 4 && a.shape(2) == n && a.shape(3) == d);
  if (a.dtype() != mx::float32 || a.shape(0) != rows || a.shape(1) != 1 || !shaped) {
    throw std::invalid_argument(std::string(what) + " must be float32 [B, 1, heads × d] or [B, 1, heads, d]");
  }
}

void check_rope(int64_t dims, const float* inv_freq, int64_t d) {
  if (dims < 0 || dims % 2 != 0 || dims > d || (dims > 0 && inv_freq == nullptr)) throw std::invalid_argument("bad rope");
}

void write_error(char* err, size_t len, const std::string& message) {
  if (!err || len == 0) return;
  std::snprintf(err, len, "%s", message.c_str());
}

}  // namespace

extern "C" {

// *out = softmax(q · kᵀ · scale + mask) · v on the CPU stream, as a new heap-allocated
// mlx::core::array (what mlx-c's `mlx_array.ctx` holds); arrays come in as such `ctx` pointers.
// q [B, heads, L, d], k and v [B, kv_heads, T, d], float32, heads a multiple of kv_heads, d a
// multiple of 16. Query i is at position first_query + i among the keys: with `causal` it sees
// keys up to there, and with window > 0 only the last `window` of those. The result is
// [B, heads, L, d] (a transposed view of a [B, L, heads, d] buffer: the layout the output
// projection reads). Returns 0, or 1 with a message in `err`.
int confab_cpu_attention(void** out, void* q_ctx, void* k_ctx, void* v_ctx, float scale, int causal,
                         int64_t first_query, int64_t window, char* err, size_t err_len) {
  try {
    const auto& q = *static_cast<mx::array*>(q_ctx);
    const auto& k = *static_cast<mx::array*>(k_ctx);
    const auto& v = *static_cast<mx::array*>(v_ctx);
    if (q.ndim() != 4 || k.ndim() != 4 || v.shape() != k.shape()) throw std::invalid_argument("q must be [B, heads, L, d], k and v [B, kv_heads, T, d]");
    if (q.dtype() != mx::float32 || k.dtype() != mx::float32 || v.dtype() != mx::float32) throw std::invalid_argument("float32 only");
    const int b = q.shape(0), heads = q.shape(1), l = q.shape(2), d = q.shape(3);
    if (k.shape(0) != b || k.shape(3) != d || heads % k.shape(1) != 0) throw std::invalid_argument("q, k and v do not agree");
    if (d % kHeadStep != 0) throw std::invalid_argument("head dim must be a multiple of 16");
    if (first_query < 0 || window < 0 || (window > 0 && !causal)) throw std::invalid_argument("bad mask");
    auto s = mx::default_stream(mx::Device::cpu);
    auto y = mx::array({b, l, heads, d}, mx::float32, std::make_shared<CpuAttention>(s, scale, causal != 0, first_query, window),
                       {q, k, v});
    *out = new mx::array(mx::transpose(y, {0, 2, 1, 3}, s));
    return 0;
  } catch (const std::exception& e) {
    write_error(err, err_len, e.what());
    return 1;
  }
}


// *out = the buffer [1, kv_heads, capacity, d] with row `row` of `fresh` ([B, 1, kv_heads·d]
// or [B, 1, kv_heads, d]) at `position`, rotated there by RoPE when rope_dims > 0 (inv_freq:
// rope_dims / 2 inverse frequencies). In place when nothing else holds the buffer. Returns 0,
// or 1 with a message in `err`.
int confab_cpu_cache_write(void** out, void* buffer_ctx, void* fresh_ctx, int64_t row, int64_t position,
                           int64_t rope_dims, int traditional, float rope_scale, const float* inv_freq, char* err,
                           size_t err_len) {
  try {
    const auto& buffer = *static_cast<mx::array*>(buffer_ctx);
    const auto& fresh = *static_cast<mx::array*>(fresh_ctx);
    if (buffer.ndim() != 4 || buffer.shape(0) != 1 || buffer.dtype() != mx::float32) {
      throw std::invalid_argument("the cache buffer must be float32 [1, kv_heads, capacity, d]");
    }
    const int64_t heads = buffer.shape(1), d = buffer.shape(3);
    if (fresh.ndim() < 3 || row < 0 || row >= fresh.shape(0)) throw std::invalid_argument("no such row");
    check_heads(fresh, fresh.shape(0), heads, d, "the new keys or values");
    if (position < 0 || position >= buffer.shape(2)) throw std::invalid_argument("position past the buffer's capacity");
    check_rope(rope_dims, inv_freq, d);
    auto s = mx::default_stream(mx::Device::cpu);
    auto prim = std::make_shared<CacheWrite>(s, row, position, make_rope(rope_dims, traditional, rope_scale, inv_freq));
    *out = new mx::array(buffer.shape(), mx::float32, prim, {buffer, fresh});
    return 0;
  } catch (const std::exception& e) {
    write_error(err, err_len, e.what());
    return 1;
  }
}

// *out = attention for one new query per row, [B, 1, heads·d]: q ([B, 1, heads·d] or
// [B, 1, heads, d]) row b, rotated to position lens[b] - 1, over the first lens[b] positions
// of keys[b] and values[b] ([1, kv_heads, capacity_b, d] each, float32, d a multiple of 16),
// causal by construction. Returns 0, or 1 with a message in `err`.
int confab_cpu_decode_attention(void** out, void* q_ctx, void* const* k_ctxs, void* const* v_ctxs, int64_t rows,
                                const int64_t* lens, int64_t heads, float scale, int64_t rope_dims, int traditional,
                                float rope_scale, const float* inv_freq, char* err, size_t err_len) {
  try {
    if (rows < 1) throw std::invalid_argument("no rows");
    const auto& q = *static_cast<mx::array*>(q_ctx);
    std::vector<mx::array> inputs{q};
    std::vector<mx::array> values;
    const auto& first = *static_cast<mx::array*>(k_ctxs[0]);
    if (first.ndim() != 4) throw std::invalid_argument("keys must be [1, kv_heads, capacity, d]");
    const int64_t kv_heads = first.shape(1), d = first.shape(3);
    for (int64_t b = 0; b < rows; ++b) {
      const auto& k = *static_cast<mx::array*>(k_ctxs[b]);
      const auto& v = *static_cast<mx::array*>(v_ctxs[b]);
      if (k.ndim() != 4 || k.shape(0) != 1 || k.shape(1) != kv_heads || k.shape(3) != d || v.shape() != k.shape()) {
        throw std::invalid_argument("every row's keys and values must be [1, kv_heads, capacity, d] alike");
      }
      if (k.dtype() != mx::float32 || v.dtype() != mx::float32) throw std::invalid_argument("float32 only");
      if (lens[b] < 1 || lens[b] > k.shape(2)) throw std::invalid_argument("a row's length is past its buffer");
      inputs.push_back(k);
      values.push_back(v);
    }
    inputs.insert(inputs.end(), values.begin(), values.end());
    if (kv_heads < 1 || heads % kv_heads != 0) throw std::invalid_argument("heads must be a multiple of kv_heads");
    if (d % kHeadStep != 0) throw std::invalid_argument("head dim must be a multiple of 16");
    check_heads(q, rows, heads, d, "q");
    check_rope(rope_dims, inv_freq, d);
    auto s = mx::default_stream(mx::Device::cpu);
    auto prim = std::make_shared<DecodeAttention>(s, std::vector<int64_t>(lens, lens + rows), heads, scale,
                                                  make_rope(rope_dims, traditional, rope_scale, inv_freq));
    *out = new mx::array({static_cast<int>(rows), 1, static_cast<int>(heads * d)}, mx::float32, prim, std::move(inputs));
    return 0;
  } catch (const std::exception& e) {
    write_error(err, err_len, e.what());
    return 1;
  }
}

}  // extern "C"
