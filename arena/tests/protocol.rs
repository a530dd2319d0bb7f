//! The engine protocol's session (`zertz_arena::protocol`): every command, its errors, ids, the
//! reply framing, undo across chains, whole games played by `genmove` on both sides, and the
//! analysis behind `analyze`.

use std::sync::Arc;

use zertz_arena::analysis::analyze;
use zertz_arena::protocol::{COMMANDS, EngineSession, Reply};
use zertz_arena::{Models, PlayerSpec};
use zertz_env::{Board, MarbleSet, Player, Position, Variant};
use zertz_search::{Batch, EvalError, Evaluator, Output, Preset, RolloutEvaluator};

/// P0 holds 2/0/0. The black on d2 jumps the white on d3 into d4 and must go on: over the white
/// on d5 into d6 (a fourth white: P0 wins) or over the grey on c4 into b4. (From the search
/// tests.)
const CHAIN_WIN: &str =
    "37 standard ----/---.-/---g--/.bw.w.-/-g----/-.---/---- 1/4/6 2/0/0 1/2/3 P0 - 0";

/// [`CHAIN_WIN`] with P0 in the middle of a chain: the black on d2 must jump again (d2xd4 then
/// d4xd6 wins; d2xf2 ends the chain without a win).
const CHAIN_ROOT: &str =
    "37 standard ----/---.-/---g--/.bw.w.-/-g----/-.---/---- 1/4/6 2/0/0 1/2/3 P0 d2 0";

fn session(spec: &str) -> EngineSession {
    let spec: PlayerSpec = spec.parse().unwrap();
    EngineSession::new(&spec, &Models::new(), 1, Variant::default()).unwrap()
}

/// The answer of a command that must succeed.
fn ok(s: &mut EngineSession, line: &str) -> String {
    match s.handle(line) {
        Reply::Answer { text, .. } => text,
        other => panic!("{line}: {other:?}"),
    }
}

/// The message of a command that must fail.
fn err(s: &mut EngineSession, line: &str) -> String {
    match s.handle(line) {
        Reply::Error { text, .. } => text,
        other => panic!("{line} should fail: {other:?}"),
    }
}

fn text(s: &EngineSession) -> String {
    s.game().position().to_text()
}

/// Checks the framing of a formatted reply: one `=`/`?` line, no empty line but the last.
fn check_framing(out: &str) {
    assert!(out.starts_with('=') || out.starts_with('?'), "{out:?}");
    let body = out.strip_suffix("\n\n").unwrap_or_else(|| panic!("no empty line: {out:?}"));
    assert!(!body.contains("\n\n"), "an empty line inside: {out:?}");
    assert!(!body.ends_with('\n'));
}

// ------------------------------------------------------------------------------------ framing

#[test]
fn replies_are_framed_with_ids() {
    let mut s = session("random");
    assert_eq!(s.handle("name").format(), "= zertz\n\n");
    assert_eq!(s.handle("12 name").format(), "=12 zertz\n\n");
    assert_eq!(s.handle("0 play Wd4,a1").format(), "=0\n\n");
    assert_eq!(s.handle("7 foo").format(), "?7 unknown command 'foo'\n\n");
    assert_eq!(s.handle("foo bar").format(), "? unknown command 'foo'\n\n");
    assert_eq!(s.handle("5").format(), "?5 no command\n\n");
    let huge = s.handle("99999999999999999999999 name");
    assert!(
        matches!(&huge, Reply::Error { id: None, text } if text.contains("bad id")),
        "{huge:?}"
    );
    assert_eq!(s.handle("3 quit").format(), "=3\n\n");
    assert!(s.handle("quit").is_quit());
    assert_eq!(s.handle("QUIT"), Reply::Quit { id: None });
}

#[test]
fn empty_lines_and_comments_get_no_reply() {
    let mut s = session("random");
    for line in ["", "   ", "\t", "# a comment", "  # indented", "\r", "\u{0}"] {
        assert_eq!(s.handle(line), Reply::Nothing, "{line:?}");
        assert_eq!(s.handle(line).format(), "");
    }
    assert_eq!(ok(&mut s, "name # what are you"), "zertz");
    assert_eq!(ok(&mut s, "\tname\r"), "zertz");
    assert_eq!(ok(&mut s, "  4   Name  "), "zertz", "case and spacing do not matter");
}

#[test]
fn formatted_answers_never_hold_an_empty_line() {
    let r = Reply::Answer { id: Some(3), text: "a\n\nb\n   \nc\n".into() };
    assert_eq!(r.format(), "=3 a\nb\nc\n\n");
    let r = Reply::Error { id: None, text: "\n\nx".into() };
    assert_eq!(r.format(), "?\nx\n\n");
    let r = Reply::Answer { id: Some(1), text: "\n    d7\n a4   \n\n".into() };
    assert_eq!(r.format(), "=1\n    d7\n a4\n\n", "a diagram keeps its indentation");
    assert_eq!(Reply::Answer { id: None, text: String::new() }.format(), "=\n\n");
    assert_eq!(Reply::Nothing.format(), "");
}

// ----------------------------------------------------------------------------------- commands

#[test]
fn identity_commands() {
    let mut s = session("greedy");
    assert_eq!(ok(&mut s, "name"), "zertz");
    assert_eq!(ok(&mut s, "version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(ok(&mut s, "protocol_version"), "1");
    let list = ok(&mut s, "list_commands");
    assert_eq!(list.lines().collect::<Vec<_>>(), COMMANDS);
    assert_eq!(ok(&mut s, "help"), list);
    for c in COMMANDS {
        assert!(
            !matches!(s.handle(c), Reply::Error { text, .. } if text.contains("unknown")),
            "{c}"
        );
    }
    assert_eq!(err(&mut s, "name please"), "name takes no arguments");
    assert_eq!(err(&mut s, "genmove P0"), "genmove takes no arguments");
}

#[test]
fn quit_takes_no_arguments_either() {
    let mut s = session("random");
    assert_eq!(err(&mut s, "quit now"), "quit takes no arguments");
    assert_eq!(s.handle("4 QUIT please").format(), "?4 quit takes no arguments\n\n");
    // The session goes on.
    assert_eq!(ok(&mut s, "name"), "zertz");
    assert_eq!(s.handle("quit # bye"), Reply::Quit { id: None });
}

#[test]
fn newgame_sets_the_board_and_marble_set() {
    let mut s = session("random");
    ok(&mut s, "play Wd4,a1");
    ok(&mut s, "newgame 48 blitz");
    let pos = *s.game().position();
    assert_eq!(pos, Position::new(Variant::new(Board::R48, MarbleSet::Blitz), Player::P0));
    ok(&mut s, "newgame");
    assert_eq!(s.game().position().variant(), Variant::new(Board::R48, MarbleSet::Blitz));
    ok(&mut s, "newgame 61");
    assert_eq!(s.game().position().variant(), Variant::new(Board::R61, MarbleSet::Standard));
    ok(&mut s, "newgame blitz");
    assert_eq!(s.game().position().variant(), Variant::new(Board::R61, MarbleSet::Blitz));
    ok(&mut s, "newgame standard 37");
    assert_eq!(*s.game().position(), Position::new(Variant::default(), Player::P0));
    assert!(err(&mut s, "newgame 38").contains("38"));
    assert!(err(&mut s, "newgame 37 fast").contains("bad newgame argument 'fast'"));
    assert!(err(&mut s, "newgame 37 40").contains("'40'"));
    assert_eq!(err(&mut s, "undo"), "nothing to undo");
}

#[test]
fn play_takes_whole_moves_and_single_hops() {
    let mut s = session("random");
    ok(&mut s, "play Wd4,a1");
    ok(&mut s, "play gD5,A2");
    assert_eq!(s.game().moves().len(), 2);
    assert_eq!(s.game().position().turn(), Player::P0);
    ok(&mut s, &format!("setposition {CHAIN_WIN}"));
    ok(&mut s, "play d2xd4");
    let pos = *s.game().position();
    assert_eq!(pos.turn(), Player::P0);
    assert!(pos.chain().is_some(), "the chain goes on");
    let mut legal: Vec<String> = ok(&mut s, "legal").split(' ').map(String::from).collect();
    legal.sort();
    assert_eq!(legal, ["d4xb4", "d4xd6"]);
    ok(&mut s, "play d4xd6");
    assert!(s.game().is_over());
    assert_eq!(s.game().outcome().and_then(|o| o.winner()), Some(Player::P0));
    assert_eq!(ok(&mut s, "legal"), "");
}

#[test]
fn illegal_moves_say_why() {
    let mut s = session("random");
    let e = err(&mut s, "play Wz9,a1");
    assert_eq!(e, "illegal move 'Wz9,a1': no ring \"z9\" on the 37-ring board");
    assert!(err(&mut s, "play hello").starts_with("illegal move 'hello': cannot read move"));
    assert!(err(&mut s, "play a1xa2").contains("not a jump"));
    assert_eq!(err(&mut s, "play b4xd6"), "illegal move 'b4xd6': not legal in this position");
    assert_eq!(err(&mut s, "play"), "play needs a move: play MOVE");
    assert!(err(&mut s, "play Wd4, a1").contains("one move"));
    ok(&mut s, &format!("setposition {CHAIN_WIN}"));
    assert!(err(&mut s, "play pass").contains("a capture is compulsory (play one of: "));
    ok(&mut s, "play d2xd4");
    let e = err(&mut s, "play d2xf2");
    assert!(e.starts_with("illegal move 'd2xf2': the marble on d4 must jump on"), "{e}");
    assert!(e.contains("d4xd6"), "{e}");
    ok(&mut s, "play d4xd6");
    assert_eq!(err(&mut s, "play pass"), "the game is over");
    assert_eq!(err(&mut s, "genmove"), "the game is over");
    assert_eq!(err(&mut s, "analyze 10"), "the game is over");
    // Nothing changed by the failures.
    assert!(s.game().is_over());
}

#[test]
fn undo_takes_back_turns_and_partial_chains() {
    let mut s = session("greedy");
    assert_eq!(err(&mut s, "undo"), "nothing to undo");
    let start = text(&s);
    ok(&mut s, "play Wd4,a1");
    let after_one = text(&s);
    ok(&mut s, "genmove");
    ok(&mut s, "undo");
    assert_eq!(text(&s), after_one, "the engine's turn is taken back");
    ok(&mut s, "undo");
    assert_eq!(text(&s), start);
    assert_eq!(s.game().moves().len(), 0);
    assert_eq!(err(&mut s, "undo"), "nothing to undo");

    // A chain played hop by hop: undo mid-chain goes back to the start of the turn.
    ok(&mut s, &format!("setposition {CHAIN_WIN}"));
    ok(&mut s, "play d2xd4");
    ok(&mut s, "undo");
    assert_eq!(text(&s), CHAIN_WIN);
    ok(&mut s, "play d2xd4");
    ok(&mut s, "play d4xb4");
    assert_eq!(s.game().position().turn(), Player::P1);
    ok(&mut s, "undo");
    assert_eq!(text(&s), CHAIN_WIN, "the whole chain is one turn");
    assert_eq!(err(&mut s, "undo"), "nothing to undo", "setposition starts afresh");

    // A position set in the middle of a chain: its remaining hops are one turn.
    ok(&mut s, &format!("setposition {CHAIN_ROOT}"));
    let answer = ok(&mut s, "genmove");
    assert_eq!(answer, "d2xd4xd6", "greedy finishes the chain with the win");
    assert!(s.game().is_over());
    ok(&mut s, "undo");
    assert_eq!(text(&s), CHAIN_ROOT);
}

#[test]
fn genmove_answers_the_whole_chain() {
    let mut s = session("greedy");
    ok(&mut s, &format!("setposition {CHAIN_WIN}"));
    let before = *s.game().position();
    let answer = ok(&mut s, "7 genmove");
    assert_eq!(answer, "d2xd4xd6");
    let m = before.parse_legal_move(&answer).unwrap();
    assert_eq!(*s.game().position(), before.play(&m).unwrap());
    // From the middle of the chain, genmove answers the rest of it.
    ok(&mut s, &format!("setposition {CHAIN_WIN}"));
    ok(&mut s, "play d2xd4");
    assert_eq!(ok(&mut s, "genmove"), "d4xd6");
    assert!(s.game().is_over());
}

#[test]
fn position_and_setposition_round_trip() {
    let mut s = session("random");
    let start = ok(&mut s, "position");
    assert_eq!(start, Position::new(Variant::default(), Player::P0).to_text());
    ok(&mut s, "play Wd4,a1");
    let after = ok(&mut s, "position");
    ok(&mut s, "newgame");
    ok(&mut s, &format!("setposition {after}"));
    assert_eq!(ok(&mut s, "position"), after);
    ok(&mut s, &format!("setposition   {}", CHAIN_WIN.replace(' ', "   ")));
    assert_eq!(ok(&mut s, "position"), CHAIN_WIN);
    assert!(err(&mut s, "setposition 37 standard").starts_with("bad position: "));
    assert_eq!(err(&mut s, "setposition"), "setposition needs a position in the text format");
    assert_eq!(ok(&mut s, "position"), CHAIN_WIN, "a failed setposition changes nothing");
}

#[test]
fn legal_lists_every_whole_move() {
    let mut s = session("random");
    let moves = ok(&mut s, "legal");
    assert_eq!(moves.split(' ').count(), 1944);
    let pos = *s.game().position();
    for m in moves.split(' ') {
        assert!(pos.parse_legal_move(m).is_ok(), "{m}");
    }
    assert_eq!(err(&mut s, "legal now"), "legal takes no arguments");
}

#[test]
fn showboard_draws_without_empty_lines() {
    let mut s = session("random");
    for setup in ["newgame 61", "newgame 37", &format!("setposition {CHAIN_ROOT}")] {
        ok(&mut s, setup);
        let reply = s.handle("9 showboard");
        let out = reply.format();
        check_framing(&out);
        let board = s.game().position().diagram();
        let drawn: Vec<&str> = board.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(out, format!("=9\n{}\n\n", drawn.join("\n")), "the diagram, below the mark");
    }
}

#[test]
fn analyze_reports_visits_priors_and_values() {
    let mut s = session("uniform:10");
    let out = ok(&mut s, "analyze 60");
    let mut lines = out.lines();
    let head: Vec<&str> = lines.next().unwrap().split(' ').collect();
    assert_eq!(head[0], "value");
    assert!(head[1].parse::<f32>().unwrap().abs() <= 1.0);
    assert_eq!(&head[2..], ["simulations", "60"]);
    let mut total = 0;
    let mut last = u32::MAX;
    let pos = *s.game().position();
    for line in lines {
        let w: Vec<&str> = line.split(' ').collect();
        assert_eq!((w[1], w[3], w[5]), ("visits", "prior", "value"), "{line}");
        assert!(pos.parse_legal_action(w[0]).is_ok(), "{line}");
        let visits: u32 = w[2].parse().unwrap();
        assert!(visits > 0 && visits <= last, "sorted by visits: {line}");
        last = visits;
        total += visits;
        assert!((0.0..=1.0).contains(&w[4].parse::<f32>().unwrap()));
        assert!(w[6].parse::<f32>().unwrap().abs() <= 1.0);
    }
    assert_eq!(total, 59, "every simulation but the root's own");
    for bad in ["analyze", "analyze 0", "analyze -3", "analyze x", "analyze 1048577", "analyze 5 6"]
    {
        let e = err(&mut s, bad);
        assert!(e.contains("analyze") || e.contains("simulation"), "{bad}: {e}");
    }
    // The analysis leaves the game alone.
    assert_eq!(s.game().moves().len(), 0);
}

/// The simulations an `analyze` answer reports, and the visits of its moves.
fn analyzed(s: &mut EngineSession, line: &str) -> (u32, u32) {
    let out = ok(s, line);
    let mut lines = out.lines();
    let head: Vec<&str> = lines.next().unwrap().split(' ').collect();
    assert_eq!(head[2], "simulations", "{out}");
    let visits = lines.map(|l| l.split(' ').nth(2).unwrap().parse::<u32>().unwrap()).sum();
    (head[3].parse().unwrap(), visits)
}

#[test]
fn analyze_of_the_largest_count_stops_at_the_tree_budget() {
    // 16 MiB hold some hundreds of simulations from the 61-ring start, not a million.
    for spec in ["uniform:10", "mcts:10"] {
        let mut s = session(spec).with_max_tree_bytes(16 << 20);
        ok(&mut s, "newgame 61");
        let (sims, visits) = analyzed(&mut s, "analyze 1048576");
        assert!((100..20_000).contains(&sims), "{spec}: {sims}");
        assert_eq!(visits, sims - 1, "{spec}: every simulation but the root's own");
        // A count the budget holds is run in full.
        let (sims, _) = analyzed(&mut s, "analyze 50");
        assert_eq!(sims, 50);
    }
}

#[test]
fn a_searching_engine_moves_within_its_tree_budget() {
    let mut s = session("uniform:1048576").with_max_tree_bytes(8 << 20);
    ok(&mut s, "newgame 61");
    for _ in 0..2 {
        let m = ok(&mut s, "genmove");
        assert!(!m.is_empty());
    }
    assert_eq!(s.game().moves().len(), 2);
}

#[test]
fn analysis_finds_the_winning_chain() {
    let pos = Position::from_text(CHAIN_WIN).unwrap();
    let eval = RolloutEvaluator { rollouts: 4, seed: 3 };
    let a = analyze(&eval, &Preset::Rollout.config(), &pos, 400).unwrap();
    // The win is proven: the search stops there, and the winning hop comes first.
    assert!(a.simulations < 400, "{}", a.simulations);
    assert_eq!((a.proven, a.value), (Some(1), 1.0));
    assert_eq!(a.moves[0].notation, "d2xd4", "the hop that starts the winning chain");
    assert_eq!(a.moves[0].proven, Some(1));
    assert_eq!(a.moves.len(), pos.count_legal_actions());
    assert!(a.moves[1..].iter().all(|m| m.proven != Some(1)), "one winning hop");
    assert!(a.moves[1..].windows(2).all(|w| w[0].proven.is_some() || w[0].visits >= w[1].visits));
    let json = serde_json::to_value(&a).unwrap();
    assert_eq!(json["moves"][0]["notation"], "d2xd4");
    assert_eq!((json["proven"].as_i64(), json["moves"][0]["proven"].as_i64()), (Some(1), Some(1)));
    assert!(json["moves"][0].get("action").is_none());
    // A finished game is not searched.
    let over = pos.play(&pos.parse_legal_move("d2xd4xd6").unwrap()).unwrap();
    let a = analyze(&eval, &Preset::Rollout.config(), &over, 400).unwrap();
    assert_eq!((a.value, a.simulations, a.moves.len()), (-1.0, 0, 0), "P1 to move has lost");
    assert_eq!(a.proven, Some(-1));
}

#[test]
fn analyzers_follow_the_spec() {
    let mut models = Models::new();
    models.insert("m.safetensors", Arc::new(Failing));
    for (spec, config) in [
        ("random", Preset::Rollout),
        ("greedy", Preset::Rollout),
        ("mcts:5", Preset::Rollout),
        ("uniform:5", Preset::Rollout),
        ("nn:m.safetensors:5", Preset::Network),
        ("cmd:zertz engine", Preset::Rollout),
    ] {
        let spec: PlayerSpec = spec.parse().unwrap();
        let analyzer = spec.analyzer(0, &models).unwrap();
        assert_eq!(analyzer.config, config.config(), "{spec}");
    }
    let e = "nn:other.safetensors".parse::<PlayerSpec>().unwrap().analyzer(0, &models).unwrap_err();
    assert!(e.to_string().contains("other.safetensors"), "{e}");
}

/// Uniform answers, and the threads that gave them.
#[derive(Debug, Default)]
struct Threads(std::sync::Mutex<std::collections::HashSet<std::thread::ThreadId>>);

impl Evaluator for Threads {
    fn wants_encoding(&self) -> bool {
        false
    }

    fn evaluate(&self, _batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        self.0.lock().unwrap().insert(std::thread::current().id());
        out.logits.fill(0.0);
        out.values.fill(0.0);
        Ok(())
    }
}

#[test]
fn a_networks_analysis_searches_on_the_models_search_threads() {
    for threads in [1, 2] {
        let network = Arc::new(Threads::default());
        let mut models = Models::new().with_search_threads(threads);
        models.insert("m.safetensors", network.clone());
        let analyzer =
            "nn:m.safetensors".parse::<PlayerSpec>().unwrap().analyzer(0, &models).unwrap();
        let least = if threads > 1 { 8 } else { 1 };
        assert!(analyzer.config.leaves_per_round >= least, "{threads}: {:?}", analyzer.config);
        assert_eq!(analyzer.threads, threads);
        let pos = Position::new(Variant::default(), Player::P0);
        let a = analyzer.analyze(&pos, 300).unwrap();
        assert_eq!(a.simulations, 300);
        assert_eq!(network.0.lock().unwrap().len(), threads, "threads that evaluated");
    }
}

// ----------------------------------------------------------------------------------- failures

/// Fails on every call.
#[derive(Debug)]
struct Failing;

impl Evaluator for Failing {
    fn evaluate(&self, _batch: &Batch<'_>, _out: &mut Output<'_>) -> Result<(), EvalError> {
        Err(EvalError("the network is gone".to_string()))
    }
}

#[test]
fn a_failing_player_changes_nothing() {
    let mut models = Models::new();
    models.insert("m.safetensors", Arc::new(Failing));
    let spec: PlayerSpec = "nn:m.safetensors:10".parse().unwrap();
    let mut s = EngineSession::new(&spec, &models, 0, Variant::default()).unwrap();
    assert_eq!(s.player_name(), "nn:m.safetensors:10");
    let e = err(&mut s, "genmove");
    assert_eq!(e, "player nn:m.safetensors:10: evaluator failed: the network is gone");
    assert_eq!(s.game().moves().len(), 0);
    assert_eq!(err(&mut s, "undo"), "nothing to undo");
    assert_eq!(
        err(&mut s, "analyze 5"),
        "the analysis failed: evaluator failed: the network is gone"
    );
    // A network that is not loaded: no session.
    let missing: PlayerSpec = "nn:other.safetensors".parse().unwrap();
    assert!(EngineSession::new(&missing, &models, 0, Variant::default()).is_err());
}

// -------------------------------------------------------------------------------- whole games

/// Plays a whole game by `genmove` on both sides and checks every answer against the rules.
fn self_play(spec: &str, setup: &str) -> usize {
    let mut s = session(spec);
    ok(&mut s, setup);
    let mut turns = 0;
    loop {
        let before = *s.game().position();
        match s.handle("genmove") {
            Reply::Answer { text, .. } => {
                let m = before.parse_legal_move(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
                assert_eq!(*s.game().position(), before.play(&m).unwrap(), "{text}");
                assert_ne!(s.game().position().turn(), before.turn(), "a whole turn: {text}");
            }
            Reply::Error { text, .. } => {
                assert_eq!(text, "the game is over");
                assert!(s.game().is_over());
                return turns;
            }
            other => panic!("{other:?}"),
        }
        turns += 1;
        assert!(turns < 1000, "the game does not end");
    }
}

#[test]
fn whole_games_by_genmove_on_both_sides() {
    for (spec, setup) in [
        ("random", "newgame 37"),
        ("greedy", "newgame 37"),
        ("greedy", "newgame 48 blitz"),
        ("random", "newgame 61 blitz"),
        ("mcts:30", "newgame 37 blitz"),
    ] {
        let turns = self_play(spec, setup);
        assert!(turns > 5, "{spec} {setup}: {turns} turns");
    }
}

#[test]
fn a_searching_engine_moves_on_every_board() {
    let mut s = session("mcts:20");
    for variant in Variant::all() {
        let blitz = if variant.marbles == MarbleSet::Blitz { " blitz" } else { "" };
        ok(&mut s, &format!("newgame {}{blitz}", variant.board));
        let answer = ok(&mut s, "genmove");
        let start = Position::new(variant, Player::P0);
        assert!(start.parse_legal_move(&answer).is_ok(), "{variant}: {answer}");
        ok(&mut s, "analyze 5");
    }
}

#[test]
fn a_whole_game_undone_turn_by_turn_goes_back_to_the_start() {
    let mut s = session("greedy");
    let mut positions = vec![text(&s)];
    while let Reply::Answer { .. } = s.handle("genmove") {
        positions.push(text(&s));
    }
    positions.pop();
    while let Some(p) = positions.pop() {
        ok(&mut s, "undo");
        assert_eq!(text(&s), p);
    }
    assert_eq!(err(&mut s, "undo"), "nothing to undo");
}

#[test]
fn alphabeta_analyze_gives_the_score_and_principal_variation() {
    let mut s = session("alphabeta:2");
    ok(&mut s, &format!("setposition {CHAIN_WIN}"));
    let out = ok(&mut s, "analyze 3");
    let mut lines = out.lines();
    let head: Vec<&str> = lines.next().unwrap().split(' ').collect();
    assert_eq!(
        (head[0], head[2], head[4], head[6], head[8]),
        ("score", "depth", "nodes", "qnodes", "mate")
    );
    assert_eq!(head[9], "1", "a win on this turn: {out}");
    assert!(head[1].parse::<i32>().unwrap() > 900_000, "{out}");
    let pv: Vec<&str> = lines.next().unwrap().split(' ').collect();
    assert_eq!(pv[0], "pv");
    assert_eq!(pv[1], "d2xd4xd6", "the winning chain: {out}");
    assert!(lines.next().is_none());
    // The analysis leaves the game alone; genmove plays the win.
    assert_eq!(s.game().moves().len(), 0);
    assert_eq!(ok(&mut s, "genmove"), "d2xd4xd6");
    assert!(s.game().is_over());
    // In the middle of its chain, the engine plays on along the winning hop.
    let mut s = session("alphabeta");
    ok(&mut s, &format!("setposition {CHAIN_ROOT}"));
    assert_eq!(ok(&mut s, "genmove"), "d2xd4xd6");
    assert!(s.game().is_over());
    // Depths, not simulations.
    let mut s = session("alphabeta:time=0.05");
    let out = ok(&mut s, "analyze 64");
    let depth: u32 = out.split(' ').nth(3).unwrap().parse().unwrap();
    assert!((1..=64).contains(&depth), "{out}");
    for bad in ["analyze", "analyze 0", "analyze -1", "analyze 65", "analyze x", "analyze 2 3"] {
        let e = err(&mut s, bad);
        assert!(e.contains("depth"), "{bad}: {e}");
    }
}

#[test]
fn a_variant_hook_keeps_switches_or_refuses_the_player() {
    let hook: zertz_arena::protocol::VariantHook = Box::new(|v: Variant| match v {
        v if v.board == Board::R61 => Err("this engine plays no 61 rings".into()),
        v if v.marbles == MarbleSet::Blitz => Ok(Some(("greedy".parse().unwrap(), Models::new()))),
        _ => Ok(None),
    });
    let mut s = session("random").with_variant_hook(hook);
    assert_eq!(s.player_name(), "random");
    assert_eq!(err(&mut s, "newgame 61"), "this engine plays no 61 rings");
    assert_eq!(s.game().position().board(), Board::R37, "a refused game changes nothing");
    let blitz = Position::new(Variant::new(Board::R61, MarbleSet::Blitz), Player::P0).to_text();
    assert_eq!(err(&mut s, &format!("setposition {blitz}")), "this engine plays no 61 rings");
    ok(&mut s, "newgame 48 blitz");
    assert_eq!(s.player_name(), "greedy");
    ok(&mut s, "genmove");
    ok(&mut s, "newgame 48");
    assert_eq!(s.player_name(), "greedy", "kept where the hook says so");
}

#[test]
fn a_stop_ends_an_analysis_and_a_move_under_way() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};
    for (player, command) in [("alphabeta:2", "analyze 64"), ("mcts:1048576", "genmove")] {
        let stop = Arc::new(AtomicBool::new(false));
        let mut s = session(player).with_stop(stop.clone());
        ok(&mut s, "newgame 61");
        let started = Instant::now();
        let answer = std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(Duration::from_millis(300));
                stop.store(true, Ordering::Relaxed);
            });
            ok(&mut s, command)
        });
        // An analysis to depth 64 runs for days, a million simulations on 61 rings for minutes:
        // only a stop that never came takes a minute. (How soon: scripts/bench-stops.py.)
        let never = Duration::from_secs(60);
        assert!(started.elapsed() < never, "{player}: {:?}", started.elapsed());
        assert!(!answer.is_empty(), "{player}: an answer with what it found");
    }
}
