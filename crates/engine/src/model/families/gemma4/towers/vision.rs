//! Gemma 4's vision tower: patches (flattened (py, px, c), values in [0, 1]) → a linear patch
//! embedding plus learned x and y position embeddings → bidirectional encoder layers (Gemma's
//! four norms, q/k norms, weightless v norm, attention scale 1, axial RoPE, gated GELU-tanh
//! MLP) → k×k average pooling by patch position, × √hidden → optional standardisation.
//! Padding patches (position (-1, -1)) are ignored: no position embedding, masked as keys,
//! left out of the pools.

use mlx_rs::fast::{self, ScaledDotProductAttentionMask};
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{nn, ops, Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::families::gemma4::towers::config::VisionConfig;
use crate::model::layers::axial_rope::AxialTables;
use crate::model::layers::{AxialRope, ClippedLinear, Linear, RmsNorm};
use crate::model::media::towers::TowerLoader;

struct VisionAttention {
    q: ClippedLinear,
    k: ClippedLinear,
    v: ClippedLinear,
    o: ClippedLinear,
    q_norm: RmsNorm,
    k_norm: RmsNorm,
    eps: f32,
    heads: i32,
    kv_heads: i32,
    head_dim: i32,
}

struct VisionMlp {
    gate: ClippedLinear,
    up: ClippedLinear,
    down: ClippedLinear,
}

struct VisionLayer {
    input_norm: RmsNorm,
    attention: VisionAttention,
    post_attention_norm: RmsNorm,
    pre_feedforward_norm: RmsNorm,
    mlp: VisionMlp,
    post_feedforward_norm: RmsNorm,
}

pub struct VisionTower {
    config: VisionConfig,
    input_proj: Linear,
    /// [2, position_embedding_size, hidden]: x table, y table.
    position_table: Array,
    rope: AxialRope,
    layers: Vec<VisionLayer>,
    /// (bias, scale) when `standardize`.
    standardize: Option<(Array, Array)>,
}

impl VisionTower {
    pub fn load(l: &mut TowerLoader, config: &VisionConfig) -> Result<Self> {
        if config.hidden_activation != "gelu_pytorch_tanh" && config.hidden_activation != "gelu_tanh" {
            return Err(l.corrupt(format!("vision activation `{}` is not supported", config.hidden_activation)));
        }
        let eps = config.rms_norm_eps;
        let clip = config.use_clipped_linears;
        let mut layers = Vec::with_capacity(config.num_hidden_layers);
        for i in 0..config.num_hidden_layers {
            let p = format!("vision_tower.encoder.layers.{i}");
            let a = format!("{p}.self_attn");
            let m = format!("{p}.mlp");
            layers.push(VisionLayer {
                input_norm: l.norm(&format!("{p}.input_layernorm.weight"), eps)?,
                attention: VisionAttention {
                    q: l.clipped(&format!("{a}.q_proj"), clip)?,
                    k: l.clipped(&format!("{a}.k_proj"), clip)?,
                    v: l.clipped(&format!("{a}.v_proj"), clip)?,
                    o: l.clipped(&format!("{a}.o_proj"), clip)?,
                    q_norm: l.norm(&format!("{a}.q_norm.weight"), eps)?,
                    k_norm: l.norm(&format!("{a}.k_norm.weight"), eps)?,
                    eps,
                    heads: config.num_attention_heads as i32,
                    kv_heads: config.num_key_value_heads as i32,
                    head_dim: config.head_dim as i32,
                },
                post_attention_norm: l.norm(&format!("{p}.post_attention_layernorm.weight"), eps)?,
                pre_feedforward_norm: l.norm(&format!("{p}.pre_feedforward_layernorm.weight"), eps)?,
                mlp: VisionMlp {
                    gate: l.clipped(&format!("{m}.gate_proj"), clip)?,
                    up: l.clipped(&format!("{m}.up_proj"), clip)?,
                    down: l.clipped(&format!("{m}.down_proj"), clip)?,
                },
                post_feedforward_norm: l.norm(&format!("{p}.post_feedforward_layernorm.weight"), eps)?,
            });
        }
        let standardize = if config.standardize {
            Some((l.take("vision_tower.std_bias")?.as_dtype(Dtype::Float32)?, l.take("vision_tower.std_scale")?.as_dtype(Dtype::Float32)?))
        } else {
            None
        };
        let position_table = l.take("vision_tower.patch_embedder.position_embedding_table")?;
        let (size, hidden) = (config.position_embedding_size as i32, config.hidden_size as i32);
        if position_table.shape() != [2, size, hidden] {
            return Err(l.corrupt(format!("the position embedding table is {:?}, expected [2, {size}, {hidden}]", position_table.shape())));
        }
        Ok(Self {
            input_proj: l.linear("vision_tower.patch_embedder.input_proj")?,
            position_table,
            rope: AxialRope::new(config.head_dim, config.rope_theta()),
            layers,
            standardize,
            config: config.clone(),
        })
    }

    /// Patch values per patch as (py, px, c).
    pub fn patch_values(&self) -> usize {
        3 * self.config.patch_size * self.config.patch_size
    }

    /// pixels [N, 3·p²] (float, [0, 1]) and each patch's (x, y) ((-1, -1) for padding; N a
    /// multiple of pooling²) → pooled features [n_soft, vision hidden] in float32.
    pub fn forward(&self, pixels: &Array, positions: &[[i32; 2]]) -> Result<Array> {
        let n = positions.len();
        let k = self.config.pooling_kernel_size;
        if pixels.shape() != [n as i32, self.patch_values() as i32] {
            return Err(EngineError::invalid(
                "pixel_values",
                format!("shape {:?}, expected [{n}, {}] for {n} positions", pixels.shape(), self.patch_values()),
            ));
        }
        let pools = pools(positions, k, self.config.position_embedding_size)?;
        let padding: Vec<bool> = positions.iter().map(|p| p[0] == -1 && p[1] == -1).collect();
        let dtype = self.position_table.dtype();

        let x = ops::multiply(&ops::subtract(&pixels.as_dtype(Dtype::Float32)?, Array::from_f32(0.5))?, Array::from_f32(2.0))?;
        let mut h = ops::add(&self.input_proj.forward(&x.as_dtype(dtype)?)?, &self.position_embeddings(positions, &padding)?)?;
        h = h.reshape(&[1, n as i32, -1])?;
        let valid: Vec<bool> = padding.iter().map(|p| !p).collect();
        let mask = if padding.iter().any(|&p| p) { Some(Array::from_slice(&valid, &[1, 1, 1, n as i32])) } else { None };
        let rope = self.rope.tables(positions);
        for layer in &self.layers {
            h = layer.forward(&h, &rope, mask.as_ref())?;
        }

        // Average each k×k pool of real patches (padding rows count as zeros, as in transformers,
        // so they are simply left out), then scale by √hidden.
        let h = h.reshape(&[n as i32, -1])?.as_dtype(Dtype::Float32)?;
        let pooled = ops::matmul(&pools, &h)?;
        let pooled = ops::multiply(&pooled, Array::from_f32((self.config.hidden_size as f32).sqrt()))?;
        Ok(match &self.standardize {
            Some((bias, scale)) => ops::multiply(&ops::subtract(&pooled, bias)?, scale)?,
            None => pooled,
        })
    }

    /// The x and y embeddings of each patch, zero for padding.
    fn position_embeddings(&self, positions: &[[i32; 2]], padding: &[bool]) -> Result<Array> {
        let n = positions.len() as i32;
        let axis = |a: usize| Array::from_iter(positions.iter().map(|p| p[a].max(0)), &[n]);
        let x = self.position_table.index(0).take_axis(axis(0), 0)?;
        let y = self.position_table.index(1).take_axis(axis(1), 0)?;
        let keep = Array::from_slice(&padding.iter().map(|p| !p).collect::<Vec<_>>(), &[n, 1]);
        Ok(ops::select(&keep, &ops::add(&x, &y)?, Array::from_f32(0.0).as_dtype(x.dtype())?)?)
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let mut all = self.input_proj.arrays();
        all.push(&self.position_table);
        for l in &self.layers {
            let a = &l.attention;
            for c in [&a.q, &a.k, &a.v, &a.o, &l.mlp.gate, &l.mlp.up, &l.mlp.down] {
                all.extend(c.arrays());
            }
            let norms = [&l.input_norm, &l.post_attention_norm, &l.pre_feedforward_norm, &l.post_feedforward_norm, &a.q_norm, &a.k_norm];
            all.extend(norms.map(RmsNorm::weight));
        }
        all.extend(self.standardize.iter().flat_map(|(b, s)| [b, s]));
        all
    }
}

/// [n_soft, N] averaging weights: row j holds 1/k² for every real patch of the j-th non-empty
/// pool, pools numbered x/k + (width/k)·(y/k) (width: the largest x + 1) and kept in that order.
fn pools(positions: &[[i32; 2]], k: usize, table_size: usize) -> Result<Array> {
    let n = positions.len();
    let k = k.max(1) as i32;
    let out_len = n as i32 / (k * k);
    if out_len == 0 || out_len * k * k != n as i32 {
        return Err(EngineError::invalid("image_position_ids", format!("{n} patches do not pool {k}×{k} evenly")));
    }
    let real = |p: &&[i32; 2]| !(p[0] == -1 && p[1] == -1);
    if let Some(p) =
        positions.iter().filter(real).find(|p| p[0] < 0 || p[1] < 0 || p[0] as usize >= table_size || p[1] as usize >= table_size)
    {
        return Err(EngineError::invalid("image_position_ids", format!("patch position {p:?} is outside 0..{table_size}")));
    }
    let width = positions.iter().map(|p| p[0].max(0)).max().unwrap_or(0) + 1;
    let pool_of = |p: &[i32; 2]| p[0] / k + (width / k) * (p[1] / k);
    let mut ids: Vec<i32> = positions.iter().filter(real).map(pool_of).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.last().is_some_and(|&last| last >= out_len) {
        return Err(EngineError::invalid("image_position_ids", format!("patches fall in pools past the {out_len} soft tokens")));
    }
    let mut weights = vec![0f32; ids.len() * n];
    for (i, p) in positions.iter().enumerate().filter(|(_, p)| real(p)) {
        let row = ids.binary_search(&pool_of(p)).expect("every real patch's pool is listed");
        weights[row * n + i] = 1.0 / (k * k) as f32;
    }
    Ok(Array::from_slice(&weights, &[ids.len() as i32, n as i32]))
}

impl VisionLayer {
    fn forward(&self, h: &Array, rope: &AxialTables, mask: Option<&Array>) -> Result<Array> {
        let a = self.attention.forward(&self.input_norm.forward(h)?, rope, mask)?;
        let h = ops::add(h, &self.post_attention_norm.forward(&a)?)?;
        let m = self.mlp.forward(&self.pre_feedforward_norm.forward(&h)?)?;
        Ok(ops::add(&h, &self.post_feedforward_norm.forward(&m)?)?)
    }
}

impl VisionMlp {
    fn forward(&self, x: &Array) -> Result<Array> {
        let gate = nn::gelu_approximate(&self.gate.forward(x)?)?;
        self.down.forward(&ops::multiply(&gate, &self.up.forward(x)?)?)
    }
}

impl VisionAttention {
    /// x [1, N, hidden]; `mask` [1, 1, 1, N] (true = a real patch) or none.
    fn forward(&self, x: &Array, rope: &AxialTables, mask: Option<&Array>) -> Result<Array> {
        let (b, n) = (x.dim(0), x.dim(1));
        let heads = |y: Array, count: i32| y.reshape(&[b, n, count, self.head_dim]);
        let q = rope.apply(&self.q_norm.forward(&heads(self.q.forward(x)?, self.heads)?)?)?;
        let k = rope.apply(&self.k_norm.forward(&heads(self.k.forward(x)?, self.kv_heads)?)?)?;
        let v = fast::rms_norm(&heads(self.v.forward(x)?, self.kv_heads)?, None, self.eps)?;
        let [q, k, v] = [q, k, v].map(|t| t.transpose_axes(&[0, 2, 1, 3]));
        let mask = mask.map(ScaledDotProductAttentionMask::Array);
        let out = fast::scaled_dot_product_attention(&q?, &k?, &v?, 1.0, mask, None)?;
        let out = out.transpose_axes(&[0, 2, 1, 3])?.reshape(&[b, n, self.heads * self.head_dim])?;
        self.o.forward(&out)
    }
}
