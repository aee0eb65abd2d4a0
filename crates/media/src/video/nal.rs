//! What H.264 and HEVC share in MP4: samples of length-prefixed NAL units, parameter sets with
//! emulation-prevention bytes and exp-Golomb codes, and the VUI's colour description (the same
//! fields in both: H.264 Annex E and H.265 Annex E).

use super::yuv::{ColourSignal, Matrix};

/// The NAL units of a sample (each preceded by its big-endian length of `length_size` bytes).
pub(crate) struct NalUnits<'a> {
    sample: &'a [u8],
    length_size: usize,
    at: usize,
}

impl<'a> NalUnits<'a> {
    pub(crate) fn new(sample: &'a [u8], length_size: usize) -> Self {
        Self { sample, length_size, at: 0 }
    }
}

impl<'a> Iterator for NalUnits<'a> {
    type Item = Result<&'a [u8], String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.sample.len() {
            return None;
        }
        let Some(len_bytes) = self.sample.get(self.at..self.at + self.length_size) else {
            self.at = self.sample.len();
            return Some(Err("a NAL length is cut short".into()));
        };
        let len = len_bytes.iter().fold(0usize, |n, &b| (n << 8) | b as usize);
        let start = self.at + self.length_size;
        let Some(nal) = start.checked_add(len).and_then(|end| self.sample.get(start..end)) else {
            self.at = self.sample.len();
            return Some(Err("a NAL unit runs past its frame".into()));
        };
        self.at = start + len;
        Some(Ok(nal))
    }
}

/// Removes emulation-prevention bytes (00 00 03 -> 00 00).
pub(crate) fn unescape(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut zeros = 0;
    for &b in data {
        if zeros >= 2 && b == 3 {
            zeros = 0;
            continue;
        }
        zeros = if b == 0 { zeros + 1 } else { 0 };
        out.push(b);
    }
    out
}

/// Big-endian bit reader with exp-Golomb codes.
pub(crate) struct Bits<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Bits<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data, at: 0 }
    }

    fn bit(&mut self) -> Result<u32, String> {
        let byte = *self.data.get(self.at / 8).ok_or("the SPS is cut short")?;
        let bit = (byte >> (7 - self.at % 8)) & 1;
        self.at += 1;
        Ok(bit as u32)
    }

    /// `n` bits (at most 32) as a number.
    pub(crate) fn u(&mut self, n: u32) -> Result<u32, String> {
        let mut value = 0u32;
        for _ in 0..n {
            value = (value << 1) | self.bit()?;
        }
        Ok(value)
    }

    pub(crate) fn flag(&mut self) -> Result<bool, String> {
        Ok(self.bit()? == 1)
    }

    pub(crate) fn ue(&mut self) -> Result<u32, String> {
        let mut zeros = 0;
        while self.bit()? == 0 {
            zeros += 1;
            if zeros > 31 {
                return Err("a malformed number in the SPS".into());
            }
        }
        let rest = self.u(zeros)? as u64;
        Ok(((1u64 << zeros) - 1 + rest).min(u32::MAX as u64) as u32)
    }

    pub(crate) fn se(&mut self) -> Result<i64, String> {
        let k = self.ue()? as i64;
        Ok(if k % 2 == 1 { (k + 1) / 2 } else { -(k / 2) })
    }
}

/// The start of a VUI (`vui_parameters()`, after its presence flag), as far as the colour
/// description: the matrix and range, when signalled, go into `colour`.
pub(crate) fn read_vui_colour(r: &mut Bits, colour: &mut ColourSignal) -> Result<(), String> {
    if r.flag()? {
        // aspect_ratio_idc; 255 is followed by the explicit ratio.
        if r.u(8)? == 255 {
            r.u(32)?;
        }
    }
    if r.flag()? {
        r.u(1)?; // overscan_appropriate_flag
    }
    if r.flag()? {
        r.u(3)?; // video_format
        colour.full_range = r.flag()?;
        if r.flag()? {
            r.u(16)?; // colour_primaries, transfer_characteristics
            colour.matrix = Matrix::from_h273(r.u(8)?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_golomb_codes_read_as_numbers() {
        // 1 -> 0, 010 -> 1, 011 -> 2, 00100 -> 3: bits 1 010 011 00100 then padding.
        let data = [0b1010_0110, 0b0100_0000];
        let mut r = Bits::new(&data);
        assert_eq!((r.ue(), r.ue(), r.ue(), r.ue()), (Ok(0), Ok(1), Ok(2), Ok(3)));
    }

    #[test]
    fn emulation_prevention_bytes_are_removed() {
        assert_eq!(unescape(&[0, 0, 3, 1, 0, 0, 3, 0, 3]), vec![0, 0, 1, 0, 0, 0, 3]);
    }

    #[test]
    fn nal_units_past_their_sample_are_errors() {
        let units: Vec<_> = NalUnits::new(&[0, 0, 0, 2, 0x65, 1, 0, 0, 0, 1, 0x06], 4).collect();
        assert_eq!(units, [Ok(&[0x65, 1][..]), Ok(&[0x06][..])]);
        assert!(NalUnits::new(&[0, 0, 0, 9, 0x65, 1], 4).any(|u| u.is_err()));
        assert!(NalUnits::new(&[0, 0], 4).next().unwrap().is_err());
        // A length near usize::MAX does not overflow.
        let huge = [0xFF; 8];
        assert!(NalUnits::new(&huge, 4).next().unwrap().is_err());
    }
}
