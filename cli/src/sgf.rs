//! `zertz sgf`: game records (JSON lines) to boardspace SGF files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;

use crate::common::read_text_file;

/// The arguments of `zertz sgf`.
#[derive(Args, Debug)]
pub struct SgfArgs {
    /// A JSON-lines records file.
    pub records: PathBuf,
    /// Folder for the .sgf files.
    #[arg(long, default_value = "sgf")]
    pub out: PathBuf,
}

/// Converts every record of the file.
pub fn run(args: SgfArgs) -> Result<ExitCode> {
    convert(&args.records, &args.out)
}

fn convert(records: &Path, out: &Path) -> Result<ExitCode> {
    let text = read_text_file(records)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let (mut written, mut failed) = (0, 0);
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let result = (|| -> Result<String> {
            let record = zertz_selfplay::records::GameRecord::from_json(line)?;
            let sgf = record.to_sgf().map_err(anyhow::Error::msg)?;
            let path = out.join(format!("{}.sgf", record.game));
            std::fs::write(&path, sgf)?;
            Ok(path.display().to_string())
        })();
        match result {
            Ok(_) => written += 1,
            Err(e) => {
                failed += 1;
                eprintln!("{}:{}: {e:#}", records.display(), i + 1);
            }
        }
    }
    println!("{written} SGF files written to {}, {failed} lines failed", out.display());
    Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
