//! The parameter-set readers on their own, for crates/fuzz: inside a whole file they sit behind
//! the MP4 box reader, which a fuzzer's mutations rarely get past with the configuration intact.
//! Each reads what `Coding::read` and the track decoder read, and returns what they would refuse.

use super::{h264, hevc};

/// An `avcC` box's payload: the configuration, each SPS, the parameter sets as Annex B; then
/// the same bytes as a sample of 4-byte length-prefixed NAL units.
pub fn h264_configuration(data: &[u8]) -> Result<(), String> {
    let mut annex_b = Vec::new();
    let sample = h264::to_annex_b(data, 4, &mut annex_b);
    let config = h264::AvcConfig::parse(data)?;
    for sps in &config.sps {
        let sps = h264::Sps::parse(sps)?;
        let _ = (sps.unsupported(), sps.profile_name());
    }
    h264::parameter_sets_annex_b(&config, &mut annex_b);
    sample
}

/// An `hvcC` box's payload: the configuration, each SPS, and whether the same bytes, as a
/// sample of NAL units of the configuration's length, hold an IDR picture.
pub fn hevc_configuration(data: &[u8]) -> Result<(), String> {
    let config = hevc::HevcConfig::parse(data)?;
    for sps in &config.sps {
        let sps = hevc::Sps::parse(sps)?;
        let _ = sps.describe();
    }
    config.is_idr(data).map(|_| ())
}
