//! What happens to a capture's pixels: the blank check, downscaling for the model, choosing
//! PNG or JPEG by content, and thumbnails. All synchronous and CPU-bound: callers run them on
//! a blocking thread, never on the async runtime.

use std::collections::HashSet;

use image::codecs::jpeg::JpegEncoder;
use image::codecs::png::{CompressionType, FilterType as PngFilter, PngEncoder};
use image::imageops::FilterType;
use image::{ExtendedColorType, ImageEncoder, RgbaImage};

/// How the model's copy is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, specta::Type)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Png,
    Jpeg,
}

impl Format {
    pub fn mime(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
        }
    }
    pub fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Jpeg => "jpg",
        }
    }
}

/// The longest edge of a chip's thumbnail, in pixels (twice its displayed size, for HiDPI).
pub const THUMBNAIL_EDGE: u32 = 160;

/// True when every pixel is black or nearly so: what a denied permission, a portal that gave
/// nothing, or a DRM-protected screen produce.
pub fn is_blank(image: &RgbaImage) -> bool {
    image.as_raw().chunks_exact(4).all(|p| p[0] <= 4 && p[1] <= 4 && p[2] <= 4)
}

/// The image scaled so its longest edge is at most `max_edge`, or None when it already fits.
pub fn downscale(image: &RgbaImage, max_edge: u32) -> Option<RgbaImage> {
    let (w, h) = image.dimensions();
    let (nw, nh) = fit(w, h, max_edge)?;
    // Triangle (bilinear) keeps small text legible at a fraction of Lanczos' cost.
    Some(image::imageops::resize(image, nw, nh, FilterType::Triangle))
}

/// The size that fits `max_edge`, keeping the aspect ratio; None when no scaling is needed.
pub fn fit(width: u32, height: u32, max_edge: u32) -> Option<(u32, u32)> {
    let longest = width.max(height);
    if max_edge == 0 || longest <= max_edge {
        return None;
    }
    let scale = f64::from(max_edge) / f64::from(longest);
    let side = |v: u32| ((f64::from(v) * scale).round() as u32).max(1);
    Some((side(width), side(height)))
}

/// PNG for screens of text and flat colour (sharp, small), JPEG for photographic content
/// (where PNG is several times larger). Decided from the share of distinct colours on a grid
/// of at most 16k samples.
pub fn choose_format(image: &RgbaImage) -> Format {
    let (w, h) = image.dimensions();
    if w == 0 || h == 0 {
        return Format::Png;
    }
    let step = ((u64::from(w) * u64::from(h) / 16_384).isqrt() as u32).max(1);
    let mut colours = HashSet::new();
    let mut samples = 0u32;
    for y in (0..h).step_by(step as usize) {
        for x in (0..w).step_by(step as usize) {
            let p = image.get_pixel(x, y).0;
            colours.insert([p[0], p[1], p[2]]);
            samples += 1;
        }
    }
    if colours.len() as f64 / f64::from(samples) > 0.30 { Format::Jpeg } else { Format::Png }
}

/// Encodes without alpha (captures are opaque). PNG uses fast compression: a capture waits
/// for this before its chip appears.
pub fn encode(image: &RgbaImage, format: Format, jpeg_quality: u8) -> Result<Vec<u8>, image::ImageError> {
    let rgb = rgb_bytes(image);
    let (w, h) = image.dimensions();
    let mut out = Vec::with_capacity(rgb.len() / 4);
    match format {
        Format::Png => PngEncoder::new_with_quality(&mut out, CompressionType::Fast, PngFilter::Adaptive)
            .write_image(&rgb, w, h, ExtendedColorType::Rgb8)?,
        Format::Jpeg => JpegEncoder::new_with_quality(&mut out, jpeg_quality.clamp(1, 100)).write_image(
            &rgb,
            w,
            h,
            ExtendedColorType::Rgb8,
        )?,
    }
    Ok(out)
}

/// A small JPEG for the chip.
pub fn thumbnail(image: &RgbaImage) -> Result<Vec<u8>, image::ImageError> {
    let small = match fit(image.width(), image.height(), THUMBNAIL_EDGE) {
        Some((w, h)) => image::imageops::thumbnail(image, w, h),
        None => image.clone(),
    };
    encode(&small, Format::Jpeg, 80)
}

fn rgb_bytes(image: &RgbaImage) -> Vec<u8> {
    let mut out = Vec::with_capacity(image.as_raw().len() / 4 * 3);
    for p in image.as_raw().chunks_exact(4) {
        out.extend_from_slice(&p[..3]);
    }
    out
}

#[cfg(test)]
mod tests {
    use image::Rgba;

    use super::*;

    /// A screen-like image: flat panels with a few lines of "text".
    fn screen_like(w: u32, h: u32) -> RgbaImage {
        RgbaImage::from_fn(w, h, |x, y| {
            if y % 20 < 2 && x % 7 < 4 {
                Rgba([20, 20, 20, 255])
            } else if x < w / 4 {
                Rgba([240, 240, 245, 255])
            } else {
                Rgba([255, 255, 255, 255])
            }
        })
    }

    /// A photo-like image: smooth gradients with noise, almost every pixel its own colour.
    fn photo_like(w: u32, h: u32) -> RgbaImage {
        let mut seed = 0x2545_f491_u32;
        RgbaImage::from_fn(w, h, |x, y| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let noise = (seed % 24) as u8;
            Rgba([(x % 200) as u8 + noise, (y % 200) as u8 + noise, ((x + y) % 200) as u8 + noise, 255])
        })
    }

    #[test]
    fn fitting_keeps_the_aspect_ratio_and_leaves_small_images_alone() {
        assert_eq!(fit(3840, 2160, 1568), Some((1568, 882)));
        assert_eq!(fit(1080, 1920, 1568), Some((882, 1568)));
        assert_eq!(fit(1568, 1000, 1568), None);
        assert_eq!(fit(800, 600, 1568), None);
        assert_eq!(fit(100_000, 1, 1568), Some((1568, 1)));
        assert_eq!(fit(800, 600, 0), None, "0 means no limit");
    }

    #[test]
    fn downscaling_averages_instead_of_dropping_pixels() {
        // One-pixel black and white stripes become mid grey, not all black or all white.
        let stripes = RgbaImage::from_fn(400, 10, |x, _| {
            if x % 2 == 0 { Rgba([0, 0, 0, 255]) } else { Rgba([255, 255, 255, 255]) }
        });
        let small = downscale(&stripes, 100).unwrap();
        assert_eq!(small.dimensions(), (100, 3));
        let grey = small.get_pixel(50, 1).0[0];
        assert!((96..=160).contains(&grey), "got {grey}");
        assert!(downscale(&stripes, 400).is_none());
    }

    #[test]
    fn screens_become_png_and_photos_jpeg() {
        assert_eq!(choose_format(&screen_like(1280, 800)), Format::Png);
        assert_eq!(choose_format(&photo_like(1280, 800)), Format::Jpeg);
        assert_eq!(choose_format(&RgbaImage::new(0, 0)), Format::Png);
    }

    #[test]
    fn encodings_decode_back_to_the_same_picture() {
        let screen = screen_like(320, 200);
        let png = encode(&screen, Format::Png, 85).unwrap();
        let back = image::load_from_memory(&png).unwrap().to_rgba8();
        assert_eq!(back, screen, "PNG is lossless");

        let photo = photo_like(320, 200);
        let jpg = encode(&photo, Format::Jpeg, 85).unwrap();
        assert_eq!(&jpg[..3], &[0xFF, 0xD8, 0xFF]);
        let back = image::load_from_memory(&jpg).unwrap().to_rgba8();
        assert_eq!(back.dimensions(), (320, 200));
        let diff: u64 =
            back.as_raw().iter().zip(photo.as_raw()).map(|(a, b)| u64::from(a.abs_diff(*b))).sum::<u64>()
                / back.as_raw().len() as u64;
        assert!(diff < 12, "mean error {diff}");
        assert!(jpg.len() < encode(&photo, Format::Png, 85).unwrap().len());
    }

    #[test]
    fn thumbnails_are_small_jpegs_and_blank_screens_are_recognised() {
        let thumb = thumbnail(&screen_like(3840, 2160)).unwrap();
        let decoded = image::load_from_memory(&thumb).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (160, 90));
        assert!(is_blank(&RgbaImage::from_pixel(64, 64, Rgba([2, 0, 3, 255]))));
        let mut almost = RgbaImage::new(64, 64);
        almost.put_pixel(63, 63, Rgba([200, 0, 0, 255]));
        assert!(!is_blank(&almost));
    }
}
