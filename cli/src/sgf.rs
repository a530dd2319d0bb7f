//! `zertz sgf`: game records (JSON lines) to boardspace SGF files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::common::read_text_file;

/// The arguments of `zertz sgf`.
#[derive(Args, Debug)]
pub struct SgfArgs {
    /// A JSON-lines records file.
    pub records: PathBuf,
    /// Folder for the .sgf files, GAME.sgf each (none of them may exist yet: nothing is ever
    /// replaced).
    #[arg(long, default_value = "sgf")]
    pub out: PathBuf,
}

/// Converts every record of the file.
pub fn run(args: SgfArgs) -> Result<ExitCode> {
    convert(&args.records, &args.out)
}

fn convert(records: &Path, out: &Path) -> Result<ExitCode> {
    let text = read_text_file(records)?;
    let lines: Vec<(usize, &str)> =
        text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()).collect();
    let parsed: Vec<_> = lines
        .iter()
        .map(|&(i, line)| (i, zertz_env::records::GameRecord::from_json(line)))
        .collect();
    let file = |r: &zertz_env::records::GameRecord| out.join(format!("{}.sgf", r.game));
    // Nothing is ever replaced: a file of the run already there refuses the whole run, before
    // anything is written.
    let taken: Vec<PathBuf> = parsed
        .iter()
        .filter_map(|(_, r)| r.as_ref().ok().map(file))
        .filter(|p| p.exists())
        .collect();
    if let Some(first) = taken.first() {
        bail!(
            "{} exists{} (nothing is ever replaced): give a new folder with --out",
            first.display(),
            match taken.len() {
                1 => String::new(),
                n => format!(", and {} more of the {} files to write", n - 1, parsed.len()),
            }
        );
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let (mut written, mut failed) = (0, 0);
    for (i, record) in parsed {
        let result = (|| -> Result<()> {
            let record = record?;
            let sgf = record.to_sgf().map_err(anyhow::Error::msg)?;
            let path = file(&record);
            let mut f =
                std::fs::OpenOptions::new().write(true).create_new(true).open(&path).with_context(
                    || match path.exists() {
                        // Two records of one game number, or a file that appeared meanwhile.
                        true => format!("{} exists (nothing is ever replaced)", path.display()),
                        false => format!("cannot create {}", path.display()),
                    },
                )?;
            f.write_all(sgf.as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(())
        })();
        match result {
            Ok(()) => written += 1,
            Err(e) => {
                failed += 1;
                eprintln!("{}:{}: {}", records.display(), i + 1, crate::common::message(&e));
            }
        }
    }
    println!("{written} SGF files written to {}, {failed} lines failed", out.display());
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
