//! Audio: WAV, MP3, FLAC, Ogg Vorbis and AAC/M4A, decoded to mono f32 at the rate a model wants
//! as the reference loader, transformers' `load_audio`, reads each:
//! - what soundfile reads (WAV, FLAC, Ogg Vorbis, MP3): decoded (MP3 by libmpg123 as libsndfile
//!   drives it, `mp3`; the rest by `symphonia`, whose PCM, FLAC and Vorbis samples are
//!   libsndfile's), the channels' mean, then libsoxr (`resample`);
//! - what only torchcodec reads (AAC, in M4A/MP4 or raw ADTS): torchcodec decodes with the
//!   system's FFmpeg, and so does the engine where it finds one (`system_ffmpeg`: libavcodec's
//!   AAC decoder and libswresample, loaded at run time; MP4 tracks, whose AudioSpecificConfig it
//!   needs), which gives the reference's samples exactly. Elsewhere (no system FFmpeg, raw ADTS,
//!   or the libraries fail) symphonia decodes, the encoder's priming is dropped as FFmpeg drops
//!   it (the MP4 edit list, `aac`), then it is resampled and mixed as libswresample does
//!   (`swresample`). symphonia's AAC decoder is not FFmpeg's: their samples differ by a few 1e-6,
//!   mostly its perceptual-noise values, which keep 16 of the random generator's 32 bits (see
//!   crates/engine/tests/media_fidelity.rs).
//!
//! The duration limit is checked on the container's frame count before decoding, and again
//! while decoding when it isn't known.

use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::{self, CodecParameters, CodecType, DecoderOptions, CODEC_TYPE_NULL};
use symphonia::core::errors::Error as AudioError;
use symphonia::core::formats::{FormatOptions, FormatReader, Packet};
use symphonia::core::io::{MediaSource as SymphoniaSource, MediaSourceStream};
use symphonia::core::meta::MetadataOptions;
use symphonia::core::probe::Hint;

use crate::error::{MediaError, MediaProblem, Result};
use crate::system_ffmpeg::{self, AacToMono, FfmpegError};
use crate::{aac, guarded, mp3, resample, swresample, MediaLimits, ToMediaSource};

/// Mono samples in [-1, 1] at `sample_rate`.
#[derive(Debug, Clone, PartialEq)]
pub struct Audio {
    pub samples: Vec<f32>,
    pub sample_rate: u32,
}

impl Audio {
    pub fn seconds(&self) -> f64 {
        self.samples.len() as f64 / self.sample_rate as f64
    }
}

/// What a container says about its audio, without decoding it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AudioHeader {
    pub mime: &'static str,
    pub sample_rate: Option<u32>,
    pub channels: Option<u16>,
    /// `None` when the container doesn't record its length.
    pub seconds: Option<f64>,
}

/// Decodes a clip to mono at `sample_rate` Hz.
pub fn decode_audio(source: &(impl ToMediaSource + ?Sized), sample_rate: u32, limits: &MediaLimits) -> Result<Audio> {
    let source = source.to_media_source();
    let file = source.name();
    let bytes = source.read(&file, limits)?;
    decode_audio_bytes(&file, bytes, sample_rate, limits)
}

/// Decodes a clip held in memory; `file` names it in errors (its extension helps guess the
/// container).
pub fn decode_audio_bytes(file: &str, bytes: impl Into<Arc<[u8]>>, sample_rate: u32, limits: &MediaLimits) -> Result<Audio> {
    let bytes = bytes.into();
    guarded(file, || decode_guarded(file, bytes, sample_rate, limits, AacDecoders::SystemFfmpegFirst))
}

/// As `decode_audio`, but AAC always with the built-in decoder (symphonia and our libswresample
/// port), as on a machine without FFmpeg: for comparing the two.
#[doc(hidden)]
pub fn decode_audio_builtin(source: &(impl ToMediaSource + ?Sized), sample_rate: u32, limits: &MediaLimits) -> Result<Audio> {
    let source = source.to_media_source();
    let file = source.name();
    let bytes = source.read(&file, limits)?;
    guarded(&file, || decode_guarded(&file, bytes, sample_rate, limits, AacDecoders::BuiltIn))
}

/// The system's FFmpeg that AAC in MP4/M4A is decoded with (as "libavcodec 59.37.100"), or
/// `None` where there is none and the built-in decoder runs. Loads it on first call.
pub fn system_ffmpeg_version() -> Option<&'static str> {
    system_ffmpeg::system().map(|ffmpeg| ffmpeg.version())
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum AacDecoders {
    SystemFfmpegFirst,
    BuiltIn,
}

fn decode_guarded(file: &str, bytes: Arc<[u8]>, sample_rate: u32, limits: &MediaLimits, aac_decoders: AacDecoders) -> Result<Audio> {
    limits.check_bytes(file, bytes.len() as u64)?;
    if mp3::is_mp3(file, &mut Cursor::new(&bytes[..])).map_err(|e| unreadable(file, e))? {
        let decoded = mp3::decode(file, &mut Cursor::new(&bytes[..]), limits)?;
        let mono = mean_of_channels(&decoded.interleaved, decoded.channels);
        check_sample_rate(file, decoded.sample_rate)?;
        return Ok(Audio { samples: resample::resample(&mono, decoded.sample_rate, sample_rate)?, sample_rate });
    }
    let is_mp4 = is_mp4(&bytes);
    // FFmpeg drops an AAC encoder's priming samples where an MP4 edit list says so.
    let priming = if is_mp4 { aac::priming_samples(&bytes) } else { None };
    // Shared by a first reader and, if the system's FFmpeg fails, a second one.
    let mut reader = open(file, Box::new(Cursor::new(bytes.clone())))?;
    let (track, params) = audio_track(file, reader.as_ref())?;
    check_header(file, &header(&params, is_mp4), limits)?;
    if params.codec == codecs::CODEC_TYPE_AAC && aac_decoders == AacDecoders::SystemFfmpegFirst {
        // FFmpeg's decoder needs the track's AudioSpecificConfig (MP4 has one; raw ADTS not).
        if let (Some(ffmpeg), Some(config)) = (system_ffmpeg::system(), params.extra_data.as_deref()) {
            let skip = move |rate: u32| priming.map_or(0, |p| p.samples_at(rate));
            let request = FfmpegRequest { file, track, config, skip, sample_rate, n_frames: params.n_frames, limits };
            match decode_with_system_ffmpeg(ffmpeg, reader.as_mut(), request)? {
                Ok(samples) => {
                    tracing::debug!(file, ffmpeg = ffmpeg.version(), "AAC decoded by the system's FFmpeg");
                    return Ok(Audio { samples, sample_rate });
                }
                Err(error) => {
                    tracing::warn!(file, %error, "the system's FFmpeg failed; decoding the AAC with symphonia");
                    reader = open(file, Box::new(Cursor::new(bytes.clone())))?;
                }
            }
        }
    }
    if params.codec == codecs::CODEC_TYPE_AAC {
        tracing::debug!(file, "AAC decoded by symphonia");
    }
    let decoded = decode(file, reader.as_mut(), track, &params, limits)?;
    check_sample_rate(file, decoded.sample_rate)?;
    let samples = if params.codec == codecs::CODEC_TYPE_AAC {
        // The reference reads AAC only through torchcodec: FFmpeg's skip, libswresample.
        let skip = priming.map_or(0, |p| p.samples_at(decoded.sample_rate)) as usize;
        let channels: Vec<Vec<f32>> = decoded.channels.into_iter().map(|c| c.get(skip..).unwrap_or_default().to_vec()).collect();
        if channels.first().is_none_or(Vec::is_empty) {
            return Err(MediaError::media(file, MediaProblem::NoAudio));
        }
        swresample::resample_to_mono(&channels, decoded.sample_rate, sample_rate)
    } else {
        resample::resample(&decoded.mono(), decoded.sample_rate, sample_rate)?
    };
    Ok(Audio { samples, sample_rate })
}

/// What `decode_with_system_ffmpeg` decodes.
struct FfmpegRequest<'a, Skip> {
    file: &'a str,
    track: u32,
    /// The AudioSpecificConfig.
    config: &'a [u8],
    /// The encoder's priming in samples, at the decoded rate.
    skip: Skip,
    sample_rate: u32,
    /// What the container promises.
    n_frames: Option<u64>,
    limits: &'a MediaLimits,
}

/// The track's AAC packets through the system's FFmpeg, to mono at `sample_rate` as torchcodec
/// gives them. The outer error is the file's (the same errors as `decode` gives); the inner one
/// the libraries' (the caller decodes with symphonia instead).
fn decode_with_system_ffmpeg(
    ffmpeg: &'static system_ffmpeg::Ffmpeg,
    reader: &mut dyn FormatReader,
    request: FfmpegRequest<'_, impl Fn(u32) -> u64 + 'static>,
) -> Result<std::result::Result<Vec<f32>, FfmpegError>> {
    let FfmpegRequest { file, track, config, skip, sample_rate, n_frames, limits } = request;
    let mut decoder = match AacToMono::open(ffmpeg, config, sample_rate, skip) {
        Ok(decoder) => decoder,
        Err(error) => return Ok(Err(error)),
    };
    while let Some(packet) = next_packet_of(reader, track, file)? {
        if let Err(error) = decoder.send(packet.buf()) {
            return Ok(Err(error));
        }
        let (frames, rate) = decoder.decoded();
        if rate > 0 && frames as f64 > limits.max_audio_seconds * rate as f64 {
            return Err(MediaError::media(file, MediaProblem::TooLong { seconds: None, limit: limits.max_audio_seconds }));
        }
    }
    let samples = match decoder.finish() {
        Ok(samples) => samples,
        Err(error) => return Ok(Err(error)),
    };
    if samples.is_empty() {
        let detail = match (decoder.decoded().0, decoder.damaged_packets(), n_frames) {
            // Only the encoder's priming, or nothing at all.
            (1.., _, _) | (0, 0, None | Some(0)) => return Err(MediaError::media(file, MediaProblem::NoAudio)),
            (0, 0, Some(_)) => "its header promises audio but the samples are missing".to_string(),
            (0, n, _) => format!("none of its {n} audio packets decoded"),
        };
        return Err(MediaError::media(file, MediaProblem::Corrupt { detail }));
    }
    Ok(Ok(samples))
}

/// Interleaved frames to their channels' mean: summed in order, then divided, as numpy's
/// `mean(axis=0)` over soundfile's frames gives it, bit for bit.
fn mean_of_channels(interleaved: &[f32], channels: usize) -> Vec<f32> {
    let count = channels as f32;
    interleaved.chunks_exact(channels).map(|frame| frame.iter().sum::<f32>() / count).collect()
}

fn unreadable(file: &str, error: std::io::Error) -> MediaError {
    MediaError::media(file, MediaProblem::Unreadable { detail: error.to_string() })
}

/// Reads only the container's headers and checks the duration limit.
pub(crate) fn probe(file: &str, mut source: Box<dyn SymphoniaSource>, is_mp4: bool, limits: &MediaLimits) -> Result<AudioHeader> {
    if !is_mp4 && mp3::is_mp3(file, &mut source).map_err(|e| unreadable(file, e))? {
        let found = mp3::probe(file, &mut source)?;
        let header = AudioHeader {
            mime: "audio/mpeg",
            sample_rate: Some(found.sample_rate),
            channels: Some(found.channels),
            seconds: found.seconds(),
        };
        check_header(file, &header, limits)?;
        return Ok(header);
    }
    let reader = open(file, source)?;
    let (_, params) = audio_track(file, reader.as_ref())?;
    let header = header(&params, is_mp4);
    check_header(file, &header, limits)?;
    if let Err(AudioError::Unsupported(_)) = codecs_registry().make(&params, &DecoderOptions::default()) {
        return Err(unsupported_codec(file, params.codec));
    }
    Ok(header)
}

pub(crate) fn is_mp4(start: &[u8]) -> bool {
    start.get(4..8) == Some(b"ftyp")
}

fn codecs_registry() -> &'static codecs::CodecRegistry {
    symphonia::default::get_codecs()
}

fn open(file: &str, mut source: Box<dyn SymphoniaSource>) -> Result<Box<dyn FormatReader>> {
    // A lying MP4 sample table would make symphonia's reader abort the process.
    crate::video::check_sample_tables(file, source.as_mut())?;
    let stream = MediaSourceStream::new(source, Default::default());
    let mut hint = Hint::new();
    if let Some(extension) = Path::new(file).extension().and_then(|e| e.to_str()) {
        hint.with_extension(extension);
    }
    // Gapless: trims MP3/AAC encoder delay and padding, as reference decoders do.
    let options = FormatOptions { enable_gapless: true, ..Default::default() };
    match symphonia::default::get_probe().format(&hint, stream, &options, &MetadataOptions::default()) {
        Ok(probed) => Ok(probed.format),
        Err(AudioError::Unsupported(_)) => Err(MediaError::media(file, MediaProblem::UnsupportedAudio)),
        Err(AudioError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            Err(MediaError::media(file, MediaProblem::UnsupportedAudio))
        }
        Err(e) => Err(corrupt(file, e)),
    }
}

fn audio_track(file: &str, reader: &dyn FormatReader) -> Result<(u32, CodecParameters)> {
    let track = reader
        .tracks()
        .iter()
        .find(|t| t.codec_params.codec != CODEC_TYPE_NULL)
        .ok_or_else(|| MediaError::media(file, MediaProblem::NoAudio))?;
    Ok((track.id, track.codec_params.clone()))
}

fn header(params: &CodecParameters, is_mp4: bool) -> AudioHeader {
    let seconds = params.n_frames.and_then(|frames| match (params.time_base, params.sample_rate) {
        (Some(base), _) => {
            let t = base.calc_time(frames);
            Some(t.seconds as f64 + t.frac)
        }
        (None, Some(rate)) => Some(frames as f64 / rate as f64),
        _ => None,
    });
    let mime = match params.codec {
        codecs::CODEC_TYPE_FLAC => "audio/flac",
        codecs::CODEC_TYPE_VORBIS | codecs::CODEC_TYPE_OPUS => "audio/ogg",
        _ if is_mp4 => "audio/mp4",
        codecs::CODEC_TYPE_AAC => "audio/aac",
        _ => "audio/wav",
    };
    AudioHeader { mime, sample_rate: params.sample_rate, channels: params.channels.map(|c| c.count() as u16), seconds }
}

/// The resamplers are C and hand-written loops sized by the rate's ratio: a header's rate is
/// checked before it reaches them (a WAV claiming 788 MHz made libsoxr read past its buffer).
fn check_sample_rate(file: &str, rate: u32) -> Result<()> {
    let limit = confab_limits::MEDIA_AUDIO_SAMPLE_RATE;
    if (1_000..=limit.value).contains(&u64::from(rate)) {
        return Ok(());
    }
    let detail = format!("its sample rate of {rate} Hz is outside 1,000 Hz to the limit {limit}");
    Err(MediaError::media(file, MediaProblem::Corrupt { detail }))
}

fn check_header(file: &str, header: &AudioHeader, limits: &MediaLimits) -> Result<()> {
    match header.seconds {
        Some(s) if s <= 0.0 => Err(MediaError::media(file, MediaProblem::NoAudio)),
        Some(s) => limits.check_seconds(file, s),
        None => Ok(()),
    }
}

/// A whole clip's samples, one vector per channel, at its own rate.
#[derive(Debug)]
struct Decoded {
    channels: Vec<Vec<f32>>,
    sample_rate: u32,
}

impl Decoded {
    /// The channels' mean: summed in order, then divided, as numpy's `mean(axis=0)` gives it.
    fn mono(&self) -> Vec<f32> {
        match self.channels.as_slice() {
            [mono] => mono.clone(),
            channels => {
                let count = channels.len() as f32;
                (0..channels[0].len()).map(|i| channels.iter().map(|c| c[i]).sum::<f32>() / count).collect()
            }
        }
    }
}

/// Decodes every packet of `track`.
fn decode(file: &str, reader: &mut dyn FormatReader, track: u32, params: &CodecParameters, limits: &MediaLimits) -> Result<Decoded> {
    let mut decoder = codecs_registry().make(params, &DecoderOptions::default()).map_err(|e| match e {
        AudioError::Unsupported(_) => unsupported_codec(file, params.codec),
        other => corrupt(file, other),
    })?;
    let mut rate = params.sample_rate.unwrap_or(0);
    let (mut planes, mut skipped) = (Vec::<Vec<f32>>::new(), 0usize);
    let mut buffer: Option<SampleBuffer<f32>> = None;
    while let Some(packet) = next_packet_of(reader, track, file)? {
        let decoded = match decoder.decode(&packet) {
            Ok(decoded) => decoded,
            // A damaged packet: skip it, as players do.
            Err(AudioError::DecodeError(_)) => {
                skipped += 1;
                continue;
            }
            Err(AudioError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(corrupt(file, e)),
        };
        let spec = *decoded.spec();
        rate = spec.rate;
        let channels = spec.channels.count().max(1);
        let frames = decoded.frames();
        if buffer.as_ref().is_none_or(|b| b.capacity() < frames * channels) {
            buffer = Some(SampleBuffer::new(decoded.capacity() as u64, spec));
        }
        let buffer = buffer.as_mut().expect("allocated above");
        buffer.copy_interleaved_ref(decoded);
        if planes.len() != channels {
            if !planes.is_empty() {
                return Err(corrupt_detail(file, "the channel count changes midway"));
            }
            planes = vec![Vec::new(); channels];
        }
        for frame in buffer.samples().chunks_exact(channels) {
            for (plane, &sample) in planes.iter_mut().zip(frame) {
                plane.push(sample);
            }
        }
        let frames = planes[0].len();
        if rate > 0 && frames as f64 > limits.max_audio_seconds * rate as f64 {
            return Err(MediaError::media(file, MediaProblem::TooLong { seconds: None, limit: limits.max_audio_seconds }));
        }
    }
    if planes.first().is_none_or(Vec::is_empty) || rate == 0 {
        let detail = match (skipped, params.n_frames) {
            (0, Some(frames)) if frames > 0 => "its header promises audio but the samples are missing".to_string(),
            (0, _) => return Err(MediaError::media(file, MediaProblem::NoAudio)),
            (n, _) => format!("none of its {n} audio packets decoded"),
        };
        return Err(MediaError::media(file, MediaProblem::Corrupt { detail }));
    }
    Ok(Decoded { channels: planes, sample_rate: rate })
}

fn corrupt_detail(file: &str, detail: &str) -> MediaError {
    MediaError::media(file, MediaProblem::Corrupt { detail: detail.into() })
}

fn unsupported_codec(file: &str, codec: CodecType) -> MediaError {
    let name = match codec {
        codecs::CODEC_TYPE_OPUS => "Opus".to_string(),
        codecs::CODEC_TYPE_ALAC => "ALAC".to_string(),
        codecs::CODEC_TYPE_WAVPACK => "WavPack".to_string(),
        codecs::CODEC_TYPE_MP3 | codecs::CODEC_TYPE_MP2 | codecs::CODEC_TYPE_MP1 => "MPEG audio inside another container".to_string(),
        other => format!("codec {other}"),
    };
    MediaError::media(file, MediaProblem::UnsupportedCodec { codec: name })
}

/// The next packet of `track`; `None` at the end of the file.
fn next_packet_of(reader: &mut dyn FormatReader, track: u32, file: &str) -> Result<Option<Packet>> {
    loop {
        match reader.next_packet() {
            Ok(packet) if packet.track_id() == track => return Ok(Some(packet)),
            Ok(_) => continue,
            Err(AudioError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(AudioError::ResetRequired) => return Ok(None),
            Err(e) => return Err(corrupt(file, e)),
        }
    }
}

fn corrupt(file: &str, error: AudioError) -> MediaError {
    MediaError::media(file, MediaProblem::Corrupt { detail: error.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by libFuzzer (audio_wav, AddressSanitizer): a WAV whose header claims 788 MHz sent
    /// libsoxr reading past its buffer.
    #[test]
    fn a_wav_claiming_an_absurd_sample_rate_is_refused_before_resampling() {
        let wav = |rate: u32| {
            let data: Vec<u8> = (0..4000u32).flat_map(|i| ((i % 200) as i16 * 100).to_le_bytes()).collect();
            let mut bytes = b"RIFF".to_vec();
            bytes.extend((36 + data.len() as u32).to_le_bytes());
            bytes.extend(b"WAVEfmt ");
            bytes.extend(16u32.to_le_bytes());
            bytes.extend(1u16.to_le_bytes()); // PCM
            bytes.extend(1u16.to_le_bytes()); // mono
            bytes.extend(rate.to_le_bytes());
            bytes.extend(rate.wrapping_mul(2).to_le_bytes());
            bytes.extend(2u16.to_le_bytes());
            bytes.extend(16u16.to_le_bytes());
            bytes.extend(b"data");
            bytes.extend((data.len() as u32).to_le_bytes());
            bytes.extend(data);
            bytes
        };
        for rate in [788_551_202, 768_001, 999] {
            let error = decode_audio_bytes("a.wav", wav(rate), 16_000, &MediaLimits::default()).expect_err("an absurd rate");
            assert!(error.to_string().contains("media.audio_sample_rate"), "{rate}: {error}");
        }
        decode_audio_bytes("a.wav", wav(48_000), 16_000, &MediaLimits::default()).unwrap();
    }

    #[test]
    fn the_duration_limit_holds_while_decoding_when_the_container_does_not_say() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/media/sine1k.flac");
        let mut reader = open("sine1k.flac", Box::new(std::fs::File::open(path).unwrap())).unwrap();
        let (track, mut params) = audio_track("sine1k.flac", reader.as_ref()).unwrap();
        params.n_frames = None; // as for a stream without a length
        let limits = MediaLimits { max_audio_seconds: 0.2, ..Default::default() };
        let error = decode("sine1k.flac", reader.as_mut(), track, &params, &limits).unwrap_err();
        let expected = MediaProblem::TooLong { seconds: None, limit: 0.2 };
        assert!(matches!(error, MediaError::Media { problem, .. } if problem == expected));
        assert_eq!(
            MediaError::media("a.flac", expected).to_string(),
            "a.flac: the clip is longer than the 0.2 s limit (media.audio_seconds); trim it and try again"
        );
    }

    /// FFmpeg before 5.1 takes channel layouts as 64-bit masks (`swr_alloc_set_opts`, the codec
    /// context's `channel_layout`); 5.1 to 6.x still have that API beside the new one, so where
    /// such a release is installed the older path is checked against the newer, sample for sample.
    #[test]
    fn ffmpeg_before_5_1s_channel_masks_give_the_same_samples_as_its_layouts() {
        let Some(newest) = system_ffmpeg::system() else {
            tracing::warn!("no system FFmpeg here: nothing to check");
            return;
        };
        let masks: &'static system_ffmpeg::Ffmpeg = match system_ffmpeg::Ffmpeg::load_with_masks() {
            Ok(masks) => Box::leak(Box::new(masks)),
            Err(error) => {
                tracing::warn!("{}: no mask API ({error}): nothing to check", newest.version());
                return;
            }
        };
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/media_fidelity");
        for clip in ["clip_8000_mono.m4a", "clip_44100_stereo.m4a", "clip_48000_stereo.m4a"] {
            let bytes = std::fs::read(corpus.join(clip)).unwrap();
            let priming = aac::priming_samples(&bytes);
            let decode_with = |ffmpeg: &'static system_ffmpeg::Ffmpeg| {
                let mut reader = open(clip, Box::new(Cursor::new(bytes.clone()))).unwrap();
                let (track, params) = audio_track(clip, reader.as_ref()).unwrap();
                let config = params.extra_data.as_deref().unwrap();
                let skip = move |rate: u32| priming.map_or(0, |p| p.samples_at(rate));
                let limits = MediaLimits::default();
                let request =
                    FfmpegRequest { file: clip, track, config, skip, sample_rate: 16_000, n_frames: params.n_frames, limits: &limits };
                decode_with_system_ffmpeg(ffmpeg, reader.as_mut(), request).unwrap().unwrap()
            };
            let (new, old) = (decode_with(newest), decode_with(masks));
            assert!(!new.is_empty());
            assert!(new == old, "{clip}: the two channel layout APIs give different samples");
        }
    }
}
