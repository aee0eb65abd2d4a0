//! FFmpeg's libswresample as torchcodec drives it, for the clips the reference loader can only
//! read through torchcodec (M4A/AAC): transformers' `load_audio` hands such a file to
//! `torchcodec.decoders.AudioDecoder(source, sample_rate=16000, num_channels=1)`, which converts
//! each decoded frame with one `SwrContext` made with default options and flushes it at the end.
//! With those defaults (libswresample 4.x, FFmpeg 5.1 to 7):
//! - resampling: the "swr" engine, a Kaiser-windowed sinc (beta 9) of 32 taps scaled by the
//!   rate ratio, cutoff 0.97 of the lower Nyquist, an exact rational phase count (at most 1024),
//!   float coefficients, a polyphase filter in float; the stream's start is mirrored
//!   (`invert_initial_buffer`) and its end reflected (`resample_flush`), which sets the output
//!   length to `ceil(n × to / from)`;
//! - downmix: the default matrix, which for float output is not normalised: stereo to mono is
//!   `(L + R) × √½`, not the mean; the channels are resampled first, then mixed (for two channels
//!   to one, libswresample's cost test always picks that order).
//!
//! Here in plain C order (two alternating sums per output); FFmpeg's x86 builds use SSE/AVX/FMA
//! kernels that sum in another order, so the samples agree to within a float step or two
//! (1.2e-7 on the corpus, given the same decoded input), not bit for bit.

use std::f64::consts::{FRAC_1_SQRT_2, PI};

/// `channels` (planar) at `from` Hz, resampled to `to` Hz and mixed to mono.
pub fn resample_to_mono(channels: &[Vec<f32>], from: u32, to: u32) -> Vec<f32> {
    let resampled: Vec<Vec<f32>> = if from == to {
        channels.to_vec()
    } else {
        let resampler = Resampler::new(from, to);
        channels.iter().map(|channel| resampler.run(channel)).collect()
    };
    match resampled.as_slice() {
        [] => vec![],
        [mono] => mono.clone(),
        [left, right] => {
            let coefficient = FRAC_1_SQRT_2 as f32;
            left.iter().zip(right).map(|(l, r)| coefficient * l + coefficient * r).collect()
        }
        // FFmpeg's matrices for surround layouts (centre, surround and LFE levels) are not
        // reproduced: more than two channels are averaged.
        many => {
            let count = many.len() as f32;
            (0..many[0].len()).map(|i| many.iter().map(|c| c[i]).sum::<f32>() / count).collect()
        }
    }
}

/// libswresample's resampler state for one rate pair (`resample_init`).
struct Resampler {
    phase_count: usize,
    filter_length: usize,
    /// Row stride: the filter length rounded up to 8, zero-padded, as libswresample allocates.
    filter_alloc: usize,
    /// `phase_count + 1` rows; the last is phase 0 shifted by one tap (linear interpolation's).
    bank: Vec<f32>,
    dst_incr_div: usize,
    dst_incr_mod: u64,
    src_incr: u64,
}

const FILTER_SIZE: f64 = 32.0;
const PHASE_SHIFT: u32 = 10;
const CUTOFF: f64 = 0.97;
const KAISER_BETA: f64 = 9.0;

impl Resampler {
    fn new(from: u32, to: u32) -> Self {
        let factor = (to as f64 * CUTOFF / from as f64).min(1.0);
        let mut filter_length = ((FILTER_SIZE / factor).ceil() as usize).max(1);
        if filter_length > 1 {
            filter_length = filter_length.next_multiple_of(2);
        }
        let mut phase_count = 1usize << PHASE_SHIFT;
        // exact_rational: as many phases as the reduced ratio's numerator, where that is fewer.
        let exact = (to as u64 / gcd(to as u64, from as u64)) as usize;
        if exact <= phase_count {
            phase_count = exact;
        }
        let filter_alloc = filter_length.next_multiple_of(8);
        let bank = build_filter(factor, filter_length, filter_alloc, phase_count);
        // av_reduce(to, from × phase_count), then both doubled up to 2^20.
        let (numerator, denominator) = (to as u64, from as u64 * phase_count as u64);
        let divisor = gcd(numerator, denominator);
        let (mut src_incr, mut dst_incr) = (numerator / divisor, denominator / divisor);
        while dst_incr < (1 << 20) && src_incr < (1 << 20) {
            dst_incr *= 2;
            src_incr *= 2;
        }
        Resampler {
            phase_count,
            filter_length,
            filter_alloc,
            bank,
            dst_incr_div: (dst_incr / src_incr) as usize,
            dst_incr_mod: dst_incr % src_incr,
            src_incr,
        }
    }

    /// One channel, start to end, as one stream converted and then flushed.
    fn run(&self, input: &[f32]) -> Vec<f32> {
        let length = self.filter_length;
        let n = input.len();
        if n == 0 {
            return vec![];
        }
        // The start mirrored about the first sample: x[-k] = x[k]. (A clip shorter than the
        // filter, a few milliseconds, repeats its last sample instead.)
        let mut buffer: Vec<f32> = (1..=length).rev().map(|k| input[k.min(n - 1)]).collect();
        buffer.extend_from_slice(input);
        // The first output's window starts (length - 1) / 2 samples before the input, at phase 0.
        let mut position = length - (length - 1) / 2;
        let (mut phase, mut frac) = (0usize, 0u64);
        // Linear interpolation between phases only where the ratio is not exact.
        let linear = self.dst_incr_mod != 0;
        let mut out = Vec::new();
        let mut flushed = false;
        loop {
            if position + length > buffer.len() {
                if flushed {
                    break;
                }
                // The flush: what remains buffered, reflected about the last sample.
                let remaining = buffer.len() - position;
                let reflection = remaining.min(length).div_ceil(2);
                buffer.extend((0..reflection).map(|j| input[n - 1 - j.min(n - 1)]));
                flushed = true;
                continue;
            }
            let window = &buffer[position..position + length];
            let filter = &self.bank[phase * self.filter_alloc..][..length];
            out.push(if linear {
                let next = &self.bank[(phase + 1) * self.filter_alloc..][..length];
                let (mut value, mut value_next) = (0f32, 0f32);
                for ((x, a), b) in window.iter().zip(filter).zip(next) {
                    value += x * a;
                    value_next += x * b;
                }
                (value as f64 + (value_next - value) as f64 * (1.0 / self.src_incr as f64) * frac as f64) as f32
            } else {
                let (mut even, mut odd) = (0f32, 0f32);
                let mut pairs = window.chunks_exact(2).zip(filter.chunks_exact(2));
                for (x, h) in pairs.by_ref() {
                    even += x[0] * h[0];
                    odd += x[1] * h[1];
                }
                if length % 2 == 1 {
                    even += window[length - 1] * filter[length - 1];
                }
                even + odd
            });
            frac += self.dst_incr_mod;
            phase += self.dst_incr_div;
            if frac >= self.src_incr {
                frac -= self.src_incr;
                phase += 1;
            }
            position += phase / self.phase_count;
            phase %= self.phase_count;
        }
        out
    }
}

/// libswresample's `build_filter` for float: each phase's Kaiser-windowed sinc in double,
/// normalised by phase 0's sum, stored as float; with an even phase count the upper half
/// mirrors the lower.
fn build_filter(factor: f64, taps: usize, alloc: usize, phase_count: usize) -> Vec<f32> {
    let computed_phases = if phase_count.is_multiple_of(2) { phase_count / 2 + 1 } else { phase_count };
    let center = (taps - 1) / 2;
    let mut bank = vec![0f32; (phase_count + 1) * alloc];
    // Upsampling keeps factor 1, where sin(x) comes from a table that alternates sign per tap.
    let sin_table: Vec<f64> =
        (0..computed_phases)
            .map(|phase| {
                if factor == 1.0 {
                    (PI * phase as f64 / phase_count as f64).sin() * if center & 1 == 1 { 1.0 } else { -1.0 }
                } else {
                    0.0
                }
            })
            .collect();
    let mut norm = 0f64;
    let mut tab = vec![0f64; taps];
    for phase in 0..computed_phases {
        let mut s = sin_table[phase];
        for (i, tap) in tab.iter_mut().enumerate() {
            let x = PI * ((i as f64 - center as f64) - phase as f64 / phase_count as f64) * factor;
            let mut y = if x == 0.0 {
                1.0
            } else if factor == 1.0 {
                s / x
            } else {
                x.sin() / x
            };
            let w = 2.0 * x / (factor * taps as f64 * PI);
            y *= bessel(KAISER_BETA * (1.0 - w * w).max(0.0).sqrt());
            *tap = y;
            s = -s;
            if phase == 0 {
                norm += y;
            }
        }
        for i in 0..taps {
            bank[phase * alloc + i] = (tab[i] / norm) as f32;
        }
        if phase_count.is_multiple_of(2) {
            for i in 0..taps {
                bank[(phase_count - phase) * alloc + taps - 1 - i] = bank[phase * alloc + i];
            }
        }
    }
    // The row after the last phase: row 0 shifted by one (its first entry row 0's last,
    // padding included), as `resample_init`'s two memcpy calls leave it.
    let last = phase_count * alloc;
    bank[last] = bank[alloc - 1];
    for i in 0..alloc - 1 {
        bank[last + 1 + i] = bank[i];
    }
    bank
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn eval_poly(coefficients: &[f64], x: f64) -> f64 {
    let (&last, rest) = coefficients.split_last().expect("non-empty");
    rest.iter().rev().fold(last, |sum, &c| sum * x + c)
}

/// The modified Bessel function I0, by libswresample's rational approximations (Blair and
/// Edwards, via Boost). The constants as its source writes them (they round to the same doubles).
#[allow(clippy::excessive_precision)]
fn bessel(x: f64) -> f64 {
    const P1: [f64; 15] = [
        -2.2335582639474375249e+15,
        -5.5050369673018427753e+14,
        -3.2940087627407749166e+13,
        -8.4925101247114157499e+11,
        -1.1912746104985237192e+10,
        -1.0313066708737980747e+08,
        -5.9545626019847898221e+05,
        -2.4125195876041896775e+03,
        -7.0935347449210549190e+00,
        -1.5453977791786851041e-02,
        -2.5172644670688975051e-05,
        -3.0517226450451067446e-08,
        -2.6843448573468483278e-11,
        -1.5982226675653184646e-14,
        -5.2487866627945699800e-18,
    ];
    const Q1: [f64; 6] = [
        -2.2335582639474375245e+15,
        7.8858692566751002988e+12,
        -1.2207067397808979846e+10,
        1.0377081058062166144e+07,
        -4.8527560179962773045e+03,
        1.0,
    ];
    const P2: [f64; 7] = [
        -2.2210262233306573296e-04,
        1.3067392038106924055e-02,
        -4.4700805721174453923e-01,
        5.5674518371240761397e+00,
        -2.3517945679239481621e+01,
        3.1611322818701131207e+01,
        -9.6090021968656180000e+00,
    ];
    const Q2: [f64; 8] = [
        -5.5194330231005480228e-04,
        3.2547697594819615062e-02,
        -1.1151759188741312645e+00,
        1.3982595353892851542e+01,
        -6.0228002066743340583e+01,
        8.5539563258012929600e+01,
        -3.1446690275135491500e+01,
        1.0,
    ];
    if x == 0.0 {
        return 1.0;
    }
    let x = x.abs();
    if x <= 15.0 {
        let y = x * x;
        eval_poly(&P1, y) / eval_poly(&Q1, y)
    } else {
        let y = 1.0 / x - 1.0 / 15.0;
        x.exp() / x.sqrt() * (eval_poly(&P2, y) / eval_poly(&Q2, y))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_lengths_follow_the_flush_rule() {
        // ceil(n × to / from), as torchcodec returns for whole clips.
        let cases = [(44100, 16000, 26624), (48000, 16000, 29696), (22050, 16000, 13312), (8000, 16000, 5120)];
        for (from, to, n) in cases {
            let input: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.01).sin() * 0.5).collect();
            let out = resample_to_mono(&[input], from, to);
            assert_eq!(out.len() as u64, (n as u64 * to as u64).div_ceil(from as u64), "{from} -> {to}");
        }
    }

    #[test]
    fn a_constant_stays_constant_and_stereo_mixes_at_root_half() {
        let ones = vec![0.25f32; 4410];
        let out = resample_to_mono(&[ones.clone(), ones], 44100, 16000);
        for v in &out[10..out.len() - 10] {
            assert!((v - 0.25 * std::f32::consts::SQRT_2).abs() < 1e-4, "{v}");
        }
    }
}
