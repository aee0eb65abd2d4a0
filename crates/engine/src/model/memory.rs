//! What a model takes in memory, estimated from its configuration: its weights, and its state
//! for a number of positions. The one estimate behind discovery's figures and the scheduler's
//! admission.

use crate::model::config::LayerKind;
use crate::model::TextConfig;
use crate::state::StateKind;

/// The bytes a key or value element takes in the state of a model computing in `dtype`
/// (`ModelInfo::dtype`: "float32", "bfloat16", "float16"). The one rule, before loading and
/// after.
pub fn element_bytes(dtype: &str) -> usize {
    match dtype {
        "bfloat16" | "float16" => 2,
        _ => 4,
    }
}

/// Before a model is loaded: the element size of the dtype the engine computes in here
/// (float32 on a CPU, half precision on a GPU).
pub fn state_element_bytes() -> usize {
    element_bytes(if crate::device::default_is_gpu() { "float16" } else { "float32" })
}

/// What the system and the app keep beside a model.
pub const SYSTEM_RESERVE_BYTES: u64 = 2 << 30;

/// The one verdict of "does it fit", for the picker and Get models alike: what a model needs
/// (`needed`: its weights as loaded and the keys/values of a conversation filling its context)
/// with the system's share beside it, within this machine's memory.
pub fn fits_in_memory(needed: u64, machine: u64) -> bool {
    needed.saturating_add(SYSTEM_RESERVE_BYTES) <= machine
}

/// What models (their weights and replies) may take on a machine of `machine` bytes: all but
/// the system's reserve.
pub fn memory_for_models(machine: u64) -> u64 {
    machine.saturating_sub(SYSTEM_RESERVE_BYTES)
}

/// What a checkpoint needs in memory: its weights, and the keys/values of its whole context
/// where its configuration is known (`config`, with the context it runs at).
pub fn memory_needed(weight_bytes: u64, config: Option<(&TextConfig, usize)>) -> u64 {
    weight_bytes.saturating_add(config.map_or(0, |(c, context)| kv_cache_bytes(c, context)))
}

/// The bytes one token takes in one attention layer's key/value cache: keys and values of
/// every KV head, at `state_element_bytes`.
pub fn kv_bytes_per_token_and_layer(num_kv_heads: usize, head_dim: usize) -> u64 {
    state_bytes([StateKind::KeysValues], 1, num_kv_heads, head_dim, state_element_bytes())
}

/// The one estimate of a sequence's state, behind discovery's "memory needed" and the
/// scheduler's admission: `positions` keys and values in full-attention layers (quantized ones
/// at their packed size), at most a window's worth in sliding ones. Recurrent and convolution
/// state is fixed whatever the length, and its shape is the family's: the scheduler measures
/// it once per model (`ReadyModel::fixed_state_bytes`) and adds it. Layers are taken to have
/// `kv_heads` heads of `head_dim`.
pub fn state_bytes(
    kinds: impl IntoIterator<Item = StateKind>,
    positions: usize,
    kv_heads: usize,
    head_dim: usize,
    element_bytes: usize,
) -> u64 {
    // Saturating: discovery passes a model file's numbers, unchecked.
    let per_position = |bytes_per_head: usize| (kv_heads as u64).saturating_mul(bytes_per_head as u64).saturating_mul(2);
    let full = per_position(head_dim.saturating_mul(element_bytes));
    let held = |kind: StateKind| match kind {
        StateKind::KeysValues => (positions, full),
        StateKind::QuantizedKeysValues(q) => (positions, per_position(q.bytes_per_head(head_dim, element_bytes))),
        StateKind::Window { size } => (positions.min(size), full),
        StateKind::Recurrent | StateKind::Convolution => (0, 0),
    };
    kinds.into_iter().map(held).map(|(n, per_position)| (n as u64).saturating_mul(per_position)).fold(0, u64::saturating_add)
}

/// The key/value cache of `tokens` tokens for a config's layers (`state_bytes`).
pub fn kv_cache_bytes(c: &TextConfig, tokens: usize) -> u64 {
    let kinds = (0..c.num_layers).map(|i| match c.layer_kinds.get(i).copied().unwrap_or(LayerKind::Full) {
        LayerKind::Full => StateKind::KeysValues,
        LayerKind::Sliding => StateKind::Window { size: c.sliding_window.unwrap_or(tokens) },
        LayerKind::Linear => StateKind::Recurrent,
        LayerKind::Convolution => StateKind::Convolution,
    });
    state_bytes(kinds, tokens, c.num_kv_heads, c.head_dim, state_element_bytes())
}

/// The most memory one prefill chunk's activations take at once, beside the weights and the
/// state: `chunk` tokens attending to `context` positions, at `element_bytes` per element.
/// MLX frees a layer's intermediates once the next layer has read them, so the peak is one
/// layer's worth on top of the residual stream:
///
///   element_bytes × chunk × (4·hidden                       residual, its norm, attention out, sum
///                           + (heads + 2·kv_heads)·head_dim   queries, keys, values
///                           + heads·context                   attention scores, materialized
///                           + 3·intermediate)                 the MLP's gate, up and product
///   + 4 × vocab                                               the last position's float32 logits
///
/// Scores are counted as if attention were materialized (MLX's fallback where no fused
/// kernel applies), so this is an upper bound where a fused kernel runs. bench/memory.py
/// prints it beside the measured peak.
pub fn prefill_activation_bytes(c: &TextConfig, chunk: usize, context: usize, element_bytes: usize) -> u64 {
    let (chunk, context) = (chunk as u64, context.max(chunk) as u64);
    let (hidden, intermediate) = (c.hidden_size as u64, c.intermediate_size as u64);
    let (heads, kv_heads, head_dim) = (c.num_heads as u64, c.num_kv_heads as u64, c.head_dim as u64);
    let per_token = 4 * hidden + (heads + 2 * kv_heads) * head_dim + heads * context + 3 * intermediate;
    element_bytes as u64 * chunk * per_token + 4 * c.vocab_size as u64
}

/// An estimate for memory planning: embeddings, attention and MLP weights.
pub fn parameter_count(c: &TextConfig) -> u64 {
    // Saturating: a config.json's numbers are unchecked (discovery shows this before loading).
    let (h, i, v) = (c.hidden_size as u64, c.intermediate_size as u64, c.vocab_size as u64);
    let product = |factors: &[u64]| factors.iter().fold(1u64, |a, &b| a.saturating_mul(b));
    let attn =
        product(&[h, c.num_heads as u64, c.head_dim as u64, 2]).saturating_add(product(&[h, c.num_kv_heads as u64, c.head_dim as u64, 2]));
    let per_layer = attn.saturating_add(product(&[3, h, i]));
    product(&[v, h, if c.tie_word_embeddings { 1 } else { 2 }]).saturating_add(product(&[c.num_layers as u64, per_layer]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_bytes_counts_every_position_a_window_and_no_fixed_state() {
        // 2 heads of 3 in float32: 48 bytes of keys and values per position and layer.
        let kinds = [StateKind::KeysValues, StateKind::Window { size: 4 }, StateKind::Recurrent, StateKind::Convolution];
        assert_eq!(state_bytes(kinds, 10, 2, 3, 4), (10 + 4) * 48);
        assert_eq!(state_bytes(kinds, 3, 2, 3, 4), (3 + 3) * 48);
        assert_eq!(kv_bytes_per_token_and_layer(2, 3), 2 * 6 * state_element_bytes() as u64);
    }
}
