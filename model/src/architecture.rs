//! The engine's network architecture, `ZertzNet`: its sizes ([`Sizes`]), their bounds, and the
//! exact tensors (names and shapes) that a network file of those sizes holds.
//!
//! The engine runs this architecture and no other from a network file: the native pass
//! (`native.rs`) on the CPU for small batches, and the same layers through libtorch
//! (`net.rs`) on every device. `zertz.nn.ZertzNet` is its definition in PyTorch, for training;
//! the tests check that the three give the same answers.

use serde::{Deserialize, Serialize};
use zertz_env::encode::{GLOBALS, PLANES};

/// The name of the architecture in a network file's metadata (`architecture`).
pub const ARCHITECTURE: &str = "ZertzNet";

/// The most parameters a network may have: 4e8 bytes of float32 weights (the `large` preset
/// has 1.1e7). `zertz.nn.MAX_PARAMETERS` is this.
pub const MAX_PARAMETERS: usize = 100_000_000;

/// The sizes of a `ZertzNet` (`zertz.nn.NetConfig`'s fields, the `network` table of a config
/// and of a file's metadata). Unknown keys are refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sizes {
    /// Channels of the residual trunk.
    pub channels: usize,
    /// Residual blocks.
    pub blocks: usize,
    /// Rank of the placement/removal interaction of the policy head.
    pub policy_rank: usize,
    /// Channels of the value head before pooling.
    pub value_channels: usize,
    /// Hidden units of the value head.
    pub value_hidden: usize,
}

/// Each size's name and largest value (the smallest is 1).
pub const SIZE_LIMITS: [(&str, usize); 5] = [
    ("channels", 1024),
    ("blocks", 100),
    ("policy_rank", 1024),
    ("value_channels", 1024),
    ("value_hidden", 4096),
];

/// The auxiliary head that training alone uses (`captures.*`): in checkpoints, never in a
/// network file.
pub const TRAINING_ONLY_PREFIX: &str = "captures.";

impl Sizes {
    /// The sizes in [`SIZE_LIMITS`]' order.
    fn values(&self) -> [usize; 5] {
        [self.channels, self.blocks, self.policy_rank, self.value_channels, self.value_hidden]
    }

    /// Every size within its bound and at most [`MAX_PARAMETERS`] parameters; else what is
    /// wrong, in a line.
    pub fn check(&self) -> Result<(), String> {
        for ((name, most), v) in SIZE_LIMITS.iter().zip(self.values()) {
            if v == 0 || v > *most {
                return Err(format!("network.{name} must be from 1 to {most}, not {v}"));
            }
        }
        let count = self.parameters();
        if count > MAX_PARAMETERS {
            return Err(format!(
                "its sizes make {count} parameters, more than the {MAX_PARAMETERS} a network may \
                 have"
            ));
        }
        Ok(())
    }

    /// The number of weights of a network file of these sizes (the batch norms' statistics
    /// included, the training-only head not).
    pub fn parameters(&self) -> usize {
        self.tensors().iter().map(|(_, shape)| shape.iter().product::<usize>()).sum()
    }

    /// The tensors of a network file of these sizes, by name (`torch.nn.Module.state_dict`'s
    /// names), with their shapes, in name order: the inference weights of `ZertzNet`, without
    /// the batch norms' step counts and the training-only head.
    pub fn tensors(&self) -> Vec<(String, Vec<usize>)> {
        let Sizes { channels: c, blocks, policy_rank: r, value_channels: vc, value_hidden: vh } =
            *self;
        let mut out: Vec<(String, Vec<usize>)> = Vec::new();
        let mut add = |name: String, shape: &[usize]| out.push((name, shape.to_vec()));
        let batch_norm = |add: &mut dyn FnMut(String, &[usize]), name: &str, n: usize| {
            for part in ["weight", "bias", "running_mean", "running_var"] {
                add(format!("{name}.{part}"), &[n]);
            }
        };
        let linear = |add: &mut dyn FnMut(String, &[usize]), name: &str, out: usize, inp: usize| {
            add(format!("{name}.weight"), &[out, inp]);
            add(format!("{name}.bias"), &[out]);
        };
        add("stem.weight".into(), &[c, PLANES, 3, 3]);
        linear(&mut add, "stem_globals", c, GLOBALS);
        batch_norm(&mut add, "stem_bn", c);
        for i in 0..blocks {
            add(format!("blocks.{i}.conv1.weight"), &[c, c, 3, 3]);
            batch_norm(&mut add, &format!("blocks.{i}.bn1"), c);
            linear(&mut add, &format!("blocks.{i}.pool"), c, 2 * c);
            add(format!("blocks.{i}.conv2.weight"), &[c, c, 3, 3]);
            batch_norm(&mut add, &format!("blocks.{i}.bn2"), c);
        }
        linear(&mut add, "ring", c, c);
        linear(&mut add, "colour", 3, c);
        linear(&mut add, "remove", 1, c);
        add("no_removal".into(), &[1]);
        linear(&mut add, "query", r, c);
        linear(&mut add, "key", r, c);
        linear(&mut add, "hop", 6, c);
        linear(&mut add, "pass_", 1, 2 * c);
        add("value_conv.weight".into(), &[vc, c, 1, 1]);
        batch_norm(&mut add, "value_bn", vc);
        linear(&mut add, "value_fc1", vh, 2 * vc + GLOBALS);
        linear(&mut add, "value_fc2", 1, vh);
        out.sort();
        out
    }

    /// The named size (`tiny`, `small`, `medium`, `large`) these sizes are, if any.
    pub fn preset(&self) -> Option<&'static str> {
        PRESETS.iter().find(|(_, s)| s == self).map(|(name, _)| *name)
    }
}

/// The named sizes, smallest first (`zertz.nn.NetConfig.preset`).
pub const PRESETS: [(&str, Sizes); 4] = [
    ("tiny", preset(32, 3)),
    ("small", preset(64, 6)),
    ("medium", preset(128, 10)),
    ("large", preset(192, 15)),
];

/// A preset of `channels` and `blocks`: the other sizes follow from them.
const fn preset(channels: usize, blocks: usize) -> Sizes {
    let quarter = channels / 4;
    Sizes {
        channels,
        blocks,
        policy_rank: 8,
        value_channels: if quarter > 16 { quarter } else { 16 },
        value_hidden: 64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_bounded_and_name_their_tensors_once() {
        let tiny = PRESETS[0].1;
        tiny.check().unwrap();
        assert_eq!(tiny.preset(), Some("tiny"));
        let names: Vec<_> = tiny.tensors().into_iter().map(|(n, _)| n).collect();
        let mut unique = names.clone();
        unique.dedup();
        assert_eq!(names, unique);
        // 7 of the stem, 12 a block, 15 of the policy head, 9 of the value head.
        assert_eq!(names.len(), 7 + 3 * 12 + 15 + 9);
        assert!(names.iter().all(|n| !n.starts_with(TRAINING_ONLY_PREFIX)));
        let e = Sizes { channels: 0, ..tiny }.check().unwrap_err();
        assert!(e.contains("network.channels must be from 1 to 1024, not 0"), "{e}");
        let e = Sizes { channels: 1024, blocks: 100, ..tiny }.check().unwrap_err();
        assert!(e.contains("more than the 100000000"), "{e}");
        for (name, s) in PRESETS {
            s.check().unwrap();
            assert_eq!(s.preset(), Some(name));
        }
    }
}
