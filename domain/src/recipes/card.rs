//! The picture of a recipe that has no photo: a card with its emoji, title and key facts, as SVG.
//!
//! Google's Recipe rich results take an image in any of three aspect ratios (16:9, 4:3, 1:1), and link
//! previews want one for `og:image`. The builder rasterises the 16:9 card to PNG
//! (`builder/src/images.rs`, with fonts it compiles in) layer by layer, so the template is pure text
//! here and the same for every caller. The
//! card shows the recipe in the language its page opens with (English when it has it), with Hebrew
//! right-aligned, and credits the emoji art (Twemoji, CC BY 4.0) in its corner.

use crate::recipes::recipe::{Course, Lang, Published};

/// One of the three shapes Google asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ratio {
    Wide,
    Standard,
    Square,
}

impl Ratio {
    pub const ALL: [Ratio; 3] = [Ratio::Wide, Ratio::Standard, Ratio::Square];

    /// The name in the file name: `16x9`, `4x3`, `1x1`.
    pub fn code(self) -> &'static str {
        match self {
            Ratio::Wide => "16x9",
            Ratio::Standard => "4x3",
            Ratio::Square => "1x1",
        }
    }

    /// Width and height in pixels: each well above Google's 50,000-pixel floor, and small, since a
    /// build draws the 16:9 card of every recipe (BENCHMARKS.md, "Builds").
    pub fn size(self) -> (u32, u32) {
        match self {
            Ratio::Wide => (384, 216),
            Ratio::Standard => (332, 249),
            Ratio::Square => (288, 288),
        }
    }
}

/// The one ratio the build draws, as PNG: what link previews (`og:image`) and Google's Recipe results
/// (one image of at least 50,000 pixels) need. A PNG of every ratio would triple a build's drawing
/// and the cards' share of R2 (BENCHMARKS.md); the other two are the Worker's SVG, and their PNG
/// addresses redirect there.
pub const DRAWN: Ratio = Ratio::Wide;

/// The cards a page lists, in `format`: the drawn one as PNG, or every ratio as SVG.
pub fn ratios(format: Format) -> &'static [Ratio] {
    match format {
        Format::Png => &[DRAWN],
        Format::Svg => &Ratio::ALL,
    }
}

/// Where the card of `slug` in `ratio` is published, relative to the site root: the PNG the build
/// drew, or (`Format::Svg`) the SVG the Worker draws for a recipe written since the last build.
pub fn path(slug: &str, ratio: Ratio, format: Format) -> String {
    let ext = match format {
        Format::Png => "png",
        Format::Svg => "svg",
    };
    format!("r/{slug}.{}.{ext}", ratio.code())
}

/// How a card is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Drawn by the build.
    Png,
    /// This template as it stands, for a recipe the build has not drawn yet (the D1 overlay).
    Svg,
}

/// The slug and ratio a card file name (`<slug>.<ratio>.svg`) names, if it names one.
pub fn parse_svg_name(name: &str) -> Option<(&str, Ratio)> {
    parse_name(name.strip_suffix(".svg")?)
}

/// The slug and ratio a card's name without its extension (`<slug>.<ratio>`) names, if it names one.
pub fn parse_name(name: &str) -> Option<(&str, Ratio)> {
    let (rest, ratio) = name.rsplit_once('.')?;
    let ratio = Ratio::ALL.into_iter().find(|r| r.code() == ratio)?;
    crate::recipes::slug::is_valid(rest).then_some((rest, ratio))
}

/// Where a card the build does not draw as PNG, named without its extension (`<slug>.4x3`,
/// `<slug>.1x1`), is served instead: its SVG's address. `None` for the drawn one, which is a built
/// file, and for a name that is no card (a built file, if anything).
pub fn undrawn(name: &str) -> Option<String> {
    let (slug, ratio) = parse_name(name)?;
    (ratio != DRAWN).then(|| format!("/{}", path(slug, ratio, Format::Svg)))
}

/// The font families the card names; the builder loads exactly these.
pub const TEXT_FONTS: &str = "Noto Sans, Noto Sans Hebrew";
pub const EMOJI_FONT: &str = "Twemoji Mozilla";

/// The credit for the emoji art, which is CC BY 4.0: in full where there is room (the page's
/// JSON-LD), and short in the card's corner.
pub const EMOJI_CREDIT: &str = "Emoji art: Twemoji, © Twitter, Inc. and contributors, CC BY 4.0";
const CARD_CREDIT: &str = "Commonplace · emoji: Twemoji, CC BY 4.0";

/// What the drawn card of a recipe depends on, as one number: equal keys draw equal cards, so a build
/// can keep the card it drew before (the first 8 bytes of the SHA-256 of its SVG).
pub fn key(published: &Published) -> u64 {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(svg(published, DRAWN).as_bytes());
    u64::from_be_bytes(digest[..8].try_into().expect("a SHA-256 has 32 bytes"))
}

/// The card of a recipe in one ratio, as an SVG document: its [`layers`], each a nested `<svg>` at
/// its place.
pub fn svg(published: &Published, ratio: Ratio) -> String {
    let (width, height) = ratio.size();
    let mut doc = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="{TEXT_FONTS}">"#
    );
    for layer in layers(published, ratio) {
        doc.push_str(&format!(
            "\n<svg x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\">{}</svg>",
            layer.x, layer.y, layer.width, layer.height, layer.body
        ));
    }
    doc.push_str("\n</svg>\n");
    doc
}

/// One layer of a card: SVG elements in a box at whole pixels, so a layer drawn alone lands on the
/// same pixels as in the whole card. The builder draws a layer many cards share once and copies it
/// into each (`builder/src/images.rs`); only the title is drawn for every card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
    /// What else the layer's look depends on besides `body` is its size: equal documents draw equal
    /// pixels.
    pub body: String,
    /// Whether cards of other recipes may have this same layer (all but the title).
    pub shared: bool,
}

impl Layer {
    /// The layer alone, as an SVG document of its own size.
    pub fn document(&self) -> String {
        format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{TEXT_FONTS}">{body}</svg>"#,
            w = self.width,
            h = self.height,
            body = self.body,
        )
    }
}

/// A card's layers, bottom first: the background with its panel and credit (one per ratio and
/// course), the emoji, the title, the facts and the diet badges.
pub fn layers(published: &Published, ratio: Ratio) -> Vec<Layer> {
    let recipe = &published.recipe;
    let (lang, text) = recipe.text_for(Lang::En);
    let (width, height) = ratio.size();
    let (w, h) = (width as f32, height as f32);
    let (background, ink) = colours(recipe.course);
    let margin = (w.min(h) * 0.07).round();
    let facts = facts_line(published, lang);
    // Wide cards put the emoji beside the text; the square one stacks them.
    let side = ratio != Ratio::Square;
    let (emoji_size, emoji_x, emoji_y) =
        if side { (h * 0.42, margin + h * 0.24, h * 0.5) } else { (h * 0.3, w / 2.0, margin + h * 0.18) };
    let text_left = if side { margin + h * 0.5 } else { margin };
    let text_width = w - text_left - margin;
    let title_size = (h * if side { 0.11 } else { 0.085 }).round();
    let lines = wrap(text.title.split_whitespace(), " ", text_width, title_size, BOLD_EM, 3);
    let small = (h * 0.05).round().max(11.0);
    let flags: Vec<&str> = recipe.flags().map(|flag| crate::recipes::recipe::flag_word(lang, flag)).collect();
    let badges = wrap(flags.iter().copied(), " · ", text_width, small, REGULAR_EM, 2);
    let line_height = title_size * 1.2;
    let badge_lines = badges.len().max(1) as f32;
    let block = lines.len() as f32 * line_height + small * (1.8 + 1.4 * badge_lines);
    let top = if side { (h - block) / 2.0 + title_size } else { h * 0.42 + title_size };
    let rtl = lang.is_rtl();
    let (anchor, x) = match (side, rtl) {
        (false, _) => ("middle", w / 2.0),
        (true, false) => ("start", text_left),
        (true, true) => ("end", w - margin),
    };
    let direction = if rtl { "rtl" } else { "ltr" };
    // resvg lays a line out left to right unless its first character says otherwise: a right-to-left
    // mark makes a Hebrew line an RTL paragraph, so `25 דק׳` keeps its number on the right.
    let mark = if rtl { "\u{200F}" } else { "" };
    // The text layers span the card's width and the lines' height, with room for ascenders and
    // descenders: a line at baseline `y` of size `size` inks from about y - size to y + size / 3.
    let text_layer = |baselines: &[f32], size: f32, attributes: &str, texts: &[String], shared: bool| {
        let y0 = (baselines[0] - size * 1.1).floor().max(0.0);
        let y1 = (baselines[baselines.len() - 1] + size * 0.45).ceil().min(h);
        let mut body = String::new();
        for (baseline, line) in baselines.iter().zip(texts) {
            body.push_str(&format!(
                r#"<text x="{x}" y="{y:.1}" font-size="{size}" {attributes} text-anchor="{anchor}" direction="{direction}" fill="{ink}">{mark}{line}</text>"#,
                y = baseline - y0,
                line = escape(line),
            ));
        }
        Layer { x: 0, y: y0 as u32, width, height: (y1 - y0) as u32, body, shared }
    };
    let emoji_box = (emoji_size * 1.3).ceil();
    let (emoji_x0, emoji_y0) = ((emoji_x - emoji_box / 2.0).floor(), (emoji_y - emoji_box / 2.0).floor());
    let credit_size = (small * 0.62).round().max(7.0);
    let mut layers = vec![
        Layer {
            x: 0,
            y: 0,
            width,
            height,
            body: format!(
                r##"<rect width="{width}" height="{height}" fill="{background}"/><rect x="{inset}" y="{inset}" width="{inner_w}" height="{inner_h}" rx="{inset}" fill="#ffffff" fill-opacity="0.55"/><text x="{credit_x}" y="{credit_y}" font-size="{credit_size}" text-anchor="end" fill="{ink}" fill-opacity="0.6">{credit}</text>"##,
                inset = margin / 2.0,
                inner_w = w - margin,
                inner_h = h - margin,
                credit_x = w - margin * 0.7,
                credit_y = h - margin * 0.7,
                credit = escape(CARD_CREDIT),
            ),
            shared: true,
        },
        Layer {
            x: emoji_x0 as u32,
            y: emoji_y0 as u32,
            width: emoji_box as u32,
            height: emoji_box as u32,
            body: format!(
                r#"<text x="{x:.1}" y="{y:.1}" font-family="{EMOJI_FONT}" font-size="{emoji_size:.1}" text-anchor="middle" dominant-baseline="central">{emoji}</text>"#,
                x = emoji_x - emoji_x0,
                y = emoji_y - emoji_y0,
                emoji = escape(&recipe.emoji),
            ),
            shared: true,
        },
    ];
    let title_baselines: Vec<f32> = (0..lines.len()).map(|n| top + n as f32 * line_height).collect();
    layers.push(text_layer(&title_baselines, title_size, r#"font-weight="bold""#, &lines, false));
    let facts_y = top + (lines.len() as f32 - 1.0) * line_height + small * 2.0;
    layers.push(text_layer(&[facts_y], small, "", &[facts], true));
    if !badges.is_empty() {
        let badge_baselines: Vec<f32> =
            (0..badges.len()).map(|n| facts_y + small * 1.4 * (n + 1) as f32).collect();
        layers.push(text_layer(&badge_baselines, small, r#"fill-opacity="0.8""#, &badges, true));
    }
    layers
}

/// A soft background and a dark ink per course, so a page of cards reads by colour.
fn colours(course: Course) -> (&'static str, &'static str) {
    match course {
        Course::Breakfast => ("#ffe8b0", "#4a3400"),
        Course::Starter => ("#d9f2d0", "#1f3d12"),
        Course::Soup => ("#ffd9c2", "#4d2008"),
        Course::Salad => ("#cdeec4", "#1c3a10"),
        Course::Main => ("#f6cfc9", "#4a1710"),
        Course::Side => ("#e4e9c0", "#33380a"),
        Course::Dessert => ("#f4d3ea", "#4a1238"),
        Course::Baking => ("#f1dfc4", "#43300f"),
        Course::Snack => ("#fde2b8", "#4a2e00"),
        Course::Drink => ("#cfe6f7", "#0f2f4a"),
        Course::Sauce => ("#f7d4c4", "#4a1c0a"),
        Course::Basics => ("#e2e2e2", "#262626"),
    }
}

/// Total time, servings and difficulty in the card's language.
fn facts_line(published: &Published, lang: Lang) -> String {
    let recipe = &published.recipe;
    let total = recipe.total_min();
    let difficulty = crate::recipes::recipe::difficulty_word(lang, recipe.difficulty);
    match lang {
        Lang::En => format!("{total} min · serves {} · {difficulty}", recipe.servings),
        Lang::He => format!("{total} דק׳ · {} מנות · {difficulty}", recipe.servings),
        Lang::Pt => format!("{total} min · {} doses · {difficulty}", recipe.servings),
    }
}

/// The average advance of a character, in ems, of Noto Sans Bold and Regular: widths are estimated
/// from it, which is close enough to keep text inside the card.
const BOLD_EM: f32 = 0.56;
const REGULAR_EM: f32 = 0.55;

/// Joins `items` with `separator` into at most `max_lines` lines that fit `width` at `font_size`
/// (`em`: the font's average advance), ending with an ellipsis when they do not fit.
fn wrap<'a>(
    items: impl Iterator<Item = &'a str>,
    separator: &str,
    width: f32,
    font_size: f32,
    em: f32,
    max_lines: usize,
) -> Vec<String> {
    let max_chars = ((width / (font_size * em)) as usize).max(4);
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for item in items {
        let candidate =
            if current.is_empty() { item.to_string() } else { format!("{current}{separator}{item}") };
        if candidate.chars().count() <= max_chars || current.is_empty() {
            current = candidate;
        } else {
            lines.push(std::mem::take(&mut current));
            current = item.to_string();
        }
    }
    if !current.is_empty() {
        lines.push(current);
    }
    if lines.len() > max_lines {
        lines.truncate(max_lines);
        let last = &mut lines[max_lines - 1];
        let kept: String = last.chars().take(max_chars.saturating_sub(1)).collect();
        *last = format!("{}…", kept.trim_end());
    }
    for line in &mut lines {
        if line.chars().count() > max_chars {
            *line = format!("{}…", line.chars().take(max_chars - 1).collect::<String>());
        }
    }
    lines
}

/// Text inside SVG markup.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recipes::recipe::{Source, validate};
    use serde_json::json;

    fn published(title_en: Option<&str>) -> Published {
        let mut texts = json!({
            "he": {"title": "מרק עגבניות", "summary": "חם.", "ingredients": [{"q": 1, "u": "ליטר", "i": "מים"}],
                   "steps": [{"t": "מבשלים."}]}
        });
        if let Some(title) = title_en {
            texts["en"] = json!({"title": title, "summary": "Warm.", "ingredients": [{"q": 1, "u": "l", "i": "water"}],
                                 "steps": [{"t": "Simmer."}]});
        }
        let doc = json!({
            "emoji": "🍅", "course": "soup", "difficulty": 1, "prep_min": 5, "cook_min": 20, "servings": 2,
            "gf": 1, "vegan": 1, "vegetarian": 1, "dairy_free": 1, "nut_free": 0, "texts": texts,
        });
        let (recipe, server) = validate(&doc, Source::ContentFile).unwrap();
        Published { slug: "tomato-soup".into(), recipe, server }
    }

    #[test]
    fn every_ratio_is_the_shape_google_asks_for_and_big_enough() {
        for ratio in Ratio::ALL {
            let (w, h) = ratio.size();
            assert!(w * h >= 50_000, "{ratio:?}");
            let (rw, rh) = match ratio {
                Ratio::Wide => (16, 9),
                Ratio::Standard => (4, 3),
                Ratio::Square => (1, 1),
            };
            assert_eq!(w * rh, h * rw, "{ratio:?}");
        }
    }

    #[test]
    fn a_card_shows_the_emoji_title_facts_and_credit_escaped() {
        let card = svg(&published(Some("Tomato & <Basil> Soup")), Ratio::Wide);
        assert!(card.contains(">🍅</text>"));
        assert!(card.contains("Tomato &amp;") && card.contains("&lt;Basil&gt;"), "{card}");
        assert!(!card.contains("<Basil>"));
        assert!(card.contains("25 min · serves 2 · easy"));
        assert!(card.contains(">gluten-free · vegan · vegetarian</text>"), "{card}");
        assert!(card.contains(">dairy-free</text>"), "badges too long for one line take two: {card}");
        assert!(card.contains("Twemoji"));
    }

    #[test]
    fn a_hebrew_only_card_reads_right_to_left() {
        let card = svg(&published(None), Ratio::Standard);
        let title = "text-anchor=\"end\" direction=\"rtl\" fill=\"#4d2008\">\u{200F}מרק עגבניות</text>";
        assert!(card.contains(title), "{card}");
        assert!(card.contains("25 דק׳ · 2 מנות · קל"));
    }

    #[test]
    fn svg_card_names_give_their_slug_and_ratio() {
        assert_eq!(parse_svg_name("tomato-soup.4x3.svg"), Some(("tomato-soup", Ratio::Standard)));
        assert_eq!(path("tomato-soup", Ratio::Square, Format::Svg), "r/tomato-soup.1x1.svg");
        for bad in ["tomato-soup.svg", "tomato-soup.2x1.svg", "Tomato.4x3.svg", "tomato-soup.4x3.png"] {
            assert_eq!(parse_svg_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn only_the_undrawn_ratios_move_to_their_svg() {
        assert_eq!(undrawn("tomato-soup.1x1").as_deref(), Some("/r/tomato-soup.1x1.svg"));
        assert_eq!(undrawn("tomato-soup.4x3").as_deref(), Some("/r/tomato-soup.4x3.svg"));
        assert_eq!(undrawn(&format!("tomato-soup.{}", DRAWN.code())), None, "the drawn one is a built file");
        assert_eq!(undrawn("tomato-soup"), None);
    }

    #[test]
    fn every_layer_fits_inside_its_card() {
        for ratio in Ratio::ALL {
            let (width, height) = ratio.size();
            for layer in
                layers(&published(Some("A title long enough to take all three lines of the card")), ratio)
            {
                assert!(
                    layer.x + layer.width <= width && layer.y + layer.height <= height,
                    "{ratio:?} {layer:?}"
                );
            }
        }
    }

    #[test]
    fn long_titles_wrap_into_three_lines_at_most() {
        let text = "one two three four five six seven eight nine ten eleven twelve";
        let lines = wrap(text.split_whitespace(), " ", 100.0, 20.0, BOLD_EM, 3);
        assert_eq!(lines.len(), 3);
        assert!(lines[2].ends_with('…'));
        assert!(lines.iter().all(|line| line.chars().count() <= 8), "{lines:?}");
    }
}
