//! [`PlayerSpec`], the players named in text, its grammar ([`FromStr`], [`fmt::Display`]),
//! [`Models`] for neural players, and [`parse_player`].

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use zertz_search::alphabeta::MAX_DEPTH;
use zertz_search::config::MAX_GUMBEL_ACTIONS;
use zertz_search::evaluator::{Evaluator, RolloutEvaluator, UniformEvaluator};
use zertz_search::mcts::MAX_SEARCH_THREADS;
use zertz_search::{Precision, Preset, SearchConfig};

use super::command::{self, CommandBot, ProgramLimits};
use super::mcts::for_search_threads;
use super::timed::TimedBot;
use super::{
    AlphaBetaBot, Bot, GreedyBot, MAX_SIMULATIONS, MctsBot, RandomBot, SpecError, check_move_time,
};
use crate::analysis::Analyzer;

/// A player named in text: `random`, `greedy`, `mcts:SIMS` (rollout MCTS), `uniform:SIMS`,
/// `nn:MODEL[:SIMS][:PRECISION][:gumbel=K]` (search guided by an exported network, in its own
/// precision `fp32`, `bf16`, `fp16` or `auto` when one is named, else in the job's; with a Gumbel
/// root that considers K actions when `gumbel=K` is given, else PUCT's; the evaluator of each
/// model comes from the caller through [`Models`], since this crate does not load networks), or
/// `cmd:PROGRAM ARGS` (another program that speaks the engine protocol, [`CommandBot`]; the
/// words are split on whitespace, and a word in double quotes may hold spaces: `cmd:"my
/// engine" --player nn:"runs/a b/model.pt"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlayerSpec {
    /// [`RandomBot`].
    Random,
    /// [`GreedyBot`].
    Greedy,
    /// [`MctsBot::rollout`] with this many simulations.
    Mcts(u32),
    /// [`MctsBot::uniform`] with this many simulations.
    Uniform(u32),
    /// [`MctsBot::neural`]: a model file and simulations per decision.
    Neural {
        /// The model file, as written in the spec.
        model: String,
        /// Simulations per decision.
        simulations: u32,
        /// The precision the spec names (None: the job's).
        precision: Option<Precision>,
        /// Actions a Gumbel root considers (`:gumbel=K`, [`SearchConfig::gumbel_actions`]);
        /// None: a PUCT root.
        gumbel: Option<u32>,
    },
    /// [`CommandBot`]: a program and its arguments (at least the program).
    Command(Vec<String>),
    /// [`AlphaBetaBot`] to a fixed depth in whole turns (`alphabeta:DEPTH`), or deepening
    /// for its time per move (`alphabeta`: [`DEFAULT_ALPHABETA_TIME`] unless a match or
    /// `:time=` sets one).
    AlphaBeta(Option<u32>),
    /// A searching player (alpha-beta, MCTS or a network's) with its own time per move:
    /// `SPEC:time=SECONDS`. A match's time per move does not replace it, so two players may have
    /// different times (a handicap).
    Timed {
        /// The player.
        spec: Box<PlayerSpec>,
        /// Its time per move ([`check_move_time`]).
        time: Duration,
    },
}

/// The time per move of `alphabeta` when neither its spec nor the match gives one.
pub const DEFAULT_ALPHABETA_TIME: Duration = Duration::from_secs(1);

/// Simulations of `mcts` and `uniform` without a count.
pub const DEFAULT_SIMULATIONS: u32 = 1000;
/// Simulations of `nn:MODEL` without a count.
pub const DEFAULT_NEURAL_SIMULATIONS: u32 = 400;

/// A neural player's network: the model file as written in its spec and the precision the spec
/// names, if any ([`PlayerSpec::network`]).
pub type ModelKey = (String, Option<Precision>);

/// The evaluators of neural players, by model file and precision as written in their specs (see
/// [`PlayerSpec::network`]), and the threads of each neural player's search. One evaluator serves
/// every game of a match, so that a batching evaluator can merge the searches of all games.
#[derive(Clone)]
pub struct Models {
    evaluators: BTreeMap<ModelKey, Arc<dyn Evaluator>>,
    search_threads: usize,
}

impl Default for Models {
    fn default() -> Models {
        Models { evaluators: BTreeMap::new(), search_threads: 1 }
    }
}

impl fmt::Debug for Models {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Models")
            .field("models", &self.evaluators.keys().collect::<Vec<_>>())
            .field("search_threads", &self.search_threads)
            .finish()
    }
}

impl Models {
    /// No models: only non-neural players can be built.
    pub fn new() -> Models {
        Models::default()
    }

    /// The same models, and neural players built from them search with `threads` threads each
    /// ([`Bot::set_search_threads`]; 1 to [`MAX_SEARCH_THREADS`]): one game on several cores.
    pub fn with_search_threads(mut self, threads: usize) -> Models {
        self.search_threads = threads.clamp(1, MAX_SEARCH_THREADS);
        self
    }

    /// The threads of each neural player's search ([`Models::with_search_threads`]; 1 unless
    /// set).
    pub fn search_threads(&self) -> usize {
        self.search_threads
    }

    /// Adds the evaluator of `model` for the specs that name no precision.
    pub fn insert(&mut self, model: impl Into<String>, evaluator: Arc<dyn Evaluator>) {
        self.evaluators.insert((model.into(), None), evaluator);
    }

    /// Adds the evaluator of a network ([`PlayerSpec::network`]).
    pub fn insert_key(&mut self, key: ModelKey, evaluator: Arc<dyn Evaluator>) {
        self.evaluators.insert(key, evaluator);
    }

    /// Whether the network of `key` is loaded.
    pub fn contains(&self, model: &str, precision: Option<Precision>) -> bool {
        self.evaluators.contains_key(&(model.to_string(), precision))
    }
}

impl PlayerSpec {
    /// The model file of a neural player.
    pub fn model(&self) -> Option<&str> {
        self.network().map(|(model, _)| model)
    }

    /// The network of a neural player: its model file and the precision it names, if any.
    pub fn network(&self) -> Option<(&str, Option<Precision>)> {
        match self {
            PlayerSpec::Neural { model, precision, .. } => Some((model, *precision)),
            PlayerSpec::Timed { spec, .. } => spec.network(),
            _ => None,
        }
    }

    /// The player without its own time per move (`SPEC` of `SPEC:time=SECONDS`).
    pub fn untimed(&self) -> &PlayerSpec {
        match self {
            PlayerSpec::Timed { spec, .. } => spec,
            other => other,
        }
    }

    /// The time per move the spec gives its player (`:time=`), if any.
    pub fn own_time(&self) -> Option<Duration> {
        match self {
            PlayerSpec::Timed { time, .. } => Some(*time),
            _ => None,
        }
    }

    /// Whether the player searches here, so that a time per move applies to it (alpha-beta,
    /// MCTS and networks' players; not `random`, `greedy` or a `cmd:` program).
    pub fn searches(&self) -> bool {
        match self {
            PlayerSpec::Mcts(_)
            | PlayerSpec::Uniform(_)
            | PlayerSpec::Neural { .. }
            | PlayerSpec::AlphaBeta(_)
            | PlayerSpec::Timed { .. } => true,
            PlayerSpec::Random | PlayerSpec::Greedy | PlayerSpec::Command(_) => false,
        }
    }

    /// The program and arguments of a `cmd:` player.
    pub fn command(&self) -> Option<&[String]> {
        match self {
            PlayerSpec::Command(words) => Some(words),
            _ => None,
        }
    }

    /// The evaluator of a neural player, from `models`; an error names a missing one.
    fn network_evaluator(&self, models: &Models) -> Result<Option<Arc<dyn Evaluator>>, SpecError> {
        let Some((model, precision)) = self.network() else { return Ok(None) };
        match models.evaluators.get(&(model.to_string(), precision)) {
            Some(eval) => Ok(Some(eval.clone())),
            None => {
                Err(SpecError::NotLoaded { player: self.to_string(), model: model.to_string() })
            }
        }
    }

    /// A fresh player; `seed` drives its random choices (and playouts). A neural player takes its
    /// evaluator from `models`; an error names a missing one. A `cmd:` player starts its program
    /// (one process per player built; see [`CommandBot::start`]).
    pub fn build(&self, seed: u64, models: &Models) -> Result<Box<dyn Bot>, SpecError> {
        self.build_with(seed, models, &ProgramLimits::default())
    }

    /// [`PlayerSpec::build`] whose `cmd:` player holds its program to `limits`, and whose
    /// searches end when `limits.stop` is set ([`Bot::set_stop`]).
    pub fn build_with(
        &self,
        seed: u64,
        models: &Models,
        limits: &ProgramLimits,
    ) -> Result<Box<dyn Bot>, SpecError> {
        let mut player: Box<dyn Bot> = match self {
            PlayerSpec::Random => Box::new(RandomBot::new(seed)),
            PlayerSpec::Greedy => Box::new(GreedyBot::new(seed)),
            PlayerSpec::Mcts(n) => Box::new(MctsBot::rollout(*n, seed)),
            PlayerSpec::Uniform(n) => Box::new(MctsBot::uniform(*n, seed)),
            PlayerSpec::Neural { simulations, gumbel, .. } => {
                let eval = self.network_evaluator(models)?.expect("a neural player's network");
                // A Gumbel root when the spec asks for one (0: PUCT's, the preset's own).
                let config = SearchConfig {
                    gumbel_actions: gumbel.unwrap_or(0),
                    ..Preset::Network.config()
                };
                let mut bot =
                    MctsBot::neural(self.to_string(), eval, *simulations, seed).with_config(config);
                bot.set_search_threads(models.search_threads);
                Box::new(bot)
            }
            PlayerSpec::Command(words) => Box::new(CommandBot::start_with(words, limits.clone())?),
            PlayerSpec::AlphaBeta(depth) => Box::new(AlphaBetaBot::new(*depth)),
            PlayerSpec::Timed { spec, time } => {
                let mut inner = spec.build_with(seed, models, limits)?;
                inner.set_move_time(Some(*time));
                Box::new(TimedBot { name: self.to_string(), inner })
            }
        };
        // The stop that ends a program's wait ends a search too.
        if let Some(stop) = &limits.stop {
            player.set_stop(stop.clone());
        }
        Ok(player)
    }

    /// [`PlayerSpec::build_with`] for a game at `move_time` per move (`None`: each player's own
    /// measure): a searching player without its own `:time=` searches for that time.
    pub fn build_for_time(
        &self,
        seed: u64,
        models: &Models,
        limits: &ProgramLimits,
        move_time: Option<Duration>,
    ) -> Result<Box<dyn Bot>, SpecError> {
        let mut player = self.build_with(seed, models, limits)?;
        if move_time.is_some() && self.own_time().is_none() {
            player.set_move_time(move_time);
        }
        Ok(player)
    }

    /// The evaluator and search settings with which this player's positions are analysed
    /// ([`crate::analysis::analyze`]): a network's player (`nn:`) its network from `models` with
    /// [`Preset::Network`]; `uniform:` the [`UniformEvaluator`] with [`Preset::Rollout`]; every
    /// other player (`mcts:`, and `random`, `greedy` and `cmd:`, which do not search here)
    /// random playouts seeded by `seed` ([`RolloutEvaluator`], one per leaf) with
    /// [`Preset::Rollout`], as `mcts:` searches. A Gumbel root (`gumbel=K`) is not analysed as
    /// such: an analysis reports every legal action's visits, which a PUCT root spreads by the
    /// priors and a Gumbel root gives to its K candidates only, so the analysis searches with the
    /// player's PUCT root. A network's analysis searches on [`Models::search_threads`] threads
    /// as its player does ([`search_threads`](zertz_search::mcts::search_threads), at least
    /// [`LEAVES_PER_SEARCH_THREAD`](super::LEAVES_PER_SEARCH_THREAD) leaves a round on each).
    /// An error names a network missing from `models`.
    pub fn analyzer(&self, seed: u64, models: &Models) -> Result<Analyzer, SpecError> {
        let (evaluator, preset): (Arc<dyn Evaluator>, Preset) = match self {
            PlayerSpec::Neural { .. } => {
                let network = self.network_evaluator(models)?.expect("a neural player's network");
                let threads = models.search_threads();
                let config = for_search_threads(&Preset::Network.config(), threads);
                return Ok(Analyzer { evaluator: network, config, threads });
            }
            PlayerSpec::Uniform(_) => (Arc::new(UniformEvaluator), Preset::Rollout),
            PlayerSpec::Timed { spec, .. } => return spec.analyzer(seed, models),
            PlayerSpec::Random
            | PlayerSpec::Greedy
            | PlayerSpec::Mcts(_)
            | PlayerSpec::AlphaBeta(_)
            | PlayerSpec::Command(_) => {
                (Arc::new(RolloutEvaluator { rollouts: 1, seed }), Preset::Rollout)
            }
        };
        Ok(Analyzer { evaluator, config: preset.config(), threads: 1 })
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerSpec::Random => write!(f, "random"),
            PlayerSpec::Greedy => write!(f, "greedy"),
            PlayerSpec::Mcts(n) => write!(f, "mcts:{n}"),
            PlayerSpec::Uniform(n) => write!(f, "uniform:{n}"),
            PlayerSpec::Neural { model, simulations, precision, gumbel } => {
                write!(f, "nn:{model}:{simulations}")?;
                if let Some(p) = precision {
                    write!(f, ":{p}")?;
                }
                match gumbel {
                    Some(k) => write!(f, ":gumbel={k}"),
                    None => Ok(()),
                }
            }
            PlayerSpec::Command(words) => write!(f, "cmd:{}", command::join_words(words)),
            PlayerSpec::AlphaBeta(None) => write!(f, "alphabeta"),
            PlayerSpec::AlphaBeta(Some(d)) => write!(f, "alphabeta:{d}"),
            PlayerSpec::Timed { spec, time } => write!(f, "{spec}:time={}", time.as_secs_f64()),
        }
    }
}

impl FromStr for PlayerSpec {
    type Err = SpecError;

    fn from_str(spec: &str) -> Result<PlayerSpec, SpecError> {
        let spec = spec.trim();
        // A searching player's own time per move: SPEC:time=SECONDS (not inside a program's
        // words).
        let is_cmd = spec.get(..4).is_some_and(|k| k.eq_ignore_ascii_case("cmd:"));
        // A time per move ends the spec: anything after it would be read as part of a model's
        // name.
        let is_time = |p: &str| p.trim().get(..5).is_some_and(|k| k.eq_ignore_ascii_case("time="));
        let parts: Vec<&str> = spec.split(':').skip(1).collect();
        let times = parts.iter().filter(|p| is_time(p)).count();
        let last_is_time = parts.last().is_some_and(|p| is_time(p));
        if let Some(early) =
            parts.iter().find(|p| is_time(p)).filter(|_| !is_cmd && times == 1 && !last_is_time)
        {
            return Err(SpecError::Part {
                player: spec.to_string(),
                part: early.trim().to_string(),
                reason: "must end the spec (SPEC:time=SECONDS)".into(),
            });
        }
        if let Some((inner, tail)) = spec.rsplit_once(':') {
            let tail = tail.trim();
            let is_time = tail.get(..5).is_some_and(|k| k.eq_ignore_ascii_case("time="));
            if is_time && !is_cmd {
                let bad = |reason: String| SpecError::Time { player: spec.to_string(), reason };
                let seconds = tail[5..]
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| bad(format!("'{}' is not a number of seconds", &tail[5..])))?;
                let time = check_move_time(seconds).map_err(bad)?;
                let inner: PlayerSpec = inner.parse()?;
                return match inner {
                    PlayerSpec::Timed { .. } => Err(bad("one time per move at most".into())),
                    _ if !inner.searches() => {
                        Err(bad(format!("{inner} does not search, so it takes no time per move")))
                    }
                    _ => Ok(PlayerSpec::Timed { spec: Box::new(inner), time }),
                };
            }
        }
        let (kind, arg) = match spec.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (spec, None),
        };
        let sims = |arg: Option<&str>, default: u32| -> Result<u32, SpecError> {
            match arg {
                None => Ok(default),
                Some(a) => match a.trim().parse::<u32>() {
                    Ok(n) if (1..=MAX_SIMULATIONS).contains(&n) => Ok(n),
                    _ => Err(SpecError::Simulations(spec.to_string())),
                },
            }
        };
        match (kind.to_ascii_lowercase().as_str(), arg) {
            ("cmd", Some(rest)) => {
                let bad = |reason: &str| SpecError::BadCommand {
                    player: spec.to_string(),
                    reason: reason.to_string(),
                };
                let words = command::split_words(rest).map_err(bad)?;
                if words.first().is_none_or(|w| w.is_empty()) {
                    return Err(bad("name a program"));
                }
                Ok(PlayerSpec::Command(words))
            }
            ("cmd", None) => Err(SpecError::BadCommand {
                player: spec.to_string(),
                reason: "name a program".into(),
            }),
            ("random", None) => Ok(PlayerSpec::Random),
            ("greedy", None) => Ok(PlayerSpec::Greedy),
            ("mcts", a) => Ok(PlayerSpec::Mcts(sims(a, DEFAULT_SIMULATIONS)?)),
            ("uniform", a) => Ok(PlayerSpec::Uniform(sims(a, DEFAULT_SIMULATIONS)?)),
            ("alphabeta", None) => Ok(PlayerSpec::AlphaBeta(None)),
            ("alphabeta", Some(d)) => match d.trim().parse::<u32>() {
                Ok(d) if (1..=MAX_DEPTH).contains(&d) => Ok(PlayerSpec::AlphaBeta(Some(d))),
                _ => Err(SpecError::Depth(spec.to_string())),
            },
            ("nn", Some(rest)) => {
                // nn:MODEL[:SIMS][:PRECISION][:gumbel=K] (a model path may itself hold colons).
                let (rest, gumbel) = match rest.rsplit_once(':') {
                    Some((m, g))
                        if g.get(..7).is_some_and(|k| k.eq_ignore_ascii_case("gumbel=")) =>
                    {
                        match g[7..].trim().parse::<u32>() {
                            Ok(k) if (2..=MAX_GUMBEL_ACTIONS).contains(&k) => (m, Some(k)),
                            _ => return Err(SpecError::Gumbel(spec.to_string())),
                        }
                    }
                    _ => (rest, None),
                };
                let (rest, precision) = match rest.rsplit_once(':') {
                    Some((m, p)) => match p.parse::<Precision>() {
                        Ok(p) => (m, Some(p)),
                        Err(_) => (rest, None),
                    },
                    None => (rest, None),
                };
                let (model, n) = match rest.rsplit_once(':') {
                    Some((m, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                        (m, sims(Some(n), DEFAULT_NEURAL_SIMULATIONS)?)
                    }
                    _ => (rest, DEFAULT_NEURAL_SIMULATIONS),
                };
                if model.trim().is_empty() {
                    return Err(SpecError::NoModel(spec.to_string()));
                }
                // A word after the model that names no file (no '/', '\\' or '.'), such as
                // `fp8` in nn:builtin:fp8: a misspelt option, not part of the model's name.
                if let Some((_, word)) = model.rsplit_once(':') {
                    let word = word.trim();
                    if !word.is_empty() && !word.contains(['/', '\\', '.']) {
                        let names: Vec<&str> = Precision::ALL.iter().map(|p| p.name()).collect();
                        return Err(SpecError::Part {
                            player: spec.to_string(),
                            part: word.to_string(),
                            reason: format!(
                                "is not a simulation count, a precision ({}) or gumbel=K",
                                names.join(", ")
                            ),
                        });
                    }
                }
                Ok(PlayerSpec::Neural {
                    model: model.trim().to_string(),
                    simulations: n,
                    precision,
                    gumbel,
                })
            }
            _ => Err(SpecError::Unknown(spec.to_string())),
        }
    }
}

/// A fresh non-neural player from its text spec (seed 0); see [`PlayerSpec`].
pub fn parse_player(spec: &str) -> Result<Box<dyn Bot>, SpecError> {
    spec.parse::<PlayerSpec>()?.build(0, &Models::new())
}
