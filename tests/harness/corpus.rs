//! Generated recipe corpora for benchmarks: realistic documents at any scale.
//!
//! Each generated recipe is one of the hand-written sample recipes with a new title, summary and times,
//! so the text stays real cooking language in all three languages; invented place-like names in each
//! script make the vocabulary grow with the corpus as a real one would. Also the Changelog transcript
//! corpus, extracted where benchmarks read it ([`changelog`]).

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde_json::Value;

/// The Changelog corpus (CC BY-SA 4.0, © Changelog Media LLC), extracted into the ignored
/// `tests/.work/corpus` when missing: one folder of Markdown transcripts a show.
pub fn changelog() -> PathBuf {
    let dir = crate::root().join("tests/.work/corpus");
    if !dir.join("jsparty").is_dir() {
        std::fs::create_dir_all(&dir).unwrap();
        let archive = crate::root().join("../shared/corpora/changelog-transcripts.tar.xz");
        let status =
            std::process::Command::new("tar").arg("-xJf").arg(&archive).arg("-C").arg(&dir).status().unwrap();
        assert!(status.success(), "extracting {}", archive.display());
    }
    dir
}

/// A small deterministic generator (SplitMix64): benchmarks must see the same corpus every run.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const EN_WORDS: &[&str] = &[
    "Quick",
    "Grandma's",
    "Spicy",
    "Smoky",
    "Summer",
    "Winter",
    "Easy",
    "Crispy",
    "Lemony",
    "Herby",
    "Sunday",
    "Rustic",
    "Golden",
    "Midweek",
    "Festive",
];
const PT_WORDS: &[&str] = &[
    "Rápido",
    "da avó",
    "Picante",
    "Fumado",
    "de verão",
    "de inverno",
    "Fácil",
    "Estaladiço",
    "com limão",
    "com ervas",
    "de domingo",
    "Rústico",
    "Dourado",
    "Caseiro",
    "de festa",
];
const HE_WORDS: &[&str] = &[
    "מהיר",
    "של סבתא",
    "חריף",
    "מעושן",
    "קיצי",
    "חורפי",
    "קל",
    "פריך",
    "לימוני",
    "עם עשבי תיבול",
    "של שבת",
    "כפרי",
    "זהוב",
    "ביתי",
    "חגיגי",
];
const LATIN_CONSONANTS: &[&str] =
    &["b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "tr", "ch", "qu"];
const LATIN_VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ei"];
const HEBREW_LETTERS: &[char] = &[
    'א', 'ב', 'ג', 'ד', 'ה', 'ו', 'ז', 'ח', 'ט', 'י', 'כ', 'ל', 'מ', 'נ', 'ס', 'ע', 'פ', 'צ', 'ק', 'ר', 'ש',
    'ת',
];
/// Distinct place-like names a corpus draws from, as real recipes name towns, regions and people.
const NAME_POOL: usize = 40_000;

/// Name number `rank` of the pool: 2–4 syllables, Latin or Hebrew script.
fn pool_name(rank: usize, hebrew: bool) -> String {
    let mut rng = Rng::new(0x5EED ^ (rank as u64) << 1 ^ hebrew as u64);
    if hebrew {
        (0..3 + rng.below(3)).map(|_| *rng.pick(HEBREW_LETTERS)).collect()
    } else {
        let mut name: String = (0..2 + rng.below(3))
            .map(|_| format!("{}{}", rng.pick(LATIN_CONSONANTS), rng.pick(LATIN_VOWELS)))
            .collect();
        let first = name.remove(0).to_ascii_uppercase();
        name.insert(0, first);
        name
    }
}

/// A Zipf-like draw from the pool: a few names are common, most are rare.
fn invented_name(rng: &mut Rng, hebrew: bool) -> String {
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let rank = ((NAME_POOL as f64).powf(u) - 1.0) as usize;
    pool_name(rank.min(NAME_POOL - 1), hebrew)
}

/// The roster of a corpus episode from its speakers in order of first turn: the first is the host.
pub fn roster(people: &[String]) -> Vec<domain::quotes::transcript::Person> {
    domain::quotes::transcript::Person::roster(people)
}

/// The hand-written recipes under `content/recipes`, parsed.
pub fn templates(root: &Path) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(root.join("content/recipes"))?.collect::<Result<_, _>>()?;
    paths.sort_by_key(|e| e.path());
    for entry in paths {
        out.push(serde_json::from_slice(&std::fs::read(entry.path())?)?);
    }
    Ok(out)
}

/// Recipe number `idx` of a generated corpus: `(slug, document)`.
pub fn generate(templates: &[Value], idx: usize, seed: u64) -> (String, Value) {
    let mut rng = Rng::new(seed ^ (idx as u64).wrapping_mul(0x2545_F491_4F6C_DD1D));
    let mut doc = rng.pick(templates).clone();
    let place_latin = invented_name(&mut rng, false);
    let place_hebrew = invented_name(&mut rng, true);
    let word = rng.below(EN_WORDS.len());
    let texts = doc["texts"].as_object_mut().expect("templates have texts");
    for (lang, text) in texts.iter_mut() {
        let title = text["title"].as_str().unwrap_or_default().to_string();
        let (new_title, extra) = match lang.as_str() {
            "he" => (
                format!("{} {} מ{}", title, HE_WORDS[word], place_hebrew),
                format!(" מתכון מהכפר {place_hebrew}."),
            ),
            "pt" => (
                format!("{} {} de {}", title, PT_WORDS[word], place_latin),
                format!(" Receita de {place_latin}."),
            ),
            _ => (
                format!("{} {} {}", EN_WORDS[word], title, place_latin),
                format!(" As cooked in {place_latin}."),
            ),
        };
        text["title"] = Value::from(new_title);
        let summary = text["summary"].as_str().unwrap_or_default().to_string();
        text["summary"] = Value::from(summary + &extra);
    }
    let base = domain::recipes::slug::from_title(
        doc["texts"].get("en").or_else(|| doc["texts"].get("pt")).or_else(|| doc["texts"].get("he")).unwrap()
            ["title"]
            .as_str()
            .unwrap(),
    );
    let base: String = base.chars().take(60).collect();
    let slug = format!("{}-{idx}", base.trim_end_matches('-'));
    doc["prep_min"] = Value::from(5 + 5 * rng.below(12) as u64);
    doc["cook_min"] = Value::from(5 * rng.below(30) as u64);
    (slug, doc)
}

/// Writes a git content repo of `n` generated recipes as one commit on `main`; returns the commit id.
pub fn write_git_repo(root: &Path, repo_dir: &Path, n: usize, seed: u64) -> Result<String> {
    let templates = templates(root)?;
    let repo = git2::Repository::init(repo_dir)?;
    let mut recipes = repo.treebuilder(None)?;
    for idx in 0..n {
        let (slug, doc) = generate(&templates, idx, seed);
        let blob = repo.blob(serde_json::to_string_pretty(&doc)?.as_bytes())?;
        recipes.insert(format!("{slug}.json"), blob, 0o100644)?;
    }
    let recipes = recipes.write()?;
    let mut content = repo.treebuilder(None)?;
    content.insert("recipes", recipes, 0o040000)?;
    let content = content.write()?;
    let mut top = repo.treebuilder(None)?;
    top.insert("content", content, 0o040000)?;
    let tree = repo.find_tree(top.write()?)?;
    let sig = git2::Signature::new("bench", "bench@commonplace.invalid", &git2::Time::new(1_700_000_000, 0))?;
    let commit = repo.commit(Some("HEAD"), &sig, &sig, &format!("{n} generated recipes"), &tree, &[])?;
    Ok(commit.to_string())
}

/// A git content repo of `n` generated recipes ([`write_git_repo`]) in `tests/.work/<name>`, emptied
/// first, with its HEAD built into `dist` beside it: (the work folder, the repo, the build).
pub fn built_git_repo(name: &str, n: usize, seed: u64) -> Result<(PathBuf, PathBuf, PathBuf)> {
    let work = crate::root().join("tests/.work").join(name);
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let (repo, out) = (work.join("repo"), work.join("dist"));
    write_git_repo(&crate::root(), &repo, n, seed)?;
    crate::build_git_head(&repo, &out)?;
    Ok((work, repo, out))
}

/// Commits a change to one recipe (its summary) on top of HEAD; returns the new commit id.
pub fn commit_one_change(repo_dir: &Path, slug: &str, note: &str) -> Result<String> {
    let mut doc = recipe_at_head(repo_dir, slug)?;
    let texts = doc["texts"].as_object_mut().expect("recipe has texts");
    for text in texts.values_mut() {
        let summary = format!("{} {note}", text["summary"].as_str().unwrap_or_default());
        text["summary"] = Value::from(summary);
    }
    commit_recipes(repo_dir, &[(slug, Some(doc))], note)
}

/// A recipe file at HEAD.
pub fn recipe_at_head(repo_dir: &Path, slug: &str) -> Result<Value> {
    let repo = git2::Repository::open(repo_dir)?;
    let tree = repo.head()?.peel_to_tree()?;
    let entry = tree.get_path(Path::new(&format!("content/recipes/{slug}.json")))?;
    Ok(serde_json::from_slice(repo.find_blob(entry.id())?.content())?)
}

/// Commits recipe files on top of HEAD: each slug's new document, or `None` to remove it. Returns the
/// new commit id.
pub fn commit_recipes(repo_dir: &Path, changes: &[(&str, Option<Value>)], note: &str) -> Result<String> {
    let repo = git2::Repository::open(repo_dir)?;
    let head = repo.head()?.peel_to_commit()?;
    let tree = head.tree()?;
    let recipes_tree = repo.find_tree(tree.get_path(Path::new("content/recipes"))?.id())?;
    let mut recipes = repo.treebuilder(Some(&recipes_tree))?;
    for (slug, doc) in changes {
        match doc {
            Some(doc) => {
                let blob = repo.blob(serde_json::to_string_pretty(doc)?.as_bytes())?;
                recipes.insert(format!("{slug}.json"), blob, 0o100644)?;
            }
            None => recipes.remove(format!("{slug}.json"))?,
        }
    }
    let recipes = recipes.write()?;
    let content_tree = repo.find_tree(tree.get_path(Path::new("content"))?.id())?;
    let mut content = repo.treebuilder(Some(&content_tree))?;
    content.insert("recipes", recipes, 0o040000)?;
    let content = content.write()?;
    let mut top = repo.treebuilder(Some(&tree))?;
    top.insert("content", content, 0o040000)?;
    let new_tree = repo.find_tree(top.write()?)?;
    let sig = git2::Signature::new("bench", "bench@commonplace.invalid", &git2::Time::new(1_700_000_100, 0))?;
    let commit = repo.commit(Some("HEAD"), &sig, &sig, note, &new_tree, &[&head])?;
    Ok(commit.to_string())
}

/// The slug of the first recipe file in the repo at HEAD.
pub fn first_slug(repo_dir: &Path) -> Result<String> {
    let repo = git2::Repository::open(repo_dir)?;
    let tree = repo.head()?.peel_to_tree()?;
    let recipes = repo.find_tree(tree.get_path(Path::new("content/recipes"))?.id())?;
    let name = recipes.iter().next().and_then(|e| e.name().map(str::to_string)).expect("a recipe");
    Ok(name.trim_end_matches(".json").to_string())
}
