//! The `zertz` program against careless or hostile use of its outputs, its programs and its
//! signals: output files are never replaced (nor a FIFO opened), a `cmd:` program that hangs is
//! given up at its answer time, and SIGTERM ends a match with the programs it started.

mod common;
use common::{NEVER, spawn, stderr, stdout, temp_dir, wait_within, zertz_within};

use std::path::Path;
use std::process::{Command, Output};
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
    let o = zertz_within(&[&base[..], &[out.to_str().unwrap()]].concat(), NEVER);
    let err = refused(&o, 2);
    assert!(err.contains("nothing is ever replaced"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious\n");
    let fifo = dir.join("pipe.jsonl");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = zertz_within(&[&base[..], &[fifo.to_str().unwrap()]].concat(), NEVER);
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
    let o = zertz_within(&args, NEVER);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::write(sgf.join("1.sgf"), "mine").unwrap();
    std::fs::remove_file(sgf.join("0.sgf")).unwrap();
    // Again into the same folder: 1.sgf is there, so nothing is written, 0.sgf included.
    let o = zertz_within(&args, NEVER);
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

/// Whether the process whose pid `pidfile` holds has ended (gone, or a zombie), within
/// [`NEVER`] seconds.
fn ended(pidfile: &Path) -> bool {
    let pid = std::fs::read_to_string(pidfile).unwrap().trim().to_string();
    let deadline = Instant::now() + Duration::from_secs(NEVER);
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
    // The answer time holds for `name` and `newgame` too: long enough for a shell to start on a
    // busy machine. Given up after it, not after the program's `sleep 1000`.
    let started = Instant::now();
    let o = zertz_within(&[&args[..], &["--answer-time", "3"]].concat(), NEVER);
    let err = refused(&o, 1);
    assert!(err.contains("it did not answer 'genmove' within 3 s"), "{err}");
    assert!(started.elapsed() >= Duration::from_secs(3), "{:?}", started.elapsed());
    assert!(ended(&pid), "the program's own child is ended too");
    // An answer time out of range is refused before anything starts.
    for bad in ["0", "-1", "nan", "1e9"] {
        let o = zertz_within(&[&args[..], &["--answer-time", bad]].concat(), NEVER);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn sigterm_stops_a_match_and_ends_its_programs() {
    let dir = temp_dir("term");
    let pid = dir.join("sleep.pid");
    // Once the program is asked for a move (it makes the file `asked`), the match is under way.
    let asked = dir.join("asked");
    let player = program(&pid, &format!("touch {}; sleep 1000", asked.display()));
    let args = ["match", "--player", &player, "--player", "random", "--games", "2"];
    let child = spawn(&args);
    let deadline = Instant::now() + Duration::from_secs(NEVER);
    while !asked.exists() {
        assert!(Instant::now() < deadline, "the program was never asked for a move");
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let o = wait_within(child, NEVER, "match");
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
        zertz_within(&["match", "--player", "greedy", "--player", "random", "--games", "1"], NEVER);
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
        let o = zertz_within(args, NEVER);
        let err = stderr(&o);
        let parts: Vec<&str> = err.trim().split(": ").collect();
        for (i, p) in parts.iter().enumerate() {
            assert!(!parts[i + 1..].contains(p), "{args:?} says {p:?} twice: {err}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Starts `zertz match ARGS --out OUT`, waits until `games` records are in OUT and 0.7 s more,
/// sends `signals` (`-INT`, `-TERM`, `-KILL`) at once, one after the other, and gives the output
/// (killed, failing the test, past [`NEVER`] seconds: how soon a stop ends a match is a figure of
/// `scripts/bench-stops.py`, and a busy machine may take its time) with OUT's lines.
fn signalled_match(args: &[&str], games: usize, signals: &[&str]) -> (Output, Vec<String>) {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = temp_dir(&format!("signalled-{call}"));
    let out = dir.join("games.jsonl");
    let child = spawn(&[&["match", "--out", out.to_str().unwrap()], args].concat());
    let lines = || std::fs::read_to_string(&out).map_or(0, |s| s.lines().count());
    let deadline = Instant::now() + Duration::from_secs(NEVER);
    // The match makes OUT once it has started (loading libtorch takes a while on a busy machine).
    while !out.exists() || lines() < games {
        assert!(Instant::now() < deadline, "{games} games never ended: {args:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The games under way are well into a decision (on a busy machine, maybe not yet).
    std::thread::sleep(Duration::from_millis(700));
    for signal in signals {
        let id = child.id().to_string();
        assert!(Command::new("kill").args([*signal, id.as_str()]).status().unwrap().success());
    }
    let o = wait_within(child, NEVER, "match");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'), "a torn last record: {text}");
    std::fs::remove_dir_all(&dir).unwrap();
    (o, text.lines().map(str::to_string).collect())
}

#[test]
fn a_signal_stops_an_alphabeta_search_and_every_finished_game_is_kept() {
    // alphabeta:time=3600 thinks an hour a move: the stop reaches its search (it ran on for its
    // time before), and the game it cut short is not recorded.
    let args = ["--player", "random", "--player", "alphabeta:time=3600", "--games", "4"];
    let args = [&args[..], &["--threads", "1", "--opening-actions", "0"]].concat();
    for signals in [&["-INT"][..], &["-TERM"]] {
        let (o, lines) = signalled_match(&args, 0, signals);
        assert_eq!(o.status.code(), Some(1), "{signals:?}: {}", stderr(&o));
        assert!(lines.is_empty(), "{lines:?}");
    }
}

#[test]
fn a_second_signal_or_a_kill_keeps_the_records_of_the_finished_games() {
    // Games of random against greedy end in milliseconds; once 5 are in the file, two Ctrl-C at
    // once (the second exits at once, if the first has not ended the match yet) or a kill -9.
    // Every record is whole: each was written as its game ended (they were buffered 8 KiB at a
    // time, and two Ctrl-C left the file empty).
    let args = ["--player", "random", "--player", "greedy", "--games", "100000", "--threads", "1"];
    for signals in [&["-INT", "-INT"][..], &["-KILL"]] {
        let (o, lines) = signalled_match(&args, 5, signals);
        let ended = o.status.code();
        assert!(matches!(ended, Some(1 | 130) | None), "{signals:?}: {ended:?} {}", stderr(&o));
        assert!(lines.len() >= 5, "{signals:?}: {} records", lines.len());
        for line in &lines {
            let record: serde_json::Value = serde_json::from_str(line).expect("whole JSON lines");
            assert!(record["moves"].is_array(), "{record}");
        }
    }
}
