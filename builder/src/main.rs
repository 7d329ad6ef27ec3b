//! `builder`: compiles the content repo into `dist/` — static JSON, search index, pages, open data.
//!
//! `main` parses arguments and hands them to [`run`]; every command is a module. Errors are printed as a
//! chain; content problems are printed one per line as `file: field: reason`.

mod build;
mod opendata;
mod pages;
mod source;

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
        /// The folder to write (it is replaced).
        #[arg(long)]
        out: PathBuf,
    },
    /// Validate every content file and report all problems; write nothing.
    Check {
        #[command(flatten)]
        source: SourceArgs,
    },
}

#[derive(clap::Args)]
#[group(required = true, multiple = false)]
struct SourceArgs {
    /// A content folder in a work tree (holding recipes/).
    #[arg(long, group = "from")]
    content: Option<PathBuf>,
    /// A git repository to read at --rev, without checking it out.
    #[arg(long, group = "from", requires = "rev")]
    git: Option<PathBuf>,
    /// The commit (or any revision) to build with --git.
    #[arg(long)]
    rev: Option<String>,
    /// Where the content folder sits inside the git repository.
    #[arg(long, default_value = "content")]
    path: String,
}

impl SourceArgs {
    fn source(self) -> source::Source {
        match (self.content, self.git) {
            (Some(dir), _) => source::Source::WorkTree(dir),
            (None, Some(repo)) => {
                source::Source::Git { repo, rev: self.rev.unwrap_or_else(|| "HEAD".into()), path: self.path }
            }
            (None, None) => unreachable!("clap requires one source"),
        }
    }
}

fn main() -> ExitCode {
    run(Args::parse())
}

fn run(args: Args) -> ExitCode {
    let result = match args.command {
        Command::Build { source, out } => build::build(&source.source(), &out),
        Command::Check { source } => build::check(&source.source()),
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
