//! The sparse MoE block of Qwen3.5-MoE and Qwen3-Next: a softmax router picks the top-k experts
//! (weights renormalised to sum to 1 where the model says), and a shared expert, scaled by
//! `sigmoid(shared_expert_gate(x))`, is added for every token.

use mlx_rs::{nn, ops, Array};

use crate::error::{EngineError, Result};
use crate::model::layer_loader::LayerLoader;
use crate::model::layers::switch_glu::{route, ExpertWeights, SwitchGlu};
use crate::model::layers::{FusedLinear, Linear, Mlp};

pub struct SparseMoe {
    router: Linear,
    top_k: i32,
    normalize: bool,
    experts: SwitchGlu,
    shared: Mlp,
    shared_gate: Linear,
}

impl SparseMoe {
    /// `{prefix}.mlp`, with `num_experts` experts in any of the three stored forms.
    pub fn load(l: &mut LayerLoader, prefix: &str, num_experts: usize, top_k: usize, normalize: bool) -> Result<Self> {
        let p = format!("{prefix}.mlp");
        let shared = Mlp {
            gate_up: FusedLinear::new(vec![
                l.linear(&format!("{p}.shared_expert.gate_proj"))?,
                l.linear(&format!("{p}.shared_expert.up_proj"))?,
            ])?,
            down: l.linear(&format!("{p}.shared_expert.down_proj"))?,
            activation: l.config.activation,
        };
        Ok(Self {
            router: l.linear(&format!("{p}.gate"))?,
            top_k: top_k as i32,
            normalize,
            experts: load_experts(l, &p, num_experts)?,
            shared,
            shared_gate: l.linear(&format!("{p}.shared_expert_gate"))?,
        })
    }

    /// x [B, L, hidden] → [B, L, hidden].
    pub fn forward(&self, x: &Array) -> Result<Array> {
        let shape = x.shape().to_vec();
        let flat = x.reshape(&[-1, shape[2]])?;
        let (experts, weights) = route(&self.router.forward(&flat)?, self.top_k, self.normalize, x.dtype())?;
        let routed = self.experts.forward(&flat, &experts, &weights)?;
        let shared = ops::multiply(&self.shared.forward(&flat)?, &nn::sigmoid(&self.shared_gate.forward(&flat)?)?)?;
        Ok(ops::add(&routed, &shared)?.reshape(&shape)?)
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let mut all = self.router.arrays();
        all.extend(self.experts.arrays());
        all.extend(self.shared.arrays());
        all.extend(self.shared_gate.arrays());
        all
    }
}

/// The routed experts of `{p}` (= `…mlp`), stored as
/// - transformers' fused tensors `experts.gate_up_proj` [E, 2I, H] (rows gate then up) and
///   `experts.down_proj` [E, H, I] (Qwen3.5-MoE as released);
/// - one module per expert, `experts.{e}.{gate,up,down}_proj.weight` (Qwen3-Next as released,
///   and what transformers' save_pretrained writes);
/// - mlx-lm's stacked `switch_mlp.{gate,up,down}_proj` (possibly quantized; kept packed).
fn load_experts(l: &mut LayerLoader, p: &str, num_experts: usize) -> Result<SwitchGlu> {
    let activation = l.config.activation;
    let dtype = l.dtype;
    let fused = format!("{p}.experts.gate_up_proj");
    if l.weights.contains(&fused) {
        let gate_up = l.weights.take(&fused)?.as_dtype(dtype)?;
        let down = l.weights.take(&format!("{p}.experts.down_proj"))?.as_dtype(dtype)?;
        let mut halves = gate_up.split_equal(2, 1)?.into_iter();
        let (gate, up) = (halves.next().expect("gate"), halves.next().expect("up"));
        return SwitchGlu::new(ExpertWeights::dense(gate)?, ExpertWeights::dense(up)?, ExpertWeights::dense(down)?, activation);
    }
    if l.weights.contains(&format!("{p}.experts.0.gate_proj.weight")) {
        let mut stacked = |name: &str| -> Result<ExpertWeights> {
            let each = (0..num_experts)
                .map(|e| Ok(l.weights.take(&format!("{p}.experts.{e}.{name}.weight"))?.as_dtype(dtype)?))
                .collect::<Result<Vec<Array>>>()?;
            ExpertWeights::dense(ops::stack(&each, 0)?)
        };
        return SwitchGlu::new(stacked("gate_proj")?, stacked("up_proj")?, stacked("down_proj")?, activation);
    }
    let mut switch = |name: &str| -> Result<ExpertWeights> {
        let prefix = format!("{p}.switch_mlp.{name}");
        if !l.weights.contains(&format!("{prefix}.weight")) {
            return Err(EngineError::CorruptWeights {
                path: l.weights.source().into(),
                reason: format!("the experts of `{p}` are missing (no `{p}.experts.gate_up_proj`, `{p}.experts.0.gate_proj.weight` or `{prefix}.weight`)"),
            });
        }
        ExpertWeights::from_linear(l.linear(&prefix)?, &prefix)
    };
    SwitchGlu::new(switch("gate_proj")?, switch("up_proj")?, switch("down_proj")?, activation)
}
