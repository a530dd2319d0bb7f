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
//! | `legal_mask` | `[S, ceil(A / 8)]` | uint8 | legal actions, `numpy.unpackbits(..., axis=1, count=A, bitorder="little")` |
//! | `policy_offsets` | `[S + 1]` | int64 | sample `i`'s policy entries are `policy_index[off[i]:off[i+1]]` |
//! | `policy_index` | `[K]` | int32 | action indices with visits |
//! | `policy_prob` | `[K]` | float32 | their visit shares (sum to 1 per sample) |
//! | `value` | `[S]` | float32 | final result from the mover's perspective: 1, 0, -1 |
//! | `root_value` | `[S]` | float32 | the search's value of the position |
//! | `full_search` | `[S]` | bool | the move had a full search (its policy is a training target) |
//! | `game_id` | `[S]` | int64 | game index in the run |
//! | `move_number` | `[S]` | int32 | action number in the game (from 0) |
//! | `to_play` | `[S]` | uint8 | 0 = P0, 1 = P1 |

use serde::Serialize;

/// The version of the shard format that this engine writes and `zertz.load_shards` reads.
pub const SHARD_FORMAT_VERSION: i32 = 1;

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
}

const fn array(
    name: &'static str,
    dtype: &'static str,
    shape: &'static str,
    meaning: &'static str,
) -> ShardArray {
    ShardArray { name, dtype, shape, meaning }
}

/// Every array of a shard, in the order they are written.
pub const SHARD_ARRAYS: [ShardArray; 15] = [
    array("format_version", "<i4", "[1]", "the shard format version"),
    array("encoding_version", "<i4", "[1]", "the observation encoding version"),
    array("board", "<i4", "[1]", "rings of the board"),
    array("planes", "|u1", "[S, C, H, W]", "observation planes (all 0 or 1)"),
    array("globals", "<f4", "[S, G]", "global features"),
    array("legal_mask", "|u1", "[S, ceil(A / 8)]", "legal actions, bits packed little-endian"),
    array("policy_offsets", "<i8", "[S + 1]", "sample i's policy entries: [off[i], off[i + 1])"),
    array("policy_index", "<i4", "[K]", "action indices with visits"),
    array("policy_prob", "<f4", "[K]", "their visit shares (sum to 1 per sample)"),
    array("value", "<f4", "[S]", "final result from the mover's perspective: 1, 0, -1"),
    array("root_value", "<f4", "[S]", "the search's value of the position"),
    array("full_search", "|b1", "[S]", "the move had a full search (a policy target)"),
    array("game_id", "<i8", "[S]", "game index in the run"),
    array("move_number", "<i4", "[S]", "action number in the game (from 0)"),
    array("to_play", "|u1", "[S]", "0 = P0, 1 = P1"),
];
