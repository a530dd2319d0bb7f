//! Python bindings of ZÈRTZ in Rust: the private native module `zertz._zertz`, without
//! libtorch (the package installs with numpy alone; exported networks, matches and self-play
//! are the engine module's, `zertz_engine._engine` in `python/engine`, installed with
//! `zertz[train]`).
//!
//! The crate is thin: every rule lives in `zertz-env`; this crate converts arguments and results
//! (notation strings, numpy arrays) and turns every error into a Python exception in one place,
//! `zertz_pycommon::Error`. The Python package `zertz` (python/zertz/) re-exports the public
//! API, and `python/zertz/_zertz.pyi` describes it for type checkers.
//!
//! - `game::PyGame` (`zertz.Game`): a game with its history, moves in notation or as action
//!   indices, legal masks and the observation encoding as numpy arrays, SVG drawing.
//! - `episode::PyEpisode` (`zertz.Episode`): one game under the rules of an episode,
//!   Rust's (`zertz_vecenv::Episode`), which the Gymnasium and PettingZoo environments wrap.
//! - `files`: the reading of the files users name, regular files within the bound of their
//!   kind (`zertz_env::files`), for `zertz.files`.
//! - `range::PyRange` (`zertz._zertz.Range`): Rust's range of a setting, which the training
//!   config's Python sections declare theirs with.
//! - Module functions and constants: the boards, the encoding version and shapes, the action
//!   space size and the number of symmetries of each board; the name of a partial output
//!   (`.NAME.partial-PID`) and whether its process runs, for the Python package's writers.

mod episode;
mod files;
mod game;
mod jobs;
mod matches;
mod players;
mod range;
mod search;
mod svg;
mod vecenv;

use zertz_pycommon::{args, convert, error, evaluators, signals};

/// Native core of the `zertz` package (private: import `zertz` instead).
#[pyo3::pymodule]
mod _zertz {
    use numpy::{PyArray1, PyArray2};
    use pyo3::prelude::*;
    use zertz_env::encode::{self, Shape};
    use zertz_env::{ActionSpace, symmetry};

    use crate::args::BoardArg;

    #[pymodule_export]
    use crate::episode::{PyEpisode, PyStep};
    #[pymodule_export]
    use crate::files::{file_limits, open_regular, read_bounded, size_text};
    #[pymodule_export]
    use crate::game::PyGame;
    #[pymodule_export]
    use crate::jobs::{
        dataset, load_records, match_config, match_settings, parse_player, selfplay_config,
        selfplay_settings,
    };
    #[pymodule_export]
    use crate::matches::play_match_game;
    #[pymodule_export]
    use crate::players::{PyBot, elo, match_opening, match_player_seed};
    #[pymodule_export]
    use crate::range::PyRange;
    #[pymodule_export]
    use crate::search::{PyMcts, mcts_settings};
    #[pymodule_export]
    use crate::vecenv::{PyVecEnv, parse_first_player};

    /// Version of the observation encoding (`Game.encode`); it changes whenever planes or globals
    /// change meaning.
    #[pymodule_export]
    const ENCODING_VERSION: u32 = encode::ENCODING_VERSION;

    /// Single actions after which an unfinished match or self-play game is a draw (the default
    /// `max_actions` of `zertz.match` and `zertz.selfplay`; not `max_steps`, which truncates an
    /// RL episode without a result).
    #[pymodule_export]
    const DEFAULT_MAX_ACTIONS: u32 = zertz_vecenv::DEFAULT_MAX_ACTIONS;

    /// The most games of one match (`zertz.match(games=)`, `[evaluate] games` of a training
    /// config).
    #[pymodule_export]
    const MAX_MATCH_GAMES: usize = zertz_arena::config::MAX_GAMES;

    /// The grammar of a player spec, in words (`zertz.match`, `zertz.player`, `parse_player`):
    /// Rust's one text of it.
    #[pymodule_export]
    const PLAYER_SPECS: &str = zertz_arena::players::SPEC_GRAMMAR;

    /// Single actions after which a game of the RL environments is truncated, by default
    /// (`VecEnv`, `zertz.gymnasium`, `zertz.pettingzoo`: their `max_steps`).
    #[pymodule_export]
    const DEFAULT_MAX_STEPS: u32 = zertz_vecenv::DEFAULT_MAX_STEPS;

    #[pymodule_export]
    const VECENV_MAX_BYTES: usize = zertz_vecenv::DEFAULT_MAX_BYTES;

    /// The version of the shard format (`zertz.load_shards`) that this version writes.
    #[pymodule_export]
    const SHARD_FORMAT_VERSION: i32 = zertz_selfplay::shard::SHARD_FORMAT_VERSION;

    /// The version of the dataset folder layout (`zertz dataset`, `dataset.json`'s `version`)
    /// that this version writes and `zertz.human` reads.
    #[pymodule_export]
    const DATASET_VERSION: u32 = zertz_selfplay::dataset::FORMAT_VERSION;

    /// The `format` of a dataset's manifest.
    #[pymodule_export]
    const DATASET_FORMAT: &str = zertz_selfplay::dataset::FORMAT;

    /// The manifest a dataset build writes last into its folder.
    #[pymodule_export]
    const DATASET_MANIFEST: &str = zertz_selfplay::dataset::MANIFEST;

    /// The folders of a dataset's splits, training then validation (`zertz dataset`: each
    /// board's shards in them are the writer of its rings, `shard_glob(rings)`).
    #[pymodule_export]
    const DATASET_SPLITS: (&str, &str) =
        (zertz_selfplay::dataset::TRAIN, zertz_selfplay::dataset::VALIDATION);

    /// The file of a dataset's games, one JSON line each with its `split`.
    #[pymodule_export]
    const DATASET_GAMES: &str = zertz_selfplay::dataset::GAMES;

    /// The glob pattern of the shards of the writer `prefix` (a self-play worker's index, a
    /// board's rings in a dataset), or of every writer (None): their names sort in the order
    /// they were written.
    #[pyfunction]
    #[pyo3(signature = (prefix=None))]
    fn shard_glob(prefix: Option<usize>) -> String {
        zertz_selfplay::shard::shard_glob(prefix)
    }

    /// The arrays of a self-play shard, in order: `[{"name", "dtype" (numpy's descriptor),
    /// "shape" (`S`: one entry per sample), "meaning", "since" (the shard format that added
    /// it)}]`.
    #[pyfunction]
    fn shard_schema(py: Python<'_>) -> Result<Bound<'_, PyAny>, crate::error::Error> {
        crate::convert::to_python(py, &zertz_selfplay::shard::SHARD_ARRAYS)
    }

    /// The board sizes, by number of rings.
    #[pymodule_export]
    const BOARDS: (usize, usize, usize, usize, usize, usize) = {
        let b = zertz_env::Board::ALL;
        (b[0].rings(), b[1].rings(), b[2].rings(), b[3].rings(), b[4].rings(), b[5].rings())
    };

    /// The marble sets, by the names zertz reads (`blitz = true`, an exported network's
    /// `"marbles"`): the standard one (6/8/10), then blitz (5/7/9).
    #[pymodule_export]
    const MARBLE_SETS: (&str, &str) = {
        let m = zertz_env::MarbleSet::ALL;
        (m[0].name(), m[1].name())
    };

    /// The named search presets and their settings: `{name: {setting: value}}` (`MCTS(preset=)`,
    /// `[search] preset` in self-play configs).
    #[pyfunction]
    fn search_presets(py: Python<'_>) -> Result<Bound<'_, PyAny>, crate::error::Error> {
        let presets: std::collections::BTreeMap<&str, zertz_search::SearchConfig> =
            zertz_search::Preset::ALL.iter().map(|p| (p.name(), p.config())).collect();
        crate::convert::to_python(py, &presets)
    }

    /// Number of indices of the action space of a board (legal or not).
    #[pyfunction]
    fn action_space_size(board: BoardArg) -> usize {
        ActionSpace::new(board.0).len()
    }

    /// Shapes of the observation of a board: `((C, H, W), G)` for the planes and the globals.
    #[pyfunction]
    fn observation_shape(board: BoardArg) -> ((usize, usize, usize), usize) {
        let s = Shape::of(board.0);
        ((s.planes, s.height, s.width), s.globals)
    }

    /// Number of symmetries of a board shape (rotations and reflections that keep it; the
    /// identity included): 12 for 37 and 61 rings, 2 for 40 and 43, 4 for 44, 6 for 48.
    #[pyfunction]
    fn symmetry_count(board: BoardArg) -> usize {
        symmetry::symmetries(board.0).len()
    }

    /// `(cells [S, H * W], actions [S, A])` of `symmetry_tables`.
    type SymmetryTables<'py> = (Bound<'py, PyArray2<i64>>, Bound<'py, PyArray2<i64>>);

    /// Index tables that apply every symmetry of a board to a batch, for data augmentation:
    /// `(cells, actions)`, int64 arrays of shapes `[S, H * W]` and `[S, A]`. Under symmetry `s`,
    /// planes `[..., C, H, W]` become `planes.reshape(..., C, H * W)[..., cells[s]]` (reshaped
    /// back), and a policy or legal mask `[..., A]` becomes `policy[..., actions[s]]`; this equals
    /// the encoding and mask of `Game.transformed(s)`.
    #[pyfunction]
    fn symmetry_tables<'py>(py: Python<'py>, board: BoardArg) -> PyResult<SymmetryTables<'py>> {
        let geo = board.0.geometry();
        let (h, w) = geo.grid_shape();
        let syms = symmetry::symmetries(board.0);
        let mut cells = Vec::with_capacity(syms.len());
        let mut actions = Vec::with_capacity(syms.len());
        for s in syms {
            let mut gather: Vec<i64> = (0..(h * w) as i64).collect();
            for r in geo.rings() {
                gather[geo.grid_index(s.ring(r))] = geo.grid_index(r) as i64;
            }
            cells.push(gather);
            actions.push(s.inverse().action_map().iter().map(|&i| i as i64).collect::<Vec<_>>());
        }
        Ok((PyArray2::from_vec2(py, &cells)?, PyArray2::from_vec2(py, &actions)?))
    }

    /// The grid cell (row-major index into `H * W`) of every ring, in ring order: the gather table
    /// from planes to per-ring features.
    #[pyfunction]
    fn ring_cells<'py>(py: Python<'py>, board: BoardArg) -> Bound<'py, PyArray1<i64>> {
        let geo = board.0.geometry();
        let cells: Vec<i64> = geo.rings().map(|r| geo.grid_index(r) as i64).collect();
        PyArray1::from_vec(py, cells)
    }

    /// Where this process writes `path` before it renames it into place: `.NAME.partial-PID`
    /// beside it (`zertz_env::files::partial_path`: the one name of every partial output,
    /// Rust's and the Python package's).
    #[pyfunction]
    fn partial_path(path: std::path::PathBuf) -> std::path::PathBuf {
        zertz_env::files::partial_path(&path)
    }

    /// `(NAME, PID)` of a partial output's file name `.NAME.partial-PID`; None for any other name
    /// (`zertz_env::files::partial_owner`).
    #[pyfunction]
    fn partial_owner(name: &str) -> Option<(String, u32)> {
        zertz_env::files::partial_owner(name).map(|(target, pid)| (target.to_string(), pid))
    }

    /// Whether process `pid` runs: this one always, another where the system says (on Linux),
    /// never elsewhere (`zertz_env::files::process_runs`).
    #[pyfunction]
    fn process_runs(pid: u32) -> bool {
        zertz_env::files::process_runs(pid)
    }

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
