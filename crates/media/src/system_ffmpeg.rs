//! AAC decoded by the system's FFmpeg, loaded at run time. The reference loader (transformers'
//! `load_audio`) reads M4A/AAC only through torchcodec, and torchcodec decodes with the FFmpeg
//! shared libraries it finds on the system: libavcodec's AAC decoder, then one libswresample
//! context to the wanted rate and mono. Calling those same libraries the same way gives its
//! samples exactly, which our own decoder (symphonia's AAC, `swresample`'s port) cannot: the two
//! AAC decoders differ by a few 1e-6, and the mel floor magnifies that 1000-fold in quiet bins.
//! Where the libraries are absent (a Mac without Homebrew's FFmpeg) or fail, `audio` decodes with
//! symphonia instead; `CONFAB_SYSTEM_FFMPEG=0` (read once, at the first AAC clip) asks for that
//! too, to compare.
//!
//! What torchcodec does (`SingleStreamDecoder.cpp`, `FFMPEGCommon.cpp`), and so this module:
//! packets go to `avcodec_send_packet`, frames come from `avcodec_receive_frame` (the decoder is
//! drained with an empty packet at the end); the frames FFmpeg drops for the encoder's priming
//! (the MP4 edit list; our caller passes the count) never reach the resampler; the first frame
//! kept creates a `SwrContext` from its own layout, format and rate to mono float planar at the
//! wanted rate (`swr_alloc_set_opts2`, or `swr_alloc_set_opts` before FFmpeg 5.1, no other
//! option), each frame goes through `swr_convert` into a buffer of
//! `ceil((swr_get_delay + n) × to / from)` samples, and `swr_get_out_samples(0)` more are flushed
//! at the end. A mono float planar frame already at the wanted rate is taken as it is.
//!
//! Only what is the same in FFmpeg 4 through 8 is touched: exported functions, the leading
//! fields of `AVCodecParameters`, `AVPacket` and `AVFrame` (their offsets have not moved), and
//! codec context values through the AVOption API. libavcodec majors 58 to 62 are accepted, with
//! the libavutil and libswresample of the same release. The libraries are loaded once per
//! process; decoder and resampler contexts belong to one call.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::path::PathBuf;
use std::ptr;
use std::sync::OnceLock;

use libloading::Library;

/// A failure of the libraries (not of the file): the caller decodes with symphonia instead.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FfmpegError(pub String);

impl std::fmt::Display for FfmpegError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

type Outcome<T> = std::result::Result<T, FfmpegError>;

/// The system's FFmpeg, loaded on first use; `None` where it is missing, of an unknown major
/// version, or turned off.
pub(crate) fn system() -> Option<&'static Ffmpeg> {
    static LOADED: OnceLock<Option<Ffmpeg>> = OnceLock::new();
    LOADED.get_or_init(load_unless_turned_off).as_ref()
}

fn load_unless_turned_off() -> Option<Ffmpeg> {
    if std::env::var("CONFAB_SYSTEM_FFMPEG").is_ok_and(|v| v == "0") {
        tracing::debug!("CONFAB_SYSTEM_FFMPEG=0: AAC decodes with symphonia");
        return None;
    }
    match Ffmpeg::load() {
        Ok(ffmpeg) => {
            tracing::debug!(version = %ffmpeg.version, "loaded the system's FFmpeg for AAC");
            Some(ffmpeg)
        }
        Err(error) => {
            tracing::debug!(%error, "no usable system FFmpeg; AAC decodes with symphonia");
            None
        }
    }
}

/// libavcodec major → the libavutil and libswresample majors of the same FFmpeg release
/// (4.x, 5.x, 6.x, 7.x, 8.x).
const RELEASES: [(u32, u32, u32); 5] = [(62, 60, 6), (61, 59, 5), (60, 58, 4), (59, 57, 4), (58, 56, 3)];

// FFmpeg's constants (the same in every release above).
const AVMEDIA_TYPE_AUDIO: c_int = 1;
const AV_CODEC_ID_AAC: c_int = 0x15002;
const AV_SAMPLE_FMT_FLTP: c_int = 8;
const AV_CH_LAYOUT_MONO: i64 = 0x4;
const AV_INPUT_BUFFER_PADDING_SIZE: usize = 64;
const AV_LOG_QUIET: c_int = -8;
const AVERROR_EOF: c_int = -0x2046_4F45; // -MKTAG('E', 'O', 'F', ' ')
#[cfg(target_os = "macos")]
const AVERROR_EAGAIN: c_int = -35;
#[cfg(not(target_os = "macos"))]
const AVERROR_EAGAIN: c_int = -11;
const AVERROR_ENOMEM: c_int = -12;

/// `AVCodecParameters`' leading fields.
#[repr(C)]
struct CodecParametersHead {
    codec_type: c_int,
    codec_id: c_int,
    codec_tag: u32,
    extradata: *mut u8,
    extradata_size: c_int,
}

/// `AVPacket`'s leading fields.
#[repr(C)]
struct PacketHead {
    buf: *mut c_void,
    pts: i64,
    dts: i64,
    data: *mut u8,
    size: c_int,
}

/// `AVFrame`'s leading fields.
#[repr(C)]
struct FrameHead {
    data: [*mut u8; 8],
    linesize: [c_int; 8],
    extended_data: *mut *mut u8,
    width: c_int,
    height: c_int,
    nb_samples: c_int,
    format: c_int,
}

/// `AVChannelLayout` (FFmpeg 5.1 and later).
#[repr(C)]
struct ChannelLayout {
    order: c_int,
    nb_channels: c_int,
    mask: u64,
    opaque: *mut c_void,
}

impl ChannelLayout {
    fn empty() -> Self {
        ChannelLayout { order: 0, nb_channels: 0, mask: 0, opaque: ptr::null_mut() }
    }
}

type Opaque = *mut c_void;

/// The functions used, with the libraries that hold them.
pub(crate) struct Ffmpeg {
    version: String,
    avcodec_find_decoder: unsafe extern "C" fn(c_int) -> *const c_void,
    avcodec_alloc_context3: unsafe extern "C" fn(*const c_void) -> Opaque,
    avcodec_free_context: unsafe extern "C" fn(*mut Opaque),
    avcodec_parameters_alloc: unsafe extern "C" fn() -> *mut CodecParametersHead,
    avcodec_parameters_free: unsafe extern "C" fn(*mut *mut CodecParametersHead),
    avcodec_parameters_to_context: unsafe extern "C" fn(Opaque, *const CodecParametersHead) -> c_int,
    avcodec_open2: unsafe extern "C" fn(Opaque, *const c_void, *mut Opaque) -> c_int,
    avcodec_send_packet: unsafe extern "C" fn(Opaque, *const PacketHead) -> c_int,
    avcodec_receive_frame: unsafe extern "C" fn(Opaque, *mut FrameHead) -> c_int,
    av_packet_alloc: unsafe extern "C" fn() -> *mut PacketHead,
    av_packet_free: unsafe extern "C" fn(*mut *mut PacketHead),
    av_new_packet: unsafe extern "C" fn(*mut PacketHead, c_int) -> c_int,
    av_packet_unref: unsafe extern "C" fn(*mut PacketHead),
    av_frame_alloc: unsafe extern "C" fn() -> *mut FrameHead,
    av_frame_free: unsafe extern "C" fn(*mut *mut FrameHead),
    av_frame_unref: unsafe extern "C" fn(*mut FrameHead),
    av_mallocz: unsafe extern "C" fn(usize) -> Opaque,
    av_free: unsafe extern "C" fn(Opaque),
    av_opt_get: unsafe extern "C" fn(Opaque, *const c_char, c_int, *mut *mut u8) -> c_int,
    av_opt_get_int: unsafe extern "C" fn(Opaque, *const c_char, c_int, *mut i64) -> c_int,
    av_strerror: unsafe extern "C" fn(c_int, *mut c_char, usize) -> c_int,
    swr_free: unsafe extern "C" fn(*mut Opaque),
    swr_init: unsafe extern "C" fn(Opaque) -> c_int,
    swr_convert: unsafe extern "C" fn(Opaque, *const *mut u8, c_int, *const *const u8, c_int) -> c_int,
    swr_get_delay: unsafe extern "C" fn(Opaque, i64) -> i64,
    swr_get_out_samples: unsafe extern "C" fn(Opaque, c_int) -> c_int,
    layouts: Layouts,
    _libraries: [Library; 3],
}

/// How channel layouts are passed: as `AVChannelLayout` (FFmpeg 5.1 and later, as torchcodec
/// does there) or as the older 64-bit masks.
enum Layouts {
    Structs {
        av_channel_layout_from_string: unsafe extern "C" fn(*mut ChannelLayout, *const c_char) -> c_int,
        av_channel_layout_default: unsafe extern "C" fn(*mut ChannelLayout, c_int),
        av_channel_layout_uninit: unsafe extern "C" fn(*mut ChannelLayout),
        #[allow(clippy::type_complexity)]
        swr_alloc_set_opts2: unsafe extern "C" fn(
            *mut Opaque,
            *const ChannelLayout,
            c_int,
            c_int,
            *const ChannelLayout,
            c_int,
            c_int,
            c_int,
            Opaque,
        ) -> c_int,
    },
    Masks {
        av_get_default_channel_layout: unsafe extern "C" fn(c_int) -> i64,
        swr_alloc_set_opts: unsafe extern "C" fn(Opaque, i64, c_int, c_int, i64, c_int, c_int, c_int, Opaque) -> Opaque,
    },
}

#[derive(Debug, Clone, Copy)]
enum LayoutApi {
    /// `AVChannelLayout` where the release has it.
    Newest,
    #[cfg_attr(not(test), allow(dead_code))]
    Masks,
}

/// Where each library of one release may be.
fn candidates(name: &str, major: u32) -> Vec<PathBuf> {
    if cfg!(target_os = "macos") {
        ["/opt/homebrew/lib", "/usr/local/lib"]
            .iter()
            .flat_map(|dir| [format!("{dir}/lib{name}.{major}.dylib"), format!("{dir}/lib{name}.dylib")])
            .map(PathBuf::from)
            .collect()
    } else if cfg!(unix) {
        vec![PathBuf::from(format!("lib{name}.so.{major}"))]
    } else {
        vec![]
    }
}

/// The first of `name`'s candidates whose `{name}_version()` has `major`.
fn open_release(name: &str, major: u32) -> Outcome<Library> {
    for path in candidates(name, major) {
        // SAFETY: loading FFmpeg runs only its libraries' initialisers, which have no
        // preconditions; the version function takes nothing and returns a number.
        let found = unsafe {
            let Ok(library) = Library::new(&path) else { continue };
            let symbol = format!("{name}_version\0");
            let version = library.get::<unsafe extern "C" fn() -> c_uint>(symbol.as_bytes()).map(|f| (*f)());
            match version {
                Ok(version) if version >> 16 == major => Some(library),
                _ => None,
            }
        };
        if let Some(library) = found {
            return Ok(library);
        }
    }
    Err(FfmpegError(format!("lib{name} {major} not found")))
}

/// Copies a function pointer out of `library`.
///
/// # Safety
/// `T` must be the function's C signature.
unsafe fn function<T: Copy>(library: &Library, name: &str) -> Outcome<T> {
    let symbol = format!("{name}\0");
    library.get::<T>(symbol.as_bytes()).map(|f| *f).map_err(|e| FfmpegError(format!("{name}: {e}")))
}

impl Ffmpeg {
    fn load() -> Outcome<Ffmpeg> {
        Self::load_with(LayoutApi::Newest)
    }

    /// FFmpeg as a release before 5.1 is driven (channel masks), whatever this one is: to check
    /// that path where only a newer release is installed.
    #[cfg(test)]
    pub(crate) fn load_with_masks() -> Outcome<Ffmpeg> {
        Self::load_with(LayoutApi::Masks)
    }

    fn load_with(api: LayoutApi) -> Outcome<Ffmpeg> {
        let mut last = FfmpegError("no FFmpeg libraries are looked for on this platform".into());
        for (codec_major, util_major, swr_major) in RELEASES {
            let opened = open_release("avcodec", codec_major)
                .and_then(|codec| Ok((codec, open_release("avutil", util_major)?, open_release("swresample", swr_major)?)));
            match opened {
                // SAFETY: each signature below is the one FFmpeg declares for that release.
                Ok((codec, util, swr)) => return unsafe { Self::bind(codec, util, swr, api) },
                Err(error) => last = error,
            }
        }
        Err(last)
    }

    /// # Safety
    /// The libraries are libavcodec, libavutil and libswresample of one release in `RELEASES`.
    unsafe fn bind(codec: Library, util: Library, swr: Library, api: LayoutApi) -> Outcome<Ffmpeg> {
        let (c, u, s) = (&codec, &util, &swr);
        let codec_version: unsafe extern "C" fn() -> c_uint = function(c, "avcodec_version")?;
        let codec_version = codec_version();
        let from_string = match api {
            LayoutApi::Newest => function(u, "av_channel_layout_from_string"),
            LayoutApi::Masks => Err(FfmpegError("channel masks asked for".into())),
        };
        let layouts = match from_string {
            Ok(from_string) => Layouts::Structs {
                av_channel_layout_from_string: from_string,
                av_channel_layout_default: function(u, "av_channel_layout_default")?,
                av_channel_layout_uninit: function(u, "av_channel_layout_uninit")?,
                swr_alloc_set_opts2: function(s, "swr_alloc_set_opts2")?,
            },
            Err(_) => Layouts::Masks {
                av_get_default_channel_layout: function(u, "av_get_default_channel_layout")?,
                swr_alloc_set_opts: function(s, "swr_alloc_set_opts")?,
            },
        };
        let set_log_level: unsafe extern "C" fn(c_int) = function(u, "av_log_set_level")?;
        // As torchcodec: errors come back as values, FFmpeg's own messages would only be noise.
        set_log_level(AV_LOG_QUIET);
        Ok(Ffmpeg {
            version: format!("libavcodec {}.{}.{}", codec_version >> 16, (codec_version >> 8) & 0xff, codec_version & 0xff),
            avcodec_find_decoder: function(c, "avcodec_find_decoder")?,
            avcodec_alloc_context3: function(c, "avcodec_alloc_context3")?,
            avcodec_free_context: function(c, "avcodec_free_context")?,
            avcodec_parameters_alloc: function(c, "avcodec_parameters_alloc")?,
            avcodec_parameters_free: function(c, "avcodec_parameters_free")?,
            avcodec_parameters_to_context: function(c, "avcodec_parameters_to_context")?,
            avcodec_open2: function(c, "avcodec_open2")?,
            avcodec_send_packet: function(c, "avcodec_send_packet")?,
            avcodec_receive_frame: function(c, "avcodec_receive_frame")?,
            av_packet_alloc: function(c, "av_packet_alloc")?,
            av_packet_free: function(c, "av_packet_free")?,
            av_new_packet: function(c, "av_new_packet")?,
            av_packet_unref: function(c, "av_packet_unref")?,
            av_frame_alloc: function(u, "av_frame_alloc")?,
            av_frame_free: function(u, "av_frame_free")?,
            av_frame_unref: function(u, "av_frame_unref")?,
            av_mallocz: function(u, "av_mallocz")?,
            av_free: function(u, "av_free")?,
            av_opt_get: function(u, "av_opt_get")?,
            av_opt_get_int: function(u, "av_opt_get_int")?,
            av_strerror: function(u, "av_strerror")?,
            swr_free: function(s, "swr_free")?,
            swr_init: function(s, "swr_init")?,
            swr_convert: function(s, "swr_convert")?,
            swr_get_delay: function(s, "swr_get_delay")?,
            swr_get_out_samples: function(s, "swr_get_out_samples")?,
            layouts,
            _libraries: [codec, util, swr],
        })
    }

    /// Which FFmpeg this is, as "libavcodec 59.37.100".
    pub(crate) fn version(&self) -> &str {
        &self.version
    }

    fn error(&self, call: &str, code: c_int) -> FfmpegError {
        let mut text = [0 as c_char; 128];
        // SAFETY: av_strerror writes at most `len` bytes, NUL-terminated.
        let message = unsafe {
            (self.av_strerror)(code, text.as_mut_ptr(), text.len());
            CStr::from_ptr(text.as_ptr()).to_string_lossy().into_owned()
        };
        FfmpegError(format!("{call}: {message} ({code})"))
    }
}

/// One clip's AAC decoder and resampler, as torchcodec runs them: packets in, 16 kHz (or any
/// rate) mono out.
pub(crate) struct AacToMono {
    ffmpeg: &'static Ffmpeg,
    codec: Opaque,
    packet: *mut PacketHead,
    frame: *mut FrameHead,
    resampler: Opaque,
    rate: u32,
    /// The encoder's priming in decoded samples per channel, from `priming` once the first
    /// frame says at which rate (`None` until then).
    skip: Option<u64>,
    priming: Box<dyn Fn(u32) -> u64>,
    /// The first kept frame's channel count and rate: later frames must match.
    source: Option<(u32, u32)>,
    /// Per channel, at the decoded rate, priming included.
    decoded: u64,
    damaged_packets: usize,
    samples: Vec<f32>,
}

impl Drop for AacToMono {
    fn drop(&mut self) {
        // SAFETY: each pointer is null or was allocated by the matching FFmpeg function; the
        // free functions take null and set the pointer to null.
        unsafe {
            (self.ffmpeg.swr_free)(&mut self.resampler);
            (self.ffmpeg.av_frame_free)(&mut self.frame);
            (self.ffmpeg.av_packet_free)(&mut self.packet);
            (self.ffmpeg.avcodec_free_context)(&mut self.codec);
        }
    }
}

impl AacToMono {
    /// Opens FFmpeg's AAC decoder on the track's AudioSpecificConfig (`extradata`, from the MP4
    /// `esds` box); `priming` gives the samples to drop at the start at the decoded rate.
    pub(crate) fn open(ffmpeg: &'static Ffmpeg, extradata: &[u8], rate: u32, priming: impl Fn(u32) -> u64 + 'static) -> Outcome<AacToMono> {
        let mut this = AacToMono {
            ffmpeg,
            codec: ptr::null_mut(),
            packet: ptr::null_mut(),
            frame: ptr::null_mut(),
            resampler: ptr::null_mut(),
            rate,
            skip: None,
            priming: Box::new(priming),
            source: None,
            decoded: 0,
            damaged_packets: 0,
            samples: Vec::new(),
        };
        let f = ffmpeg;
        // SAFETY: FFmpeg's documented calling sequence; every allocation is checked, and freed
        // by `Drop` (the parameters here, with their extradata).
        unsafe {
            let decoder = (f.avcodec_find_decoder)(AV_CODEC_ID_AAC);
            if decoder.is_null() {
                return Err(FfmpegError("this FFmpeg has no AAC decoder".into()));
            }
            this.codec = (f.avcodec_alloc_context3)(decoder);
            this.packet = (f.av_packet_alloc)();
            this.frame = (f.av_frame_alloc)();
            if this.codec.is_null() || this.packet.is_null() || this.frame.is_null() {
                return Err(FfmpegError("out of memory".into()));
            }
            let mut parameters = (f.avcodec_parameters_alloc)();
            if parameters.is_null() {
                return Err(FfmpegError("out of memory".into()));
            }
            let configured = (|| {
                let head = &mut *parameters;
                head.codec_type = AVMEDIA_TYPE_AUDIO;
                head.codec_id = AV_CODEC_ID_AAC;
                if !extradata.is_empty() {
                    let size = c_int::try_from(extradata.len()).map_err(|_| FfmpegError("extradata too large".into()))?;
                    let copy = (f.av_mallocz)(extradata.len() + AV_INPUT_BUFFER_PADDING_SIZE) as *mut u8;
                    if copy.is_null() {
                        return Err(FfmpegError("out of memory".into()));
                    }
                    ptr::copy_nonoverlapping(extradata.as_ptr(), copy, extradata.len());
                    head.extradata = copy;
                    head.extradata_size = size;
                }
                let status = (f.avcodec_parameters_to_context)(this.codec, parameters);
                if status < 0 {
                    return Err(f.error("avcodec_parameters_to_context", status));
                }
                let status = (f.avcodec_open2)(this.codec, decoder, ptr::null_mut());
                if status < 0 {
                    return Err(f.error("avcodec_open2", status));
                }
                Ok(())
            })();
            (f.avcodec_parameters_free)(&mut parameters);
            configured?;
        }
        Ok(this)
    }

    /// Decodes one packet and converts the frames it gives. A packet FFmpeg cannot decode is
    /// skipped (counted), as the symphonia path skips one.
    pub(crate) fn send(&mut self, data: &[u8]) -> Outcome<()> {
        if data.is_empty() {
            // An empty packet would tell FFmpeg the stream has ended.
            self.damaged_packets += 1;
            return Ok(());
        }
        let size = c_int::try_from(data.len()).map_err(|_| FfmpegError("packet too large".into()))?;
        // SAFETY: av_new_packet gives `size` writable bytes (plus zeroed padding) at `data`.
        unsafe {
            let status = (self.ffmpeg.av_new_packet)(self.packet, size);
            if status < 0 {
                return Err(self.ffmpeg.error("av_new_packet", status));
            }
            ptr::copy_nonoverlapping(data.as_ptr(), (*self.packet).data, data.len());
        }
        let sent = self.send_packet();
        // SAFETY: the packet is ours.
        unsafe { (self.ffmpeg.av_packet_unref)(self.packet) };
        sent?;
        self.receive()
    }

    /// Sends the packet; one the decoder rejects is counted as damaged.
    fn send_packet(&mut self) -> Outcome<()> {
        // SAFETY: a packet from av_new_packet, to an opened decoder.
        let mut status = unsafe { (self.ffmpeg.avcodec_send_packet)(self.codec, self.packet) };
        if status == AVERROR_EAGAIN {
            // The decoder still holds frames (never after `receive`, but the API allows it).
            self.receive()?;
            // SAFETY: as above.
            status = unsafe { (self.ffmpeg.avcodec_send_packet)(self.codec, self.packet) };
        }
        match status {
            0 => Ok(()),
            AVERROR_ENOMEM => Err(self.ffmpeg.error("avcodec_send_packet", status)),
            _ => {
                self.damaged_packets += 1;
                Ok(())
            }
        }
    }

    /// Drains the decoder and the resampler; the mono samples at the wanted rate.
    pub(crate) fn finish(&mut self) -> Outcome<Vec<f32>> {
        // SAFETY: a null packet is the documented end-of-stream signal.
        let status = unsafe { (self.ffmpeg.avcodec_send_packet)(self.codec, ptr::null()) };
        if status < 0 && status != AVERROR_EOF {
            return Err(self.ffmpeg.error("avcodec_send_packet", status));
        }
        self.receive()?;
        if !self.resampler.is_null() {
            // SAFETY: the output buffer holds `pending` samples; no input flushes.
            unsafe {
                let pending = (self.ffmpeg.swr_get_out_samples)(self.resampler, 0);
                if pending > 0 {
                    let start = self.samples.len();
                    self.samples.resize(start + pending as usize, 0.0);
                    let out = [self.samples[start..].as_mut_ptr() as *mut u8];
                    let got = (self.ffmpeg.swr_convert)(self.resampler, out.as_ptr(), pending, ptr::null(), 0);
                    if got < 0 {
                        return Err(self.ffmpeg.error("swr_convert", got));
                    }
                    self.samples.truncate(start + got as usize);
                }
            }
        }
        Ok(std::mem::take(&mut self.samples))
    }

    /// Samples per channel decoded so far at the decoded rate, and that rate (0 before the first
    /// frame): for the duration limit.
    pub(crate) fn decoded(&self) -> (u64, u32) {
        (self.decoded, self.source.map_or(0, |(_, rate)| rate))
    }

    pub(crate) fn damaged_packets(&self) -> usize {
        self.damaged_packets
    }

    /// Takes every frame the decoder has ready.
    fn receive(&mut self) -> Outcome<()> {
        loop {
            // SAFETY: the frame is ours; receive_frame unrefs it before filling it.
            let status = unsafe { (self.ffmpeg.avcodec_receive_frame)(self.codec, self.frame) };
            match status {
                0 => {
                    let converted = self.convert_frame();
                    // SAFETY: as above.
                    unsafe { (self.ffmpeg.av_frame_unref)(self.frame) };
                    converted?;
                }
                AVERROR_EAGAIN | AVERROR_EOF => return Ok(()),
                AVERROR_ENOMEM => return Err(self.ffmpeg.error("avcodec_receive_frame", status)),
                _ => {
                    self.damaged_packets += 1;
                    return Ok(());
                }
            }
        }
    }

    /// One decoded frame: the priming dropped, then resampled and mixed into `samples`.
    fn convert_frame(&mut self) -> Outcome<()> {
        // SAFETY: a frame just received: its head fields are set, `extended_data` points at one
        // plane per channel of `nb_samples` values each (float planar, checked below).
        let (planes, count, format) = unsafe {
            let frame = &*self.frame;
            (frame.extended_data as *const *const u8, frame.nb_samples.max(0) as u64, frame.format)
        };
        if format != AV_SAMPLE_FMT_FLTP {
            return Err(FfmpegError(format!("the AAC decoder gave sample format {format}, not float planar")));
        }
        let (channels, rate, layout) = self.frame_layout()?;
        let skip = *self.skip.get_or_insert_with(|| (self.priming)(rate));
        let start = self.decoded;
        self.decoded += count;
        // FFmpeg drops the priming before the resampler sees it: whole frames, then the head of
        // the frame the edit starts in.
        let drop = skip.saturating_sub(start).min(count);
        if drop == count {
            return Ok(());
        }
        match self.source {
            None => self.source = Some((channels, rate)),
            Some(first) if first != (channels, rate) => {
                return Err(FfmpegError(format!(
                    "the stream changes from {} channels at {} Hz to {channels} at {rate} Hz midway",
                    first.0, first.1
                )))
            }
            Some(_) => {}
        }
        let kept = (count - drop) as usize;
        // SAFETY: `channels` planes of `count` floats; `drop` < `count`.
        let inputs: Vec<*const u8> = (0..channels as usize).map(|c| unsafe { (*planes.add(c)).add(drop as usize * 4) }).collect();
        if channels == 1 && rate == self.rate {
            // torchcodec's "no conversion needed": the decoder's samples as they are.
            // SAFETY: as above.
            let plane = unsafe { std::slice::from_raw_parts(inputs[0] as *const f32, kept) };
            self.samples.extend_from_slice(plane);
            return Ok(());
        }
        if self.resampler.is_null() {
            self.resampler = self.new_resampler(rate, &layout)?;
        }
        // SAFETY: the output has room for `capacity` samples; the inputs hold `kept` each.
        unsafe {
            let delay = (self.ffmpeg.swr_get_delay)(self.resampler, rate as i64);
            // av_rescale_rnd(delay + kept, to, from, AV_ROUND_UP), as torchcodec sizes it.
            let capacity = ((delay.max(0) as u64 + kept as u64) * self.rate as u64).div_ceil(rate as u64) as usize;
            let start = self.samples.len();
            self.samples.resize(start + capacity, 0.0);
            let out = [self.samples[start..].as_mut_ptr() as *mut u8];
            let got = (self.ffmpeg.swr_convert)(self.resampler, out.as_ptr(), capacity as c_int, inputs.as_ptr(), kept as c_int);
            if got < 0 {
                return Err(self.ffmpeg.error("swr_convert", got));
            }
            self.samples.truncate(start + got as usize);
        }
        Ok(())
    }

    /// The decoder's current channel count, rate and layout (as FFmpeg describes it, or its
    /// mask before 5.1).
    fn frame_layout(&self) -> Outcome<(u32, u32, SourceLayout)> {
        let f = self.ffmpeg;
        let int_option = |name: &CStr| -> Outcome<i64> {
            let mut value = 0i64;
            // SAFETY: a generic option of AVCodecContext, read into an i64.
            let status = unsafe { (f.av_opt_get_int)(self.codec, name.as_ptr(), 0, &mut value) };
            if status < 0 {
                return Err(f.error("av_opt_get_int", status));
            }
            Ok(value)
        };
        let rate = u32::try_from(int_option(c"ar")?).unwrap_or(0);
        if rate == 0 {
            return Err(FfmpegError("the AAC decoder gave no sample rate".into()));
        }
        let (channels, layout) = match &f.layouts {
            Layouts::Structs { av_channel_layout_from_string, av_channel_layout_uninit, .. } => {
                let mut text: *mut u8 = ptr::null_mut();
                // SAFETY: av_opt_get allocates the description; it is copied, then freed.
                let description = unsafe {
                    let status = (f.av_opt_get)(self.codec, c"ch_layout".as_ptr(), 0, &mut text);
                    if status < 0 || text.is_null() {
                        return Err(f.error("av_opt_get(ch_layout)", status));
                    }
                    let owned = CStr::from_ptr(text as *const c_char).to_owned();
                    (f.av_free)(text as Opaque);
                    owned
                };
                let mut parsed = ChannelLayout::empty();
                // SAFETY: parses into our struct, then releases what parsing allocated.
                let channels = unsafe {
                    let status = av_channel_layout_from_string(&mut parsed, description.as_ptr());
                    let channels = parsed.nb_channels;
                    av_channel_layout_uninit(&mut parsed);
                    if status < 0 {
                        return Err(f.error("av_channel_layout_from_string", status));
                    }
                    channels
                };
                (channels, SourceLayout::Described(description))
            }
            Layouts::Masks { av_get_default_channel_layout, .. } => {
                let channels = int_option(c"ac")? as c_int;
                let mut mask = int_option(c"channel_layout")?;
                if mask == 0 {
                    // As torchcodec: a decoder that gives no layout gets the default for its count.
                    // SAFETY: a pure function of the count.
                    mask = unsafe { av_get_default_channel_layout(channels) };
                }
                (channels, SourceLayout::Mask(mask))
            }
        };
        match u32::try_from(channels) {
            Ok(channels) if channels > 0 => Ok((channels, rate, layout)),
            _ => Err(FfmpegError(format!("the AAC decoder gave {channels} channels"))),
        }
    }

    /// torchcodec's `createSwrContext`: the frame's layout, format and rate to mono float planar
    /// at the wanted rate, nothing else set.
    fn new_resampler(&self, rate: u32, layout: &SourceLayout) -> Outcome<Opaque> {
        let f = self.ffmpeg;
        let mut resampler: Opaque = ptr::null_mut();
        // SAFETY: the documented allocation calls; layouts are initialised and released here.
        unsafe {
            match (&f.layouts, layout) {
                (
                    Layouts::Structs {
                        av_channel_layout_from_string,
                        av_channel_layout_default,
                        av_channel_layout_uninit,
                        swr_alloc_set_opts2,
                    },
                    SourceLayout::Described(description),
                ) => {
                    let (mut input, mut output) = (ChannelLayout::empty(), ChannelLayout::empty());
                    let mut status = av_channel_layout_from_string(&mut input, description.as_ptr());
                    if status >= 0 {
                        av_channel_layout_default(&mut output, 1);
                        status = swr_alloc_set_opts2(
                            &mut resampler,
                            &output,
                            AV_SAMPLE_FMT_FLTP,
                            self.rate as c_int,
                            &input,
                            AV_SAMPLE_FMT_FLTP,
                            rate as c_int,
                            0,
                            ptr::null_mut(),
                        );
                    }
                    av_channel_layout_uninit(&mut input);
                    av_channel_layout_uninit(&mut output);
                    if status < 0 {
                        (f.swr_free)(&mut resampler);
                        return Err(f.error("swr_alloc_set_opts2", status));
                    }
                }
                (Layouts::Masks { swr_alloc_set_opts, .. }, SourceLayout::Mask(mask)) => {
                    resampler = swr_alloc_set_opts(
                        ptr::null_mut(),
                        AV_CH_LAYOUT_MONO,
                        AV_SAMPLE_FMT_FLTP,
                        self.rate as c_int,
                        *mask,
                        AV_SAMPLE_FMT_FLTP,
                        rate as c_int,
                        0,
                        ptr::null_mut(),
                    );
                }
                _ => return Err(FfmpegError("channel layout kinds do not match".into())),
            }
            if resampler.is_null() {
                return Err(FfmpegError("swr_alloc_set_opts failed".into()));
            }
            let status = (f.swr_init)(resampler);
            if status < 0 {
                (f.swr_free)(&mut resampler);
                return Err(f.error("swr_init", status));
            }
        }
        Ok(resampler)
    }
}

enum SourceLayout {
    Described(std::ffi::CString),
    Mask(i64),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AAC-LC, 44.1 kHz, mono (object type 2, frequency index 4, channel configuration 1).
    const LC_44K_MONO: [u8; 2] = [0x12, 0x08];

    #[test]
    fn a_config_ffmpeg_rejects_and_packets_it_cannot_decode_are_values() {
        let Some(ffmpeg) = system() else {
            tracing::warn!("no system FFmpeg here: nothing to check");
            return;
        };
        // Object type 31 with an escape FFmpeg does not accept: open fails, the caller falls back.
        assert!(AacToMono::open(ffmpeg, &[0xff, 0xff, 0xff], 16_000, |_| 0).is_err());
        let mut decoder = AacToMono::open(ffmpeg, &LC_44K_MONO, 16_000, |_| 0).unwrap();
        for _ in 0..3 {
            decoder.send(&[0xde, 0xad, 0xbe, 0xef, 0x01, 0x02]).unwrap();
        }
        decoder.send(&[]).unwrap();
        assert_eq!(decoder.finish().unwrap(), Vec::<f32>::new());
        assert!(decoder.damaged_packets() >= 4, "{}", decoder.damaged_packets());
        assert_eq!(decoder.decoded().0, 0);
    }
}
