//! What the model crate's test files share: the Python that writes their models, and encoded
//! positions.

// Each test file uses only some of them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::{ActionSpace, Position};

/// `$ZERTZ_PYTHON`, else the repository's `.venv/bin/python` (scripts/setup-python.sh makes it).
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("ZERTZ_PYTHON") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python")
}

/// A new folder `zertz-{name}-{pid}` in the temporary folder, filled by the Python `script`
/// (run from a file, as TorchScript compiles the source of the classes it scripts; the folder
/// is its first argument).
pub fn written_by_python(name: &str, script: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zertz-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("write.py");
    std::fs::write(&path, script).unwrap();
    let out = Command::new(python()).arg(&path).arg(&dir).output().unwrap_or_else(|e| {
        panic!("cannot run {} ({e}): run scripts/setup-python.sh", python().display())
    });
    assert!(
        out.status.success(),
        "writing {name} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

/// Python that makes `net`: a small `ZertzNet` for `boards` (a Python list) whose batch
/// statistics were trained on noisy positions of 37 and 61 rings, in eval mode; `d` is the
/// folder. The script goes on from there.
pub fn small_net(boards: &str) -> String {
    format!(
        r#"
import sys, zipfile, torch, zertz
from zertz.nn import NetConfig, ZertzNet
from zertz.exported import export, export_aoti
d = sys.argv[1]
torch.manual_seed(0)
net = ZertzNet(NetConfig(channels=8, blocks=1, policy_rank=2, value_channels=4, value_hidden=8),
               boards={boards})
net.train()
for b in (37, 61):
    planes, g = zertz.Game(b).encode()
    x = torch.from_numpy(planes)[None].repeat(4, 1, 1, 1)
    x[:, 1:] += torch.rand_like(x[:, 1:]) * x[:, :1]
    net(x, torch.from_numpy(g)[None].repeat(4, 1))
net.eval()
"#
    )
}

/// Planes, globals and legal masks of `positions` (of one board).
pub fn encode(positions: &[Position]) -> (Vec<f32>, Vec<f32>, Vec<bool>) {
    let board = positions[0].board();
    let shape = Shape::of(board);
    let a = ActionSpace::new(board).len();
    let n = positions.len();
    let (mut planes, mut globals) = (vec![0.0; n * shape.planes_len()], vec![0.0; n * GLOBALS]);
    let mut masks = vec![false; n * a];
    for (i, p) in positions.iter().enumerate() {
        p.encode(
            &mut planes[i * shape.planes_len()..(i + 1) * shape.planes_len()],
            &mut globals[i * GLOBALS..(i + 1) * GLOBALS],
        );
        p.legal_action_mask(&mut masks[i * a..(i + 1) * a]);
    }
    (planes, globals, masks)
}

/// The largest absolute difference between two slices.
pub fn max_diff(x: &[f32], y: &[f32]) -> f32 {
    x.iter().zip(y).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max)
}

/// The largest absolute difference between two sets of logits over the legal actions of `masks`
/// (what search reads; behind inference threads nothing else comes back).
pub fn max_legal_diff(x: &[f32], y: &[f32], masks: &[bool]) -> f32 {
    masks
        .iter()
        .zip(x.iter().zip(y))
        .filter(|(legal, _)| **legal)
        .map(|(_, (a, b))| (a - b).abs())
        .fold(0.0f32, f32::max)
}

/// Logits answered for the legal actions only (`Answers::Legal`): each legal one within
/// `tolerance` of `want`, each illegal one left as it was (NaN, as the caller filled it).
pub fn assert_legal_answers(got: &[f32], want: &[f32], masks: &[bool], tolerance: f32, what: &str) {
    for (i, (&legal, (x, y))) in masks.iter().zip(got.iter().zip(want)).enumerate() {
        if legal {
            assert!((x - y).abs() < tolerance, "{what}: legal action {i}: {x} against {y}");
        } else {
            assert!(x.is_nan(), "{what}: illegal action {i} was written");
        }
    }
}
