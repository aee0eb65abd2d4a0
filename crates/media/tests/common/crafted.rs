//! Files made byte by byte for the bad-media tests: headers that promise what no decoder should
//! be asked to allocate.

use std::path::{Path, PathBuf};

pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut chunk = (data.len() as u32).to_be_bytes().to_vec();
    let body: Vec<u8> = kind.iter().chain(data).copied().collect();
    chunk.extend(&body);
    chunk.extend(crc32(&body).to_be_bytes());
    chunk
}

/// A valid PNG signature and IHDR saying 10000×10000 RGB, then a few bytes of IDAT: a file
/// of under 100 bytes that would need 300 MB to decode.
pub fn huge_png_header() -> Vec<u8> {
    let mut ihdr = 10_000u32.to_be_bytes().to_vec();
    ihdr.extend(10_000u32.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(png_chunk(b"IHDR", &ihdr));
    png.extend(png_chunk(b"IDAT", &[0x78, 0x9c, 0, 0]));
    png
}

/// A 16-bit PCM WAV header for `frames` frames (the data need not follow).
pub fn wav_header(rate: u32, channels: u16, frames: u32) -> Vec<u8> {
    let block = channels as u32 * 2;
    let data = frames * block;
    let mut w = b"RIFF".to_vec();
    w.extend((36 + data).to_le_bytes());
    w.extend(b"WAVEfmt ");
    w.extend(16u32.to_le_bytes());
    w.extend(1u16.to_le_bytes());
    w.extend(channels.to_le_bytes());
    w.extend(rate.to_le_bytes());
    w.extend((rate * block).to_le_bytes());
    w.extend((block as u16).to_le_bytes());
    w.extend(16u16.to_le_bytes());
    w.extend(b"data");
    w.extend(data.to_le_bytes());
    w
}

/// An MP4 box: its size, type and payload.
pub fn mp4_box(kind: &[u8; 4], payload: &[u8]) -> Vec<u8> {
    let mut out = ((payload.len() + 8) as u32).to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(payload);
    out
}

/// The smallest M4A whose sample table lies: an `stsc` of 8 bytes that counts 4 billion
/// entries (symphonia's reader would ask for 51 GB up front for it).
pub fn m4a_with_lying_stsc() -> Vec<u8> {
    let stsc = mp4_box(b"stsc", &[0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]);
    let stbl = mp4_box(b"stbl", &stsc);
    let trak = mp4_box(b"trak", &mp4_box(b"mdia", &mp4_box(b"minf", &stbl)));
    [mp4_box(b"ftyp", b"M4A \0\0\0\0M4A isom"), mp4_box(b"moov", &trak)].concat()
}
