//! Recipe images: the cards of `domain::recipes::card` drawn to PNG, and a content photo checked.
//!
//! resvg draws a card's layers (`card::layers`) with fonts compiled into the builder (`builder/fonts/`,
//! see its README), so a card is the same on every machine and the build reads no system font. The
//! font database is parsed once per process and shared by every thread, and so are the layers many
//! cards share: each is drawn once and copied, and only the title is drawn per card.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use anyhow::{Context, Result};
use domain::recipes::card::{self, Ratio};
use domain::recipes::recipe::Published;
use resvg::{tiny_skia, usvg};
use rustc_hash::FxHashMap;

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

/// The card of `published` in `ratio`, as PNG bytes: its shared layers copied from where they were
/// first drawn, its title drawn onto them. The canvas starts as a copy of the background, the first
/// layer, which covers the whole card.
pub fn card_png(published: &Published, ratio: Ratio) -> Result<Vec<u8>> {
    let layers = card::layers(published, ratio);
    let (background, rest) = layers.split_first().context("a card has a background")?;
    let mut canvas = (*shared_layer(background)?).clone();
    anyhow::ensure!(
        (background.x, background.y, canvas.width(), canvas.height())
            == (0, 0, ratio.size().0, ratio.size().1),
        "a card's first layer is its background, as large as the card"
    );
    for layer in rest {
        if layer.shared {
            let drawn = shared_layer(layer)?;
            over(&mut canvas, &drawn, layer.x as usize, layer.y as usize);
        } else {
            let tree = parse(&layer.document())?;
            let at = tiny_skia::Transform::from_translate(layer.x as f32, layer.y as f32);
            resvg::render(&tree, at, &mut canvas.as_mut());
        }
    }
    encode_opaque_png(&canvas)
}

/// Lays premultiplied `layer` over `canvas` at (`x`, `y`) ("source over"), pixel by pixel: tiny-skia's
/// `draw_pixmap` takes a general path for it that cost more than drawing the title. Most of a text
/// layer is transparent and most of the rest opaque, so those two are tested first.
fn over(canvas: &mut tiny_skia::Pixmap, layer: &tiny_skia::Pixmap, x: usize, y: usize) {
    let (canvas_width, layer_width) = (canvas.width() as usize, layer.width() as usize);
    let target = canvas.data_mut();
    for (row, source) in layer.data().chunks_exact(layer_width * 4).enumerate() {
        let start = ((y + row) * canvas_width + x) * 4;
        for (dst, src) in target[start..start + source.len()].chunks_exact_mut(4).zip(source.chunks_exact(4))
        {
            match src[3] {
                0 => {}
                255 => dst.copy_from_slice(src),
                alpha => {
                    let keep = 255 - alpha as u32;
                    for (d, s) in dst.iter_mut().zip(src) {
                        *d = (*s as u32 + (*d as u32 * keep + 127) / 255) as u8;
                    }
                }
            }
        }
    }
}

/// Layers drawn so far, by their SVG document, and the bytes of their pixels. Thousands of cards
/// share a background or an emoji, and hundreds a facts line; copying one costs a hundredth of
/// drawing it.
type Drawn = Mutex<(HashMap<String, Arc<tiny_skia::Pixmap>>, usize)>;

/// The pixels kept, at most. 100,000 generated recipes share some 2,700 layers of about 35 KB; a
/// count of 1,024 layers kept only the first ones seen, and drew one shared layer in nine again.
/// Past the budget a layer is drawn each time it is needed, which draws the same pixels.
const MAX_DRAWN_BYTES: usize = 256 << 20;

/// A shared layer drawn alone on a transparent pixmap of its size: always so, kept or not, so a card
/// does not depend on which cards were drawn before it.
fn shared_layer(layer: &card::Layer) -> Result<Arc<tiny_skia::Pixmap>> {
    static DRAWN: OnceLock<Drawn> = OnceLock::new();
    let drawn = DRAWN.get_or_init(Drawn::default);
    let document = layer.document();
    if let Some(pixmap) = drawn.lock().expect("no thread panics holding it").0.get(&document) {
        return Ok(pixmap.clone());
    }
    let pixmap = Arc::new(draw(&parse(&document)?)?);
    let (layers, bytes) = &mut *drawn.lock().expect("no thread panics holding it");
    // Another thread may have drawn the same layer meanwhile: its pixels count once.
    if *bytes + pixmap.data().len() <= MAX_DRAWN_BYTES && layers.insert(document, pixmap.clone()).is_none() {
        *bytes += pixmap.data().len();
    }
    Ok(pixmap)
}

fn parse(svg: &str) -> Result<usvg::Tree> {
    let options = usvg::Options { fontdb: fonts(), ..usvg::Options::default() };
    usvg::Tree::from_str(svg, &options).context("parsing a card's SVG")
}

/// Draws an SVG tree at its own size on a transparent pixmap.
fn draw(tree: &usvg::Tree) -> Result<tiny_skia::Pixmap> {
    let size = tree.size().to_int_size();
    let mut pixmap =
        tiny_skia::Pixmap::new(size.width(), size.height()).context("a card has a non-zero size")?;
    resvg::render(tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    Ok(pixmap)
}

/// An opaque pixmap as a palette PNG: a card is a few flat colours and their anti-aliased edges, so
/// one byte a pixel instead of three, and a third of the bytes to compress (BENCHMARKS.md). When it
/// has more than 256 colours, the rarest (edge pixels of the emoji) take the nearest of the 256
/// commonest. The alpha channel is left out: premultiplied colour equals plain colour at full opacity.
fn encode_opaque_png(pixmap: &tiny_skia::Pixmap) -> Result<Vec<u8>> {
    // Pixels come in runs of one colour, so a run is counted, and later looked up, once. A colour
    // is 0x00RRGGBB, so colours order as their bytes do.
    let mut runs: Vec<(u32, u32)> = Vec::with_capacity(4096);
    let mut counts: FxHashMap<u32, u32> = FxHashMap::default();
    // Every pixel is opaque, so pixels compare as their four bytes; a run's colour drops the alpha.
    let rgb = |pixel: u32| u32::from_be_bytes(pixel.to_ne_bytes()) >> 8;
    let mut pixels = pixmap.data().chunks_exact(4).map(|px| u32::from_ne_bytes([px[0], px[1], px[2], px[3]]));
    if let Some(first) = pixels.next() {
        let (mut pixel, mut len) = (first, 1u32);
        for next in pixels {
            if next == pixel {
                len += 1;
            } else {
                runs.push((rgb(pixel), len));
                *counts.entry(rgb(pixel)).or_default() += len;
                (pixel, len) = (next, 1);
            }
        }
        runs.push((rgb(pixel), len));
        *counts.entry(rgb(pixel)).or_default() += len;
    }
    let mut by_count: Vec<(u32, u32)> = counts.into_iter().collect();
    by_count.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let (palette, rare) = by_count.split_at(by_count.len().min(256));
    let mut index: FxHashMap<u32, u8> =
        palette.iter().enumerate().map(|(idx, (colour, _))| (*colour, idx as u8)).collect();
    let channels = |colour: u32| [(colour >> 16) as u8, (colour >> 8) as u8, colour as u8];
    for (colour, _) in rare {
        let distance = |other: u32| -> i32 {
            channels(*colour).iter().zip(channels(other)).map(|(a, b)| (*a as i32 - b as i32).pow(2)).sum()
        };
        let nearest = (0..palette.len()).min_by_key(|idx| distance(palette[*idx].0)).expect("a colour");
        index.insert(*colour, nearest as u8);
    }
    let mut indices = Vec::with_capacity(pixmap.data().len() / 4);
    for (colour, len) in runs {
        indices.extend(std::iter::repeat_n(index[&colour], len as usize));
    }
    let mut bytes = Vec::with_capacity(indices.len() / 8);
    let mut encoder = png::Encoder::new(&mut bytes, pixmap.width(), pixmap.height());
    encoder.set_color(png::ColorType::Indexed);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_palette(palette.iter().flat_map(|(colour, _)| channels(*colour)).collect::<Vec<u8>>());
    // A card's rows mostly repeat the row above, so the Up filter makes them runs of zeros, which
    // fdeflate's run-length coding takes at a tenth of zlib level 2's time for half again the bytes
    // (BENCHMARKS.md).
    encoder.set_filter(png::Filter::Up);
    encoder.set_deflate_compression(png::DeflateCompression::FdeflateUltraFast);
    let mut writer = encoder.write_header().context("encoding a card as PNG")?;
    writer.write_image_data(&indices).context("encoding a card as PNG")?;
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
        let png = encode_opaque_png(&draw(&parse(svg).unwrap()).unwrap()).unwrap();
        let size = imagesize::blob_size(&png).unwrap();
        assert_eq!((size.width, size.height), (48, 27));
    }
}
