//! The word lists the diet rules read, per language, and how an ingredient's words are matched
//! against them: as a run of whole words, a Hebrew word also after a one-letter prefix.

use crate::recipe::Lang;
use crate::text::words;

/// Words (or phrases) per language; a Hebrew word also matches after a one-letter prefix.
pub(super) struct Lexicon {
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
pub(super) const GLUTEN: Lexicon = Lexicon {
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
pub(super) const GLUTEN_FREE: Lexicon = Lexicon {
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

pub(super) const MEAT: Lexicon = Lexicon {
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

pub(super) const DAIRY: Lexicon = Lexicon {
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

pub(super) const OTHER_ANIMAL: Lexicon = Lexicon {
    en: &["egg", "eggs", "yolk", "yolks", "egg whites", "mayonnaise", "honey", "meringue"],
    he: &["ביצה", "ביצים", "חלמון", "חלמונים", "חלבון", "חלבונים", "מיונז", "דבש"],
    pt: &["ovo", "ovos", "gema", "gemas", "clara", "claras", "maionese", "mel"],
};

/// Words that make an animal word harmless in the same ingredient: plant milks and butters, vegan
/// replacements.
pub(super) const PLANT: Lexicon = Lexicon {
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

pub(super) const NUTS: Lexicon = Lexicon {
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
pub(super) fn find(lang: Lang, tokens: &[String], lexicon: &Lexicon) -> Option<&'static str> {
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
pub(super) fn tokens(name: &str) -> Vec<String> {
    words(name).collect()
}
