//! Animated GIF and WebP. Their headers are walked here without decoding a pixel (frame count,
//! delays, canvas size), so the limits are checked first; frames are then composited by the
//! `image` crate's animation decoders, as a browser shows them, and only the requested ones
//! are kept (as RGB, alpha dropped, like Pillow's `convert("RGB")`).
//!
//! Delays follow browsers: a frame that asks for 10 ms or less (GIF's 0 and 1 cs, which old
//! encoders wrote to mean "as fast as possible") is shown for 100 ms.

use std::io::Cursor;

use image::codecs::gif::GifDecoder;
use image::codecs::webp::WebPDecoder;
use image::{AnimationDecoder, ImageError, RgbImage, RgbaImage};

use crate::error::{MediaError, MediaProblem, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Gif,
    WebP,
}

impl Format {
    pub(crate) fn sniff(start: &[u8]) -> Option<Self> {
        if start.starts_with(b"GIF87a") || start.starts_with(b"GIF89a") {
            Some(Format::Gif)
        } else if start.len() >= 12 && &start[0..4] == b"RIFF" && &start[8..12] == b"WEBP" {
            Some(Format::WebP)
        } else {
            None
        }
    }
}

/// What the headers say.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Animation {
    pub format: Format,
    pub width: u32,
    pub height: u32,
    /// Each frame's display time in milliseconds, browsers' minimum applied. Whole
    /// milliseconds, so that 10 frames of 0.1 s last exactly 1 s (a float sum gives
    /// 0.9999…, then 10.000…2 fps, and the timestamps the prompt writes round otherwise).
    pub delays: Vec<u32>,
}

impl Animation {
    /// Each frame's start time.
    pub(crate) fn timestamps(&self) -> Vec<f64> {
        self.delays
            .iter()
            .scan(0u64, |t, &d| {
                let start = *t;
                *t += u64::from(d);
                Some(start as f64 / 1000.0)
            })
            .collect()
    }

    /// How long the whole animation lasts.
    pub(crate) fn seconds(&self) -> f64 {
        self.delays.iter().map(|&d| u64::from(d)).sum::<u64>() as f64 / 1000.0
    }
}

/// Frames shown for 10 ms or less are shown for this long (Chromium and Firefox).
const SHORTEST_DELAY_MS: u32 = 100;

fn delay_ms(ms: u32) -> u32 {
    if ms <= 10 {
        SHORTEST_DELAY_MS
    } else {
        ms
    }
}

/// Walks the blocks of a GIF or the chunks of a WebP. `max_frames` stops the walk early (the
/// caller reports the limit); the count then exceeds it by one.
pub(crate) fn read_header(file: &str, format: Format, data: &[u8], max_frames: u64) -> Result<Animation> {
    let walked = match format {
        Format::Gif => gif_header(data, max_frames),
        Format::WebP => webp_header(data, max_frames),
    };
    walked.map_err(|detail| MediaError::media(file, MediaProblem::Corrupt { detail }))
}

fn gif_header(data: &[u8], max_frames: u64) -> Result<Animation, String> {
    let cut = || "the GIF is cut short".to_string();
    let le16 = |at: usize| data.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as u32).ok_or_else(cut);
    let (width, height) = (le16(6)?, le16(8)?);
    let flags = *data.get(10).ok_or_else(cut)?;
    let mut at = 13;
    if flags & 0x80 != 0 {
        at += 3 << ((flags & 7) + 1);
    }
    let mut delays = Vec::new();
    let mut pending_delay_cs = 0u32;
    let skip_sub_blocks = |mut at: usize| -> Result<usize, String> {
        loop {
            let len = *data.get(at).ok_or_else(cut)? as usize;
            at += 1 + len;
            if len == 0 {
                return Ok(at);
            }
        }
    };
    loop {
        match data.get(at).copied() {
            // Trailer; a file that simply ends after its last frame is read as ended too, as
            // browsers and Pillow do.
            Some(0x3B) | None => break,
            Some(0x21) => {
                let label = *data.get(at + 1).ok_or_else(cut)?;
                if label == 0xF9 && data.get(at + 2) == Some(&4) {
                    pending_delay_cs = le16(at + 4)?;
                }
                at = skip_sub_blocks(at + 2)?;
            }
            Some(0x2C) => {
                let local = *data.get(at + 9).ok_or_else(cut)?;
                at += 10;
                if local & 0x80 != 0 {
                    at += 3 << ((local & 7) + 1);
                }
                at += 1; // LZW minimum code size
                at = skip_sub_blocks(at)?;
                delays.push(delay_ms(pending_delay_cs * 10));
                pending_delay_cs = 0;
                if delays.len() as u64 > max_frames {
                    break;
                }
            }
            Some(other) => return Err(format!("unknown GIF block {other:#04x}")),
        }
    }
    Ok(Animation { format: Format::Gif, width, height, delays })
}

fn webp_header(data: &[u8], max_frames: u64) -> Result<Animation, String> {
    let cut = || "the WebP is cut short".to_string();
    let le = |at: usize, n: usize| -> Result<u32, String> {
        let bytes = data.get(at..at + n).ok_or_else(cut)?;
        Ok(bytes.iter().rev().fold(0u32, |v, &b| (v << 8) | b as u32))
    };
    let mut at = 12;
    let (mut width, mut height) = (0, 0);
    let mut delays = Vec::new();
    let mut still = false;
    while at + 8 <= data.len() {
        let kind = &data[at..at + 4];
        let size = le(at + 4, 4)? as usize;
        let body = at + 8;
        match kind {
            b"VP8X" => {
                width = le(body + 4, 3)? + 1;
                height = le(body + 7, 3)? + 1;
            }
            b"ANMF" => {
                delays.push(delay_ms(le(body + 12, 3)?));
                if delays.len() as u64 > max_frames {
                    break;
                }
            }
            b"VP8 " | b"VP8L" => still = true,
            _ => {}
        }
        at = body.checked_add(size + (size & 1)).ok_or_else(cut)?;
    }
    if delays.is_empty() && still {
        // A still WebP: one frame (its size is the image decoder's business).
        delays.push(0);
    }
    Ok(Animation { format: Format::WebP, width, height, delays })
}

/// Composites the animation and hands the frames at `indices` (ascending) to `sink`.
pub(crate) fn decode_frames(
    file: &str,
    format: Format,
    data: &[u8],
    indices: &[u64],
    sink: &mut dyn FnMut(u64, RgbImage) -> Result<()>,
) -> Result<()> {
    let problem = |e: ImageError| MediaError::media(file, MediaProblem::Corrupt { detail: e.to_string() });
    let frames = match format {
        Format::Gif => GifDecoder::new(Cursor::new(data)).map_err(problem)?.into_frames(),
        Format::WebP => WebPDecoder::new(Cursor::new(data)).map_err(problem)?.into_frames(),
    };
    let mut wanted = indices.iter().copied().peekable();
    for (index, frame) in frames.enumerate() {
        let Some(&next) = wanted.peek() else { break };
        let index = index as u64;
        if index < next {
            // Still composited (later frames draw over it), but never converted.
            frame.map_err(problem)?;
            continue;
        }
        let rgb = rgb(frame.map_err(problem)?.buffer());
        let mut copies = 0;
        while wanted.next_if_eq(&index).is_some() {
            copies += 1;
        }
        for _ in 1..copies {
            sink(index, rgb.clone())?;
        }
        if copies > 0 {
            sink(index, rgb)?;
        }
    }
    if let Some(missing) = wanted.next() {
        let detail = format!("frame {missing} is missing, though the header lists it");
        return Err(MediaError::media(file, MediaProblem::Corrupt { detail }));
    }
    Ok(())
}

fn rgb(rgba: &RgbaImage) -> RgbImage {
    let pixels = rgba.pixels().flat_map(|p| [p.0[0], p.0[1], p.0[2]]).collect();
    RgbImage::from_raw(rgba.width(), rgba.height(), pixels).expect("same size")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_delays_count_as_a_tenth_of_a_second() {
        assert_eq!([0, 10, 20, 500].map(delay_ms), [100, 100, 20, 500]);
    }

    #[test]
    fn a_gif_with_no_frames_has_an_empty_list() {
        let data = b"GIF89a\x28\x00\x1e\x00\x00\x00\x00;";
        let animation = gif_header(data, 10).unwrap();
        assert_eq!((animation.width, animation.height, animation.delays.len()), (40, 30, 0));
    }
}
