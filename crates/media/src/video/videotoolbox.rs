//! HEVC decoding on macOS through the system's decoder, VideoToolbox (hardware on Apple
//! silicon), behind the track decoder's `Codec` and `Decoder` (`track.rs`).
//!
//! A decoder is a `VTDecompressionSession` made from `hvcC`'s parameter sets
//! (`CMVideoFormatDescriptionCreateFromHEVCParameterSets`), asked for 8-bit 4:2:0 bi-planar
//! pictures (NV12: `420v`, or `420f` when the SPS says full range; VideoToolbox converts Main 10
//! and other formats to it). Each sample goes in as it is stored (length-prefixed NAL units) in
//! a `CMSampleBuffer`, tagged with its display index; without temporal processing the session
//! outputs pictures in decode order, and the track decoder puts them in display order. The
//! callback only queues the decoded `CVPixelBuffer`s; they are read after each call, and only
//! the requested ones are copied, as Y, U and V planes, for `yuv.rs`'s conversion to RGB (the
//! same arithmetic as H.264's, with the matrix and range the SPS signals).
//!
//! The declarations below are the C API of the CoreFoundation, CoreMedia, CoreVideo and
//! VideoToolbox frameworks, written from Apple's headers (macOS 10.13 and later); every object
//! created here is owned by a `Cf` and released when it goes. Nothing here has run yet: CI and
//! development are on Linux, where `scripts/cross_check.sh mac` compiles this file for Apple
//! silicon but cannot link or run it (see `tests/video.rs`, the macOS-only test).

use std::ffi::c_void;
use std::os::raw::c_int;
use std::ptr::{null, null_mut};
use std::sync::{Mutex, PoisonError};

use super::hevc::{HevcConfig, Sps};
use super::track::{self, PictureSink};
use super::yuv::YuvFrame;
use crate::error::{MediaError, MediaProblem, Result};

type OSStatus = i32;
type CFTypeRef = *const c_void;
type CFAllocatorRef = *const c_void;
type CFDictionaryRef = *const c_void;
type CFStringRef = *const c_void;
type CFNumberRef = *const c_void;
type CFIndex = isize;
type CMFormatDescriptionRef = *const c_void;
type CMBlockBufferRef = *mut c_void;
type CMSampleBufferRef = *mut c_void;
type CVPixelBufferRef = *mut c_void;
type VTDecompressionSessionRef = *mut c_void;

/// CoreMedia's rational time. (The header packs it to 4 bytes; its fields need no padding
/// either way, so the layout is the same.)
#[repr(C)]
#[derive(Clone, Copy)]
struct CMTime {
    value: i64,
    timescale: i32,
    flags: u32,
    epoch: i64,
}

/// kCMTimeInvalid: all zero.
const TIME_INVALID: CMTime = CMTime { value: 0, timescale: 0, flags: 0, epoch: 0 };
const CM_TIME_FLAGS_VALID: u32 = 1;

#[repr(C)]
struct CMSampleTimingInfo {
    duration: CMTime,
    presentation_time_stamp: CMTime,
    decode_time_stamp: CMTime,
}

/// `VTDecompressionOutputCallback`.
type OutputCallback = unsafe extern "C" fn(
    output_ref_con: *mut c_void,
    source_frame_ref_con: *mut c_void,
    status: OSStatus,
    info_flags: u32,
    image_buffer: CVPixelBufferRef,
    presentation_time_stamp: CMTime,
    presentation_duration: CMTime,
);

#[repr(C)]
struct VTDecompressionOutputCallbackRecord {
    decompression_output_callback: Option<OutputCallback>,
    decompression_output_ref_con: *mut c_void,
}

/// CFDictionaryKeyCallBacks / CFDictionaryValueCallBacks: only their addresses are used.
#[repr(C)]
struct CFDictionaryCallBacks {
    _opaque: [u8; 0],
}

#[link(name = "CoreFoundation", kind = "framework")]
extern "C" {
    static kCFTypeDictionaryKeyCallBacks: CFDictionaryCallBacks;
    static kCFTypeDictionaryValueCallBacks: CFDictionaryCallBacks;
    fn CFRetain(cf: CFTypeRef) -> CFTypeRef;
    fn CFRelease(cf: CFTypeRef);
    fn CFNumberCreate(allocator: CFAllocatorRef, number_type: CFIndex, value: *const c_void) -> CFNumberRef;
    fn CFDictionaryCreate(
        allocator: CFAllocatorRef,
        keys: *const *const c_void,
        values: *const *const c_void,
        count: CFIndex,
        key_call_backs: *const CFDictionaryCallBacks,
        value_call_backs: *const CFDictionaryCallBacks,
    ) -> CFDictionaryRef;
}

#[link(name = "CoreMedia", kind = "framework")]
extern "C" {
    fn CMVideoFormatDescriptionCreateFromHEVCParameterSets(
        allocator: CFAllocatorRef,
        parameter_set_count: usize,
        parameter_set_pointers: *const *const u8,
        parameter_set_sizes: *const usize,
        nal_unit_header_length: c_int,
        extensions: CFDictionaryRef,
        format_description_out: *mut CMFormatDescriptionRef,
    ) -> OSStatus;
    fn CMBlockBufferCreateWithMemoryBlock(
        structure_allocator: CFAllocatorRef,
        memory_block: *mut c_void,
        block_length: usize,
        block_allocator: CFAllocatorRef,
        custom_block_source: *const c_void,
        offset_to_data: usize,
        data_length: usize,
        flags: u32,
        block_buffer_out: *mut CMBlockBufferRef,
    ) -> OSStatus;
    fn CMBlockBufferReplaceDataBytes(
        source_bytes: *const c_void,
        destination_buffer: CMBlockBufferRef,
        offset_into_destination: usize,
        data_length: usize,
    ) -> OSStatus;
    fn CMSampleBufferCreateReady(
        allocator: CFAllocatorRef,
        data_buffer: CMBlockBufferRef,
        format_description: CMFormatDescriptionRef,
        sample_count: CFIndex,
        sample_timing_entry_count: CFIndex,
        sample_timing_array: *const CMSampleTimingInfo,
        sample_size_entry_count: CFIndex,
        sample_size_array: *const usize,
        sample_buffer_out: *mut CMSampleBufferRef,
    ) -> OSStatus;
}

#[link(name = "CoreVideo", kind = "framework")]
extern "C" {
    static kCVPixelBufferPixelFormatTypeKey: CFStringRef;
    fn CVPixelBufferGetPixelFormatType(buffer: CVPixelBufferRef) -> u32;
    fn CVPixelBufferGetPlaneCount(buffer: CVPixelBufferRef) -> usize;
    fn CVPixelBufferGetWidth(buffer: CVPixelBufferRef) -> usize;
    fn CVPixelBufferGetHeight(buffer: CVPixelBufferRef) -> usize;
    fn CVPixelBufferGetHeightOfPlane(buffer: CVPixelBufferRef, plane: usize) -> usize;
    fn CVPixelBufferGetBytesPerRowOfPlane(buffer: CVPixelBufferRef, plane: usize) -> usize;
    fn CVPixelBufferGetBaseAddressOfPlane(buffer: CVPixelBufferRef, plane: usize) -> *mut c_void;
    fn CVPixelBufferLockBaseAddress(buffer: CVPixelBufferRef, lock_flags: u64) -> i32;
    fn CVPixelBufferUnlockBaseAddress(buffer: CVPixelBufferRef, unlock_flags: u64) -> i32;
}

#[link(name = "VideoToolbox", kind = "framework")]
extern "C" {
    fn VTDecompressionSessionCreate(
        allocator: CFAllocatorRef,
        video_format_description: CMFormatDescriptionRef,
        video_decoder_specification: CFDictionaryRef,
        destination_image_buffer_attributes: CFDictionaryRef,
        output_callback: *const VTDecompressionOutputCallbackRecord,
        decompression_session_out: *mut VTDecompressionSessionRef,
    ) -> OSStatus;
    fn VTDecompressionSessionDecodeFrame(
        session: VTDecompressionSessionRef,
        sample_buffer: CMSampleBufferRef,
        decode_flags: u32,
        source_frame_ref_con: *mut c_void,
        info_flags_out: *mut u32,
    ) -> OSStatus;
    fn VTDecompressionSessionFinishDelayedFrames(session: VTDecompressionSessionRef) -> OSStatus;
    fn VTDecompressionSessionWaitForAsynchronousFrames(session: VTDecompressionSessionRef) -> OSStatus;
    fn VTDecompressionSessionInvalidate(session: VTDecompressionSessionRef);
}

/// VideoToolbox sessions decoding one track's pieces at once, at most.
const MAX_SESSIONS: usize = 4;

const CF_NUMBER_SINT32_TYPE: CFIndex = 3;
/// kCMBlockBufferAssureMemoryNowFlag: allocate the block now, so the bytes can be copied in.
const BLOCK_BUFFER_ASSURE_MEMORY_NOW: u32 = 1;
/// kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange ('420v') and ...FullRange ('420f').
const NV12_VIDEO_RANGE: u32 = u32::from_be_bytes(*b"420v");
const NV12_FULL_RANGE: u32 = u32::from_be_bytes(*b"420f");
const PIXEL_BUFFER_LOCK_READ_ONLY: u64 = 1;
/// VideoToolbox's errors (VTErrors.h) that say the decoder cannot take this stream.
const VT_COULD_NOT_FIND_VIDEO_DECODER: OSStatus = -12906;
const VT_VIDEO_DECODER_UNSUPPORTED_DATA_FORMAT: OSStatus = -12910;
/// ... and the one that says the data is bad.
const VT_VIDEO_DECODER_BAD_DATA: OSStatus = -12909;

/// One owned reference to a CoreFoundation object (format descriptions, sample and block
/// buffers, pixel buffers, dictionaries, numbers), released when dropped.
struct Cf(CFTypeRef);

// SAFETY: CoreFoundation's retain and release are thread-safe, and the pixel buffers held here
// are read (under their lock) by one thread at a time; the callback hands them over through
// a mutex.
unsafe impl Send for Cf {}

impl Cf {
    /// Takes ownership of a reference a Create function returned; `None` for null.
    fn take(object: CFTypeRef) -> Option<Self> {
        (!object.is_null()).then_some(Self(object))
    }
}

impl Drop for Cf {
    fn drop(&mut self) {
        // SAFETY: a non-null reference this value owns, released once.
        unsafe { CFRelease(self.0) }
    }
}

/// What the output callback reports for one frame.
enum Output {
    Picture {
        index: u64,
        buffer: Cf,
    },
    Failed {
        index: u64,
        status: OSStatus,
    },
    /// No picture and no error (the decoder dropped it).
    Dropped,
}

/// Where the callback queues its outputs; boxed, so its address (the callback's refcon) stays
/// put while the session lives.
type Outputs = Mutex<Vec<Output>>;

unsafe extern "C" fn on_output(
    output_ref_con: *mut c_void,
    source_frame_ref_con: *mut c_void,
    status: OSStatus,
    _info_flags: u32,
    image_buffer: CVPixelBufferRef,
    _presentation_time_stamp: CMTime,
    _presentation_duration: CMTime,
) {
    // The display index went in as the frame's refcon (a number, not a pointer).
    let index = source_frame_ref_con as usize as u64;
    let output = if status != 0 {
        Output::Failed { index, status }
    } else if image_buffer.is_null() {
        Output::Dropped
    } else {
        // SAFETY: the buffer is valid for the callback; retained, it stays valid after it.
        Output::Picture { index, buffer: Cf(unsafe { CFRetain(image_buffer) }) }
    };
    // SAFETY: the refcon is the session's `Outputs`, which outlives the session (see `Session`).
    let outputs = unsafe { &*(output_ref_con as *const Outputs) };
    outputs.lock().unwrap_or_else(PoisonError::into_inner).push(output);
}

/// A decompression session: waited for and invalidated before it is released.
struct Session(VTDecompressionSessionRef);

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: a session VTDecompressionSessionCreate returned, released once; after
        // Invalidate no callback runs, so the `Outputs` the decoder drops next are unused.
        unsafe {
            VTDecompressionSessionWaitForAsynchronousFrames(self.0);
            VTDecompressionSessionInvalidate(self.0);
            CFRelease(self.0 as CFTypeRef);
        }
    }
}

/// An HEVC track's codec for the track decoder: VideoToolbox sessions made from its `hvcC`.
pub(crate) struct Hevc<'a> {
    pub config: &'a HevcConfig,
    pub sps: &'a Sps,
}

impl track::Codec for Hevc<'_> {
    type Decoder = HevcDecoder;

    fn is_idr(&self, sample: &[u8]) -> Result<bool, String> {
        self.config.is_idr(sample)
    }

    fn decoder(&self, file: &str) -> Result<HevcDecoder> {
        HevcDecoder::new(file, self.config, self.sps)
    }

    /// Sessions share the Mac's media engine, so more of them add memory more than speed; a few
    /// still spread the conversion to RGB over cores. (A guess: not measured.)
    fn max_decoders(&self) -> usize {
        MAX_SESSIONS
    }
}

/// One VideoToolbox session fed a track's samples.
pub(crate) struct HevcDecoder {
    // Field order is drop order: the session stops before the outputs it writes to go.
    session: Session,
    outputs: Box<Outputs>,
    format: Cf,
    /// The picture as the SPS describes it, which every output is checked against.
    width: u32,
    height: u32,
    crop_left: u32,
    crop_top: u32,
    file: String,
}

impl HevcDecoder {
    fn new(file: &str, config: &HevcConfig, sps: &Sps) -> Result<Self> {
        let failed = |detail: String| MediaError::media(file, MediaProblem::VideoDecoderFailed { detail });
        let sets: Vec<&[u8]> = config.vps.iter().chain(&config.sps).chain(&config.pps).map(Vec::as_slice).collect();
        let pointers: Vec<*const u8> = sets.iter().map(|set| set.as_ptr()).collect();
        let sizes: Vec<usize> = sets.iter().map(|set| set.len()).collect();
        let mut format: CMFormatDescriptionRef = null();
        // SAFETY: `pointers` and `sizes` describe `sets.len()` live byte ranges; the format
        // description copies them.
        let status = unsafe {
            CMVideoFormatDescriptionCreateFromHEVCParameterSets(
                null(),
                sets.len(),
                pointers.as_ptr(),
                sizes.as_ptr(),
                config.length_size as c_int,
                null(),
                &mut format,
            )
        };
        let format = match Cf::take(format) {
            Some(format) if status == 0 => format,
            _ => return Err(failed(format!("CoreMedia could not read the HEVC parameter sets: error {status}"))),
        };

        let pixel_format = (if sps.colour.full_range { NV12_FULL_RANGE } else { NV12_VIDEO_RANGE }) as i32;
        // SAFETY: a CFNumber from a live i32, and a one-entry dictionary of CF objects that
        // retains its key and value.
        let attributes = unsafe {
            let number = Cf::take(CFNumberCreate(null(), CF_NUMBER_SINT32_TYPE, (&pixel_format as *const i32).cast()))
                .ok_or_else(|| failed("CoreFoundation could not make a number".into()))?;
            let keys = [kCVPixelBufferPixelFormatTypeKey];
            let values = [number.0];
            Cf::take(CFDictionaryCreate(
                null(),
                keys.as_ptr(),
                values.as_ptr(),
                1,
                &kCFTypeDictionaryKeyCallBacks,
                &kCFTypeDictionaryValueCallBacks,
            ))
            .ok_or_else(|| failed("CoreFoundation could not make a dictionary".into()))?
        };

        let outputs: Box<Outputs> = Box::default();
        let callback = VTDecompressionOutputCallbackRecord {
            decompression_output_callback: Some(on_output),
            decompression_output_ref_con: (&*outputs as *const Outputs).cast_mut().cast(),
        };
        let mut session: VTDecompressionSessionRef = null_mut();
        // SAFETY: the format and attributes are live CF objects; the callback record is copied
        // by the call, and its refcon (the boxed `Outputs`) outlives the session.
        let status = unsafe { VTDecompressionSessionCreate(null(), format.0, null(), attributes.0, &callback, &mut session) };
        if status != 0 || session.is_null() {
            return Err(match status {
                VT_COULD_NOT_FIND_VIDEO_DECODER | VT_VIDEO_DECODER_UNSUPPORTED_DATA_FORMAT => MediaError::media(
                    file,
                    MediaProblem::UnsupportedVideoCodec {
                        codec: format!("HEVC (H.265) {}, which this Mac does not decode", sps.describe()),
                    },
                ),
                _ => failed(format!("VideoToolbox could not start an HEVC decoder: error {status}")),
            });
        }
        tracing::debug!(file, profile = sps.describe(), pixel_format = %String::from_utf8_lossy(&(pixel_format as u32).to_be_bytes()), "VideoToolbox HEVC session");
        Ok(Self {
            session: Session(session),
            outputs,
            format,
            width: sps.width,
            height: sps.height,
            crop_left: sps.crop_left,
            crop_top: sps.crop_top,
            file: file.into(),
        })
    }

    fn failed(&self, detail: String) -> MediaError {
        MediaError::media(&self.file, MediaProblem::VideoDecoderFailed { detail })
    }

    /// Hands what the callback has queued to `out`, in the order it came.
    fn drain(&self, out: &mut PictureSink) -> Result<()> {
        let queued = std::mem::take(&mut *self.outputs.lock().unwrap_or_else(PoisonError::into_inner));
        for output in queued {
            match output {
                Output::Picture { index, buffer } => out(index, &|| self.planes(&buffer))?,
                Output::Failed { index, status: VT_VIDEO_DECODER_BAD_DATA } => {
                    let detail = format!("macOS's HEVC decoder found bad data in frame {index}");
                    return Err(MediaError::media(&self.file, MediaProblem::Corrupt { detail }));
                }
                Output::Failed { index, status } => {
                    return Err(self.failed(format!("VideoToolbox error {status} on frame {index}")));
                }
                // A requested frame that never comes is reported by the track decoder.
                Output::Dropped => {}
            }
        }
        Ok(())
    }

    /// A decoded NV12 picture's planes as Y, U and V, cropped to the SPS's conformance window
    /// when the buffer holds the coded size.
    fn planes(&self, buffer: &Cf) -> Result<YuvFrame> {
        let buffer = buffer.0 as CVPixelBufferRef;
        let (width, height) = (self.width as usize, self.height as usize);
        // SAFETY: a retained pixel buffer; these read its description.
        let (format, planes, buffer_width, buffer_height) = unsafe {
            (
                CVPixelBufferGetPixelFormatType(buffer),
                CVPixelBufferGetPlaneCount(buffer),
                CVPixelBufferGetWidth(buffer),
                CVPixelBufferGetHeight(buffer),
            )
        };
        if !matches!(format, NV12_VIDEO_RANGE | NV12_FULL_RANGE) || planes != 2 {
            let code = String::from_utf8_lossy(&format.to_be_bytes()).into_owned();
            return Err(self.failed(format!("VideoToolbox gave '{code}' pictures, not NV12")));
        }
        let (left, top) =
            if (buffer_width, buffer_height) == (width, height) { (0, 0) } else { (self.crop_left as usize, self.crop_top as usize) };
        if buffer_width < left + width || buffer_height < top + height {
            return Err(self.failed(format!("VideoToolbox gave {buffer_width}x{buffer_height} pictures for {width}x{height}")));
        }
        // SAFETY: locked read-only until `_lock` drops; the plane pointers, strides and heights
        // are the buffer's own, and every row read is checked to lie within them.
        unsafe {
            if CVPixelBufferLockBaseAddress(buffer, PIXEL_BUFFER_LOCK_READ_ONLY) != 0 {
                return Err(self.failed("a decoded picture could not be read".into()));
            }
            let _lock = Unlock(buffer);
            let plane = |index: usize| {
                let base = CVPixelBufferGetBaseAddressOfPlane(buffer, index) as *const u8;
                let stride = CVPixelBufferGetBytesPerRowOfPlane(buffer, index);
                let rows = CVPixelBufferGetHeightOfPlane(buffer, index);
                (!base.is_null()).then(|| std::slice::from_raw_parts(base, stride * rows)).map(|data| (data, stride, rows))
            };
            let (Some((luma, luma_stride, luma_rows)), Some((chroma, chroma_stride, chroma_rows))) = (plane(0), plane(1)) else {
                return Err(self.failed("a decoded picture has no planes".into()));
            };
            // 4:2:0: chroma at half the resolution; the crop offsets are even.
            let (chroma_width, chroma_height, chroma_left, chroma_top) = (width.div_ceil(2), height.div_ceil(2), left / 2, top / 2);
            if luma_stride < left + width
                || luma_rows < top + height
                || chroma_stride < 2 * (chroma_left + chroma_width)
                || chroma_rows < chroma_top + chroma_height
            {
                return Err(self.failed("a decoded picture's planes are smaller than its size".into()));
            }
            let mut y = Vec::with_capacity(width * height);
            for row in top..top + height {
                y.extend_from_slice(&luma[row * luma_stride + left..][..width]);
            }
            let (mut u, mut v) = (Vec::with_capacity(chroma_width * chroma_height), Vec::with_capacity(chroma_width * chroma_height));
            for row in chroma_top..chroma_top + chroma_height {
                for pair in chroma[row * chroma_stride + 2 * chroma_left..][..2 * chroma_width].chunks_exact(2) {
                    u.push(pair[0]);
                    v.push(pair[1]);
                }
            }
            Ok(YuvFrame { width: self.width, height: self.height, y, u, v })
        }
    }
}

/// Unlocks a pixel buffer's base address when dropped.
struct Unlock(CVPixelBufferRef);

impl Drop for Unlock {
    fn drop(&mut self) {
        // SAFETY: locked read-only by `planes`, unlocked once with the same flags.
        unsafe {
            CVPixelBufferUnlockBaseAddress(self.0, PIXEL_BUFFER_LOCK_READ_ONLY);
        }
    }
}

impl track::Decoder for HevcDecoder {
    fn decode(&mut self, sample: &[u8], display_index: u64, out: &mut PictureSink) -> Result<()> {
        if sample.is_empty() {
            // Nothing to decode; a requested frame that never comes is reported by the track.
            return Ok(());
        }
        let mut block: CMBlockBufferRef = null_mut();
        // SAFETY: CoreMedia allocates a block of `sample.len()` bytes (AssureMemoryNow) and
        // copies the sample into it; the sample buffer then holds the block.
        let sample_buffer = unsafe {
            let status = CMBlockBufferCreateWithMemoryBlock(
                null(),
                null_mut(),
                sample.len(),
                null(),
                null(),
                0,
                sample.len(),
                BLOCK_BUFFER_ASSURE_MEMORY_NOW,
                &mut block,
            );
            let block = match Cf::take(block as CFTypeRef) {
                Some(block) if status == 0 => block,
                _ => return Err(self.failed(format!("CoreMedia could not hold frame {display_index}: error {status}"))),
            };
            let status = CMBlockBufferReplaceDataBytes(sample.as_ptr().cast(), block.0 as CMBlockBufferRef, 0, sample.len());
            if status != 0 {
                return Err(self.failed(format!("CoreMedia could not hold frame {display_index}: error {status}")));
            }
            let timing = CMSampleTimingInfo {
                duration: TIME_INVALID,
                presentation_time_stamp: CMTime { value: display_index as i64, timescale: 1, flags: CM_TIME_FLAGS_VALID, epoch: 0 },
                decode_time_stamp: TIME_INVALID,
            };
            let size = sample.len();
            let mut sample_buffer: CMSampleBufferRef = null_mut();
            let status =
                CMSampleBufferCreateReady(null(), block.0 as CMBlockBufferRef, self.format.0, 1, 1, &timing, 1, &size, &mut sample_buffer);
            match Cf::take(sample_buffer as CFTypeRef) {
                Some(sample_buffer) if status == 0 => sample_buffer,
                _ => return Err(self.failed(format!("CoreMedia could not make a sample of frame {display_index}: error {status}"))),
            }
        };
        let mut info_flags = 0u32;
        // SAFETY: a live session and sample buffer; flags 0 decode synchronously, in decode
        // order; the refcon is the display index, which the callback reads as a number.
        let status = unsafe {
            VTDecompressionSessionDecodeFrame(
                self.session.0,
                sample_buffer.0 as CMSampleBufferRef,
                0,
                display_index as usize as *mut c_void,
                &mut info_flags,
            )
        };
        // Whatever came out before an error is handed on first (it may be the error's report).
        self.drain(out)?;
        match status {
            0 => Ok(()),
            VT_VIDEO_DECODER_BAD_DATA => Err(MediaError::media(
                &self.file,
                MediaProblem::Corrupt { detail: format!("macOS's HEVC decoder found bad data in frame {display_index}") },
            )),
            _ => Err(self.failed(format!("VideoToolbox error {status} on frame {display_index}"))),
        }
    }

    fn finish(&mut self, out: &mut PictureSink) -> Result<()> {
        // SAFETY: a live session; both calls return once every frame given is output.
        let status = unsafe {
            let status = VTDecompressionSessionFinishDelayedFrames(self.session.0);
            VTDecompressionSessionWaitForAsynchronousFrames(self.session.0);
            status
        };
        self.drain(out)?;
        if status != 0 {
            return Err(self.failed(format!("VideoToolbox error {status} at the end of the frames")));
        }
        Ok(())
    }
}
