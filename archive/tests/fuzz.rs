//! Fuzz target that stays: seeded mutations of valid archives of each kind (`.tar.xz`,
//! `.tar.gz`, `.tar`, `.zip`), written to a file and walked by [`for_each_record`], for a bounded
//! time in the test suite. Whatever the bytes, the walk ends (no hang, no panic) with the records
//! it could read or a [`ArchiveError::Corrupt`] naming the archive, and never hands the visitor a
//! record larger than [`MAX_RECORD_BYTES`] (a decompression bomb is skipped, not read whole).
//!
//! Budget: `ZERTZ_FUZZ_SECS` seconds (default 8) shared by the four kinds, `ZERTZ_FUZZ_CASES`
//! inputs per kind, `ZERTZ_FUZZ_SEED` (see `fuzzkit`). A longer run:
//!
//! ```text
//! ZERTZ_FUZZ_SECS=600 cargo test --release -p zertz-archive --test fuzz -- --nocapture
//! ```

use std::ops::ControlFlow;
use std::path::PathBuf;

use zertz_archive::{ArchiveError, MAX_RECORD_BYTES, for_each_record};
use zertz_fuzzkit::{Budget, fuzz_within};

mod common;

/// Pieces of the formats that mutations insert: magic numbers, record names, tar type flags.
const ARCHIVE_TOKENS: &[&str] = &[
    "\u{fd}7zXZ\0",
    "\x1f\u{8b}\x08",
    "PK\x03\x04",
    "PK\x01\x02",
    "PK\x05\x06",
    "ustar\0",
    "ustar  \0",
    ".sgf",
    "games/",
    "0000644\0",
    "00000000000\0",
    "\0\0\0\0\0\0\0\0",
    "\u{ff}\u{ff}\u{ff}\u{ff}",
];

fn check(path: &PathBuf, bytes: &[u8]) -> bool {
    std::fs::write(path, bytes).unwrap();
    let mut visited = 0u64;
    let result = for_each_record(std::slice::from_ref(path), |e| {
        visited += 1;
        let prefix = format!("{}:", path.display());
        assert!(e.name.starts_with(&prefix), "{} is not inside {}", e.name, path.display());
        let bytes = e.bytes.expect("an archive's entries are read or the walk ends");
        assert!(bytes.len() as u64 <= MAX_RECORD_BYTES, "a record of {} bytes", bytes.len());
        ControlFlow::Continue(())
    });
    match result {
        Ok(counts) => {
            assert_eq!(counts.records, visited);
            true
        }
        Err(ArchiveError::Corrupt { path: p, .. }) => {
            assert_eq!(&p, path);
            false
        }
        Err(e) => panic!("a readable file is corrupt or read, not {e}"),
    }
}

#[test]
fn fuzz_archives() {
    let dir = std::env::temp_dir().join(format!("zertz-archive-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let budget = Budget::from_env();
    let kinds = common::archives();
    let share = Budget { secs: budget.secs / kinds.len() as f64, ..budget };
    for (name, bytes) in kinds {
        let path = dir.join(name);
        let report =
            fuzz_within(share, &format!("archive-{name}"), vec![bytes], ARCHIVE_TOKENS, |b| {
                check(&path, b)
            });
        assert!(report.cases > 0 || share.cases == 0);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
