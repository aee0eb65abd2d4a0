//! HEVC (H.265) in MP4 and MOV, the bitstream side, on every system: the decoder configuration
//! (`hvcC`, ISO/IEC 14496-15 8.3.3) and the sequence parameter set (H.265 7.3.2.2), read for the
//! frame size, bit depth, chroma format and colour signalling before any frame is decoded, so a
//! file is described and checked against the limits from its headers alone. Decoding is the
//! system's: `videotoolbox.rs` on macOS; other systems refuse HEVC (see `video/mod.rs`).

use super::nal::{self, Bits, NalUnits};
use super::yuv::ColourSignal;

/// NAL unit types (H.265 Table 7-1) that matter here. (IDR pictures matter to the track
/// decoder, which runs on macOS only.)
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
const IDR_W_RADL: u8 = 19;
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
const IDR_N_LP: u8 = 20;
const VPS: u8 = 32;
const SPS: u8 = 33;
const PPS: u8 = 34;

/// A NAL unit's type, from the first byte of its two-byte header.
fn nal_type(nal: &[u8]) -> Option<u8> {
    nal.first().map(|header| (header >> 1) & 0x3F)
}

/// What `hvcC` carries: the NAL length size and the parameter sets (other arrays, such as the
/// SEI messages x265 adds, are skipped).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HevcConfig {
    pub length_size: usize,
    pub vps: Vec<Vec<u8>>,
    pub sps: Vec<Vec<u8>>,
    pub pps: Vec<Vec<u8>>,
}

impl HevcConfig {
    pub(crate) fn parse(data: &[u8]) -> Result<Self, String> {
        let cut = || "the HEVC configuration (hvcC) is cut short".to_string();
        // 22 bytes of profile, level and stream facts, then the number of arrays.
        if data.len() < 23 {
            return Err(cut());
        }
        if data[0] != 1 {
            return Err(format!("unknown HEVC configuration version {}", data[0]));
        }
        let length_size = (data[21] & 3) as usize + 1;
        if length_size == 3 {
            return Err("the HEVC configuration says 3-byte NAL lengths".into());
        }
        let mut config = Self { length_size, vps: Vec::new(), sps: Vec::new(), pps: Vec::new() };
        let mut at = 23;
        for _ in 0..data[22] {
            let header = data.get(at..at + 3).ok_or_else(cut)?;
            let (array_type, count) = (header[0] & 0x3F, u16::from_be_bytes([header[1], header[2]]));
            at += 3;
            for _ in 0..count {
                let len = data.get(at..at + 2).ok_or_else(cut)?;
                let len = u16::from_be_bytes([len[0], len[1]]) as usize;
                let nal = data.get(at + 2..at + 2 + len).ok_or_else(cut)?;
                at += 2 + len;
                // The array's type and the unit's own header should agree; the header decides.
                let list = match nal_type(nal).unwrap_or(array_type) {
                    VPS => &mut config.vps,
                    SPS => &mut config.sps,
                    PPS => &mut config.pps,
                    _ => continue,
                };
                list.push(nal.to_vec());
            }
        }
        Ok(config)
    }

    /// Whether a sample (length-prefixed NAL units) holds an IDR picture. CRA and BLA pictures
    /// are random-access points too, but the leading pictures after them may reference the
    /// group before, so they do not count: the track decoder decodes that group as well.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code))]
    pub(crate) fn is_idr(&self, sample: &[u8]) -> Result<bool, String> {
        for nal in NalUnits::new(sample, self.length_size) {
            if matches!(nal_type(nal?), Some(IDR_W_RADL | IDR_N_LP)) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The sequence parameter set fields that describe the pictures.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sps {
    pub profile_idc: u8,
    /// 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4.
    pub chroma_format_idc: u32,
    pub bit_depth_luma: u32,
    pub bit_depth_chroma: u32,
    /// Coded size in luma samples (what a decoder's buffers may hold).
    pub coded_width: u32,
    pub coded_height: u32,
    /// The conformance window's left and top offsets in luma samples: where the displayed
    /// picture starts inside the coded one.
    pub crop_left: u32,
    pub crop_top: u32,
    /// Displayed size: the coded size less the conformance window (what FFmpeg reports).
    pub width: u32,
    pub height: u32,
    pub colour: ColourSignal,
}

/// Short-term reference picture sets in an SPS at most (H.265 7.4.3.2.1).
const MAX_SHORT_TERM_SETS: u32 = 64;
/// Pictures one reference picture set lists at most (16 in the standard; a little slack).
const MAX_DELTA_POCS: u32 = 32;

impl Sps {
    /// `nal` is the whole NAL unit, its two-byte header included.
    pub(crate) fn parse(nal: &[u8]) -> Result<Self, String> {
        if nal_type(nal) != Some(SPS) {
            return Err("the HEVC configuration's SPS is not a sequence parameter set".into());
        }
        let rbsp = nal::unescape(nal.get(2..).ok_or("an empty SPS")?);
        let mut r = Bits::new(&rbsp);
        r.u(4)?; // sps_video_parameter_set_id
        let max_sub_layers_minus1 = r.u(3)?;
        r.u(1)?; // sps_temporal_id_nesting_flag
        let profile_idc = profile_tier_level(&mut r, max_sub_layers_minus1)?;
        r.ue()?; // sps_seq_parameter_set_id
        let chroma_format_idc = r.ue()?;
        if chroma_format_idc > 3 {
            return Err(format!("the SPS says chroma format {chroma_format_idc}"));
        }
        let separate_colour_planes = chroma_format_idc == 3 && r.flag()?;
        let coded_width = r.ue()?;
        let coded_height = r.ue()?;
        let (mut left, mut right, mut top, mut bottom) = (0u64, 0u64, 0u64, 0u64);
        if r.flag()? {
            (left, right, top, bottom) = (r.ue()? as u64, r.ue()? as u64, r.ue()? as u64, r.ue()? as u64);
        }
        // Offsets count chroma samples (H.265 Table 6-1: SubWidthC, SubHeightC).
        let (unit_x, unit_y) = match (chroma_format_idc, separate_colour_planes) {
            (1, _) => (2, 2),
            (2, _) => (2, 1),
            _ => (1, 1),
        };
        let (crop_x, crop_y) = ((left + right) * unit_x, (top + bottom) * unit_y);
        if coded_width == 0 || coded_height == 0 || crop_x >= coded_width as u64 || crop_y >= coded_height as u64 {
            return Err("the SPS's frame size is out of range".into());
        }
        let bit_depth_luma = r.ue()?.saturating_add(8);
        let bit_depth_chroma = r.ue()?.saturating_add(8);
        let log2_max_poc_lsb = r.ue()?.saturating_add(4);
        if log2_max_poc_lsb > 16 {
            return Err("the SPS's picture order count is out of range".into());
        }
        let ordering_for_each_layer = r.flag()?;
        let first_layer = if ordering_for_each_layer { 0 } else { max_sub_layers_minus1 };
        for _ in first_layer..=max_sub_layers_minus1 {
            r.ue()?; // sps_max_dec_pic_buffering_minus1
            r.ue()?; // sps_max_num_reorder_pics
            r.ue()?; // sps_max_latency_increase_plus1
        }
        r.ue()?; // log2_min_luma_coding_block_size_minus3
        r.ue()?; // log2_diff_max_min_luma_coding_block_size
        r.ue()?; // log2_min_luma_transform_block_size_minus2
        r.ue()?; // log2_diff_max_min_luma_transform_block_size
        r.ue()?; // max_transform_hierarchy_depth_inter
        r.ue()?; // max_transform_hierarchy_depth_intra
        if r.flag()? && r.flag()? {
            // scaling_list_enabled_flag, then sps_scaling_list_data_present_flag
            skip_scaling_list_data(&mut r)?;
        }
        r.u(2)?; // amp_enabled_flag, sample_adaptive_offset_enabled_flag
        if r.flag()? {
            // pcm_enabled_flag: sample bit depths (4 + 4), sizes, loop filter flag
            r.u(8)?;
            r.ue()?;
            r.ue()?;
            r.u(1)?;
        }
        let short_term_sets = r.ue()?;
        if short_term_sets > MAX_SHORT_TERM_SETS {
            return Err(format!("the SPS lists {short_term_sets} reference picture sets"));
        }
        let mut delta_pocs = Vec::with_capacity(short_term_sets as usize);
        for index in 0..short_term_sets as usize {
            let count = skip_short_term_ref_pic_set(&mut r, index, &delta_pocs)?;
            delta_pocs.push(count);
        }
        if r.flag()? {
            // long_term_ref_pics_present_flag
            let long_term = r.ue()?;
            if long_term > 32 {
                return Err(format!("the SPS lists {long_term} long-term reference pictures"));
            }
            for _ in 0..long_term {
                r.u(log2_max_poc_lsb)?; // lt_ref_pic_poc_lsb_sps
                r.u(1)?; // used_by_curr_pic_lt_sps_flag
            }
        }
        r.u(2)?; // sps_temporal_mvp_enabled_flag, strong_intra_smoothing_enabled_flag
        let mut colour = ColourSignal::default();
        // The VUI, when present, may say which matrix and range the pixels use; a stream cut
        // in the middle of it keeps the defaults (as H.264's reader does).
        if r.flag().unwrap_or(false) {
            let _ = nal::read_vui_colour(&mut r, &mut colour);
        }
        let crop = |offset: u64, unit: u64| (offset * unit) as u32;
        Ok(Self {
            profile_idc,
            chroma_format_idc,
            bit_depth_luma,
            bit_depth_chroma,
            coded_width,
            coded_height,
            crop_left: crop(left, unit_x),
            crop_top: crop(top, unit_y),
            width: (coded_width as u64 - crop_x) as u32,
            height: (coded_height as u64 - crop_y) as u32,
            colour,
        })
    }

    /// The profile as a person knows it (H.265 Annex A).
    pub(crate) fn profile_name(&self) -> &'static str {
        match self.profile_idc {
            1 => "Main",
            2 => "Main 10",
            3 => "Main Still Picture",
            4 => "Format Range Extensions",
            5 => "High Throughput",
            9 => "Screen Content",
            _ => "other",
        }
    }

    /// "Main 10, 10-bit 4:2:0": what a refusal names.
    pub(crate) fn describe(&self) -> String {
        let chroma = ["4:0:0", "4:2:0", "4:2:2", "4:4:4"][self.chroma_format_idc.min(3) as usize];
        format!("{}, {}-bit {chroma}", self.profile_name(), self.bit_depth_luma.max(self.bit_depth_chroma))
    }
}

/// `profile_tier_level(1, max_sub_layers_minus1)` (H.265 7.3.3); returns general_profile_idc.
fn profile_tier_level(r: &mut Bits, max_sub_layers_minus1: u32) -> Result<u8, String> {
    r.u(3)?; // general_profile_space, general_tier_flag
    let profile_idc = r.u(5)? as u8;
    r.u(32)?; // general_profile_compatibility_flags
    r.u(24)?; // source and constraint flags: 48 bits in all
    r.u(24)?;
    r.u(8)?; // general_level_idc
    let mut sub_layers = Vec::with_capacity(max_sub_layers_minus1 as usize);
    for _ in 0..max_sub_layers_minus1 {
        sub_layers.push((r.flag()?, r.flag()?)); // profile present, level present
    }
    if max_sub_layers_minus1 > 0 {
        for _ in max_sub_layers_minus1..8 {
            r.u(2)?; // reserved_zero_2bits
        }
    }
    for (profile_present, level_present) in sub_layers {
        if profile_present {
            // profile space, tier, idc, compatibility flags, 48 bits of flags: 88 bits.
            r.u(8)?;
            r.u(32)?;
            r.u(24)?;
            r.u(24)?;
        }
        if level_present {
            r.u(8)?;
        }
    }
    Ok(profile_idc)
}

/// `scaling_list_data()` (H.265 7.3.4), skipped.
fn skip_scaling_list_data(r: &mut Bits) -> Result<(), String> {
    for size_id in 0..4u32 {
        let step = if size_id == 3 { 3 } else { 1 };
        for _matrix_id in (0..6).step_by(step) {
            if !r.flag()? {
                r.ue()?; // scaling_list_pred_matrix_id_delta
                continue;
            }
            let coefficients = 64.min(1 << (4 + (size_id << 1)));
            if size_id > 1 {
                r.se()?; // scaling_list_dc_coef_minus8
            }
            for _ in 0..coefficients {
                r.se()?; // scaling_list_delta_coef
            }
        }
    }
    Ok(())
}

/// `st_ref_pic_set(index)` as it appears in an SPS (H.265 7.3.7), skipped; returns how many
/// pictures it lists (NumDeltaPocs), which a later set predicted from it needs.
fn skip_short_term_ref_pic_set(r: &mut Bits, index: usize, delta_pocs: &[u32]) -> Result<u32, String> {
    let predicted = index != 0 && r.flag()?;
    if predicted {
        // In an SPS a set is predicted from the one before it (delta_idx_minus1 is only in
        // slice headers).
        let reference = delta_pocs[index - 1];
        r.u(1)?; // delta_rps_sign
        r.ue()?; // abs_delta_rps_minus1
        let mut count = 0;
        for _ in 0..=reference {
            let used_by_current = r.flag()?;
            // use_delta_flag is 1 when absent.
            let use_delta = used_by_current || r.flag()?;
            if use_delta {
                count += 1;
            }
        }
        return Ok(count);
    }
    let negative = r.ue()?;
    let positive = r.ue()?;
    if negative.saturating_add(positive) > MAX_DELTA_POCS {
        return Err(format!("a reference picture set lists {} pictures", negative as u64 + positive as u64));
    }
    for _ in 0..negative + positive {
        r.ue()?; // delta_poc_s0/s1_minus1
        r.u(1)?; // used_by_curr_pic_s0/s1_flag
    }
    Ok(negative + positive)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An hvcC whose arrays are `arrays` (type, units), after x265's usual 22-byte preamble.
    fn hvcc(length_size: u8, arrays: &[(u8, &[&[u8]])]) -> Vec<u8> {
        let mut data = vec![1, 0x01, 0x60, 0, 0, 0, 0x90, 0, 0, 0, 0, 0, 0x1E, 0xF0, 0, 0xFC, 0xFD, 0xF8, 0xF8, 0, 0];
        data.push(0x0C | (length_size - 1));
        data.push(arrays.len() as u8);
        for (kind, units) in arrays {
            data.push(0x80 | kind);
            data.extend_from_slice(&(units.len() as u16).to_be_bytes());
            for unit in *units {
                data.extend_from_slice(&(unit.len() as u16).to_be_bytes());
                data.extend_from_slice(unit);
            }
        }
        data
    }

    #[test]
    fn configuration_arrays_are_sorted_by_nal_type() {
        let (vps, sps, pps, sei) = (&[0x40, 1, 7][..], &[0x42, 1, 8][..], &[0x44, 1, 9][..], &[0x4E, 1, 5][..]);
        let config = HevcConfig::parse(&hvcc(4, &[(32, &[vps]), (33, &[sps]), (34, &[pps]), (39, &[sei])])).unwrap();
        assert_eq!(config, HevcConfig { length_size: 4, vps: vec![vps.to_vec()], sps: vec![sps.to_vec()], pps: vec![pps.to_vec()] });
        assert_eq!(HevcConfig::parse(&hvcc(2, &[])).unwrap().length_size, 2);
        assert!(HevcConfig::parse(&hvcc(3, &[])).is_err());
    }

    #[test]
    fn cut_or_garbled_configurations_are_errors_not_panics() {
        let whole = hvcc(4, &[(32, &[&[0x40, 1, 7]]), (33, &[&[0x42, 1, 8, 9, 10]]), (34, &[&[0x44, 1, 9]])]);
        for cut in 0..whole.len() {
            assert!(HevcConfig::parse(&whole[..cut]).is_err(), "cut at {cut}");
        }
        for at in 0..whole.len() {
            for value in [0x00, 0x7F, 0xFF] {
                let mut garbled = whole.clone();
                garbled[at] = value;
                if let Ok(config) = HevcConfig::parse(&garbled) {
                    for sps in &config.sps {
                        let _ = Sps::parse(sps);
                    }
                }
            }
        }
    }

    #[test]
    fn only_idr_pictures_start_afresh() {
        let config = HevcConfig { length_size: 4, vps: Vec::new(), sps: Vec::new(), pps: Vec::new() };
        let sample = |nal_type: u8| [0, 0, 0, 3, nal_type << 1, 1, 0xAF];
        assert_eq!(config.is_idr(&sample(IDR_W_RADL)), Ok(true));
        assert_eq!(config.is_idr(&sample(IDR_N_LP)), Ok(true));
        assert_eq!(config.is_idr(&sample(21)), Ok(false), "CRA");
        assert_eq!(config.is_idr(&sample(1)), Ok(false), "TRAIL_R");
        assert!(config.is_idr(&[0, 0, 0, 9, 0x26, 1]).is_err());
    }

    #[test]
    fn a_cut_sps_is_an_error_not_a_panic() {
        assert!(Sps::parse(&[0x42, 1]).is_err());
        assert!(Sps::parse(&[0x40, 1, 0x0C]).is_err(), "a VPS is not an SPS");
        let mut long = vec![0x42, 1];
        long.extend([0xFF; 64]);
        for cut in 2..long.len() {
            let _ = Sps::parse(&long[..cut]);
        }
    }
}
