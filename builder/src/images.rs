//! Recipe images: the cards of `domain::recipes::card` drawn to PNG, and a content photo checked.
//!
//! resvg draws the SVG with fonts compiled into the builder (`builder/fonts/`, see its README), so a
//! card is the same on every machine and the build reads no system font. The font database is
//! parsed once per process and shared by every thread.

use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result};
use domain::recipes::card::{self, Ratio};
use domain::recipes::recipe::Published;
use resvg::{tiny_skia, usvg};

const FONTS: [&[u8]; 5] = [
    include_bytes!("../fonts/NotoSans-Regular.ttf"),
    include_bytes!("../fonts/NotoSans-Bold.ttf"),
    include_bytes!("../fonts/NotoSansHebrew-Regular.ttf"),
    include_bytes!("../fonts/NotoSansHebrew-Bold.ttf"),
    include_bytes!("../fonts/TwemojiMozilla.ttf"),
];

fn fonts() -> Arc<usvg::fontdb::Database> {
    static FONT_DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    FONT_DB
        .get_or_init(|| {
            let mut db = usvg::fontdb::Database::new();
            for font in FONTS {
                db.load_font_data(font.to_vec());
            }
            db.set_sans_serif_family("Noto Sans");
            Arc::new(db)
        })
        .clone()
}

/// The card of `published` in `ratio`, as PNG bytes.
pub fn card_png(published: &Published, ratio: Ratio) -> Result<Vec<u8>> {
    render_png(&card::svg(published, ratio))
}

/// Draws an SVG document at its own size.
pub fn render_png(svg: &str) -> Result<Vec<u8>> {
    let options = usvg::Options { fontdb: fonts(), ..usvg::Options::default() };
    let tree = usvg::Tree::from_str(svg, &options).context("parsing a card's SVG")?;
    let size = tree.size().to_int_size();
    let mut pixmap =
        tiny_skia::Pixmap::new(size.width(), size.height()).context("a card has a non-zero size")?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    encode_opaque_png(&pixmap)
}

/// A pixmap as an RGB PNG: cards are opaque, so the alpha channel would be a quarter of the bytes
/// for nothing (premultiplied colour equals plain colour at full opacity).
fn encode_opaque_png(pixmap: &tiny_skia::Pixmap) -> Result<Vec<u8>> {
    let rgb: Vec<u8> = pixmap.data().chunks_exact(4).flat_map(|px| [px[0], px[1], px[2]]).collect();
    let mut bytes = Vec::with_capacity(rgb.len() / 8);
    let mut encoder = png::Encoder::new(&mut bytes, pixmap.width(), pixmap.height());
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    let mut writer = encoder.write_header().context("encoding a card as PNG")?;
    writer.write_image_data(&rgb).context("encoding a card as PNG")?;
    writer.finish().context("encoding a card as PNG")?;
    Ok(bytes)
}

/// What is wrong with a photo's bytes, if anything: it must be the image its extension says, and big
/// enough for Google's rich results (at least 50,000 pixels).
pub fn photo_problem(bytes: &[u8], extension: &str) -> Option<String> {
    let expected = match extension {
        "jpg" | "jpeg" => imagesize::ImageType::Jpeg,
        "png" => imagesize::ImageType::Png,
        _ => imagesize::ImageType::Webp,
    };
    match (imagesize::image_type(bytes), imagesize::blob_size(bytes)) {
        (Ok(found), _) if found != expected => Some(format!("is not a .{extension} image")),
        (Ok(_), Ok(size)) if (size.width as u64) * (size.height as u64) < MIN_PIXELS => Some(format!(
            "is {}×{} pixels; an image needs at least {MIN_PIXELS} pixels (such as 320×180)",
            size.width, size.height
        )),
        (Ok(_), Ok(_)) => None,
        _ => Some("is not an image the builder can read".to_string()),
    }
}

/// Google's floor for a rich result's image.
const MIN_PIXELS: u64 = 50_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_draw_at_their_size_with_every_font_found() {
        let db = fonts();
        for family in ["Noto Sans", "Noto Sans Hebrew", card::EMOJI_FONT] {
            assert!(
                db.faces().any(|face| face.families.iter().any(|(name, _)| name == family)),
                "{family} is not among the compiled-in fonts"
            );
        }
        let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="48" height="27"><rect width="48" height="27" fill="#f00"/></svg>"##;
        let png = render_png(svg).unwrap();
        let size = imagesize::blob_size(&png).unwrap();
        assert_eq!((size.width, size.height), (48, 27));
    }
}
