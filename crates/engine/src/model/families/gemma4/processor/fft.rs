//! Magnitudes of a real signal's discrete Fourier transform (numpy's `abs(rfft(x, n))`), by an
//! iterative radix-2 FFT in float64. Lengths are powers of two, as the Gemma 4 extractor's are.

use std::f64::consts::PI;

pub(crate) struct RealFft {
    n: usize,
    /// `e^{-2πik/n}` for `k < n/2`.
    twiddles: Vec<(f64, f64)>,
    /// Bit-reversed index of each input position.
    reversed: Vec<usize>,
}

impl RealFft {
    /// `n` must be a power of two.
    pub fn new(n: usize) -> Self {
        debug_assert!(n.is_power_of_two());
        let bits = n.trailing_zeros();
        let twiddles = (0..n / 2).map(|k| (-2.0 * PI * k as f64 / n as f64).sin_cos()).map(|(s, c)| (c, s)).collect();
        let reversed = (0..n).map(|i| if bits == 0 { 0 } else { i.reverse_bits() >> (usize::BITS - bits) }).collect();
        Self { n, twiddles, reversed }
    }

    /// `|X[k]|` for `k` in `0..=n/2`; `input` is zero-padded (or cut) to `n`.
    pub fn magnitudes(&self, input: &[f64]) -> Vec<f64> {
        let n = self.n;
        let mut re = vec![0f64; n];
        let mut im = vec![0f64; n];
        for (i, &x) in input.iter().take(n).enumerate() {
            re[self.reversed[i]] = x;
        }
        let mut size = 2;
        while size <= n {
            let (half, step) = (size / 2, n / size);
            for start in (0..n).step_by(size) {
                for j in 0..half {
                    let (wr, wi) = self.twiddles[j * step];
                    let (a, b) = (start + j, start + j + half);
                    let tr = re[b] * wr - im[b] * wi;
                    let ti = re[b] * wi + im[b] * wr;
                    re[b] = re[a] - tr;
                    im[b] = im[a] - ti;
                    re[a] += tr;
                    im[a] += ti;
                }
            }
            size *= 2;
        }
        (0..=n / 2).map(|k| re[k].hypot(im[k])).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_direct_dft() {
        let n = 16;
        let x: Vec<f64> = (0..11).map(|i| ((i * 7 % 5) as f64 - 2.0) * 0.3 + (i as f64).sin()).collect();
        let fast = RealFft::new(n).magnitudes(&x);
        for (k, got) in fast.iter().enumerate() {
            let (mut re, mut im) = (0.0, 0.0);
            for (t, v) in x.iter().enumerate() {
                let angle = -2.0 * PI * (k * t) as f64 / n as f64;
                re += v * angle.cos();
                im += v * angle.sin();
            }
            assert!((re.hypot(im) - got).abs() < 1e-12, "bin {k}");
        }
    }
}
