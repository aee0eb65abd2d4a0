//! The gated feed-forward block: down(act(gate(x)) * up(x)).

use mlx_rs::{nn, ops, Array};

use crate::error::Result;
use crate::model::config::Activation;
use crate::model::layers::{FusedLinear, Linear};

pub struct Mlp {
    /// Gate and up projections as one matmul.
    pub gate_up: FusedLinear,
    pub down: Linear,
    pub activation: Activation,
}

impl Mlp {
    pub fn forward(&self, x: &Array) -> Result<Array> {
        if let Some(gated) = self.gate_up.gated_forward(x, self.activation)? {
            return self.down.forward(&gated);
        }
        let mut parts = self.gate_up.forward(x)?.into_iter();
        let (gate, up) = (parts.next().expect("gate"), parts.next().expect("up"));
        let gate = match self.activation {
            Activation::Silu => nn::silu(&gate)?,
            Activation::GeluTanh => nn::gelu_approximate(&gate)?,
        };
        self.down.forward(&ops::multiply(&gate, &up)?)
    }
}

impl Mlp {
    /// Every weight, for evaluating once at load.
    pub fn arrays(&self) -> Vec<&Array> {
        self.gate_up.arrays().into_iter().chain(self.down.arrays()).collect()
    }
}
