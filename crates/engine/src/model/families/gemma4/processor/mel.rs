//! The window and mel filter bank of the Gemma 4 audio feature extractor, computed as
//! transformers' `window_function` and `mel_filter_bank(norm=None, mel_scale="htk")` do.

/// The periodic Hann window of `length` samples (numpy's `hanning(length + 1)[:-1]`), rounded
/// to float32 as the extractor stores it.
pub(crate) fn periodic_hann(length: usize) -> Vec<f64> {
    let m = length as f64; // hanning(M) divides by M - 1, with M = length + 1
    (0..length).map(|n| (0.5 - 0.5 * (2.0 * std::f64::consts::PI * n as f64 / m).cos()) as f32 as f64).collect()
}

fn hertz_to_mel(hz: f64) -> f64 {
    2595.0 * (1.0 + hz / 700.0).log10()
}

fn mel_to_hertz(mel: f64) -> f64 {
    700.0 * (10f64.powf(mel / 2595.0) - 1.0)
}

/// numpy's `linspace(start, stop, num)`.
fn linspace(start: f64, stop: f64, num: usize) -> Vec<f64> {
    if num == 1 {
        return vec![start];
    }
    let step = (stop - start) / (num - 1) as f64;
    let mut values: Vec<f64> = (0..num).map(|i| start + i as f64 * step).collect();
    values[num - 1] = stop;
    values
}

/// Triangular HTK-mel filters, `[num_frequency_bins][num_mel_filters]` (bins × filters, as
/// transformers lays them out), with no area normalisation.
pub(crate) fn mel_filter_bank(
    num_frequency_bins: usize,
    num_mel_filters: usize,
    min_frequency: f64,
    max_frequency: f64,
    sampling_rate: u32,
) -> Vec<Vec<f64>> {
    let mels = linspace(hertz_to_mel(min_frequency), hertz_to_mel(max_frequency), num_mel_filters + 2);
    let edges: Vec<f64> = mels.into_iter().map(mel_to_hertz).collect();
    let bins = linspace(0.0, (sampling_rate / 2) as f64, num_frequency_bins);
    bins.iter()
        .map(|&f| {
            (0..num_mel_filters)
                .map(|m| {
                    let down = -(edges[m] - f) / (edges[m + 1] - edges[m]);
                    let up = (edges[m + 2] - f) / (edges[m + 2] - edges[m + 1]);
                    down.min(up).max(0.0)
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hann_starts_at_zero_and_peaks_in_the_middle() {
        let w = periodic_hann(320);
        assert_eq!(w[0], 0.0);
        assert_eq!(w[160], 1.0);
        assert!((w[80] - 0.5).abs() < 1e-7);
    }

    #[test]
    fn filters_are_triangles_between_their_edges() {
        let bank = mel_filter_bank(257, 128, 0.0, 8000.0, 16000);
        assert_eq!((bank.len(), bank[0].len()), (257, 128));
        assert!(bank.iter().flatten().all(|&w| (0.0..=1.0).contains(&w)));
        // Bin 0 (0 Hz) is the lower edge of the first filter.
        assert_eq!(bank[0][0], 0.0);
    }
}
