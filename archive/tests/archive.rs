//! Reading records from folders, files and every kind of archive, written here by the tests.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

mod common;

use common::{archives, files, gzip, header_tars, hostile_header_tars, tar_bytes};
use zertz_archive::{
    ArchiveError, Counts, MAX_RECORD_BYTES, MAX_TAR_HEADER_BYTES, MAX_XZ_DECODER_BYTES, count_hint,
    for_each_record,
};

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

/// The records of a tar as the `tar` crate itself walks it (extension headers applied by the
/// crate, read whole: fine for these small archives): names and bytes.
fn tar_crate_records(tar: &[u8]) -> Seen {
    use std::io::Read;
    let mut archive = tar::Archive::new(tar);
    let mut seen = Vec::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let name = entry.path().unwrap().to_string_lossy().into_owned();
        if entry.header().entry_type().is_file() && zertz_archive::is_record_name(&name) {
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).unwrap();
            seen.push((name, bytes));
        }
    }
    seen
}

/// `seen` with the archive's path taken off the names.
fn inner_names(path: &Path, seen: Seen) -> Seen {
    let prefix = format!("{}:", path.display());
    seen.into_iter().map(|(n, b)| (n.strip_prefix(&prefix).unwrap().to_string(), b)).collect()
}

#[test]
fn tar_extension_headers_name_entries_as_the_tar_crate_does() {
    let dir = temp_dir("headers");
    let long = |len| String::from_utf8(common::long_name(len)).unwrap();
    let expected = [
        vec![long(300), long(200), "games/\u{fffd}\u{fffd}.sgf".into(), "plain.sgf".into()],
        vec![
            long(150),
            "games/pax \u{265f}.sgf".into(),
            "after-global.sgf".into(),
            "games/long-wins.sgf".into(),
            "after-malformed.sgf".into(),
        ],
    ];
    let mut tars = header_tars();
    tars.push(("r.tar", tar_bytes()));
    for (i, (name, tar)) in tars.into_iter().enumerate() {
        let by_crate = tar_crate_records(&tar);
        for (file, bytes) in [(name.to_string(), tar.clone()), (format!("{name}.gz"), gzip(&tar))] {
            let path = dir.join(&file);
            std::fs::write(&path, bytes).unwrap();
            let (counts, seen) = visit_all(std::slice::from_ref(&path)).unwrap();
            let seen = inner_names(&path, seen);
            assert_eq!(seen, by_crate, "{file}");
            assert_eq!(counts.records as usize, seen.len(), "{file}");
            if let Some(names) = expected.get(i) {
                let got: Vec<&String> = seen.iter().map(|(n, _)| n).collect();
                assert_eq!(got, names.iter().collect::<Vec<_>>(), "{file}");
                assert!(seen.iter().all(|(_, b)| b == common::RECORD), "{file}");
            }
        }
    }
    // A long name of exactly the bound is read.
    let mut tar = common::tar_entry(
        tar::EntryType::GNULongName,
        b"././@LongLink",
        &common::long_name(MAX_TAR_HEADER_BYTES as usize),
    );
    tar.extend(common::tar_entry(tar::EntryType::Regular, b"x", common::RECORD));
    tar.extend(common::tar_end());
    let path = dir.join("at-the-bound.tar");
    std::fs::write(&path, &tar).unwrap();
    let (_, seen) = visit_all(std::slice::from_ref(&path)).unwrap();
    assert_eq!(inner_names(&path, seen), tar_crate_records(&tar));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hostile_tar_headers_make_the_archive_corrupt_with_a_reason() {
    let dir = temp_dir("hostile-headers");
    for (name, tar, words) in hostile_header_tars() {
        for (file, bytes, kind) in
            [(name.to_string(), tar.clone(), "tar"), (format!("{name}.gz"), gzip(&tar), "tar.gz")]
        {
            let path = dir.join(&file);
            std::fs::write(&path, bytes).unwrap();
            let mut seen = Vec::new();
            let started = std::time::Instant::now();
            let e = for_each_record(std::slice::from_ref(&path), |e| {
                seen.push(e.name.rsplit(':').next().unwrap().to_string());
                ControlFlow::Continue(())
            })
            .unwrap_err();
            // At once; only a walk that never ends takes a minute, whatever the load.
            assert!(started.elapsed().as_secs_f64() < 60.0, "{file}");
            let ArchiveError::Corrupt { kind: k, ref reason, .. } = e else {
                panic!("{file}: {e:?}")
            };
            assert_eq!(k, kind, "{file}");
            assert!(reason.contains(words), "{file}: {reason}");
            let first = tar.starts_with(&common::tar_entry(
                tar::EntryType::Regular,
                b"first.sgf",
                common::RECORD,
            ));
            assert_eq!(seen, if first { vec!["first.sgf"] } else { vec![] }, "{file}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `.tar.gz` whose record `first.sgf` is followed by an extension header of `kind` that claims
/// 3 GiB, and 3 GiB of zeros after it (gzip members of 1 MiB of zeros each: 3 MB on disk).
fn gigabyte_header_tar_gz(kind: tar::EntryType) -> Vec<u8> {
    let mut head = common::tar_entry(tar::EntryType::Regular, b"first.sgf", common::RECORD);
    head.extend(common::header_block(kind, b"././@LongLink", 3 << 30));
    let mut out = gzip(&head);
    let zeros = gzip(&vec![0; 1 << 20]);
    for _ in 0..3 << 10 {
        out.extend_from_slice(&zeros);
    }
    out.extend(gzip(&common::tar_end()));
    out
}

/// The walk of the child process of [`huge_tar_headers_are_refused_in_bounded_memory`].
const CHILD_WALK: &str = "ZERTZ_ARCHIVE_TEST_BOUNDED_WALK";

/// A GNU long name or PAX header that claims 3 GiB, and holds it (3 GiB of zeros in 3 MB of
/// gzip), ends the walk at once with a corrupt archive, never read: the walk runs in a child
/// process whose data size is limited to 256 MiB (`ulimit -d`), so that reading the header into
/// memory (what the `tar` crate does by itself) aborts the child on a failed allocation.
#[test]
fn huge_tar_headers_are_refused_in_bounded_memory() {
    if let Ok(path) = std::env::var(CHILD_WALK) {
        let mut seen = 0;
        let e = for_each_record(&[PathBuf::from(path)], |_| {
            seen += 1;
            ControlFlow::Continue(())
        })
        .unwrap_err();
        println!("child walk: {seen} records, then: {e}");
        return;
    }
    let dir = temp_dir("bounded-memory");
    for (kind, what) in [
        (tar::EntryType::GNULongName, "a GNU long name header of 3221225472 bytes"),
        (tar::EntryType::XHeader, "a PAX header of 3221225472 bytes"),
    ] {
        let path = dir.join("huge-header.tar.gz");
        std::fs::write(&path, gigabyte_header_tar_gz(kind)).unwrap();
        let started = std::time::Instant::now();
        let out = std::process::Command::new("sh")
            .args(["-c", r#"ulimit -d 262144 && exec "$0" "$@""#])
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "huge_tar_headers_are_refused_in_bounded_memory",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_WALK, &path)
            .output()
            .unwrap();
        let seconds = started.elapsed().as_secs_f64();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{what}: {:?}\n{stdout}\n{stderr}", out.status);
        assert!(stdout.contains("child walk: 1 records, then: "), "{stdout}");
        assert!(stdout.contains(what), "{stdout}");
        assert!(seconds < 60.0, "{what}: {seconds:.1} s");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `xz` with the LZMA2 dictionary of its first block set to `code` (the block header's
/// dictionary byte), its CRC32 made right again.
fn xz_with_dictionary(code: u8) -> Vec<u8> {
    let mut xz = archives().remove(0).1;
    // Stream header (12 bytes), then the block header: size, flags (no sizes), the LZMA2 filter
    // (id 0x21, 1 byte of properties: the dictionary), padding, CRC32.
    let size = (usize::from(xz[12]) + 1) * 4;
    assert_eq!((xz[13], xz[14], xz[15]), (0, 0x21, 1), "the layout of xz2's block header");
    xz[16] = code;
    let mut crc = flate2::Crc::new();
    crc.update(&xz[12..12 + size - 4]);
    xz[12 + size - 4..12 + size].copy_from_slice(&crc.sum().to_le_bytes());
    xz
}

#[test]
fn xz_streams_that_ask_for_too_much_memory_are_corrupt() {
    let dir = temp_dir("xz-memory");
    let path = dir.join("dict.tar.xz");
    // 64 MiB (xz -9) reads; 1.5 GiB and 4 GiB are past MAX_XZ_DECODER_BYTES.
    for (code, dictionary) in [(28u8, 64u64 << 20), (37, 3 << 29), (40, u64::from(u32::MAX))] {
        std::fs::write(&path, xz_with_dictionary(code)).unwrap();
        let result = visit_all(std::slice::from_ref(&path));
        if dictionary < MAX_XZ_DECODER_BYTES {
            assert_eq!(result.unwrap().0, Counts { records: 3, skipped: 1 }, "{code}");
        } else {
            let e = result.unwrap_err();
            assert!(matches!(e, ArchiveError::Corrupt { kind: "tar.xz", .. }), "{e:?}");
            assert!(e.to_string().contains("xz stream needs more than 128 MiB of memory"), "{e}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn names_reach_the_visitor_raw_and_messages_escaped() {
    let dir = temp_dir("escapes");
    let hostile = "\x1b]0;pwned\x07\u{202e}a.sgf";
    let mut tar = common::tar_entry(tar::EntryType::Regular, hostile.as_bytes(), common::RECORD);
    tar.extend(common::tar_end());
    let path = dir.join("names.tar");
    std::fs::write(&path, &tar).unwrap();
    let (_, seen) = visit_all(std::slice::from_ref(&path)).unwrap();
    assert_eq!(inner_names(&path, seen)[0].0, hostile);
    // Archive errors name the archive, escaped: a corrupt archive and a missing record file.
    let bad = dir.join("bad\x1b[2J\u{2066}.tar.gz");
    std::fs::write(&bad, b"not gzip").unwrap();
    let missing = dir.join("gone\x1b]0;x\x07.sgf");
    let mut read_error = String::new();
    for_each_record(std::slice::from_ref(&missing), |e| {
        read_error = e.bytes.unwrap_err().to_string();
        ControlFlow::Continue(())
    })
    .unwrap();
    let corrupt = visit_all(&[bad]).unwrap_err().to_string();
    for (message, shown) in
        [(&corrupt, r"bad\u{1b}[2J\u{2066}.tar.gz"), (&read_error, r"gone\u{1b}]0;x\u{7}.sgf")]
    {
        assert!(message.contains(shown), "{message}");
        assert!(!message.chars().any(|c| c.is_control() || c == '\u{2066}'), "{message:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
