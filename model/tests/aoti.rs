//! AOTInductor packages (`.pt2`, `zertz.exported.export_aoti`) in the engine: programs, refused
//! unless trusted (`Model::load_code`); trusted, they answer as the network file of the same
//! weights does, keep the metadata checks, and refuse what they cannot do (another board, device
//! or number format) with a clear error.
//!
//! The packages are compiled once for all tests by the Python package (`$ZERTZ_PYTHON`, else the
//! repository's `.venv/bin/python`); compiling takes a C++ compiler and about 50 s for the two
//! boards on two cores (they compile side by side).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{encode, max_diff, max_legal_diff, python};
use std::sync::{Arc, OnceLock};

use zertz_arena::players::{Bot as _, MctsBot};

use zertz_env::{ActionSpace, Board, Player, Position, Variant};
use zertz_model::{DeviceChoice, Model, ModelError, Precision};
use zertz_search::{Batch, Evaluator, Output};

/// A folder with, from one small network with trained batch statistics: `m.safetensors` (its
/// network file, 37 and 61 rings), `m.pt2` (an AOTInductor package of the same for the CPU in
/// fp32, compiled by `python -m zertz compile-network` into the cache `cache/compiled`, and
/// copied), `other.safetensors` (another network), `not_a_zip.pt2` (text), `half.pt2` (the first
/// half of `m.pt2`), `empty.pt2` (a zip file without models).
fn models() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let script = common::small_net("[37, 61]")
            + r#"
import os, shutil
from zertz.__main__ import main
export(net, f"{d}/m.safetensors", step=9)
os.environ["ZERTZ_CACHE"] = f"{d}/cache"
assert main(["compile-network", f"{d}/m.safetensors"]) == 0
(package,) = os.listdir(f"{d}/cache/compiled")
shutil.copyfile(f"{d}/cache/compiled/{package}", f"{d}/m.pt2")
torch.manual_seed(1)
export(ZertzNet(net.net_config(), boards=[37, 61]), f"{d}/other.safetensors")
open(f"{d}/not_a_zip.pt2", "w").write("not a package")
data = open(f"{d}/m.pt2", "rb").read()
open(f"{d}/half.pt2", "wb").write(data[: len(data) // 2])
with zipfile.ZipFile(f"{d}/empty.pt2", "w") as z:
    z.writestr("m/data/other.txt", "nothing")
"#;
        common::written_by_python("aoti-tests", &script)
    })
}

/// A file of [`models`], trusted: a package runs its own code.
fn load(name: &str) -> Result<Model, ModelError> {
    Model::load_code(models().join(name), DeviceChoice::Cpu, Precision::Auto)
}

/// `(logits, values)` of `model` on `positions`.
fn answers(model: &Model, positions: &[Position]) -> (Vec<f32>, Vec<f32>) {
    let board = positions[0].board();
    let (planes, globals, masks) = encode(positions);
    let n = positions.len();
    let (mut logits, mut values) = (vec![0.0; n * ActionSpace::new(board).len()], vec![0.0; n]);
    model.forward_masked(board, &planes, &globals, &masks, &mut logits, &mut values).unwrap();
    (logits, values)
}

/// A package is a program: refused unless trusted, as an AOTInductor package, with the two ways
/// on.
#[test]
fn a_package_is_refused_unless_trusted() {
    // Whatever a zip archive holds, it is not a network file.
    for name in ["m.pt2", "empty.pt2", "half.pt2"] {
        let e = Model::load(models().join(name), DeviceChoice::Cpu).unwrap_err();
        assert!(matches!(e, ModelError::Code { package: true, .. }), "{name}: {e:?}");
        let text = e.to_string();
        assert!(
            text.contains(name)
                && text.contains("an AOTInductor package")
                && text.contains("--trust-code")
                && !text.contains('\n'),
            "{text}"
        );
    }
    // Whatever the precision asked for.
    let e = Model::load_with(models().join("m.pt2"), DeviceChoice::Cpu, Precision::Fp32);
    assert!(matches!(e, Err(ModelError::Code { package: true, .. })), "{e:?}");
    // Text named .pt2 is neither a program nor a network file.
    let e = Model::load(models().join("not_a_zip.pt2"), DeviceChoice::Cpu).unwrap_err();
    assert!(matches!(e, ModelError::NotAModel { .. }), "{e:?}");
}

#[test]
fn a_package_answers_as_its_network_file() {
    let script = Model::load(models().join("m.safetensors"), DeviceChoice::Cpu).unwrap();
    let package = load("m.pt2").unwrap();
    for board in [Board::R37, Board::R61] {
        // Batches of several sizes: the package was compiled for any batch size.
        for n in [1, 7, 64] {
            let positions = zertz_model::bench::sample_positions(board, n, n as u64);
            let (l1, v1) = answers(&script, &positions);
            let (l2, v2) = answers(&package, &positions);
            let (dv, dl) = (max_diff(&v1, &v2), max_diff(&l1, &l2));
            assert!(dv < 1e-4 && dl < 1e-3, "{board}, {n} positions: {dv} {dl}");
            // The network reads its input.
            assert!(n == 1 || v2.windows(2).any(|w| w[0] != w[1]));
        }
    }
    let stats = package.stats();
    assert_eq!((stats.batches, stats.positions), (6, 2 * (1 + 7 + 64)));
}

/// `--compiled`: a network file runs through the package compiled from it on this machine,
/// found in the cache by its weights' checksum; a package of other weights under its name is
/// refused, and a missing one names the command that compiles it.
#[test]
fn a_network_file_runs_through_the_package_compiled_from_it() {
    let cache = models().join("cache/compiled");
    let file = Model::load(models().join("m.safetensors"), DeviceChoice::Cpu).unwrap();
    let compiled = Model::load_compiled(
        models().join("m.safetensors"),
        DeviceChoice::Cpu,
        Precision::Auto,
        &cache,
    )
    .unwrap();
    assert_eq!(compiled.metadata().backend.as_deref(), Some("aoti"));
    assert_eq!(compiled.metadata().sha256, file.metadata().sha256);
    assert_eq!(compiled.metadata().source_sha256, file.metadata().sha256);
    let positions = zertz_model::bench::sample_positions(Board::R61, 9, 3);
    let ((l1, v1), (l2, v2)) = (answers(&file, &positions), answers(&compiled, &positions));
    assert!(max_diff(&v1, &v2) < 1e-4 && max_diff(&l1, &l2) < 1e-3);
    // The package of m under the name of other's weights: not compiled from them.
    let other = zertz_model::read_network(&models().join("other.safetensors")).unwrap();
    let wrong = models().join("wrong-cache");
    std::fs::create_dir_all(&wrong).unwrap();
    let name = zertz_model::compiled_name(&other.sha256, "cpu", "fp32");
    std::fs::copy(models().join("m.pt2"), wrong.join(&name)).unwrap();
    let e = Model::load_compiled(
        models().join("other.safetensors"),
        DeviceChoice::Cpu,
        Precision::Fp32,
        &wrong,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains(&name) && e.contains("was not compiled from"), "{e}");
    // None in the cache: the command that compiles one.
    let empty = models().join("empty-cache");
    let e = Model::load_compiled(
        models().join("other.safetensors"),
        DeviceChoice::Cpu,
        Precision::Auto,
        &empty,
    )
    .unwrap_err();
    assert!(matches!(e, ModelError::NotCompiled { device: "cpu", precision: "fp32", .. }), "{e:?}");
    let e = e.to_string();
    assert!(
        e.contains("python -m zertz compile-network")
            && e.contains("other.safetensors")
            && !e.contains('\n'),
        "{e}"
    );
}

#[test]
fn a_package_keeps_the_metadata_and_its_checks() {
    let m = load("m.pt2").unwrap();
    let meta = m.metadata();
    assert_eq!(meta.boards, vec![37, 61]);
    assert_eq!(meta.step, 9);
    assert_eq!(meta.backend.as_deref(), Some("aoti"));
    assert_eq!(meta.precision.as_deref(), Some("fp32"));
    assert_eq!(meta.network["channels"], 8);
    assert_eq!(m.precision(), Precision::Fp32);
    // A board without a model in the package is refused, naming both sides.
    let e = m.check_board(Board::R48).unwrap_err();
    assert!(matches!(e, ModelError::WrongBoard { board: 48, .. }), "{e:?}");
    let positions = zertz_model::bench::sample_positions(Board::R48, 2, 1);
    let (planes, globals, _) = encode(&positions);
    let (mut l, mut v) = (vec![0.0; 2 * ActionSpace::new(Board::R48).len()], vec![0.0; 2]);
    let e = m.forward(Board::R48, &planes, &globals, &mut l, &mut v).unwrap_err();
    assert!(e.to_string().contains("48 rings"), "{e}");
}

#[test]
fn a_package_runs_only_as_it_was_compiled() {
    let path = models().join("m.pt2");
    // Another number format: refused, naming the one it was compiled for.
    let e = Model::load_code(&path, DeviceChoice::Cpu, Precision::Bf16).unwrap_err();
    assert!(matches!(e, ModelError::Unsupported { precision: Precision::Bf16, .. }), "{e:?}");
    assert!(e.to_string().contains("compiled for fp32"), "{e}");
    // `auto` means the package's own.
    let m = Model::load_code(&path, DeviceChoice::Auto, Precision::Auto).unwrap();
    assert_eq!((m.precision(), m.device()), (Precision::Fp32, tch::Device::Cpu));
    // A CPU package on a CUDA device: refused (on a machine without one, the device is missing).
    let e = Model::load_code(&path, DeviceChoice::Cuda(0), Precision::Auto).unwrap_err();
    assert!(matches!(e, ModelError::Device(_)), "{e:?}");
    assert!(e.to_string().contains("cuda"), "{e}");
}

#[test]
fn files_that_are_not_packages_are_refused_clearly() {
    for (name, says) in [
        ("not_a_zip.pt2", "not a .pt2 package"),
        ("half.pt2", "not a .pt2 package"),
        ("empty.pt2", "no zertz models"),
    ] {
        let e = load(name).unwrap_err();
        assert!(matches!(e, ModelError::NotAModel { .. }), "{name}: {e:?}");
        let text = e.to_string();
        assert!(text.contains(says) && text.contains(name) && !text.contains('\n'), "{text}");
    }
    let e = load("missing.pt2").unwrap_err();
    assert!(matches!(e, ModelError::Read { .. }), "{e:?}");
}

#[test]
fn a_package_serves_many_threads_and_guides_search() {
    let m = Arc::new(load("m.pt2").unwrap());
    let positions = zertz_model::bench::sample_positions(Board::R37, 8, 3);
    let (want_l, want_v) = answers(&m, &positions);
    let batching = m.clone().batching(256, std::time::Duration::from_millis(2), 2);
    let (planes, globals, masks) = encode(&positions);
    let a = ActionSpace::new(Board::R37).len();
    std::thread::scope(|s| {
        for t in 0..4 {
            let (model, batching) = (&m, &batching);
            let (planes, globals, masks, positions) = (&planes, &globals, &masks, &positions);
            let (want_l, want_v) = (&want_l, &want_v);
            s.spawn(move || {
                let batch = Batch { board: Board::R37, positions, planes, globals, masks };
                for _ in 0..5 {
                    let (mut l, mut v) = (vec![0.0; 8 * a], vec![0.0; 8]);
                    let out = &mut Output { logits: &mut l, values: &mut v };
                    // Half the threads run the package themselves, half through the batching
                    // threads.
                    if t % 2 == 0 {
                        model.evaluate(&batch, out)
                    } else {
                        batching.evaluate(&batch, out)
                    }
                    .unwrap();
                    assert_eq!(&v, want_v);
                    assert!(max_legal_diff(&l, want_l, masks) < 1e-4);
                }
            });
        }
    });
    // Search with the package picks legal actions.
    let evaluator: Arc<dyn Evaluator> = m;
    let mut player = MctsBot::neural("nn:m.pt2", evaluator, 32, 7);
    let mut p = Position::new(Variant::default(), Player::P0);
    for _ in 0..6 {
        if p.outcome().is_some() {
            break;
        }
        let action = player.choose(&p).unwrap();
        assert!(p.is_legal_action(&action), "{action:?}");
        p.play_action_unchecked(&action);
    }
}

/// With a CUDA device (the lent GPU machine, `scripts/gpu-check.sh`): a package compiled for
/// CUDA in bf16 answers as the network file in bf16 on the GPU does; CUDA graphs are refused
/// for it. Without CUDA, a CUDA package cannot be compiled (nor run) here.
#[test]
fn a_cuda_package_answers_as_torchscript_on_the_gpu() {
    if !zertz_model::cuda_available() {
        eprintln!("no CUDA device: nothing to compile for");
        return;
    }
    let dir = models();
    let cuda = dir.join("m_cuda_bf16.pt2");
    if !cuda.exists() {
        // The weights of m.safetensors, compiled for CUDA.
        let code = format!(
            r#"
from zertz.exported import export_aoti, load_network, read_metadata
meta = read_metadata("{file}")
net = load_network("{file}")
export_aoti(net, "{out}", step=meta["step"], device="cuda", precision="bf16")
"#,
            file = dir.join("m.safetensors").display(),
            out = cuda.display()
        );
        let out = Command::new(python()).arg("-c").arg(code).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let script =
        Model::load_with(dir.join("m.safetensors"), DeviceChoice::Cuda(0), Precision::Bf16)
            .unwrap();
    let package = Model::load_code(&cuda, DeviceChoice::Auto, Precision::Auto).unwrap();
    assert_eq!((package.device(), package.precision()), (tch::Device::Cuda(0), Precision::Bf16));
    // CUDA graphs are for TorchScript files: a package is refused, and stays usable.
    let mut graphed = Model::load_code(&cuda, DeviceChoice::Cuda(0), Precision::Bf16).unwrap();
    let e = graphed.enable_cuda_graphs().unwrap_err();
    assert!(e.to_string().contains("not AOTInductor packages"), "{e}");
    assert!(!graphed.cuda_graphs());
    // A CUDA package on the CPU: refused.
    let e = Model::load_code(&cuda, DeviceChoice::Cpu, Precision::Auto).unwrap_err();
    assert!(matches!(e, ModelError::Device(_)), "{e:?}");
    for board in [Board::R37, Board::R61] {
        for n in [1, 33, 256] {
            let positions = zertz_model::bench::sample_positions(board, n, 2);
            let (l0, v0) = answers(&script, &positions);
            for m in [&package, &graphed] {
                let (l, v) = answers(m, &positions);
                let (dv, dl) = (max_diff(&v, &v0), max_diff(&l, &l0));
                eprintln!("{board} {n}: package - network file (bf16, CUDA): {dl:e} {dv:e}");
                assert!(dv < 0.1 && dl < 0.1, "{board} {n}: {dl} {dv}");
            }
        }
    }
}

/// Packages load from many threads at once (libtorch's loader parses every package's JSON into
/// one shared object; the shim loads one at a time), each with its own metadata.
#[test]
fn packages_load_from_many_threads_at_once() {
    let cache = models().join("cache/compiled");
    std::thread::scope(|s| {
        for t in 0..4 {
            let cache = &cache;
            s.spawn(move || {
                for _ in 0..10 {
                    let m = if t % 2 == 0 {
                        load("m.pt2").unwrap()
                    } else {
                        Model::load_compiled(
                            models().join("m.safetensors"),
                            DeviceChoice::Cpu,
                            Precision::Auto,
                            cache,
                        )
                        .unwrap()
                    };
                    assert_eq!(m.metadata().boards, vec![37, 61]);
                    assert_eq!(m.device(), tch::Device::Cpu);
                }
            });
        }
    });
}
