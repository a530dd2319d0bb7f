//! End-to-end tests of the `zertz` program.

use std::path::PathBuf;
use std::process::{Command, Output};

fn zertz(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zertz")).args(args).output().expect("zertz runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn games_dir() -> PathBuf {
    std::env::var("ZERTZ_GAMES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/games"))
}

#[test]
fn perft_prints_one_line_per_depth() {
    let o = zertz(&["perft", "--board", "37", "--depth", "2"]);
    assert!(o.status.success());
    assert_eq!(stdout(&o), "1 1944\n2 3277260\n");
    let o = zertz(&["perft", "--board", "48", "--depth", "1"]);
    assert_eq!(stdout(&o), "1 2961\n");
}

#[test]
fn perft_after_moves_and_blitz() {
    let o = zertz(&["perft", "--board", "37", "--blitz", "--moves", "Wd4,a1", "--depth", "1"]);
    assert!(o.status.success());
    let n: u64 = stdout(&o).trim().strip_prefix("1 ").unwrap().parse().unwrap();
    let pos = zertz_env_start_after("Wd4,a1");
    assert_eq!(n, pos);
}

fn zertz_env_start_after(m: &str) -> u64 {
    use zertz_env::{Board, MarbleSet, Player, Position, Variant};
    let pos = Position::new(Variant::new(Board::R37, MarbleSet::Blitz), Player::P0);
    let mv = pos.parse_legal_move(m).unwrap();
    pos.play(&mv).unwrap().count_legal_moves()
}

#[test]
fn perft_names_the_first_illegal_move() {
    let o = zertz(&["perft", "--moves", "Wd4,a1 Wd4,a2", "--depth", "1"]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("move 2 (Wd4,a2)"), "{err}");
    let o = zertz(&["perft", "--board", "50", "--depth", "1"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no 50-ring board"));
}

#[test]
fn finished_games_have_no_moves() {
    // A position where P1 holds four whites: the game is over.
    let text = "37 standard ..../...../....../......./....../...../.... 2/8/10 0/0/0 4/0/0 P0 - 0";
    let o = zertz(&["perft", "--position", text, "--depth", "2"]);
    assert_eq!(stdout(&o), "1 0\n2 0\n");
}

#[test]
fn replay_json_matches_expected() {
    let dir = games_dir();
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    for name in ["zertz-00000.sgf", "zertz-00067.sgf", "zertzp11-00150.sgf", "zertzp24-00250.sgf"] {
        let path = dir.join(name);
        let o = zertz(&["replay", "--json", path.to_str().unwrap()]);
        assert!(o.status.success(), "{name}");
        let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert_eq!(line["file"], path.to_str().unwrap());
        assert_eq!(line["ok"], true);
        for key in ["board", "moves", "legal_counts", "turns", "winner", "end", "captures"] {
            assert_eq!(line[key], expected[name][key], "{name} {key}");
        }
    }
}

#[test]
fn replay_reports_bad_records_and_goes_on() {
    let dir = std::env::temp_dir().join(format!("zertz-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.sgf");
    std::fs::write(
        &bad,
        "(;GM[22]SU[Zertz];P0[RtoB 2 0 D 4];P0[R- A 1];P1[RtoB 2 0 D 4];P1[R- A 2])",
    )
    .unwrap();
    let good = games_dir().join("zertz-00000.sgf");
    let o = zertz(&["replay", "--json", bad.to_str().unwrap(), good.to_str().unwrap()]);
    assert!(!o.status.success());
    let lines: Vec<serde_json::Value> =
        stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["ok"], false);
    assert_eq!(lines[0]["error"], "turn 2: illegal move Wd4,a2");
    assert_eq!(lines[1]["ok"], true);
    // The readable summary counts both.
    let o = zertz(&["replay", dir.to_str().unwrap(), good.to_str().unwrap()]);
    let out = stdout(&o);
    assert!(out.contains("2 records: 1 replayed, 1 failed"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn show_draws_the_board() {
    let o = zertz(&["show", "--board", "37", "--moves", "Wd4,a1"]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("(W)"));
    assert!(!out.contains(" a1"), "a1 was removed:\n{out}");
    assert!(out.contains(" a2"));
    assert!(out.contains("P1 to move"));
    let o = zertz(&["show", "--board", "61", "--verbose"]);
    assert!(stdout(&o).contains("position: 61 standard"));
}

#[test]
fn match_prints_the_score_and_elo() {
    let path = std::env::temp_dir().join(format!("zertz-cli-match-{}.jsonl", std::process::id()));
    let o = zertz(&[
        "match",
        "--player",
        "greedy",
        "--player",
        "random",
        "--games",
        "4",
        "--threads",
        "2",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(out.contains("greedy vs random: 4 games on 37 standard"), "{out}");
    assert!(out.contains("greedy: ") && out.contains(" wins, "), "{out}");
    assert!(out.contains("Elo of greedy over random: "), "{out}");
    let lines = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(lines.lines().count(), 4);
    for line in lines.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v["moves"].as_array().is_some_and(|m| !m.is_empty()));
    }
    // Exactly two players, known ones.
    let o = zertz(&["match", "--player", "greedy", "--games", "2"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("exactly two players"));
    // A neural player whose model file is missing: one clear line, not a crash.
    let o = zertz(&["match", "--player", "greedy", "--player", "nn:no-such-model.pt"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot read model no-such-model.pt") && err.lines().count() == 1,
        "{err}"
    );
    // The --json form.
    let o = zertz(&["match", "--player", "greedy", "--player", "random", "--games", "2", "--json"]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!((v["games"].as_u64(), v["a"].as_str()), (Some(2), Some("greedy")));
    assert!(v["score"].as_f64().is_some_and(|s| (0.0..=1.0).contains(&s)));
}

#[test]
fn selfplay_writes_shards_and_records() {
    let dir = std::env::temp_dir().join(format!("zertz-cli-selfplay-{}", std::process::id()));
    let o = zertz(&[
        "selfplay",
        "--games",
        "3",
        "--threads",
        "2",
        "--evaluator",
        "uniform",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).starts_with("3 games in"), "{}", stdout(&o));
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("shard-") && n.ends_with(".npz")), "{names:?}");
    assert!(names.iter().any(|n| n.ends_with(".jsonl")), "{names:?}");
    std::fs::remove_dir_all(&dir).unwrap();
    let o = zertz(&["selfplay", "--evaluator", "neural"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown evaluator"));
}

#[test]
fn play_takes_moves_explains_mistakes_and_undoes() {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_zertz"))
        .args(["play", "--opponent", "greedy"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"Wd4,a1\nundo\nWz9\nmoves\nquit\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("P1 plays "), "the engine answered:\n{text}");
    assert!(text.contains("Undone."), "{text}");
    assert!(text.contains("no ring \"z9\"") && text.contains("Legal moves (1944)"), "{text}");
    assert!(text.contains("1944 legal moves:"), "{text}");
}

#[test]
fn records_convert_to_sgf_that_replays() {
    let dir = std::env::temp_dir().join(format!("zertz-cli-sgf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let records = dir.join("m.jsonl");
    let o = zertz(&[
        "match",
        "--player",
        "greedy",
        "--player",
        "random",
        "--games",
        "2",
        "--out",
        records.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let sgf_dir = dir.join("sgf");
    let o = zertz(&["sgf", records.to_str().unwrap(), "--out", sgf_dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout(&o).starts_with("2 SGF files written"));
    let o = zertz(&["replay", "--json", sgf_dir.to_str().unwrap()]);
    assert!(o.status.success());
    let lines: Vec<serde_json::Value> =
        stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    let played: Vec<serde_json::Value> = std::fs::read_to_string(&records)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (replayed, original) in lines.iter().zip(&played) {
        assert_eq!(replayed["moves"], original["moves"]);
        assert_eq!(replayed["winner"], original["winner"]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn train_hands_over_to_the_python_training_loop() {
    // `zertz train` runs `python -m zertz train` with the repository's .venv (test.sh sets it up
    // before the Rust tests).
    let o = zertz(&["train", "--help"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(out.contains("--config") && out.contains("--run"), "{out}");
    let o = zertz(&["train", "--config", "no-such-config.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no-such-config.toml"));
}
