//! The samples FFmpeg drops from the start of an AAC track in an MP4/M4A file, as torchcodec
//! (and so the reference loader) returns them. An AAC encoder starts with priming samples
//! (1024 for FFmpeg's and most others, 2112 for Apple's), and the MP4 muxer writes an edit list
//! whose first edit starts the presentation after them; FFmpeg's MP4 demuxer turns that into
//! "skip these samples", which its decoder applies. It does not trim the padding at the end.
//! symphonia's MP4 reader reads the edit list but does not apply it, so the engine skips them.

/// Where the audio track's first edit starts, in its media's time scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Priming {
    pub media_time: u64,
    pub timescale: u32,
}

impl Priming {
    /// The skip in samples at the track's sample rate (the time scale is usually the rate).
    pub fn samples_at(&self, sample_rate: u32) -> u64 {
        if self.timescale == sample_rate || self.timescale == 0 {
            self.media_time
        } else {
            (self.media_time as u128 * sample_rate as u128 / self.timescale as u128) as u64
        }
    }
}

/// The first sound track's priming, from `moov/trak/edts/elst` (the first edit that is not an
/// empty one) and `moov/trak/mdia/mdhd` (its time scale); `None` without an edit list.
pub(crate) fn priming_samples(file: &[u8]) -> Option<Priming> {
    let moov = children(file).find(|(kind, _)| kind == b"moov")?.1;
    children(moov).filter(|(kind, _)| kind == b"trak").find_map(|(_, trak)| {
        let mdia = child(trak, b"mdia")?;
        let handler = child(mdia, b"hdlr")?;
        if handler.get(8..12)? != b"soun" {
            return None;
        }
        let mdhd = child(mdia, b"mdhd")?;
        let timescale = match mdhd.first()? {
            1 => be_u32(mdhd.get(20..24)?),
            _ => be_u32(mdhd.get(12..16)?),
        };
        let elst = child(child(trak, b"edts")?, b"elst")?;
        let version = *elst.first()?;
        let count = be_u32(elst.get(4..8)?) as usize;
        let entry_size = if version == 1 { 20 } else { 12 };
        (0..count).find_map(|i| {
            let entry = elst.get(8 + i * entry_size..8 + (i + 1) * entry_size)?;
            let media_time =
                if version == 1 { i64::from_be_bytes(entry[8..16].try_into().ok()?) } else { be_u32(&entry[4..8]) as i32 as i64 };
            // -1 marks an empty edit (a delay before the track starts): not a skip.
            (media_time >= 0).then_some(Priming { media_time: media_time as u64, timescale })
        })
    })
}

fn child<'a>(boxes: &'a [u8], kind: &[u8; 4]) -> Option<&'a [u8]> {
    children(boxes).find(|(k, _)| k == kind).map(|(_, payload)| payload)
}

/// The boxes laid end to end in `data`: each one's type and payload.
fn children(data: &[u8]) -> impl Iterator<Item = ([u8; 4], &[u8])> {
    let mut rest = data;
    std::iter::from_fn(move || {
        let size = be_u32(rest.get(0..4)?) as u64;
        let kind: [u8; 4] = rest.get(4..8)?.try_into().ok()?;
        let (header, size) = match size {
            0 => (8, rest.len() as u64),
            1 => (16, u64::from_be_bytes(rest.get(8..16)?.try_into().ok()?)),
            n => (8, n),
        };
        if size < header as u64 || size > rest.len() as u64 {
            return None;
        }
        let payload = &rest[header..size as usize];
        rest = &rest[size as usize..];
        Some((kind, payload))
    })
}

fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxed(kind: &[u8; 4], payload: &[u8]) -> Vec<u8> {
        let mut out = ((payload.len() + 8) as u32).to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend_from_slice(payload);
        out
    }

    fn track(handler: &[u8; 4], edits: &[(u32, i32)]) -> Vec<u8> {
        let mut hdlr = vec![0u8; 8];
        hdlr.extend_from_slice(handler);
        hdlr.extend_from_slice(&[0; 12]);
        let mut mdhd = vec![0u8; 12];
        mdhd.extend_from_slice(&44100u32.to_be_bytes());
        mdhd.extend_from_slice(&[0; 8]);
        let mut elst = vec![0u8; 4];
        elst.extend_from_slice(&(edits.len() as u32).to_be_bytes());
        for (duration, media_time) in edits {
            elst.extend_from_slice(&duration.to_be_bytes());
            elst.extend_from_slice(&media_time.to_be_bytes());
            elst.extend_from_slice(&[0, 1, 0, 0]);
        }
        let mdia = [boxed(b"hdlr", &hdlr), boxed(b"mdhd", &mdhd)].concat();
        boxed(b"trak", &[boxed(b"edts", &boxed(b"elst", &elst)), boxed(b"mdia", &mdia)].concat())
    }

    #[test]
    fn the_sound_tracks_first_real_edit_is_the_skip() {
        let file = [
            boxed(b"ftyp", b"M4A \0\0\0\0"),
            boxed(b"moov", &[track(b"vide", &[(100, 512)]), track(b"soun", &[(50, -1), (26460, 2112)])].concat()),
        ]
        .concat();
        let priming = priming_samples(&file).unwrap();
        assert_eq!(priming, Priming { media_time: 2112, timescale: 44100 });
        assert_eq!(priming.samples_at(44100), 2112);
        assert_eq!(priming.samples_at(22050), 1056);
        // No edit list, or a truncated file: nothing to skip.
        assert_eq!(priming_samples(&boxed(b"moov", &boxed(b"trak", &[]))), None);
        assert_eq!(priming_samples(&file[..file.len() - 9]), None);
    }
}
