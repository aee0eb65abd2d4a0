//! Resizing 8-bit RGB exactly as torch does it on the CPU for `interpolate(uint8, mode="bicubic",
//! antialias=True)`, which is what torchvision's `resize` runs for a uint8 tensor (transformers'
//! video processors resize frames so, before rescaling). The filter and its support are
//! Pillow's (Keys cubic with a = -0.5, widened by the downscale factor), but the fixed-point
//! weights are int16 with a precision chosen per pass from the largest weight, where Pillow
//! uses 22 bits: the same two passes (horizontal into an 8-bit buffer, then vertical) can
//! therefore round a pixel one step apart from Pillow's, and this module follows torch's.

use image::RgbImage;

/// For each output pixel, the first input pixel it reads and its integer weights, and the
/// precision (bits) the weights carry.
struct Coefficients {
    starts: Vec<usize>,
    weights: Vec<Vec<i32>>,
    precision: u32,
}

/// Keys' cubic convolution with a = -0.5 (torch's `aa_filter` for antialiased bicubic).
fn cubic(x: f64) -> f64 {
    const A: f64 = -0.5;
    let x = x.abs();
    if x < 1.0 {
        ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0
    } else if x < 2.0 {
        ((A * x - 5.0 * A) * x + 8.0 * A) * x - 4.0 * A
    } else {
        0.0
    }
}

/// torch's `_compute_index_ranges_int16_weights` for one axis (align_corners false, no scale
/// given: the scale is in / out).
fn coefficients(in_size: usize, out_size: usize) -> Coefficients {
    let scale = in_size as f64 / out_size as f64;
    let support = if scale >= 1.0 { 2.0 * scale } else { 2.0 };
    let max_taps = support.ceil() as usize * 2 + 1;
    let inv_scale = if scale >= 1.0 { 1.0 / scale } else { 1.0 };
    let mut starts = Vec::with_capacity(out_size);
    let mut floats = Vec::with_capacity(out_size);
    let mut largest = 0.0f64;
    for i in 0..out_size {
        let center = scale * (i as f64 + 0.5);
        // C's (int64_t) truncates toward zero; the clamp makes it floor here.
        let min = ((center - support + 0.5) as i64).max(0);
        let size = (((center + support + 0.5) as i64).min(in_size as i64) - min).clamp(0, max_taps as i64);
        let mut w: Vec<f64> = (0..size).map(|j| cubic(((j + min) as f64 - center + 0.5) * inv_scale)).collect();
        let total: f64 = w.iter().sum();
        if total != 0.0 {
            for v in w.iter_mut() {
                *v /= total;
                largest = largest.max(*v);
            }
        }
        starts.push(min as usize);
        floats.push(w);
    }
    // The most bits that keep the largest weight (rounded, doubled) under 2^15.
    let mut precision = 0u32;
    while precision < 22 {
        let next = (0.5 + largest * (1u32 << (precision + 1)) as f64) as i32;
        if next >= 1 << 15 {
            break;
        }
        precision += 1;
    }
    let one = (1u32 << precision) as f64;
    let weights = floats
        .into_iter()
        .map(|w| {
            w.into_iter()
                .map(|v| {
                    let v = v * one;
                    // Stored as int16.
                    (if v < 0.0 { (-0.5 + v) as i32 } else { (0.5 + v) as i32 }) as i16 as i32
                })
                .collect()
        })
        .collect();
    Coefficients { starts, weights, precision }
}

fn round_to_u8(sum: i32, precision: u32) -> u8 {
    // An arithmetic shift, then saturation (torch packs int32 → int16 → uint8).
    (sum >> precision).clamp(0, 255) as u8
}

/// `image` resized to `width` × `height` as torch's antialiased bicubic does it for uint8.
pub fn resize_like_torch_bicubic(image: &RgbImage, width: u32, height: u32) -> RgbImage {
    let (in_w, in_h) = (image.width() as usize, image.height() as usize);
    let (out_w, out_h) = (width as usize, height as usize);
    if (in_w, in_h) == (out_w, out_h) {
        return image.clone();
    }
    if out_w == 0 || out_h == 0 || in_w == 0 || in_h == 0 {
        return RgbImage::new(width, height);
    }
    let mut current = image.as_raw().clone();
    let mut current_w = in_w;
    if out_w != in_w {
        let c = coefficients(in_w, out_w);
        let half = 1i32 << (c.precision - 1);
        let mut out = vec![0u8; out_w * in_h * 3];
        for y in 0..in_h {
            let row = &current[y * in_w * 3..(y + 1) * in_w * 3];
            for x in 0..out_w {
                for ch in 0..3 {
                    let mut sum = half;
                    for (k, &w) in c.weights[x].iter().enumerate() {
                        sum += row[(c.starts[x] + k) * 3 + ch] as i32 * w;
                    }
                    out[(y * out_w + x) * 3 + ch] = round_to_u8(sum, c.precision);
                }
            }
        }
        current = out;
        current_w = out_w;
    }
    if out_h != in_h {
        let c = coefficients(in_h, out_h);
        let half = 1i32 << (c.precision - 1);
        let mut out = vec![0u8; current_w * out_h * 3];
        for y in 0..out_h {
            for x in 0..current_w * 3 {
                let mut sum = half;
                for (k, &w) in c.weights[y].iter().enumerate() {
                    sum += current[(c.starts[y] + k) * current_w * 3 + x] as i32 * w;
                }
                out[y * current_w * 3 + x] = round_to_u8(sum, c.precision);
            }
        }
        current = out;
    }
    RgbImage::from_raw(width, height, current).expect("the buffer has width × height × 3 bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_sum_to_one_at_their_precision() {
        for (input, output) in [(72, 64), (40, 32), (10, 30), (100, 7)] {
            let c = coefficients(input, output);
            assert!(c.precision > 8 && c.precision <= 22, "{input} → {output}: precision {}", c.precision);
            for w in &c.weights {
                let total: i32 = w.iter().sum();
                assert!((total - (1 << c.precision)).abs() <= w.len() as i32, "{input} → {output}: {total}");
            }
        }
    }

    /// `(x·37 + y·91 + c·53 + (x·y mod 7)·29) mod 256`, the test pattern the values below were
    /// computed on (torchvision 0.29 `resize(uint8, BICUBIC, antialias=True)`, torch 2.15 CPU).
    fn pattern(w: u32, h: u32) -> RgbImage {
        RgbImage::from_fn(w, h, |x, y| {
            image::Rgb(std::array::from_fn(|c| ((x * 37 + y * 91 + c as u32 * 53 + (x * y) % 7 * 29) % 256) as u8))
        })
    }

    #[test]
    fn matches_torch_where_pillow_rounds_otherwise() {
        // 8 × 3 → 3 × 3: Pillow's 22-bit weights give 141 where torch's int16 ones give 140.
        let torch = [
            33, 86, 145, 136, 186, 194, 143, 94, 80, 146, 133, 89, 113, 118, 122, 166, 122, 109, 104, 141, 117, 152, 118, 140, 125, 184, 88,
        ];
        assert_eq!(resize_like_torch_bicubic(&pattern(8, 3), 3, 3).as_raw().as_slice(), torch);
        let pillow = crate::pil_resize::resize_like_pil(&pattern(8, 3), 3, 3, crate::pil_resize::PilFilter::Bicubic);
        assert_eq!(pillow.as_raw()[23], 141);
        // Both axes, shrinking: 11 × 7 → 4 × 3.
        let torch = [
            96, 117, 116, 133, 147, 150, 138, 124, 91, 111, 110, 135, 91, 126, 142, 135, 115, 120, 120, 134, 125, 116, 122, 135, 143, 122,
            143, 81, 76, 134, 138, 104, 107, 96, 111, 156,
        ];
        assert_eq!(resize_like_torch_bicubic(&pattern(11, 7), 4, 3).as_raw().as_slice(), torch);
    }

    #[test]
    fn a_flat_image_stays_flat() {
        let image = RgbImage::from_pixel(37, 23, image::Rgb([200, 17, 96]));
        let out = resize_like_torch_bicubic(&image, 16, 48);
        assert!(out.pixels().all(|p| p.0 == [200, 17, 96]));
        assert_eq!(resize_like_torch_bicubic(&image, 37, 23), image);
    }
}
