//! Fuzz target that stays: seeded mutations of valid archives of each kind (`.tar.xz`,
//! `.tar.gz`, `.tar`, `.zip`), and of tars with extension headers (GNU long names and links, PAX
//! local and global headers: valid ones, and hostile ones that claim gigabytes, are cut short,
//! hold non-UTF-8 paths, or come twice or with no entry after them), plain and gzipped, written to
//! a file and walked by [`for_each_record`], for a bounded time in the test suite. Whatever the
//! bytes, the walk ends (no hang, no panic) within [`CASE_SECS`] with the records it could read or
//! a [`ArchiveError::Corrupt`] naming the archive, and never hands the visitor a record larger than
//! [`MAX_RECORD_BYTES`] (a decompression bomb is skipped, not read whole); the process's peak
//! memory stays under [`PEAK_BYTES`]. A plain tar that both this walk and the `tar` crate's own
//! (which reads extension headers whole, fine for inputs of 64 KiB) read gives the same records.
//!
//! Budget: `ZERTZ_FUZZ_SECS` seconds (default 8) shared by the six kinds, `ZERTZ_FUZZ_CASES`
//! inputs per kind, `ZERTZ_FUZZ_SEED` (see `fuzzkit`). A longer run:
//!
//! ```text
//! ZERTZ_FUZZ_SECS=600 cargo test --release -p zertz-archive --test fuzz -- --nocapture
//! ```

use std::io::Read;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::Instant;

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
    "././@LongLink\0",
    "L",
    "K",
    "x",
    "g",
    "S",
    "path=",
    "size=",
    "linkpath=",
    "30 path=games/a.sgf\n",
    "77777777777\0",
    "\u{80}\0\0\0\0\0\0\0\0\0\0\u{c0}",
];

/// The most one walk may take: a bound that only a walk that never ends reaches, whatever the
/// machine's load (the inputs are at most 64 KiB; a gzip of them inflates to at most about 64
/// MiB, the corpus's bomb to 512 MiB: a second or so).
const CASE_SECS: f64 = 60.0;

/// The most memory the fuzzing process may have held at its peak.
const PEAK_BYTES: u64 = 256 << 20;

/// The records of a plain tar as the `tar` crate itself walks it, or `None` where it fails.
fn tar_crate_records(bytes: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut archive = tar::Archive::new(bytes);
    let mut seen = Vec::new();
    for entry in archive.entries().ok()? {
        let mut entry = entry.ok()?;
        let name = entry.path().ok()?.to_string_lossy().into_owned();
        if !entry.header().entry_type().is_file() {
            continue;
        }
        if zertz_archive::is_record_name(&name) && entry.size() <= MAX_RECORD_BYTES {
            let mut content = Vec::new();
            entry.read_to_end(&mut content).ok()?;
            seen.push((name, content));
        }
    }
    Some(seen)
}

/// The process's peak resident memory (`VmHWM`), where `/proc` tells it.
fn peak_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib << 10)
}

/// Seeds of tars with extension headers: valid ones, hostile ones, a non-UTF-8 PAX path.
fn header_corpus() -> Vec<Vec<u8>> {
    let mut tars: Vec<Vec<u8>> = common::header_tars().into_iter().map(|(_, t)| t).collect();
    tars.extend(common::hostile_header_tars().into_iter().map(|(_, t, _)| t));
    let mut pax = common::tar_entry(
        tar::EntryType::XHeader,
        b"PaxHeaders/e",
        &common::pax_records(&[("path", b"games/\xff\xc0.sgf")]),
    );
    pax.extend(common::tar_entry(tar::EntryType::Regular, b"e", common::RECORD));
    pax.extend(common::tar_end());
    tars.push(pax);
    tars
}

/// A seed whose long name claims 3 GiB and holds 512 MiB of zeros (gzip members of 1 MiB each:
/// 512 KB), so that a walk that read it whole would pass [`PEAK_BYTES`]. Its mutations are cut to
/// 64 KiB (64 MiB of zeros).
fn header_bomb_gz() -> Vec<u8> {
    let mut head = common::tar_entry(tar::EntryType::Regular, b"first.sgf", common::RECORD);
    head.extend(common::header_block(tar::EntryType::GNULongName, b"././@LongLink", 3 << 30));
    let mut out = common::gzip(&head);
    let zeros = common::gzip(&vec![0; 1 << 20]);
    for _ in 0..512 {
        out.extend_from_slice(&zeros);
    }
    out
}

fn check(path: &PathBuf, bytes: &[u8]) -> bool {
    std::fs::write(path, bytes).unwrap();
    let mut seen = Vec::new();
    let started = Instant::now();
    let prefix = format!("{}:", path.display());
    let result = for_each_record(std::slice::from_ref(path), |e| {
        let inner = e.name.strip_prefix(&prefix);
        assert!(inner.is_some(), "{} is not inside {}", e.name, path.display());
        let bytes = e.bytes.expect("an archive's entries are read or the walk ends");
        assert!(bytes.len() as u64 <= MAX_RECORD_BYTES, "a record of {} bytes", bytes.len());
        seen.push((inner.unwrap_or_default().to_string(), bytes.to_vec()));
        ControlFlow::Continue(())
    });
    let seconds = started.elapsed().as_secs_f64();
    assert!(seconds < CASE_SECS, "a walk of {seconds:.1} s");
    match result {
        Ok(counts) => {
            assert_eq!(counts.records, seen.len() as u64);
            if path.extension().is_some_and(|x| x == "tar") {
                if let Some(by_crate) = tar_crate_records(bytes) {
                    assert_eq!(seen, by_crate, "the tar crate reads other records");
                }
            }
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
    let mut kinds: Vec<(&str, Vec<Vec<u8>>)> =
        common::archives().into_iter().map(|(name, bytes)| (name, vec![bytes])).collect();
    let headers = header_corpus();
    let mut gzipped: Vec<Vec<u8>> = headers.iter().map(|t| common::gzip(t)).collect();
    gzipped.push(header_bomb_gz());
    kinds.push(("headers.tar", headers));
    kinds.push(("headers.tar.gz", gzipped));
    let share = Budget { secs: budget.secs / kinds.len() as f64, ..budget };
    for (name, corpus) in kinds {
        let path = dir.join(name);
        let report = fuzz_within(share, &format!("archive-{name}"), corpus, ARCHIVE_TOKENS, |b| {
            check(&path, b)
        });
        assert!(report.cases > 0 || share.cases == 0);
    }
    if let Some(peak) = peak_bytes() {
        println!("fuzz archives: a peak of {} MiB", peak >> 20);
        assert!(peak < PEAK_BYTES, "a peak of {} MiB", peak >> 20);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
