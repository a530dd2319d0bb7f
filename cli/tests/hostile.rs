//! The `zertz` program against careless or hostile use of its outputs, its programs and its
//! signals: output files are never replaced (nor a FIFO opened), a `cmd:` program that hangs is
//! given up at its answer time, and SIGTERM ends a match with the programs it started.

mod common;
use common::{stderr, stdout, temp_dir, wait_within, zertz_within};

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The one line of an error, with status 2 (a refusal) or 1 (a failure while working).
fn refused(o: &Output, status: i32) -> String {
    assert_eq!(o.status.code(), Some(status), "{}", stderr(o));
    let err = stderr(o);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    err
}

#[test]
fn a_match_never_replaces_its_records_file_nor_opens_a_fifo() {
    let dir = temp_dir("match-out");
    let out = dir.join("games.jsonl");
    std::fs::write(&out, "precious\n").unwrap();
    let base = ["match", "--player", "greedy", "--player", "random", "--games", "2", "--out"];
    let o = zertz_within(&[&base[..], &[out.to_str().unwrap()]].concat(), 30);
    let err = refused(&o, 2);
    assert!(err.contains("nothing is ever replaced"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious\n");
    let fifo = dir.join("pipe.jsonl");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = zertz_within(&[&base[..], &[fifo.to_str().unwrap()]].concat(), 10);
    let err = refused(&o, 2);
    assert!(err.contains("a FIFO of that name exists"), "{err}");
    // A new file gets every game, in game order.
    let new = dir.join("new.jsonl");
    let o = zertz_within(&[&base[..], &[new.to_str().unwrap()]].concat(), 60);
    assert!(o.status.success(), "{}", stderr(&o));
    let games: Vec<u64> = std::fs::read_to_string(&new)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["game"].as_u64().unwrap())
        .collect();
    assert_eq!(games, [0, 1]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sgf_never_replaces_a_file() {
    let dir = temp_dir("sgf");
    let records = dir.join("games.jsonl");
    let o = zertz_within(
        &["match", "--player", "greedy", "--player", "random", "--games", "2"]
            .into_iter()
            .chain(["--out", records.to_str().unwrap()])
            .collect::<Vec<_>>(),
        60,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let sgf = dir.join("sgf");
    let args = ["sgf", records.to_str().unwrap(), "--out", sgf.to_str().unwrap()];
    let o = zertz_within(&args, 30);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(sgf.join("1.sgf"), "mine").unwrap();
    std::fs::remove_file(sgf.join("0.sgf")).unwrap();
    // Again into the same folder: 1.sgf is there, so nothing is written, 0.sgf included.
    let o = zertz_within(&args, 30);
    let err = refused(&o, 2);
    assert!(err.contains("1.sgf exists") && err.contains("nothing is ever replaced"), "{err}");
    assert_eq!(std::fs::read_to_string(sgf.join("1.sgf")).unwrap(), "mine");
    assert!(!sgf.join("0.sgf").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `cmd:` player whose program answers `name` and `newgame`, then runs `genmove` as given;
/// the program first starts `sleep 1000` and writes its pid to `pidfile`.
fn program(pidfile: &Path, genmove: &str) -> String {
    format!(
        "cmd:sh -c \"sleep 1000 & echo $! > {}; while read -r line; do case \\\"$line\\\" in \
         genmove) {genmove};; name) printf '= fake\\n\\n';; *) printf '=\\n\\n';; esac; done\"",
        pidfile.display()
    )
}

/// Whether the process whose pid `pidfile` holds has ended (gone, or a zombie), within 5 s.
fn ended(pidfile: &Path) -> bool {
    let pid = std::fs::read_to_string(pidfile).unwrap().trim().to_string();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.rsplit(')').next().is_some_and(|s| s.trim().starts_with('Z')) => {
                return true;
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    false
}

#[test]
fn a_program_that_hangs_fails_the_match_at_its_answer_time() {
    let dir = temp_dir("hang");
    let pid = dir.join("sleep.pid");
    let player = program(&pid, "sleep 1000");
    let args =
        ["match", "--player", &player, "--player", "random", "--games", "2", "--threads", "1"];
    let started = Instant::now();
    let o = zertz_within(&[&args[..], &["--answer-time", "0.5"]].concat(), 20);
    let err = refused(&o, 1);
    assert!(err.contains("it did not answer 'genmove' within 0.5 s"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(ended(&pid), "the program's own child is ended too");
    // An answer time out of range is refused before anything starts.
    for bad in ["0", "-1", "nan", "1e9"] {
        let o = zertz_within(&[&args[..], &["--answer-time", bad]].concat(), 10);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sigterm_stops_a_match_and_ends_its_programs() {
    let dir = temp_dir("term");
    let pid = dir.join("sleep.pid");
    let player = program(&pid, "sleep 1000");
    let args = ["match", "--player", &player, "--player", "random", "--games", "2"];
    let child = Command::new(env!("CARGO_BIN_EXE_zertz"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the program runs (it writes its pid first), the match is under way.
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&pid).map_or(true, |s| s.trim().is_empty()) {
        assert!(Instant::now() < deadline, "the program never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let o = wait_within(child, 10, "match");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // A notice when the signal comes, then the one line of the error.
    let err = stderr(&o);
    let lines: Vec<&str> = err.trim_end().lines().collect();
    assert_eq!(
        lines,
        ["stopping (again to stop at once)", "error: the match was stopped after 0 games"]
    );
    assert!(ended(&pid), "SIGTERM ends the programs of the match");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_sided_results_print_their_interval_not_a_false_plus_minus() {
    let o =
        zertz_within(&["match", "--player", "greedy", "--player", "random", "--games", "1"], 30);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    // One game won: not "-0 ± 0" (an even score known exactly).
    assert!(out.contains("Elo of greedy over random: +120 (95%: -120 to +120)"), "{out}");
}

#[test]
fn errors_say_each_reason_once() {
    let dir = temp_dir("reasons");
    std::fs::write(dir.join("a.txt"), "x").unwrap();
    let cases: [&[&str]; 3] = [
        &["match", "--config", "/no/such/match.toml"],
        &["dataset", "/no/such/records.tar.gz", "--out", "/no/such/out"],
        &["dataset", "/no/such/records.tar.gz", "--out", dir.to_str().unwrap()],
    ];
    for args in cases {
        let o = zertz_within(args, 10);
        let err = stderr(&o);
        let parts: Vec<&str> = err.trim().split(": ").collect();
        for (i, p) in parts.iter().enumerate() {
            assert!(!parts[i + 1..].contains(p), "{args:?} says {p:?} twice: {err}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
