//! Diet versions (gluten-free, vegan, both): which kind is asked for, the substitution table that
//! guides the AI's rewrite, and the rules that check the result.
//!
//! The rules read ingredient names only, word by word after folding (case, accents, niqqud), against
//! lexicons of gluten and animal products in en, he and pt. An ingredient that names a qualifier
//! ("gluten-free", "sem glúten", "ללא גלוטן"; "oat milk", "leite de coco", "חלב קוקוס") is exempt for
//! that rule. Steps are not read: "serve with bread (gluten-free if needed)" is advice, not an
//! ingredient. The rules are deliberately conservative: a false alarm only means a version is not
//! published, while a missed word would publish a wrong flag. We rejected trusting the model's own
//! flags; they are checked here and set from the rules.

use serde::{Deserialize, Serialize};

use crate::Diagnostic;
use crate::recipe::{Ingredient, Lang, Recipe};
use crate::text::words;

/// A diet version a key holder can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Gf,
    Vegan,
    Both,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Gf, Kind::Vegan, Kind::Both];

    pub fn code(self) -> &'static str {
        match self {
            Kind::Gf => "gf",
            Kind::Vegan => "vegan",
            Kind::Both => "both",
        }
    }

    pub fn parse(code: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.code() == code)
    }

    /// What the version's slug adds to the source's: `-gf`, `-vegan`, `-gf-vegan`.
    pub fn slug_suffix(self) -> &'static str {
        match self {
            Kind::Gf => "-gf",
            Kind::Vegan => "-vegan",
            Kind::Both => "-gf-vegan",
        }
    }

    pub fn needs_gf(self) -> bool {
        matches!(self, Kind::Gf | Kind::Both)
    }

    pub fn needs_vegan(self) -> bool {
        matches!(self, Kind::Vegan | Kind::Both)
    }

    /// In words, for prompts and notes.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::Gf => "gluten-free",
            Kind::Vegan => "vegan",
            Kind::Both => "gluten-free and vegan",
        }
    }
}

/// The slug a diet version of `source_slug` gets (before collision handling).
pub fn variant_slug(source_slug: &str, kind: Kind) -> String {
    let suffix = kind.slug_suffix();
    let stem = &source_slug[..source_slug.len().min(crate::slug::MAX_LEN - suffix.len())];
    format!("{}{suffix}", stem.trim_end_matches('-'))
}

/// Which rule an ingredient breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Gluten,
    /// A `check` ingredient (one that can hide gluten) not stated to be gluten-free.
    HiddenGluten,
    Meat,
    Dairy,
    /// Eggs, honey and other animal products that are not meat or dairy.
    OtherAnimal,
    Nut,
}

/// Words (or phrases) per language; a Hebrew word also matches after a one-letter prefix.
struct Lexicon {
    en: &'static [&'static str],
    he: &'static [&'static str],
    pt: &'static [&'static str],
}

impl Lexicon {
    fn of(&self, lang: Lang) -> &'static [&'static str] {
        match lang {
            Lang::En => self.en,
            Lang::He => self.he,
            Lang::Pt => self.pt,
        }
    }
}

// Entries are written folded (lower case, no accents, no niqqud, no geresh): `fold` is applied to
// the ingredient, not to these tables.
const GLUTEN: Lexicon = Lexicon {
    en: &[
        "wheat",
        "flour",
        "bread",
        "breadcrumbs",
        "pasta",
        "spaghetti",
        "macaroni",
        "noodles",
        "couscous",
        "bulgur",
        "bulghur",
        "semolina",
        "barley",
        "rye",
        "spelt",
        "seitan",
        "malt",
        "beer",
        "soy sauce",
        "pitta",
        "pita",
        "croutons",
        "crackers",
        "biscuits",
        "pastry",
        "dough",
        "farro",
        "freekeh",
        "matzo",
        "orzo",
        "oats",
        "oat",
        "tortillas",
        "tortilla",
        "breadcrumb",
        "cake",
    ],
    he: &[
        "קמח",
        "לחם",
        "פירורי לחם",
        "פסטה",
        "ספגטי",
        "אטריות",
        "קוסקוס",
        "בורגול",
        "סולת",
        "שעורה",
        "שעורים",
        "שיפון",
        "כוסמין",
        "לתת",
        "בירה",
        "רוטב סויה",
        "פיתה",
        "פיתות",
        "מצה",
        "פתיתים",
        "בצק",
        "שיבולת שועל",
        "קרקרים",
        "עוגיות",
    ],
    pt: &[
        "trigo",
        "farinha",
        "pao",
        "paes",
        "pao ralado",
        "massa",
        "esparguete",
        "macarrao",
        "cuscuz",
        "bulgur",
        "semola",
        "cevada",
        "centeio",
        "espelta",
        "malte",
        "cerveja",
        "molho de soja",
        "bolacha",
        "bolachas",
        "biscoitos",
        "tosta",
        "tostas",
        "aveia",
        "broa",
    ],
};

/// Words that make a gluten word harmless in the same ingredient.
const GLUTEN_FREE: Lexicon = Lexicon {
    en: &[
        "gluten free",
        "glutenfree",
        "gf",
        "rice",
        "corn",
        "cornflour",
        "maize",
        "chickpea",
        "gram",
        "almond",
        "buckwheat",
        "potato",
        "tapioca",
        "coconut",
        "tamari",
        "quinoa",
        "sorghum",
        "millet",
    ],
    he: &[
        "ללא גלוטן",
        "נטול גלוטן",
        "נטולת גלוטן",
        "אורז",
        "תירס",
        "חומוס",
        "שקדים",
        "כוסמת",
        "תפוחי אדמה",
        "קינואה",
        "טמרי",
    ],
    pt: &[
        "sem gluten",
        "isento de gluten",
        "arroz",
        "milho",
        "grao",
        "amendoa",
        "trigo sarraceno",
        "batata",
        "tapioca",
        "coco",
        "tamari",
        "quinoa",
        "mandioca",
    ],
};

const MEAT: Lexicon = Lexicon {
    en: &[
        "meat",
        "beef",
        "pork",
        "lamb",
        "mutton",
        "veal",
        "chicken",
        "turkey",
        "duck",
        "bacon",
        "ham",
        "sausage",
        "sausages",
        "chorizo",
        "salami",
        "prosciutto",
        "pancetta",
        "mince",
        "steak",
        "fish",
        "tuna",
        "cod",
        "salmon",
        "sardines",
        "sardine",
        "anchovy",
        "anchovies",
        "prawns",
        "prawn",
        "shrimp",
        "mussels",
        "clams",
        "squid",
        "octopus",
        "gelatin",
        "gelatine",
        "lard",
        "fish sauce",
        "chourico",
    ],
    he: &[
        "בשר",
        "בקר",
        "עוף",
        "חזה עוף",
        "פרגית",
        "פרגיות",
        "כבש",
        "טלה",
        "ברווז",
        "נקניק",
        "נקניקיות",
        "דג",
        "דגים",
        "טונה",
        "סלמון",
        "סרדינים",
        "אנשובי",
        "שרימפס",
        "גלטין",
        "קבב",
        "שניצל",
    ],
    pt: &[
        "carne",
        "vaca",
        "porco",
        "borrego",
        "vitela",
        "frango",
        "galinha",
        "peru",
        "pato",
        "bacon",
        "presunto",
        "fiambre",
        "chourico",
        "salsicha",
        "salsichas",
        "linguica",
        "toucinho",
        "banha",
        "peixe",
        "atum",
        "bacalhau",
        "salmao",
        "sardinha",
        "sardinhas",
        "anchova",
        "anchovas",
        "camarao",
        "camaroes",
        "lulas",
        "polvo",
        "ameijoas",
        "mexilhoes",
        "gelatina",
    ],
};

const DAIRY: Lexicon = Lexicon {
    en: &[
        "milk",
        "butter",
        "buttermilk",
        "cream",
        "cheese",
        "yoghurt",
        "yogurt",
        "ghee",
        "whey",
        "parmesan",
        "feta",
        "mozzarella",
        "ricotta",
        "halloumi",
        "creme fraiche",
        "custard",
        "labneh",
    ],
    he: &[
        "חלב",
        "חמאה",
        "חמאת",
        "שמנת",
        "גבינה",
        "גבינת",
        "יוגורט",
        "לבנה",
        "פרמזן",
        "פטה",
        "ריקוטה",
        "חלומי",
        "מוצרלה",
    ],
    pt: &[
        "leite",
        "manteiga",
        "natas",
        "nata",
        "queijo",
        "iogurte",
        "requeijao",
        "ghee",
        "mozarela",
        "parmesao",
        "leitelho",
    ],
};

const OTHER_ANIMAL: Lexicon = Lexicon {
    en: &["egg", "eggs", "yolk", "yolks", "egg whites", "mayonnaise", "honey", "meringue"],
    he: &["ביצה", "ביצים", "חלמון", "חלמונים", "חלבון", "חלבונים", "מיונז", "דבש"],
    pt: &["ovo", "ovos", "gema", "gemas", "clara", "claras", "maionese", "mel"],
};

/// Words that make an animal word harmless in the same ingredient: plant milks and butters, vegan
/// replacements.
const PLANT: Lexicon = Lexicon {
    en: &[
        "vegan",
        "plant",
        "plant based",
        "oat",
        "soy",
        "soya",
        "almond",
        "coconut",
        "rice",
        "flax",
        "flaxseed",
        "chia",
        "peanut",
        "nut",
        "cashew",
        "cocoa",
        "tartar",
        "butternut",
        "beans",
        "vegetable",
        "dairy free",
        "egg free",
        "egg replacer",
        "aquafaba",
        "mushroom",
        "jackfruit",
        "tofu",
    ],
    he: &[
        "טבעוני",
        "טבעונית",
        "טבעוניים",
        "צמחי",
        "צמחית",
        "סויה",
        "שקדים",
        "קוקוס",
        "שיבולת",
        "בוטנים",
        "פשתן",
        "קשיו",
        "אגוזים",
        "טחינה",
        "טופו",
    ],
    pt: &[
        "vegan",
        "vegano",
        "vegana",
        "vegetal",
        "aveia",
        "soja",
        "amendoa",
        "coco",
        "arroz",
        "linhaca",
        "amendoim",
        "caju",
        "cacau",
        "tofu",
        "cogumelos",
        "aquafaba",
    ],
};

const NUTS: Lexicon = Lexicon {
    en: &[
        "almond",
        "almonds",
        "walnut",
        "walnuts",
        "hazelnut",
        "hazelnuts",
        "cashew",
        "cashews",
        "pistachio",
        "pistachios",
        "pecan",
        "pecans",
        "peanut",
        "peanuts",
        "pine nuts",
        "nuts",
        "macadamia",
    ],
    he: &["שקדים", "שקד", "אגוזים", "אגוז", "אגוזי", "בוטנים", "פיסטוק", "קשיו", "צנוברים", "לוז"],
    pt: &[
        "amendoa", "amendoas", "noz", "nozes", "avela", "avelas", "caju", "pistacio", "amendoim", "pinhoes",
    ],
};

/// The one-letter Hebrew prefixes (and, the, in, to, from, that, as).
const HEBREW_PREFIXES: [char; 7] = ['ו', 'ה', 'ב', 'ל', 'מ', 'ש', 'כ'];

fn word_matches(lang: Lang, word: &str, entry: &str) -> bool {
    if word == entry {
        return true;
    }
    lang == Lang::He
        && word
            .strip_prefix(HEBREW_PREFIXES)
            .is_some_and(|rest| rest == entry || rest.strip_prefix(HEBREW_PREFIXES) == Some(entry))
}

/// The first entry of `lexicon` that occurs in `tokens` as a run of whole words.
fn find(lang: Lang, tokens: &[String], lexicon: &Lexicon) -> Option<&'static str> {
    lexicon.of(lang).iter().copied().find(|entry| {
        let parts: Vec<&str> = entry.split(' ').collect();
        tokens.windows(parts.len()).any(|window| {
            window.iter().zip(&parts).enumerate().all(|(idx, (word, part))| {
                // Only the first word of a phrase carries a Hebrew prefix.
                if idx == 0 { word_matches(lang, word, part) } else { word == part }
            })
        })
    })
}

/// Splits `gluten-free` into `gluten free`, as the lexicons are written.
fn tokens(name: &str) -> Vec<String> {
    words(name).collect()
}

/// What the rules find in one ingredient, each finding with the word that triggered it.
pub fn ingredient_findings(lang: Lang, ingredient: &Ingredient) -> Vec<(Rule, &'static str)> {
    let tokens = tokens(&ingredient.i);
    let mut found = Vec::new();
    let gluten_free = find(lang, &tokens, &GLUTEN_FREE).is_some();
    if !gluten_free {
        if let Some(word) = find(lang, &tokens, &GLUTEN) {
            found.push((Rule::Gluten, word));
        } else if ingredient.check {
            found.push((Rule::HiddenGluten, "check"));
        }
    }
    let plant = find(lang, &tokens, &PLANT).is_some();
    if !plant {
        for (rule, lexicon) in
            [(Rule::Meat, &MEAT), (Rule::Dairy, &DAIRY), (Rule::OtherAnimal, &OTHER_ANIMAL)]
        {
            if let Some(word) = find(lang, &tokens, lexicon) {
                found.push((rule, word));
            }
        }
    } else if let Some(word) = find(lang, &tokens, &MEAT) {
        // "vegetable" does not make "chicken" harmless; only milk-like and egg-like words are replaced.
        found.push((Rule::Meat, word));
    }
    if let Some(word) = find(lang, &tokens, &NUTS) {
        found.push((Rule::Nut, word));
    }
    found
}

/// The flags the rules allow, ingredient by ingredient over every language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleFlags {
    pub gf: bool,
    pub vegan: bool,
    pub vegetarian: bool,
    pub dairy_free: bool,
    pub nut_free: bool,
}

pub fn rule_flags(recipe: &Recipe) -> RuleFlags {
    let mut flags = RuleFlags { gf: true, vegan: true, vegetarian: true, dairy_free: true, nut_free: true };
    for (lang, text) in &recipe.texts {
        for ingredient in &text.ingredients {
            for (rule, _) in ingredient_findings(*lang, ingredient) {
                match rule {
                    Rule::Gluten | Rule::HiddenGluten => flags.gf = false,
                    Rule::Meat => {
                        flags.vegetarian = false;
                        flags.vegan = false;
                    }
                    Rule::Dairy => {
                        flags.dairy_free = false;
                        flags.vegan = false;
                    }
                    Rule::OtherAnimal => flags.vegan = false,
                    Rule::Nut => flags.nut_free = false,
                }
            }
        }
    }
    flags
}

/// Whether `recipe` already is a `kind` recipe: flagged so, and the rules agree.
pub fn satisfies(recipe: &Recipe, kind: Kind) -> bool {
    let rules = rule_flags(recipe);
    (!kind.needs_gf() || (recipe.gf == 1 && rules.gf))
        && (!kind.needs_vegan() || (recipe.vegan == 1 && rules.vegan))
}

/// Every ingredient that keeps `recipe` from being a `kind` recipe, each naming its field and word.
pub fn check(recipe: &Recipe, kind: Kind) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    for (lang, text) in &recipe.texts {
        for (idx, ingredient) in text.ingredients.iter().enumerate() {
            let field = format!("texts.{}.ingredients[{idx}].i", lang.code());
            for (rule, word) in ingredient_findings(*lang, ingredient) {
                let reason = match rule {
                    Rule::Gluten if kind.needs_gf() => format!("`{}` contains gluten ({word})", ingredient.i),
                    Rule::HiddenGluten if kind.needs_gf() => {
                        format!("`{}` can hide gluten: name a gluten-free one", ingredient.i)
                    }
                    Rule::Meat | Rule::Dairy | Rule::OtherAnimal if kind.needs_vegan() => {
                        format!("`{}` is not vegan ({word})", ingredient.i)
                    }
                    _ => continue,
                };
                problems.push(Diagnostic::new(field.clone(), reason));
            }
        }
    }
    problems
}

/// Sets the five flags truthfully: a flag the rules refuse is cleared, the flags of the version's
/// kind are set (the caller has checked them with [`check`]), and vegan implies vegetarian and
/// dairy-free. A flag the model cleared stays cleared: the rules can prove a recipe is not gluten-free,
/// never that it is, beyond the words they know.
pub fn set_flags(recipe: &mut Recipe, kind: Option<Kind>) {
    let rules = rule_flags(recipe);
    let keep = |claimed: u8, allowed: bool| u8::from(claimed == 1 && allowed);
    recipe.gf = keep(recipe.gf, rules.gf);
    recipe.vegan = keep(recipe.vegan, rules.vegan);
    recipe.vegetarian = keep(recipe.vegetarian, rules.vegetarian);
    recipe.dairy_free = keep(recipe.dairy_free, rules.dairy_free);
    recipe.nut_free = keep(recipe.nut_free, rules.nut_free);
    if let Some(kind) = kind {
        if kind.needs_gf() && rules.gf {
            recipe.gf = 1;
        }
        if kind.needs_vegan() && rules.vegan {
            recipe.vegan = 1;
        }
    }
    if recipe.vegan == 1 {
        recipe.vegetarian = 1;
        recipe.dairy_free = 1;
    }
}

/// One row of the substitution table: what to use instead of an ingredient, per language.
#[derive(Debug, Clone, Copy)]
pub struct Substitution {
    pub rule: Rule,
    /// The folded word the rules find.
    pub word: &'static str,
    pub instead: &'static str,
}

macro_rules! subs {
    ($($rule:ident $word:literal => $instead:literal),* $(,)?) => {
        &[$(Substitution { rule: Rule::$rule, word: $word, instead: $instead }),*]
    };
}

const SUBS_EN: &[Substitution] = subs![
    Gluten "flour" => "gluten-free flour blend (plus 1/2 tsp xanthan gum per 150 g for baking)",
    Gluten "bread" => "gluten-free bread",
    Gluten "breadcrumbs" => "gluten-free breadcrumbs or ground almonds",
    Gluten "pasta" => "gluten-free pasta",
    Gluten "spaghetti" => "gluten-free spaghetti",
    Gluten "noodles" => "rice noodles",
    Gluten "couscous" => "quinoa",
    Gluten "bulgur" => "quinoa",
    Gluten "semolina" => "fine polenta",
    Gluten "barley" => "short-grain rice",
    Gluten "soy sauce" => "tamari (gluten-free)",
    Gluten "oats" => "gluten-free oats",
    Gluten "pita" => "gluten-free flatbread",
    Gluten "pitta" => "gluten-free flatbread",
    Gluten "beer" => "gluten-free beer",
    HiddenGluten "check" => "the same ingredient labelled gluten-free",
    Dairy "milk" => "soy milk",
    Dairy "butter" => "plant butter",
    Dairy "cream" => "coconut cream",
    Dairy "yoghurt" => "plant yoghurt (soy or coconut)",
    Dairy "yogurt" => "plant yoghurt (soy or coconut)",
    Dairy "cheese" => "vegan cheese",
    Dairy "feta" => "vegan feta-style cheese",
    Dairy "parmesan" => "nutritional yeast",
    OtherAnimal "egg" => "flax egg (1 tbsp ground flaxseed + 3 tbsp water)",
    OtherAnimal "eggs" => "flax eggs (per egg: 1 tbsp ground flaxseed + 3 tbsp water)",
    OtherAnimal "honey" => "maple syrup",
    OtherAnimal "mayonnaise" => "vegan mayonnaise",
    Meat "chicken" => "chickpeas or firm tofu",
    Meat "beef" => "brown lentils or mushrooms",
    Meat "meat" => "brown lentils or mushrooms",
    Meat "mince" => "brown lentils",
    Meat "bacon" => "smoked tofu",
    Meat "fish" => "firm tofu",
    Meat "tuna" => "mashed chickpeas",
    Meat "gelatin" => "agar",
];

const SUBS_HE: &[Substitution] = subs![
    Gluten "קמח" => "תערובת קמח ללא גלוטן",
    Gluten "לחם" => "לחם ללא גלוטן",
    Gluten "פירורי לחם" => "פירורי לחם ללא גלוטן",
    Gluten "פסטה" => "פסטה ללא גלוטן",
    Gluten "קוסקוס" => "קינואה",
    Gluten "בורגול" => "קינואה",
    Gluten "סולת" => "קמח תירס",
    Gluten "רוטב סויה" => "טמרי ללא גלוטן",
    Gluten "פיתה" => "פיתה ללא גלוטן",
    Gluten "שיבולת שועל" => "שיבולת שועל ללא גלוטן",
    HiddenGluten "check" => "אותו מרכיב, מסומן ללא גלוטן",
    Dairy "חלב" => "משקה סויה",
    Dairy "חמאה" => "חמאה צמחית",
    Dairy "שמנת" => "קרם קוקוס",
    Dairy "יוגורט" => "יוגורט סויה",
    Dairy "גבינה" => "גבינה טבעונית",
    OtherAnimal "ביצה" => "ביצת פשתן (כף זרעי פשתן טחונים ו-3 כפות מים)",
    OtherAnimal "ביצים" => "ביצי פשתן (לכל ביצה: כף זרעי פשתן טחונים ו-3 כפות מים)",
    OtherAnimal "דבש" => "סילאן",
    Meat "עוף" => "טופו קשה או חומוס",
    Meat "בשר" => "עדשים חומות או פטריות",
    Meat "דג" => "טופו קשה",
    Meat "טונה" => "חומוס מעוך",
];

const SUBS_PT: &[Substitution] = subs![
    Gluten "farinha" => "mistura de farinhas sem glúten",
    Gluten "pao" => "pão sem glúten",
    Gluten "pao ralado" => "pão ralado sem glúten",
    Gluten "massa" => "massa sem glúten",
    Gluten "esparguete" => "esparguete sem glúten",
    Gluten "cuscuz" => "quinoa",
    Gluten "molho de soja" => "tamari sem glúten",
    Gluten "aveia" => "aveia sem glúten",
    Gluten "cerveja" => "cerveja sem glúten",
    HiddenGluten "check" => "o mesmo ingrediente, com rótulo sem glúten",
    Dairy "leite" => "bebida de soja",
    Dairy "manteiga" => "manteiga vegetal",
    Dairy "natas" => "natas de coco",
    Dairy "iogurte" => "iogurte de soja",
    Dairy "queijo" => "queijo vegano",
    OtherAnimal "ovo" => "ovo de linhaça (1 colher de sopa de linhaça moída + 3 de água)",
    OtherAnimal "ovos" => "ovos de linhaça (por ovo: 1 colher de sopa de linhaça moída + 3 de água)",
    OtherAnimal "mel" => "xarope de ácer",
    Meat "frango" => "grão-de-bico ou tofu firme",
    Meat "carne" => "lentilhas castanhas ou cogumelos",
    Meat "chourico" => "tofu fumado com pimentão fumado",
    Meat "bacon" => "tofu fumado",
    Meat "bacalhau" => "tofu firme",
    Meat "atum" => "grão-de-bico esmagado",
    Meat "peixe" => "tofu firme",
];

/// The substitution table of one language.
pub fn substitutions(lang: Lang) -> &'static [Substitution] {
    match lang {
        Lang::En => SUBS_EN,
        Lang::He => SUBS_HE,
        Lang::Pt => SUBS_PT,
    }
}

fn rule_applies(rule: Rule, kind: Kind) -> bool {
    match rule {
        Rule::Gluten | Rule::HiddenGluten => kind.needs_gf(),
        Rule::Meat | Rule::Dairy | Rule::OtherAnimal => kind.needs_vegan(),
        Rule::Nut => false,
    }
}

/// For each ingredient of `recipe` that a `kind` version must replace: the ingredient, why, and the
/// table's suggestion when it has one. This is what the AI is told; it still writes the recipe.
pub fn guidance(recipe: &Recipe, kind: Kind) -> Vec<String> {
    let mut lines = Vec::new();
    for (lang, text) in &recipe.texts {
        for ingredient in &text.ingredients {
            for (rule, word) in ingredient_findings(*lang, ingredient) {
                if !rule_applies(rule, kind) {
                    continue;
                }
                let instead = substitutions(*lang).iter().find(|sub| sub.rule == rule && sub.word == word);
                lines.push(match instead {
                    Some(sub) => format!("[{}] `{}` → use {}", lang.code(), ingredient.i, sub.instead),
                    None => format!("[{}] `{}` must be replaced", lang.code(), ingredient.i),
                });
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};

    fn ingredient(name: &str, check: bool) -> Ingredient {
        Ingredient { q: 1.0, u: None, i: name.to_string(), check }
    }

    /// Each line: the ingredient, then what the rules find in it.
    fn check_table(lang: Lang, names: &[&str], expect: Expect) {
        let mut out = String::new();
        for name in names {
            let (name, check) = match name.strip_suffix(" [check]") {
                Some(name) => (name, true),
                None => (*name, false),
            };
            let found: Vec<String> = ingredient_findings(lang, &ingredient(name, check))
                .into_iter()
                .map(|(rule, word)| format!("{rule:?}({word})"))
                .collect();
            out.push_str(&format!(
                "{name}: {}\n",
                if found.is_empty() { "-".into() } else { found.join(" ") }
            ));
        }
        expect.assert_eq(&out);
    }

    #[test]
    fn english_lexicons() {
        check_table(
            Lang::En,
            &[
                "plain flour",
                "gluten-free flour blend",
                "rice flour",
                "Soy sauce",
                "tamari",
                "rolled oats [check]",
                "gluten-free rolled oats [check]",
                "baking powder [check]",
                "whole milk",
                "oat milk",
                "soy milk",
                "unsalted butter",
                "peanut butter",
                "2 eggs, beaten",
                "eggplant",
                "flax egg",
                "chicken stock",
                "vegetable stock",
                "honey or maple syrup",
                "coconut cream",
                "chickpeas",
                "walnuts",
            ],
            expect![[r#"
                plain flour: Gluten(flour)
                gluten-free flour blend: -
                rice flour: -
                Soy sauce: Gluten(soy sauce)
                tamari: -
                rolled oats: Gluten(oats)
                gluten-free rolled oats: -
                baking powder: HiddenGluten(check)
                whole milk: Dairy(milk)
                oat milk: Gluten(oat)
                soy milk: -
                unsalted butter: Dairy(butter)
                peanut butter: Nut(peanut)
                2 eggs, beaten: OtherAnimal(eggs)
                eggplant: -
                flax egg: -
                chicken stock: Meat(chicken)
                vegetable stock: -
                honey or maple syrup: OtherAnimal(honey)
                coconut cream: -
                chickpeas: -
                walnuts: Nut(walnuts)
            "#]],
        );
    }

    #[test]
    fn hebrew_lexicons_see_through_prefixes_and_niqqud() {
        check_table(
            Lang::He,
            &[
                "קמח לבן",
                "קמח אורז",
                "תערובת קמח ללא גלוטן",
                "וּפירורי לחם",
                "חלב",
                "משקה סויה",
                "חלב קוקוס",
                "והחמאה",
                "חמאה צמחית",
                "ביצים",
                "ביצת פשתן",
                "חזה עוף",
                "דבש",
                "שמן זית",
                "אבקת אפייה [check]",
                "אבקת אפייה ללא גלוטן [check]",
            ],
            expect![[r#"
                קמח לבן: Gluten(קמח)
                קמח אורז: -
                תערובת קמח ללא גלוטן: -
                וּפירורי לחם: Gluten(לחם)
                חלב: Dairy(חלב)
                משקה סויה: -
                חלב קוקוס: -
                והחמאה: Dairy(חמאה)
                חמאה צמחית: -
                ביצים: OtherAnimal(ביצים)
                ביצת פשתן: -
                חזה עוף: Meat(עוף)
                דבש: OtherAnimal(דבש)
                שמן זית: -
                אבקת אפייה: HiddenGluten(check)
                אבקת אפייה ללא גלוטן: -
            "#]],
        );
    }

    #[test]
    fn portuguese_lexicons_fold_accents() {
        check_table(
            Lang::Pt,
            &[
                "farinha de trigo",
                "farinha de arroz",
                "mistura de farinhas sem glúten",
                "pão",
                "pão sem glúten",
                "leite",
                "leite de coco",
                "bebida de soja",
                "manteiga",
                "manteiga de amendoim",
                "ovos",
                "chouriço de carne [check]",
                "bacalhau",
                "mel",
                "azeite",
                "fermento em pó sem glúten [check]",
            ],
            expect![[r#"
                farinha de trigo: Gluten(trigo)
                farinha de arroz: -
                mistura de farinhas sem glúten: -
                pão: Gluten(pao)
                pão sem glúten: -
                leite: Dairy(leite)
                leite de coco: -
                bebida de soja: -
                manteiga: Dairy(manteiga)
                manteiga de amendoim: Nut(amendoim)
                ovos: OtherAnimal(ovos)
                chouriço de carne: HiddenGluten(check) Meat(carne)
                bacalhau: Meat(bacalhau)
                mel: OtherAnimal(mel)
                azeite: -
                fermento em pó sem glúten: -
            "#]],
        );
    }

    #[test]
    fn kinds_and_slugs() {
        assert_eq!(Kind::parse("both"), Some(Kind::Both));
        assert_eq!(Kind::parse("keto"), None);
        assert_eq!(variant_slug("pancakes", Kind::Gf), "pancakes-gf");
        assert_eq!(variant_slug("pancakes", Kind::Vegan), "pancakes-vegan");
        assert_eq!(variant_slug("pancakes", Kind::Both), "pancakes-gf-vegan");
        assert!(variant_slug(&"a".repeat(80), Kind::Both).len() <= crate::slug::MAX_LEN);
    }

    fn pancakes() -> Recipe {
        let value = serde_json::json!({
            "emoji": "🥞", "course": "breakfast", "difficulty": 1, "prep_min": 10, "cook_min": 15,
            "servings": 4, "gf": 1, "vegan": 1, "vegetarian": 1, "dairy_free": 1, "nut_free": 1,
            "texts": {"en": {"title": "Pancakes", "summary": "Soft.",
                "ingredients": [{"q": 200, "u": "g", "i": "plain flour"}, {"q": 2, "i": "eggs"},
                                {"q": 300, "u": "ml", "i": "milk"}],
                "steps": [{"t": "Mix."}]}}
        });
        crate::recipe::validate(&value, crate::recipe::Source::Api).unwrap().0
    }

    #[test]
    fn flags_claimed_falsely_are_cleared() {
        let mut recipe = pancakes();
        assert!(!satisfies(&recipe, Kind::Gf));
        set_flags(&mut recipe, None);
        assert_eq!(
            (recipe.gf, recipe.vegan, recipe.vegetarian, recipe.dairy_free, recipe.nut_free),
            (0, 0, 1, 0, 1)
        );
        let problems: Vec<String> = check(&recipe, Kind::Both).iter().map(|p| p.to_string()).collect();
        expect![[r#"
            [
                "texts.en.ingredients[0].i: `plain flour` contains gluten (flour)",
                "texts.en.ingredients[1].i: `eggs` is not vegan (eggs)",
                "texts.en.ingredients[2].i: `milk` is not vegan (milk)",
            ]
        "#]]
        .assert_debug_eq(&problems);
    }

    #[test]
    fn guidance_names_the_table_substitute() {
        let lines = guidance(&pancakes(), Kind::Vegan);
        expect![[r#"
            [
                "[en] `eggs` → use flax eggs (per egg: 1 tbsp ground flaxseed + 3 tbsp water)",
                "[en] `milk` → use soy milk",
            ]
        "#]]
        .assert_debug_eq(&lines);
    }
}
