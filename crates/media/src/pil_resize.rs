//! Image resizing exactly as Pillow's `Image.resize` does it for 8-bit RGB, which is what the
//! Hugging Face image processors call (without torchvision). Same filters, same support scaled
//! by the downscale factor (so shrinking is antialiased), same 22-bit fixed-point weights, and
//! the same two passes (horizontal into an 8-bit buffer, then vertical): the output is identical
//! byte for byte, so the model sees the pixels it was tested with.

use image::RgbImage;

/// Pillow's resampling filters, numbered as `PIL.Image.Resampling` (and so as the
/// `resample` field of a preprocessor config). Nearest (0) is not a convolution and is not here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PilFilter {
    Lanczos = 1,
    Bilinear = 2,
    Bicubic = 3,
    Box = 4,
    Hamming = 5,
}

impl PilFilter {
    /// The filter for a `resample` number from a config, `None` for nearest or an unknown one.
    pub fn from_pil(number: u32) -> Option<Self> {
        Some(match number {
            1 => PilFilter::Lanczos,
            2 => PilFilter::Bilinear,
            3 => PilFilter::Bicubic,
            4 => PilFilter::Box,
            5 => PilFilter::Hamming,
            _ => return None,
        })
    }

    fn support(self) -> f64 {
        match self {
            PilFilter::Box => 0.5,
            PilFilter::Bilinear | PilFilter::Hamming => 1.0,
            PilFilter::Bicubic => 2.0,
            PilFilter::Lanczos => 3.0,
        }
    }

    fn weight(self, x: f64) -> f64 {
        match self {
            PilFilter::Box => (x > -0.5 && x <= 0.5) as u8 as f64,
            PilFilter::Bilinear => (1.0 - x.abs()).max(0.0),
            PilFilter::Hamming => {
                let x = x.abs();
                if x == 0.0 {
                    1.0
                } else if x >= 1.0 {
                    0.0
                } else {
                    let x = x * std::f64::consts::PI;
                    // Pillow writes these two as C floats.
                    (x.sin() / x) * (0.54f32 as f64 + 0.46f32 as f64 * x.cos())
                }
            }
            PilFilter::Bicubic => {
                const A: f64 = -0.5;
                let x = x.abs();
                if x < 1.0 {
                    ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0
                } else if x < 2.0 {
                    (((x - 5.0) * x + 8.0) * x - 4.0) * A
                } else {
                    0.0
                }
            }
            PilFilter::Lanczos => {
                if (-3.0..3.0).contains(&x) {
                    sinc(x) * sinc(x / 3.0)
                } else {
                    0.0
                }
            }
        }
    }
}

fn sinc(x: f64) -> f64 {
    if x == 0.0 {
        return 1.0;
    }
    let x = x * std::f64::consts::PI;
    x.sin() / x
}

/// Fixed-point precision of the weights for 8-bit images (Pillow's `PRECISION_BITS`).
const PRECISION_BITS: u32 = 32 - 8 - 2;

/// For each output pixel, the first input pixel it reads and its integer weights.
struct Coefficients {
    starts: Vec<usize>,
    weights: Vec<Vec<i32>>,
}

/// Pillow's `precompute_coeffs` and `normalize_coeffs_8bpc` for the whole input range.
fn coefficients(in_size: usize, out_size: usize, filter: PilFilter) -> Coefficients {
    let scale = in_size as f64 / out_size as f64;
    let filter_scale = scale.max(1.0);
    let support = filter.support() * filter_scale;
    let mut starts = Vec::with_capacity(out_size);
    let mut weights = Vec::with_capacity(out_size);
    for xx in 0..out_size {
        let center = (xx as f64 + 0.5) * scale;
        // C's (int) truncates toward zero; the clamps make it the same as floor here.
        let min = ((center - support + 0.5) as i64).max(0) as usize;
        let max = ((center + support + 0.5) as i64).min(in_size as i64) as usize;
        let raw: Vec<f64> = (min..max).map(|x| filter.weight((x as f64 - center + 0.5) / filter_scale)).collect();
        let total: f64 = raw.iter().sum();
        let one = (1u32 << PRECISION_BITS) as f64;
        let fixed = raw
            .iter()
            .map(|&w| {
                let w = if total != 0.0 { w / total } else { w };
                if w < 0.0 {
                    (-0.5 + w * one) as i32
                } else {
                    (0.5 + w * one) as i32
                }
            })
            .collect();
        starts.push(min);
        weights.push(fixed);
    }
    Coefficients { starts, weights }
}

fn clip8(value: i32) -> u8 {
    (value >> PRECISION_BITS).clamp(0, 255) as u8
}

/// `image` resized to `width` × `height` as `image.resize((width, height), filter)` in Pillow.
pub fn resize_like_pil(image: &RgbImage, width: u32, height: u32, filter: PilFilter) -> RgbImage {
    let (in_w, in_h) = (image.width() as usize, image.height() as usize);
    let (out_w, out_h) = (width as usize, height as usize);
    if (in_w, in_h) == (out_w, out_h) || out_w == 0 || out_h == 0 || in_w == 0 || in_h == 0 {
        return if (in_w, in_h) == (out_w, out_h) { image.clone() } else { RgbImage::new(width, height) };
    }
    let horizontal = coefficients(in_w, out_w, filter);
    let vertical = coefficients(in_h, out_h, filter);
    let src = image.as_raw();
    let half = 1i32 << (PRECISION_BITS - 1);

    // Horizontal pass, only over the rows the vertical pass will read (as Pillow does).
    let (first_row, last_row) = if in_h != out_h {
        let last = out_h - 1;
        (vertical.starts[0], vertical.starts[last] + vertical.weights[last].len())
    } else {
        (0, in_h)
    };
    let rows = last_row - first_row;
    let mut temp = vec![0u8; rows * out_w * 3];
    if in_w != out_w {
        for y in 0..rows {
            let row = &src[(first_row + y) * in_w * 3..][..in_w * 3];
            for (xx, (&start, k)) in horizontal.starts.iter().zip(&horizontal.weights).enumerate() {
                let mut acc = [half; 3];
                for (i, &w) in k.iter().enumerate() {
                    let p = &row[(start + i) * 3..][..3];
                    (0..3).for_each(|c| acc[c] += p[c] as i32 * w);
                }
                let out = &mut temp[(y * out_w + xx) * 3..][..3];
                (0..3).for_each(|c| out[c] = clip8(acc[c]));
            }
        }
    } else {
        temp.copy_from_slice(&src[first_row * in_w * 3..last_row * in_w * 3]);
    }
    if in_h == out_h {
        return RgbImage::from_raw(width, height, temp).unwrap_or_else(|| RgbImage::new(width, height));
    }

    let mut out = vec![0u8; out_h * out_w * 3];
    for (yy, (&start, k)) in vertical.starts.iter().zip(&vertical.weights).enumerate() {
        let start = start - first_row;
        for x in 0..out_w * 3 {
            let mut acc = half;
            for (i, &w) in k.iter().enumerate() {
                acc += temp[(start + i) * out_w * 3 + x] as i32 * w;
            }
            out[yy * out_w * 3 + x] = clip8(acc);
        }
    }
    RgbImage::from_raw(width, height, out).unwrap_or_else(|| RgbImage::new(width, height))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_size_is_a_copy() {
        let image = RgbImage::from_fn(5, 4, |x, y| image::Rgb([x as u8 * 40, y as u8 * 50, 7]));
        assert_eq!(resize_like_pil(&image, 5, 4, PilFilter::Bicubic), image);
    }

    #[test]
    fn flat_colour_stays_flat() {
        let image = RgbImage::from_pixel(13, 7, image::Rgb([200, 10, 99]));
        for (w, h) in [(40, 3), (5, 21), (1, 1)] {
            let out = resize_like_pil(&image, w, h, PilFilter::Bicubic);
            assert!(out.pixels().all(|p| p.0 == [200, 10, 99]), "{w}x{h}");
        }
    }

    #[test]
    fn weights_sum_to_one_in_fixed_point() {
        for (input, output) in [(100, 37), (37, 100), (5, 5000)] {
            let c = coefficients(input, output, PilFilter::Bicubic);
            for k in &c.weights {
                let sum: i32 = k.iter().sum();
                assert!((sum - (1 << PRECISION_BITS)).abs() <= k.len() as i32, "{sum}");
            }
        }
    }
}
