//! Shared blocks, configured per architecture rather than copied into each.

pub mod attention;
pub mod axial_rope;
pub mod causal_conv;
pub mod clipped;
pub mod cpu_attention;
pub mod cpu_linear;
pub mod embedding;
pub mod gated_delta;
pub mod gated_norm;
pub mod linear;
pub mod mask;
pub mod mlp;
pub mod moe;
pub mod mrope;
pub mod mxfp4_experts;
pub mod norm;
pub mod output_head;
pub mod quantized_attention;
pub mod rope;
pub mod switch_glu;

pub use attention::{Attention, KvSource};
pub use axial_rope::AxialRope;
pub use clipped::ClippedLinear;
pub use embedding::Embedding;
pub use linear::{FusedLinear, Linear};
pub use mask::AttentionMode;
pub use mlp::Mlp;
pub use moe::Experts;
pub use norm::RmsNorm;
pub use output_head::OutputHead;
pub use rope::Rope;

/// Confab's CPU kernels (linear and attention) run when MLX computes on the CPU, unless the
/// environment says `CONFAB_CPU_KERNELS=0`. Called when a model is loaded.
pub fn enable_cpu_kernels(cpu: bool) {
    let allowed = cpu && std::env::var("CONFAB_CPU_KERNELS").map_or(true, |v| v != "0");
    if let Ok(isa) = std::env::var("CONFAB_CPU_ISA") {
        if !cpu_linear::ISA_VALUES.contains(&isa.as_str()) {
            tracing::warn!(value = %isa, "CONFAB_CPU_ISA is not one of avx512, avx2, portable; ignored");
        }
    }
    cpu_linear::enable(allowed);
    cpu_attention::enable(allowed);
}
