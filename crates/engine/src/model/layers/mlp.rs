//! The gated feed-forward block: down(act(gate(x)) * up(x)).

use mlx_rs::{nn, ops, Array};

use crate::error::Result;
use crate::model::config::Activation;
use crate::model::layers::Linear;

pub struct Mlp {
    pub gate: Linear,
    pub up: Linear,
    pub down: Linear,
    pub activation: Activation,
}

impl Mlp {
    pub fn forward(&self, x: &Array) -> Result<Array> {
        let gate = self.gate.forward(x)?;
        let gate = match self.activation {
            Activation::Silu => nn::silu(&gate)?,
            Activation::GeluTanh => nn::gelu_approximate(&gate)?,
        };
        self.down.forward(&ops::multiply(&gate, &self.up.forward(x)?)?)
    }
}
