//! `zertz engine` (the engine protocol on standard input and output) and `cmd:` players in
//! `zertz match`, run through the real program.

mod common;
use common::{ZERTZ, stderr};

use std::io::Write;
use std::process::{Command, Output, Stdio};

use zertz_env::{Board, MarbleSet, Player, Position, Variant};

/// Runs `zertz ARGS` with `input` on its standard input.
fn run_with_input(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(ZERTZ)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zertz runs");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // From a thread: the engine answers while it reads, so a long input would fill both pipes.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("zertz's output");
    writer.join().unwrap();
    out
}

/// The replies of a session: each one's text, without the empty line that ends it.
fn replies(out: &Output) -> Vec<String> {
    let text = String::from_utf8(out.stdout.clone()).expect("the protocol is UTF-8");
    assert!(text.is_empty() || text.ends_with("\n\n"), "{text:?}");
    text.split_terminator("\n\n").map(str::to_string).collect()
}

#[test]
fn a_scripted_session() {
    let script = "\
        name\n\
        12 version\n\
        # a comment, then an empty line\n\
        \n\
        newgame 37\n\
        play Wd4,a1\n\
        3 genmove\n\
        legal\n\
        position\n\
        showboard\n\
        analyze 30\n\
        undo\n\
        undo\n\
        position\n\
        play Wz9,a1\n\
        frobnicate\n\
        4 quit\n\
        name\n";
    let out = run_with_input(&["engine", "--player", "greedy", "--seed", "3"], script.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let r = replies(&out);
    assert_eq!(r.len(), 15, "one reply per command, none after quit: {r:#?}");
    assert_eq!(r[0], "= zertz");
    assert_eq!(r[1], format!("=12 {}", env!("CARGO_PKG_VERSION")));
    assert_eq!((r[2].as_str(), r[3].as_str()), ("=", "="));
    let start = Position::new(Variant::default(), Player::P0);
    let after = start.play(&start.parse_legal_move("Wd4,a1").unwrap()).unwrap();
    let answer = r[4].strip_prefix("=3 ").expect("genmove answers with its id");
    let m = after.parse_legal_move(answer).unwrap_or_else(|e| panic!("{answer}: {e}"));
    let now = after.play(&m).unwrap();
    let legal = r[5].strip_prefix("= ").unwrap();
    assert_eq!(legal.split(' ').count() as u64, now.count_legal_moves());
    assert_eq!(r[6], format!("= {}", now.to_text()));
    assert!(r[7].starts_with("=\n") && r[7].contains("P0 to move"), "{}", r[7]);
    let analysis: Vec<&str> = r[8].lines().collect();
    assert!(analysis[0].starts_with("= value ") && analysis[0].ends_with(" simulations 30"));
    assert!(analysis.len() > 1 && analysis[1].contains(" visits "), "{analysis:?}");
    assert_eq!((r[9].as_str(), r[10].as_str()), ("=", "="));
    assert_eq!(r[11], format!("= {}", start.to_text()));
    assert_eq!(r[12], "? illegal move 'Wz9,a1': no ring \"z9\" on the 37-ring board");
    assert_eq!(r[13], "? unknown command 'frobnicate'");
    assert_eq!(r[14], "=4");
}

#[test]
fn the_end_of_the_input_ends_the_engine() {
    let out = run_with_input(&["engine", "--player", "random"], b"name");
    assert!(out.status.success());
    assert_eq!(replies(&out), ["= zertz"], "a last line without a line break is read");
    let out = run_with_input(&["engine", "--player", "random"], b"");
    assert!(out.status.success());
    assert_eq!(out.stdout, b"");
}

#[test]
fn garbage_gets_one_error_per_line_and_never_a_crash() {
    let mut input: Vec<u8> = Vec::new();
    let mut expected = 0;
    let mut rng = 0x1234_5678_u64;
    for i in 0..300 {
        rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let len = 1 + (rng >> 58) as usize;
        let mut line: Vec<u8> = (0..len)
            .map(|k| (rng.rotate_left(k as u32 * 7) >> 40) as u8)
            .filter(|&b| b != b'\n' && b != b'#')
            .collect();
        if i % 3 == 0 {
            line.splice(0..0, b"genmove ".iter().copied());
        }
        if i % 5 == 0 {
            line.splice(0..0, b"play ".iter().copied());
        }
        // A line of only spaces and control characters gets no reply.
        let text = String::from_utf8_lossy(&line);
        if !text.split(|c: char| c.is_whitespace() || c.is_control()).all(str::is_empty) {
            expected += 1;
        }
        input.extend_from_slice(&line);
        input.push(b'\n');
    }
    // A line longer than the engine reads (1 MiB).
    input.extend(std::iter::repeat_n(b'a', (1 << 20) + 10));
    input.extend_from_slice(b"\nname\n");
    expected += 2;
    let out = run_with_input(&["engine", "--player", "random"], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = replies(&out);
    assert_eq!(r.len(), expected);
    assert!(r.iter().all(|x| x.starts_with('=') || x.starts_with('?')), "{r:#?}");
    assert_eq!(r[r.len() - 2], "? line longer than 1048576 bytes");
    assert_eq!(r[r.len() - 1], "= zertz");
}

#[test]
fn bad_players_are_refused_in_one_line() {
    let out = run_with_input(&["engine", "--player", "alphazero"], b"name\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown player 'alphazero'"), "{}", stderr(&out));
    assert!(stderr(&out).contains("cmd:PROGRAM ARGS"), "{}", stderr(&out));
    let out = run_with_input(&["engine", "--player", "nn:/no/such/model.safetensors"], b"name\n");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("/no/such/model.safetensors"), "{}", stderr(&out));
}

/// `cmd:"ZERTZ" engine ARGS`: this program as an engine behind the protocol.
fn engine_spec(args: &str) -> String {
    format!("cmd:\"{ZERTZ}\" engine {args}")
}

fn match_json(args: &[&str]) -> serde_json::Value {
    let o = Command::new(ZERTZ).arg("match").args(args).arg("--json").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_match_against_a_program_that_speaks_the_protocol() {
    let a = engine_spec("--player random");
    let summary =
        match_json(&["--player", &a, "--player", "greedy", "--games", "4", "--threads", "2"]);
    assert_eq!(summary["games"], 4);
    let name = a.parse::<zertz_arena::PlayerSpec>().unwrap().to_string();
    assert_eq!(summary["a"], name, "the player is named by its spec");
    assert_eq!(name, format!("cmd:{ZERTZ} engine --player random"), "quotes only where needed");
    let total: u64 = ["wins", "draws", "losses"].iter().map(|k| summary[k].as_u64().unwrap()).sum();
    assert_eq!(total, 4);
}

#[test]
fn two_engines_through_the_protocol_play_whole_games_from_openings() {
    // Openings make the engines start by `setposition`; greedy players capture in chains, which
    // come back whole from `genmove` and are played hop by hop.
    let dir = std::env::temp_dir().join(format!("zertz-cli-engine-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let records = dir.join("games.jsonl");
    let (a, b) = (engine_spec("--player greedy --seed 1"), engine_spec("--player greedy --blitz"));
    let summary = match_json(&[
        "--player",
        &a,
        "--player",
        &b,
        "--games",
        "4",
        "--threads",
        "2",
        "--blitz",
        "--opening-actions",
        "3",
        "--out",
        records.to_str().unwrap(),
    ]);
    assert_eq!(summary["games"], 4);
    let text = std::fs::read_to_string(&records).unwrap();
    let mut chains = 0;
    for line in text.lines() {
        let game: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_ne!(game["end"], "illegal", "{line}");
        assert_ne!(game["end"], "limit", "{line}");
        let moves = game["moves"].as_array().unwrap();
        chains += moves.iter().filter(|m| m.as_str().unwrap().matches('x').count() > 1).count();
    }
    assert!(chains > 0, "some capture chain of several hops was played: {text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_program_that_cannot_start_is_named() {
    let o = Command::new(ZERTZ)
        .args(["match", "--player", "cmd:/no/such/engine", "--player", "random", "--games", "2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cannot start the engine '/no/such/engine'"), "{err}");
}

/// The example session of docs/engine-protocol.md is what the engine answers, word for word.
#[test]
fn the_documented_session_is_real() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/engine-protocol.md"),
    )
    .unwrap();
    let start = doc.find("## An example session").expect("the section");
    let block = &doc[start..];
    let block = &block[block.find("```text\n").unwrap() + 8..];
    let block = &block[..block.find("```").unwrap()];
    let (mut input, mut expected) = (String::new(), String::new());
    for line in block.lines() {
        match line.strip_prefix("> ") {
            Some(command) => input.push_str(&format!("{command}\n")),
            None => expected.push_str(&format!("{line}\n")),
        }
    }
    assert!(input.lines().count() > 10);
    let expected = expected.replace("= 0.1.0", &format!("= {}", env!("CARGO_PKG_VERSION")));
    let out = run_with_input(&["engine", "--player", "mcts:400"], input.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected);
}

/// A field of `/proc/PID/status` in bytes (`VmRSS`, `VmHWM`: the peak).
#[cfg(target_os = "linux")]
fn memory_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

#[cfg(target_os = "linux")]
#[test]
fn analyze_of_the_largest_count_stays_within_the_tree_budget() {
    use std::io::BufRead;
    // 64 MiB of tree hold a few thousand simulations from the 61-ring start: the analysis of
    // the documented maximum answers at once with those, and the process grows by no more.
    let mut child = Command::new(ZERTZ)
        .args(["engine", "--player", "uniform:10", "--board", "61", "--tree-mib", "64"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("zertz runs");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut ask = |line: &str| {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        let mut reply = String::new();
        loop {
            let mut l = String::new();
            assert!(stdout.read_line(&mut l).unwrap() > 0, "the engine ended");
            if l == "\n" {
                return reply;
            }
            reply.push_str(&l);
        }
    };
    assert_eq!(ask("name"), "= zertz\n");
    let before = memory_bytes(child.id(), "VmRSS:");
    let reply = ask("analyze 1048576");
    let peak = memory_bytes(child.id(), "VmHWM:");
    let head: Vec<&str> = reply.lines().next().unwrap().split(' ').collect();
    assert_eq!(head[3], "simulations", "{reply}");
    let sims: u32 = head[4].parse().unwrap();
    assert!((500..1_048_576).contains(&sims), "{sims} simulations");
    assert!(peak < before + (64 << 20) + (48 << 20), "{before} bytes, then a peak of {peak}");
    assert!(ask("quit").starts_with('='));
    assert!(child.wait().unwrap().success());
}

#[test]
fn the_default_player_follows_the_game_and_a_network_is_held_to_what_it_plays() {
    // Without --player: the built-in network on 37 rings, rollout MCTS on 61 or with blitz
    // marbles; every genmove answers a move.
    let input = b"newgame 61\ngenmove\nnewgame 37 blitz\ngenmove\nnewgame 37\ngenmove\n";
    let out = run_with_input(&["engine"], input);
    assert!(out.status.success(), "{}", stderr(&out));
    let r = replies(&out);
    assert_eq!(r.len(), 6, "{r:?}");
    assert!(r.iter().all(|x| x.starts_with('=')), "{r:?}");
    // A network named with --player: refused where it was not trained, one line each.
    let blitz = Position::new(Variant::new(Board::R37, MarbleSet::Blitz), Player::P0).to_text();
    let input = format!("newgame 61\nnewgame 37 blitz\nsetposition {blitz}\nname\n");
    let out = run_with_input(&["engine", "--player", "nn:builtin:10"], input.as_bytes());
    assert!(out.status.success(), "{}", stderr(&out));
    let r = replies(&out);
    assert!(r[0].starts_with("? ") && r[0].contains("trained for 37 rings"), "{r:?}");
    for refused in &r[1..3] {
        assert!(refused.starts_with("? ") && refused.contains("blitz marbles"), "{r:?}");
    }
    assert_eq!(r[3], "= zertz");
    // --blitz with the built-in network named: refused at the start.
    let out = run_with_input(&["engine", "--player", "nn:builtin", "--blitz"], b"name\n");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("trained for the standard marbles"), "{}", stderr(&out));
}

#[test]
fn a_match_on_61_rings_against_the_default_engine() {
    // The engine behind cmd: starts on 37 rings, where it takes the built-in network; the
    // match's newgame 61 gives it rollout MCTS.
    let a = engine_spec("--player mcts:20");
    let b = engine_spec("");
    let summary = match_json(&["--player", &a, "--player", &b, "--games", "2", "--board", "61"]);
    assert_eq!(summary["games"], 2);
}

/// Starts `zertz engine ARGS`, writes `input`, and closes its input.
fn engine_fed(args: &[&str], input: &str) -> std::process::Child {
    let mut child = Command::new(ZERTZ)
        .arg("engine")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child
}

#[test]
fn a_search_ends_when_nobody_reads_its_answer() {
    // An analysis to depth 64 on 61 rings runs for days; the reader goes away.
    let mut child = engine_fed(&["--player", "alphabeta:2"], "newgame 61\nanalyze 64\n");
    std::thread::sleep(std::time::Duration::from_millis(500));
    drop(child.stdout.take());
    // Within a few hundred milliseconds; only a search that runs on takes a minute, however
    // busy the machine.
    let o = common::wait_within(child, common::NEVER, "engine");
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn after_the_end_of_its_input_a_search_ends_within_the_grace() {
    // The reader stays; the analysis answers with what it found by the end of the grace.
    let child = engine_fed(&["--player", "alphabeta:2"], "newgame 61\nanalyze 64\nname\n");
    let started = std::time::Instant::now();
    let o = common::wait_within(child, common::NEVER, "engine");
    let took = started.elapsed().as_secs_f64();
    assert!(o.status.success(), "{}", stderr(&o));
    // Not before the grace of 10 s (later on a busy machine).
    assert!(took >= 10.0, "{took} s");
    let r = replies(&o);
    assert_eq!(r.len(), 3, "{r:?}");
    assert!(r[1].starts_with("= score ") && r[1].contains("\npv "), "{r:?}");
    assert_eq!(r[2], "= zertz");
}
