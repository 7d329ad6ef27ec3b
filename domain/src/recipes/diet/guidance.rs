//! What the AI is told when it writes a diet version: the substitution table per language, and
//! for each ingredient to replace the table's suggestion.

use super::rules::{Rule, ingredient_findings};
use crate::recipes::recipe::DietKind;
use crate::recipes::recipe::{Lang, Recipe};

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

fn rule_applies(rule: Rule, kind: DietKind) -> bool {
    match rule {
        Rule::Gluten | Rule::HiddenGluten => kind.needs_gf(),
        Rule::Meat | Rule::Dairy | Rule::OtherAnimal => kind.needs_vegan(),
        Rule::Nut => false,
    }
}

/// For each ingredient of `recipe` that a `kind` version must replace: the ingredient, why, and the
/// table's suggestion when it has one. This is what the AI is told; it still writes the recipe.
pub fn guidance(recipe: &Recipe, kind: DietKind) -> Vec<String> {
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
