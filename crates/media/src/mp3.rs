//! MP3 (MPEG-1, 2 and 2.5 audio, layers I to III) decoded as the reference pipeline reads it:
//! transformers' `load_audio` opens it with soundfile, whose libsndfile (1.2.2 in soundfile
//! 0.14's wheels) hands MPEG streams to libmpg123 (1.32.3 there). We compile libmpg123 from
//! `native/mpg123` (1.32.10, float synths only; its samples equal 1.32.3's on the corpus) and
//! drive it with libsndfile's calls (src/mpeg_decode.c), in the same order:
//! - a handle reader over the whole file, ID3v2 tag included (mpg123 skips it);
//! - no automatic resampling; float output (MPG123_FORCE_FLOAT), gapless (the LAME/Xing header's
//!   encoder delay and padding trimmed), no "Frankenstein" streams (a stream whose format
//!   changes ends there);
//! - the length from mpg123_length, or from a full scan where the headers don't give it;
//! - then `SoundFile.read()`, as `load_audio` calls it: `frames` frames from where opening left
//!   the stream, with no seek. (`soundfile.read()` would seek to frame 0 first, and that seek is
//!   not a no-op: it restarts the synth's ring buffer at another offset, and the assembly synth
//!   sums in an order that depends on it, so MPEG-2/2.5 samples would differ by one float step
//!   in a quarter of the samples.)
//!
//! On x86-64 mpg123 picks its decoder at run time as the soundfile wheel's build does (AVX, else
//! SSE "x86-64"), so the samples are the reference's bit for bit; other CPUs get the generic C
//! decoder (see build.rs).

use std::ffi::CStr;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::raw::{c_int, c_long, c_void};

use crate::error::{MediaError, MediaProblem, Result};
use crate::MediaLimits;

/// Anything mpg123 can read through: a file or bytes in memory.
pub(crate) trait ReadSeek: Read + Seek {}
impl<T: Read + Seek> ReadSeek for T {}

/// What the headers say (after a scan where they don't say the length).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Mp3Header {
    pub sample_rate: u32,
    pub channels: u16,
    /// Frames after gapless trimming; `None` when mpg123 cannot tell.
    pub frames: Option<u64>,
}

impl Mp3Header {
    pub fn seconds(&self) -> Option<f64> {
        self.frames.map(|frames| frames as f64 / self.sample_rate as f64)
    }
}

/// Decoded samples, interleaved as mpg123 gives them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mp3Samples {
    pub interleaved: Vec<f32>,
    pub sample_rate: u32,
    pub channels: usize,
}

/// Whether libsndfile would hand the file to mpg123: its content is MPEG audio, or it is named
/// `.mp3` and starts like no other container libsndfile reads ("MPEG streams are quite tolerant
/// of crap", it says: mpg123 skips junk to the first frame). Leaves `source` at its start.
pub(crate) fn is_mp3(file: &str, source: &mut dyn ReadSeek) -> io::Result<bool> {
    if is_mpeg_audio(source)? {
        return Ok(true);
    }
    let named_mp3 = std::path::Path::new(file).extension().is_some_and(|e| e.eq_ignore_ascii_case("mp3"));
    if !named_mp3 {
        return Ok(false);
    }
    let mut head = [0u8; 12];
    let filled = read_up_to(source, &mut head)?;
    source.seek(SeekFrom::Start(0))?;
    let other =
        [&b"RIFF"[..], b"RIFX", b"RF64", b"fLaC", b"OggS", b"FORM", b"caff", b"wvpk"].iter().any(|magic| head[..filled].starts_with(magic))
            || head.get(4..8) == Some(b"ftyp");
    Ok(!other)
}

/// Whether the stream is MPEG audio by libsndfile's test: a frame header (sync, a valid
/// version, layer, bitrate and rate) at the start, or right after ID3v2 tags. Leaves `source`
/// at its start.
fn is_mpeg_audio(source: &mut dyn ReadSeek) -> io::Result<bool> {
    let mut head = [0u8; 10];
    let mut offset = 0u64;
    let found = loop {
        source.seek(SeekFrom::Start(offset))?;
        if read_up_to(source, &mut head)? < 4 {
            break false;
        }
        if &head[..3] == b"ID3" {
            // Tag size: four 7-bit bytes, plus the header and an optional footer.
            let size = head[6..10].iter().fold(0u64, |size, &b| (size << 7) | (b & 0x7f) as u64);
            offset += 10 + size + if head[5] & 0x10 != 0 { 10 } else { 0 };
            continue;
        }
        let marker = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        break marker & 0xFFE0_0000 == 0xFFE0_0000 // frame sync
            && marker & 0x0018_0000 != 0x0008_0000 // a valid MPEG version
            && marker & 0x0006_0000 != 0 // a valid layer
            && marker & 0x0000_F000 != 0x0000_F000 // a valid bitrate
            && marker & 0x0000_0C00 != 0x0000_0C00; // a valid sample rate
    };
    source.seek(SeekFrom::Start(0))?;
    Ok(found)
}

fn read_up_to(source: &mut dyn Read, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match source.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Opens the stream and reads its format and length, without decoding.
pub(crate) fn probe(file: &str, source: &mut dyn ReadSeek) -> Result<Mp3Header> {
    let mut io = Io { source, error: None };
    let header = Stream::open(file, &mut io)?.header;
    Ok(header)
}

/// Decodes the whole stream at its own rate, checking the duration limit before decoding (on
/// the length the headers or a scan give) and while decoding.
pub(crate) fn decode(file: &str, source: &mut dyn ReadSeek, limits: &MediaLimits) -> Result<Mp3Samples> {
    let mut io = Io { source, error: None };
    let mut stream = Stream::open(file, &mut io)?;
    let header = stream.header;
    match header.seconds() {
        Some(seconds) if seconds <= 0.0 => return Err(MediaError::media(file, MediaProblem::NoAudio)),
        Some(seconds) => limits.check_seconds(file, seconds)?,
        None => {}
    }
    let channels = header.channels as usize;
    let limit_frames = (limits.max_audio_seconds * header.sample_rate as f64) as u64;
    let mut interleaved = Vec::with_capacity(header.frames.map_or(0, |f| f as usize * channels));
    let mut chunk = vec![0f32; 1152 * 32 * channels];
    loop {
        let mut wanted = chunk.len();
        if let Some(frames) = header.frames {
            // soundfile reads the `frames` the header promised, no more.
            wanted = wanted.min((frames as usize * channels).saturating_sub(interleaved.len()));
        }
        if wanted == 0 {
            break;
        }
        let got = stream.read(&mut chunk[..wanted])?;
        if got == 0 {
            break;
        }
        interleaved.extend_from_slice(&chunk[..got]);
        if (interleaved.len() / channels) as u64 > limit_frames {
            return Err(MediaError::media(file, MediaProblem::TooLong { seconds: None, limit: limits.max_audio_seconds }));
        }
    }
    interleaved.truncate(interleaved.len() / channels * channels);
    if interleaved.is_empty() {
        return Err(MediaError::media(file, MediaProblem::NoAudio));
    }
    Ok(Mp3Samples { interleaved, sample_rate: header.sample_rate, channels })
}

/// The reader mpg123 calls back, and the first I/O error it met (mpg123 only sees "failed").
struct Io<'a> {
    source: &'a mut dyn ReadSeek,
    error: Option<io::Error>,
}

/// An open mpg123 handle over `Io`, set up as libsndfile sets it up.
struct Stream<'s, 'a> {
    handle: *mut ffi::Mpg123Handle,
    io: &'s mut Io<'a>,
    file: &'s str,
    header: Mp3Header,
}

impl<'s, 'a> Stream<'s, 'a> {
    fn open(file: &'s str, io: &'s mut Io<'a>) -> Result<Self> {
        let mut code = 0;
        // SAFETY: a null decoder name asks for the default (the best for this CPU).
        let handle = unsafe { ffi::mpg123_new(std::ptr::null(), &mut code) };
        if handle.is_null() {
            return Err(MediaError::Internal(format!("libmpg123 could not start: {}", plain_error(code))));
        }
        let mut stream = Stream { handle, io, file, header: Mp3Header { sample_rate: 0, channels: 0, frames: None } };
        // SAFETY: `handle` is live; the reader's handle is `stream.io`, which outlives it (the
        // handle is deleted when `stream` drops, before `io`'s borrow ends).
        unsafe {
            stream.check(ffi::mpg123_param2(handle, ffi::MPG123_REMOVE_FLAGS, ffi::MPG123_AUTO_RESAMPLE, 1.0))?;
            let flags = ffi::MPG123_FORCE_FLOAT | ffi::MPG123_GAPLESS | ffi::MPG123_NO_FRANKENSTEIN | ffi::MPG123_QUIET;
            stream.check(ffi::mpg123_param2(handle, ffi::MPG123_ADD_FLAGS, flags, 1.0))?;
            stream.check(ffi::mpg123_reader64(handle, Some(read_callback), Some(seek_callback), None))?;
            let io_handle = &mut *stream.io as *mut Io<'a> as *mut c_void;
            stream.check(ffi::mpg123_open_handle(handle, io_handle))?;
            let (mut rate, mut channels, mut encoding): (c_long, c_int, c_int) = (0, 0, 0);
            stream.check(ffi::mpg123_getformat(handle, &mut rate, &mut channels, &mut encoding))?;
            let mut length = ffi::mpg123_length64(handle);
            if length <= 0 {
                stream.check(ffi::mpg123_scan(handle))?;
                length = ffi::mpg123_length64(handle);
            }
            if encoding != ffi::MPG123_ENC_FLOAT_32 {
                stream.check(ffi::mpg123_format(handle, rate, channels, ffi::MPG123_ENC_FLOAT_32))?;
            }
            if rate <= 0 || !(1..=2).contains(&channels) {
                return Err(stream.corrupt(format!("{rate} Hz, {channels} channels")));
            }
            stream.header =
                Mp3Header { sample_rate: rate as u32, channels: channels as u16, frames: (length >= 0).then_some(length as u64) };
        }
        Ok(stream)
    }

    /// Fills `out` with up to its length of interleaved samples; 0 at the end.
    fn read(&mut self, out: &mut [f32]) -> Result<usize> {
        let mut done = 0usize;
        // SAFETY: `out` is writable for its length in bytes; the handle is live and open.
        let code = unsafe { ffi::mpg123_read(self.handle, out.as_mut_ptr() as *mut c_void, std::mem::size_of_val(out), &mut done) };
        match code {
            ffi::MPG123_OK | ffi::MPG123_DONE => Ok(done / std::mem::size_of::<f32>()),
            ffi::MPG123_NEW_FORMAT => Err(self.corrupt("the stream changes format midway".into())),
            _ => Err(self.failure(code)),
        }
    }

    fn check(&mut self, code: c_int) -> Result<()> {
        if code == ffi::MPG123_OK {
            Ok(())
        } else {
            Err(self.failure(code))
        }
    }

    /// The error for a failed call: the reader's own I/O error where there was one.
    fn failure(&mut self, code: c_int) -> MediaError {
        if let Some(error) = self.io.error.take() {
            return MediaError::media(self.file, MediaProblem::Unreadable { detail: error.to_string() });
        }
        match code {
            ffi::MPG123_DONE => MediaError::media(self.file, MediaProblem::NoAudio),
            _ => self.corrupt(self.handle_error()),
        }
    }

    fn corrupt(&self, detail: String) -> MediaError {
        MediaError::media(self.file, MediaProblem::Corrupt { detail: format!("MP3: {detail}") })
    }

    fn handle_error(&self) -> String {
        // SAFETY: mpg123_strerror returns a static or handle-owned C string.
        unsafe { CStr::from_ptr(ffi::mpg123_strerror(self.handle)) }.to_string_lossy().into_owned()
    }
}

impl Drop for Stream<'_, '_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from mpg123_new and is deleted once (closing it first).
        unsafe {
            ffi::mpg123_close(self.handle);
            ffi::mpg123_delete(self.handle);
        }
    }
}

fn plain_error(code: c_int) -> String {
    // SAFETY: mpg123_plain_strerror returns a static C string for any code.
    unsafe { CStr::from_ptr(ffi::mpg123_plain_strerror(code)) }.to_string_lossy().into_owned()
}

/// mpg123's read callback: 0 and the count read (0 at the end), or -1.
unsafe extern "C" fn read_callback(io: *mut c_void, buffer: *mut c_void, count: usize, got: *mut usize) -> c_int {
    // SAFETY: `io` is the `Io` given to mpg123_open_handle, alive while the handle is open, and
    // mpg123 passes a buffer writable for `count` bytes.
    let (io, buffer) = unsafe { (&mut *(io as *mut Io), std::slice::from_raw_parts_mut(buffer as *mut u8, count)) };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_up_to(io.source, buffer)));
    match result {
        Ok(Ok(n)) => {
            // SAFETY: mpg123 passes a valid out pointer.
            unsafe { *got = n };
            0
        }
        Ok(Err(error)) => {
            io.error.get_or_insert(error);
            -1
        }
        Err(_) => -1,
    }
}

/// mpg123's seek callback: the new position, or -1.
unsafe extern "C" fn seek_callback(io: *mut c_void, offset: i64, whence: c_int) -> i64 {
    // SAFETY: as in `read_callback`.
    let io = unsafe { &mut *(io as *mut Io) };
    let target = match whence {
        ffi::SEEK_SET if offset >= 0 => SeekFrom::Start(offset as u64),
        ffi::SEEK_CUR => SeekFrom::Current(offset),
        ffi::SEEK_END => SeekFrom::End(offset),
        _ => return -1,
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| io.source.seek(target))) {
        Ok(Ok(position)) => position as i64,
        Ok(Err(error)) => {
            io.error.get_or_insert(error);
            -1
        }
        Err(_) => -1,
    }
}

/// The parts of libmpg123's portable API (mpg123.h, MPG123_PORTABLE_API) that decoding a file
/// takes.
mod ffi {
    use std::os::raw::{c_char, c_double, c_int, c_long, c_void};

    #[repr(C)]
    pub struct Mpg123Handle {
        _opaque: [u8; 0],
    }

    pub const MPG123_OK: c_int = 0;
    pub const MPG123_DONE: c_int = -12;
    pub const MPG123_NEW_FORMAT: c_int = -11;

    /// enum mpg123_parms
    pub const MPG123_ADD_FLAGS: c_int = 2;
    pub const MPG123_REMOVE_FLAGS: c_int = 13;
    /// enum mpg123_param_flags
    pub const MPG123_QUIET: c_long = 0x20;
    pub const MPG123_GAPLESS: c_long = 0x40;
    pub const MPG123_FORCE_FLOAT: c_long = 0x400;
    pub const MPG123_AUTO_RESAMPLE: c_long = 0x8000;
    pub const MPG123_NO_FRANKENSTEIN: c_long = 0x100_0000;
    /// fmt123.h
    pub const MPG123_ENC_FLOAT_32: c_int = 0x200;

    pub const SEEK_SET: c_int = 0;
    pub const SEEK_CUR: c_int = 1;
    pub const SEEK_END: c_int = 2;

    pub type ReadFn = unsafe extern "C" fn(*mut c_void, *mut c_void, usize, *mut usize) -> c_int;
    pub type SeekFn = unsafe extern "C" fn(*mut c_void, i64, c_int) -> i64;
    pub type CleanupFn = unsafe extern "C" fn(*mut c_void);

    unsafe extern "C" {
        pub fn mpg123_new(decoder: *const c_char, error: *mut c_int) -> *mut Mpg123Handle;
        pub fn mpg123_delete(mh: *mut Mpg123Handle);
        pub fn mpg123_param2(mh: *mut Mpg123Handle, key: c_int, value: c_long, fvalue: c_double) -> c_int;
        pub fn mpg123_reader64(mh: *mut Mpg123Handle, read: Option<ReadFn>, seek: Option<SeekFn>, cleanup: Option<CleanupFn>) -> c_int;
        pub fn mpg123_open_handle(mh: *mut Mpg123Handle, iohandle: *mut c_void) -> c_int;
        pub fn mpg123_close(mh: *mut Mpg123Handle) -> c_int;
        pub fn mpg123_getformat(mh: *mut Mpg123Handle, rate: *mut c_long, channels: *mut c_int, encoding: *mut c_int) -> c_int;
        pub fn mpg123_format(mh: *mut Mpg123Handle, rate: c_long, channels: c_int, encodings: c_int) -> c_int;
        pub fn mpg123_length64(mh: *mut Mpg123Handle) -> i64;
        pub fn mpg123_scan(mh: *mut Mpg123Handle) -> c_int;
        pub fn mpg123_read(mh: *mut Mpg123Handle, out: *mut c_void, size: usize, done: *mut usize) -> c_int;
        pub fn mpg123_strerror(mh: *mut Mpg123Handle) -> *const c_char;
        pub fn mpg123_plain_strerror(code: c_int) -> *const c_char;
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    fn corpus_clip() -> Vec<u8> {
        let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/fixtures/media_fidelity");
        std::fs::read(format!("{corpus}/clip_8000_stereo.mp3")).unwrap()
    }

    fn problem(result: Result<Mp3Samples>) -> MediaProblem {
        match result {
            Err(MediaError::Media { problem, .. }) => problem,
            other => panic!("expected a media error, got {other:?}"),
        }
    }

    #[test]
    fn an_id3_tag_before_the_first_frame_is_skipped() {
        let plain = corpus_clip();
        // An ID3v2.4 header declaring 300 bytes of tag (syncsafe: 2 × 128 + 44), zero-padded.
        let mut tagged = b"ID3\x04\x00\x00\x00\x00\x02\x2c".to_vec();
        tagged.extend(std::iter::repeat_n(0u8, 300));
        tagged.extend_from_slice(&plain);
        let limits = MediaLimits::default();
        for bytes in [&plain, &tagged] {
            assert!(is_mp3("clip.bin", &mut Cursor::new(bytes)).unwrap());
        }
        let (a, b) =
            (decode("a.mp3", &mut Cursor::new(&plain), &limits).unwrap(), decode("b.mp3", &mut Cursor::new(&tagged), &limits).unwrap());
        assert_eq!((a.sample_rate, a.channels, a.interleaved.len()), (8000, 2, 4800 * 2));
        assert_eq!(a, b);
        let header = probe("a.mp3", &mut Cursor::new(&plain)).unwrap();
        assert_eq!(header, Mp3Header { sample_rate: 8000, channels: 2, frames: Some(4800) });
    }

    #[test]
    fn only_mpeg_content_or_an_mp3_name_on_unknown_content_goes_to_mpg123() {
        let wav = b"RIFF\x24\0\0\0WAVEfmt ";
        assert!(!is_mp3("voice.mp3", &mut Cursor::new(&wav[..])).unwrap());
        assert!(!is_mp3("voice.bin", &mut Cursor::new(&b"just some words in a file"[..])).unwrap());
        assert!(is_mp3("voice.MP3", &mut Cursor::new(&b"just some words in a file"[..])).unwrap());
    }

    #[test]
    fn junk_cut_and_overlong_streams_are_typed_errors_or_what_is_there() {
        let limits = MediaLimits::default();
        let junk = b"just some words in a file, named as if it were an MP3".repeat(20);
        let got = problem(decode("voice.mp3", &mut Cursor::new(&junk), &limits));
        assert!(matches!(got, MediaProblem::Corrupt { .. } | MediaProblem::NoAudio), "{got:?}");
        let got = problem(decode("empty.mp3", &mut Cursor::new(&[][..]), &limits));
        assert!(matches!(got, MediaProblem::Corrupt { .. } | MediaProblem::NoAudio), "{got:?}");

        // Cut in the middle: the frames that are there.
        let clip = corpus_clip();
        let cut = decode("cut.mp3", &mut Cursor::new(&clip[..clip.len() / 2]), &limits).unwrap();
        assert!(cut.interleaved.len() > 1000 && cut.interleaved.len() < 4800 * 2, "{}", cut.interleaved.len());

        let short = MediaLimits { max_audio_seconds: 0.2, ..Default::default() };
        let got = problem(decode("long.mp3", &mut Cursor::new(&clip), &short));
        let expected = MediaProblem::TooLong { seconds: Some(0.6), limit: 0.2 };
        assert_eq!(got, expected);
    }
}
