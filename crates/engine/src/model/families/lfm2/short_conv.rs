//! LFM2's gated short convolution (`conv`): in_proj to B, C and x; a causal depthwise
//! convolution of B·x over the last `kernel` positions; C gates the result; out_proj.

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array};

use crate::error::{EngineError, Result};
use crate::model::layer_loader::LayerLoader;
use crate::model::layers::causal_conv::CausalConv1d;
use crate::model::layers::Linear;
use crate::state::ConvolutionWindow;

pub struct ShortConv {
    in_proj: Linear,
    conv: CausalConv1d,
    /// [channels], where `conv_bias` is set.
    conv_bias: Option<Array>,
    out_proj: Linear,
    hidden: i32,
}

impl ShortConv {
    /// `{prefix}.conv`, its convolution weight checked against `kernel` (`conv_L_cache`; None:
    /// what the weight holds, at least 2); with `bias` (`conv_bias`), the projections' and the
    /// convolution's biases.
    pub fn load(l: &mut LayerLoader, prefix: &str, kernel: Option<usize>, bias: bool) -> Result<Self> {
        let p = format!("{prefix}.conv");
        let hidden = l.config.hidden_size;
        let source = l.weights.source().to_path_buf();
        let corrupt = |reason: String| EngineError::CorruptWeights { path: source.clone(), reason };
        let name = format!("{p}.conv.weight");
        let stored = l.weights.take(&name)?;
        let weight = conv_weight(&stored, &name, hidden, kernel).map_err(corrupt)?.as_dtype(l.dtype)?;
        let conv_bias = if bias { Some(l.weights.take(&format!("{p}.conv.bias"))?.as_dtype(l.dtype)?) } else { None };
        let in_proj = l.linear(&format!("{p}.in_proj"))?;
        if in_proj.out_features() as usize != 3 * hidden {
            let reason = format!("`{p}.in_proj` projects to {} features; B, C and x need 3 × {hidden}", in_proj.out_features());
            return Err(corrupt(reason));
        }
        Ok(Self {
            in_proj,
            conv: CausalConv1d::new(&weight)?,
            conv_bias,
            out_proj: l.linear(&format!("{p}.out_proj"))?,
            hidden: hidden as i32,
        })
    }

    /// x [B, L, hidden] → [B, L, hidden], row i continuing `windows[i]` (one sequence, or a
    /// decode step of several); each window absorbs L positions. The projections and the
    /// convolution's products run once for the batch; each row keeps a window of its own.
    pub fn forward_rows(&self, x: &Array, windows: &mut [&mut ConvolutionWindow]) -> Result<Array> {
        if x.dim(0) as usize != windows.len() {
            return Err(EngineError::Internal(format!("{} rows for {} convolution windows", x.dim(0), windows.len())));
        }
        let projected = self.in_proj.forward(x)?;
        let h = self.hidden;
        let (b, c, input) = (projected.index((.., .., ..h)), projected.index((.., .., h..2 * h)), projected.index((.., .., 2 * h..)));
        let gated_input = ops::multiply(&b, &input)?;
        let previous: Vec<Option<&Array>> = windows.iter().map(|w| w.inputs.as_ref()).collect();
        let (mut mixed, kept) = self.conv.forward_rows(&gated_input, &previous)?;
        if let Some(bias) = &self.conv_bias {
            mixed = ops::add(&mixed, bias)?;
        }
        let l = x.dim(1) as usize;
        for (window, inputs) in windows.iter_mut().zip(kept) {
            window.inputs = Some(inputs);
            window.advance(l);
        }
        self.out_proj.forward(&ops::multiply(&c, &mixed)?)
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let mut all = self.in_proj.arrays();
        all.extend(self.conv.arrays());
        all.extend(self.conv_bias.iter());
        all.extend(self.out_proj.arrays());
        all
    }
}

/// [channels, kernel] from a stored convolution weight: PyTorch's [C, 1, K] (Hugging Face) or
/// mlx-lm's [C, K, 1]; checked against the hidden size and `conv_L_cache`.
fn conv_weight(weight: &Array, name: &str, channels: usize, kernel: Option<usize>) -> std::result::Result<Array, String> {
    let w = match (weight.ndim(), weight.shape()) {
        (3, [_, 1, _]) => weight.index((.., 0, ..)),
        (3, [_, _, 1]) => weight.index((.., .., 0)),
        (2, _) => weight.clone(),
        _ => return Err(format!("`{name}` has shape {:?}; expected [channels, 1, kernel]", weight.shape())),
    };
    let (c, k) = (w.dim(0) as usize, w.dim(1) as usize);
    match kernel {
        Some(kernel) if k != kernel => return Err(format!("`{name}` has kernel size {k} but conv_L_cache is {kernel}")),
        None if k < 2 => return Err(format!("`{name}` has kernel size {k}; a convolution window needs at least 2")),
        _ => {}
    }
    if c != channels {
        return Err(format!("`{name}` has {c} channels; hidden_size is {channels}"));
    }
    Ok(w)
}
