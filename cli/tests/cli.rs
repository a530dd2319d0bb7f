//! End-to-end tests of the `zertz` program.

mod common;
use common::{NEVER, assert_one_line, stderr, stdout, temp_dir, usage_error, zertz, zertz_within};

use std::path::PathBuf;
use std::process::Command;

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
    assert!(out.contains("2 records: 1 replayed, 1 failed, 0 skipped"), "{out}");
    assert!(out.contains("failed by reason: 1 illegal move"), "{out}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A .tar.gz as shipped, made here with the system's tar from two sample records and three broken
/// ones (the archive crate's tests cover .tar.xz, .tar and .zip): replayed as streams, failures counted by reason, other files
/// skipped, --quiet prints only the failures and the summary.
#[test]
fn replay_reads_archives_and_counts_failures_by_reason() {
    let dir = temp_dir("archives");
    let inside = dir.join("records");
    std::fs::create_dir_all(&inside).unwrap();
    for name in ["zertz-00000.sgf", "zertzp11-00150.sgf"] {
        std::fs::copy(games_dir().join(name), inside.join(name)).unwrap();
    }
    let broken = [
        ("x-illegal.sgf", "(;GM[22];P0[RtoB 2 0 D 4];P0[R- A 1];P1[RtoB 2 0 D 4];P1[R- A 2])"),
        ("x-edit.sgf", "(;GM[22];P0[RtoB 2 0 D 4];P0[7 Edit])"),
        ("x-chess.sgf", "(;GM[1])"),
    ];
    for (name, text) in broken {
        std::fs::write(inside.join(name), text).unwrap();
    }
    std::fs::write(inside.join("notes.txt"), "not a record").unwrap();
    let archive = dir.join("records.tar.gz");
    let made = Command::new("tar")
        .arg("czf")
        .arg(&archive)
        .arg("-C")
        .arg(&dir)
        .arg("records")
        .status()
        .unwrap();
    assert!(made.success());
    let o = zertz(&["replay", "--quiet", archive.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("5 records: 2 replayed, 3 failed, 1 skipped"), "{out}");
    assert!(
        out.contains(
            "failed by reason: 1 illegal move, 1 not a ZÈRTZ record, 1 unreadable action \"Edit\""
        ),
        "{out}"
    );
    // Failures name the archive and the entry; replayed records print nothing with --quiet.
    assert!(out.contains("records.tar.gz:records/x-edit.sgf: error"), "{out}");
    assert!(!out.contains("zertz-00000.sgf"), "{out}");
    // --json reads archives too.
    let o = zertz(&["replay", "--json", archive.to_str().unwrap()]);
    let lines: Vec<serde_json::Value> =
        stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines.iter().filter(|l| l["ok"] == true).count(), 2);
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
    let o = zertz(&["match", "--player", "greedy", "--player", "nn:no-such-model.safetensors"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot read model no-such-model.safetensors") && err.lines().count() == 1,
        "{err}"
    );
    // The --json form.
    let o = zertz(&["match", "--player", "greedy", "--player", "random", "--games", "2", "--json"]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!((v["games"].as_u64(), v["a"].as_str()), (Some(2), Some("greedy")));
    assert!(v["score"].as_f64().is_some_and(|s| (0.0..=1.0).contains(&s)));
}

#[test]
fn alphabeta_plays_a_match_at_its_depth() {
    let o = zertz_within(
        &["match", "--player", "alphabeta:1", "--player", "random", "--games", "2"],
        60,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("alphabeta:1 vs random: 2 games on 37 standard"), "{out}");
    // Without a time per move: no such line, but what each side did.
    assert!(!out.contains("time per move"), "{out}");
    assert!(out.lines().any(|l| l.starts_with("alphabeta:1: ") && l.ends_with(" nodes per move")));
    assert!(
        out.lines().any(|l| l.starts_with("random: ") && l.ends_with(" s of CPU) per move")),
        "{out}"
    );
}

#[test]
fn a_match_at_equal_time_per_move_reports_each_players_effort() {
    let args = ["match", "--player", "alphabeta", "--player", "mcts", "--games", "2"];
    let o = zertz_within(&[&args[..], &["--move-time", "0.05", "--threads", "2"]].concat(), 60);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("time per move: 0.05 s"), "{out}");
    let effort = |name: &str, unit: &str| {
        out.lines().any(|l| {
            l.strip_prefix(name).is_some_and(|rest| {
                rest.contains(" s of CPU) and ") && rest.ends_with(&format!(" {unit} per move"))
            })
        })
    };
    assert!(effort("alphabeta: ", "nodes"), "{out}");
    assert!(effort("mcts:1000: ", "simulations"), "{out}");
    // --json has the time per move and both efforts.
    let o = zertz_within(&[&args[..], &["--move-time", "0.05", "--json"]].concat(), 60);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["move_time"].as_f64(), Some(0.05));
    for (side, unit) in [("a_effort", "nodes"), ("b_effort", "simulations")] {
        let e = &v[side];
        assert_eq!(e["unit"], unit, "{v}");
        let moves = e["moves"].as_u64().unwrap();
        assert!(moves > 0 && e["work"].as_u64().unwrap() > 0, "{v}");
        let per_move = e["seconds"].as_f64().unwrap() / moves as f64;
        // About its 0.05 s (more on a busy machine: only a search that ignores the time takes
        // half a minute a move).
        assert!((0.005..=30.0).contains(&per_move), "{side}: {per_move} s per move: {v}");
        // Alpha-beta and rollout MCTS search on the thread that asks: some CPU time, at most
        // its wall time.
        let cpu = e["cpu_seconds"].as_f64().unwrap() / moves as f64;
        assert!(cpu > 0.0 && cpu <= 1.2 * per_move + 0.005, "{side}: {cpu}: {v}");
    }
    // Without --move-time, null; a player that does not search has no unit.
    let o = zertz(&["match", "--player", "greedy", "--player", "random", "--games", "2", "--json"]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!(v["move_time"].is_null(), "{v}");
    assert!(v["a_effort"]["unit"].is_null() && v["a_effort"]["work"] == 0, "{v}");
    assert!(v["a_effort"]["moves"].as_u64().is_some_and(|m| m > 0), "{v}");
}

#[test]
fn a_time_per_move_out_of_range_is_refused_in_one_line() {
    let base = ["match", "--player", "alphabeta", "--player", "mcts", "--games", "2"];
    for bad in ["-1", "0.0001", "1e9", "3600.5"] {
        let o = zertz_within(&[&base[..], &[&format!("--move-time={bad}")]].concat(), NEVER);
        let line = usage_error(&o);
        assert!(line.contains("--move-time"), "{bad}: {line}");
        assert!(line.contains("from 0.001 to 3600"), "{bad}: {line}");
    }
    for bad in ["nan", "inf"] {
        let o = zertz_within(&[&base[..], &[&format!("--move-time={bad}")]].concat(), NEVER);
        let line = usage_error(&o);
        assert!(line.contains("--move-time") && line.contains("finite"), "{bad}: {line}");
    }
    let o = zertz_within(&[&base[..], &["--move-time", "abc"]].concat(), NEVER);
    let line = usage_error(&o);
    assert!(line.contains("\"abc\" is not a number of seconds"), "{line}");
    // A negative number as a separate word is no value for clap: refused all the same.
    let o = zertz_within(&[&base[..], &["--move-time", "-1"]].concat(), NEVER);
    usage_error(&o);
    // The answer time the same (it took clap's three lines).
    for bad in ["0", "x", "1e9"] {
        let o = zertz_within(&[&base[..], &[&format!("--answer-time={bad}")]].concat(), NEVER);
        let line = usage_error(&o);
        assert!(line.contains("--answer-time"), "{bad}: {line}");
    }
    // The bounds themselves are accepted (checked without playing: a bad player follows).
    for edge in ["0.001", "3600"] {
        let o = zertz_within(
            &["match", "--player", "alphazero", "--player", "random", "--move-time", edge],
            NEVER,
        );
        assert_eq!(o.status.code(), Some(2), "{edge}: {}", stderr(&o));
        assert_one_line(&o);
        assert!(stderr(&o).contains("alphazero"), "{edge}: {}", stderr(&o));
    }
}

#[test]
fn the_time_per_move_of_a_match_config() {
    let dir = temp_dir("move-time");
    let config = dir.join("match.toml");
    for bad in ["-1", "0.0001", "7200", "nan", "inf", "\"fast\""] {
        std::fs::write(
            &config,
            format!("players = [\"alphabeta\", \"mcts\"]\nmove_time = {bad}\n"),
        )
        .unwrap();
        let o = zertz_within(&["match", "--config", config.to_str().unwrap()], NEVER);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert_one_line(&o);
        assert!(stderr(&o).contains("move_time"), "{bad}: {}", stderr(&o));
    }
    // A good one is the match's, unless --move-time overrides it; 0 is none.
    let play = |text: &str, extra: &[&str]| {
        std::fs::write(&config, text).unwrap();
        let args = ["match", "--config", config.to_str().unwrap(), "--games", "2", "--json"];
        let o = zertz_within(&[&args[..], extra].concat(), 60);
        assert!(o.status.success(), "{text}: {}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(stdout(&o).trim()).unwrap()
    };
    let players = "players = [\"alphabeta\", \"mcts:50\"]\n";
    let v = play(&format!("{players}move_time = 0.02\n"), &[]);
    assert_eq!(v["move_time"].as_f64(), Some(0.02), "{v}");
    assert_eq!(v["b_effort"]["unit"], "simulations", "{v}");
    let v = play(&format!("{players}move_time = 0.02\n"), &["--move-time", "0.01"]);
    assert_eq!(v["move_time"].as_f64(), Some(0.01), "{v}");
    let v = play("players = [\"alphabeta:1\", \"mcts:50\"]\nmove_time = 0\n", &[]);
    assert!(v["move_time"].is_null(), "{v}");
    // The example file documents the key and still loads, at its default (none).
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../configs/match.toml");
    let text = std::fs::read_to_string(&example).unwrap();
    assert!(text.lines().any(|l| l.starts_with("# move_time = ")), "{text}");
    assert!(text.contains(":time=SECONDS") && text.contains("alphabeta[:DEPTH]"), "{text}");
    let o = zertz_within(
        &["match", "--config", example.to_str().unwrap(), "--games", "2", "--json"],
        60,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!(v["move_time"].is_null() && v["games"] == 2, "{v}");
    std::fs::remove_dir_all(&dir).unwrap();
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
fn selfplay_takes_every_setting_as_an_option_over_its_config_file() {
    let dir = std::env::temp_dir().join(format!("zertz-cli-selfplay-opts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("c.toml");
    std::fs::write(&config, "games = 7\nfull_simulations = 3\n[search]\npreset = \"rollout\"\n")
        .unwrap();
    let out = dir.join("run");
    let o = zertz(&[
        "selfplay",
        "--config",
        config.to_str().unwrap(),
        "--games",
        "2",
        "--fast-simulations",
        "2",
        "--full-search-probability",
        "1",
        "--resign-threshold",
        "-1",
        "--max-actions",
        "30",
        "--threads",
        "1",
        "--evaluator",
        "uniform",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["games"], 2, "{v}");
    // Each option is checked as it is parsed (a usage error naming it); the file's keys too.
    for (args, needle) in [
        (&["--temperature", "-1"][..], "'--temperature <X>': must be a finite number, 0 or more"),
        (&["--full-search-probability", "nan"], "not a finite number"),
        (&["--games-per-worker", "0"], "'--games-per-worker <N>': must be between 1 and 65536"),
        (&["--threads", "1025"], "'--threads <N>': must be at most 1024"),
        (&["--search", "{}"], "unexpected argument '--search'"),
    ] {
        let o = zertz(&[&["selfplay", "--check"][..], args].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
    std::fs::write(&config, "[search]\nc_puct = -1\n").unwrap();
    let o = zertz(&["selfplay", "--check", "--config", config.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("search.c_puct"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_a_player_the_engine_is_the_builtin_network_where_it_plays() {
    use std::io::Write as _;
    let play = |args: &[&str]| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_zertz"))
            .arg("play")
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(b"quit\n").unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = play(&["--engine-first"]);
    assert!(text.contains("the engine (nn:builtin:") && text.contains("P0 plays "), "{text}");
    // It was trained on 37 rings with the standard marbles: elsewhere rollout MCTS.
    for args in [&["--board", "61"][..], &["--blitz"]] {
        let text = play(args);
        assert!(text.contains("the engine (mcts:1000)"), "{args:?}: {text}");
    }
    let o = zertz(&["model", "info", "builtin"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(info["path"], "builtin");
    assert!(info["provenance"]["config"].as_str().is_some_and(|c| c.contains("[run]")), "{info}");
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
    // Every record names its board: a 48-ring match converts as such (it once fell back to 37).
    let r48 = dir.join("m48.jsonl");
    let o = zertz(&[
        "match",
        "--player",
        "greedy",
        "--player",
        "random",
        "--games",
        "1",
        "--board",
        "48",
        "--out",
        r48.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sgf48 = dir.join("sgf48");
    let o = zertz(&["sgf", r48.to_str().unwrap(), "--out", sgf48.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = zertz(&["replay", "--json", sgf48.to_str().unwrap()]);
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(line["board"], 48);
    // A line that is not a record is named, and the others still convert.
    let mixed = dir.join("mixed.jsonl");
    let good = std::fs::read_to_string(&r48).unwrap();
    std::fs::write(&mixed, format!("{{\"game\": 1, \"bord\": 37}}\n{good}")).unwrap();
    let o =
        zertz(&["sgf", mixed.to_str().unwrap(), "--out", dir.join("sgf-mixed").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("mixed.jsonl:1") && err.contains("bord"), "{err}");
    assert!(stdout(&o).starts_with("1 SGF files written"), "{}", stdout(&o));
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

// ------------------------------------------------------------------------------- hostile input

use std::path::Path;
use std::sync::OnceLock;

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("ZERTZ_PYTHON") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python")
}

/// Test networks of 37 rings (written once, by the Python package of .venv or $ZERTZ_PYTHON):
/// network files `good.safetensors` and `overflow.safetensors` (weights of ±3e38, finite, whose
/// answers overflow to NaN), and `shape.pt`, a TorchScript program (which runs only with
/// --trust-code) with code-format metadata whose logits are `[B, 7]`.
fn broken_models() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = temp_dir("models");
        let script = r#"
import json, sys, torch
from zertz.nn import NetConfig, ZertzNet
from zertz.exported import export, metadata_of
from zertz_engine import CODE_FORMAT_VERSION
d = sys.argv[1]
config = NetConfig(channels=8, blocks=1, policy_rank=2, value_channels=4, value_hidden=8)
net = ZertzNet(config, boards=[37])
export(net, f"{d}/good.safetensors", boards=[37])
big = ZertzNet(config, boards=[37])
with torch.no_grad():
    for i, p in enumerate(big.parameters()):
        p.fill_(3e38 if i % 2 == 0 else -3e38)
    for b in big.buffers():
        if b.is_floating_point():
            b.fill_(3e38)
export(big, f"{d}/overflow.safetensors", boards=[37])

class Shape(torch.nn.Module):
    def __init__(self, meta: str):
        super().__init__()
        self.meta = meta

    @torch.jit.export
    def metadata(self) -> str:
        return self.meta

    def forward(self, planes: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.zeros(planes.shape[0], 7), torch.zeros(planes.shape[0])

# A program's metadata, as an older zertz exported it: no architecture of the engine's.
meta = metadata_of(net, step=0, name="shape", boards=[37], format_version=CODE_FORMAT_VERSION)
del meta["architecture"]
torch.jit.save(torch.jit.script(Shape(json.dumps(meta))), f"{d}/shape.pt")
"#;
        // From a file: TorchScript compiles the source of the module classes it scripts.
        let path = dir.join("export_broken_models.py");
        std::fs::write(&path, script).unwrap();
        let out = Command::new(python()).arg(&path).arg(&dir).output().unwrap_or_else(|e| {
            panic!("cannot run {} ({e}): run scripts/setup-python.sh", python().display())
        });
        assert!(out.status.success(), "exporting test models failed: {}", stderr(&out));
        dir
    })
}

#[test]
fn a_nan_network_fails_the_match_with_one_line_naming_it() {
    let model = broken_models().join("overflow.safetensors");
    let nn = format!("nn:{}:8", model.display());
    let args = ["match", "--player", "greedy", "--player", &nn, "--games", "2", "--threads", "1"];
    let o = zertz_within(&args, 120);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_one_line(&o);
    let err = stderr(&o);
    assert!(err.starts_with("error: ") && err.contains(&model.display().to_string()), "{err}");
    assert!(err.contains("NaN/non-finite"), "{err}");
    // Its answers through `model eval`: the same error, status 1.
    let positions = temp_dir("nan-eval").join("positions.txt");
    std::fs::write(
        &positions,
        "37 standard ..../...../....../......./....../...../.... 6/8/10 0/0/0 0/0/0 P0 - 0\n",
    )
    .unwrap();
    let o = zertz_within(
        &[
            "model",
            "eval",
            model.to_str().unwrap(),
            "--positions",
            positions.to_str().unwrap(),
            "--device",
            "cpu",
        ],
        60,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_one_line(&o);
    assert!(
        stderr(&o).contains("overflow.safetensors") && stderr(&o).contains("NaN/non-finite"),
        "{}",
        stderr(&o)
    );
}

/// A program (trusted: it runs only so) that answers logits of the wrong shape.
#[test]
fn a_network_with_wrong_output_shapes_fails_with_status_1() {
    let model = broken_models().join("shape.pt");
    let nn = format!("nn:{}:8", model.display());
    let args = [
        "match",
        "--player",
        &nn,
        "--player",
        "random",
        "--games",
        "2",
        "--threads",
        "2",
        "--trust-code",
    ];
    let o = zertz_within(&args, 120);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_one_line(&o);
    let err = stderr(&o);
    assert!(err.contains("shape.pt") && err.contains("expected [1, 4441]"), "{err}");
    // Self-play guided by it: status 1 too.
    let out = temp_dir("shape-selfplay").join("out");
    let o = zertz_within(
        &[
            "selfplay",
            "--model",
            model.to_str().unwrap(),
            "--device",
            "cpu",
            "--games",
            "1",
            "--threads",
            "1",
            "--out",
            out.to_str().unwrap(),
            "--trust-code",
        ],
        120,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("shape.pt"), "{}", stderr(&o));
}

/// The TorchScript file of the built-in network before network files: a program.
fn torchscript_builtin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../model/tests/data/builtin-v1.pt")
}

/// A TorchScript file is a program: refused, in one line that names it and the command that
/// converts it, by every command that loads networks; played with --trust-code.
#[test]
fn a_torchscript_file_is_refused_unless_its_code_is_trusted() {
    let model = torchscript_builtin();
    let m = model.to_str().unwrap();
    let nn = format!("nn:{m}:8");
    let game = ["match", "--player", &nn, "--player", "random", "--games", "2", "--device", "cpu"];
    let dir = temp_dir("torchscript");
    let positions = dir.join("positions.txt");
    std::fs::write(&positions, "").unwrap();
    let p = positions.to_str().unwrap();
    let out = dir.join("selfplay");
    for args in [
        &game[..],
        &["model", "info", m],
        &["model", "eval", m, "--positions", p],
        &["bench", "inference", "--model", "builtin", "--model", m, "--seconds", "0.1"],
        &["bench", "player", "nn:builtin:8", &nn, "--move-time", "0.01"],
        &[
            "selfplay",
            "--model",
            m,
            "--games",
            "1",
            "--threads",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
    ] {
        let o = zertz_within(args, NEVER);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_one_line(&o);
        let err = stderr(&o);
        assert!(err.contains(&format!("{m} is a TorchScript file: a program")), "{err}");
        assert!(err.contains(&format!("python -m zertz convert-network {m} ")), "{err}");
        assert!(err.contains("--trust-code"), "{err}");
        assert!(stdout(&o).is_empty(), "{args:?}: nothing measured or played first");
    }
    assert!(!out.exists(), "self-play wrote nothing");
    let o = zertz_within(&[&game[..], &["--trust-code", "--json"]].concat(), 120);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(summary["games"], 2);
    // Its metadata with --trust-code: a program, with no architecture or checksum of the
    // engine's.
    let o = zertz(&["model", "info", m, "--trust-code", "--device", "cpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(info["program"], true);
    assert_eq!(info["format_version"], 1);
    for key in ["architecture", "preset", "parameters", "sha256"] {
        assert!(info[key].is_null(), "{key}: {info}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--trust-code` is one of the options of where networks run: every command that has
/// `--cuda-graphs` has it too, with its risk said.
#[test]
fn every_command_that_loads_networks_can_trust_code() {
    let commands: [&[&str]; 9] = [
        &["match"],
        &["selfplay"],
        &["play"],
        &["engine"],
        &["serve"],
        &["model", "info"],
        &["model", "eval"],
        &["bench", "inference"],
        &["bench", "player"],
    ];
    for command in commands {
        let o = zertz(&[command, &["--help"]].concat());
        assert!(o.status.success(), "{command:?}: {}", stderr(&o));
        let help = stdout(&o);
        assert!(help.contains("--cuda-graphs"), "{command:?}: {help}");
        assert!(help.contains("--trust-code"), "{command:?}: {help}");
        assert!(help.contains("read, write and delete your files"), "{command:?}: {help}");
    }
}

/// `zertz model info`: a network file's architecture, its sizes and preset, the SHA-256 of its
/// weights and its format version.
#[test]
fn model_info_shows_the_architecture_and_the_checksum() {
    use sha2::{Digest, Sha256};
    let o = zertz(&["model", "info", "builtin", "--device", "cpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(info["program"], false);
    assert_eq!(info["architecture"], "ZertzNet");
    assert_eq!(info["preset"], "tiny");
    assert_eq!(info["network"]["channels"], 32);
    assert_eq!(info["format_version"], zertz_model::MODEL_FORMAT_VERSION);
    assert_eq!(info["marbles"], serde_json::json!(["standard"]));
    let sha = info["sha256"].as_str().unwrap();
    assert!(sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit()), "{sha}");
    // A file's: the checksum of the bytes after its header; sizes of no preset.
    let model = broken_models().join("good.safetensors");
    let o = zertz(&["model", "info", model.to_str().unwrap(), "--device", "cpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let bytes = std::fs::read(&model).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let weights: String =
        Sha256::digest(&bytes[8 + n..]).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(info["sha256"], weights);
    assert_eq!(info["architecture"], "ZertzNet");
    assert!(info["preset"].is_null(), "{info}");
    assert_eq!(info["network"]["channels"], 8);
    let params = zertz_model::architecture::Sizes {
        channels: 8,
        blocks: 1,
        policy_rank: 2,
        value_channels: 4,
        value_hidden: 8,
    }
    .parameters();
    assert_eq!(info["parameters"], params);
}

#[test]
fn a_panic_is_one_internal_error_line_not_status_101() {
    let o = zertz_within(&["internal-panic-test"], NEVER);
    assert_eq!(o.status.code(), Some(70), "{}", stderr(&o));
    assert_one_line(&o);
    let err = stderr(&o);
    assert!(err.starts_with("internal error: internal-panic-test panics on purpose"), "{err}");
}

#[test]
fn thread_and_size_counts_past_the_maxima_are_refused_before_starting() {
    let dir = temp_dir("maxima");
    for args in [
        &["match", "--player", "random", "--player", "random", "--threads", "100000"][..],
        &["match", "--player", "random", "--player", "random", "--threads", "1025"],
        &["match", "--player", "random", "--player", "random", "--games", "100000000000"],
        &["match", "--player", "mcts:4294967295", "--player", "random"],
        &["selfplay", "--evaluator", "uniform", "--threads", "100000", "--check"],
        &["selfplay", "--evaluator", "uniform", "--games", "5000000000", "--check"],
        &["play", "--model", "m.safetensors", "--simulations", "4000000000"],
    ] {
        let o = zertz_within(args, NEVER);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("error"), "{args:?}: {err}");
    }
    let o = zertz_within(
        &["match", "--player", "random", "--player", "random", "--threads", "100000"],
        NEVER,
    );
    assert!(stderr(&o).contains("1024"), "{}", stderr(&o));
    // From a config file as well.
    let config = dir.join("match.toml");
    std::fs::write(&config, "players = [\"random\", \"random\"]\nthreads = 100000\n").unwrap();
    let o = zertz_within(&["match", "--config", config.to_str().unwrap()], NEVER);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_one_line(&o);
    assert!(stderr(&o).contains("threads") && stderr(&o).contains("1024"), "{}", stderr(&o));
    std::fs::write(&config, "players = [\"random\", \"random\"]\ngames = 100000000000\n").unwrap();
    let o = zertz_within(&["match", "--config", config.to_str().unwrap()], NEVER);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("games"), "{}", stderr(&o));
    let sp = dir.join("selfplay.toml");
    std::fs::write(&sp, "threads = 100000\n").unwrap();
    let o = zertz_within(&["selfplay", "--config", sp.to_str().unwrap(), "--check"], NEVER);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("threads"), "{}", stderr(&o));
    // The edge is accepted.
    let o = zertz_within(
        &["match", "--player", "random", "--player", "random", "--games", "2", "--threads", "1024"],
        60,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fifos_and_other_non_regular_files_are_refused_without_blocking() {
    let dir = temp_dir("fifo");
    let fifo = dir.join("pipe.sgf");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let f = fifo.to_str().unwrap();
    // replay: an error for that file, the others go on; status 1.
    let good = games_dir().join("zertz-00000.sgf");
    let o = zertz_within(&["replay", "--json", f, good.to_str().unwrap()], NEVER);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines: Vec<serde_json::Value> =
        stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["ok"], false);
    assert!(
        lines[0]["error"].as_str().unwrap().contains("not a regular file (a FIFO)"),
        "{lines:?}"
    );
    assert_eq!(lines[1]["ok"], true);
    // A FIFO named *.sgf inside a folder, and /dev/null (a device) given directly.
    let o = zertz_within(&["replay", dir.to_str().unwrap(), "/dev/null"], NEVER);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let fifo_line = format!("{f}: error: cannot read {f}: not a regular file (a FIFO)");
    assert!(out.contains(&fifo_line), "{out}");
    assert!(
        out.contains("/dev/null: error: cannot read /dev/null: not a regular file (a device)"),
        "{out}"
    );
    assert!(out.contains("failed by reason: 2 unreadable file"), "{out}");
    // Every other file argument: status 2 and one line naming the file.
    let none = dir.join("none.safetensors");
    let sgf_out = dir.join("sgf");
    let nn = format!("nn:{f}");
    let cases: [&[&str]; 6] = [
        &["sgf", f, "--out", sgf_out.to_str().unwrap()],
        &["model", "eval", none.to_str().unwrap(), "--positions", f],
        &["model", "info", f],
        &["match", "--config", f],
        &["selfplay", "--config", f, "--check"],
        &["match", "--player", "random", "--player", &nn],
    ];
    for args in cases {
        let o = zertz_within(args, NEVER);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_one_line(&o);
        let err = stderr(&o);
        assert!(err.contains("not a regular file (a FIFO)") && err.contains(f), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `zertz bench inference`: one JSON line per batch size with the throughput and the shares of
/// the pass that add up to one; a table by default; bad sizes refused with status 2.
#[test]
fn bench_inference_measures_each_batch_size() {
    let model = broken_models().join("good.safetensors");
    let model = model.to_str().unwrap();
    let base = ["bench", "inference", "--model", model, "--device", "cpu"];
    let args = [&base[..], &["--seconds", "0.2"]].concat();
    let o = zertz(&[&args[..], &["--batch", "1,8", "--precision", "bf16", "--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Vec<serde_json::Value> =
        stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 2);
    for (row, batch) in rows.iter().zip([1, 8]) {
        assert_eq!(row["batch"], batch);
        assert_eq!(row["precision"], "bf16");
        assert_eq!(row["device"], "cpu");
        assert!(row["batches"].as_u64().unwrap() >= 1);
        assert!(row["evaluations_per_second"].as_f64().unwrap() > 0.0);
        assert!(row["evaluations_per_cpu_second"].as_f64().unwrap() > 0.0);
        assert_eq!(row["torch_threads"], 1);
        let shares: f64 =
            ["copy_in", "forward", "copy_out"].iter().map(|k| row[k].as_f64().unwrap()).sum();
        assert!((shares - 1.0).abs() < 1e-6, "{row}");
    }
    let o = zertz(&[&args[..], &["--batch", "4", "--threads", "2"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("in fp32") && out.contains("evaluations/s"), "{out}");
    assert_eq!(out.lines().count(), 3, "{out}");
    // CUDA graphs: auto by default and off leave the CPU as it is; on (the flag alone, or
    // named) is an error there, and a choice that is not one is refused naming the three.
    for graphs in [&[][..], &["--cuda-graphs", "off"], &["--cuda-graphs", "AUTO"]] {
        let o = zertz(&[&args[..], &["--batch", "1"], graphs].concat());
        assert!(o.status.success(), "{graphs:?}: {}", stderr(&o));
        assert!(!stdout(&o).contains("CUDA graphs"), "{graphs:?}: {}", stdout(&o));
    }
    if !zertz_model::cuda_available() {
        for graphs in [&["--cuda-graphs"][..], &["--cuda-graphs", "on"]] {
            let o = zertz(&[&args[..], graphs].concat());
            assert_eq!(o.status.code(), Some(2), "{graphs:?}: {}", stderr(&o));
            assert!(stderr(&o).contains("CUDA graphs need a CUDA device"), "{}", stderr(&o));
        }
    }
    let o = zertz(&[&args[..], &["--cuda-graphs", "maybe"]].concat());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("auto, on or off"), "{}", stderr(&o));
    for bad in [
        &["--batch", "0"][..],
        &["--batch", "100000"],
        &["--threads", "0"],
        &["--torch-threads", "0"],
        &["--precision", "fp8"],
        &["--board", "48"],
    ] {
        let o = zertz(&[&args[..], bad].concat());
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert!(stderr(&o).starts_with("error: "), "{bad:?}: {}", stderr(&o));
    }
    for bad in [&["--seconds=-1"][..], &["--seconds", "0"], &["--seconds", "1e9"]] {
        let o = zertz(&[&base[..], bad].concat());
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert_one_line(&o);
    }
    // Networks side by side: each batch size for one after the other, each row naming its
    // network (the table in a first column); a network named twice is refused.
    let two = [&args[..], &["--model", "builtin", "--batch", "1,4"]].concat();
    let o = zertz(&[&two[..], &["--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Vec<serde_json::Value> =
        stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let order: Vec<(&str, u64)> =
        rows.iter().map(|r| (r["model"].as_str().unwrap(), r["batch"].as_u64().unwrap())).collect();
    assert_eq!(order, [(model, 1), ("builtin", 1), (model, 4), ("builtin", 4)]);
    let o = zertz(&two);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2 + 1 + 4, "{out}");
    assert!(lines[0].starts_with(model) && lines[1].starts_with("builtin on cpu"), "{out}");
    assert!(lines[2].starts_with("model ") && lines[2].contains("evaluations/s"), "{out}");
    assert!(lines[3].starts_with(model) && lines[4].starts_with("builtin "), "{out}");
    let o = zertz(&[&base[..], &["--model", model]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_one_line(&o);
    assert!(stderr(&o).contains(&format!("the network {model} is named twice")), "{}", stderr(&o));
}

/// `zertz bench player`: a row per board, position and thread count, as a table or JSON lines;
/// a player that does not search, or a bad thread count, refused with status 2.
#[test]
fn bench_player_measures_each_position_and_thread_count() {
    let base = ["bench", "player", "mcts:50", "--board", "37,40", "--move-time", "0.02"];
    let o = zertz(&[&base[..], &["--search-threads", "1,2", "--searches", "1", "--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let rows: Vec<serde_json::Value> =
        stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 12, "2 boards, 3 positions, 2 thread counts");
    for row in &rows {
        assert_eq!(row["unit"], "simulations", "{row}");
        assert!(row["work"].as_u64().unwrap() > 0, "{row}");
        assert!(row["per_cpu_second"].as_f64().unwrap() > 0.0, "{row}");
    }
    let o = zertz(&base);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("work/CPU-s"), "{}", stdout(&o));
    for bad in [&["--search-threads", "0"][..], &["--searches", "0"], &["--move-time", "0"]] {
        let o = zertz(&[&base[..], bad].concat());
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", stderr(&o));
        assert_one_line(&o);
    }
    let o = zertz(&["bench", "player", "random", "--move-time", "0.01"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not search here"), "{}", stderr(&o));
    // Players one after the other, each row naming its player; every one checked before the
    // first is measured, and none named twice.
    let two = ["bench", "player", "mcts:50", "alphabeta:2", "--board", "37", "--move-time", "0.02"];
    let o = zertz(&[&two[..], &["--searches", "1", "--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let players: Vec<String> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["player"].to_string())
        .collect();
    assert_eq!(players, [["\"mcts:50\""; 3], ["\"alphabeta:2\""; 3]].concat());
    let o = zertz(&[&two[..], &["--searches", "1"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.lines().nth(1).is_some_and(|l| l.starts_with("player ")), "{out}");
    assert_eq!(out.lines().filter(|l| l.starts_with("alphabeta:2 ")).count(), 3, "{out}");
    for (players, words) in
        [(["mcts:50", "random"], "does not search here"), (["mcts:50", "mcts:50"], "named twice")]
    {
        let o = zertz(&[&["bench", "player"][..], &players, &["--move-time", "0.01"]].concat());
        assert_eq!(o.status.code(), Some(2), "{players:?}: {}", stderr(&o));
        assert_one_line(&o);
        assert!(stderr(&o).contains(words) && stdout(&o).is_empty(), "{}", stderr(&o));
    }
    // Without --board: 37 and 61, those the network plays (the built-in network: 37 alone);
    // a board named that it does not play is an error.
    let nn = ["bench", "player", "nn:builtin:8", "--move-time", "0.01", "--searches", "1"];
    let o = zertz(&[&nn[..], &["--json", "--device", "cpu"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let boards: Vec<u64> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["board"].as_u64().unwrap())
        .collect();
    assert_eq!(boards, [37, 37, 37]);
    let o = zertz(&[&nn[..], &["--board", "61", "--device", "cpu"]].concat());
    assert!(!o.status.success());
    assert!(stderr(&o).contains("trained for 37 rings"), "{}", stderr(&o));
    for command in ["play", "engine", "serve"] {
        let o = zertz(&[command, "--search-threads", "0"]);
        assert_eq!(o.status.code(), Some(2), "{command}: {}", stderr(&o));
    }
}

/// A match of one network in bf16 against itself in fp32 (the spec's precision over --precision);
/// `model info` says the precision.
#[test]
fn a_match_between_precisions_of_one_network() {
    let model = broken_models().join("good.safetensors");
    let m = model.to_str().unwrap();
    let (a, b) = (format!("nn:{m}:8:bf16"), format!("nn:{m}:8"));
    let o = zertz(&[
        "match",
        "--player",
        &a,
        "--player",
        &b,
        "--games",
        "4",
        "--device",
        "cpu",
        "--json",
        "--precision",
        "fp32",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(summary["a"], a);
    assert_eq!(summary["games"], 4);
    let o = zertz(&["model", "info", m, "--device", "cpu", "--precision", "fp16"]);
    let info: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(info["precision"], "fp16");
}
