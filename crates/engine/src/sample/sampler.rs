//! The sampler: one per generated sequence.

use std::hash::{BuildHasher, Hasher};

use mlx_rs::error::AsSliceError;
use mlx_rs::{ops, Array, Dtype};

use super::SamplingParams;
use crate::constraint::TokenMask;
use crate::error::{EngineError, Result};

/// Picks tokens for one sequence under fixed [`SamplingParams`].
pub struct Sampler {
    params: SamplingParams,
    vocab_size: usize,
    rng: SplitMix64,
    /// The step's logits on the host (sampling only).
    logits: Vec<f32>,
    /// Candidate token ids, reused every step.
    candidates: Vec<u32>,
    /// Distinct token ids of the penalty window, sorted.
    seen: Vec<u32>,
    /// Ids whose logits the processors change this step, sorted.
    touched: Vec<u32>,
}

impl std::fmt::Debug for Sampler {
    // Not the scratch buffers: a vocabulary of floats is no help in a log.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampler").field("params", &self.params).field("vocab_size", &self.vocab_size).finish()
    }
}

impl Sampler {
    /// Validates `params` against a model whose logits have `vocab_size` entries.
    pub fn new(params: SamplingParams, vocab_size: usize) -> Result<Self> {
        if vocab_size == 0 || vocab_size > i32::MAX as usize {
            return Err(EngineError::invalid("vocab_size", format!("{vocab_size} is out of range; expected 1 to {}", i32::MAX)));
        }
        params.validate(vocab_size)?;
        let seed = params.seed.unwrap_or_else(fresh_seed);
        Ok(Self {
            params,
            vocab_size,
            rng: SplitMix64(seed),
            logits: Vec::new(),
            candidates: Vec::new(),
            seen: Vec::new(),
            touched: Vec::new(),
        })
    }

    pub fn params(&self) -> &SamplingParams {
        &self.params
    }

    /// True when the most likely token is always the one chosen: temperature 0 (or so close to
    /// 0 that 1/temperature overflows), or top-k 1. No randomness then.
    pub fn is_greedy(&self) -> bool {
        let t = self.params.temperature;
        t == 0.0 || !(1.0 / t).is_finite() || self.params.top_k == 1
    }

    /// The next token, given this step's `logits` (shape `[vocab]` or `[1, vocab]`; float32,
    /// other float types are converted on the device) and the sequence so far, prompt included
    /// (only its last `repetition_context` tokens matter).
    pub fn sample(&mut self, logits: &Array, history: &[u32]) -> Result<u32> {
        self.sample_masked(logits, history, None)
    }

    /// As [`Self::sample`], choosing only among the tokens `mask` allows (a grammar's): the
    /// mask applies after the processors and before temperature, top-k, top-p and min-p, so
    /// they share out the probability of allowed tokens only. Masked logits are read on the
    /// host, greedy included.
    pub fn sample_masked(&mut self, logits: &Array, history: &[u32], mask: Option<&TokenMask>) -> Result<u32> {
        let logits = self.check_shape(logits)?;
        self.collect_touched(history);
        match mask {
            None if self.is_greedy() => self.greedy(logits),
            None => {
                self.copy_to_host(&logits)?;
                self.draw()
            }
            Some(mask) => {
                self.copy_to_host(&logits)?;
                if self.is_greedy() {
                    return mask.best(&self.logits).ok_or_else(|| {
                        EngineError::invalid("logits", "every token the grammar allows has probability 0 (-inf or NaN logits)")
                    });
                }
                mask.apply(&mut self.logits);
                self.draw()
            }
        }
    }

    fn check_shape(&self, logits: &Array) -> Result<Array> {
        let v = self.vocab_size as i32;
        let shape = logits.shape();
        if !(shape == [v] || shape == [1, v]) {
            return Err(EngineError::invalid("logits", format!("expected shape [{v}] or [1, {v}], got {shape:?}")));
        }
        let flat = logits.reshape(&[v])?;
        Ok(match flat.dtype() {
            Dtype::Float32 => flat,
            Dtype::Float16 | Dtype::Bfloat16 | Dtype::Float64 => flat.as_dtype(Dtype::Float32)?,
            other => return Err(EngineError::invalid("logits", format!("expected floating-point logits, got {other:?}"))),
        })
    }

    /// Fills `seen` (the distinct ids of the penalty window) and `touched` (every id whose
    /// logit a processor changes this step).
    fn collect_touched(&mut self, history: &[u32]) {
        let p = &self.params;
        self.seen.clear();
        let penalize = p.repetition_penalty != 1.0 || p.presence_penalty != 0.0;
        if penalize {
            let start = history.len().saturating_sub(p.repetition_context);
            let vocab = self.vocab_size;
            self.seen.extend(history[start..].iter().copied().filter(|&t| (t as usize) < vocab));
            self.seen.sort_unstable();
            self.seen.dedup();
        }
        self.touched.clear();
        self.touched.extend_from_slice(&self.seen);
        self.touched.extend(p.logit_bias.iter().filter(|(_, &b)| b != 0.0).map(|(&id, _)| id));
        self.touched.sort_unstable();
        self.touched.dedup();
    }

    /// New logit for `id` given its old value `v`: bias, then repetition, then presence.
    fn adjust(&self, id: u32, mut v: f32) -> f32 {
        let p = &self.params;
        if let Some(b) = p.logit_bias.get(&id) {
            v += b;
        }
        if self.seen.binary_search(&id).is_ok() {
            let r = p.repetition_penalty;
            v = if v > 0.0 { v / r } else { v * r };
            v -= p.presence_penalty;
        }
        v
    }

    /// Argmax on the device. The processors' changes are computed there too, on the few ids
    /// they touch (the same f32 arithmetic as [`Self::adjust`]), so nothing is evaluated until
    /// the chosen id is read.
    fn greedy(&mut self, logits: Array) -> Result<u32> {
        let logits = if self.touched.is_empty() {
            logits
        } else {
            let p = &self.params;
            let n = self.touched.len() as i32;
            let ids: Vec<i32> = self.touched.iter().map(|&id| id as i32).collect();
            let bias: Vec<f32> = self.touched.iter().map(|id| p.logit_bias.get(id).copied().unwrap_or(0.0)).collect();
            let seen: Vec<bool> = self.touched.iter().map(|id| self.seen.binary_search(id).is_ok()).collect();
            let ids = Array::from_slice(&ids, &[n]);
            let biased = logits.take(&ids)?.add(Array::from_slice(&bias, &[n]))?;
            let r = Array::from_f32(p.repetition_penalty);
            let penalized = ops::select(biased.gt(Array::from_f32(0.0))?, biased.divide(&r)?, biased.multiply(&r)?)?
                .subtract(Array::from_f32(p.presence_penalty))?;
            let new = ops::select(Array::from_slice(&seen, &[n]), penalized, biased)?;
            logits.put_along_axis(&ids, &new, 0)?
        };
        let best = ops::indexing::argmax(&logits, false)?;
        best.try_item_cast::<u32>().map_err(|e| EngineError::Mlx(e.to_string()))
    }

    /// The logits on the host, with the processors applied.
    fn copy_to_host(&mut self, logits: &Array) -> Result<()> {
        let contiguous;
        let host = match logits.try_as_slice::<f32>() {
            Err(AsSliceError::NotContiguous) => {
                contiguous = logits.contiguous()?;
                contiguous.try_as_slice::<f32>()
            }
            other => other,
        };
        let host = host.map_err(|e| EngineError::Mlx(e.to_string()))?;
        self.logits.clear();
        self.logits.extend_from_slice(host);
        for n in 0..self.touched.len() {
            let id = self.touched[n] as usize;
            self.logits[id] = self.adjust(id as u32, self.logits[id]);
        }
        Ok(())
    }

    /// Temperature, top-k, top-p, min-p over `self.logits`, then a draw.
    fn draw(&mut self) -> Result<u32> {
        if let Some(certain) = self.filter()? {
            return Ok(certain);
        }
        let (weights, cand) = (&self.logits, &self.candidates);
        let total: f64 = cand.iter().map(|&i| f64::from(weights[i as usize])).sum();
        let target = self.rng.next_f64() * total;
        let mut cumulative = 0.0f64;
        for &i in cand.iter() {
            cumulative += f64::from(weights[i as usize]);
            if target < cumulative {
                return Ok(i);
            }
        }
        // Rounding left the target at the very end: the last token with any weight.
        Ok(cand.iter().rev().copied().find(|&i| weights[i as usize] > 0.0).unwrap_or(cand[0]))
    }

    /// Temperature, top-k, top-p, min-p over `self.logits`: leaves the tokens that may be drawn
    /// in `self.candidates`, their unnormalised probabilities in `self.logits`; or returns the
    /// token the model is certain of.
    fn filter(&mut self) -> Result<Option<u32>> {
        let p = &self.params;
        let inv_t = 1.0 / p.temperature;
        let logits = &mut self.logits;
        let cand = &mut self.candidates;

        cand.clear();
        let mut max = f32::NEG_INFINITY;
        for (i, &l) in logits.iter().enumerate() {
            // NaN and -inf are never candidates.
            if l > f32::NEG_INFINITY {
                max = max.max(l);
                cand.push(i as u32);
            }
        }
        if cand.is_empty() {
            return Err(EngineError::invalid(
                "logits",
                "every token has probability 0 (all logits are -inf or NaN, or banned by logit_bias)",
            ));
        }
        if max == f32::INFINITY {
            // A token the model is certain of; softmax would be inf/inf.
            let first = cand.iter().find(|&&i| logits[i as usize] == f32::INFINITY);
            return Ok(Some(first.copied().unwrap_or(cand[0])));
        }
        // Scaled so that the best is 0 and the rest are negative: no overflow at any temperature.
        for &i in cand.iter() {
            let l = &mut logits[i as usize];
            *l = (*l - max) * inv_t;
        }

        // Descending by logit, ties by id: a total, deterministic order.
        let by_logit_desc = |a: &u32, b: &u32| logits[*b as usize].total_cmp(&logits[*a as usize]).then(a.cmp(b));
        let k = p.top_k as usize;
        if k > 0 && k < cand.len() {
            cand.select_nth_unstable_by(k - 1, by_logit_desc);
            cand.truncate(k);
        }

        // Unnormalised probabilities: the largest is exp(0) = 1.
        for &i in cand.iter() {
            let l = &mut logits[i as usize];
            *l = l.exp();
        }
        let weights = &*logits;

        if p.top_p < 1.0 {
            // The nucleus is usually small: sort only a head of the best tokens, growing it
            // until it holds the target mass, rather than sorting the whole vocabulary.
            let by_weight_desc = |a: &u32, b: &u32| weights[*b as usize].total_cmp(&weights[*a as usize]).then(a.cmp(b));
            let total: f64 = cand.iter().map(|&i| f64::from(weights[i as usize])).sum();
            let target = f64::from(p.top_p) * total;
            let mut head = cand.len().min(64);
            let keep = loop {
                if head < cand.len() {
                    cand.select_nth_unstable_by(head - 1, by_weight_desc);
                }
                cand[..head].sort_unstable_by(by_weight_desc);
                let mut cumulative = 0.0f64;
                let found = cand[..head].iter().position(|&i| {
                    cumulative += f64::from(weights[i as usize]);
                    cumulative >= target
                });
                match found {
                    Some(n) => break n + 1,
                    // Rounding kept the target out of reach: keep everything.
                    None if head == cand.len() => break head,
                    None => head = (head * 4).min(cand.len()),
                }
            };
            cand.truncate(keep.max(1));
        }

        if p.min_p > 0.0 {
            // Relative to the most likely token, whose weight is 1 and which is always kept.
            let threshold = p.min_p;
            cand.retain(|&i| weights[i as usize] >= threshold);
        }
        Ok(None)
    }

    /// The distribution `sample` draws from for these `logits` and `history`: every token it
    /// may choose with its probability (summing to 1); greedy samplers give their choice with
    /// probability 1. For speculative decoding, which must keep exactly this distribution.
    pub fn distribution(&mut self, logits: &Array, history: &[u32]) -> Result<Vec<(u32, f64)>> {
        let logits = self.check_shape(logits)?;
        self.collect_touched(history);
        if self.is_greedy() {
            return Ok(vec![(self.greedy(logits)?, 1.0)]);
        }
        self.copy_to_host(&logits)?;
        if let Some(certain) = self.filter()? {
            return Ok(vec![(certain, 1.0)]);
        }
        let (weights, cand) = (&self.logits, &self.candidates);
        let total: f64 = cand.iter().map(|&i| f64::from(weights[i as usize])).sum();
        Ok(cand.iter().map(|&i| (i, f64::from(weights[i as usize]) / total)).collect())
    }

    /// As [`Self::distribution`], choosing only among the tokens `mask` allows (as
    /// [`Self::sample_masked`] chooses).
    pub fn distribution_masked(&mut self, logits: &Array, history: &[u32], mask: Option<&TokenMask>) -> Result<Vec<(u32, f64)>> {
        let Some(mask) = mask else { return self.distribution(logits, history) };
        let logits = self.check_shape(logits)?;
        self.collect_touched(history);
        self.copy_to_host(&logits)?;
        if self.is_greedy() {
            let best = mask
                .best(&self.logits)
                .ok_or_else(|| EngineError::invalid("logits", "every token the grammar allows has probability 0 (-inf or NaN logits)"))?;
            return Ok(vec![(best, 1.0)]);
        }
        mask.apply(&mut self.logits);
        if let Some(certain) = self.filter()? {
            return Ok(vec![(certain, 1.0)]);
        }
        let (weights, cand) = (&self.logits, &self.candidates);
        let total: f64 = cand.iter().map(|&i| f64::from(weights[i as usize])).sum();
        Ok(cand.iter().map(|&i| (i, f64::from(weights[i as usize]) / total)).collect())
    }

    /// A uniform draw in [0, 1) from this sampler's generator (speculative decoding's accept
    /// test, reproducible under a seed as every other draw is).
    pub fn uniform(&mut self) -> f64 {
        self.rng.next_f64()
    }

    /// A token drawn from `weights` (unnormalised, none negative); `None` when all are 0.
    pub fn draw_from(&mut self, weights: &[(u32, f64)]) -> Option<u32> {
        let total: f64 = weights.iter().map(|&(_, w)| w).sum();
        if total <= 0.0 {
            return None;
        }
        let target = self.rng.next_f64() * total;
        let mut cumulative = 0.0f64;
        for &(id, w) in weights {
            cumulative += w;
            if target < cumulative {
                return Some(id);
            }
        }
        weights.iter().rev().find(|&&(_, w)| w > 0.0).map(|&(id, _)| id)
    }
}

/// A seed for samplers without one: process-random (std's hasher keys) mixed with the time.
fn fresh_seed() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    h.write_u128(now.map(|d| d.as_nanos()).unwrap_or(0));
    h.finish()
}

/// SplitMix64 (Steele, Lea, Flood 2014): one u64 of state, full period, good enough
/// statistics for drawing tokens, and trivially reproducible.
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 53 bits.
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn splitmix_matches_reference_values() {
        // The published test vector for seed 1234567 (as in Vigna's splitmix64.c).
        let mut r = SplitMix64(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
    }

    #[test]
    fn uniform_stays_in_unit_interval() {
        let mut r = SplitMix64(0);
        assert!((0..10_000).map(|_| r.next_f64()).all(|x| (0.0..1.0).contains(&x)));
    }
}
