//! Resampling as the reference pipeline does it: transformers' `load_audio` (and `librosa.load`)
//! resample with libsoxr at its 'HQ' quality (20-bit, linear phase), then pad or trim to
//! `ceil(len × to / from)` samples. We call the same libsoxr (0.1.3, compiled from
//! `native/soxr` by build.rs) with the same settings, in the same input chunks as python-soxr
//! feeds it; on x86-64 with the same SIMD core, so the samples are python-soxr's bit for bit.

use std::ffi::CStr;
use std::ptr;

use crate::error::{MediaError, Result};

/// python-soxr's chunk: 48000 output samples' worth of input per call.
const CHUNK_OUTPUT_SAMPLES: f64 = 48000.0;

/// `samples` at `from` Hz, resampled to `to` Hz: `ceil(len × to / from)` samples.
pub fn resample(samples: &[f32], from: u32, to: u32) -> Result<Vec<f32>> {
    if from == 0 || to == 0 {
        return Err(MediaError::invalid("sample_rate", format!("{from} Hz to {to} Hz: rates must be positive")));
    }
    if from == to || samples.is_empty() {
        return Ok(samples.to_vec());
    }
    let wanted = (samples.len() as u64 * to as u64).div_ceil(from as u64) as usize;
    let resampler = Soxr::new(from, to)?;
    // Room for everything soxr can give (python-soxr's bound), then trimmed or padded.
    let room = (samples.len() as f64 * to as f64 / from as f64) as usize + 1;
    let mut out = vec![0f32; room];
    let chunk = ((CHUNK_OUTPUT_SAMPLES * from as f64 / to as f64) as usize).max(1);
    let mut written = 0;
    for input in samples.chunks(chunk) {
        written += resampler.process(Some(input), &mut out[written..])?;
    }
    written += resampler.process(None, &mut out[written..])?;
    out.truncate(written);
    out.resize(wanted, 0.0);
    Ok(out)
}

/// The few parts of libsoxr's C API (soxr.h) that resampling one buffer needs.
#[allow(non_camel_case_types)]
mod ffi {
    use std::os::raw::{c_char, c_uint, c_ulong, c_void};

    #[repr(C)]
    pub struct Soxr {
        _opaque: [u8; 0],
    }
    pub type soxr_t = *mut Soxr;
    pub type soxr_error_t = *const c_char;

    /// soxr_datatype_t's SOXR_FLOAT32_I: interleaved float32.
    pub const SOXR_FLOAT32_I: c_uint = 0;
    /// 'HQ': 20-bit precision.
    pub const SOXR_20_BITQ: c_ulong = 4;
    pub const SOXR_LINEAR_PHASE: c_ulong = 0;

    #[repr(C)]
    pub struct IoSpec {
        itype: c_uint,
        otype: c_uint,
        scale: f64,
        e: *mut c_void,
        flags: c_ulong,
    }

    #[repr(C)]
    pub struct QualitySpec {
        precision: f64,
        phase_response: f64,
        passband_end: f64,
        stopband_begin: f64,
        e: *mut c_void,
        flags: c_ulong,
    }

    unsafe extern "C" {
        pub fn soxr_io_spec(itype: c_uint, otype: c_uint) -> IoSpec;
        pub fn soxr_quality_spec(recipe: c_ulong, flags: c_ulong) -> QualitySpec;
        pub fn soxr_create(
            input_rate: f64,
            output_rate: f64,
            num_channels: c_uint,
            error: *mut soxr_error_t,
            io_spec: *const IoSpec,
            quality_spec: *const QualitySpec,
            runtime_spec: *const c_void,
        ) -> soxr_t;
        pub fn soxr_process(
            resampler: soxr_t,
            input: *const c_void,
            ilen: usize,
            idone: *mut usize,
            output: *mut c_void,
            olen: usize,
            odone: *mut usize,
        ) -> soxr_error_t;
        pub fn soxr_delete(resampler: soxr_t);
    }
}

/// One mono float32 libsoxr resampler at 'HQ' quality.
struct Soxr(ffi::soxr_t);

impl Soxr {
    fn new(from: u32, to: u32) -> Result<Self> {
        let mut error: ffi::soxr_error_t = ptr::null();
        // SAFETY: the specs are plain values that soxr_create copies; a null runtime spec asks
        // for the defaults.
        let handle = unsafe {
            let io = ffi::soxr_io_spec(ffi::SOXR_FLOAT32_I, ffi::SOXR_FLOAT32_I);
            let quality = ffi::soxr_quality_spec(ffi::SOXR_20_BITQ | ffi::SOXR_LINEAR_PHASE, 0);
            ffi::soxr_create(from as f64, to as f64, 1, &mut error, &io, &quality, ptr::null())
        };
        if handle.is_null() || !error.is_null() {
            if !handle.is_null() {
                // SAFETY: a handle soxr_create returned, deleted once.
                unsafe { ffi::soxr_delete(handle) };
            }
            return Err(soxr_error(error, from, to));
        }
        Ok(Self(handle))
    }

    /// Feeds `input` (or, with `None`, flushes what soxr holds) and writes what it gives into
    /// `out`; returns how many samples were written.
    fn process(&self, input: Option<&[f32]>, out: &mut [f32]) -> Result<usize> {
        let (input_ptr, input_len) = input.map_or((ptr::null(), 0), |x| (x.as_ptr().cast(), x.len()));
        let mut done = 0usize;
        // SAFETY: the pointers and lengths describe live buffers of f32, the io spec's type;
        // soxr reads all of `input` (idone is null) and writes at most `out.len()` samples.
        let error =
            unsafe { ffi::soxr_process(self.0, input_ptr, input_len, ptr::null_mut(), out.as_mut_ptr().cast(), out.len(), &mut done) };
        if !error.is_null() {
            return Err(soxr_error(error, 0, 0));
        }
        Ok(done)
    }
}

impl Drop for Soxr {
    fn drop(&mut self) {
        // SAFETY: the handle came from soxr_create and is deleted only here.
        unsafe { ffi::soxr_delete(self.0) }
    }
}

fn soxr_error(error: ffi::soxr_error_t, from: u32, to: u32) -> MediaError {
    let detail = if error.is_null() {
        "out of memory".to_string()
    } else {
        // SAFETY: libsoxr's errors are static NUL-terminated strings.
        unsafe { CStr::from_ptr(error) }.to_string_lossy().into_owned()
    };
    MediaError::invalid("sample_rate", format!("resampling {from} Hz to {to} Hz failed: {detail}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    fn sine(freq: f64, rate: u32, seconds: f64) -> Vec<f32> {
        (0..(rate as f64 * seconds) as usize).map(|i| (2.0 * PI * freq * i as f64 / rate as f64).sin() as f32).collect()
    }

    fn rms(x: &[f32]) -> f64 {
        (x.iter().map(|v| (*v as f64).powi(2)).sum::<f64>() / x.len() as f64).sqrt()
    }

    #[test]
    fn lengths_follow_the_ratio() {
        assert_eq!(resample(&vec![0.0; 44100], 44100, 16000).unwrap().len(), 16000);
        assert_eq!(resample(&vec![0.0; 8000], 8000, 16000).unwrap().len(), 16000);
        assert_eq!(resample(&[0.0; 10], 48000, 16000).unwrap().len(), 4);
        assert_eq!(resample(&[1.0, 2.0], 16000, 16000).unwrap(), vec![1.0, 2.0]);
    }

    #[test]
    fn a_tone_in_the_passband_keeps_its_level_and_phase() {
        for (from, to) in [(44100, 16000), (16000, 48000), (44100, 16001)] {
            let out = resample(&sine(440.0, from, 1.0), from, to).unwrap();
            let expected = sine(440.0, to, 1.0);
            let middle = to as usize / 4..to as usize * 3 / 4;
            let error: Vec<f32> = middle.clone().map(|i| out[i] - expected[i]).collect();
            assert!(rms(&error) < 1e-3, "{from}->{to}: rms error {}", rms(&error));
        }
    }

    #[test]
    fn a_tone_above_the_new_nyquist_is_removed_not_aliased() {
        let out = resample(&sine(10_000.0, 44100, 1.0), 44100, 16000).unwrap();
        assert!(rms(&out[4000..12000]) < 1e-3, "rms {}", rms(&out[4000..12000]));
    }

    #[test]
    fn a_zero_rate_is_an_error_not_a_panic() {
        assert!(resample(&[0.0; 4], 0, 16000).is_err());
    }
}
