//! Band-limited resampling: a Kaiser-windowed sinc evaluated as a polyphase filter bank, exact
//! when the rate ratio is a small fraction (44100 → 16000 is 160/441: 160 phases), else
//! interpolated between 2048 phases. Downsampling lowers the cutoff to the new Nyquist
//! frequency, so tones above it are removed rather than aliased.

use std::f64::consts::PI;

/// Zero crossings of the sinc on each side of the centre; more is sharper and slower.
const ZERO_CROSSINGS: f64 = 16.0;
/// The passband edge as a fraction of the (lower) Nyquist frequency.
const ROLLOFF: f64 = 0.945;
/// Kaiser window shape: ~80 dB stopband.
const KAISER_BETA: f64 = 8.0;
/// Largest exact filter bank (one weight vector per phase). Ratios needing more phases
/// (odd rates such as 44100 → 16001) interpolate linearly between this many phases instead.
const MAX_PHASES: u64 = 2048;

/// `samples` at `from` Hz, resampled to `to` Hz. The output holds `ceil(len × to / from)`
/// samples, aligned so that output sample n sits at input time n × from / to.
pub fn resample(samples: &[f32], from: u32, to: u32) -> Vec<f32> {
    assert!(from > 0 && to > 0, "sample rates must be positive");
    if from == to || samples.is_empty() {
        return samples.to_vec();
    }
    let g = gcd(from as u64, to as u64);
    let (up, down) = (to as u64 / g, from as u64 / g);
    let out_len = (samples.len() as u64 * up).div_ceil(down) as usize;
    let filter = Filter::new(from, to);
    let phases = up.min(MAX_PHASES);
    // One more than `phases` so interpolation can reach the next sample (frac = 1).
    let bank: Vec<Vec<f32>> = (0..=phases).map(|p| filter.weights(p as f64 / phases as f64)).collect();
    (0..out_len as u64)
        .map(|n| {
            let position = n * down;
            let (base, phase) = ((position / up) as i64, position % up);
            if up <= MAX_PHASES {
                return filter.apply(samples, base, &bank[phase as usize]);
            }
            let exact = phase as f64 * phases as f64 / up as f64;
            let (j, a) = (exact.floor() as usize, (exact - exact.floor()) as f32);
            (1.0 - a) * filter.apply(samples, base, &bank[j]) + a * filter.apply(samples, base, &bank[j + 1])
        })
        .collect()
}

struct Filter {
    /// Cutoff in cycles per input sample.
    cutoff: f64,
    /// Taps each side of the centre, in input samples.
    half: i64,
}

impl Filter {
    fn new(from: u32, to: u32) -> Self {
        let cutoff = 0.5 * ROLLOFF * (to as f64 / from as f64).min(1.0);
        Self { cutoff, half: (ZERO_CROSSINGS / (2.0 * cutoff)).ceil() as i64 }
    }

    /// Weights for input samples base-half+1 ..= base+half, for an output at base + frac;
    /// normalised to unit gain at DC.
    fn weights(&self, frac: f64) -> Vec<f32> {
        let span = self.half as f64;
        let raw: Vec<f64> = (-self.half + 1..=self.half)
            .map(|k| {
                let t = k as f64 - frac;
                let x = 2.0 * self.cutoff * t;
                let sinc = if x.abs() < 1e-12 { 1.0 } else { (PI * x).sin() / (PI * x) };
                let r = t / span;
                let window = if r.abs() >= 1.0 { 0.0 } else { bessel_i0(KAISER_BETA * (1.0 - r * r).sqrt()) };
                sinc * window
            })
            .collect();
        let sum: f64 = raw.iter().sum();
        raw.iter().map(|w| (w / sum) as f32).collect()
    }

    fn apply(&self, samples: &[f32], base: i64, weights: &[f32]) -> f32 {
        let first = base - self.half + 1;
        let lo = (-first).max(0) as usize;
        let hi = weights.len().min((samples.len() as i64 - first).max(0) as usize);
        if lo >= hi {
            return 0.0;
        }
        let start = (first + lo as i64) as usize;
        samples[start..start + hi - lo].iter().zip(&weights[lo..hi]).map(|(s, w)| s * w).sum()
    }
}

/// The modified Bessel function of the first kind, order 0 (power series).
fn bessel_i0(x: f64) -> f64 {
    let (mut sum, mut term, q) = (1.0, 1.0, x * x / 4.0);
    for k in 1..64 {
        term *= q / (k * k) as f64;
        sum += term;
        if term < sum * 1e-16 {
            break;
        }
    }
    sum
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sine(freq: f64, rate: u32, seconds: f64) -> Vec<f32> {
        (0..(rate as f64 * seconds) as usize).map(|i| (2.0 * PI * freq * i as f64 / rate as f64).sin() as f32).collect()
    }

    fn rms(x: &[f32]) -> f64 {
        (x.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / x.len() as f64).sqrt()
    }

    #[test]
    fn lengths_follow_the_ratio() {
        assert_eq!(resample(&vec![0.0; 44100], 44100, 16000).len(), 16000);
        assert_eq!(resample(&vec![0.0; 8000], 8000, 16000).len(), 16000);
        assert_eq!(resample(&[0.0; 10], 48000, 16000).len(), 4);
        assert_eq!(resample(&[1.0, 2.0], 16000, 16000), vec![1.0, 2.0]);
    }

    #[test]
    fn a_tone_in_the_passband_keeps_its_level_and_phase() {
        for (from, to) in [(44100, 16000), (16000, 48000), (44100, 16001)] {
            let out = resample(&sine(440.0, from, 1.0), from, to);
            let expected = sine(440.0, to, 1.0);
            let middle = to as usize / 4..to as usize * 3 / 4;
            let error: Vec<f32> = middle.clone().map(|i| out[i] - expected[i]).collect();
            assert!(rms(&error) < 1e-3, "{from}->{to}: rms error {}", rms(&error));
        }
    }

    #[test]
    fn a_tone_above_the_new_nyquist_is_removed_not_aliased() {
        let out = resample(&sine(10_000.0, 44100, 1.0), 44100, 16000);
        assert!(rms(&out[4000..12000]) < 1e-3, "rms {}", rms(&out[4000..12000]));
    }

    #[test]
    fn dc_passes_unchanged() {
        let out = resample(&vec![0.5; 4410], 44100, 16000);
        assert!(out[200..1400].iter().all(|v| (v - 0.5).abs() < 1e-5));
    }
}
