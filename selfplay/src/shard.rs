//! The shard format: the training data self-play writes, in one place. The writer
//! ([`crate::driver`]) is tested against [`SHARD_ARRAYS`], and the Python loader
//! (`zertz.load_shards`) reads the schema from the native module (`zertz.shard_schema()`).
//!
//! `shard-WW-SSSSS.npz`, read with `numpy.load`; `S` samples, `A` actions, `[C, H, W]` planes,
//! `K` policy entries:
//!
//! | array | shape | dtype | meaning |
//! |---|---|---|---|
//! | `format_version` | `[1]` | int32 | [`SHARD_FORMAT_VERSION`] |
//! | `encoding_version` | `[1]` | int32 | [`zertz_env::encode::ENCODING_VERSION`] |
//! | `board` | `[1]` | int32 | rings of the board |
//! | `planes` | `[S, C, H, W]` | uint8 | observation planes (all 0 or 1) |
//! | `globals` | `[S, G]` | float32 | global features |
//! | `legal_action_mask` | `[S, ceil(A / 8)]` | uint8 | legal actions, `numpy.unpackbits(..., axis=1, count=A, bitorder="little")` |
//! | `policy_offsets` | `[S + 1]` | int64 | sample `i`'s policy entries are `policy_index[off[i]:off[i+1]]` |
//! | `policy_index` | `[K]` | int32 | action indices with visits |
//! | `policy_prob` | `[K]` | float32 | their visit shares (sum to 1 per sample) |
//! | `value` | `[S]` | float32 | final result from the mover's perspective: 1, 0, -1 |
//! | `root_value` | `[S]` | float32 | the search's value of the position |
//! | `full_search` | `[S]` | bool | the move had a full search (its policy is a training target) |
//! | `game_id` | `[S]` | int64 | game index in the run |
//! | `move_number` | `[S]` | int32 | action number in the game (from 0) |
//! | `to_play` | `[S]` | uint8 | 0 = P0, 1 = P1 |
//! | `final_captures` | `[S, 6]` | uint8 | the marbles each side holds at the game's end (white, grey, black): the mover's, then the opponent's (an auxiliary target) |
//!
//! Format 2 added `final_captures` (each array's `since`). Format 3 renamed `legal_mask` to
//! `legal_action_mask`, the mask's name everywhere else (each array's `formerly`).
//! `zertz.load_shards` still reads formats 1 and 2.

use std::path::{Path, PathBuf};

use serde::Serialize;
use zertz_env::encode::{ENCODING_VERSION, GLOBALS, Shape};
use zertz_env::{ActionSpace, Board, Player, Position};

use crate::npz::Npz;

/// The version of the shard format that this version writes and `zertz.load_shards` reads.
pub const SHARD_FORMAT_VERSION: i32 = 3;

/// One array of a shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ShardArray {
    /// Its name in the archive (`data[name]`).
    pub name: &'static str,
    /// numpy's dtype descriptor (`<f4`, `|u1`, ...).
    pub dtype: &'static str,
    /// Its shape, in the letters of the module description (`S`: one entry per sample).
    pub shape: &'static str,
    /// What it holds.
    pub meaning: &'static str,
    /// The shard format that added it (shards of an older format do not have it).
    pub since: i32,
    /// Its name in the shards of older formats, if it was renamed.
    pub formerly: Option<Rename>,
}

/// An array's earlier name: shards of a format before `until` hold it under `name`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Rename {
    /// The earlier name.
    pub name: &'static str,
    /// The shard format that renamed it.
    pub until: i32,
}

const fn array(
    name: &'static str,
    dtype: &'static str,
    shape: &'static str,
    meaning: &'static str,
) -> ShardArray {
    ShardArray { name, dtype, shape, meaning, since: 1, formerly: None }
}

impl ShardArray {
    /// The same array, added by shard format `version`.
    const fn since(self, version: i32) -> ShardArray {
        ShardArray { since: version, ..self }
    }

    /// The same array, named `name` in the shards of formats before `until`.
    const fn formerly(self, name: &'static str, until: i32) -> ShardArray {
        ShardArray { formerly: Some(Rename { name, until }), ..self }
    }
}

/// Every array of a shard, in the order they are written.
pub const SHARD_ARRAYS: [ShardArray; 16] = [
    array("format_version", "<i4", "[1]", "the shard format version"),
    array("encoding_version", "<i4", "[1]", "the observation encoding version"),
    array("board", "<i4", "[1]", "rings of the board"),
    array("planes", "|u1", "[S, C, H, W]", "observation planes (all 0 or 1)"),
    array("globals", "<f4", "[S, G]", "global features"),
    array(
        "legal_action_mask",
        "|u1",
        "[S, ceil(A / 8)]",
        "legal actions, bits packed little-endian",
    )
    .formerly("legal_mask", 3),
    array("policy_offsets", "<i8", "[S + 1]", "sample i's policy entries: [off[i], off[i + 1])"),
    array("policy_index", "<i4", "[K]", "action indices with visits"),
    array("policy_prob", "<f4", "[K]", "their visit shares (sum to 1 per sample)"),
    array("value", "<f4", "[S]", "final result from the mover's perspective: 1, 0, -1"),
    array("root_value", "<f4", "[S]", "the search's value of the position"),
    array("full_search", "|b1", "[S]", "the move had a full search (a policy target)"),
    array("game_id", "<i8", "[S]", "game index in the run"),
    array("move_number", "<i4", "[S]", "action number in the game (from 0)"),
    array("to_play", "|u1", "[S]", "0 = P0, 1 = P1"),
    array(
        "final_captures",
        "|u1",
        "[S, 6]",
        "marbles held at the end (white, grey, black): the mover's, then the opponent's",
    )
    .since(2),
];

/// The file name of shard `n` of the writer `prefix` (a worker's index in self-play, the board's
/// rings in a dataset): `shard-PP-NNNNN.npz`.
pub fn shard_name(prefix: usize, n: usize) -> String {
    format!("shard-{prefix:02}-{n:05}.npz")
}

/// The glob pattern of the shards of the writer `prefix`, or of every writer (None):
/// `shard-PP-*.npz`, `shard-*.npz`; their names sort in the order they were written.
pub fn shard_glob(prefix: Option<usize>) -> String {
    match prefix {
        Some(p) => format!("shard-{p:02}-*.npz"),
        None => "shard-*.npz".to_string(),
    }
}

/// The marbles each player holds at the end of a game (white, grey, black), indexed by
/// [`Player::index`]: where a sample's `final_captures` come from.
pub(crate) type FinalCaptures = [[u8; 3]; 2];

/// The captures of `end`, a game's last position.
pub(crate) fn final_captures(end: &Position) -> FinalCaptures {
    [Player::P0, Player::P1].map(|p| end.captures(p).0)
}

/// One training sample, encoded as a shard stores it.
#[derive(Debug)]
pub(crate) struct Sample {
    planes: Vec<u8>,
    globals: Vec<f32>,
    mask: Vec<u8>,
    policy: Vec<(i32, f32)>,
    to_play: Player,
    full: bool,
    root_value: f32,
    move_number: i32,
}

impl Sample {
    /// The sample of `pos` with its policy target (action indices and probabilities); `planes`
    /// and `mask` are scratch buffers of the board's sizes.
    pub(crate) fn new(
        pos: &Position,
        planes: &mut [f32],
        mask: &mut [bool],
        policy: Vec<(i32, f32)>,
        full: bool,
        root_value: f32,
        move_number: u32,
    ) -> Sample {
        let mut globals = vec![0f32; GLOBALS];
        pos.encode(planes, &mut globals);
        pos.legal_action_mask(mask);
        let mut packed = vec![0u8; mask.len().div_ceil(8)];
        for (k, &m) in mask.iter().enumerate() {
            packed[k / 8] |= (m as u8) << (k % 8);
        }
        Sample {
            planes: planes.iter().map(|&x| x as u8).collect(),
            globals,
            mask: packed,
            policy,
            to_play: pos.turn(),
            full,
            root_value,
            move_number: move_number as i32,
        }
    }

    /// The player to move.
    pub(crate) fn to_play(&self) -> Player {
        self.to_play
    }
}

/// A shard that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {source}", path.display())]
pub(crate) struct WriteError {
    pub(crate) path: PathBuf,
    pub(crate) source: std::io::Error,
}

/// Samples of one board, written as shards `shard-PP-NNNNN.npz` of `size` samples when full.
#[derive(Debug)]
pub(crate) struct ShardWriter {
    dir: PathBuf,
    prefix: usize,
    next: usize,
    shape: Shape,
    actions: usize,
    board: usize,
    size: usize,
    buf: Vec<Row>,
    written: Vec<PathBuf>,
}

/// A sample with what is known of its game once it is over.
#[derive(Debug)]
struct Row {
    game: u64,
    value: f32,
    finals: FinalCaptures,
    sample: Sample,
}

impl ShardWriter {
    /// A writer into `dir` whose files are named [`shard_name`]`(prefix, n)`.
    pub(crate) fn new(dir: &Path, prefix: usize, board: Board, size: usize) -> ShardWriter {
        ShardWriter {
            dir: dir.to_path_buf(),
            prefix,
            next: 0,
            shape: Shape::of(board),
            actions: ActionSpace::new(board).len(),
            board: board.rings(),
            size: size.max(1),
            buf: Vec::new(),
            written: Vec::new(),
        }
    }

    /// Adds a sample of game `game` whose final result for the mover is `value` and whose
    /// players hold `finals` at its end.
    pub(crate) fn push(
        &mut self,
        game: u64,
        value: f32,
        finals: FinalCaptures,
        sample: Sample,
    ) -> Result<(), WriteError> {
        self.buf.push(Row { game, value, finals, sample });
        if self.buf.len() >= self.size { self.flush() } else { Ok(()) }
    }

    /// Writes the samples held, if any, as one shard.
    pub(crate) fn flush(&mut self) -> Result<(), WriteError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let npz = self.encode();
        let path = self.dir.join(shard_name(self.prefix, self.next));
        npz.write_atomic(&path).map_err(|source| WriteError { path: path.clone(), source })?;
        self.next += 1;
        self.written.push(path);
        self.buf.clear();
        Ok(())
    }

    /// The shards written, in order.
    pub(crate) fn into_written(self) -> Vec<PathBuf> {
        self.written
    }

    /// The buffered samples as a shard (see the module docs).
    fn encode(&self) -> Npz {
        let n = self.buf.len();
        let mut npz = Npz::new();
        npz.add("format_version", &[1], &[SHARD_FORMAT_VERSION]);
        npz.add("encoding_version", &[1], &[ENCODING_VERSION as i32]);
        npz.add("board", &[1], &[self.board as i32]);
        let rows = || self.buf.iter();
        let planes: Vec<u8> = rows().flat_map(|r| r.sample.planes.iter().copied()).collect();
        let s = self.shape;
        npz.add("planes", &[n, s.planes, s.height, s.width], &planes);
        let globals: Vec<f32> = rows().flat_map(|r| r.sample.globals.iter().copied()).collect();
        npz.add("globals", &[n, GLOBALS], &globals);
        let mask: Vec<u8> = rows().flat_map(|r| r.sample.mask.iter().copied()).collect();
        npz.add("legal_action_mask", &[n, self.actions.div_ceil(8)], &mask);
        let mut offsets = vec![0i64];
        let (mut index, mut prob) = (Vec::new(), Vec::new());
        for r in rows() {
            for &(i, p) in &r.sample.policy {
                index.push(i);
                prob.push(p);
            }
            offsets.push(index.len() as i64);
        }
        npz.add("policy_offsets", &[n + 1], &offsets);
        npz.add("policy_index", &[index.len()], &index);
        npz.add("policy_prob", &[prob.len()], &prob);
        npz.add("value", &[n], &rows().map(|r| r.value).collect::<Vec<f32>>());
        npz.add("root_value", &[n], &rows().map(|r| r.sample.root_value).collect::<Vec<f32>>());
        npz.add("full_search", &[n], &rows().map(|r| r.sample.full).collect::<Vec<bool>>());
        npz.add("game_id", &[n], &rows().map(|r| r.game as i64).collect::<Vec<i64>>());
        npz.add("move_number", &[n], &rows().map(|r| r.sample.move_number).collect::<Vec<i32>>());
        let to_play: Vec<u8> = rows().map(|r| r.sample.to_play.index() as u8).collect();
        npz.add("to_play", &[n], &to_play);
        let finals: Vec<u8> = rows()
            .flat_map(|r| {
                let mover = r.sample.to_play;
                r.finals[mover.index()].into_iter().chain(r.finals[(!mover).index()])
            })
            .collect();
        npz.add("final_captures", &[n, 6], &finals);
        npz
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_hold_the_arrays_of_the_schema() {
        let board = Board::R37;
        let pos = Position::new(zertz_env::Variant::default(), Player::P1);
        let (shape, actions) = (Shape::of(board), ActionSpace::new(board).len());
        let (mut planes, mut mask) = (vec![0.0; shape.planes_len()], vec![false; actions]);
        let mut sample =
            || Sample::new(&pos, &mut planes, &mut mask, vec![(3, 0.25), (7, 0.75)], true, 0.1, 4);
        let mut w = ShardWriter::new(Path::new(""), 0, board, 10);
        w.push(0, 1.0, [[1, 2, 3], [4, 5, 6]], sample()).unwrap();
        w.push(0, -1.0, [[1, 2, 3], [4, 5, 6]], sample()).unwrap();
        let npz = w.encode();
        let written: Vec<(&str, &str)> =
            npz.arrays().iter().map(|(n, d)| (n.as_str(), *d)).collect();
        let schema: Vec<(&str, &str)> = SHARD_ARRAYS.iter().map(|a| (a.name, a.dtype)).collect();
        assert_eq!(written, schema);
    }
}
