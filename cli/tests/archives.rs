//! `zertz replay` and `zertz dataset` on hostile archives: names that hold terminal escapes, and
//! tar headers that claim gigabytes.

mod common;
use common::{temp_dir, zertz as run};

use std::path::Path;
use std::process::{Command, Output};

/// A record that replays (one turn).
const RECORD: &[u8] = b"(;GM[22]SU[Zertz];P0[RtoB 2 0 D 4];P0[R- A 1])";

/// An entry name that sets the terminal's title and reverses the text after it.
const HOSTILE: &str = "\x1b]0;pwned\x07\u{202e}a.sgf";

/// How [`HOSTILE`] must be shown.
const SHOWN: &str = r"\u{1b}]0;pwned\u{7}\u{202e}a.sgf";

/// A GNU tar header block of type `kind` for `name` (at most 100 bytes), claiming `size` bytes.
fn header(kind: u8, name: &[u8], size: u64) -> Vec<u8> {
    let mut h = vec![0u8; 512];
    h[..name.len()].copy_from_slice(name);
    h[100..108].copy_from_slice(b"0000644\0");
    h[108..116].copy_from_slice(b"0000000\0");
    h[116..124].copy_from_slice(b"0000000\0");
    h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    h[136..148].copy_from_slice(b"00000000000\0");
    h[156] = kind;
    h[257..265].copy_from_slice(b"ustar  \0");
    h[148..156].fill(b' ');
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

/// A regular file's entry: header and content, padded to 512 bytes.
fn file_entry(name: &[u8], content: &[u8]) -> Vec<u8> {
    let mut out = header(b'0', name, content.len() as u64);
    out.extend_from_slice(content);
    out.resize(out.len().next_multiple_of(512), 0);
    out
}

/// Whether `text` holds a character that a terminal acts on or that reorders text: a control
/// other than the newline, or a bidi override or isolate.
fn has_raw_control(text: &str) -> bool {
    let bidi = |c: char| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    text.chars().any(|c| (c.is_control() && c != '\n') || bidi(c))
}

/// Runs `zertz ARGS`, returns (status, stdout, stderr), and checks that neither output holds a
/// raw control character or bidi override.
fn run_shown(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let out = run(args);
    let (stdout, stderr) =
        (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap());
    assert!(!has_raw_control(&stdout), "{args:?}: raw control in stdout {stdout:?}");
    assert!(!has_raw_control(&stderr), "{args:?}: raw control in stderr {stderr:?}");
    (out.status.code(), stdout, stderr)
}

#[test]
fn replay_and_dataset_show_hostile_names_escaped() {
    let dir = temp_dir("names");
    // An archive: a record under the hostile name, a broken one whose error quotes its text.
    let mut tar = file_entry(HOSTILE.as_bytes(), RECORD);
    tar.extend(file_entry(b"broken\x1b[31m.sgf", b"(;GM[\x1b[2J\xe2\x80\xae])"));
    tar.extend(vec![0; 1024]);
    let archive = dir.join("names.tar");
    std::fs::write(&archive, &tar).unwrap();
    let (code, stdout, _) = run_shown(&["replay".as_ref(), archive.as_os_str()]);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains(&format!("names.tar:{SHOWN}: 37 rings, 1 turns")), "{stdout}");
    assert!(
        stdout.contains(
            r"names.tar:broken\u{1b}[31m.sgf: error: not a ZÈRTZ record: GM[\u{1b}[2J\u{202e}]"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("2 records: 1 replayed, 1 failed"), "{stdout}");
    // --json escapes through serde (C0 controls as \u001b) and gives the name back whole.
    let out = run(&["replay".as_ref(), "--json".as_ref(), archive.as_os_str()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!stdout.contains('\x1b') && !stdout.contains('\x07'), "{stdout:?}");
    let first: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(first["file"], format!("{}:{HOSTILE}", archive.display()));
    // A folder's file under the hostile name.
    let folder = dir.join("folder");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join(HOSTILE), RECORD).unwrap();
    let (code, stdout, _) = run_shown(&["replay".as_ref(), folder.as_os_str()]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains(&format!("folder/{SHOWN}: 37 rings")), "{stdout}");
    // An archive that cannot be read, under a hostile name: the error line escapes it, in
    // replay and in dataset.
    let bad = dir.join("bad\x1b[2J\u{2066}.tar.gz");
    std::fs::write(&bad, b"not gzip").unwrap();
    let (code, _, stderr) = run_shown(&["replay".as_ref(), bad.as_os_str()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(r"bad\u{1b}[2J\u{2066}.tar.gz is not a readable tar.gz"), "{stderr}");
    let out = dir.join("dataset");
    let (code, _, stderr) =
        run_shown(&["dataset".as_ref(), bad.as_os_str(), "--out".as_ref(), out.as_os_str()]);
    assert_ne!(code, Some(0), "{stderr}");
    assert!(stderr.contains(r"bad\u{1b}[2J\u{2066}.tar.gz is not a readable tar.gz"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `zertz ARGS` with its data size limited to `kib` KiB (`ulimit -d`).
fn run_limited(kib: u64, args: &[&Path]) -> Output {
    Command::new("sh")
        .args(["-c", &format!(r#"ulimit -d {kib} && exec "$0" "$@""#)])
        .arg(env!("CARGO_BIN_EXE_zertz"))
        .args(args)
        .output()
        .expect("sh runs")
}

/// A tar whose record `first.sgf` is followed by a GNU long name header claiming 3 GiB, and the
/// 3 GiB of zeros it claims (a sparse file: nothing on disk), read by `zertz replay` with its data
/// size limited to 512 MiB more than it needs to start (libtorch's libraries take hundreds of
/// MiB: the need is measured on a small record first). Reading the header into memory, as the
/// `tar` crate does by itself, fails there ("out of memory"); the bounded walk refuses the header
/// at once.
#[test]
fn replay_refuses_a_tar_header_of_gigabytes_in_bounded_memory() {
    let dir = temp_dir("huge-header");
    let small = dir.join("small.sgf");
    std::fs::write(&small, RECORD).unwrap();
    let mib = 1024;
    let start = (1..=8)
        .map(|i| i * 256 * mib)
        .find(|&kib| run_limited(kib, &[Path::new("replay"), &small]).status.success())
        .expect("zertz starts with at most 2 GiB of data");
    let claimed: u64 = 3 << 30;
    let mut tar = file_entry(b"first.sgf", RECORD);
    tar.extend(header(b'L', b"././@LongLink", claimed));
    let path = dir.join("huge-header.tar");
    std::fs::write(&path, &tar).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(tar.len() as u64 + claimed + 1024).unwrap();
    drop(file);
    let started = std::time::Instant::now();
    let out = run_limited(start + 512 * mib, &[Path::new("replay"), &path]);
    let seconds = started.elapsed().as_secs_f64();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(stdout.contains("huge-header.tar:first.sgf: 37 rings"), "{stdout}");
    assert!(
        stderr.contains(
            "huge-header.tar is not a readable tar archive: a GNU long name header of 3221225472 \
             bytes (at most 65536)"
        ),
        "{stderr}"
    );
    // Only a walk that never ends takes a minute, however busy the machine.
    assert!(seconds < 60.0, "{seconds:.1} s");
    std::fs::remove_dir_all(&dir).unwrap();
}
