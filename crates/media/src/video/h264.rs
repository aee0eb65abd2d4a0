//! H.264 in MP4: the decoder configuration (`avcC`) and sequence parameter set, read for the
//! frame size, profile and colour signalling before decoding; and Cisco's OpenH264 decoder
//! behind a small safe wrapper, which `H264` hands to the track decoder (`track.rs`). OpenH264 decodes 8-bit 4:2:0 progressive streams of the
//! Baseline, Main and High profiles (CAVLC and CABAC, B-frames, 8x8 transforms), which is what
//! phones and screen recorders write; 10-bit, 4:2:2/4:4:4 and interlaced streams are refused
//! from the SPS, with their names.

use std::os::raw::{c_int, c_void};
use std::ptr::{null, null_mut};

use openh264_sys2::{
    ISVCDecoder, SBufferInfo, SDecodingParam, DECODER_OPTION_ERROR_CON_IDC, DECODER_OPTION_NUM_OF_FRAMES_REMAINING_IN_BUFFER,
    DECODER_OPTION_TRACE_LEVEL, VIDEO_BITSTREAM_AVC, WELS_LOG_QUIET,
};

use super::nal::{self, Bits, NalUnits};
use super::track::{self, PictureSink};
use super::yuv::{ColourSignal, YuvFrame};
use crate::error::{MediaError, MediaProblem, Result as MediaResult};

/// What `avcC` carries: the NAL length size and the parameter sets.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AvcConfig {
    pub length_size: usize,
    pub sps: Vec<Vec<u8>>,
    pub pps: Vec<Vec<u8>>,
}

impl AvcConfig {
    pub(crate) fn parse(data: &[u8]) -> Result<Self, String> {
        let cut = || "the H.264 configuration (avcC) is cut short".to_string();
        if data.len() < 7 {
            return Err(cut());
        }
        if data[0] != 1 {
            return Err(format!("unknown H.264 configuration version {}", data[0]));
        }
        let length_size = (data[4] & 3) as usize + 1;
        if length_size == 3 {
            return Err("the H.264 configuration says 3-byte NAL lengths".into());
        }
        let mut at = 5;
        let sets = |count: usize, at: &mut usize| -> Result<Vec<Vec<u8>>, String> {
            let mut out = Vec::with_capacity(count);
            for _ in 0..count {
                let len = u16::from_be_bytes(data.get(*at..*at + 2).ok_or_else(cut)?.try_into().unwrap()) as usize;
                out.push(data.get(*at + 2..*at + 2 + len).ok_or_else(cut)?.to_vec());
                *at += 2 + len;
            }
            Ok(out)
        };
        let sps_count = (data[at] & 31) as usize;
        at += 1;
        let sps = sets(sps_count, &mut at)?;
        let pps_count = *data.get(at).ok_or_else(cut)? as usize;
        at += 1;
        let pps = sets(pps_count, &mut at)?;
        Ok(Self { length_size, sps, pps })
    }
}

/// The sequence parameter set fields that decide whether and how we decode.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sps {
    pub profile_idc: u8,
    pub chroma_format_idc: u32,
    pub bit_depth_luma: u32,
    pub bit_depth_chroma: u32,
    pub frame_mbs_only: bool,
    /// Displayed size: macroblocks less the cropping.
    pub width: u32,
    pub height: u32,
    pub colour: ColourSignal,
}

impl Sps {
    /// `nal` is the whole NAL unit, header byte included.
    pub(crate) fn parse(nal: &[u8]) -> Result<Self, String> {
        let rbsp = nal::unescape(nal.get(1..).ok_or("an empty SPS")?);
        let mut r = Bits::new(&rbsp);
        let profile_idc = r.u(8)? as u8;
        r.u(16)?; // constraint flags, level
        r.ue()?; // seq_parameter_set_id
        let (mut chroma_format_idc, mut bit_depth_luma, mut bit_depth_chroma) = (1, 8, 8);
        if matches!(profile_idc, 100 | 110 | 122 | 244 | 44 | 83 | 86 | 118 | 128 | 138 | 139 | 134 | 135) {
            chroma_format_idc = r.ue()?;
            if chroma_format_idc == 3 {
                r.u(1)?; // separate_colour_plane_flag
            }
            bit_depth_luma = r.ue()? + 8;
            bit_depth_chroma = r.ue()? + 8;
            r.u(1)?; // qpprime_y_zero_transform_bypass_flag
            if r.u(1)? == 1 {
                for list in 0..if chroma_format_idc == 3 { 12 } else { 8 } {
                    if r.u(1)? == 1 {
                        skip_scaling_list(&mut r, if list < 6 { 16 } else { 64 })?;
                    }
                }
            }
        }
        r.ue()?; // log2_max_frame_num_minus4
        match r.ue()? {
            0 => {
                r.ue()?;
            }
            1 => {
                r.u(1)?;
                r.se()?;
                r.se()?;
                let cycle = r.ue()?;
                if cycle > 255 {
                    return Err("the SPS's picture order cycle is too long".into());
                }
                for _ in 0..cycle {
                    r.se()?;
                }
            }
            _ => {}
        }
        r.ue()?; // max_num_ref_frames
        r.u(1)?; // gaps_in_frame_num_value_allowed_flag
        let width_mbs = r.ue()? as u64 + 1;
        let height_units = r.ue()? as u64 + 1;
        let frame_mbs_only = r.u(1)? == 1;
        if !frame_mbs_only {
            r.u(1)?; // mb_adaptive_frame_field_flag
        }
        r.u(1)?; // direct_8x8_inference_flag
        let height_mbs = height_units * if frame_mbs_only { 1 } else { 2 };
        let (mut crop_x, mut crop_y) = (0u64, 0u64);
        if r.u(1)? == 1 {
            let (unit_x, unit_y) = match chroma_format_idc {
                1 => (2, 2),
                2 => (2, 1),
                _ => (1, 1),
            };
            let unit_y = unit_y * if frame_mbs_only { 1 } else { 2 };
            crop_x = (r.ue()? as u64 + r.ue()? as u64) * unit_x;
            crop_y = (r.ue()? as u64 + r.ue()? as u64) * unit_y;
        }
        let (width, height) = (width_mbs * 16, height_mbs * 16);
        if crop_x >= width || crop_y >= height || width > u32::MAX as u64 || height > u32::MAX as u64 {
            return Err("the SPS's frame size is out of range".into());
        }
        let mut colour = ColourSignal::default();
        // The VUI, when present, may say which matrix and range the pixels use; a stream cut
        // in the middle of it keeps the defaults.
        if r.u(1).unwrap_or(0) == 1 {
            let _ = nal::read_vui_colour(&mut r, &mut colour);
        }
        Ok(Self {
            profile_idc,
            chroma_format_idc,
            bit_depth_luma,
            bit_depth_chroma,
            frame_mbs_only,
            width: (width - crop_x) as u32,
            height: (height - crop_y) as u32,
            colour,
        })
    }

    /// The reason OpenH264 cannot decode this stream, naming it as a person knows it.
    pub(crate) fn unsupported(&self) -> Option<String> {
        if self.bit_depth_luma != 8 || self.bit_depth_chroma != 8 {
            return Some(format!("H.264 {}-bit (High 10)", self.bit_depth_luma.max(self.bit_depth_chroma)));
        }
        match self.chroma_format_idc {
            1 => {}
            0 => return Some("H.264 monochrome (4:0:0)".into()),
            2 => return Some("H.264 4:2:2 (High 4:2:2)".into()),
            _ => return Some("H.264 4:4:4 (High 4:4:4)".into()),
        }
        if !self.frame_mbs_only {
            return Some("interlaced H.264".into());
        }
        None
    }

    pub(crate) fn profile_name(&self) -> &'static str {
        match self.profile_idc {
            66 => "Baseline",
            77 => "Main",
            88 => "Extended",
            100 => "High",
            _ => "other",
        }
    }
}

fn skip_scaling_list(r: &mut Bits, size: usize) -> Result<(), String> {
    let (mut last, mut next) = (8i64, 8i64);
    for _ in 0..size {
        if next != 0 {
            next = (last + r.se()? + 256) % 256;
        }
        if next != 0 {
            last = next;
        }
    }
    Ok(())
}

/// Turns a sample's length-prefixed NAL units into an Annex B byte stream (start codes), as
/// OpenH264 reads it, appending to `out`.
pub(crate) fn to_annex_b(sample: &[u8], length_size: usize, out: &mut Vec<u8>) -> Result<(), String> {
    for nal in NalUnits::new(sample, length_size) {
        let nal = nal?;
        if !nal.is_empty() {
            out.extend_from_slice(&[0, 0, 0, 1]);
            out.extend_from_slice(nal);
        }
    }
    Ok(())
}

/// An H.264 track's codec for the track decoder: OpenH264 decoders started with `avcC`'s
/// parameter sets.
pub(crate) struct H264<'a> {
    pub config: &'a AvcConfig,
}

impl track::Codec for H264<'_> {
    type Decoder = H264Decoder;

    fn is_idr(&self, sample: &[u8]) -> Result<bool, String> {
        for nal in NalUnits::new(sample, self.config.length_size) {
            if nal?.first().is_some_and(|header| header & 31 == 5) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn decoder(&self, file: &str) -> MediaResult<H264Decoder> {
        let corrupt = |detail| MediaError::media(file, MediaProblem::Corrupt { detail });
        let mut decoder = Decoder::new().map_err(corrupt)?;
        let mut annex_b = Vec::new();
        parameter_sets_annex_b(self.config, &mut annex_b);
        decoder.decode(&annex_b, u64::MAX).map_err(corrupt)?;
        Ok(H264Decoder { decoder, length_size: self.config.length_size, annex_b, file: file.into() })
    }
}

/// One OpenH264 decoder fed a track's samples; its pictures come out in display order.
pub(crate) struct H264Decoder {
    decoder: Decoder,
    length_size: usize,
    /// The sample being decoded, as Annex B (kept to reuse its allocation).
    annex_b: Vec<u8>,
    file: String,
}

impl H264Decoder {
    fn corrupt(&self, detail: String) -> MediaError {
        MediaError::media(&self.file, MediaProblem::Corrupt { detail })
    }
}

impl track::Decoder for H264Decoder {
    fn decode(&mut self, sample: &[u8], display_index: u64, out: &mut PictureSink) -> MediaResult<()> {
        self.annex_b.clear();
        to_annex_b(sample, self.length_size, &mut self.annex_b).map_err(|d| self.corrupt(d))?;
        match self.decoder.decode(&self.annex_b, display_index) {
            Ok(Some(picture)) => out(picture.timestamp, &|| Ok(picture.to_owned())),
            Ok(None) => Ok(()),
            Err(detail) => Err(MediaError::media(&self.file, MediaProblem::Corrupt { detail })),
        }
    }

    fn finish(&mut self, out: &mut PictureSink) -> MediaResult<()> {
        let corrupt = |detail| MediaError::media(&self.file, MediaProblem::Corrupt { detail });
        if let Some(picture) = self.decoder.end_of_stream().map_err(corrupt)? {
            out(picture.timestamp, &|| Ok(picture.to_owned()))?;
        }
        // The reorder buffer holds at most 16 pictures (H.264's DPB); a few more for safety.
        for _ in 0..32 {
            match self.decoder.flush().map_err(corrupt)? {
                Some(picture) => out(picture.timestamp, &|| Ok(picture.to_owned()))?,
                None => break,
            }
        }
        Ok(())
    }
}

/// Appends parameter sets as Annex B.
pub(crate) fn parameter_sets_annex_b(config: &AvcConfig, out: &mut Vec<u8>) {
    for nal in config.sps.iter().chain(&config.pps) {
        out.extend_from_slice(&[0, 0, 0, 1]);
        out.extend_from_slice(nal);
    }
}

/// One OpenH264 decoder instance. Frames come out in display order (it reorders B-frames by
/// their picture order), each carrying the timestamp its access unit went in with.
pub(crate) struct Decoder {
    decoder: *mut ISVCDecoder,
}

/// A decoded picture, borrowed from the decoder until the next call.
pub(crate) struct Picture<'a> {
    pub timestamp: u64,
    pub width: usize,
    pub height: usize,
    y: &'a [u8],
    u: &'a [u8],
    v: &'a [u8],
    y_stride: usize,
    uv_stride: usize,
}

impl Picture<'_> {
    /// The picture's planes, copied out without padding.
    pub(crate) fn to_owned(&self) -> YuvFrame {
        let (cw, ch) = (self.width.div_ceil(2), self.height.div_ceil(2));
        let rows = |plane: &[u8], stride: usize, w: usize, h: usize| {
            let mut out = Vec::with_capacity(w * h);
            for row in 0..h {
                out.extend_from_slice(&plane[row * stride..row * stride + w]);
            }
            out
        };
        YuvFrame {
            width: self.width as u32,
            height: self.height as u32,
            y: rows(self.y, self.y_stride, self.width, self.height),
            u: rows(self.u, self.uv_stride, cw, ch),
            v: rows(self.v, self.uv_stride, cw, ch),
        }
    }
}

impl Decoder {
    pub(crate) fn new() -> Result<Self, String> {
        let mut decoder: *mut ISVCDecoder = null_mut();
        // SAFETY: WelsCreateDecoder writes a decoder pointer (or leaves null on failure); every
        // vtable call below passes that pointer, as OpenH264's C API requires.
        unsafe {
            if openh264_sys2::source::APILoader::WelsCreateDecoder(&mut decoder) != 0 || decoder.is_null() {
                return Err("the H.264 decoder could not be created".into());
            }
            let this = Self { decoder };
            let mut param = SDecodingParam::default();
            param.sVideoProperty.eVideoBsType = VIDEO_BITSTREAM_AVC;
            // No error concealment: a damaged frame is an error, not a smeared picture.
            param.eEcActiveIdc = 0;
            let vtable = &**this.decoder;
            if (vtable.Initialize.ok_or("no Initialize")?)(this.decoder, &param) != 0 {
                return Err("the H.264 decoder could not be initialised".into());
            }
            let mut quiet: c_int = WELS_LOG_QUIET as c_int;
            (vtable.SetOption.ok_or("no SetOption")?)(
                this.decoder,
                DECODER_OPTION_TRACE_LEVEL,
                (&mut quiet as *mut c_int).cast::<c_void>(),
            );
            let mut no_concealment: c_int = 0;
            (vtable.SetOption.ok_or("no SetOption")?)(
                this.decoder,
                DECODER_OPTION_ERROR_CON_IDC,
                (&mut no_concealment as *mut c_int).cast::<c_void>(),
            );
            Ok(this)
        }
    }

    /// Decodes one access unit (Annex B) tagged with `timestamp`; a picture may come out (an
    /// earlier one, when B-frames are being reordered).
    pub(crate) fn decode(&mut self, access_unit: &[u8], timestamp: u64) -> Result<Option<Picture<'_>>, String> {
        let mut planes: [*mut u8; 3] = [null_mut(); 3];
        let mut info = SBufferInfo { uiInBsTimeStamp: timestamp, ..Default::default() };
        let len = c_int::try_from(access_unit.len()).map_err(|_| "a frame is too large")?;
        // SAFETY: the decoder is initialised; `access_unit` outlives the call; `planes` and
        // `info` are written by it.
        let state = unsafe {
            let vtable = &**self.decoder;
            (vtable.DecodeFrameNoDelay.ok_or("no DecodeFrameNoDelay")?)(
                self.decoder,
                access_unit.as_ptr(),
                len,
                planes.as_mut_ptr(),
                &mut info,
            )
        };
        if state != 0 {
            return Err(format!("the H.264 decoder reports error {state:#x} on frame {timestamp}"));
        }
        Ok(self.picture(&planes, &info))
    }

    /// After the last access unit: the pictures still held for reordering, one per call.
    pub(crate) fn flush(&mut self) -> Result<Option<Picture<'_>>, String> {
        let mut planes: [*mut u8; 3] = [null_mut(); 3];
        let mut info = SBufferInfo::default();
        // SAFETY: as in `decode`; a null, empty input marks the end of the stream, after which
        // FlushFrame hands out the held pictures.
        unsafe {
            let vtable = &**self.decoder;
            let mut remaining: c_int = 0;
            (vtable.GetOption.ok_or("no GetOption")?)(
                self.decoder,
                DECODER_OPTION_NUM_OF_FRAMES_REMAINING_IN_BUFFER,
                (&mut remaining as *mut c_int).cast::<c_void>(),
            );
            if remaining <= 0 {
                return Ok(None);
            }
            (vtable.FlushFrame.ok_or("no FlushFrame")?)(self.decoder, planes.as_mut_ptr(), &mut info);
        }
        Ok(self.picture(&planes, &info))
    }

    /// Marks the end of the stream so `flush` can release what is held; may give a picture.
    pub(crate) fn end_of_stream(&mut self) -> Result<Option<Picture<'_>>, String> {
        let mut planes: [*mut u8; 3] = [null_mut(); 3];
        let mut info = SBufferInfo::default();
        // SAFETY: as in `decode`, with the null input OpenH264 documents for the stream's end.
        unsafe {
            let vtable = &**self.decoder;
            (vtable.DecodeFrameNoDelay.ok_or("no DecodeFrameNoDelay")?)(self.decoder, null(), 0, planes.as_mut_ptr(), &mut info);
        }
        Ok(self.picture(&planes, &info))
    }

    fn picture(&self, planes: &[*mut u8; 3], info: &SBufferInfo) -> Option<Picture<'_>> {
        if info.iBufferStatus != 1 || planes.iter().any(|p| p.is_null()) {
            return None;
        }
        // SAFETY: iBufferStatus == 1 means the union holds the system buffer description, and
        // the planes point at the decoder's picture: Y of height x stride[0], U and V of
        // ceil(height / 2) x stride[1], valid until the next call on this decoder (the borrow of
        // `self` in `Picture` enforces that).
        unsafe {
            let buffer = info.UsrData.sSystemBuffer;
            let (width, height) = (buffer.iWidth.max(0) as usize, buffer.iHeight.max(0) as usize);
            let (y_stride, uv_stride) = (buffer.iStride[0].max(0) as usize, buffer.iStride[1].max(0) as usize);
            if width == 0 || height == 0 || y_stride < width || uv_stride < width.div_ceil(2) {
                return None;
            }
            let chroma_rows = height.div_ceil(2);
            Some(Picture {
                timestamp: info.uiOutYuvTimeStamp,
                width,
                height,
                y: std::slice::from_raw_parts(planes[0], y_stride * height),
                u: std::slice::from_raw_parts(planes[1], uv_stride * chroma_rows),
                v: std::slice::from_raw_parts(planes[2], uv_stride * chroma_rows),
                y_stride,
                uv_stride,
            })
        }
    }
}

impl Drop for Decoder {
    fn drop(&mut self) {
        // SAFETY: created by WelsCreateDecoder and initialised in `new` (or not: Uninitialize
        // is safe on an uninitialised decoder); destroyed once.
        unsafe {
            if let Some(uninitialize) = (**self.decoder).Uninitialize {
                uninitialize(self.decoder);
            }
            openh264_sys2::source::APILoader::WelsDestroyDecoder(self.decoder);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_sps_is_an_error() {
        assert!(Sps::parse(&[0x67, 100]).is_err());
    }

    #[test]
    fn samples_become_annex_b() {
        let mut out = Vec::new();
        assert!(to_annex_b(&[0, 0, 0, 9, 0x65, 1], 4, &mut out).is_err());
        out.clear();
        to_annex_b(&[0, 0, 0, 2, 0x65, 1, 0, 0, 0, 1, 0x06], 4, &mut out).unwrap();
        assert_eq!(out, [0, 0, 0, 1, 0x65, 1, 0, 0, 0, 1, 0x06]);
        let config = AvcConfig { length_size: 4, sps: Vec::new(), pps: Vec::new() };
        let codec = H264 { config: &config };
        assert_eq!(track::Codec::is_idr(&codec, &[0, 0, 0, 1, 0x06, 0, 0, 0, 2, 0x65, 1]), Ok(true));
        assert_eq!(track::Codec::is_idr(&codec, &[0, 0, 0, 2, 0x41, 1]), Ok(false));
    }
}
