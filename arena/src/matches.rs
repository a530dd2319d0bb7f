//! Matches between two players: games in parallel, results, Elo with a 95% interval, records.
//!
//! Game `i` of a match has player A move first when `i` is even, B otherwise. Every game gets a
//! fresh pair of players seeded from the match seed and the game index, so a match is reproducible
//! and does not depend on the number of threads.
//!
//! A match keeps only its counts: each game goes to the caller's `on_game` in game order as soon
//! as the games before it have ended (a [`RecordWriter`] writes them as JSON lines), and a worker
//! never runs far ahead of the first game not yet handed over, so a match of millions of games
//! takes no more memory than a few hundred.
//!
//! ```
//! use zertz_env::Variant;
//! use zertz_arena::matches::play_match;
//! let result = play_match("greedy", "random", 4, Variant::default(), 7, 2).unwrap();
//! assert_eq!(result.wins + result.draws + result.losses, 4);
//! ```

use std::collections::BTreeMap;
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use cpu_time::ThreadTime;
use zertz_env::{Game, Outcome, Player, Position, SplitMix64, Variant};

use crate::config::MatchSettings;
use crate::players::command::ProgramLimits;
use crate::players::{Bot, BotError, Models, PlayerSpec, SpecError};
pub use zertz_env::records::End;
use zertz_env::records::GameRecord;
use zertz_settings::Settings;

pub use crate::results::{Effort, Elo, MatchResult, elo, elo_from_score};

/// How often a match looks at its stop flag while games are under way.
const STOP_POLL: Duration = Duration::from_millis(20);

/// Why a match cannot be played or did not finish.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MatchError {
    /// A player spec that cannot be read, or a network's player whose model is not loaded;
    /// nothing was played.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// The settings cannot be played (too many threads or games, an opening that cannot be
    /// played, a thread pool that cannot start); nothing was played.
    #[error("{0}")]
    Settings(String),
    /// A player's bot failed during a game (its network failed, say); the match stops.
    #[error("game {game}: {error}")]
    Bot {
        /// The game's index in the match.
        game: usize,
        /// What went wrong, naming the player.
        error: BotError,
    },
    /// The stop flag of [`run_match_until`] was set (Ctrl-C); the games under way were dropped
    /// (each at its next decision; a program thinking is ended at once).
    #[error("the match was stopped after {games} games")]
    Stopped {
        /// Games finished before the stop.
        games: usize,
    },
    /// The caller's `on_game` refused a game (its record could not be written, say); the match
    /// stops.
    #[error("{0}")]
    Refused(String),
}

impl zertz_env::Classify for MatchError {
    fn class(&self) -> zertz_env::ErrorClass {
        use zertz_env::{Cause, ErrorClass};
        match self {
            MatchError::Spec(_) | MatchError::Settings(_) => ErrorClass::refused(Cause::Invalid),
            MatchError::Bot { .. } | MatchError::Refused(_) => ErrorClass::during(Cause::Failed),
            MatchError::Stopped { .. } => ErrorClass::during(Cause::Stopped),
        }
    }
}

/// One game of a match: its record (the typed record of every game, with the players' names)
/// and what the match counts.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchGame {
    /// The game's record (`game` is its index in the match).
    pub record: GameRecord,
    /// Whether player A of the match moved first (was P0).
    pub a_is_p0: bool,
    /// Single actions played.
    pub actions: u32,
    /// What A did in the game.
    pub a_effort: Effort,
    /// What B did in the game.
    pub b_effort: Effort,
}

impl MatchGame {
    /// Score of player A: 1 for a win, ½ for a draw, 0 for a loss.
    pub fn a_score(&self) -> f64 {
        let a = if self.a_is_p0 { Player::P0 } else { Player::P1 };
        match self.record.winner {
            Some(w) if w == a => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        }
    }

    /// The name of the player who moved first (P0), and of the other.
    pub fn names(&self) -> (&str, &str) {
        match &self.record.players {
            Some([p0, p1]) => (p0, p1),
            None => ("", ""),
        }
    }
}

/// A game played by [`play_game`].
#[derive(Clone, Debug)]
pub struct PlayedGame {
    /// The game, with its moves.
    pub game: Game,
    /// The winner, `None` for a draw.
    pub winner: Option<Player>,
    /// How it ended.
    pub end: End,
    /// Single actions played.
    pub actions: u32,
    /// What P0 and P1 did ([`Effort::work`]: since the player was built).
    pub effort: [Effort; 2],
}

/// Plays one game between `p0` (moving first) and `p1` from the start of `variant`; after
/// `max_actions` single actions an unfinished game is a draw. Both players observe every action.
/// A player that chooses an illegal action loses; a player that cannot choose (its evaluator
/// failed) ends the game with its error.
pub fn play_game(
    p0: &mut dyn Bot,
    p1: &mut dyn Bot,
    variant: Variant,
    max_actions: u32,
) -> Result<PlayedGame, BotError> {
    play_game_from(p0, p1, Game::from_position(Position::new(variant, Player::P0)), 0, max_actions)
}

/// [`play_game`] from a game already under way after `played` single actions (an opening, say),
/// which count towards `max_actions`; the players see only what follows.
pub fn play_game_from(
    p0: &mut dyn Bot,
    p1: &mut dyn Bot,
    game: Game,
    played: u32,
    max_actions: u32,
) -> Result<PlayedGame, BotError> {
    play_game_until(p0, p1, game, played, max_actions, &|| false).map(|g| g.expect("never stopped"))
}

/// [`play_game_from`] that asks `stop` before and after every decision and gives `None` when it
/// says so (a decision its stop cut short is not played).
fn play_game_until(
    p0: &mut dyn Bot,
    p1: &mut dyn Bot,
    mut game: Game,
    played: u32,
    max_actions: u32,
    stop: &dyn Fn() -> bool,
) -> Result<Option<PlayedGame>, BotError> {
    let mut actions = played;
    let mut effort = [Effort::default(); 2];
    let efforts = |effort: &mut [Effort; 2], p0: &dyn Bot, p1: &dyn Bot| {
        for (e, p) in effort.iter_mut().zip([p0, p1]) {
            if let Some((unit, work)) = p.work() {
                e.unit = Some(unit);
                e.work = work;
            }
        }
        *effort
    };
    while actions < max_actions && !game.is_over() {
        if stop() {
            return Ok(None);
        }
        let pos = *game.position();
        let mover: &mut dyn Bot = if pos.turn() == Player::P0 { &mut *p0 } else { &mut *p1 };
        let started = Instant::now();
        let (cpu, elsewhere) = (ThreadTime::now(), mover.cpu_elsewhere());
        let a = mover.choose(&pos)?;
        let cpu = cpu.elapsed() + mover.cpu_elsewhere().saturating_sub(elsewhere);
        // A decision cut short by the stop is not played: the game did not finish.
        if stop() {
            return Ok(None);
        }
        let e = &mut effort[pos.turn().index()];
        e.seconds += started.elapsed().as_secs_f64();
        e.cpu_seconds += cpu.as_secs_f64();
        e.moves += u64::from(pos.chain().is_none());
        if game.play_action(&a).is_err() {
            let winner = Some(!pos.turn());
            let effort = efforts(&mut effort, p0, p1);
            return Ok(Some(PlayedGame { game, winner, end: End::Illegal, actions, effort }));
        }
        actions += 1;
        p0.observe(&pos, &a);
        p1.observe(&pos, &a);
    }
    let (winner, end) = match game.outcome() {
        None => (None, End::Limit),
        Some(Outcome::Win(w)) => (Some(w), End::Win),
        Some(Outcome::Draw) if game.is_repetition() => (None, End::Repetition),
        Some(Outcome::Draw) => (None, End::Draw),
    };
    let effort = efforts(&mut effort, p0, p1);
    Ok(Some(PlayedGame { game, winner, end, actions, effort }))
}

/// Writes the games of a match as JSON lines (see [`GameRecord`]) as `on_game` hands them over
/// (in game order); shared by the workers of a match (`&self`).
#[derive(Debug)]
pub struct RecordWriter<W: Write> {
    out: Mutex<W>,
}

impl<W: Write> RecordWriter<W> {
    /// Writes to `out`.
    pub fn new(out: W) -> RecordWriter<W> {
        RecordWriter { out: Mutex::new(out) }
    }

    /// Writes a game's record as one line, and flushes it: a record is in the file as its game
    /// ends, whatever ends the program next (a second Ctrl-C's exit, a kill). The line goes to `out`
    /// with one `write_all` (one system call to an unbuffered file).
    pub fn add(&self, game: &MatchGame) -> std::io::Result<()> {
        let mut line = game.record.to_json();
        line.push('\n');
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        out.write_all(line.as_bytes())?;
        out.flush()
    }

    /// Flushes and gives the writer back.
    pub fn finish(self) -> std::io::Result<W> {
        let mut out = self.out.into_inner().unwrap_or_else(PoisonError::into_inner);
        out.flush()?;
        Ok(out)
    }
}

/// What a match plays.
#[derive(Clone, Debug)]
pub struct MatchConfig {
    /// Player A, as a [`PlayerSpec`].
    pub a: PlayerSpec,
    /// Player B.
    pub b: PlayerSpec,
    /// Evaluators of the neural players (empty when there are none).
    pub models: Models,
    /// Games, board, seed, threads, opening, limits and time per move.
    /// `opening_actions` are single actions played at random before the players take over, the
    /// same for the two games of a pair (games 2k and 2k + 1, where the players swap sides):
    /// deterministic players would otherwise repeat the same few games. `move_time` is given
    /// to every searching player without its own (`:time=`; [`Bot::set_move_time`]).
    pub settings: MatchSettings,
}

impl MatchConfig {
    /// `a` against `b` with the default settings ([`MatchSettings::default`]) and no networks.
    pub fn new(a: PlayerSpec, b: PlayerSpec) -> MatchConfig {
        MatchConfig::with(a, b, MatchSettings::default())
    }

    /// `a` against `b` with `settings` and no networks.
    pub fn with(a: PlayerSpec, b: PlayerSpec, settings: MatchSettings) -> MatchConfig {
        MatchConfig { a, b, models: Models::new(), settings }
    }
}

/// The seed of one player of one game of a match seeded `seed`: side 0 is player A, side 1
/// player B (side 2 draws the opening of game pair `game`, [`match_opening`]).
pub fn player_seed(seed: u64, game: usize, side: u64) -> u64 {
    let mut rng = SplitMix64(seed ^ (game as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let a = rng.next_u64();
    SplitMix64(a ^ side.wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64()
}

/// Plays one game of a match (see the module description); fails when a neural player's model is
/// not in `config.models`, or when a player fails.
pub fn play_match_game(config: &MatchConfig, game: usize) -> Result<MatchGame, MatchError> {
    let limits = ProgramLimits::with_answer_time(config.settings.answer_time());
    play_match_game_until(config, game, &limits, &|| false)
}

/// [`play_match_game`] whose programs are held to `limits`, stopped ([`MatchError::Stopped`])
/// when `stop` says so before a decision.
fn play_match_game_until(
    config: &MatchConfig,
    game: usize,
    limits: &ProgramLimits,
    stop: &dyn Fn() -> bool,
) -> Result<MatchGame, MatchError> {
    let mut a = match_bot(&config.a, &config.settings, game, 0, &config.models, limits)?;
    let mut b = match_bot(&config.b, &config.settings, game, 1, &config.models, limits)?;
    play_match_game_between(&config.settings, game, a.as_mut(), b.as_mut(), stop)
}

/// The bot of `spec` as a match with `settings` builds it for game `game`: side 0 is player A,
/// side 1 player B (seeded by [`player_seed`], at the match's time per move where the spec has
/// none of its own).
pub fn match_bot(
    spec: &PlayerSpec,
    settings: &MatchSettings,
    game: usize,
    side: u64,
    models: &Models,
    limits: &ProgramLimits,
) -> Result<Box<dyn Bot>, MatchError> {
    spec.build_for_time(
        player_seed(settings.seed, game, side),
        models,
        limits,
        settings.move_time(),
    )
    .map_err(MatchError::Spec)
}

/// Game `game` of a match with `settings` between bots the caller built for it ([`match_bot`]
/// builds Rust's; a caller may bring its own, a Python policy say): `a` is player A, P0
/// in the even games. The game starts from the match's opening ([`match_opening`]) and ends as
/// every game of a match does; `stop` is asked before and after every decision
/// ([`MatchError::Stopped`]).
pub fn play_match_game_between<'a>(
    settings: &MatchSettings,
    game: usize,
    a: &'a mut dyn Bot,
    b: &'a mut dyn Bot,
    stop: &dyn Fn() -> bool,
) -> Result<MatchGame, MatchError> {
    let a_is_p0 = game % 2 == 0;
    let (p0, p1) = if a_is_p0 { (a, b) } else { (b, a) };
    let (p0_name, p1_name) = (p0.name().to_string(), p1.name().to_string());
    let (start, opening) =
        match_opening(settings.variant(), settings.seed, game, settings.opening_actions)?;
    let played = play_game_until(p0, p1, start, opening, settings.max_actions, stop)
        .map_err(|error| MatchError::Bot { game, error })?
        .ok_or(MatchError::Stopped { games: 0 })?;
    let players = Some([p0_name, p1_name]);
    let record = GameRecord::of_game(game as u64, &played.game, played.end, played.winner, players);
    let [e0, e1] = played.effort;
    let (a_effort, b_effort) = if a_is_p0 { (e0, e1) } else { (e1, e0) };
    Ok(MatchGame { record, a_is_p0, actions: played.actions, a_effort, b_effort })
}

/// The start of game `game` of a match seeded `seed`: P0 to move, then up to `actions` random
/// single actions (fewer where the game ends first), drawn for the pair of games `2k` and
/// `2k + 1`, which the players play from both sides (paired openings); with the number of
/// actions played.
pub fn match_opening(
    variant: zertz_env::Variant,
    seed: u64,
    game: usize,
    actions: u32,
) -> Result<(Game, u32), MatchError> {
    let mut start = Game::from_position(Position::new(variant, Player::P0));
    let mut rng = SplitMix64(player_seed(seed, game / 2, 2));
    let mut opening = 0;
    while opening < actions && !start.is_over() {
        let pos = *start.position();
        let Some(a) = pos.nth_legal_action(rng.below(pos.count_legal_actions())) else { break };
        start.play_action(&a).map_err(|e| MatchError::Settings(format!("opening: {e}")))?;
        opening += 1;
    }
    Ok((start, opening))
}

/// Checks the settings of a match ([`MatchSettings`]'s checks: thread and game counts, action
/// limit, times) before any model loads or thread starts.
pub fn check_sizes(config: &MatchConfig) -> Result<(), MatchError> {
    config.settings.validate().map_err(|e| MatchError::Settings(e.to_string()))
}

/// Checks what [`run_match`] checks before it starts anything: the sizes ([`check_sizes`]), and
/// that every neural player's model is loaded.
pub fn check_match(config: &MatchConfig) -> Result<(), MatchError> {
    check_sizes(config)?;
    for spec in [&config.a, &config.b] {
        if let Some((model, precision)) = spec.network() {
            if !config.models.contains(model, precision) {
                return Err(SpecError::NotLoaded {
                    player: spec.to_string(),
                    model: model.to_string(),
                }
                .into());
            }
        }
    }
    Ok(())
}

/// Plays a match on a thread pool of `config.settings.threads` workers; `on_game` hears of every finished
/// game in game order (from one worker at a time), and an error from it stops the match. The
/// settings are checked first ([`check_match`]); a player that fails stops the match with
/// [`MatchError::Bot`].
pub fn run_match(
    config: &MatchConfig,
    on_game: &(dyn Fn(&MatchGame) -> Result<(), MatchError> + Sync),
) -> Result<MatchResult, MatchError> {
    run_match_until(config, on_game, &AtomicBool::new(false))
}

/// Games that may end ahead of the first one not yet handed to `on_game`, per worker (and 64
/// more): a worker waits before it starts a game further ahead, so that the games waiting to be
/// handed over in order take bounded memory whatever the match's length.
const AHEAD_PER_WORKER: usize = 16;

/// The finished games of a match on their way to `on_game`, in game order.
struct Delivery {
    /// The next game to hand over.
    next: usize,
    /// Games that ended before `next`.
    waiting: BTreeMap<usize, MatchGame>,
    /// False once `on_game` refused a game: nothing more is handed over.
    open: bool,
}

/// [`run_match`] that stops when `stop` is set: no game starts after it, the games under way end
/// at their next decision (a program thinking is ended at once), the games finished are handed
/// to `on_game` (in order, past the gaps of those that did not finish), and the match ends with
/// [`MatchError::Stopped`]. A game that fails, or that `on_game` refuses, stops the others the
/// same way.
pub fn run_match_until(
    config: &MatchConfig,
    on_game: &(dyn Fn(&MatchGame) -> Result<(), MatchError> + Sync),
    stop: &AtomicBool,
) -> Result<MatchResult, MatchError> {
    check_match(config)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.settings.threads)
        .build()
        .map_err(|e| MatchError::Settings(format!("cannot start the thread pool: {e}")))?;
    // Set by the caller's flag (seen by a watcher, since programs wait for answers on their own)
    // or by the first game that fails.
    let halt = Arc::new(AtomicBool::new(false));
    let limits = ProgramLimits {
        stop: Some(halt.clone()),
        ..ProgramLimits::with_answer_time(config.settings.answer_time())
    };
    let halted = || halt.load(Ordering::Relaxed);
    let ahead = 64 + AHEAD_PER_WORKER * pool.current_num_threads();
    let next_game = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let [wins, draws, losses] = [(); 3].map(|()| AtomicU32::new(0));
    let efforts = Mutex::new([Effort::default(); 2]);
    let delivery = Mutex::new(Delivery { next: 0, waiting: BTreeMap::new(), open: true });
    let handed = Condvar::new();
    // The first failure (the others are the stops it caused).
    let failure: Mutex<Option<MatchError>> = Mutex::new(None);
    let fail = |e: MatchError| {
        // A failure after the halt (a program told to stop) is the halt's doing.
        if !matches!(e, MatchError::Stopped { .. }) && !halted() {
            failure.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(e);
        }
        halt.store(true, Ordering::Relaxed);
    };
    // Hands over the games that are next in order.
    let hand_over = |d: &mut Delivery| {
        while let Some(game) = d.waiting.remove(&d.next) {
            if d.open {
                if let Err(e) = on_game(&game) {
                    d.open = false;
                    fail(e);
                }
            }
            d.next += 1;
        }
    };
    let lock = || delivery.lock().unwrap_or_else(PoisonError::into_inner);
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            // (Ends at a halt too: a game that panicked halts the match, and the scope waits
            // for this thread before the panic goes on.)
            while !done.load(Ordering::Relaxed) && !halted() {
                if stop.load(Ordering::Relaxed) {
                    halt.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::sleep(STOP_POLL);
            }
        });
        pool.broadcast(|_| {
            while !halted() && !stop.load(Ordering::Relaxed) {
                let i = next_game.fetch_add(1, Ordering::Relaxed);
                if i >= config.settings.games {
                    return;
                }
                let mut d = lock();
                while i >= d.next + ahead && !halted() {
                    d = handed.wait_timeout(d, STOP_POLL).unwrap_or_else(PoisonError::into_inner).0;
                }
                drop(d);
                if halted() {
                    return;
                }
                // A game that panics (a bug) halts the others before the panic goes on: they
                // would wait for its place in the order forever.
                let played = catch_unwind(AssertUnwindSafe(|| {
                    play_match_game_until(config, i, &limits, &halted)
                }))
                .unwrap_or_else(|panic| {
                    halt.store(true, Ordering::Relaxed);
                    resume_unwind(panic)
                });
                match played {
                    Ok(game) => {
                        finished.fetch_add(1, Ordering::Relaxed);
                        let counter = match game.a_score() {
                            1.0 => &wins,
                            0.0 => &losses,
                            _ => &draws,
                        };
                        counter.fetch_add(1, Ordering::Relaxed);
                        {
                            let mut e = efforts.lock().unwrap_or_else(PoisonError::into_inner);
                            e[0] = e[0].add(&game.a_effort);
                            e[1] = e[1].add(&game.b_effort);
                        }
                        let mut d = lock();
                        d.waiting.insert(i, game);
                        hand_over(&mut d);
                        handed.notify_all();
                    }
                    Err(e) => return fail(e),
                }
            }
        });
        done.store(true, Ordering::Relaxed);
    });
    // The games finished past a game that did not: handed over too, nothing is lost.
    let mut d = lock();
    if let Some(&first) = d.waiting.keys().next() {
        d.next = first;
        while let Some(&k) = d.waiting.keys().next() {
            d.next = k;
            hand_over(&mut d);
        }
    }
    drop(d);
    if let Some(e) = failure.into_inner().unwrap_or_else(PoisonError::into_inner) {
        return Err(e);
    }
    let finished = finished.into_inner();
    let efforts = efforts.into_inner().unwrap_or_else(PoisonError::into_inner);
    if finished < config.settings.games {
        return Err(MatchError::Stopped { games: finished });
    }
    Ok(MatchResult {
        a: config.a.to_string(),
        b: config.b.to_string(),
        variant: config.settings.variant(),
        wins: wins.into_inner(),
        draws: draws.into_inner(),
        losses: losses.into_inner(),
        a_effort: efforts[0],
        b_effort: efforts[1],
    })
}

/// Plays `games` games between the players named `spec_a` and `spec_b` (see [`PlayerSpec`]) on
/// `threads` threads (0: one per core), A moving first in the even games.
pub fn play_match(
    spec_a: &str,
    spec_b: &str,
    games: usize,
    variant: Variant,
    seed: u64,
    threads: usize,
) -> Result<MatchResult, MatchError> {
    let settings = MatchSettings {
        games,
        board: variant.board,
        blitz: variant.marbles == zertz_env::MarbleSet::Blitz,
        seed,
        threads,
        ..MatchSettings::default()
    };
    let config = MatchConfig::with(spec_a.parse()?, spec_b.parse()?, settings);
    run_match(&config, &|_| Ok(()))
}
