//! The Gemma 4 audio feature extractor: log-mel frames every 10 ms over 20 ms Hann windows,
//! with the first frame centred on t = 0 ("semicausal" padding), and the number of soft tokens
//! the audio tower's two stride-2 convolutions leave.

use super::config::{AudioConfig, MAX_SAMPLES, PAD_TO_MULTIPLE_OF};
use super::fft::RealFft;
use super::mel::{mel_filter_bank, periodic_hann};
use crate::error::{EngineError, MediaProblem, Result};

/// One clip ready for the audio tower.
#[derive(Debug, Clone, PartialEq)]
pub struct AudioInput {
    /// `[frames, feature_size]` row-major log-mel values; frames past the audio are 0.
    pub features: Vec<f32>,
    /// `[frames]`: whether each frame's whole window lies within the audio.
    pub mask: Vec<bool>,
    pub frames: usize,
    pub feature_size: usize,
    /// Soft tokens the clip takes in the prompt.
    pub soft_tokens: usize,
}

/// Runs the extractor on mono samples at `config.sampling_rate`, as transformers does for a
/// single clip (`extractor([samples])`): cut at 30 s, zero-padded to a multiple of 128 samples.
pub fn extract_features(samples: &[f32], config: &AudioConfig, audio_seq_length: usize) -> Result<AudioInput> {
    config.validate()?;
    if samples.is_empty() {
        return Err(EngineError::media("audio", MediaProblem::NoAudio));
    }
    let samples = &samples[..samples.len().min(MAX_SAMPLES)];
    let (frame_length, hop) = (config.frame_length(), config.hop_length());
    let pad_left = frame_length / 2;
    let padded_len = samples.len().div_ceil(PAD_TO_MULTIPLE_OF) * PAD_TO_MULTIPLE_OF;
    let scale = config.input_scale_factor as f32;
    // The waveform after left padding, its right padding, and the scale factor.
    let mut wave = vec![0f32; pad_left + padded_len];
    for (i, &s) in samples.iter().enumerate() {
        wave[pad_left + i] = if scale != 1.0 { s * scale } else { s };
    }
    for x in &mut wave[pad_left + samples.len()..] {
        *x = config.padding_value * scale;
    }

    let unfold = frame_length + 1;
    let frames = if wave.len() >= unfold { (wave.len() - unfold) / hop + 1 } else { 0 };
    if frames == 0 {
        return Err(EngineError::media("audio", MediaProblem::Unsuitable { detail: "the clip is too short for the model".into() }));
    }
    let window = periodic_hann(frame_length);
    let fft = RealFft::new(config.fft_length());
    let bins = config.fft_length() / 2 + 1;
    let filters = mel_filter_bank(bins, config.feature_size, config.min_frequency, config.max_frequency, config.sampling_rate);
    let floor = config.mel_floor;

    let mut features = vec![0f32; frames * config.feature_size];
    let mut mask = vec![false; frames];
    let mut frame = vec![0f64; frame_length];
    for (t, row) in features.chunks_exact_mut(config.feature_size).enumerate() {
        // Valid when the window's last sample is real audio (not padding on either side).
        let last = t * hop + frame_length;
        mask[t] = last >= pad_left && last - pad_left < samples.len();
        if !mask[t] {
            continue;
        }
        let source = &wave[t * hop..t * hop + unfold];
        emphasised(source, config, &mut frame);
        frame.iter_mut().zip(&window).for_each(|(x, w)| *x = (*x as f32 * *w as f32) as f64);
        let magnitudes = fft.magnitudes(&frame);
        for (m, out) in row.iter_mut().enumerate() {
            let mel: f64 = magnitudes.iter().zip(&filters).map(|(a, f)| a * f[m]).sum();
            let mut value = (mel + floor).ln();
            if let Some(mean) = &config.per_bin_mean {
                value -= mean[m];
            }
            if let Some(std) = &config.per_bin_stddev {
                value /= std[m];
            }
            *out = value as f32;
        }
    }
    let valid = mask.iter().filter(|&&m| m).count();
    Ok(AudioInput {
        features,
        mask,
        frames,
        feature_size: config.feature_size,
        soft_tokens: soft_tokens_for_frames(valid).min(audio_seq_length),
    })
}

/// The frame's `frame_length` samples from its `frame_length + 1` source samples, with
/// pre-emphasis when the config asks for it (in float32, as numpy computes it).
fn emphasised(source: &[f32], config: &AudioConfig, frame: &mut [f64]) {
    let p = config.preemphasis as f32;
    if config.preemphasis <= 0.0 {
        frame.iter_mut().zip(source).for_each(|(x, s)| *x = *s as f64);
    } else if config.preemphasis_htk_flavor {
        frame[0] = (source[0] * (1.0 - p)) as f64;
        for i in 1..frame.len() {
            frame[i] = (source[i] - p * source[i - 1]) as f64;
        }
    } else {
        for i in 0..frame.len() {
            frame[i] = (source[i + 1] - p * source[i]) as f64;
        }
    }
}

/// Soft tokens for a clip whose first `valid_frames` mel frames are real: the processor keeps
/// every other frame of the mask twice (the tower's two stride-2 convolutions) and counts.
pub fn soft_tokens_for_frames(valid_frames: usize) -> usize {
    valid_frames.div_ceil(4)
}

/// Soft tokens for a clip of `samples` samples, without computing its features.
pub fn soft_tokens(samples: usize, config: &AudioConfig, audio_seq_length: usize) -> usize {
    let samples = samples.min(MAX_SAMPLES);
    let (frame_length, hop) = (config.frame_length(), config.hop_length());
    // Frame t is valid when t × hop + frame_length − frame_length / 2 < samples.
    let reach = frame_length - frame_length / 2;
    let valid = if samples > reach { (samples - reach - 1) / hop + 1 } else { 0 };
    soft_tokens_for_frames(valid).min(audio_seq_length)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_follow_the_processor() {
        let config = AudioConfig::default();
        // 2.5 s: 249 valid frames of 250, 63 tokens; 1 s: 99 of 99, 25; 30 s: 750.
        assert_eq!(soft_tokens(40_000, &config, 750), 63);
        assert_eq!(soft_tokens(16_000, &config, 750), 25);
        assert_eq!(soft_tokens(480_000, &config, 750), 750);
        assert_eq!(soft_tokens(10_000_000, &config, 750), 750);
        assert_eq!(soft_tokens(100, &config, 750), 0);
    }

    #[test]
    fn counts_agree_with_the_extracted_mask() {
        let config = AudioConfig::default();
        for n in [161, 170, 500, 16_000, 16_100, 40_000] {
            let out = extract_features(&vec![0.1; n], &config, 750).unwrap();
            assert_eq!(out.soft_tokens, soft_tokens(n, &config, 750), "{n} samples");
        }
    }

    #[test]
    fn empty_and_tiny_clips_are_errors_not_panics() {
        let config = AudioConfig::default();
        assert!(extract_features(&[], &config, 750).is_err());
        assert!(extract_features(&[0.5; 3], &config, 750).is_err());
        assert_eq!(extract_features(&[0.5; 160], &config, 750).unwrap().soft_tokens, 0);
    }
}
