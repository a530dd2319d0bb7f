//! The engine protocol, server side: a line protocol in the style of GTP (the Go Text Protocol)
//! through which other programs play with this engine (`zertz engine`), documented with an
//! example session in `docs/engine-protocol.md`.
//!
//! Why one file of this size: one command table and the session it reads and writes. Each
//! command's parsing, checks and answer sit together, in the order docs/engine-protocol.md lists
//! them.
//!
//! An [`EngineSession`] holds a game and a player; [`EngineSession::handle`] takes one line and
//! gives a [`Reply`], which [`Reply::format`] writes as `= answer` or `? error` followed by an
//! empty line. Answers may span lines but never hold an empty one. A command may start with a
//! numeric id, given back in the reply (`12 genmove` → `=12 b4xd6xf6`). Empty lines and comments
//! (from `#` to the end of the line) get no reply.
//!
//! ```
//! use zertz_arena::protocol::{EngineSession, Reply};
//! use zertz_arena::{Models, PlayerSpec};
//! use zertz_env::Variant;
//! let spec: PlayerSpec = "greedy".parse().unwrap();
//! let mut session = EngineSession::new(&spec, &Models::new(), 0, Variant::default()).unwrap();
//! assert_eq!(session.handle("name").format(), "= zertz\n\n");
//! assert_eq!(session.handle("3 play Wd4,a1").format(), "=3\n\n");
//! let reply = session.handle("genmove");
//! assert!(matches!(reply, Reply::Answer { .. }));
//! assert_eq!(session.handle("play Wz9,a1").format(), "? illegal move 'Wz9,a1': no ring \"z9\" \
//!     on the 37-ring board\n\n");
//! assert_eq!(session.handle("# a comment"), Reply::Nothing);
//! assert_eq!(session.handle("quit"), Reply::Quit { id: None });
//! ```

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use zertz_env::{
    Action, Board, Chain, Game, MAX_CHAIN, MarbleSet, Move, MoveError, Player, Position, Variant,
};
use zertz_search::mcts::DEFAULT_MAX_TREE_BYTES;

use zertz_search::alphabeta::{Limits, MAX_DEPTH};

use crate::analysis::Analyzer;
use crate::players::AlphaBetaBot;
use crate::players::command::ProgramLimits;
use crate::players::{Bot, MAX_SIMULATIONS, Models, PlayerSpec, SpecError};

/// The name the `name` command answers.
pub const ENGINE_NAME: &str = "zertz";

/// The commands, as `list_commands` answers them.
pub const COMMANDS: [&str; 15] = [
    "name",
    "version",
    "protocol_version",
    "list_commands",
    "help",
    "newgame",
    "play",
    "genmove",
    "undo",
    "legal",
    "position",
    "setposition",
    "showboard",
    "analyze",
    "quit",
];

/// The version of the protocol described here (`protocol_version`).
pub const PROTOCOL_VERSION: u32 = 1;

/// The reply to one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// An empty line or a comment: no reply at all.
    Nothing,
    /// The command succeeded: `=` with its id, if it had one, and the answer (possibly empty;
    /// possibly several lines, none of them empty).
    Answer {
        /// The command's id.
        id: Option<u64>,
        /// The answer.
        text: String,
    },
    /// The command failed: `?` with its id and a message (one line); nothing changed.
    Error {
        /// The command's id.
        id: Option<u64>,
        /// What went wrong.
        text: String,
    },
    /// `quit`: answered `=`; the session is over.
    Quit {
        /// The command's id.
        id: Option<u64>,
    },
}

impl Reply {
    /// The reply as written on the wire: `=ID TEXT` or `?ID TEXT` (the id, then a space and the
    /// text's first line when there is one), the text's other lines, then an empty line; nothing
    /// for [`Reply::Nothing`]. A text whose first line is empty (a diagram) starts on the line
    /// below the mark. Empty lines inside the text are dropped, so that the empty line always
    /// ends the reply.
    pub fn format(&self) -> String {
        let (mark, id, text) = match self {
            Reply::Nothing => return String::new(),
            Reply::Answer { id, text } => ('=', id, text.as_str()),
            Reply::Error { id, text } => ('?', id, text.as_str()),
            Reply::Quit { id } => ('=', id, ""),
        };
        let mut out = String::new();
        out.push(mark);
        if let Some(id) = id {
            out.push_str(&id.to_string());
        }
        let mut lines = text.lines().map(str::trim_end);
        // A text that starts with a line break (a diagram) starts below the mark.
        if let Some(first) = lines.next().filter(|l| !l.trim().is_empty()) {
            out.push(' ');
            out.push_str(first.trim_start());
        }
        for line in lines.filter(|l| !l.trim().is_empty()) {
            out.push('\n');
            out.push_str(line);
        }
        out.push_str("\n\n");
        out
    }

    /// Whether the session is over.
    pub fn is_quit(&self) -> bool {
        matches!(self, Reply::Quit { .. })
    }
}

/// What an engine does when a game of another board or marble set begins (`newgame`,
/// `setposition`): keeps its player (`Ok(None)`), takes another (`Ok(Some((spec, models)))`,
/// such as the built-in network where it plays and rollout MCTS elsewhere), or refuses the game
/// with a one-line reason (`Err`: its network was not trained for it).
pub type VariantHook =
    Box<dyn FnMut(Variant) -> Result<Option<(PlayerSpec, Models)>, String> + Send>;

/// A game played over the protocol: the game, the engine's player, and what `undo` goes back to.
pub struct EngineSession {
    player: Box<dyn Bot>,
    seed: u64,
    /// Ends every search under way when set ([`EngineSession::with_stop`]).
    stop: Option<Arc<AtomicBool>>,
    /// Asked when the variant changes ([`EngineSession::with_variant_hook`]).
    hook: Option<VariantHook>,
    analyzer: Analyzer,
    /// An alpha-beta player's searcher for `analyze` (its own table), in place of `analyzer`.
    alphabeta: Option<AlphaBetaBot>,
    /// The memory budget of every search tree (`genmove`'s and `analyze`'s).
    max_tree_bytes: usize,
    game: Game,
    /// The game at the start of every turn played since the game (or position) was set, the
    /// current one included once any of it is played: what `undo` goes back to.
    turns: Vec<Game>,
}

impl fmt::Debug for EngineSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EngineSession")
            .field("player", &self.player.name())
            .field("position", self.game.position())
            .field("turns", &self.turns.len())
            .finish_non_exhaustive()
    }
}

/// What a command did: an answer, or an error message.
type Done = Result<String, String>;

impl EngineSession {
    /// A session whose engine plays as `spec` (seeded by `seed`; a network's player takes its
    /// network from `models`), at the start of a game of `variant`. `analyze` searches as
    /// [`PlayerSpec::analyzer`] says. An error names a network missing from `models`, or a
    /// `cmd:` program that does not start.
    pub fn new(
        spec: &PlayerSpec,
        models: &Models,
        seed: u64,
        variant: Variant,
    ) -> Result<EngineSession, SpecError> {
        let mut session = EngineSession {
            player: Box::new(crate::players::RandomBot::new(seed)),
            seed,
            stop: None,
            hook: None,
            analyzer: spec.analyzer(seed, models)?,
            alphabeta: None,
            max_tree_bytes: DEFAULT_MAX_TREE_BYTES,
            game: Game::new(variant, Player::P0),
            turns: Vec::new(),
        };
        session.take_player(spec, models)?;
        Ok(session)
    }

    /// Plays as `spec` from now on (its searches held to the session's stop and tree budget).
    fn take_player(&mut self, spec: &PlayerSpec, models: &Models) -> Result<(), SpecError> {
        let limits = ProgramLimits { stop: self.stop.clone(), ..ProgramLimits::default() };
        let mut player = spec.build_with(self.seed, models, &limits)?;
        player.set_max_tree_bytes(self.max_tree_bytes);
        let analyzer = spec.analyzer(self.seed, models)?;
        self.alphabeta = match spec.untimed() {
            PlayerSpec::AlphaBeta(depth) => {
                let mut p = AlphaBetaBot::new(*depth);
                p.set_move_time(spec.own_time());
                if let Some(stop) = &self.stop {
                    p.set_stop(stop.clone());
                }
                Some(p)
            }
            _ => None,
        };
        (self.player, self.analyzer) = (player, analyzer);
        Ok(())
    }

    /// The same session whose search trees (`genmove`'s and `analyze`'s) hold at most `bytes`
    /// each ([`DEFAULT_MAX_TREE_BYTES`] unless set): a search stops there, `analyze` answers with
    /// the simulations it ran.
    pub fn with_max_tree_bytes(mut self, bytes: usize) -> EngineSession {
        self.max_tree_bytes = bytes;
        self.player.set_max_tree_bytes(bytes);
        self
    }

    /// The same session whose searches (`genmove`'s, `analyze`'s) end soon after `stop` is set,
    /// answering with what they found by then ([`Bot::set_stop`]); a `cmd:` player's program is
    /// ended. Set it before the first command.
    pub fn with_stop(mut self, stop: Arc<AtomicBool>) -> EngineSession {
        self.player.set_stop(stop.clone());
        if let Some(p) = &mut self.alphabeta {
            p.set_stop(stop.clone());
        }
        self.stop = Some(stop);
        self
    }

    /// The same session that asks `hook` whenever a game of another board or marble set begins
    /// (`newgame`, `setposition`), and plays, switches player or refuses as it says
    /// ([`VariantHook`]).
    pub fn with_variant_hook(mut self, hook: VariantHook) -> EngineSession {
        self.hook = Some(hook);
        self
    }

    /// Readies the player for a game of `variant` (see [`VariantHook`]); an error refuses it.
    fn enter_variant(&mut self, variant: Variant) -> Result<(), String> {
        if variant == self.game.position().variant() {
            return Ok(());
        }
        let Some(hook) = &mut self.hook else { return Ok(()) };
        if let Some((spec, models)) = hook(variant)? {
            self.take_player(&spec, &models).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// The game so far.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The engine's player's name (its spec).
    pub fn player_name(&self) -> &str {
        self.player.name()
    }

    /// Answers one line of input (see the module description); never panics, whatever the line.
    pub fn handle(&mut self, line: &str) -> Reply {
        let line = clean(line);
        let mut words = line.split(' ').filter(|w| !w.is_empty());
        let Some(first) = words.next() else { return Reply::Nothing };
        let (id, command) = if first.bytes().all(|b| b.is_ascii_digit()) {
            let Ok(id) = first.parse::<u64>() else {
                return Reply::Error { id: None, text: format!("bad id '{first}': too large") };
            };
            match words.next() {
                Some(c) => (Some(id), c),
                None => return Reply::Error { id: Some(id), text: "no command".into() },
            }
        } else {
            (None, first)
        };
        let args: Vec<&str> = words.collect();
        let command = command.to_ascii_lowercase();
        if command == "quit" {
            if !args.is_empty() {
                return Reply::Error { id, text: "quit takes no arguments".into() };
            }
            return Reply::Quit { id };
        }
        match self.run(&command, &args) {
            Ok(text) => Reply::Answer { id, text },
            Err(text) => Reply::Error { id, text: one_line(&text) },
        }
    }

    fn run(&mut self, command: &str, args: &[&str]) -> Done {
        let none = |answer: String| -> Done {
            if args.is_empty() { Ok(answer) } else { Err(format!("{command} takes no arguments")) }
        };
        match command {
            "name" => none(ENGINE_NAME.into()),
            "version" => none(env!("CARGO_PKG_VERSION").into()),
            "protocol_version" => none(PROTOCOL_VERSION.to_string()),
            "list_commands" | "help" => none(COMMANDS.join("\n")),
            "newgame" => self.new_game(args),
            "play" => match args {
                [text] => self.play(text),
                [] => Err("play needs a move: play MOVE".into()),
                _ => Err("play takes one move, without spaces (Wd4,a1)".into()),
            },
            "genmove" => {
                none(String::new())?;
                self.genmove()
            }
            "undo" => {
                none(String::new())?;
                self.undo()
            }
            "legal" => {
                let pos = self.game.position();
                let moves: Vec<String> =
                    self.game.legal_moves().iter().map(|m| pos.move_to_string(m)).collect();
                none(moves.join(" "))
            }
            "position" => none(self.game.position().to_text()),
            "setposition" => self.set_position(&args.join(" ")),
            "showboard" => none(format!("\n{}", self.game.position().diagram())),
            "analyze" => match args {
                [n] if self.alphabeta.is_some() => self.analyze_alphabeta(n),
                [n] => self.analyze(n),
                _ if self.alphabeta.is_some() => {
                    Err("analyze needs a depth in whole turns: analyze N".into())
                }
                _ => Err("analyze needs a number of simulations: analyze N".into()),
            },
            _ => Err(format!("unknown command '{command}'")),
        }
    }

    /// `newgame [BOARD] [blitz|standard]`: the start of a game, of the current board and marble
    /// set where none is named.
    fn new_game(&mut self, args: &[&str]) -> Done {
        let mut variant = self.game.position().variant();
        let (mut board, mut set) = (None, None);
        for &arg in args {
            if arg.bytes().all(|b| b.is_ascii_digit()) && board.is_none() {
                board = Some(arg.parse::<Board>().map_err(|e| e.to_string())?);
            } else if let (Some(s), None) = (MarbleSet::from_name(arg), set) {
                set = Some(s);
            } else {
                return Err(format!(
                    "bad newgame argument '{arg}': write newgame BOARD [blitz], such as \
                     newgame 37 or newgame 48 blitz"
                ));
            }
        }
        variant.board = board.unwrap_or(variant.board);
        variant.marbles =
            set.unwrap_or(if board.is_some() { MarbleSet::Standard } else { variant.marbles });
        self.enter_variant(variant)?;
        self.game = Game::new(variant, Player::P0);
        self.turns.clear();
        Ok(String::new())
    }

    /// `setposition TEXT`.
    fn set_position(&mut self, text: &str) -> Done {
        if text.is_empty() {
            return Err("setposition needs a position in the text format".into());
        }
        let pos = Position::from_text(text).map_err(|e| format!("bad position: {e}"))?;
        self.enter_variant(pos.variant())?;
        self.game = Game::from_position(pos);
        self.turns.clear();
        Ok(String::new())
    }

    /// Keeps the game for `undo` when a turn begins (or when nothing is kept yet: a position set
    /// in the middle of a chain).
    fn note_turn(&mut self) {
        if self.turns.is_empty() || self.game.position().chain().is_none() {
            self.turns.push(self.game.clone());
        }
    }

    /// `play MOVE`: a whole move, or one hop of a chain.
    fn play(&mut self, text: &str) -> Done {
        if self.game.is_over() {
            return Err("the game is over".into());
        }
        let pos = *self.game.position();
        let actions = match pos.parse_legal_move(text) {
            Ok(m) => pos.move_actions(&m),
            Err(whole) => match pos.parse_legal_action(text) {
                Ok(a) => vec![a],
                Err(_) => {
                    return Err(format!("illegal move '{text}': {}", why_illegal(&pos, whole)));
                }
            },
        };
        let (kept, turns) = (self.game.clone(), self.turns.len());
        self.note_turn();
        for a in actions {
            let before = *self.game.position();
            if let Err(e) = self.game.play_action(&a) {
                self.game = kept;
                self.turns.truncate(turns);
                return Err(format!("illegal move '{text}': {e}"));
            }
            self.player.observe(&before, &a);
        }
        Ok(String::new())
    }

    /// `genmove`: the engine plays the rest of the turn; the answer is the whole move in notation
    /// (a chain from the ring where it started at this turn, or at this hop of it).
    fn genmove(&mut self) -> Done {
        if self.game.is_over() {
            return Err("the game is over".into());
        }
        let (kept, turns) = (self.game.clone(), self.turns.len());
        let start = *self.game.position();
        self.note_turn();
        let mut played: Vec<Action> = Vec::new();
        let failed = loop {
            let before = *self.game.position();
            let a = match self.player.choose(&before) {
                Ok(a) => a,
                Err(e) => break Some(e.to_string()),
            };
            if self.game.play_action(&a).is_err() {
                let name = self.player.name();
                break Some(format!(
                    "player {name} chose the illegal action '{}'",
                    before.action_to_string(&a)
                ));
            }
            self.player.observe(&before, &a);
            played.push(a);
            let pos = self.game.position();
            if self.game.is_over() || pos.chain().is_none() || pos.turn() != start.turn() {
                break None;
            }
            if played.len() > MAX_CHAIN {
                break Some("the engine's chain does not end".into());
            }
        };
        if let Some(e) = failed {
            self.game = kept;
            self.turns.truncate(turns);
            return Err(e);
        }
        Ok(move_text(&start, &played))
    }

    /// `undo`: back to the start of the turn under way, if any of it is played, else of the last
    /// turn.
    fn undo(&mut self) -> Done {
        match self.turns.pop() {
            Some(game) => {
                self.game = game;
                Ok(String::new())
            }
            None => Err("nothing to undo".into()),
        }
    }

    /// `analyze N` of an alpha-beta player: a search to depth N (whole turns), within the
    /// player's time per move if it has one (`alphabeta`, `alphabeta:time=SECONDS`), and its
    /// score, depth reached, node counts and principal variation:
    /// `score S depth D nodes N qnodes Q` (`mate M` after it for a forced result, `M` turns of
    /// both sides away, negative when lost), then `pv MOVE MOVE ...`.
    fn analyze_alphabeta(&mut self, n: &str) -> Done {
        let depth = match n.parse::<u32>() {
            Ok(d) if (1..=MAX_DEPTH).contains(&d) => d,
            _ => return Err(format!("bad depth '{n}': write a number from 1 to {MAX_DEPTH}")),
        };
        if self.game.is_over() {
            return Err("the game is over".into());
        }
        let Some(searcher) = &mut self.alphabeta else {
            return Err("this engine does not search with alpha-beta".into());
        };
        let limits = Limits { max_depth: depth, ..searcher.limits() };
        let pos = *self.game.position();
        let report = searcher.analyze(&pos, Some(limits)).ok_or("the game is over")?;
        let mut out = format!(
            "score {} depth {} nodes {} qnodes {}",
            report.score, report.depth, report.nodes, report.qnodes
        );
        if let Some(m) = report.mate_in() {
            out.push_str(&format!(" mate {m}"));
        }
        out.push_str("\npv");
        let mut p = pos;
        for m in &report.pv {
            out.push(' ');
            out.push_str(&p.move_to_string(m));
            p.play_unchecked(m);
        }
        Ok(out)
    }

    /// `analyze N`.
    fn analyze(&mut self, n: &str) -> Done {
        let sims = match n.parse::<u32>() {
            Ok(s) if (1..=MAX_SIMULATIONS).contains(&s) => s,
            _ => {
                return Err(format!(
                    "bad simulation count '{n}': write a number from 1 to {MAX_SIMULATIONS}"
                ));
            }
        };
        if self.game.is_over() {
            return Err("the game is over".into());
        }
        let stop = self.stop.clone();
        let analysis = self
            .analyzer
            .analyze_until(self.game.position(), sims, self.max_tree_bytes, &mut || {
                stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
            })
            .map_err(|e| format!("the analysis failed: {e}"))?;
        let proven = |p: Option<i8>| match p {
            Some(1) => " proven win",
            Some(0) => " proven draw",
            Some(_) => " proven loss",
            None => "",
        };
        let mut out = format!(
            "value {:.4} simulations {}{}",
            analysis.value,
            analysis.simulations,
            proven(analysis.proven)
        );
        for m in analysis.moves.iter().filter(|m| m.visits > 0) {
            out.push_str(&format!(
                "\n{} visits {} prior {:.5} value {:.4}{}",
                m.notation,
                m.visits,
                m.prior,
                m.value,
                proven(m.proven)
            ));
        }
        Ok(out)
    }
}

/// The actions of one turn played from `start` as one move in notation: a placement or a pass,
/// or the hops as one chain.
fn move_text(start: &Position, actions: &[Action]) -> String {
    let hops: Vec<_> = actions
        .iter()
        .filter_map(|a| if let Action::Hop(h) = a { Some(*h) } else { None })
        .collect();
    match (actions, hops.first()) {
        ([single], None) => start.action_to_string(single),
        (_, Some(first)) if hops.len() == actions.len() => {
            let chain = hops.iter().fold(Chain::new(first.from), |c, h| c.with(h.dir));
            start.move_to_string(&Move::Capture(chain))
        }
        _ => actions.iter().map(|a| start.action_to_string(a)).collect::<Vec<_>>().join(" "),
    }
}

/// Why `text` is not a move here, for an error: what could not be read, or which rule it breaks.
fn why_illegal(pos: &Position, error: MoveError) -> String {
    match error {
        MoveError::Parse(e) => e.to_string(),
        MoveError::Illegal(_) => match pos.chain() {
            Some(r) => format!(
                "the marble on {} must jump on (play one of: {})",
                pos.geometry().name(r),
                legal_list(pos)
            ),
            None if pos.has_capture() => {
                format!("a capture is compulsory (play one of: {})", legal_list(pos))
            }
            None => "not legal in this position".into(),
        },
    }
}

/// Up to ten legal moves, for an error.
fn legal_list(pos: &Position) -> String {
    let moves = pos.legal_moves();
    let mut list: Vec<String> = moves.iter().take(10).map(|m| pos.move_to_string(m)).collect();
    if moves.len() > 10 {
        list.push("...".into());
    }
    list.join(" ")
}

/// A line without its comment, control characters and extra whitespace: words separated by one
/// space.
fn clean(line: &str) -> String {
    let line = line.split('#').next().unwrap_or("");
    let words: Vec<&str> = line.split(|c: char| c.is_whitespace() || c.is_control()).collect();
    words.into_iter().filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

/// `text` on one line (its lines joined by " | ").
fn one_line(text: &str) -> String {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" | ")
}
