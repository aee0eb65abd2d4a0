//! Decoding the requested frames of an MP4's video track, whatever its codec (H.264 through
//! OpenH264, HEVC through macOS's VideoToolbox): a `Codec` says which samples hold an IDR
//! picture and makes fresh decoders; the planning, the parallel pieces and the reordering into
//! display order are here, once.
//!
//! The track is cut into groups of pictures at its sync samples. A group is decoded when it
//! holds a requested frame, or when the next group does not start with an IDR picture (then the
//! next may reference it); the others are skipped, so a long clip sampled sparsely decodes
//! little more than its sampled groups, and nothing past the last requested frame is decoded.
//!
//! Runs of decoded groups are cut into pieces at every IDR picture, where nothing before can be
//! referenced. Each piece is decoded by a fresh decoder, so pieces decode in parallel (one
//! worker per core, up to `MAX_WORKERS`) with the same pixels as one decoder from the start:
//! OpenH264 itself runs one thread. Frames reach the caller in display order, each converted by
//! the worker that decoded it; a worker runs at most `FRAMES_AHEAD` frames ahead of the caller,
//! which bounds memory. Decoders may hand pictures out in any order (OpenH264 in display order,
//! VideoToolbox in decode order): each is tagged with its display index and copied out of the
//! decoder only when it is a requested frame.

use std::io::{Read, Seek, SeekFrom};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use super::mp4::{Sample, VideoTrack};
use super::yuv::YuvFrame;
use crate::error::{MediaError, MediaProblem, Result};
use crate::source::SourceReader;
use crate::MediaSource;

/// Decoder threads at most (each holds a decoder's reference pictures).
const MAX_WORKERS: usize = 8;
/// Converted frames a worker may hold for the caller before it waits.
const FRAMES_AHEAD: usize = 2;
/// Below this many frames to decode, one thread does it all (spawning costs more).
const PARALLEL_FROM_SAMPLES: usize = 48;

/// A range of samples (decode order) that one fresh decoder decodes, and the requested display
/// indices it yields (ascending, repeats kept).
#[derive(Debug, Clone, PartialEq)]
struct Piece {
    samples: std::ops::Range<usize>,
    indices: Vec<u64>,
}

/// A codec's part in decoding a track.
pub(crate) trait Codec: Sync {
    type Decoder: Decoder;

    /// Whether a sample (length-prefixed NAL units, as stored) holds an IDR picture, which
    /// nothing after it references anything before.
    fn is_idr(&self, sample: &[u8]) -> Result<bool, String>;

    /// A fresh decoder, ready for the stream's first sample or any IDR picture; its errors name
    /// `file`.
    fn decoder(&self, file: &str) -> Result<Self::Decoder>;

    /// How many decoders may run at once, one per worker thread.
    fn max_decoders(&self) -> usize {
        MAX_WORKERS
    }
}

/// Where a decoder hands each picture it outputs: its display index, and a way to copy its
/// planes out, called only for the requested frames.
pub(crate) type PictureSink<'a> = dyn FnMut(u64, &dyn Fn() -> Result<YuvFrame>) -> Result<()> + 'a;

/// One decoder instance, fed the samples of one piece in decode order.
pub(crate) trait Decoder {
    /// Decodes one sample tagged with its display index, handing any pictures that come out
    /// (in whatever order the decoder outputs them) to `out`.
    fn decode(&mut self, sample: &[u8], display_index: u64, out: &mut PictureSink) -> Result<()>;

    /// After the piece's last sample: the pictures still held for reordering.
    fn finish(&mut self, out: &mut PictureSink) -> Result<()>;
}

/// A track to decode: the file (or bytes) it is in, its samples, its codec, and the sample (decode order)
/// at each display index.
pub(crate) struct Track<'a, C: Codec> {
    pub file: &'a str,
    pub source: &'a MediaSource,
    pub track: &'a VideoTrack,
    pub codec: &'a C,
    pub display_order: &'a [usize],
}

/// What a worker sends for each frame of a piece, in order.
type FrameSender<T> = mpsc::SyncSender<Result<(u64, T)>>;

/// Decodes the frames at `indices` (display order, ascending) and hands each, after `convert`,
/// to `sink` in order.
pub(crate) fn decode_frames<C: Codec, T: Send>(
    t: &Track<C>,
    indices: &[u64],
    convert: &(dyn Fn(YuvFrame) -> T + Sync),
    sink: &mut dyn FnMut(u64, T) -> Result<()>,
) -> Result<()> {
    let Track { file, source, track, display_order, .. } = *t;
    let mut reader = source.open(file)?;
    let pieces = plan(t, &mut reader, indices)?;
    let decoded: usize = pieces.iter().map(|p| p.samples.len()).sum();
    // The display index of each sample.
    let mut display_of = vec![0u64; track.samples.len()];
    for (display, &sample) in display_order.iter().enumerate() {
        display_of[sample] = display as u64;
    }
    let display_of = &display_of[..];
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = cores.min(t.codec.max_decoders()).min(pieces.len());
    tracing::debug!(file, decoded, pieces = pieces.len(), workers, requested = indices.len(), frames = track.samples.len(), "decode plan");

    if workers <= 1 || decoded < PARALLEL_FROM_SAMPLES {
        for piece in &pieces {
            decode_piece(t, &mut reader, display_of, piece, &mut |index, frame| sink(index, convert(frame)))?;
        }
        return Ok(());
    }

    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let mut receivers = Vec::with_capacity(pieces.len());
        let mut senders: Vec<Vec<(usize, FrameSender<T>)>> = (0..workers).map(|_| Vec::new()).collect();
        for p in 0..pieces.len() {
            let (sender, receiver) = mpsc::sync_channel(FRAMES_AHEAD);
            senders[p % workers].push((p, sender));
            receivers.push(receiver);
        }
        for assigned in senders {
            let (pieces, stop) = (&pieces, &stop);
            scope.spawn(move || {
                let mut reader = match source.open(file) {
                    Ok(reader) => reader,
                    Err(error) => {
                        // Each piece gets the error; its problem is cloned (an io::Error is not).
                        let problem = match error {
                            MediaError::Media { problem, .. } => problem,
                            other => MediaProblem::Unreadable { detail: other.to_string() },
                        };
                        for (_, sender) in assigned {
                            let _ = sender.send(Err(MediaError::media(file, problem.clone())));
                        }
                        return;
                    }
                };
                for (p, sender) in assigned {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let mut emit = |index: u64, frame: YuvFrame| {
                        // The caller has stopped reading: stop decoding.
                        sender.send(Ok((index, convert(frame)))).map_err(|_| MediaError::Stopped)
                    };
                    if let Err(error) = decode_piece(t, &mut reader, display_of, &pieces[p], &mut emit) {
                        let _ = sender.send(Err(error));
                        return;
                    }
                }
            });
        }
        // Pieces in order: each one's frames come in display order through its own channel.
        let result = (|| {
            for receiver in &receivers {
                for message in receiver {
                    let (index, frame) = message?;
                    sink(index, frame)?;
                }
            }
            Ok(())
        })();
        if result.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        // Dropping the receivers wakes any worker waiting to send; the scope then joins them.
        drop(receivers);
        result
    })
}

/// Which samples to decode, in pieces that each start a fresh decoder.
fn plan<C: Codec>(t: &Track<C>, reader: &mut SourceReader, indices: &[u64]) -> Result<Vec<Piece>> {
    let Track { file, track, codec, display_order, .. } = *t;
    let samples = &track.samples;
    let mut needed = vec![false; samples.len()];
    for &i in indices {
        needed[display_order[i as usize]] = true;
    }
    let Some(last_needed) = needed.iter().rposition(|&n| n) else { return Ok(Vec::new()) };

    // Groups of pictures: each starts at a sync sample (sample 0 always starts one).
    let mut starts: Vec<usize> = (0..=last_needed).filter(|&i| i == 0 || samples[i].sync).collect();
    let group_end = (last_needed + 1..samples.len()).find(|&i| samples[i].sync).unwrap_or(samples.len());
    starts.push(group_end);
    let mut data = Vec::new();
    let mut starts_with_idr = |sample: usize| -> Result<bool> {
        if sample >= samples.len() {
            return Ok(true);
        }
        read_sample(file, reader, &samples[sample], &mut data)?;
        codec.is_idr(&data).map_err(|d| corrupt(file, d))
    };

    let mut pieces: Vec<Piece> = Vec::new();
    let mut previous_decoded = false;
    for (g, range) in starts.windows(2).map(|w| w[0]..w[1]).enumerate() {
        let useful = needed[range.clone()].iter().any(|&n| n);
        let next_is_idr = starts_with_idr(range.end)?;
        if !useful && next_is_idr {
            previous_decoded = false;
            continue;
        }
        // A new piece where a decoder can start afresh: after a skipped group, or at an IDR.
        let fresh = !previous_decoded || g == 0 || starts_with_idr(range.start)?;
        match pieces.last_mut() {
            Some(piece) if !fresh => piece.samples.end = range.end,
            _ => pieces.push(Piece { samples: range, indices: Vec::new() }),
        }
        previous_decoded = true;
    }
    // Each requested frame goes to the piece holding its sample; with IDR cuts, the pieces'
    // display ranges follow one another, so each piece's list stays ascending.
    for &i in indices {
        let sample = display_order[i as usize];
        if let Some(piece) = pieces.iter_mut().find(|p| p.samples.contains(&sample)) {
            piece.indices.push(i);
        }
    }
    Ok(pieces)
}

/// Decodes one piece with a fresh decoder, handing its requested frames to `emit` in order.
fn decode_piece<C: Codec>(
    t: &Track<C>,
    reader: &mut SourceReader,
    display_of: &[u64],
    piece: &Piece,
    emit: &mut dyn FnMut(u64, YuvFrame) -> Result<()>,
) -> Result<()> {
    let Track { file, track, codec, .. } = *t;
    if piece.indices.is_empty() {
        return Ok(());
    }
    let mut decoder = codec.decoder(file)?;
    let mut wanted = Wanted { indices: &piece.indices, next: 0, held: Default::default(), emit };
    let mut data = Vec::new();
    for sample in piece.samples.clone() {
        if wanted.done() {
            return Ok(());
        }
        read_sample(file, reader, &track.samples[sample], &mut data)?;
        // Tagged with its display index, which the decoder hands back with the picture.
        decoder.decode(&data, display_of[sample], &mut |index, planes| wanted.offer(index, planes))?;
    }
    if !wanted.done() {
        // The end of the piece: the pictures held for reordering.
        decoder.finish(&mut |index, planes| wanted.offer(index, planes))?;
    }
    match wanted.indices.get(wanted.next) {
        Some(missing) => Err(corrupt(file, format!("frame {missing} could not be decoded"))),
        None => Ok(()),
    }
}

/// A piece's requested frames still to come: each decoded one is handed on in display order,
/// held only while an earlier one is still missing.
struct Wanted<'a> {
    indices: &'a [u64],
    /// Position in `indices` of the next frame to hand on.
    next: usize,
    held: std::collections::BTreeMap<u64, YuvFrame>,
    emit: &'a mut dyn FnMut(u64, YuvFrame) -> Result<()>,
}

impl Wanted<'_> {
    fn offer(&mut self, index: u64, planes: &dyn Fn() -> Result<YuvFrame>) -> Result<()> {
        let rest = &self.indices[self.next..];
        if rest.binary_search(&index).is_err() || self.held.contains_key(&index) {
            return Ok(());
        }
        self.held.insert(index, planes()?);
        while let Some(&index) = self.indices.get(self.next) {
            let repeated = self.indices.get(self.next + 1) == Some(&index);
            let frame = if repeated { self.held.get(&index).cloned() } else { self.held.remove(&index) };
            let Some(frame) = frame else { break };
            (self.emit)(index, frame)?;
            self.next += 1;
        }
        Ok(())
    }

    fn done(&self) -> bool {
        self.next == self.indices.len()
    }
}

fn read_sample(file: &str, reader: &mut SourceReader, sample: &Sample, data: &mut Vec<u8>) -> Result<()> {
    data.resize(sample.size as usize, 0);
    reader.seek(SeekFrom::Start(sample.offset)).map_err(|e| unreadable(file, e))?;
    reader.read_exact(data).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => corrupt(file, "the file is cut short in the middle of a frame".into()),
        _ => unreadable(file, e),
    })
}

fn corrupt(file: &str, detail: String) -> MediaError {
    MediaError::media(file, MediaProblem::Corrupt { detail })
}

fn unreadable(file: &str, error: std::io::Error) -> MediaError {
    MediaError::media(file, MediaProblem::Unreadable { detail: error.to_string() })
}
