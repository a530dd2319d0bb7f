//! Training data from game records (`zertz dataset`): the shards that self-play writes, made
//! from people's and robots' games instead.
//!
//! Every record of the sources (folders, files, archives: [`zertz_archive`]) is replayed; a game
//! that passes the filters ([`DatasetConfig`]) gives one sample per action it played (a capture
//! chain one per hop, as in self-play): the observation, the action played as the policy target,
//! and the final result from the mover's view as the value target (1, 0, -1; `root_value` holds it
//! too, there being no search, and `full_search` is true). Games go whole to
//! training or to validation, by a hash of the record's name and the seed (never split by
//! position), into `OUT/train/` and `OUT/validation/` as `shard-BB-NNNNN.npz` (`BB` the board's
//! rings: a shard holds one board), and every kept game is listed in `OUT/games.jsonl` with its
//! id, name, split, board, first player, players, end, winner and moves (in notation: the human-move benchmark
//! replays the validation games from them). Records that cannot be read or break the
//! rules are counted by reason and skipped, never fatal.
//!
//! A dataset is never seen half-written: it is made in a temporary folder beside `out`
//! (`.NAME.partial-PID`, [`zertz_env::files::partial_name`], in the same parent so that the
//! rename is atomic), which gets the manifest [`MANIFEST`] (format, version, settings, summary)
//! last and then takes `out`'s name.
//! A build that fails removes its temporary folder ([`DatasetError::Stopped`]); the folder of a
//! killed one is removed by the next build of the same `out` (and listed in
//! [`DatasetSummary::removed_leftovers`]), unless its process still runs
//! ([`DatasetError::InUse`]). A dataset folder without the manifest is incomplete, or older
//! than the manifest: readers refuse it.
//!
//! The parts, each using only those listed before it:
//!
//! - `error`: why a dataset cannot be made ([`DatasetError`]);
//! - `folder`: the dataset's folder: where a build may write, its temporary folder, the
//!   leftovers of killed builds, the rename that publishes it;
//! - this file: the build itself ([`build`]): its settings ([`DatasetConfig`]), the records
//!   replayed, filtered and split into shards and `games.jsonl`, the manifest, the summary.
//!
//! Every public item is here, at `zertz_selfplay::dataset::`.

use std::collections::BTreeMap;
use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::Serialize;
use zertz_env::encode::Shape;
use zertz_env::sgf::{End, Record};
use zertz_env::{ActionSpace, Board, Player};

use crate::shard::{Sample, ShardWriter, final_captures};

mod error;
mod folder;

pub use error::DatasetError;
use error::io;
use folder::{Partial, publish, refuse_taken, remove_leftovers, resolve, sync_tree};

/// Which games become samples, and how they are split.
#[derive(Clone, Debug, PartialEq)]
pub struct DatasetConfig {
    /// Boards to keep (empty: every board).
    pub boards: Vec<Board>,
    /// Fewest whole turns a game must have.
    pub min_turns: usize,
    /// Player names to leave out (`P0[id "..."]`, any case), for example boardspace's robots.
    pub exclude_players: Vec<String>,
    /// Ends to keep (of [`End::FINISHED`]; all of them by default): unfinished games have no
    /// result and are never kept.
    pub ends: Vec<End>,
    /// Share of games for validation, 0 to 1.
    pub validation: f64,
    /// Seed of the split.
    pub seed: u64,
    /// Samples per shard.
    pub shard_size: usize,
    /// Stop after this many kept games (None: all).
    pub max_games: Option<u64>,
}

/// boardspace.net's robots, as named in its records.
pub const ROBOTS: [&str; 3] = ["Dumbot", "SmartBot", "WeakBot"];

/// An end to keep that is not the end of a finished game ([`parse_ends`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("ends take {words}, not {0:?}", words = finished_words())]
pub struct UnknownEnd(pub String);

/// The names of [`End::FINISHED`], as a sentence says them: `capture, resign, time and draw`.
fn finished_words() -> String {
    let names: Vec<&str> = End::FINISHED.iter().map(|e| e.name()).collect();
    let (last, rest) = names.split_last().expect("four ends");
    format!("{} and {last}", rest.join(", "))
}

/// The ends to keep named by `names` (any case), as the `zertz dataset --ends` option and the
/// `ends` keyword of Python's `zertz.dataset` give them.
pub fn parse_ends<S: AsRef<str>>(names: &[S]) -> Result<Vec<End>, UnknownEnd> {
    names
        .iter()
        .map(|n| {
            let n = n.as_ref();
            End::from_name(n)
                .filter(|e| End::FINISHED.contains(e))
                .ok_or_else(|| UnknownEnd(n.to_string()))
        })
        .collect()
}

impl Default for DatasetConfig {
    fn default() -> DatasetConfig {
        DatasetConfig {
            boards: Vec::new(),
            min_turns: 0,
            exclude_players: Vec::new(),
            ends: End::FINISHED.to_vec(),
            validation: 0.05,
            seed: 0,
            shard_size: 4096,
            max_games: None,
        }
    }
}

/// What a dataset holds, and what was left out and why.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DatasetSummary {
    /// Records read.
    pub records: u64,
    /// Files that are not records.
    pub skipped_files: u64,
    /// Records that cannot be read or break the rules, by reason.
    pub failed: BTreeMap<String, u64>,
    /// Games replayed but left out, by filter (`board`, `short`, `player`, `end`, `max_games`).
    pub filtered: BTreeMap<String, u64>,
    /// Games kept for training, and their samples.
    pub train_games: u64,
    /// See `train_games`.
    pub train_samples: u64,
    /// Games kept for validation, and their samples.
    pub validation_games: u64,
    /// See `validation_games`.
    pub validation_samples: u64,
    /// Shards written (in `out`).
    pub shards: Vec<PathBuf>,
    /// Temporary folders of earlier builds of the same `out` that were stopped part-way (a
    /// killed process), removed before this build.
    pub removed_leftovers: Vec<PathBuf>,
    /// Wall time, in seconds.
    pub seconds: f64,
}

/// The player names of a record (`P0[id "name"]`, `P1[id "name"]`).
pub fn player_names(record: &Record) -> [Option<String>; 2] {
    let name = |label: &str| {
        let p = record.root.iter().find(|p| p.ident == label)?;
        let v = p.values[0].trim();
        let rest = v.strip_prefix("id")?.trim();
        Some(rest.trim_matches('"').to_string())
    };
    [name("P0"), name("P1")]
}

/// Whether a game goes to validation: a hash of its name and the seed (stable across runs, and
/// independent of the order of the sources).
fn is_validation(name: &str, seed: u64, share: f64) -> bool {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    // Only the file's own name: the same record in another folder or archive splits the same.
    let base = name.rsplit(['/', ':', '\\']).next().unwrap_or(name);
    for b in base.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut mix = zertz_env::SplitMix64(h);
    (mix.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= share && share > 0.0
}

/// One line of `games.jsonl`.
#[derive(Serialize)]
struct GameLine<'a> {
    game: u64,
    name: &'a str,
    split: &'static str,
    board: usize,
    first_player: String,
    players: &'a [Option<String>; 2],
    end: &'static str,
    winner: Option<String>,
    turns: usize,
    samples: u64,
    moves: Vec<String>,
}

/// Checks the settings.
pub fn validate(config: &DatasetConfig) -> Result<(), DatasetError> {
    if !(0.0..=1.0).contains(&config.validation) {
        return Err(DatasetError::Settings(format!(
            "validation must be a share from 0 to 1, not {}",
            config.validation
        )));
    }
    if config.shard_size == 0 || config.shard_size > crate::config::MAX_SHARD_SIZE {
        return Err(DatasetError::Settings(format!(
            "shard size must be from 1 to {}, not {}",
            crate::config::MAX_SHARD_SIZE,
            config.shard_size
        )));
    }
    if config.ends.contains(&End::Unfinished) {
        return Err(DatasetError::Settings(
            "unfinished games have no result: they cannot be kept".into(),
        ));
    }
    Ok(())
}

/// The completion manifest of a dataset folder, written last: `format` ([`FORMAT`]),
/// `version` ([`FORMAT_VERSION`]), `sources`, `settings` and `summary` (its shards relative to
/// the folder). A folder without it is no dataset (a build stopped part-way, or an older one).
pub const MANIFEST: &str = "dataset.json";
/// The folder of a dataset's training split; each board's shards there are the writer of its
/// rings ([`crate::shard::shard_glob`]`(Some(rings))`).
pub const TRAIN: &str = "train";
/// The folder of a dataset's validation split (held-out games), laid out as [`TRAIN`].
pub const VALIDATION: &str = "validation";
/// The file of a dataset's games, one JSON line each with its `split` ([`TRAIN`] or
/// [`VALIDATION`]).
pub const GAMES: &str = "games.jsonl";
/// The `format` of [`MANIFEST`].
pub const FORMAT: &str = "zertz-dataset";
/// The `version` of [`MANIFEST`]: the layout of a dataset folder (it changes when the layout
/// does; readers refuse other versions). Version 2: shards of format 2 (with `final_captures`).
/// Version 3: shards of format 3 (`legal_action_mask`), and `first_player` in `games.jsonl`.
pub const FORMAT_VERSION: u32 = 3;

/// What [`MANIFEST`] holds.
#[derive(Serialize)]
struct Manifest<'a> {
    format: &'static str,
    version: u32,
    sources: Vec<String>,
    settings: Settings<'a>,
    summary: &'a DatasetSummary,
}

/// The [`DatasetConfig`] of a manifest, in the words of `zertz dataset`.
#[derive(Serialize)]
struct Settings<'a> {
    boards: Vec<usize>,
    min_turns: usize,
    exclude_players: &'a [String],
    ends: Vec<&'static str>,
    validation: f64,
    seed: u64,
    shard_size: usize,
    max_games: Option<u64>,
}

/// Makes the dataset of `sources` into `out` (a new or empty folder, never replaced); `progress`
/// hears the number of records read so far.
///
/// The dataset is written in a temporary folder beside `out` (`.NAME.partial-PID`) and renamed
/// to `out` once complete, [`MANIFEST`] its last file: whatever stops the build, `out` is never
/// half-written. A failure after the first file removes the temporary folder
/// ([`DatasetError::Stopped`]); a temporary folder of a killed build of the same `out` is
/// removed first ([`DatasetSummary::removed_leftovers`]), one whose process still runs is
/// refused ([`DatasetError::InUse`]). A source that does not exist is refused before anything is
/// written.
pub fn build(
    sources: &[PathBuf],
    config: &DatasetConfig,
    out: &Path,
    progress: &dyn Fn(u64),
) -> Result<DatasetSummary, DatasetError> {
    validate(config)?;
    let started = Instant::now();
    let out = resolve(out)?;
    refuse_taken(&out)?;
    for source in sources {
        std::fs::metadata(source)
            .map_err(|e| zertz_archive::ArchiveError::Read { path: source.clone(), source: e })?;
    }
    let name = out.file_name().unwrap_or_default().to_string_lossy().into_owned();
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    let removed_leftovers = remove_leftovers(&out, &parent, &name)?;
    let path = parent.join(zertz_env::files::partial_name(&name, std::process::id()));
    if let Err(e) = std::fs::create_dir(&path) {
        return Err(match e.kind() {
            // Another thread of this process builds the same `out`.
            std::io::ErrorKind::AlreadyExists => {
                DatasetError::InUse { out, partial: path, pid: std::process::id() }
            }
            _ => io(&path)(e),
        });
    }
    let mut partial = Partial { path, done: false };
    let mut summary = DatasetSummary { removed_leftovers, ..DatasetSummary::default() };
    let made = write(sources, config, &partial.path, progress, &mut summary).and_then(|()| {
        // The manifest names the shards in the folder, the summary where they end up.
        for shard in &mut summary.shards {
            *shard = shard.strip_prefix(&partial.path).unwrap_or(shard).to_path_buf();
        }
        summary.seconds = started.elapsed().as_secs_f64();
        let manifest = Manifest {
            format: FORMAT,
            version: FORMAT_VERSION,
            sources: sources.iter().map(|s| s.to_string_lossy().into_owned()).collect(),
            settings: Settings {
                boards: config.boards.iter().map(|b| b.rings()).collect(),
                min_turns: config.min_turns,
                exclude_players: &config.exclude_players,
                ends: config.ends.iter().map(|e| e.name()).collect(),
                validation: config.validation,
                seed: config.seed,
                shard_size: config.shard_size,
                max_games: config.max_games,
            },
            summary: &summary,
        };
        let manifest_path = partial.path.join(MANIFEST);
        let text = serde_json::to_string_pretty(&manifest).map_err(std::io::Error::other);
        text.and_then(|t| std::fs::write(&manifest_path, t + "\n")).map_err(io(&manifest_path))?;
        sync_tree(&partial.path)?;
        publish(&partial.path, &out, &parent)
    });
    match made {
        Ok(()) => {
            partial.done = true;
            for shard in &mut summary.shards {
                *shard = out.join(&*shard);
            }
            Ok(summary)
        }
        Err(source) => {
            let cleanup = match std::fs::remove_dir_all(&partial.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Some(e),
                _ => None,
            };
            partial.done = true;
            Err(DatasetError::Stopped {
                out,
                partial: partial.path.clone(),
                cleanup,
                source: Box::new(source),
            })
        }
    }
}

/// Writes the shards and `games.jsonl` of `sources` into `folder`, counting into `summary` (its
/// shards in `folder`).
fn write(
    sources: &[PathBuf],
    config: &DatasetConfig,
    folder: &Path,
    progress: &dyn Fn(u64),
    summary: &mut DatasetSummary,
) -> Result<(), DatasetError> {
    let (train_dir, validation_dir) = (folder.join(TRAIN), folder.join(VALIDATION));
    for dir in [&train_dir, &validation_dir] {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let games_path = folder.join(GAMES);
    let mut games =
        std::io::BufWriter::new(std::fs::File::create(&games_path).map_err(io(&games_path))?);
    let excluded: Vec<String> =
        config.exclude_players.iter().map(|p| p.to_ascii_lowercase()).collect();
    // Writers by (validation, board), and scratch buffers by board.
    let mut writers: BTreeMap<(bool, usize), ShardWriter> = BTreeMap::new();
    let mut scratch: BTreeMap<usize, (Vec<f32>, Vec<bool>)> = BTreeMap::new();
    let mut failure: Option<DatasetError> = None;
    let mut next_id = 0u64;
    let counts = zertz_archive::for_each_record(sources, |entry| {
        summary.records += 1;
        progress(summary.records);
        let mut filtered = |why: &str| *summary.filtered.entry(why.into()).or_default() += 1;
        if config.max_games.is_some_and(|m| next_id >= m) {
            filtered("max_games");
            return ControlFlow::Break(());
        }
        let Ok(bytes) = entry.bytes else {
            *summary.failed.entry("unreadable file".into()).or_default() += 1;
            return ControlFlow::Continue(());
        };
        let record = match Record::parse(&String::from_utf8_lossy(bytes)) {
            Ok(r) => r,
            Err(e) => {
                *summary.failed.entry(e.reason()).or_default() += 1;
                return ControlFlow::Continue(());
            }
        };
        let board = record.variant.board;
        if !config.boards.is_empty() && !config.boards.contains(&board) {
            filtered("board");
            return ControlFlow::Continue(());
        }
        let players = player_names(&record);
        let robot =
            players.iter().flatten().any(|n| excluded.iter().any(|x| x.eq_ignore_ascii_case(n)));
        if robot {
            filtered("player");
            return ControlFlow::Continue(());
        }
        let replay = match record.replay_moves() {
            Ok(r) => r,
            Err(e) => {
                *summary.failed.entry(e.kind.name().into()).or_default() += 1;
                return ControlFlow::Continue(());
            }
        };
        if replay.end == End::Unfinished || !config.ends.contains(&replay.end) {
            filtered("end");
            return ControlFlow::Continue(());
        }
        let turns = replay.game.moves().len();
        if turns < config.min_turns {
            filtered("short");
            return ControlFlow::Continue(());
        }
        let validation = is_validation(entry.name, config.seed, config.validation);
        let id = next_id;
        next_id += 1;
        let dir = if validation { &validation_dir } else { &train_dir };
        let writer = writers
            .entry((validation, board.rings()))
            .or_insert_with(|| ShardWriter::new(dir, board.rings(), board, config.shard_size));
        let (planes, mask) = scratch.entry(board.rings()).or_insert_with(|| {
            (vec![0.0; Shape::of(board).planes_len()], vec![false; ActionSpace::new(board).len()])
        });
        let space = ActionSpace::new(board);
        let finals = final_captures(replay.game.position());
        let mut pos = *replay.game.start();
        let mut samples = 0u64;
        let mut number = 0u32;
        for m in replay.game.moves() {
            for action in pos.move_actions(m) {
                let value = match replay.winner {
                    Some(w) if w == pos.turn() => 1.0,
                    Some(_) => -1.0,
                    None => 0.0,
                };
                let policy = vec![(space.index(&action) as i32, 1.0)];
                let sample = Sample::new(&pos, planes, mask, policy, true, value, number);
                if let Err(e) = writer.push(id, value, finals, sample) {
                    failure = Some(e.into());
                    return ControlFlow::Break(());
                }
                pos.play_action_unchecked(&action);
                number += 1;
                samples += 1;
            }
        }
        if validation {
            summary.validation_games += 1;
            summary.validation_samples += samples;
        } else {
            summary.train_games += 1;
            summary.train_samples += samples;
        }
        let line = GameLine {
            game: id,
            name: entry.name,
            split: if validation { VALIDATION } else { TRAIN },
            board: board.rings(),
            first_player: replay.game.start().turn().to_string(),
            players: &players,
            end: replay.end.name(),
            winner: replay.winner.map(|p: Player| p.to_string()),
            turns,
            samples,
            moves: replay.notation(),
        };
        let written = serde_json::to_string(&line)
            .map_err(std::io::Error::other)
            .and_then(|l| writeln!(games, "{l}"));
        if let Err(e) = written {
            failure = Some(DatasetError::Io { path: games_path.clone(), source: e });
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    summary.skipped_files = counts.skipped;
    for (_, mut writer) in writers {
        writer.flush()?;
        summary.shards.extend(writer.into_written());
    }
    games.flush().map_err(io(&games_path))?;
    Ok(())
}
