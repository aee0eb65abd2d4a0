//! 8-bit 4:2:0 YUV to RGB, as the reference reads video: PyAV's `to_ndarray(format="rgb24")`,
//! which is FFmpeg's swscale. Its unscaled YUV->RGB path (x86 SIMD) repeats each chroma sample
//! over its 2x2 block and works in 16-bit fixed point: samples promoted by 3 bits, coefficients
//! scaled by 2^13, products kept as their high 16 bits (`pmulhw`), then saturated to 8 bits.
//! This is that arithmetic, so the pixels are the reference's (bit-exact on the corpus for BT.601,
//! BT.709 and limited range; see tests/video.rs).
//!
//! The matrix and range are the stream's when its SPS signals them (what PyAV, through the
//! frame's colorspace, uses too); unsignalled streams are BT.601 limited range, swscale's default.

use image::RgbImage;

/// Which YUV->RGB matrix a stream's pixels use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Matrix {
    #[default]
    Bt601,
    Bt709,
    Fcc,
    Smpte240,
    Bt2020,
}

impl Matrix {
    /// From an H.273 `matrix_coefficients` code (as H.264's VUI and MP4's `colr` carry it).
    pub(crate) fn from_h273(code: u32) -> Self {
        match code {
            1 => Matrix::Bt709,
            4 => Matrix::Fcc,
            7 => Matrix::Smpte240,
            9 | 10 => Matrix::Bt2020,
            // 5, 6 (BT.601), 2 (unspecified) and everything else: swscale's default.
            _ => Matrix::Bt601,
        }
    }

    /// (Kr, Kb) luma weights.
    fn weights(self) -> (f64, f64) {
        match self {
            Matrix::Bt601 => (0.299, 0.114),
            Matrix::Bt709 => (0.2126, 0.0722),
            Matrix::Fcc => (0.30, 0.11),
            Matrix::Smpte240 => (0.212, 0.087),
            Matrix::Bt2020 => (0.2627, 0.0593),
        }
    }
}

/// A stream's colour signalling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ColourSignal {
    pub matrix: Matrix,
    /// Full range (0-255) luma and chroma instead of limited (16-235/240).
    pub full_range: bool,
}

/// A decoded picture's planes, without padding: Y is width x height, U and V are
/// ceil(width / 2) x ceil(height / 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YuvFrame {
    pub width: u32,
    pub height: u32,
    pub y: Vec<u8>,
    pub u: Vec<u8>,
    pub v: Vec<u8>,
}

/// swscale's fixed-point coefficients for one matrix and range.
struct Coefficients {
    y_offset: i32,
    y: i32,
    v_to_r: i32,
    u_to_b: i32,
    u_to_g: i32,
    v_to_g: i32,
}

impl Coefficients {
    fn new(signal: ColourSignal) -> Self {
        let (kr, kb) = signal.matrix.weights();
        let kg = 1.0 - kr - kb;
        // Limited range stretches luma by 255/219 and chroma by 255/224.
        let (luma, chroma, y_offset) = if signal.full_range { (1.0, 1.0, 0) } else { (255.0 / 219.0, 255.0 / 224.0, 16 << 3) };
        let q13 = |c: f64| (c * 8192.0).round() as i32;
        Self {
            y_offset,
            y: q13(luma),
            v_to_r: q13(2.0 * (1.0 - kr) * chroma),
            u_to_b: q13(2.0 * (1.0 - kb) * chroma),
            u_to_g: -q13(2.0 * kb * (1.0 - kb) / kg * chroma),
            v_to_g: -q13(2.0 * kr * (1.0 - kr) / kg * chroma),
        }
    }
}

/// `pmulhw`: the high half of a 16x16-bit signed product.
fn mulhi(a: i32, b: i32) -> i32 {
    (a * b) >> 16
}

/// Converts a 4:2:0 frame to RGB8 with swscale's arithmetic.
pub(crate) fn to_rgb(frame: &YuvFrame, signal: ColourSignal) -> RgbImage {
    let c = Coefficients::new(signal);
    let (width, height) = (frame.width as usize, frame.height as usize);
    let chroma_width = width.div_ceil(2);
    // Per-sample terms, looked up: the luma term for each Y, the chroma terms for each U and V.
    let luma: [i32; 256] = std::array::from_fn(|y| mulhi(((y as i32) << 3) - c.y_offset, c.y));
    let chroma = |coefficient: i32| -> [i32; 256] { std::array::from_fn(|v| mulhi(((v as i32) << 3) - (128 << 3), coefficient)) };
    let (v_to_r, u_to_g, v_to_g, u_to_b) = (chroma(c.v_to_r), chroma(c.u_to_g), chroma(c.v_to_g), chroma(c.u_to_b));
    let mut out = vec![0u8; width * height * 3];
    let saturate = |v: i32| v.clamp(0, 255) as u8;
    for (row, pixels) in out.chunks_exact_mut(width * 3).enumerate() {
        let luma_row = &frame.y[row * width..(row + 1) * width];
        let chroma_row = (row / 2) * chroma_width..(row / 2 + 1) * chroma_width;
        let (u_row, v_row) = (&frame.u[chroma_row.clone()], &frame.v[chroma_row]);
        // Two pixels share each chroma sample (the last one alone when the width is odd).
        for (((pair, ys), &u), &v) in pixels.chunks_mut(6).zip(luma_row.chunks(2)).zip(u_row).zip(v_row) {
            let (r, g, b) = (v_to_r[v as usize], u_to_g[u as usize] + v_to_g[v as usize], u_to_b[u as usize]);
            for (pixel, &y) in pair.chunks_exact_mut(3).zip(ys) {
                let y = luma[y as usize];
                pixel[0] = saturate(y + r);
                pixel[1] = saturate(y + g);
                pixel[2] = saturate(y + b);
            }
        }
    }
    RgbImage::from_raw(frame.width, frame.height, out).expect("the buffer is width x height x 3")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(y: u8, u: u8, v: u8) -> YuvFrame {
        YuvFrame { width: 2, height: 2, y: vec![y; 4], u: vec![u], v: vec![v] }
    }

    #[test]
    fn limited_range_black_and_white_reach_the_ends() {
        let signal = ColourSignal::default();
        assert_eq!(to_rgb(&flat(16, 128, 128), signal).get_pixel(0, 0).0, [0, 0, 0]);
        assert_eq!(to_rgb(&flat(235, 128, 128), signal).get_pixel(1, 1).0, [255, 255, 255]);
        let full = ColourSignal { full_range: true, ..Default::default() };
        assert_eq!(to_rgb(&flat(128, 128, 128), full).get_pixel(0, 0).0, [128, 128, 128]);
    }

    #[test]
    fn swscale_coefficients_for_bt601_limited() {
        // libswscale's table for BT.601 (104597, 132201, 25675, 53279 in 16.16), scaled to 2^13.
        let c = Coefficients::new(ColourSignal::default());
        assert_eq!((c.y, c.v_to_r, c.u_to_b, c.u_to_g, c.v_to_g), (9539, 13075, 16525, -3209, -6660));
    }
}
