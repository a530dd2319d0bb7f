//! Reading records from folders, files and every kind of archive, written here by the tests.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

mod common;

use common::{archives, files, tar_bytes};
use zertz_archive::{ArchiveError, Counts, MAX_RECORD_BYTES, count_hint, for_each_record};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zertz-archive-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes the archives of every kind into `dir`, and a tar archive named `r.tgz` (gzip by its name, but not
/// gzip data); returns their paths: `.tar.xz`, `.tar.gz`, `.tgz`, `.tar`, `.zip`.
fn write_archives(dir: &Path) -> Vec<PathBuf> {
    let mut all = archives();
    all.insert(2, ("r.tgz", tar_bytes()));
    all.into_iter()
        .map(|(name, bytes)| {
            let path = dir.join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        })
        .collect()
}

/// The name and bytes of each record visited.
type Seen = Vec<(String, Vec<u8>)>;

fn visit_all(paths: &[PathBuf]) -> Result<(Counts, Seen), ArchiveError> {
    let mut seen = Vec::new();
    let counts = for_each_record(paths, |e| {
        seen.push((e.name.to_string(), e.bytes.unwrap().to_vec()));
        ControlFlow::Continue(())
    })?;
    Ok((counts, seen))
}

#[test]
fn every_kind_of_archive_gives_its_records_in_order() {
    let dir = temp_dir("kinds");
    let archives = write_archives(&dir);
    for path in &archives {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name == "r.tgz" {
            // Named .tgz but not gzip data: refused as a broken archive, naming it.
            let e = visit_all(std::slice::from_ref(path)).unwrap_err();
            assert!(matches!(e, ArchiveError::Corrupt { kind: "tar.gz", .. }), "{e:?}");
            assert!(e.to_string().contains("r.tgz"), "{e}");
            continue;
        }
        let (counts, seen) = visit_all(std::slice::from_ref(path)).unwrap();
        assert_eq!(counts, Counts { records: 3, skipped: 1 }, "{name}");
        let names: Vec<&str> = seen.iter().map(|(n, _)| n.rsplit(':').next().unwrap()).collect();
        assert_eq!(names, ["games/b.sgf", "games/a.SGF", "c.sgf"], "{name}");
        assert!(seen[0].0.starts_with(&path.to_string_lossy().into_owned()));
        assert_eq!(seen[0].1, files()[0].1, "{name}");
        assert_eq!(count_hint(std::slice::from_ref(path)).unwrap(), None);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn folders_are_walked_in_name_order_and_a_file_alone_is_a_record() {
    let dir = temp_dir("folder");
    for (name, bytes) in files() {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let (counts, seen) = visit_all(std::slice::from_ref(&dir)).unwrap();
    assert_eq!(counts, Counts { records: 3, skipped: 1 });
    let names: Vec<String> = seen
        .iter()
        .map(|(n, _)| Path::new(n).strip_prefix(&dir).unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["c.sgf", "games/a.SGF", "games/b.sgf"]);
    assert_eq!(count_hint(std::slice::from_ref(&dir)).unwrap(), Some(3));
    let readme = dir.join("README.md");
    let (counts, _) = visit_all(&[readme]).unwrap();
    assert_eq!(counts, Counts { records: 1, skipped: 0 });
    // The visitor stops the walk.
    let mut n = 0;
    let counts = for_each_record(&[dir.clone(), dir.clone()], |_| {
        n += 1;
        if n == 2 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
    })
    .unwrap();
    assert_eq!((n, counts.records), (2, 2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn missing_truncated_huge_and_special_files_are_errors_or_skipped() {
    let dir = temp_dir("bad");
    let archives = write_archives(&dir);
    let e = visit_all(&[dir.join("none.tar.xz")]).unwrap_err();
    assert!(matches!(e, ArchiveError::Read { .. }) && e.to_string().contains("none.tar.xz"));
    // A record file that cannot be read fails alone: the walk goes on.
    let mut results = Vec::new();
    let counts = for_each_record(&[dir.join("none.sgf"), archives[3].clone()], |e| {
        results.push(e.bytes.map(|_| ()).map_err(|e| e.to_string()));
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(counts.records, 4);
    assert!(results[0].as_ref().is_err_and(|e| e.contains("none.sgf")), "{results:?}");
    assert!(results[1..].iter().all(Result::is_ok));
    // A truncated archive: the records before the break are visited, then the error.
    let xz = std::fs::read(&archives[0]).unwrap();
    let cut = dir.join("cut.tar.xz");
    std::fs::write(&cut, &xz[..xz.len() / 2]).unwrap();
    let mut seen = 0;
    let e = for_each_record(std::slice::from_ref(&cut), |_| {
        seen += 1;
        ControlFlow::Continue(())
    })
    .unwrap_err();
    assert!(matches!(e, ArchiveError::Corrupt { kind: "tar.xz", .. }), "{e:?}");
    assert!(seen < 3);
    let e = visit_all(&[{
        let p = dir.join("junk.zip");
        std::fs::write(&p, b"not a zip").unwrap();
        p
    }])
    .unwrap_err();
    assert!(matches!(e, ArchiveError::Corrupt { kind: "zip", .. }), "{e:?}");
    // An entry too large to be a record is skipped without reading it whole.
    let mut builder = tar::Builder::new(Vec::new());
    let big = vec![b'x'; MAX_RECORD_BYTES as usize + 1];
    let mut header = tar::Header::new_gnu();
    header.set_size(big.len() as u64);
    header.set_cksum();
    builder.append_data(&mut header, "big.sgf", big.as_slice()).unwrap();
    let tar = dir.join("big.tar");
    std::fs::write(&tar, builder.into_inner().unwrap()).unwrap();
    assert_eq!(visit_all(&[tar]).unwrap().0, Counts { records: 0, skipped: 1 });
    // A FIFO is refused at once, never opened.
    let fifo = dir.join("fifo.sgf");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let mut error = None;
        for_each_record(&[fifo], |e| {
            error = e.bytes.err().map(|e| e.to_string());
            ControlFlow::Continue(())
        })
        .unwrap();
        assert!(error.is_some_and(|e| e.contains("FIFO")));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn record_names_are_matched_on_bytes() {
    use zertz_archive::is_record_name;
    assert!(is_record_name("games/é.SGF") && is_record_name("a.sgf"));
    // A multi-byte character across the last four bytes (found by the fuzzer: once a panic).
    assert!(!is_record_name("games/a╟SGF") && !is_record_name("╟sgf") && !is_record_name(".sgf"));
}
