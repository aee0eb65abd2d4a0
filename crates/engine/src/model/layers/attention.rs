//! Multi-head attention with grouped KV heads, optional per-head q/k/v norms, an optional
//! sliding window (local layers), keys doubling as values, keys/values borrowed from another
//! layer (KV sharing), an explicit mask where the model needs one, per-head attention
//! sinks where the model has them, and queries scaled by their position where the model
//! scales them.

use mlx_rs::fast::{self, ScaledDotProductAttentionMask};
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::config::QueryPositionScale;
use crate::model::layers::cpu_attention::{self, Causal, RopeTable};
use crate::model::layers::mask::AttentionMode;
use crate::model::layers::{mask, quantized_attention, FusedLinear, Linear, RmsNorm, Rope};
use crate::state::{LayerState, StateKind};

pub struct Attention {
    /// Q, K and V projections as one matmul; Q and K only when `values_from_keys`, Q only when
    /// the layer reads another layer's keys and values.
    pub qkv: FusedLinear,
    pub o_proj: Linear,
    pub q_norm: Option<RmsNorm>,
    pub k_norm: Option<RmsNorm>,
    /// Values normalised too (without a weight), where the model does.
    pub v_norm: Option<RmsNorm>,
    /// `attention_k_eq_v`: the key projection (before k_norm and RoPE) is also the values.
    pub values_from_keys: bool,
    pub num_heads: usize,
    pub num_kv_heads: usize,
    pub head_dim: usize,
    pub scale: f32,
    /// None for a layer that does not rotate its queries and keys (SmolLM3's NoPE layers).
    pub rope: Option<Rope>,
    /// Keys further back than this many positions are not attended to.
    pub window: Option<usize>,
    /// Attention sinks [heads], in the compute dtype: a learned logit per head that joins each
    /// query's softmax as one more key with no value, so a head can attend to nothing.
    pub sinks: Option<Array>,
    /// Queries multiplied by a factor of their position after RoPE.
    pub query_scale: Option<QueryPositionScale>,
}

/// Where a layer's keys and values come from.
pub enum KvSource<'a> {
    /// Its own projections, added to its state (full keys/values or a rotating window).
    Own(&'a mut LayerState),
    /// Another layer's keys and values, what it attended to including this step's (KV-shared
    /// layers); `offset` is the position of the first query, `start` the position of
    /// the first key.
    Shared { keys: &'a Array, values: &'a Array, offset: usize, start: usize },
}

/// The keys and values a layer attends to, as `Attention::forward_with` returns them.
pub struct Attended {
    pub keys: Array,
    pub values: Array,
    /// Position of the first key.
    pub start: usize,
}

impl Attention {
    /// x is [B, L, hidden]; the layer's state grows by L.
    pub fn forward(&self, x: &Array, cache: &mut LayerState) -> Result<Array> {
        // A decode step (or a verifying pass of a few positions) takes the CPU kernels' path
        // where it applies, as a batch of rows does (`forward_rows`), so a sequence decodes the
        // same alone or batched.
        let projected = self.qkv.forward(x)?;
        if let Some(out) = self.decode_rows(&projected, std::slice::from_mut(&mut &mut *cache))? {
            return self.o_proj.forward(&out);
        }
        self.o_proj.forward(&self.attend(projected, KvSource::Own(cache), None)?.0)
    }

    /// x [1, L, hidden] read as one whole sequence from position 0, keeping nothing: each position
    /// attends as `mode` says, within the layer's window (`mask::whole_sequence_mask`). What
    /// embedding models run.
    pub fn forward_whole(&self, x: &Array, mode: AttentionMode) -> Result<Array> {
        let mut state = LayerState::new(StateKind::KeysValues);
        let (l, window) = (x.dim(1) as usize, self.window);
        let mask = move |_offset: usize, _start: usize| mask::whole_sequence_mask(l, window, mode);
        Ok(self.forward_with(x, KvSource::Own(&mut state), Some(&mask))?.0)
    }

    /// x [B, L, hidden]: B sequences right-padded to L, sequence b's first `lengths[b]`
    /// positions real, each read whole as `forward_whole` reads it alone; padding is never
    /// attended to (`mask::padded_whole_sequence_mask`). Embedding several texts in one pass.
    pub fn forward_whole_padded(&self, x: &Array, mode: AttentionMode, lengths: &[usize]) -> Result<Array> {
        if x.dim(0) as usize != lengths.len() {
            return Err(EngineError::Internal(format!("{} rows for {} lengths", x.dim(0), lengths.len())));
        }
        let mut state = LayerState::new(StateKind::KeysValues);
        let (l, window) = (x.dim(1) as usize, self.window);
        let mask = move |_offset: usize, _start: usize| mask::padded_whole_sequence_mask(lengths, l, window, mode);
        let projected = self.qkv.forward(x)?;
        let (out, _) = self.attend(projected, KvSource::Own(&mut state), Some(&mask))?;
        self.o_proj.forward(&out)
    }

    /// The general form: keys and values from `kv`; `mask` (a function of the query offset
    /// and the first key's position giving [L, keys] booleans, true = attend) replaces the
    /// causal/sliding mask when given. Returns the output and the keys and values attended to
    /// (for layers that share them).
    pub fn forward_with(&self, x: &Array, kv: KvSource, mask: Option<&dyn Fn(usize, usize) -> Result<Array>>) -> Result<(Array, Attended)> {
        let (out, mut attended) = self.forward_rows_with(x, vec![kv], mask)?;
        Ok((out, attended.pop().expect("one row attended")))
    }

    /// `forward_with` for several sequences at once: x [B, L, hidden], row i attending to
    /// `kvs[i]` (its own state, or the keys and values another layer attended to for that
    /// row), each at its own position. The projections run once for the batch, attention per
    /// row, exactly as `forward_with` runs it for that row alone. Returns the output and each
    /// row's keys and values attended to.
    pub fn forward_rows_with(
        &self,
        x: &Array,
        kvs: Vec<KvSource>,
        mask: Option<&dyn Fn(usize, usize) -> Result<Array>>,
    ) -> Result<(Array, Vec<Attended>)> {
        let projected = self.qkv.forward(x)?;
        let (out, attended) = self.attend_rows(projected, kvs, mask)?;
        Ok((self.o_proj.forward(&out)?, attended))
    }

    /// Several sequences at once, each with its own state (and so its own position): x is
    /// [B, L, hidden], row i's state grows by L. The projections run once for the whole batch
    /// (the weights are read once, which is what batching buys). A decode step's attention is
    /// one kernel call for every row where the CPU kernels apply (`decode_rows`); otherwise it
    /// runs per row, against that row's keys and values, exactly as `forward` would.
    pub fn forward_rows(&self, x: &Array, states: &mut [&mut LayerState]) -> Result<Array> {
        let projected = self.qkv.forward(x)?;
        if let Some(out) = self.decode_rows(&projected, states)? {
            return self.o_proj.forward(&out);
        }
        let kvs = states.iter_mut().map(|s| KvSource::Own(s)).collect();
        self.o_proj.forward(&self.attend_rows(projected, kvs, None)?.0)
    }

    /// `attend` for each row of the projections [B, L, ·] against `kvs[row]`: the heads'
    /// output [B, L, heads × head_dim] and what each row attended to.
    fn attend_rows(
        &self,
        projected: Vec<Array>,
        mut kvs: Vec<KvSource>,
        mask: Option<&dyn Fn(usize, usize) -> Result<Array>>,
    ) -> Result<(Array, Vec<Attended>)> {
        let rows = projected[0].dim(0);
        if rows as usize != kvs.len() {
            return Err(EngineError::Internal(format!("{rows} rows of projections for {} keys and values", kvs.len())));
        }
        if rows == 1 {
            let (out, attended) = self.attend(projected, kvs.pop().expect("one row"), mask)?;
            return Ok((out, vec![attended]));
        }
        let mut outs = Vec::with_capacity(kvs.len());
        let mut attended = Vec::with_capacity(kvs.len());
        for (i, kv) in kvs.into_iter().enumerate() {
            let row = i as i32..i as i32 + 1;
            let mine = projected.iter().map(|p| p.index((row.clone(), .., ..))).collect();
            let (out, a) = self.attend(mine, kv, mask)?;
            outs.push(out);
            attended.push(a);
        }
        Ok((ops::concatenate(&outs, 0)?, attended))
    }

    /// One decode step (x was [B, 1, hidden]), or a few positions per row (`decode_positions`),
    /// for B sequences, each with its own full keys/values state, through the CPU kernels
    /// (`DecodeKernels`). None where they do not apply: another device or dtype, a sliding
    /// window, another kind of state, a prompt chunk; the caller then attends per row.
    fn decode_rows(&self, projected: &[Array], states: &mut [&mut LayerState]) -> Result<Option<Array>> {
        let q = &projected[0];
        let (rows, positions, d) = (q.dim(0), q.dim(1), self.head_dim as i32);
        let kernels = DecodeKernels { heads: self.num_heads, kv_heads: self.num_kv_heads, head_dim: self.head_dim, scale: self.scale };
        let applies = self.window.is_none()
            && self.sinks.is_none()
            && q.ndim() == 3
            && decode_positions(positions as usize, states)
            && rows as usize == states.len()
            && projected.len() == if self.values_from_keys { 2 } else { 3 }
            && kernels.apply(q.dtype(), states);
        if !applies {
            return Ok(None);
        }
        // A rotation whose table could not be made takes the general path.
        let rope = match self.rope.as_ref().map(Rope::table) {
            Some(None) => return Ok(None),
            table => table.flatten(),
        };
        let heads = |y: &Array, n: usize, norm: &Option<RmsNorm>| -> Result<Array> {
            match norm {
                Some(norm) => norm.forward(&y.reshape(&[rows, positions, n as i32, d])?),
                None => Ok(y.clone()),
            }
        };
        let k = &projected[1];
        let v = if self.values_from_keys { k } else { &projected[2] };
        let (q, k, v) = (
            heads(q, self.num_heads, &self.q_norm)?,
            heads(k, self.num_kv_heads, &self.k_norm)?,
            heads(v, self.num_kv_heads, &self.v_norm)?,
        );
        // Row b's queries sit from its state's length on. The kernels rotate the (normed) queries
        // inside; a rotation is linear, so scaling before it equals transformers' scaling after.
        let q = match self.query_scale {
            Some(scale) => {
                let factors: Vec<f32> = states.iter().flat_map(|s| (0..positions as usize).map(|j| scale.at(s.len() + j))).collect();
                if factors.iter().all(|&f| f == 1.0) {
                    q
                } else {
                    let shape: Vec<i32> = [rows, positions].into_iter().chain(std::iter::repeat_n(1, q.ndim() - 2)).collect();
                    ops::multiply(&q, Array::from_slice(&factors, &shape).as_dtype(q.dtype())?)?
                }
            }
            None => q,
        };
        Ok(Some(kernels.step(&q, &k, &v, states, rope)?))
    }

    /// Attention from the projections (q, then k and v where the layer has its own): the
    /// heads' output [B, L, heads × head_dim] before the output projection, and the keys and
    /// values attended to.
    fn attend(
        &self,
        projected: Vec<Array>,
        kv: KvSource,
        mask: Option<&dyn Fn(usize, usize) -> Result<Array>>,
    ) -> Result<(Array, Attended)> {
        let mut qkv = projected.into_iter();
        let q = qkv.next().expect("a query projection");
        let (b, l) = (q.dim(0), q.dim(1));
        let heads = |y: Array, n: usize, norm: &Option<RmsNorm>| -> Result<Array> {
            let y = y.reshape(&[b, l, n as i32, self.head_dim as i32])?;
            let y = match norm {
                Some(norm) => norm.forward(&y)?,
                None => y,
            };
            Ok(y.transpose_axes(&[0, 2, 1, 3])?)
        };
        // `packed`: the quantized keys and values attention reads, where the state is quantized
        // (`keys` and `values` are then their lazy dequantization, for layers sharing them).
        let (offset, keys, values, start, packed) = match kv {
            KvSource::Own(state) => {
                let offset = state.len();
                let k = qkv.next().expect("a key projection");
                let v = if self.values_from_keys { k.clone() } else { qkv.next().expect("a value projection") };
                let k = self.rotate(heads(k, self.num_kv_heads, &self.k_norm)?, offset)?;
                let v = heads(v, self.num_kv_heads, &self.v_norm)?;
                match state {
                    LayerState::Window(window) => {
                        let w = window.append(k, v)?;
                        (offset, w.keys, w.values, w.start, None)
                    }
                    LayerState::QuantizedKeysValues(cache) => {
                        let (quantization, dtype) = (cache.quantization(), k.dtype());
                        let (pk, pv) = cache.append(&k, &v)?;
                        let (keys, values) = (pk.dequantize(quantization, dtype)?, pv.dequantize(quantization, dtype)?);
                        (offset, keys, values, 0, Some((pk, pv, quantization)))
                    }
                    other => {
                        let (keys, values) = other.keys_values_mut()?.append(k, v)?;
                        (offset, keys, values, 0, None)
                    }
                }
            }
            KvSource::Shared { keys, values, offset, start } => (offset, keys.clone(), values.clone(), start, None),
        };
        let q = self.scale_queries(self.rotate(heads(q, self.num_heads, &self.q_norm)?, offset)?, offset)?;
        let out = match (mask, &self.sinks) {
            (None, None) if packed.is_some() && quantized_attention::reads_dequantized(q.dim(2) as usize) => {
                cpu_attention::attend(&q, &keys, &values, self.scale, Causal { first_query: offset - start, window: self.window })?
            }
            _ if packed.is_some() => {
                let (pk, pv, quantization) = packed.expect("packed keys and values");
                let l = q.dim(2) as usize;
                let visible = match (mask, self.window) {
                    (Some(mask), _) => Some(mask(offset, start)?),
                    (None, None) if l == 1 => None,
                    (None, window) => Some(mask::sliding_causal_mask(offset, l, window.unwrap_or(offset + l + 1), start)?),
                };
                quantized_attention::attend(&q, &pk, &pv, self.scale, visible.as_ref(), self.sinks.as_ref(), quantization)?
            }
            (Some(mask), sinks) => {
                let mask = mask(offset, start)?;
                fast::scaled_dot_product_attention(&q, &keys, &values, self.scale, ScaledDotProductAttentionMask::Array(&mask), sinks)?
            }
            // The CPU kernel has no sinks: MLX's attention takes them, with the mask as an array
            // where a window applies.
            (None, Some(sinks)) => {
                let l = q.dim(2) as usize;
                match self.window {
                    Some(window) => {
                        let visible = mask::sliding_causal_mask(offset, l, window, start)?;
                        fast::scaled_dot_product_attention(
                            &q,
                            &keys,
                            &values,
                            self.scale,
                            ScaledDotProductAttentionMask::Array(&visible),
                            sinks,
                        )?
                    }
                    None if l > 1 => {
                        fast::scaled_dot_product_attention(&q, &keys, &values, self.scale, ScaledDotProductAttentionMask::Causal, sinks)?
                    }
                    None => fast::scaled_dot_product_attention(&q, &keys, &values, self.scale, None, sinks)?,
                }
            }
            (None, None) => {
                cpu_attention::attend(&q, &keys, &values, self.scale, Causal { first_query: offset - start, window: self.window })?
            }
        };
        let out = out.transpose_axes(&[0, 2, 1, 3])?.reshape(&[b, l, (self.num_heads * self.head_dim) as i32])?;
        Ok((out, Attended { keys, values, start }))
    }
}

impl Attention {
    /// Heads [B, heads, L, d] rotated to their positions from `offset`, where the layer rotates.
    fn rotate(&self, x: Array, offset: usize) -> Result<Array> {
        match &self.rope {
            Some(rope) => rope.forward(&x, offset),
            None => Ok(x),
        }
    }

    /// Rotated queries [B, heads, L, d] from position `offset` times their position's factor,
    /// where the layer scales them.
    fn scale_queries(&self, q: Array, offset: usize) -> Result<Array> {
        let Some(scale) = self.query_scale else { return Ok(q) };
        let factors: Vec<f32> = (offset..offset + q.dim(2) as usize).map(|p| scale.at(p)).collect();
        if factors.iter().all(|&f| f == 1.0) {
            return Ok(q);
        }
        let factors = Array::from_slice(&factors, &[1, 1, factors.len() as i32, 1]).as_dtype(q.dtype())?;
        Ok(ops::multiply(&q, &factors)?)
    }

    /// The state this layer keeps between calls: a rotating window when it slides, else every
    /// position's keys and values.
    pub fn state_kind(&self) -> StateKind {
        self.window.map_or(StateKind::KeysValues, |size| StateKind::Window { size })
    }

    /// Every weight, for evaluating once at load.
    pub fn arrays(&self) -> Vec<&mlx_rs::Array> {
        let norms = self.q_norm.iter().chain(&self.k_norm).chain(&self.v_norm).map(RmsNorm::weight);
        self.qkv.arrays().into_iter().chain(self.o_proj.arrays()).chain(norms).chain(&self.sinks).collect()
    }
}

/// Causal attention for layers with their own attention code (no window, sinks or mask): q [B,
/// heads, L, d] against the layer's full keys/values state grown by k and v [B, kv_heads, L, d]
/// (all rotated; the first query sits at the state's length before). Full-precision state
/// through `cpu_attention::attend`, quantized state read packed (`quantized_attention`).
pub fn attend_causal(state: &mut LayerState, q: &Array, k: Array, v: Array, scale: f32) -> Result<Array> {
    let offset = state.len();
    match state {
        LayerState::QuantizedKeysValues(cache) => {
            let (keys, values) = cache.append(&k, &v)?;
            let l = q.dim(2) as usize;
            if quantized_attention::reads_dequantized(l) {
                let (quantization, dtype) = (cache.quantization(), k.dtype());
                let (keys, values) = (keys.dequantize(quantization, dtype)?, values.dequantize(quantization, dtype)?);
                return cpu_attention::attend(q, &keys, &values, scale, Causal { first_query: offset, window: None });
            }
            let visible = (l > 1).then(|| mask::sliding_causal_mask(offset, l, offset + l + 1, 0)).transpose()?;
            quantized_attention::attend(q, &keys, &values, scale, visible.as_ref(), None, cache.quantization())
        }
        other => {
            let (keys, values) = other.keys_values_mut()?.append(k, v)?;
            cpu_attention::attend(q, &keys, &values, scale, Causal { first_query: offset, window: None })
        }
    }
}

/// The most positions per row a pass takes through the decode kernels: a speculative verifying
/// pass (up to 16 positions). Each position attends as a decode step of its own (bit for bit
/// the step plain decoding takes there), re-reading its row's keys and values; the general
/// path instead runs some twenty small MLX ops per layer (RoPE, slicing, cache updates), which
/// on a CPU cost a decode step's worth of time on a small model.
const DECODE_POSITIONS: usize = 16;

/// Keys a pass of several positions per row may read again through the decode kernels
/// ((positions − 1) × cache length, per row): past it (a long context), reading the keys once
/// for all positions (the general path) costs less.
const REREAD_KEYS: usize = 16_384;

/// Whether a pass of `positions` per row attends through the decode kernels (see
/// `DECODE_POSITIONS`).
fn decode_positions(positions: usize, states: &[&mut LayerState]) -> bool {
    positions == 1 || (positions <= DECODE_POSITIONS && states.iter().all(|s| (positions - 1) * (s.len() + positions) <= REREAD_KEYS))
}

/// A decode step of full-attention layers through the CPU kernels, for B sequences each with
/// its own full keys/values state: per row, its new key (rotated) and value written into its
/// own cache buffer at its position, then one attention node for all rows, reading every
/// row's keys and values in place up to its own length, with the queries' RoPE applied inside.
/// A few nodes per row instead of the twenty-odd of RoPE, slicing, cache updates and attention
/// each row would take (MLX's RoPE alone is a graph of small ops on a CPU). A token's position
/// is its index in the cache.
pub struct DecodeKernels {
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub scale: f32,
}

impl DecodeKernels {
    /// Whether the kernels take a step computed in `dtype` for these states: they are on,
    /// float32, whole groups of query heads per KV head, a head size that is a multiple of 16,
    /// and each state full keys/values of one sequence in float32 buffers (or none yet).
    pub fn apply(&self, dtype: Dtype, states: &[&mut LayerState]) -> bool {
        cpu_attention::decode_enabled()
            && dtype == Dtype::Float32
            && self.head_dim.is_multiple_of(16)
            && self.kv_heads > 0
            && self.heads.is_multiple_of(self.kv_heads)
            && states.iter().all(|s| matches!(s, LayerState::KeysValues(kv) if kv.layout().is_none_or(|l| l == (Dtype::Float32, 1))))
    }

    /// The step (where `apply` said so): q [B, L, heads, d] and k, v [B, L, kv_heads, d] (or
    /// with the heads flattened), normed where the layer norms them, not yet rotated; row b
    /// continues `states[b]` by L positions (one for a decode step); `rope` is None where the
    /// layer does not rotate. Returns the heads' output [B, L, heads × d]. Position j of row b
    /// attends as a decode step at that position would (a row of the kernel of its own, over
    /// its row's cache up to itself).
    pub fn step(&self, q: &Array, k: &Array, v: &Array, states: &mut [&mut LayerState], rope: Option<&RopeTable>) -> Result<Array> {
        let (rows, positions) = (states.len(), q.dim(1) as usize);
        let one_each = |t: &Array| -> Result<Array> {
            match positions {
                1 => Ok(t.clone()),
                _ => {
                    let shape: Vec<i32> = [(rows * positions) as i32, 1].into_iter().chain(t.shape()[2..].iter().copied()).collect();
                    Ok(t.reshape(&shape)?)
                }
            }
        };
        let (q, k, v) = (one_each(q)?, one_each(k)?, one_each(v)?);
        let count = rows * positions;
        let (mut keys, mut values, mut lens) = (Vec::with_capacity(count), Vec::with_capacity(count), Vec::with_capacity(count));
        for (row, state) in states.iter_mut().enumerate() {
            let cache = state.keys_values_mut()?;
            let mut written = None;
            for j in 0..positions {
                let fresh = row * positions + j;
                written =
                    Some(cache.push_with(self.kv_heads as i32, self.head_dim as i32, Dtype::Float32, |buffer, position, is_keys| {
                        if is_keys {
                            cpu_attention::cache_write(buffer, &k, fresh, position, rope)
                        } else {
                            cpu_attention::cache_write(buffer, &v, fresh, position, None)
                        }
                    })?);
            }
            let (kb, vb) = written.ok_or_else(|| EngineError::Internal("a decode pass of no positions".into()))?;
            let len = cache.len();
            for j in 0..positions {
                keys.push(kb.clone());
                values.push(vb.clone());
                lens.push(len - positions + 1 + j);
            }
        }
        let out = cpu_attention::decode_attention(&q, &keys, &values, &lens, self.heads, self.scale, rope)?;
        match positions {
            1 => Ok(out),
            _ => Ok(out.reshape(&[rows as i32, positions as i32, -1])?),
        }
    }
}
