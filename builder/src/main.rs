//! `builder`: compiles the content repo into `dist/` — static JSON, search index, pages, open data —
//! and fills the content repo: imports of transcripts, feeds, episodes and recipes, speaker
//! identification, and the API's change feeds synced into git.
//!
//! `main` parses arguments and hands them to [`run`]; every command is a module. Errors are printed as a
//! chain; content problems are printed one per line as `file:line:col: field: reason`, or as GitHub
//! Actions annotations with `check --format github` (`diagnostics.rs`).

mod agents;
mod build;
mod cooklang_dump;
mod diagnostics;
mod fetch;
mod history;
mod identify;
mod images;
mod import;
mod import_feed;
mod import_recipe;
mod jsonl;
mod layout;
mod local_r2;
mod opendata;
mod output;
mod pages;
mod quotes;
mod rebuild;
mod recipes;
mod schemas;
mod site;
mod source;
mod state;
mod sync;
mod voice;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "builder",
    version,
    about = "Builds Commonplace's static site and open data from the content repo"
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate every content file and write dist/.
    Build {
        #[command(flatten)]
        source: SourceArgs,
        /// The folder to write (it is replaced), beside its production layout OUT.assets and OUT.r2.
        #[arg(long)]
        out: PathBuf,
    },
    /// Validate every content file and report all problems; write nothing.
    Check {
        #[command(flatten)]
        source: SourceArgs,
        /// How to print problems: `text` (file:line:col: field: reason) or `github` (annotations).
        #[arg(long, value_enum, default_value_t = diagnostics::Format::Text)]
        format: diagnostics::Format,
    },
    /// Import a transcript file as one pipeline run (or a Changelog corpus folder as a shows/ tree).
    Import {
        /// changelog-md, whisperx, assemblyai, deepgram, podcasting20, webvtt, srt or rttm.
        #[arg(long, value_parser = parse_format)]
        format: domain::quotes::transcript::import::Format,
        /// The transcript file, or a Changelog corpus folder.
        #[arg(long)]
        input: PathBuf,
        /// For rttm: the timed text (WebVTT or SRT) to join the speaker turns with.
        #[arg(long)]
        text: Option<PathBuf>,
        /// The episode folder (content/shows/<show>/<episode>), or the shows/ folder for a corpus.
        #[arg(long)]
        out: PathBuf,
        /// The pipeline id (default: one per format, such as `whisperx`).
        #[arg(long)]
        pipeline: Option<String>,
        /// When the run was made, YYYY-MM-DD (default: today).
        #[arg(long)]
        created: Option<String>,
        /// With a corpus folder: import only these files (such as jsparty/js-party-299.md).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// How the transcript was made: asr, or human-edited when a person reviewed it (default: the
        /// format's, human-edited only for changelog-md).
        #[arg(long, value_parser = parse_kind)]
        kind: Option<domain::quotes::transcript::RunKind>,
        /// For a new episode (no episode.json yet): its title.
        #[arg(long)]
        title: Option<String>,
        /// For a new episode: where it is published (its page or audio address).
        #[arg(long)]
        source_url: Option<String>,
        /// For a new episode: its date, YYYY-MM-DD.
        #[arg(long)]
        published: Option<String>,
    },
    /// Import a show from its RSS feed: show.json, and each episode with a publisher transcript
    /// (<podcast:transcript>) as episode.json, a run and names.json.
    ImportFeed {
        /// The feed's address (http or https).
        #[arg(long)]
        feed: String,
        /// Only the first N items in the feed's order (most feeds list the newest first).
        #[arg(long)]
        first: Option<usize>,
        #[command(flatten)]
        to: import_feed::Destination,
    },
    /// Import one episode by its address (its page, audio or guid): its feed is found from the page
    /// (or looked in first with --feed), and its publisher transcript becomes a run.
    ImportEpisode {
        /// The episode's page, audio or guid.
        #[arg(long)]
        address: String,
        /// A feed to look in first, such as the show's (repeatable).
        #[arg(long)]
        feed: Vec<String>,
        #[command(flatten)]
        to: import_feed::Destination,
    },
    /// Turn Cooklang files or schema.org recipes (HTML pages or JSON-LD) into content files
    /// DIR/recipes/<slug>.json, listing every problem and what the source could not say.
    ImportRecipe {
        #[arg(long, value_enum)]
        format: import_recipe::Format,
        /// The content folder to write into (holding recipes/).
        #[arg(long)]
        content: PathBuf,
        /// The language of the files, when they do not say (en, he, pt).
        #[arg(long, value_parser = parse_lang)]
        lang: Option<domain::recipes::recipe::Lang>,
        /// The files to import.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Run the speaker identification sources and write their votes into each episode's names.json.
    Identify {
        /// A content folder (holding shows/).
        #[arg(long)]
        content: PathBuf,
        /// One episode: its ep_… id or <show>/<episode> folder.
        #[arg(long, conflicts_with = "all", required_unless_present = "all")]
        episode: Option<String>,
        /// Every episode.
        #[arg(long)]
        all: bool,
    },
    /// A voice's speaker embedding (source 3's), from an audio file: the whole file, or the stretch
    /// --from..--to seconds. Prints `{model, seconds, embedding}` as JSON.
    EmbedVoice {
        /// A local audio file: MP3, M4A/MP4 (AAC), WAV, FLAC or Ogg Vorbis.
        #[arg(long)]
        audio: PathBuf,
        /// Where the voice starts, in seconds.
        #[arg(long)]
        from: Option<f64>,
        /// Where it ends, in seconds.
        #[arg(long)]
        to: Option<f64>,
    },
    /// Commit the API's change feed into the content repo, one commit per change.
    Sync {
        /// The service's base URL, such as http://127.0.0.1:8787.
        #[arg(long)]
        api: String,
        /// The content git repository (with a work tree).
        #[arg(long)]
        repo: PathBuf,
        /// Where the content folder sits inside the repository.
        #[arg(long, default_value = "content")]
        path: String,
    },
}

#[derive(clap::Args)]
struct SourceArgs {
    /// A content folder in a work tree (holding recipes/).
    #[arg(long, conflicts_with = "git", required_unless_present = "git")]
    content: Option<PathBuf>,
    /// A git repository to read at --rev, without checking it out.
    #[arg(long)]
    git: Option<PathBuf>,
    /// The commit (or any revision) to build with --git.
    #[arg(long, requires = "git", default_value = "HEAD")]
    rev: String,
    /// Where the content folder sits inside the git repository.
    #[arg(long, default_value = "content")]
    path: String,
}

impl SourceArgs {
    fn source(self) -> source::Source {
        match (self.content, self.git) {
            (Some(dir), _) => source::Source::WorkTree(dir),
            (None, Some(repo)) => source::Source::Git { repo, rev: self.rev, path: self.path },
            (None, None) => unreachable!("clap requires one source"),
        }
    }
}

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // libgit2 hashes every object it reads to check its id by default; git itself does not (that is
    // `git fsck`'s job). The history walk reads a recipes folder of up to megabytes per commit, and
    // this check was a third of the time.
    git2::opts::strict_hash_verification(false);
    run(Args::parse())
}

fn run(args: Args) -> ExitCode {
    let result = match args.command {
        Command::Build { source, out } => build::build(&source.source(), &out),
        Command::Check { source, format } => build::check(&source.source(), format),
        Command::Import {
            format,
            input,
            text,
            out,
            pipeline,
            created,
            only,
            kind,
            title,
            source_url,
            published,
        } => {
            let episode = import::NewEpisode { title, source_url, published };
            import::run(import::Request { format, input, text, out, pipeline, created, only, kind, episode })
        }
        Command::ImportFeed { feed, first, to } => import_feed::run(import_feed::Request { feed, first, to }),
        Command::ImportEpisode { address, feed, to } => {
            import_feed::run_episode(import_feed::EpisodeRequest { address, feeds: feed, to })
        }
        Command::ImportRecipe { format, content, lang, files } => {
            import_recipe::run(format, &content, &files, lang)
        }
        Command::Identify { content, episode, all: _ } => {
            identify::run(&content, episode.map_or(identify::Which::All, identify::Which::One))
        }
        Command::EmbedVoice { audio, from, to } => voice::embed_file(&audio, from, to),
        Command::Sync { api, repo, path } => sync::sync(&api, &repo, &path),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err}");
            for cause in err.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}

fn parse_format(code: &str) -> Result<domain::quotes::transcript::import::Format, String> {
    domain::quotes::transcript::import::Format::parse(code).ok_or_else(|| {
        let all: Vec<&str> =
            domain::quotes::transcript::import::Format::ALL.iter().map(|f| f.code()).collect();
        format!("one of {}", all.join(", "))
    })
}

fn parse_kind(code: &str) -> Result<domain::quotes::transcript::RunKind, String> {
    match code {
        "asr" => Ok(domain::quotes::transcript::RunKind::Asr),
        "human-edited" => Ok(domain::quotes::transcript::RunKind::HumanEdited),
        _ => Err("asr or human-edited".into()),
    }
}

fn parse_lang(code: &str) -> Result<domain::recipes::recipe::Lang, String> {
    domain::recipes::recipe::Lang::parse(code).ok_or_else(|| "one of en, he, pt".to_string())
}
