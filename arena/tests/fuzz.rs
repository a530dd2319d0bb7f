//! Fuzz targets that stay: seeded mutations of valid settings, fed to the match config file
//! ([`MatchFileConfig::from_file`]) and the player-spec grammar ([`PlayerSpec`]) with time
//! controls and alpha-beta depths, and of engine protocol sessions (of a random and of an
//! alpha-beta engine), fed line by line to an [`EngineSession`], for a bounded time in the test
//! suite; and matches of every searching player stopped at a drawn moment of a search. The
//! corpora: the files of `configs/` and the default settings written
//! as TOML, and player specs of every kind, mutated by [`zertz_fuzzkit::fuzz`]; what a parser
//! accepts must read back the same after being written out. `cmd:` players are never built (that
//! would start the program a mutation names).
//!
//! Budget per target: `ZERTZ_FUZZ_SECS` seconds (default 8), `ZERTZ_FUZZ_CASES` inputs,
//! `ZERTZ_FUZZ_SEED` (see `fuzzkit`). A longer run:
//!
//! ```text
//! ZERTZ_FUZZ_SECS=600 cargo test --release -p zertz-arena --test fuzz -- --nocapture
//! ```

use std::path::{Path, PathBuf};

use zertz_arena::config::MatchFileConfig;
use zertz_arena::players::{MAX_MOVE_TIME, MAX_SIMULATIONS, MIN_MOVE_TIME, Models, PlayerSpec};
use zertz_arena::protocol::{EngineSession, Reply};
use zertz_env::Variant;
use zertz_fuzzkit::{TOML_TOKENS, config_corpus, fuzz};
use zertz_search::alphabeta::MAX_DEPTH;
use zertz_settings::MAX_THREADS;

/// Tokens of player specs.
const SPEC_TOKENS: &[&str] = &[
    "random",
    "greedy",
    "mcts",
    "uniform",
    "nn",
    "NN",
    ":",
    "::",
    " ",
    "\t",
    "\n",
    "0",
    "1",
    "400",
    "1048576",
    "1048577",
    "4294967295",
    "4294967296",
    "99999999999999999999",
    "-1",
    "+5",
    "m.safetensors",
    "runs/a:b/m.safetensors",
    "/",
    "é",
    "\u{0}",
    "cmd",
    "\"",
    "\\",
    "zertz engine",
    "gumbel=",
    "gumbel=16",
    "time=",
    "time=0.5",
    "bf16",
    "fp8",
    "alphabeta",
    "alphabeta:",
    "time=0.01",
    "time=1e9",
    "gumbel=1",
    "builtin",
    "=",
];

/// Tokens of engine protocol sessions.
const SESSION_TOKENS: &[&str] = &[
    "\n",
    " ",
    "\t",
    "\r\n",
    "#",
    "12 ",
    "0 ",
    "99999999999999999999 ",
    "name",
    "version",
    "protocol_version",
    "list_commands",
    "help",
    "newgame",
    "newgame 61 blitz",
    " 37",
    " 48",
    " blitz",
    "play ",
    "genmove",
    "undo",
    "legal",
    "position",
    "setposition ",
    "showboard",
    "analyze 3",
    "quit",
    "Wd4,a1",
    "Gg1",
    "b4xd6",
    "d2xd4",
    "d4xd6",
    "xd6",
    "pass",
    "P1",
    "-",
    "/",
    "é",
    "\u{0}",
    "37 standard ----/---.-/---g--/.bw.w.-/-g----/-.---/---- 1/4/6 2/0/0 1/2/3 P0 - 0",
    "37 standard ----/---.-/---g--/.bw.w.-/-g----/-.---/---- 1/4/6 2/0/0 1/2/3 P0 d2 0",
    // Arguments: counts out of range, huge ones, junk after commands.
    "analyze 1048576",
    "analyze 1048577",
    "analyze 4294967296",
    "analyze -1",
    "analyze 0",
    "analyze 1e3",
    " 1048576",
    " 4294967295",
    " 99999999999999999999",
    " now",
    " junk",
    " 1 2",
    "quit now",
    "newgame 39",
    "newgame 61 61",
    "newgame blitz blitz",
    "newgame 61",
    "undo 2",
];

/// The commands that take no arguments.
const NO_ARGUMENTS: &[&str] = &[
    "name",
    "version",
    "protocol_version",
    "list_commands",
    "help",
    "genmove",
    "undo",
    "legal",
    "position",
    "showboard",
    "quit",
];

/// The memory budget of the fuzzed session's search trees: `analyze` of any count stays small
/// and quick.
const TREE_BYTES: usize = 4 << 20;

// ------------------------------------------------------------------------------- checks

/// A file for [`MatchFileConfig::from_file`], one per thread.
fn match_file() -> PathBuf {
    std::env::temp_dir().join(format!(
        "zertz-fuzz-match-{}-{:?}.toml",
        std::process::id(),
        std::thread::current().id()
    ))
}

fn read_match_config(path: &Path, bytes: &[u8]) -> Option<MatchFileConfig> {
    std::fs::write(path, bytes).unwrap();
    MatchFileConfig::from_file(path).ok()
}

fn check_match_config(bytes: &[u8]) -> bool {
    let path = match_file();
    let Some(config) = read_match_config(&path, bytes) else {
        return false;
    };
    assert_eq!(config.players.len(), 2);
    for p in &config.players {
        let spec: PlayerSpec = p.parse().expect("accepted players parse");
        // A `cmd:` player would start its program.
        if spec.command().is_none() {
            let _ = spec.build(0, &Models::new());
        }
    }
    assert!(config.settings.threads <= MAX_THREADS);
    let written = toml::to_string(&config).expect("an accepted config writes as TOML");
    let back = read_match_config(&path, written.as_bytes());
    assert_eq!(back.as_ref(), Some(&config), "{written}");
    true
}

fn check_player_spec(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let Ok(spec) = text.parse::<PlayerSpec>() else {
        return false;
    };
    // Its name reads back as the same spec, and is canonical.
    let name = spec.to_string();
    let back: PlayerSpec =
        name.parse().unwrap_or_else(|e| panic!("{text:?} -> {name:?} does not read back: {e}"));
    assert_eq!(back, spec, "{text:?} -> {name:?}");
    assert_eq!(back.to_string(), name);
    if let Some(time) = spec.own_time() {
        assert!((MIN_MOVE_TIME..=MAX_MOVE_TIME).contains(&time), "{spec:?}");
        assert!(spec.untimed().searches() && spec.untimed().own_time().is_none(), "{spec:?}");
    }
    let sims = match spec.untimed() {
        PlayerSpec::Mcts(n) | PlayerSpec::Uniform(n) => Some(*n),
        PlayerSpec::Neural { simulations, .. } => Some(*simulations),
        PlayerSpec::AlphaBeta(depth) => {
            assert!(depth.is_none_or(|d| (1..=MAX_DEPTH).contains(&d)), "{spec:?}");
            None
        }
        PlayerSpec::Random | PlayerSpec::Greedy | PlayerSpec::Timed { .. } => None,
        PlayerSpec::Command(words) => {
            assert!(words.first().is_some_and(|p| !p.is_empty()), "{spec:?} names a program");
            // Building it would start whatever program the mutation named.
            return true;
        }
    };
    assert!(sims.is_none_or(|n| (1..=MAX_SIMULATIONS).contains(&n)), "{spec:?}");
    // Players without a network build; a network's player names its missing model.
    match (spec.build(1, &Models::new()), spec.model()) {
        (Ok(p), None) => assert_eq!(p.name(), name),
        (Err(e), Some(model)) => assert!(e.to_string().contains(model), "{e}"),
        (built, model) => {
            panic!("{spec:?}: built {:?}, model {model:?}", built.map(|p| p.name().to_string()))
        }
    }
    true
}

/// Feeds every line of `bytes` to a session: each line that is not empty or a comment gets exactly
/// one well-framed reply carrying its id, and nothing panics. A command that takes no arguments
/// refuses any; `analyze` answers a count from 1 to [`MAX_SIMULATIONS`] with at most that many
/// simulations (fewer past the tree budget) and refuses any other argument. Accepted: some
/// command succeeded.
fn check_session(bytes: &[u8]) -> bool {
    check_session_of("random", bytes)
}

/// [`check_session`] of an engine playing `player`.
fn check_session_of(player: &str, bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let spec: PlayerSpec = player.parse().unwrap();
    let alphabeta = matches!(spec.untimed(), PlayerSpec::AlphaBeta(_));
    let mut session = EngineSession::new(&spec, &Models::new(), 3, Variant::default())
        .unwrap()
        .with_max_tree_bytes(TREE_BYTES);
    let mut accepted = false;
    for line in text.split('\n') {
        let words: Vec<&str> = line
            .split('#')
            .next()
            .unwrap_or("")
            .split(|c: char| c.is_whitespace() || c.is_control())
            .filter(|w| !w.is_empty())
            .collect();
        let reply = session.handle(line);
        let out = reply.format();
        if words.is_empty() {
            assert_eq!(reply, Reply::Nothing, "{line:?}");
            continue;
        }
        assert!(out.starts_with('=') || out.starts_with('?'), "{line:?}: {out:?}");
        let body = out.strip_suffix("\n\n").unwrap_or_else(|| panic!("{line:?}: {out:?}"));
        assert!(!body.contains("\n\n") && !body.ends_with('\n'), "{line:?}: {out:?}");
        let command = match words[0].parse::<u64>() {
            Ok(id) if words.len() > 1 => {
                assert!(body[1..].starts_with(&id.to_string()), "{line:?}: {out:?}");
                &words[1..]
            }
            _ if words[0].bytes().all(|b| b.is_ascii_digit()) => &[][..],
            _ => &words[..],
        };
        if let Some((name, args)) = command.split_first() {
            let name = name.to_ascii_lowercase();
            if NO_ARGUMENTS.contains(&name.as_str()) && !args.is_empty() {
                assert!(matches!(reply, Reply::Error { .. }), "{line:?}: {out:?}");
            }
            if name == "analyze" && !alphabeta {
                check_analyze(args, &reply, line);
            }
            if name == "analyze" && alphabeta {
                check_analyze_alphabeta(args, &reply, line);
            }
        }
        if let Reply::Error { text, .. } = &reply {
            assert!(!text.contains('\n'), "errors are one line: {text:?}");
        }
        accepted |= matches!(reply, Reply::Answer { .. });
        if reply.is_quit() {
            break;
        }
    }
    accepted
}

/// `analyze ARGS` answered `reply`: a count in range gets at most that many simulations, anything
/// else an error.
fn check_analyze(args: &[&str], reply: &Reply, line: &str) {
    let count = match args {
        [n] => n.parse::<u32>().ok().filter(|n| (1..=MAX_SIMULATIONS).contains(n)),
        _ => None,
    };
    match (count, reply) {
        (None, Reply::Error { .. }) | (Some(_), Reply::Error { .. }) => {}
        (Some(n), Reply::Answer { text, .. }) => {
            let head: Vec<&str> = text.lines().next().unwrap_or("").split(' ').collect();
            assert_eq!(head.get(2), Some(&"simulations"), "{line:?}: {text:?}");
            let sims: u32 = head[3].parse().unwrap();
            assert!(sims <= n, "{line:?}: {sims} simulations of {n}");
        }
        (_, other) => panic!("{line:?}: {other:?}"),
    }
}

/// `analyze ARGS` of an alpha-beta engine answered `reply`: a depth from 1 to [`MAX_DEPTH`] gets
/// a score, the depth reached (at most that) and a principal variation; anything else an error.
fn check_analyze_alphabeta(args: &[&str], reply: &Reply, line: &str) {
    let depth = match args {
        [n] => n.parse::<u32>().ok().filter(|n| (1..=MAX_DEPTH).contains(n)),
        _ => None,
    };
    match (depth, reply) {
        (_, Reply::Error { .. }) => {}
        (Some(n), Reply::Answer { text, .. }) => {
            let head: Vec<&str> = text.lines().next().unwrap_or("").split(' ').collect();
            assert_eq!((head[0], head.get(2)), ("score", Some(&"depth")), "{line:?}: {text:?}");
            let reached: u32 = head[3].parse().unwrap();
            assert!(reached <= n, "{line:?}: depth {reached} of {n}");
            assert!(text.lines().nth(1).is_some_and(|l| l.starts_with("pv")), "{text:?}");
        }
        (_, other) => panic!("{line:?}: {other:?}"),
    }
}

#[test]
fn fuzz_engine_session_of_alphabeta() {
    // Deep analyses and moves of an alpha-beta engine, held to a short time per move.
    let scripts = [
        "analyze 1\nanalyze 64\nanalyze 65\ngenmove\nnewgame 61\nanalyze 3\ngenmove\n",
        "newgame 48 blitz\ngenmove\ngenmove\nanalyze 2\nundo\nposition\n",
    ];
    let corpus = scripts.iter().map(|s| s.as_bytes().to_vec()).collect();
    fuzz("engine-session-alphabeta", corpus, SESSION_TOKENS, |bytes| {
        check_session_of("alphabeta:time=0.02", bytes)
    });
}

#[test]
fn fuzz_engine_session() {
    let scripts = [
        "name\nversion\nlist_commands\n",
        "newgame 37\nplay Wd4,a1\ngenmove\nundo\nundo\nlegal\nshowboard\n",
        "1 newgame 48 blitz\n2 genmove\n3 genmove\n4 position\n5 analyze 20\n6 quit\n",
        "setposition 37 standard ----/---.-/---g--/.bw.w.-/-g----/-.---/---- 1/4/6 2/0/0 1/2/3 \
         P0 - 0\nplay d2xd4\nlegal\nundo\nplay d2xd4xd6\ngenmove\nundo\nshowboard\n",
        "# comment\n\n  \ngenmove\ngenmove\ngenmove\ngenmove\ngenmove\ngenmove\nundo\n",
    ];
    let corpus = scripts.iter().map(|s| s.as_bytes().to_vec()).collect();
    fuzz("engine-session", corpus, SESSION_TOKENS, check_session);
}

#[test]
fn fuzz_match_config() {
    let default = toml::to_string(&MatchFileConfig::default()).unwrap();
    let extra = [
        default,
        "players = [\"nn:runs/a/model.safetensors:64\", \"mcts:200\"]\nout = \"m.jsonl\"\n".into(),
    ];
    fuzz("match-config", config_corpus(&extra), TOML_TOKENS, check_match_config);
    let _ = std::fs::remove_file(match_file());
}

#[test]
fn fuzz_player_spec() {
    let specs = [
        "random",
        "greedy",
        "mcts",
        "mcts:1000",
        "uniform:800",
        " MCTS:50 ",
        "nn:model.safetensors",
        "nn:runs/a:b/m.safetensors:64",
        "NN: m.safetensors :7",
        "nn:C:\\models\\m.safetensors:1",
        "nn:builtin:400:gumbel=16",
        "nn:m.safetensors:8:bf16:gumbel=4:time=0.5",
        "mcts:1048576",
        "alphabeta",
        "alphabeta:7",
        "alphabeta:3:time=0.5",
        "mcts:time=2",
        "uniform:50:time=0.01",
        "nn:builtin:time=10",
        "cmd:zertz engine --player random",
        "CMD: \"my engine\"  --player \"nn:a b.safetensors\" \"\"",
        "cmd:\"say \\\"hi\\\"\" C:\\m\\x",
    ];
    let corpus = specs.iter().map(|s| s.as_bytes().to_vec()).collect();
    fuzz("player-spec", corpus, SPEC_TOKENS, check_player_spec);
}

/// The opponent of [`fuzz_stops_during_searches`]'s players: a network player whose evaluator
/// answers nothing until the stop is set, so that no game can end before it (every game needs a
/// move of the opponent, and its first move is a placement it searches), whatever the machine's
/// speed or load.
#[derive(Default)]
struct Gate {
    open: std::sync::Mutex<bool>,
    opened: std::sync::Condvar,
}

impl Gate {
    fn open(&self) {
        *self.open.lock().unwrap() = true;
        self.opened.notify_all();
    }
}

impl zertz_search::Evaluator for Gate {
    fn wants_encoding(&self) -> bool {
        false
    }

    fn evaluate(
        &self,
        batch: &zertz_search::Batch<'_>,
        out: &mut zertz_search::Output<'_>,
    ) -> Result<(), zertz_search::EvalError> {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.opened.wait(open).unwrap();
        }
        drop(open);
        zertz_search::UniformEvaluator.evaluate(batch, out)
    }
}

/// Matches of every kind of searching player, on the smallest and the largest board, stopped at
/// a drawn moment of the first searches (the opponent, [`Gate`], cannot move before the stop: no
/// game can end before it): each ends with [`MatchError::Stopped`], the games that ended after
/// the stop all handed over and whole, none cut short. (The stop of `zertz match`'s Ctrl-C and
/// SIGTERM; `cli/tests/hostile.rs` sends the signals themselves.) How soon a stop ends a match is
/// a figure of `scripts/bench-stops.py`; here only a stop that never comes fails, after a minute.
#[test]
fn fuzz_stops_during_searches() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};
    use zertz_arena::config::MatchSettings;
    use zertz_arena::matches::{MatchConfig, MatchError, MatchGame, run_match_until};
    use zertz_env::records::End;
    use zertz_env::{Board, SplitMix64};

    // Timed players think for an hour a move: a stop that did not reach their search would
    // show past the bound below.
    let players = [
        "alphabeta",
        "alphabeta:12",
        "alphabeta:2:time=3600",
        "mcts:1048576",
        "mcts:time=3600",
        "uniform:1048576",
        "nn:fake.safetensors:1048576",
        "nn:fake.safetensors:10:gumbel=16:time=3600",
    ];
    let never = Duration::from_secs(60);
    let seed = std::env::var("ZERTZ_FUZZ_SEED").ok().and_then(|s| s.parse().ok());
    let mut rng = SplitMix64(seed.unwrap_or(7));
    for player in players {
        for board in [Board::R37, Board::R61] {
            // More games than threads: the match cannot finish before the stop, which starts no
            // game.
            let settings = MatchSettings {
                games: 3,
                threads: 2,
                board,
                move_time: None,
                ..MatchSettings::default()
            };
            let gate = Arc::new(Gate::default());
            let mut models = Models::new();
            models.insert("fake.safetensors", Arc::new(zertz_search::UniformEvaluator));
            models.insert("gate.safetensors", gate.clone());
            let mut config = MatchConfig::with(
                player.parse().unwrap(),
                "nn:gate.safetensors:1".parse().unwrap(),
                settings.clone(),
            );
            config.models = models;
            let stop = AtomicBool::new(false);
            let stopped_at = Mutex::new(None);
            let handed: Mutex<Vec<MatchGame>> = Mutex::new(Vec::new());
            let delay = Duration::from_millis(rng.below(400) as u64);
            let result = std::thread::scope(|s| {
                s.spawn(|| {
                    std::thread::sleep(delay);
                    *stopped_at.lock().unwrap() = Some(Instant::now());
                    stop.store(true, Ordering::SeqCst);
                    gate.open();
                });
                let on_game = |g: &MatchGame| {
                    handed.lock().unwrap().push(g.clone());
                    Ok(())
                };
                run_match_until(&config, &on_game, &stop)
            });
            let late = stopped_at.lock().unwrap().expect("the stop was set").elapsed();
            let what = format!("{player} on {board}, stopped after {delay:?}");
            let handed = handed.into_inner().unwrap();
            match result {
                Err(MatchError::Stopped { games }) => assert_eq!(games, handed.len(), "{what}"),
                other => panic!("{what}: {other:?}"),
            }
            for g in &handed {
                let game = g.record.replay().unwrap_or_else(|e| panic!("{what}: {e}"));
                if g.record.end == End::Limit {
                    assert_eq!(g.actions, settings.max_actions, "{what}: {:?}", g.record);
                } else {
                    assert!(game.is_over(), "{what}: a game cut short: {:?}", g.record);
                    let winner = game.outcome().and_then(|o| o.winner());
                    assert_eq!(g.record.winner, winner, "{what}: {:?}", g.record);
                }
            }
            assert!(late < never, "{what}: still running {late:?} after the stop");
        }
    }
}
