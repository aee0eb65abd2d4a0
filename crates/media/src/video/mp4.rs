//! MP4 and QuickTime (MOV, M4V) demuxing, our own: only what reading one video track needs
//! (the movie header, each track's header, handler, media header and sample tables), parsed
//! from the `moov` box alone, with every count checked against the bytes that hold it so a
//! lying header cannot make us allocate or loop. Samples are read later, one at a time, from
//! the file at their offsets; `mdat` is never loaded whole.
//!
//! Edit lists are not applied: every sample is a frame, and times count from the earliest
//! presented frame. That is what an encoder's one-edit list (shifting B-frame delay away)
//! amounts to, and it is how FFmpeg reports the files phones and screen recorders write.

use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom};

use image::metadata::Orientation;

use crate::error::{MediaError, MediaProblem, Result};
use crate::source::SourceReader;

/// A video track as its sample tables describe it.
#[derive(Debug, Clone)]
pub(crate) struct VideoTrack {
    /// How the track header's display matrix turns stored frames upright.
    pub orientation: Orientation,
    /// Samples per second of the track's clock.
    pub timescale: u32,
    /// The media duration in seconds: the sum of the sample durations (mdhd's when they sum to 0).
    pub seconds: f64,
    /// Frames in decode order.
    pub samples: Vec<Sample>,
    /// The track's id, which fragments name.
    pub track_id: u32,
}

/// One coded frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sample {
    pub offset: u64,
    pub size: u32,
    /// Presentation time in the track's timescale (decode time plus the composition offset).
    pub time: i64,
    /// How long it is shown, in the track's timescale.
    pub duration: i64,
    /// A sync sample (decoding can start here).
    pub sync: bool,
}

/// What a movie holds, as far as Confab cares.
#[derive(Debug, Clone)]
pub(crate) struct Movie {
    pub video: Option<VideoTrack>,
    /// The movie header's duration in seconds (0 when it says none).
    pub seconds: f64,
}

/// The header fields a limit is checked on, read before the sample table is built.
#[derive(Debug, Clone)]
pub(crate) struct TrackHeader<'a> {
    pub entry: [u8; 4],
    pub width: u32,
    pub height: u32,
    pub orientation: Orientation,
    pub seconds: f64,
    pub frames: u64,
    /// The entry's codec configuration box (`avcC` for H.264, `hvcC` for HEVC), when it has one.
    pub config: Option<&'a [u8]>,
}

/// Reads the `moov` box of an MP4/MOV and the video track in it. `check` sees the track's
/// header before any table is expanded (the caller's limits live there), and again with the
/// real frame count and duration when the movie is fragmented; no more than `max_frames + 1`
/// frames are ever listed.
pub(crate) fn read_movie(
    file: &str,
    reader: &mut SourceReader,
    file_len: u64,
    max_frames: u64,
    check: &mut dyn FnMut(&TrackHeader) -> Result<()>,
) -> Result<Movie> {
    let (moov, fragments) = top_level_boxes(file, reader, file_len)?;
    let mut movie_seconds = 0.0;
    let mut video = None;
    let mut extends = None;
    for item in Boxes::new(&moov) {
        let (kind, body) = item.map_err(|d| corrupt(file, d))?;
        match &kind {
            b"mvhd" => movie_seconds = media_header(body).map(|(scale, d)| seconds(d, scale)).unwrap_or(0.0),
            b"mvex" => extends = Some(body),
            b"trak" if video.is_none() => video = video_track(file, body, check)?,
            _ => {}
        }
    }
    if let (Some((track, header)), Some(mvex)) = (&mut video, extends) {
        // Fragmented (browsers' and some recorders' MP4): the frames are listed in `moof` boxes.
        let before = track.samples.len();
        let defaults = track_defaults(mvex, track.track_id).map_err(|d| corrupt(file, d))?;
        read_fragments(file, reader, &fragments, track, defaults, max_frames)?;
        if track.samples.len() > before {
            let start = track.samples.iter().map(|s| s.time).min().unwrap_or(0);
            let end = track.samples.iter().map(|s| s.time.saturating_add(s.duration)).max().unwrap_or(0);
            track.seconds = seconds(end.saturating_sub(start).max(0) as u64, track.timescale);
            header.frames = track.samples.len() as u64;
            header.seconds = header.seconds.max(track.seconds);
            check(header)?;
        }
    }
    if let Some((track, _)) = &video {
        check_samples_present(file, track, file_len)?;
    }
    Ok(Movie { video: video.map(|(track, _)| track), seconds: movie_seconds })
}

/// (default sample duration, size, flags) for `track_id` from `mvex`'s `trex`.
fn track_defaults(mvex: &[u8], track_id: u32) -> Result<(u32, u32, u32), String> {
    for item in Boxes::new(mvex) {
        let (kind, body) = item?;
        if &kind == b"trex" && be32(body, 4) == Some(track_id) {
            let field = |at| be32(body, at).ok_or("'trex' is cut short");
            return Ok((field(12)?, field(16)?, field(20)?));
        }
    }
    Ok((0, 0, 0))
}

/// Appends the video track's samples listed in each `moof`.
fn read_fragments(
    file: &str,
    reader: &mut SourceReader,
    fragments: &[Fragment],
    track: &mut VideoTrack,
    (default_duration, default_size, default_flags): (u32, u32, u32),
    max_frames: u64,
) -> Result<()> {
    let mut decode_time = track.samples.last().map_or(0, |s| s.time.saturating_add(s.duration));
    for &Fragment { start, header, size } in fragments {
        let mut moof = vec![0u8; (size - header) as usize];
        reader.seek(SeekFrom::Start(start + header)).map_err(|e| unreadable(file, e))?;
        reader.read_exact(&mut moof).map_err(|e| unreadable(file, e))?;
        for item in Boxes::new(&moof) {
            let (kind, traf) = item.map_err(|d| corrupt(file, d))?;
            if &kind != b"traf" {
                continue;
            }
            let bad = |d: String| corrupt(file, d);
            let tfhd = child(traf, b"tfhd").map_err(bad)?.ok_or_else(|| bad("a fragment has no 'tfhd'".into()))?;
            let flags = be32(tfhd, 0).unwrap_or(0) & 0xFF_FFFF;
            if be32(tfhd, 4) != Some(track.track_id) {
                continue;
            }
            let mut at = 8;
            let mut optional = |present: bool, wide: bool| -> Option<u64> {
                if !present {
                    return None;
                }
                let value = if wide { be64(tfhd, at) } else { be32(tfhd, at).map(u64::from) };
                at += if wide { 8 } else { 4 };
                value
            };
            // Without an explicit base, offsets count from the moof (what every writer we know
            // means, and what 'default-base-is-moof' says).
            let base = optional(flags & 0x1 != 0, true).unwrap_or(start);
            let _description = optional(flags & 0x2 != 0, false);
            let duration = optional(flags & 0x8 != 0, false).map_or(default_duration, |v| v as u32);
            let size = optional(flags & 0x10 != 0, false).map_or(default_size, |v| v as u32);
            let sample_flags = optional(flags & 0x20 != 0, false).map_or(default_flags, |v| v as u32);
            if let Some(tfdt) = child(traf, b"tfdt").map_err(bad)? {
                let time = if tfdt.first() == Some(&1) { be64(tfdt, 4) } else { be32(tfdt, 4).map(u64::from) };
                decode_time = time.ok_or_else(|| bad("'tfdt' is cut short".into()))?.min(i64::MAX as u64) as i64;
            }
            let mut data_at = base;
            for run in Boxes::new(traf) {
                let (kind, trun) = run.map_err(bad)?;
                if &kind != b"trun" {
                    continue;
                }
                let run_flags = be32(trun, 0).unwrap_or(0) & 0xFF_FFFF;
                let signed_offsets = trun.first() == Some(&1);
                let count = be32(trun, 4).ok_or_else(|| bad("'trun' is cut short".into()))?;
                let mut at = 8;
                if run_flags & 0x1 != 0 {
                    let offset = be32(trun, at).ok_or_else(|| bad("'trun' is cut short".into()))? as i32 as i64;
                    data_at = base.saturating_add_signed(offset);
                    at += 4;
                }
                let first_flags = if run_flags & 0x4 != 0 {
                    at += 4;
                    be32(trun, at - 4)
                } else {
                    None
                };
                let fields = [0x100, 0x200, 0x400, 0x800].iter().filter(|&&f| run_flags & f != 0).count();
                if (trun.len().saturating_sub(at) / 4) / fields.max(1) < count as usize && fields > 0 {
                    return Err(bad(format!("'trun' says {count} frames and holds fewer")));
                }
                for i in 0..count {
                    if track.samples.len() as u64 > max_frames {
                        return Ok(());
                    }
                    let mut field = |flag: u32| -> Option<u32> {
                        if run_flags & flag == 0 {
                            return None;
                        }
                        at += 4;
                        be32(trun, at - 4)
                    };
                    let sample_duration = field(0x100).unwrap_or(duration);
                    let sample_size = field(0x200).unwrap_or(size);
                    let flags = field(0x400).or(if i == 0 { first_flags } else { None }).unwrap_or(sample_flags);
                    let offset = field(0x800).map_or(0, |v| if signed_offsets { v as i32 as i64 } else { v as i64 });
                    track.samples.push(Sample {
                        offset: data_at,
                        size: sample_size,
                        time: decode_time.saturating_add(offset),
                        duration: sample_duration as i64,
                        // sample_is_non_sync_sample
                        sync: flags & 0x1_0000 == 0,
                    });
                    data_at = data_at.saturating_add(sample_size as u64);
                    decode_time = decode_time.saturating_add(sample_duration as i64);
                }
            }
        }
    }
    Ok(())
}

/// Where a top-level `moof` box is.
#[derive(Debug, Clone, Copy)]
struct Fragment {
    start: u64,
    header: u64,
    size: u64,
}

/// The `moov` payload and where each `moof` is, after walking the top-level boxes without
/// reading `mdat`.
fn top_level_boxes(file: &str, reader: &mut SourceReader, file_len: u64) -> Result<(Vec<u8>, Vec<Fragment>)> {
    let mut at = 0u64;
    let mut moov = None;
    let mut fragments = Vec::new();
    while at.saturating_add(8) <= file_len {
        let mut header = [0u8; 16];
        reader.seek(SeekFrom::Start(at)).map_err(|e| unreadable(file, e))?;
        let take = (file_len - at).min(16) as usize;
        reader.read_exact(&mut header[..take]).map_err(|e| unreadable(file, e))?;
        let size32 = u32::from_be_bytes(header[0..4].try_into().unwrap()) as u64;
        let kind: [u8; 4] = header[4..8].try_into().unwrap();
        let (size, header_len) = match size32 {
            0 => (file_len - at, 8),
            1 if take == 16 => (u64::from_be_bytes(header[8..16].try_into().unwrap()), 16),
            1 => return Err(corrupt(file, "a box header is cut short".into())),
            n => (n, 8),
        };
        if size < header_len {
            return Err(corrupt(file, format!("a box ('{}') says it is {size} bytes", fourcc(&kind))));
        }
        let end = at.checked_add(size).ok_or_else(|| corrupt(file, "a box size overflows".into()))?;
        match &kind {
            b"moov" if moov.is_none() => {
                if end > file_len {
                    return Err(corrupt(file, "the movie header (moov) is cut short".into()));
                }
                let mut payload = vec![0u8; (size - header_len) as usize];
                reader.seek(SeekFrom::Start(at + header_len)).map_err(|e| unreadable(file, e))?;
                reader.read_exact(&mut payload).map_err(|e| unreadable(file, e))?;
                moov = Some(payload);
            }
            // A fragment cut off at the end of a recording: the frames before it still count.
            b"moof" if end <= file_len => fragments.push(Fragment { start: at, header: header_len, size }),
            _ => {}
        }
        at = end;
    }
    let moov = moov.ok_or_else(|| {
        corrupt(file, "it has no movie header (moov box): the recording was not finished or the file was cut short".into())
    })?;
    Ok((moov, fragments))
}

/// The first track whose handler is `vide`, or `None` for other tracks.
fn video_track<'a>(
    file: &str,
    trak: &'a [u8],
    check: &mut dyn FnMut(&TrackHeader) -> Result<()>,
) -> Result<Option<(VideoTrack, TrackHeader<'a>)>> {
    let bad = |detail: String| corrupt(file, detail);
    let tkhd = child(trak, b"tkhd").map_err(bad)?;
    let mdia = child(trak, b"mdia").map_err(bad)?.ok_or_else(|| bad("a track has no media box".into()))?;
    let handler = child(mdia, b"hdlr").map_err(bad)?.and_then(|h| h.get(8..12));
    if handler != Some(b"vide") {
        return Ok(None);
    }
    let (timescale, duration) =
        child(mdia, b"mdhd").map_err(bad)?.and_then(media_header).ok_or_else(|| bad("the video track has no media header".into()))?;
    if timescale == 0 {
        return Err(bad("the video track's time scale is 0".into()));
    }
    let stbl = child(mdia, b"minf")
        .map_err(bad)?
        .and_then(|minf| child(minf, b"stbl").ok().flatten())
        .ok_or_else(|| bad("the video track has no sample table".into()))?;
    let table = SampleTables::read(stbl).map_err(bad)?;
    let SampleEntry { code: entry, width, height, config } = sample_entry(table.stsd).map_err(bad)?;

    // The frames' own durations: mdhd also counts the B-frame delay an edit list hides (2.1 s
    // for 20 frames at 10 fps), which no frame is shown for.
    let stts_seconds = seconds(table.total_duration().map_err(bad)?, timescale);
    let mdhd_seconds = seconds(duration, timescale);
    let media_seconds = if stts_seconds > 0.0 { stts_seconds } else { mdhd_seconds };
    let header = TrackHeader {
        entry,
        width,
        height,
        orientation: tkhd.map(orientation).unwrap_or(Orientation::NoTransforms),
        // Either one saying the video is long is enough to refuse it.
        seconds: mdhd_seconds.max(stts_seconds),
        frames: table.sample_count as u64,
        config,
    };
    check(&header)?;
    let samples = table.samples().map_err(bad)?;
    let track_id = tkhd.and_then(|t| be32(t, if t.first() == Some(&1) { 20 } else { 12 })).unwrap_or(0);
    let track = VideoTrack { orientation: header.orientation, timescale, seconds: media_seconds, samples, track_id };
    Ok(Some((track, header)))
}

/// A cut-off `mdat` leaves the table pointing past the end: found here, before decoding.
fn check_samples_present(file: &str, track: &VideoTrack, file_len: u64) -> Result<()> {
    let present = track.samples.iter().filter(|s| s.offset.saturating_add(s.size as u64) <= file_len).count();
    if present < track.samples.len() {
        let detail = format!("the file is cut short: {present} of its {} frames are in it", track.samples.len());
        return Err(corrupt(file, detail));
    }
    Ok(())
}

/// mvhd/mdhd: (timescale, duration).
fn media_header(body: &[u8]) -> Option<(u32, u64)> {
    match body.first()? {
        1 => Some((be32(body, 20)?, be64(body, 24)?)),
        _ => Some((be32(body, 12)?, be32(body, 16)? as u64)),
    }
}

/// The display matrix's effect on stored frames; shears and scales are not something a camera
/// writes, and are ignored.
fn orientation(tkhd: &[u8]) -> Orientation {
    let matrix_at = if tkhd.first() == Some(&1) { 4 + 32 + 8 + 8 } else { 4 + 20 + 8 + 8 };
    let entry = |i: usize| be32(tkhd, matrix_at + 4 * i).map(|v| (v as i32).signum());
    let (Some(a), Some(b), Some(c), Some(d)) = (entry(0), entry(1), entry(3), entry(4)) else {
        return Orientation::NoTransforms;
    };
    // (a, b) is where the stored x axis points on screen, (c, d) the stored y axis (y down).
    match (a, b, c, d) {
        (0, 1, -1, 0) => Orientation::Rotate90,
        (-1, 0, 0, -1) => Orientation::Rotate180,
        (0, -1, 1, 0) => Orientation::Rotate270,
        (-1, 0, 0, 1) => Orientation::FlipHorizontal,
        (1, 0, 0, -1) => Orientation::FlipVertical,
        (0, 1, 1, 0) => Orientation::Rotate90FlipH,
        (0, -1, -1, 0) => Orientation::Rotate270FlipH,
        _ => Orientation::NoTransforms,
    }
}

/// A sample description: its code, stored size and codec configuration box.
struct SampleEntry<'a> {
    code: [u8; 4],
    width: u32,
    height: u32,
    config: Option<&'a [u8]>,
}

/// The first sample description.
fn sample_entry(stsd: &[u8]) -> Result<SampleEntry<'_>, String> {
    let entries = stsd.get(8..).ok_or("the sample description is empty")?;
    let (entry, body) = Boxes::new(entries).next().ok_or("the video track has no sample description")??;
    // Visual sample entry: 6 reserved, data reference, 16 of versions and reserved, then the
    // size; its child boxes start after 78 bytes (QuickTime's layout is the same).
    let width = be16(body, 24).ok_or("the sample description is cut short")? as u32;
    let height = be16(body, 26).ok_or("the sample description is cut short")? as u32;
    let config_kind: &[u8; 4] = match &entry {
        b"avc1" | b"avc3" => b"avcC",
        b"hvc1" | b"hev1" => b"hvcC",
        _ => b"\0\0\0\0",
    };
    let config = match body.get(78..) {
        Some(children) => child(children, config_kind).unwrap_or(None),
        None => None,
    };
    Ok(SampleEntry { code: entry, width, height, config })
}

/// The boxes of a sample table, not yet expanded.
struct SampleTables<'a> {
    stsd: &'a [u8],
    stts: &'a [u8],
    ctts: Option<&'a [u8]>,
    stss: Option<&'a [u8]>,
    stsc: &'a [u8],
    /// (uniform size or 0, entries)
    sizes: SampleSizes<'a>,
    chunk_offsets: ChunkOffsets<'a>,
    sample_count: u32,
}

enum SampleSizes<'a> {
    Uniform(u32),
    Each { field_bits: u8, table: &'a [u8] },
}

enum ChunkOffsets<'a> {
    Narrow(&'a [u8]),
    Wide(&'a [u8]),
}

impl<'a> SampleTables<'a> {
    fn read(stbl: &'a [u8]) -> Result<Self, String> {
        let need = |kind: &[u8; 4]| -> Result<&'a [u8], String> {
            child(stbl, kind)?.ok_or_else(|| format!("the sample table has no '{}' box", fourcc(kind)))
        };
        let (sizes, sample_count) = if let Some(stsz) = child(stbl, b"stsz")? {
            let uniform = be32(stsz, 4).ok_or("'stsz' is cut short")?;
            let count = be32(stsz, 8).ok_or("'stsz' is cut short")?;
            if uniform != 0 {
                (SampleSizes::Uniform(uniform), count)
            } else {
                (SampleSizes::Each { field_bits: 32, table: table(stsz, 12, count, 4, "stsz")? }, count)
            }
        } else if let Some(stz2) = child(stbl, b"stz2")? {
            let field_bits = *stz2.get(7).ok_or("'stz2' is cut short")?;
            let count = be32(stz2, 8).ok_or("'stz2' is cut short")?;
            if !matches!(field_bits, 4 | 8 | 16) {
                return Err(format!("'stz2' has {field_bits}-bit sizes"));
            }
            let bytes = (count as u64 * field_bits as u64).div_ceil(8);
            let entries = stz2.get(12..).filter(|t| t.len() as u64 >= bytes).ok_or("'stz2' is cut short")?;
            (SampleSizes::Each { field_bits, table: entries }, count)
        } else {
            return Err("the sample table has no sample sizes".into());
        };
        let chunk_offsets = match (child(stbl, b"stco")?, child(stbl, b"co64")?) {
            (Some(stco), _) => ChunkOffsets::Narrow(counted(stco, 4, "stco")?),
            (None, Some(co64)) => ChunkOffsets::Wide(counted(co64, 8, "co64")?),
            (None, None) => return Err("the sample table has no chunk offsets".into()),
        };
        Ok(Self {
            stsd: need(b"stsd")?,
            stts: counted(need(b"stts")?, 8, "stts")?,
            ctts: child(stbl, b"ctts")?.map(|b| counted(b, 8, "ctts")).transpose()?,
            stss: child(stbl, b"stss")?.map(|b| counted(b, 4, "stss")).transpose()?,
            stsc: counted(need(b"stsc")?, 12, "stsc")?,
            sizes,
            chunk_offsets,
            sample_count,
        })
    }

    /// The sum of the sample durations, in the track's timescale.
    fn total_duration(&self) -> Result<u64, String> {
        let mut total = 0u64;
        for entry in self.stts.chunks_exact(8) {
            total = total.saturating_add(be32(entry, 0).unwrap() as u64 * be32(entry, 4).unwrap() as u64);
        }
        Ok(total)
    }

    fn size(&self, index: usize) -> u32 {
        match &self.sizes {
            SampleSizes::Uniform(size) => *size,
            SampleSizes::Each { field_bits: 32, table } => be32(table, index * 4).unwrap_or(0),
            SampleSizes::Each { field_bits: 16, table } => be16(table, index * 2).unwrap_or(0) as u32,
            SampleSizes::Each { field_bits: 8, table } => table.get(index).copied().unwrap_or(0) as u32,
            SampleSizes::Each { table, .. } => {
                let byte = table.get(index / 2).copied().unwrap_or(0);
                (if index.is_multiple_of(2) { byte >> 4 } else { byte & 15 }) as u32
            }
        }
    }

    fn chunk_offset(&self, index: usize) -> Option<u64> {
        match &self.chunk_offsets {
            ChunkOffsets::Narrow(t) => be32(t, index * 4).map(u64::from),
            ChunkOffsets::Wide(t) => be64(t, index * 8),
        }
    }

    fn chunk_count(&self) -> usize {
        match &self.chunk_offsets {
            ChunkOffsets::Narrow(t) => t.len() / 4,
            ChunkOffsets::Wide(t) => t.len() / 8,
        }
    }

    /// Every sample, in decode order.
    fn samples(&self) -> Result<Vec<Sample>, String> {
        let count = self.sample_count as usize;
        let mut samples = Vec::with_capacity(count);

        // Offsets: chunks hold runs of samples, as stsc says, back to back from the chunk offset.
        let runs: Vec<(u32, u32)> = self.stsc.chunks_exact(12).map(|e| (be32(e, 0).unwrap(), be32(e, 4).unwrap())).collect();
        let mut run = 0;
        for chunk in 0..self.chunk_count() {
            let chunk_number = chunk as u32 + 1;
            while run + 1 < runs.len() && runs[run + 1].0 <= chunk_number {
                run += 1;
            }
            let per_chunk = runs.get(run).map_or(0, |r| r.1);
            let mut offset = self.chunk_offset(chunk).unwrap_or(0);
            for _ in 0..per_chunk {
                if samples.len() == count {
                    break;
                }
                let size = self.size(samples.len());
                samples.push(Sample { offset, size, time: 0, duration: 0, sync: self.stss.is_none() });
                offset = offset.saturating_add(size as u64);
            }
        }
        if samples.len() < count {
            return Err(format!("the chunk table places {} of {count} frames", samples.len()));
        }

        // Times: decode times from the durations, plus each sample's composition offset.
        let mut time = 0i64;
        let mut index = 0;
        for entry in self.stts.chunks_exact(8) {
            let (n, delta) = (be32(entry, 0).unwrap(), be32(entry, 4).unwrap() as i64);
            for _ in 0..n {
                let Some(sample) = samples.get_mut(index) else { break };
                sample.time = time;
                sample.duration = delta;
                time = time.saturating_add(delta);
                index += 1;
            }
        }
        if let Some(ctts) = self.ctts {
            let mut index = 0;
            for entry in ctts.chunks_exact(8) {
                // Version 0 says unsigned, but writers put negative offsets there too (FFmpeg
                // reads them as signed).
                let (n, offset) = (be32(entry, 0).unwrap(), be32(entry, 4).unwrap() as i32 as i64);
                for _ in 0..n {
                    let Some(sample) = samples.get_mut(index) else { break };
                    sample.time = sample.time.saturating_add(offset);
                    index += 1;
                }
            }
        }
        if let Some(stss) = self.stss {
            for entry in stss.chunks_exact(4) {
                let number = be32(entry, 0).unwrap() as usize;
                if let Some(sample) = number.checked_sub(1).and_then(|i| samples.get_mut(i)) {
                    sample.sync = true;
                }
            }
        }
        Ok(samples)
    }
}

/// How far symphonia's probe looks for a format's marker (`ftyp` for MP4).
const SYMPHONIA_SEARCH_LIMIT: u64 = 1 << 20;
/// moov/trak/mdia/minf/stbl is the deepest a sample table sits; deeper nesting is not walked.
const MAX_CONTAINER_DEPTH: usize = 8;

/// symphonia's MP4 reader sizes each sample table from the count in it before reading it
/// (`Vec::with_capacity`), so a 16-byte `stsc` that counts 4 billion entries aborts the process:
/// no `catch_unwind` stops a failed allocation. This refuses, as damaged, a file whose `stsc`,
/// `stts`, `ctts`, `stco`, `co64`, `stss` or `stsz` (in any `moov` or `moof` tree) counts more
/// entries than it holds, before symphonia reads it. symphonia reads an MP4 from the first
/// `ftyp` it finds in the first MiB, so a walk starts at each one; each top-level box is walked
/// once. The source is left where it was.
pub(crate) fn check_sample_tables<R: Read + Seek + ?Sized>(file: &str, source: &mut R) -> Result<()> {
    let io = |e| unreadable(file, e);
    let start = source.stream_position().map_err(io)?;
    let end = source.seek(SeekFrom::End(0)).map_err(io)?;
    source.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut head = Vec::new();
    (&mut *source).take(SYMPHONIA_SEARCH_LIMIT + 4).read_to_end(&mut head).map_err(io)?;
    let mut walked = HashSet::new();
    let markers = head.windows(4).enumerate().filter(|(_, w)| w == b"ftyp").map(|(i, _)| i);
    for marker in markers.filter_map(|i| i.checked_sub(4)) {
        let mut at = start + marker as u64;
        while at.saturating_add(8) <= end && walked.insert(at) {
            let mut header = [0u8; 16];
            let take = (end - at).min(16) as usize;
            source.seek(SeekFrom::Start(at)).map_err(io)?;
            source.read_exact(&mut header[..take]).map_err(io)?;
            let (size, header_len) = match be32(&header, 0).unwrap() {
                0 => (end - at, 8),
                1 if take == 16 => (be64(&header, 8).unwrap(), 16),
                1 => break,
                n => (n as u64, 8),
            };
            if size < header_len {
                break; // symphonia stops here too
            }
            if matches!(&header[4..8], b"moov" | b"moof") {
                // A box cut off by the end of the file is read as far as it goes, as symphonia does.
                let payload_len = size.min(end - at) - header_len;
                let mut payload = vec![0u8; payload_len as usize];
                source.seek(SeekFrom::Start(at + header_len)).map_err(io)?;
                source.read_exact(&mut payload[..]).map_err(io)?;
                check_tables_in(&payload, 0).map_err(|d| corrupt(file, d))?;
            }
            at = at.saturating_add(size);
        }
    }
    source.seek(SeekFrom::Start(start)).map_err(io)?;
    Ok(())
}

/// `check_sample_tables` for the boxes in a container's payload.
fn check_tables_in(boxes: &[u8], depth: usize) -> Result<(), String> {
    for item in Boxes::new(boxes) {
        let (kind, body) = item?;
        // (where the entry count is, bytes per entry)
        let (count_at, entry_size) = match &kind {
            b"moov" | b"trak" | b"mdia" | b"minf" | b"stbl" | b"moof" | b"traf" | b"mvex" | b"edts" => {
                if depth < MAX_CONTAINER_DEPTH {
                    check_tables_in(body, depth + 1)?;
                }
                continue;
            }
            b"stsc" => (4, 12),
            b"stts" | b"ctts" | b"co64" => (4, 8),
            b"stco" | b"stss" => (4, 4),
            // A sample size of 0 means each sample's size is listed.
            b"stsz" => (8, if be32(body, 4) == Some(0) { 4 } else { 0 }),
            _ => continue,
        };
        let name = fourcc(&kind);
        let count = be32(body, count_at).ok_or_else(|| format!("'{name}' is cut short"))?;
        table(body, count_at + 4, count, entry_size, &name)?;
    }
    Ok(())
}

/// A full box's entries after its version/flags and entry count, checked to be there.
fn counted<'a>(body: &'a [u8], entry_size: usize, name: &str) -> Result<&'a [u8], String> {
    let count = be32(body, 4).ok_or_else(|| format!("'{name}' is cut short"))?;
    table(body, 8, count, entry_size, name)
}

fn table<'a>(body: &'a [u8], start: usize, count: u32, entry_size: usize, name: &str) -> Result<&'a [u8], String> {
    let bytes = count as u64 * entry_size as u64;
    body.get(start..)
        .filter(|rest| rest.len() as u64 >= bytes)
        .map(|rest| &rest[..bytes as usize])
        .ok_or_else(|| format!("'{name}' says {count} entries and holds fewer"))
}

/// The first child box of `kind`.
fn child<'a>(body: &'a [u8], kind: &[u8; 4]) -> Result<Option<&'a [u8]>, String> {
    for item in Boxes::new(body) {
        let (k, b) = item?;
        if &k == kind {
            return Ok(Some(b));
        }
    }
    Ok(None)
}

/// The boxes in a byte range: (type, payload).
pub(crate) struct Boxes<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Boxes<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data, at: 0 }
    }
}

impl<'a> Iterator for Boxes<'a> {
    type Item = Result<([u8; 4], &'a [u8]), String>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.data.get(self.at..)?;
        if rest.len() < 8 {
            // Trailing padding (QuickTime writes a 4-byte zero terminator in places).
            self.at = self.data.len();
            return None;
        }
        let kind: [u8; 4] = rest[4..8].try_into().unwrap();
        let (size, header) = match be32(rest, 0).unwrap() as u64 {
            0 => (rest.len() as u64, 8),
            1 => match be64(rest, 8) {
                Some(size) => (size, 16),
                None => return self.fail(format!("the '{}' box header is cut short", fourcc(&kind))),
            },
            n => (n, 8),
        };
        if size < header || size > rest.len() as u64 {
            return self.fail(format!("the '{}' box says {size} bytes, and {} are left", fourcc(&kind), rest.len()));
        }
        self.at += size as usize;
        Some(Ok((kind, &rest[header as usize..size as usize])))
    }
}

impl Boxes<'_> {
    fn fail<T>(&mut self, detail: String) -> Option<Result<T, String>> {
        self.at = self.data.len();
        Some(Err(detail))
    }
}

pub(crate) fn fourcc(code: &[u8; 4]) -> String {
    code.iter().map(|&b| if b.is_ascii_graphic() || b == b' ' { b as char } else { '?' }).collect()
}

fn seconds(duration: u64, timescale: u32) -> f64 {
    if timescale == 0 {
        0.0
    } else {
        duration as f64 / timescale as f64
    }
}

pub(crate) fn be16(data: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(data.get(at..at + 2)?.try_into().ok()?))
}

pub(crate) fn be32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

fn be64(data: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(data.get(at..at + 8)?.try_into().ok()?))
}

fn corrupt(file: &str, detail: String) -> MediaError {
    MediaError::media(file, MediaProblem::Corrupt { detail })
}

fn unreadable(file: &str, error: std::io::Error) -> MediaError {
    MediaError::media(file, MediaProblem::Unreadable { detail: error.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut out = ((body.len() + 8) as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn boxes_that_overrun_their_parent_are_errors_not_panics() {
        let mut data = boxed(b"free", b"abcd");
        data.extend_from_slice(&100u32.to_be_bytes());
        data.extend_from_slice(b"mdat1234");
        let kinds: Vec<_> = Boxes::new(&data).collect();
        assert_eq!(kinds[0], Ok((*b"free", &b"abcd"[..])));
        assert!(kinds[1].is_err());
        assert_eq!(kinds.len(), 2);
    }

    #[test]
    fn display_matrices_name_their_turn() {
        let tkhd = |m: [i32; 4]| {
            let mut body = vec![0u8; 4 + 20 + 8 + 8];
            for v in [m[0], m[1], 0, m[2], m[3], 0, 0, 0, 0x4000_0000] {
                body.extend_from_slice(&v.to_be_bytes());
            }
            body.extend_from_slice(&[0; 8]);
            body
        };
        let one = 0x10000;
        assert_eq!(orientation(&tkhd([one, 0, 0, one])), Orientation::NoTransforms);
        assert_eq!(orientation(&tkhd([0, one, -one, 0])), Orientation::Rotate90);
        assert_eq!(orientation(&tkhd([-one, 0, 0, -one])), Orientation::Rotate180);
        assert_eq!(orientation(&tkhd([0, -one, one, 0])), Orientation::Rotate270);
    }

    #[test]
    fn a_table_that_claims_more_entries_than_it_holds_is_refused() {
        let mut stts = vec![0, 0, 0, 0];
        stts.extend_from_slice(&u32::MAX.to_be_bytes());
        stts.extend_from_slice(&[0; 8]);
        assert!(counted(&stts, 8, "stts").is_err());
    }
}
