//! Quantized keys and values: every position a layer has seen, stored as mlx-lm's
//! `QuantizedKVCache` stores them (`mx.quantize` of each position's keys and values along
//! head_dim: packed uint32 data, scales and biases per group), so a quarter or an eighth of
//! full keys' memory in float32 (a half or a quarter in half precision), plus the scales and
//! biases. Trimmable like full keys/values: a position is quantized on its own, so cutting
//! positions off never touches the ones kept. Attention reads them packed
//! (`layers::quantized_attention`).

use mlx_rs::ops::indexing::{IndexOp, TryIndexMutOp};
use mlx_rs::{ops, Array, Dtype};

use std::rc::Rc;

use super::page::{Page, PAGE};
use crate::error::{EngineError, Result};

/// Buffers grow by this many positions at a time (mlx-lm's `step`, and a page), so a decode
/// step writes in place instead of concatenating.
const STEP: usize = PAGE;

/// How keys and values are quantized: `bits` per element, one scale and bias per
/// `group_size` elements along head_dim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KvQuantization {
    pub bits: u8,
    pub group_size: u32,
}

impl KvQuantization {
    /// mlx-lm's default group size.
    pub const DEFAULT_GROUP_SIZE: u32 = 64;

    /// Bits 4 or 8, a group of 32, 64 or 128 (what MLX's affine quantization takes); a clear
    /// error otherwise.
    pub fn new(bits: u8, group_size: u32) -> Result<Self> {
        if bits != 4 && bits != 8 {
            return Err(EngineError::invalid("kv_bits", format!("{bits}: keys and values are quantized to 4 or 8 bits")));
        }
        if ![32, 64, 128].contains(&group_size) {
            return Err(EngineError::invalid("kv_group_size", format!("{group_size}: use 32, 64 or 128")));
        }
        Ok(Self { bits, group_size })
    }

    /// Whether layers of heads of `head_dim` can be quantized in these groups; why not
    /// otherwise.
    pub fn fits_head_dim(self, head_dim: usize) -> std::result::Result<(), String> {
        if head_dim.is_multiple_of(self.group_size as usize) {
            Ok(())
        } else {
            Err(format!("the model's heads have {head_dim} dimensions, not a multiple of the group size {}", self.group_size))
        }
    }

    /// Bytes one position of one head takes: packed data plus a scale and a bias per group,
    /// the scales in `element_bytes`.
    pub fn bytes_per_head(self, head_dim: usize, element_bytes: usize) -> usize {
        // Saturating: discovery's estimates pass a model file's head_dim, unchecked.
        let packed = head_dim.checked_mul(self.bits as usize).map_or(usize::MAX, |bits| bits / 8);
        packed.saturating_add((head_dim / self.group_size as usize).saturating_mul(element_bytes).saturating_mul(2))
    }
}

/// Quantized arrays as `mx.quantize` returns them: [B, kv_heads, positions, ·] each.
#[derive(Clone)]
pub struct Packed {
    pub data: Array,
    pub scales: Array,
    pub biases: Array,
}

impl Packed {
    pub(super) fn arrays(&self) -> [&Array; 3] {
        [&self.data, &self.scales, &self.biases]
    }

    fn map(&self, f: impl Fn(&Array) -> Result<Array>) -> Result<Self> {
        Ok(Self { data: f(&self.data)?, scales: f(&self.scales)?, biases: f(&self.biases)? })
    }

    fn zip(&self, other: &Self, f: impl Fn(&Array, &Array) -> Result<Array>) -> Result<Self> {
        Ok(Self { data: f(&self.data, &other.data)?, scales: f(&self.scales, &other.scales)?, biases: f(&self.biases, &other.biases)? })
    }

    /// The first `end` positions.
    fn head(&self, end: usize) -> Self {
        let end = end as i32;
        let cut = |a: &Array| a.index((.., .., ..end, ..));
        Self { data: cut(&self.data), scales: cut(&self.scales), biases: cut(&self.biases) }
    }

    pub fn positions(&self) -> usize {
        self.data.dim(2) as usize
    }

    /// Widened back to `dtype` ([B, kv_heads, positions, head_dim]), for layers that read
    /// another layer's keys and values. Lazy: nothing is computed unless it is read.
    pub fn dequantize(&self, quantization: KvQuantization, dtype: Dtype) -> Result<Array> {
        let (group, bits) = (quantization.group_size as i32, quantization.bits as i32);
        let dense = ops::dequantize(&self.data, &self.scales, &self.biases, group, bits)?;
        Ok(if dense.dtype() == dtype { dense } else { dense.as_dtype(dtype)? })
    }
}

/// Cloning is cheap and safe, as for `KeysValues`: the arrays are shared and immutable.
#[derive(Clone)]
pub struct QuantizedKeysValues {
    pub(super) quantization: KvQuantization,
    /// Capacity a multiple of `STEP`; the first `len` positions are valid.
    pub(super) keys: Option<Packed>,
    pub(super) values: Option<Packed>,
    pub(super) len: usize,
    /// The prefix cache's pages the first positions were assembled from (`paged`).
    pub(super) pages: Vec<Rc<Page>>,
}

impl QuantizedKeysValues {
    pub fn new(quantization: KvQuantization) -> Self {
        Self { quantization, keys: None, values: None, len: 0, pages: vec![] }
    }

    pub fn quantization(&self) -> KvQuantization {
        self.quantization
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Quantizes and stores new keys/values [B, kv_heads, L, head_dim]; returns everything held
    /// so far, packed.
    pub fn append(&mut self, k: &Array, v: &Array) -> Result<(Packed, Packed)> {
        let q = self.quantization;
        let quantize = |a: &Array| -> Result<Packed> {
            let (data, scales, biases) = ops::quantize(a, q.group_size as i32, q.bits as i32)?;
            Ok(Packed { data, scales, biases })
        };
        let (k, v) = (quantize(k)?, quantize(v)?);
        let (start, end) = (self.len, self.len + k.positions());
        let capacity = self.keys.as_ref().map_or(0, Packed::positions);
        if end > capacity {
            let grow = (k.positions().div_ceil(STEP) * STEP) as i32;
            let extend = |old: Option<&Packed>, fresh: &Packed| -> Result<Packed> {
                let zeros = fresh.map(|a| Ok(ops::zeros_dtype(&[a.dim(0), a.dim(1), grow, a.dim(3)], a.dtype())?))?;
                match old {
                    Some(old) => old.head(start).zip(&zeros, |kept, more| Ok(ops::concatenate(&[kept, more], 2)?)),
                    None => Ok(zeros),
                }
            };
            self.keys = Some(extend(self.keys.as_ref(), &k)?);
            self.values = Some(extend(self.values.as_ref(), &v)?);
        }
        let range = start as i32..end as i32;
        for (buffer, fresh) in [(self.keys.as_mut(), &k), (self.values.as_mut(), &v)] {
            let buffer = buffer.expect("grown buffers");
            buffer.data.try_index_mut((.., .., range.clone(), ..), &fresh.data)?;
            buffer.scales.try_index_mut((.., .., range.clone(), ..), &fresh.scales)?;
            buffer.biases.try_index_mut((.., .., range.clone(), ..), &fresh.biases)?;
        }
        self.len = end;
        let held = |p: &Option<Packed>| p.as_ref().expect("written buffers").head(end);
        Ok((held(&self.keys), held(&self.values)))
    }

    /// Forget everything after the first `len` positions.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
        self.pages.truncate(self.len / PAGE);
    }

    pub fn arrays(&self) -> impl Iterator<Item = &Array> {
        self.keys.iter().chain(self.values.iter()).flat_map(Packed::arrays)
    }

    /// The valid part, packed.
    pub fn valid(&self) -> Option<(Packed, Packed)> {
        Some((self.keys.as_ref()?.head(self.len), self.values.as_ref()?.head(self.len)))
    }

    /// A layer holding exactly these (restored from disk).
    pub fn from_packed(quantization: KvQuantization, keys: Packed, values: Packed) -> Self {
        let len = keys.positions();
        Self { quantization, keys: Some(keys), values: Some(values), len, pages: vec![] }
    }

    /// Bytes held by the buffers (their capacity, not only the valid part).
    pub fn nbytes(&self) -> usize {
        self.arrays().map(Array::nbytes).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random(l: i32) -> Array {
        mlx_rs::random::normal::<f32>(&[1, 2, l, 64], None, None, None).unwrap()
    }

    #[test]
    fn appends_across_a_step_and_trims_like_one_quantize() {
        let q = KvQuantization::new(8, 64).unwrap();
        let mut cache = QuantizedKeysValues::new(q);
        let (a, b) = (random(250), random(10));
        cache.append(&a, &a).unwrap();
        let (keys, _) = cache.append(&b, &b).unwrap();
        assert_eq!(keys.positions(), 260);
        let whole = ops::concatenate(&[&a, &b], 2).unwrap();
        let (data, scales, _) = ops::quantize(&whole, 64, 8).unwrap();
        assert!(ops::array_eq(&keys.data, &data, false).unwrap().item_exact::<bool>());
        assert!(ops::array_eq(&keys.scales, &scales, false).unwrap().item_exact::<bool>());
        // 250 positions kept + a step of 256 (as mlx-lm grows): 2 heads × (64 bytes + a scale
        // and a bias of 4 bytes), keys and values.
        assert_eq!(cache.nbytes(), 2 * 506 * 2 * q.bytes_per_head(64, 4));
        cache.truncate(100);
        let (kept, _) = cache.valid().unwrap();
        assert_eq!(kept.positions(), 100);
    }

    #[test]
    fn refuses_other_widths() {
        assert!(KvQuantization::new(3, 64).is_err());
        assert!(KvQuantization::new(8, 48).is_err());
        assert!(KvQuantization::new(4, 64).unwrap().fits_head_dim(16).is_err());
    }
}
