//! Per-sequence state, one entry per layer, by kind:
//!
//! | kind | holds | trim to a shorter prefix | checkpoint |
//! |---|---|---|---|
//! | [`KeysValues`] | every position's keys and values | yes | not needed |
//! | [`QuantizedKeysValues`] | the same, quantized to 4 or 8 bits (mlx-lm's layout) | yes | not needed |
//! | [`RotatingWindow`] | the last `window - 1` positions | no | a copy of the window |
//! | [`Recurrent`] | convolution inputs + recurrent matrix | no | a copy of both |
//! | [`ConvolutionWindow`] | a short convolution's last `kernel - 1` inputs | no | a copy of the window |
//!
//! A model says which kind each of its layers needs ([`StateKind`]); the runtime and the
//! caches only ask a state what it can do. Layers that cannot be trimmed are snapshotted at
//! boundaries during prefill ([`Checkpoint`]), and a sequence resumes from the latest
//! checkpoint at or before the prefix it shares with a cached one.
//!
//! Quantized keys/values are a precision chosen at load ([`KvQuantization`]): the full
//! keys/values layers of a model loaded with it hold [`QuantizedKeysValues`] instead
//! ([`quantized_kinds`]); rotating windows and recurrent layers keep their own precision.

mod convolution;
mod keys_values;
mod page;
mod paged;
mod quantized;
mod recurrent;
mod window;

use std::collections::HashMap;

use mlx_rs::Array;

use crate::error::{EngineError, Result};
pub use convolution::ConvolutionWindow;
pub use keys_values::KeysValues;
pub use page::{Backing, Page, PAGE};
pub use paged::{CachedLayer, CachedState, PageCount, PagedKeysValues};
pub use quantized::{KvQuantization, Packed, QuantizedKeysValues};
pub use recurrent::Recurrent;
pub use window::{RotatingWindow, WindowKeys};

/// A copy of `a` in a buffer of its own. What a layer keeps between calls is often a small
/// slice of a chunk-sized buffer (the last positions of a long prefill chunk); keeping the
/// slice would keep the whole buffer alive. (`contiguous` is not enough: a slice along an
/// outer axis can already be contiguous and is then returned as the same view.)
pub fn own_copy(a: &Array) -> Result<Array> {
    Ok(mlx_rs::ops::multiply(a, Array::from_f32(1.0).as_dtype(a.dtype())?)?)
}

/// What a layer keeps between forward calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StateKind {
    KeysValues,
    /// Full keys/values stored quantized.
    QuantizedKeysValues(KvQuantization),
    Window {
        size: usize,
    },
    Recurrent,
    /// A short convolution's input window (gated-convolution layers).
    Convolution,
}

impl StateKind {
    /// Whether the state can be cut back to any shorter prefix.
    pub fn trimmable(self) -> bool {
        matches!(self, StateKind::KeysValues | StateKind::QuantizedKeysValues(_))
    }
}

/// A model's layer kinds with its full keys/values layers quantized by `quantization`
/// (where given); every other kind unchanged. The one place a precision turns into state.
pub fn quantized_kinds(kinds: Vec<StateKind>, quantization: Option<KvQuantization>) -> Vec<StateKind> {
    let Some(q) = quantization else { return kinds };
    kinds.into_iter().map(|k| if k == StateKind::KeysValues { StateKind::QuantizedKeysValues(q) } else { k }).collect()
}

/// What a quantization asked for at load does to a model's layers: the quantization its full
/// keys/values layers use (`None` when none was asked for or it cannot apply), how many
/// layers that is, and why layers keep full precision where any do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KvPlan {
    pub quantization: Option<KvQuantization>,
    pub quantized_layers: usize,
    pub declined: Option<String>,
}

impl KvPlan {
    /// Only full keys/values layers are quantized (as in mlx-lm, whose rotating and
    /// recurrent caches have no quantized form): a rotating window is small already and its
    /// positions are overwritten in place, recurrent state is a fixed matrix, not keys.
    pub fn new(kinds: &[StateKind], head_dim: usize, asked: Option<KvQuantization>) -> Self {
        let Some(q) = asked else { return Self::default() };
        let full = kinds.iter().filter(|&&k| k == StateKind::KeysValues).count();
        let count = |f: fn(&StateKind) -> bool| kinds.iter().filter(|k| f(k)).count();
        let windows = count(|k| matches!(k, StateKind::Window { .. }));
        let recurrent = count(|k| matches!(k, StateKind::Recurrent | StateKind::Convolution));
        if let Err(why) = q.fits_head_dim(head_dim) {
            return Self { quantization: None, quantized_layers: 0, declined: Some(why) };
        }
        if full == 0 {
            let why = if recurrent > 0 { "the model's state is recurrent" } else { "every attention layer is a rotating window" };
            return Self { quantization: None, quantized_layers: 0, declined: Some(format!("{why}: no layer keeps full keys and values")) };
        }
        let kept = [(windows, "rotating windows"), (recurrent, "recurrent or convolution state")]
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} of {} layers are {what} and keep full precision", kinds.len()))
            .collect::<Vec<_>>();
        Self { quantization: Some(q), quantized_layers: full, declined: (!kept.is_empty()).then(|| kept.join("; ")) }
    }
}

#[derive(Clone)]
pub enum LayerState {
    KeysValues(KeysValues),
    QuantizedKeysValues(QuantizedKeysValues),
    Window(RotatingWindow),
    Recurrent(Recurrent),
    Convolution(ConvolutionWindow),
}

impl LayerState {
    pub fn new(kind: StateKind) -> Self {
        match kind {
            StateKind::KeysValues => Self::KeysValues(KeysValues::default()),
            StateKind::QuantizedKeysValues(q) => Self::QuantizedKeysValues(QuantizedKeysValues::new(q)),
            StateKind::Window { size } => Self::Window(RotatingWindow::new(size)),
            StateKind::Recurrent => Self::Recurrent(Recurrent::default()),
            StateKind::Convolution => Self::Convolution(ConvolutionWindow::default()),
        }
    }

    pub fn kind(&self) -> StateKind {
        match self {
            Self::KeysValues(_) => StateKind::KeysValues,
            Self::QuantizedKeysValues(s) => StateKind::QuantizedKeysValues(s.quantization()),
            Self::Window(w) => StateKind::Window { size: w.size() },
            Self::Recurrent(_) => StateKind::Recurrent,
            Self::Convolution(_) => StateKind::Convolution,
        }
    }

    /// Positions the layer has seen.
    pub fn len(&self) -> usize {
        match self {
            Self::KeysValues(s) => s.len(),
            Self::QuantizedKeysValues(s) => s.len(),
            Self::Window(s) => s.len(),
            Self::Recurrent(s) => s.len(),
            Self::Convolution(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `trim(len)` would succeed.
    pub fn can_trim_to(&self, len: usize) -> bool {
        len == self.len() || (self.kind().trimmable() && len <= self.len())
    }

    /// Cuts the state back to its first `len` positions, where its kind allows.
    pub fn trim(&mut self, len: usize) -> Result<()> {
        match self {
            Self::KeysValues(s) if len <= s.len() => {
                s.truncate(len);
                Ok(())
            }
            Self::QuantizedKeysValues(s) if len <= s.len() => {
                s.truncate(len);
                Ok(())
            }
            _ if len == self.len() => Ok(()),
            _ => Err(EngineError::Internal(format!(
                "a {:?} layer state at {} positions cannot be cut back to {len}; resume from a checkpoint",
                self.kind(),
                self.len()
            ))),
        }
    }

    pub fn arrays(&self) -> Vec<&Array> {
        match self {
            Self::KeysValues(s) => s.arrays().collect(),
            Self::QuantizedKeysValues(s) => s.arrays().collect(),
            Self::Window(s) => s.arrays().collect(),
            Self::Recurrent(s) => s.arrays().collect(),
            Self::Convolution(s) => s.arrays().collect(),
        }
    }

    pub fn nbytes(&self) -> usize {
        match self {
            Self::KeysValues(s) => s.nbytes(),
            Self::QuantizedKeysValues(s) => s.nbytes(),
            Self::Window(s) => s.nbytes(),
            Self::Recurrent(s) => s.nbytes(),
            Self::Convolution(s) => s.nbytes(),
        }
    }

    /// The arrays that make up the state on disk, named under `prefix`.
    pub fn to_disk(&self, prefix: &str) -> Vec<(String, Array)> {
        let named = |a: Option<(Array, Array)>, x: &str, y: &str| -> Vec<(String, Array)> {
            a.map(|(a, b)| vec![(format!("{prefix}.{x}"), a), (format!("{prefix}.{y}"), b)]).unwrap_or_default()
        };
        match self {
            Self::KeysValues(s) => named(s.valid(), "keys", "values"),
            Self::QuantizedKeysValues(s) => s
                .valid()
                .map(|(k, v)| {
                    let part = |name: &str, p: Packed| {
                        [("data", p.data), ("scales", p.scales), ("biases", p.biases)].map(|(x, a)| (format!("{prefix}.{name}.{x}"), a))
                    };
                    part("keys", k).into_iter().chain(part("values", v)).collect()
                })
                .unwrap_or_default(),
            Self::Window(s) => named(s.held().map(|(k, v)| (k.clone(), v.clone())), "keys", "values"),
            Self::Recurrent(s) => named(s.conv.clone().zip(s.state.clone()), "conv", "state"),
            Self::Convolution(s) => s.inputs.iter().map(|a| (format!("{prefix}.inputs"), a.clone())).collect(),
        }
    }

    /// The state `to_disk` wrote under `prefix`, for a layer of `kind` that had seen `len`
    /// positions; a message saying what is wrong otherwise.
    pub fn from_disk(kind: StateKind, prefix: &str, arrays: &mut HashMap<String, Array>, len: usize) -> std::result::Result<Self, String> {
        let mut take = |name: &str| arrays.remove(&format!("{prefix}.{name}"));
        let state = match kind {
            StateKind::KeysValues => {
                let (Some(k), Some(v)) = (take("keys"), take("values")) else { return Err(format!("{prefix} is missing")) };
                if k.dim(2) as usize != len || v.dim(2) as usize != len {
                    return Err(format!("{prefix} holds {} positions, not {len}", k.dim(2)));
                }
                Self::KeysValues(KeysValues::from_arrays(k, v))
            }
            StateKind::QuantizedKeysValues(q) => {
                let mut packed = |name: &str| -> Option<Packed> {
                    Some(Packed {
                        data: take(&format!("{name}.data"))?,
                        scales: take(&format!("{name}.scales"))?,
                        biases: take(&format!("{name}.biases"))?,
                    })
                };
                let (Some(k), Some(v)) = (packed("keys"), packed("values")) else { return Err(format!("{prefix} is missing")) };
                if k.positions() != len || v.positions() != len {
                    return Err(format!("{prefix} holds {} positions, not {len}", k.positions()));
                }
                Self::QuantizedKeysValues(QuantizedKeysValues::from_packed(q, k, v))
            }
            StateKind::Window { size } => match (take("keys"), take("values")) {
                (Some(k), Some(v)) if k.dim(2) as usize == len.min(size - 1) && v.dim(2) == k.dim(2) => {
                    Self::Window(RotatingWindow::from_arrays(size, k, v, len))
                }
                (None, None) if len.min(size - 1) == 0 => Self::Window(RotatingWindow::new(size)),
                _ => return Err(format!("{prefix} does not hold a {size}-position window at {len}")),
            },
            StateKind::Recurrent => {
                let (Some(conv), Some(state)) = (take("conv"), take("state")) else { return Err(format!("{prefix} is missing")) };
                Self::Recurrent(Recurrent::from_arrays(conv, state, len))
            }
            StateKind::Convolution => match take("inputs") {
                Some(inputs) => Self::Convolution(ConvolutionWindow::from_array(inputs, len)),
                None if len == 0 => Self::Convolution(ConvolutionWindow::default()),
                None => return Err(format!("{prefix} is missing")),
            },
        };
        Ok(state)
    }

    pub fn keys_values_mut(&mut self) -> Result<&mut KeysValues> {
        match self {
            Self::KeysValues(s) => Ok(s),
            other => Err(mismatch(other.kind(), "keys and values")),
        }
    }

    pub fn recurrent_mut(&mut self) -> Result<&mut Recurrent> {
        match self {
            Self::Recurrent(s) => Ok(s),
            other => Err(mismatch(other.kind(), "recurrent")),
        }
    }

    pub fn convolution_mut(&mut self) -> Result<&mut ConvolutionWindow> {
        match self {
            Self::Convolution(s) => Ok(s),
            other => Err(mismatch(other.kind(), "convolution window")),
        }
    }
}

fn mismatch(kind: StateKind, wanted: &str) -> EngineError {
    EngineError::Internal(format!("a layer expected {wanted} state but holds {kind:?}; the model and its state disagree"))
}

/// Non-trimmable layers' state at a position, to resume from.
#[derive(Clone)]
pub struct Checkpoint {
    /// Positions covered.
    pub len: usize,
    /// (layer index, its state at `len`), for every layer that cannot be trimmed.
    pub layers: Vec<(usize, LayerState)>,
}

impl Checkpoint {
    pub fn nbytes(&self) -> usize {
        self.layers.iter().map(|(_, s)| s.nbytes()).sum()
    }

    pub fn arrays(&self) -> Vec<&Array> {
        self.layers.iter().flat_map(|(_, s)| s.arrays()).collect()
    }
}

/// Bytes a sequence holds, by kind of state.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct StateBytes {
    pub keys_values: usize,
    pub window: usize,
    pub recurrent: usize,
    pub convolution: usize,
}

impl StateBytes {
    pub fn total(&self) -> usize {
        self.keys_values + self.window + self.recurrent + self.convolution
    }
}

/// From token `from` on, the model places tokens `shift` positions further than their index
/// (multimodal RoPE packs an image's tokens into fewer positions than it has tokens, so the text
/// after it continues from a shifted position, through decode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PositionShift {
    pub from: usize,
    pub shift: i64,
}

/// One sequence's state across all layers that keep any.
#[derive(Clone)]
pub struct SequenceState {
    pub layers: Vec<LayerState>,
    /// In order of `from`; empty for models that place token i at position i.
    pub position_shifts: Vec<PositionShift>,
}

impl SequenceState {
    pub fn new(kinds: &[StateKind]) -> Self {
        Self { layers: kinds.iter().map(|&k| LayerState::new(k)).collect(), position_shifts: Vec::new() }
    }

    /// A state read back from its layers and the shifts it had.
    pub fn from_parts(layers: Vec<LayerState>, position_shifts: Vec<PositionShift>) -> Self {
        Self { layers, position_shifts }
    }

    /// How far past its index the next token's position is.
    pub fn position_shift(&self) -> i64 {
        self.position_shifts.last().map_or(0, |s| s.shift)
    }

    /// Tokens from the current length on are placed `shift` past their index.
    pub fn set_position_shift(&mut self, shift: i64) {
        let from = self.len();
        self.position_shifts.retain(|s| s.from < from);
        if self.position_shift() != shift {
            self.position_shifts.push(PositionShift { from, shift });
        }
    }

    /// Shifts that start past `len` belong to positions no longer held.
    fn forget_shifts_past(&mut self, len: usize) {
        self.position_shifts.retain(|s| s.from <= len);
    }

    pub fn kinds(&self) -> Vec<StateKind> {
        self.layers.iter().map(LayerState::kind).collect()
    }

    /// Layer `i`'s state, or an error when the state was made for another model.
    pub fn layer_mut(&mut self, i: usize) -> Result<&mut LayerState> {
        let layers = self.layers.len();
        self.layers.get_mut(i).ok_or_else(|| {
            EngineError::Internal(format!("the sequence's state has {layers} layers, not {}; it belongs to another model", i + 1))
        })
    }

    /// Positions seen (the same in every layer).
    pub fn len(&self) -> usize {
        self.layers.first().map_or(0, LayerState::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every layer can be trimmed, so any shorter prefix is reusable without checkpoints.
    pub fn trimmable(&self) -> bool {
        self.layers.iter().all(|l| l.kind().trimmable())
    }

    pub fn can_trim_to(&self, len: usize) -> bool {
        self.layers.iter().all(|l| l.can_trim_to(len))
    }

    pub fn trim(&mut self, len: usize) -> Result<()> {
        self.layers.iter_mut().try_for_each(|l| l.trim(len))?;
        self.forget_shifts_past(len);
        Ok(())
    }

    /// The non-trimmable layers' state now; `None` when every layer is trimmable (no
    /// checkpoint needed).
    pub fn checkpoint(&self) -> Option<Checkpoint> {
        let layers: Vec<(usize, LayerState)> =
            self.layers.iter().enumerate().filter(|(_, l)| !l.kind().trimmable()).map(|(i, l)| (i, l.clone())).collect();
        (!layers.is_empty()).then(|| Checkpoint { len: self.len(), layers })
    }

    /// This state (which must extend `checkpoint`'s prefix) taken back to the checkpoint:
    /// trimmable layers are trimmed, the others replaced by the checkpoint's copies.
    pub fn restore(&mut self, checkpoint: &Checkpoint) -> Result<()> {
        for (i, layer) in self.layers.iter_mut().enumerate() {
            match checkpoint.layers.iter().find(|(j, _)| *j == i) {
                Some((_, saved)) => *layer = saved.clone(),
                None => layer.trim(checkpoint.len)?,
            }
        }
        self.forget_shifts_past(checkpoint.len);
        Ok(())
    }

    pub fn arrays(&self) -> Vec<&Array> {
        self.layers.iter().flat_map(LayerState::arrays).collect()
    }

    pub fn nbytes(&self) -> usize {
        self.layers.iter().map(LayerState::nbytes).sum()
    }

    pub fn bytes(&self) -> StateBytes {
        let mut b = StateBytes::default();
        for layer in &self.layers {
            let n = layer.nbytes();
            match layer {
                LayerState::KeysValues(_) | LayerState::QuantizedKeysValues(_) => b.keys_values += n,
                LayerState::Window(_) => b.window += n,
                LayerState::Recurrent(_) => b.recurrent += n,
                LayerState::Convolution(_) => b.convolution += n,
            }
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_of(len: usize) -> SequenceState {
        let mut s = SequenceState::new(&[StateKind::KeysValues]);
        let zeros = || mlx_rs::ops::zeros::<f32>(&[1, 1, len as i32, 16]).unwrap();
        s.layers[0].keys_values_mut().unwrap().append(zeros(), zeros()).unwrap();
        s
    }

    #[test]
    fn the_kv_plan_quantizes_full_layers_and_says_what_keeps_full_precision() {
        let q = KvQuantization::new(8, 64).unwrap();
        let full = KvPlan::new(&[StateKind::KeysValues; 4], 64, Some(q));
        assert_eq!((full.quantization, full.quantized_layers, full.declined), (Some(q), 4, None));
        assert_eq!(KvPlan::new(&[StateKind::KeysValues; 4], 64, None), KvPlan::default());
        let hybrid = KvPlan::new(&[StateKind::Recurrent, StateKind::Recurrent, StateKind::KeysValues], 128, Some(q));
        assert_eq!(hybrid.quantized_layers, 1);
        assert_eq!(hybrid.declined.as_deref(), Some("2 of 3 layers are recurrent or convolution state and keep full precision"));
        let sliding = KvPlan::new(&[StateKind::Window { size: 8 }, StateKind::KeysValues], 64, Some(q));
        assert!(sliding.declined.unwrap().contains("1 of 2 layers are rotating windows"));
        let windows = KvPlan::new(&[StateKind::Window { size: 8 }], 64, Some(q));
        assert_eq!(windows.quantization, None);
        assert!(windows.declined.unwrap().contains("every attention layer is a rotating window"));
        let narrow = KvPlan::new(&[StateKind::KeysValues], 16, Some(q));
        assert_eq!(narrow.quantization, None);
        assert!(narrow.declined.unwrap().contains("16 dimensions"));
        let kinds = quantized_kinds(vec![StateKind::KeysValues, StateKind::Recurrent], Some(q));
        assert_eq!(kinds, [StateKind::QuantizedKeysValues(q), StateKind::Recurrent]);
        assert!(SequenceState::new(&kinds).layers[0].kind().trimmable());
    }

    #[test]
    fn quantized_state_goes_to_disk_and_back() {
        let q = KvQuantization::new(4, 32).unwrap();
        let mut s = SequenceState::new(&[StateKind::QuantizedKeysValues(q)]);
        let keys = mlx_rs::random::normal::<f32>(&[1, 2, 5, 64], None, None, None).unwrap();
        let LayerState::QuantizedKeysValues(cache) = &mut s.layers[0] else { panic!("quantized") };
        cache.append(&keys, &keys).unwrap();
        let mut arrays: HashMap<String, Array> = s.layers[0].to_disk("layer.0").into_iter().collect();
        assert_eq!(arrays.len(), 6);
        let back = LayerState::from_disk(StateKind::QuantizedKeysValues(q), "layer.0", &mut arrays, 5).unwrap();
        assert_eq!((back.kind(), back.len()), (StateKind::QuantizedKeysValues(q), 5));
        let mut short: HashMap<String, Array> = s.layers[0].to_disk("layer.0").into_iter().collect();
        assert!(LayerState::from_disk(StateKind::QuantizedKeysValues(q), "layer.0", &mut short, 6).is_err());
    }

    #[test]
    fn position_shifts_follow_trims_and_restores() {
        let mut s = state_of(10);
        assert_eq!(s.position_shift(), 0);
        s.set_position_shift(-4);
        s.set_position_shift(-4);
        assert_eq!(s.position_shifts, [PositionShift { from: 10, shift: -4 }]);
        s.layers[0]
            .keys_values_mut()
            .unwrap()
            .append(mlx_rs::ops::zeros::<f32>(&[1, 1, 5, 16]).unwrap(), mlx_rs::ops::zeros::<f32>(&[1, 1, 5, 16]).unwrap())
            .unwrap();
        s.set_position_shift(-7);
        assert_eq!(s.position_shift(), -7);
        // Back to 12 positions: the shift set at 15 goes, the one from 10 stays.
        s.trim(12).unwrap();
        assert_eq!(s.position_shift(), -4);
        s.trim(9).unwrap();
        assert_eq!(s.position_shift(), 0);
        assert!(s.position_shifts.is_empty());
    }
}
