//! Loading exported models: metadata, board and file checks, batched inference, search.
//!
//! The models are written by the Python package (`zertz.exported.export`) with the interpreter of
//! `$ZERTZ_PYTHON`, else the repository's `.venv/bin/python` (scripts/setup-python.sh makes it).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use zertz_arena::players::{Bot as _, MctsBot};
use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::{ActionSpace, Board, Player, Position, Variant};
use zertz_model::{BUILTIN, CudaGraphs, DeviceChoice, Model, ModelError, Precision};
use zertz_search::{Batch, Evaluator, LegalAnswers, Output};

/// A folder with models written once for all tests. Network files: `m37.safetensors` (37
/// rings, step 5), `m_all.safetensors` (every board), `wide.safetensors` (64 channels, 37
/// rings), `m32.safetensors` (32 channels, every board); `corrupt.safetensors` (text),
/// `half.safetensors` (the first half of `m37.safetensors`). Programs (TorchScript, which
/// `Model::load` refuses and `Model::load_code` runs), with the metadata of `m37.safetensors`
/// for programs: `plain.pt` (without zertz metadata), `nan.pt` (NaN answers), `shape.pt`
/// (logits of the wrong shape), `tail_inf.pt` (logits `-inf` from action 2000 on, else 0),
/// `float_index.pt` (an integer index buffer used as such: it fails once converted to bf16).
fn models() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let script = common::small_net("list(zertz.BOARDS)")
            + r#"
import json
from zertz.exported import CODE_FORMAT_VERSION, metadata_of
export(net, f"{d}/m37.safetensors", step=5, boards=[37])
export(net, f"{d}/m_all.safetensors", step=6)
export(ZertzNet(NetConfig(channels=64, blocks=1), boards=[37]).eval(), f"{d}/wide.safetensors")
export(ZertzNet(NetConfig(channels=32, blocks=2), boards=list(zertz.BOARDS)).eval(), f"{d}/m32.safetensors")
torch.jit.save(torch.jit.trace(torch.nn.Identity(), torch.zeros(1)), f"{d}/plain.pt")
open(f"{d}/corrupt.safetensors", "w").write("not a model")
data = open(f"{d}/m37.safetensors", "rb").read()
open(f"{d}/half.safetensors", "wb").write(data[: len(data) // 2])
meta = json.dumps(
    metadata_of(net, step=5, name="fake", boards=[37], format_version=CODE_FORMAT_VERSION)
)

class Fake(torch.nn.Module):
    def __init__(self, meta: str, kind: int):
        super().__init__()
        self.meta = meta
        self.kind = kind

    @torch.jit.export
    def metadata(self) -> str:
        return self.meta

    def forward(self, planes: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b = planes.shape[0]
        if self.kind == 0:
            return torch.zeros(b, 7), torch.zeros(b)
        if self.kind == 2:
            return torch.full((b, 4441), float("nan")), torch.full((b,), float("nan"))
        logits = torch.zeros(b, 4441)
        logits[:, 2000:] = float("-inf")
        return logits, torch.zeros(b)

torch.jit.save(torch.jit.script(Fake(meta, 0)), f"{d}/shape.pt")
torch.jit.save(torch.jit.script(Fake(meta, 1)), f"{d}/tail_inf.pt")
torch.jit.save(torch.jit.script(Fake(meta, 2)), f"{d}/nan.pt")

class FloatIndex(torch.nn.Module):
    def __init__(self, meta: str):
        super().__init__()
        self.meta = meta
        self.register_buffer("idx", torch.arange(4441))
        self.w = torch.nn.Parameter(torch.ones(1))

    @torch.jit.export
    def metadata(self) -> str:
        return self.meta

    def forward(self, planes: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b = planes.shape[0]
        x = (planes.flatten(1).sum(1, keepdim=True) * self.w).expand(b, 4441)
        return x.index_select(1, self.idx), torch.zeros(b)

torch.jit.save(torch.jit.script(FloatIndex(meta)), f"{d}/float_index.pt")
"#;
        common::written_by_python("model-tests", &script)
    })
}

/// The programs of [`models`]: `Model::load` refuses each, `Model::load_code` runs it.
const PROGRAMS: [&str; 5] = ["plain.pt", "nan.pt", "shape.pt", "tail_inf.pt", "float_index.pt"];

use common::{assert_legal_answers, encode, max_diff};

fn load(name: &str) -> Result<Model, ModelError> {
    Model::load(models().join(name), DeviceChoice::Cpu)
}

/// A program of [`models`], trusted: it runs its own code.
fn load_code(name: &str) -> Result<Model, ModelError> {
    Model::load_code(models().join(name), DeviceChoice::Cpu, Precision::Auto)
}

fn random_positions(board: Board, n: usize, seed: u64) -> Vec<Position> {
    zertz_model::bench::sample_positions(board, n, seed)
}

#[test]
fn metadata_is_read_and_checked() {
    let m = load("m37.safetensors").unwrap();
    let meta = m.metadata();
    assert_eq!(meta.boards, vec![37]);
    assert_eq!(meta.step, 5);
    assert_eq!(meta.encoding_version, zertz_env::encode::ENCODING_VERSION);
    assert_eq!(meta.action_space.get("37"), Some(&4441));
    assert_eq!(meta.network["channels"], 8);
    assert!(m.check_board(Board::R37).is_ok());
    let all = load("m_all.safetensors").unwrap();
    assert_eq!(all.metadata().boards, vec![37, 40, 43, 44, 48, 61]);
    for b in Board::ALL {
        assert!(all.check_board(b).is_ok());
    }
}

#[test]
fn wrong_board_is_refused_naming_both_sides() {
    let m = load("m37.safetensors").unwrap();
    let e = m.check_board(Board::R61).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, ModelError::WrongBoard { board: 61, .. }), "{e:?}");
    assert!(
        text.contains("37 rings") && text.contains("61 rings") && text.contains("m37.safetensors"),
        "{text}"
    );
    // The same through the evaluator: an error, not a crash.
    let positions = random_positions(Board::R61, 2, 1);
    let (planes, globals, masks) = encode(&positions);
    let batch = Batch {
        board: Board::R61,
        positions: &positions,
        planes: &planes,
        globals: &globals,
        masks: &masks,
    };
    let (mut logits, mut values) =
        (vec![0.0; 2 * ActionSpace::new(Board::R61).len()], vec![0.0; 2]);
    let e =
        m.evaluate(&batch, &mut Output { logits: &mut logits, values: &mut values }).unwrap_err();
    assert!(e.0.contains("61 rings"), "{e}");
}

#[test]
fn bad_files_are_refused_clearly() {
    let missing = load("nope.safetensors").unwrap_err();
    assert!(matches!(missing, ModelError::Read { .. }), "{missing:?}");
    for name in ["corrupt.safetensors", "half.safetensors"] {
        let e = load(name).unwrap_err();
        assert!(matches!(e, ModelError::NotAModel { .. }), "{name}: {e:?}");
        let text = e.to_string();
        assert!(text.contains("not an exported zertz model") && !text.contains('\n'), "{text}");
        assert!(text.contains(name), "{text}");
    }
    // Trusted, a TorchScript file without zertz metadata is still no model.
    let e = load_code("plain.pt").unwrap_err();
    assert!(matches!(e, ModelError::NotAModel { .. }) && e.to_string().contains("metadata"), "{e}");
}

/// A program is refused unless trusted, whatever it does, with the two ways on: the command
/// that converts it and `--trust-code`.
#[test]
fn programs_are_refused_unless_trusted() {
    for name in PROGRAMS {
        let e = load(name).unwrap_err();
        assert!(matches!(e, ModelError::Code { package: false, .. }), "{name}: {e:?}");
        let text = e.to_string();
        assert!(
            text.contains(name)
                && text.contains("a TorchScript file")
                && text.contains("convert-network")
                && text.contains("--trust-code")
                && !text.contains('\n'),
            "{text}"
        );
    }
}

#[test]
fn devices_parse_and_missing_cuda_is_an_error() {
    assert_eq!("auto".parse::<DeviceChoice>().unwrap(), DeviceChoice::Auto);
    assert_eq!("CPU".parse::<DeviceChoice>().unwrap(), DeviceChoice::Cpu);
    assert_eq!("cuda".parse::<DeviceChoice>().unwrap(), DeviceChoice::AllCuda);
    assert_eq!("cuda:3".parse::<DeviceChoice>().unwrap(), DeviceChoice::Cuda(3));
    assert_eq!("cuda:0, cuda:2".parse::<DeviceChoice>().unwrap(), DeviceChoice::CudaSet(0b101));
    assert_eq!("cuda:1,cuda:1".parse::<DeviceChoice>().unwrap(), DeviceChoice::Cuda(1));
    for bad in ["tpu", "cuda:x", "", "cuda:0,cpu", "cuda:64", "cuda:0,"] {
        assert!(bad.parse::<DeviceChoice>().is_err(), "{bad}");
    }
    let n = tch::Cuda::device_count() as usize;
    if n == 0 {
        let e = Model::load(models().join("m37.safetensors"), DeviceChoice::Cuda(0)).unwrap_err();
        assert!(e.to_string().contains("cuda:0 is not available"), "{e}");
        assert!(matches!(DeviceChoice::Auto.resolve(), Ok(tch::Device::Cpu)));
        let e = DeviceChoice::AllCuda.resolve_all().unwrap_err();
        assert!(e.to_string().contains("no CUDA device"), "{e}");
    } else {
        let all: Vec<_> = (0..n).map(tch::Device::Cuda).collect();
        assert_eq!(DeviceChoice::AllCuda.resolve_all().unwrap(), all);
        assert_eq!(DeviceChoice::Auto.resolve_all().unwrap(), all);
    }
    // A set is checked device by device.
    let e = DeviceChoice::CudaSet(0b11 << 40).resolve_all().unwrap_err();
    assert!(e.to_string().contains("cuda:40 is not available"), "{e}");
}

/// Copies of a network spread over several devices (here two on the CPU; GPUs in practice)
/// answer as one copy does, share the work, and sum their figures.
#[test]
fn a_network_spread_over_copies_answers_as_one() {
    use zertz_model::{Inference, Network};
    let one = load("m37.safetensors").unwrap();
    let copies = vec![
        Arc::new(load("m37.safetensors").unwrap()),
        Arc::new(load("m37.safetensors").unwrap()),
    ];
    let network =
        Network::spread(copies, &Inference { inference_threads: 2, ..Inference::default() });
    assert_eq!(network.devices(), vec![tch::Device::Cpu, tch::Device::Cpu]);
    let a = ActionSpace::new(Board::R37).len();
    for seed in 0..6 {
        let positions = random_positions(Board::R37, 5, seed);
        let (planes, globals, masks) = encode(&positions);
        let (mut want_l, mut want_v) = (vec![0.0; 5 * a], vec![0.0; 5]);
        one.forward(Board::R37, &planes, &globals, &mut want_l, &mut want_v).unwrap();
        let batch = Batch {
            board: Board::R37,
            positions: &positions,
            planes: &planes,
            globals: &globals,
            masks: &masks,
        };
        // Behind inference threads, only the legal logits come back.
        let (mut l, mut v) = (vec![f32::NAN; 5 * a], vec![0.0; 5]);
        network.evaluator.evaluate(&batch, &mut Output { logits: &mut l, values: &mut v }).unwrap();
        assert_eq!(v, want_v);
        assert_legal_answers(&l, &want_l, &masks, f32::MIN_POSITIVE, &format!("seed {seed}"));
        // The legal logits alone, in order, from the model itself (on the CPU every logit is
        // computed, then the legal ones gathered).
        let mut legal = LegalAnswers::default();
        one.evaluate_legal(&batch, &mut legal).unwrap();
        let want: Vec<f32> =
            want_l.iter().zip(&masks).filter(|(_, m)| **m).map(|(l, _)| *l).collect();
        assert_eq!((legal.legal, legal.values), (want, want_v));
    }
    // Six calls in turn: three batches of five positions on each copy, summed.
    let stats = network.stats();
    assert_eq!((stats.batches, stats.positions), (6, 30));
    // The share is per copy: at most 1.
    let (_, share) = network.figures(stats.busy.as_secs_f64(), 4);
    assert!(share > 0.0 && share <= 1.0, "{share}");
}

#[test]
fn batches_give_the_same_answers_as_single_positions() {
    let m = load("m_all.safetensors").unwrap();
    for board in [Board::R37, Board::R48, Board::R61] {
        let positions = random_positions(board, 12, board.rings() as u64);
        let a = ActionSpace::new(board).len();
        let (planes, globals, _) = encode(&positions);
        let (mut logits, mut values) = (vec![0.0; 12 * a], vec![0.0; 12]);
        m.forward(board, &planes, &globals, &mut logits, &mut values).unwrap();
        assert!(values.iter().all(|v| v.abs() < 1.0));
        assert!(logits.iter().all(|l| l.is_finite()));
        let shape = Shape::of(board);
        for i in [0, 5, 11] {
            let (mut l1, mut v1) = (vec![0.0; a], vec![0.0; 1]);
            let p = &planes[i * shape.planes_len()..(i + 1) * shape.planes_len()];
            m.forward(board, p, &globals[i * GLOBALS..(i + 1) * GLOBALS], &mut l1, &mut v1)
                .unwrap();
            assert!((v1[0] - values[i]).abs() < 1e-5);
            let diff = l1.iter().zip(&logits[i * a..(i + 1) * a]).map(|(x, y)| (x - y).abs());
            assert!(diff.fold(0.0f32, f32::max) < 1e-4);
        }
        // Distinct positions get distinct answers (the network reads its input).
        assert!(values.windows(2).any(|w| w[0] != w[1]));
    }
    let stats = m.stats();
    assert_eq!(stats.batches, 3 * 4);
    assert_eq!(stats.positions, 3 * (12 + 3));
    // Buffers of the wrong size are an error.
    let mut l = vec![0.0; 10];
    let e = m.forward(Board::R37, &[0.0; 3], &[0.0; GLOBALS], &mut l, &mut [0.0]).unwrap_err();
    assert!(matches!(e, ModelError::Forward { .. }), "{e:?}");
}

#[test]
fn batching_evaluator_serves_many_threads() {
    let m = Arc::new(load("m37.safetensors").unwrap());
    let batching = m.clone().batching(256, std::time::Duration::from_millis(2), 2);
    let positions = random_positions(Board::R37, 8, 9);
    let (planes, globals, masks) = encode(&positions);
    let a = ActionSpace::new(Board::R37).len();
    let (mut want_l, mut want_v) = (vec![0.0; 8 * a], vec![0.0; 8]);
    m.forward(Board::R37, &planes, &globals, &mut want_l, &mut want_v).unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let batch = Batch {
                    board: Board::R37,
                    positions: &positions,
                    planes: &planes,
                    globals: &globals,
                    masks: &masks,
                };
                let (mut l, mut v) = (vec![0.0; 8 * a], vec![0.0; 8]);
                batching.evaluate(&batch, &mut Output { logits: &mut l, values: &mut v }).unwrap();
                for (x, y) in v.iter().zip(&want_v) {
                    assert!((x - y).abs() < 1e-4);
                }
            });
        }
    });
    assert!(batching.stats().requests >= 4);
}

#[test]
fn a_network_guides_search_to_legal_moves() {
    let m: Arc<dyn Evaluator> = Arc::new(load("m37.safetensors").unwrap());
    let mut player = MctsBot::neural("nn:m37", m, 32, 3);
    let mut pos = Position::new(Variant::default(), Player::P0);
    for _ in 0..6 {
        if pos.outcome().is_some() {
            break;
        }
        let a = player.choose(&pos).unwrap();
        assert!(pos.is_legal_action(&a));
        pos.play_action_unchecked(&a);
    }
}

#[test]
fn non_finite_answers_are_errors_naming_the_model() {
    let a = ActionSpace::new(Board::R37).len();
    let positions = random_positions(Board::R37, 3, 2);
    let (planes, globals, masks) = encode(&positions);
    let batch = Batch {
        board: Board::R37,
        positions: &positions,
        planes: &planes,
        globals: &globals,
        masks: &masks,
    };
    let (mut l, mut v) = (vec![0.0; 3 * a], vec![0.0; 3]);
    // A program that answers NaN everywhere (a network file cannot hold NaN weights).
    let nan = load_code("nan.pt").unwrap();
    let e = nan.forward(Board::R37, &planes, &globals, &mut l, &mut v).unwrap_err();
    assert!(matches!(e, ModelError::NonFinite { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("nan.pt") && text.contains("NaN/non-finite"), "{text}");
    assert!(!text.contains('\n'), "{text}");
    let e = nan.evaluate(&batch, &mut Output { logits: &mut l, values: &mut v }).unwrap_err();
    assert!(e.0.contains("nan.pt") && e.0.contains("NaN/non-finite"), "{e}");
    // A search guided by it fails with an error naming it, not a panic.
    let mut player = MctsBot::neural("nn:nan.pt", Arc::new(nan), 16, 0);
    let e = player.choose(&positions[0]).unwrap_err();
    assert!(e.to_string().contains("nan.pt"), "{e}");
    // -inf is fine for illegal actions, not for legal ones.
    let tail = load_code("tail_inf.pt").unwrap();
    tail.forward(Board::R37, &planes, &globals, &mut l, &mut v).unwrap();
    let mut mask = vec![false; 3 * a];
    mask[5] = true;
    mask[a + 1999] = true;
    tail.forward_masked(Board::R37, &planes, &globals, &mask, &mut l, &mut v).unwrap();
    mask[2 * a + 3000] = true;
    let e = tail.forward_masked(Board::R37, &planes, &globals, &mask, &mut l, &mut v).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("tail_inf.pt")
            && text.contains("legal action 3000 of position 2")
            && text.contains("-inf"),
        "{text}"
    );
    // Through the evaluator, with the positions' own masks (the opening's placements are legal
    // past action 2000).
    assert!(masks[2000..a].iter().any(|&m| m));
    let e = tail.evaluate(&batch, &mut Output { logits: &mut l, values: &mut v }).unwrap_err();
    assert!(e.0.contains("tail_inf.pt") && e.0.contains("legal action"), "{e}");
    // And asking for the legal logits alone; without masks that is an error of its own.
    let e = tail.evaluate_legal(&batch, &mut LegalAnswers::default()).unwrap_err();
    assert!(e.0.contains("tail_inf.pt") && e.0.contains("legal action"), "{e}");
    let unmasked = Batch { masks: &[], ..batch };
    let e = tail.evaluate_legal(&unmasked, &mut LegalAnswers::default()).unwrap_err();
    assert!(e.0.contains("legal masks"), "{e}");
}

#[test]
fn wrong_output_shapes_are_errors_naming_the_model() {
    let m = load_code("shape.pt").unwrap();
    let positions = random_positions(Board::R37, 2, 4);
    let (planes, globals, _) = encode(&positions);
    let a = ActionSpace::new(Board::R37).len();
    let (mut l, mut v) = (vec![0.0; 2 * a], vec![0.0; 2]);
    let e = m.forward(Board::R37, &planes, &globals, &mut l, &mut v).unwrap_err();
    assert!(matches!(e, ModelError::Forward { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("shape.pt") && text.contains("[2, 7]"), "{text}");
}

#[test]
fn only_regular_files_are_loaded() {
    let dir = models().join("not-files");
    std::fs::create_dir_all(&dir).unwrap();
    let e = Model::load(&dir, DeviceChoice::Cpu).unwrap_err();
    assert!(matches!(e, ModelError::Read { .. }), "{e:?}");
    assert!(e.to_string().contains("not a regular file (a folder)"), "{e}");
    // A FIFO is refused without opening it (opening would wait for a writer forever).
    let fifo = dir.join("fifo.pt");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        // On a thread, so that a load that blocks fails the test instead of hanging it.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(Model::load(&fifo, DeviceChoice::Cpu).map(|_| ())));
        // Refused at once: only a load that blocks takes a minute, however busy the machine.
        let answer = rx.recv_timeout(std::time::Duration::from_secs(60));
        let e = answer.expect("loading a FIFO blocks").unwrap_err();
        assert!(e.to_string().contains("not a regular file (a FIFO)"), "{e}");
    }
}

/// A file past the bound of a network is refused before it is read: a 3 GB sparse file used to
/// be read whole first.
#[test]
fn a_file_past_the_bound_of_a_network_is_refused_unread() {
    let path = models().join("huge.safetensors");
    let file = std::fs::File::create(&path).unwrap();
    let size = zertz_env::files::MAX_NETWORK_BYTES + 1;
    file.set_len(size).unwrap(); // sparse: no disk taken
    let e = Model::load(&path, DeviceChoice::Cpu).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(e, ModelError::Read { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("huge.safetensors") && text.contains("more than the 1 GiB"), "{text}");
}

/// With a CUDA device (the lent GPU machine runs this through `scripts/gpu-check.sh`): the model
/// on the GPU gives the CPU's answers, alone and behind the batching thread. cuDNN convolutions
/// use TF32 by default, so the tolerance is that of 10-bit mantissas, not 1e-5. Without CUDA
/// there is nothing to compare (the test above checks that `cuda` is then refused).
#[test]
fn cuda_gives_the_cpu_answers() {
    if !zertz_model::cuda_available() {
        eprintln!("no CUDA device: nothing to compare");
        return;
    }
    let cpu = load("m_all.safetensors").unwrap();
    let gpu = Arc::new(
        Model::load_with(models().join("m_all.safetensors"), DeviceChoice::Auto, Precision::Fp32)
            .unwrap(),
    );
    assert_eq!(gpu.device(), tch::Device::Cuda(0));
    let auto = Model::load(models().join("m_all.safetensors"), DeviceChoice::Auto).unwrap();
    assert_eq!(auto.precision(), Precision::Bf16, "auto is bf16 on a GPU");
    for board in [Board::R37, Board::R61] {
        let n = 64;
        let positions = random_positions(board, n, 17);
        let a = ActionSpace::new(board).len();
        let (planes, globals, masks) = encode(&positions);
        let (mut l_cpu, mut v_cpu) = (vec![0.0; n * a], vec![0.0; n]);
        cpu.forward(board, &planes, &globals, &mut l_cpu, &mut v_cpu).unwrap();
        let (mut l_gpu, mut v_gpu) = (vec![0.0; n * a], vec![0.0; n]);
        gpu.forward(board, &planes, &globals, &mut l_gpu, &mut v_gpu).unwrap();
        let (dl, dv) = (max_diff(&l_cpu, &l_gpu), max_diff(&v_cpu, &v_gpu));
        eprintln!("{board}: largest difference GPU - CPU: logits {dl:e}, values {dv:e}");
        assert!(dl < 1e-2 && dv < 1e-2, "logits {dl}, values {dv}");
        let batching = gpu.clone().batching(1024, std::time::Duration::from_millis(1), 2);
        let batch = Batch {
            board,
            positions: &positions,
            planes: &planes,
            globals: &globals,
            masks: &masks,
        };
        // Through the evaluator only the legal logits come back (gathered on the GPU).
        let (mut l, mut v) = (vec![f32::NAN; n * a], vec![0.0; n]);
        batching.evaluate(&batch, &mut Output { logits: &mut l, values: &mut v }).unwrap();
        assert!(max_diff(&v, &v_gpu) < 1e-5);
        assert_legal_answers(&l, &l_gpu, &masks, 1e-5, &board.to_string());
        // Compact: the legal logits alone, in order, widened as they come from the GPU.
        let mut legal = LegalAnswers::default();
        gpu.evaluate_legal(&batch, &mut legal).unwrap();
        let want: Vec<f32> =
            l_gpu.iter().zip(&masks).filter(|(_, m)| **m).map(|(l, _)| *l).collect();
        assert!(max_diff(&legal.legal, &want) < 1e-5 && max_diff(&legal.values, &v_gpu) < 1e-5);
    }
}

/// CUDA graphs are used where they can be by default ([`CudaGraphs::Auto`]): on a CUDA device
/// for a network file (and a trusted TorchScript file with `evaluate()`); a trusted TorchScript
/// file without it runs without them (and says why), and asking for them there is an error
/// naming it. On the CPU auto and off leave them off, and on is an error.
#[test]
fn cuda_graphs_are_used_where_they_can_be_by_default() {
    if !zertz_model::cuda_available() {
        for when in [CudaGraphs::Auto, CudaGraphs::Off] {
            let mut cpu = load("m_all.safetensors").unwrap();
            cpu.use_cuda_graphs(when).unwrap();
            assert!(!cpu.cuda_graphs() && cpu.cuda_graphs_off().is_none(), "{when}");
        }
        let mut cpu = load("m_all.safetensors").unwrap();
        let e = cpu.use_cuda_graphs(CudaGraphs::On).unwrap_err();
        assert!(matches!(e, ModelError::Device(_)) && e.to_string().contains("CUDA"), "{e}");
        return;
    }
    let on_cuda = |name: &str| {
        Model::load_code(models().join(name), DeviceChoice::Cuda(0), Precision::Auto).unwrap()
    };
    let mut graphed = on_cuda("m_all.safetensors");
    graphed.use_cuda_graphs(CudaGraphs::Auto).unwrap();
    assert!(graphed.cuda_graphs() && graphed.cuda_graphs_off().is_none());
    let mut off = on_cuda("m_all.safetensors");
    off.use_cuda_graphs(CudaGraphs::Off).unwrap();
    assert!(!off.cuda_graphs());
    // tail_inf.pt has no evaluate(), as files exported before CUDA graphs.
    let mut older = on_cuda("tail_inf.pt");
    older.use_cuda_graphs(CudaGraphs::Auto).unwrap();
    assert!(!older.cuda_graphs());
    assert!(older.cuda_graphs_off().is_some_and(|why| why.contains("evaluate()")));
    let e = on_cuda("tail_inf.pt").use_cuda_graphs(CudaGraphs::On).unwrap_err();
    assert!(e.to_string().contains("evaluate()"), "{e}");
}

/// CUDA graphs (`--cuda-graphs`) give the answers of the same model without them: for batches
/// that fill a bucket, that pad one, and that no bucket holds (those run without a graph), in
/// fp32 and bf16, alone and from several threads at once (each pass on a lane of its own). On a
/// machine without CUDA, asking for them is a clear error.
#[test]
fn cuda_graphs_give_the_answers_without_them() {
    if !zertz_model::cuda_available() {
        let mut cpu = load("m_all.safetensors").unwrap();
        let e = cpu.enable_cuda_graphs().unwrap_err();
        assert!(matches!(e, ModelError::Device(_)) && e.to_string().contains("CUDA"), "{e}");
        assert!(!cpu.cuda_graphs());
        return;
    }
    for (precision, tolerance) in [(Precision::Fp32, 1e-3), (Precision::Bf16, 0.1)] {
        let path = models().join("m_all.safetensors");
        let plain = Model::load_with(&path, DeviceChoice::Cuda(0), precision).unwrap();
        let mut graphed = Model::load_with(&path, DeviceChoice::Cuda(0), precision).unwrap();
        graphed.enable_cuda_graphs().unwrap();
        assert!(graphed.cuda_graphs());
        let graphed = Arc::new(graphed);
        for board in [Board::R37, Board::R61] {
            let a = ActionSpace::new(board).len();
            for n in [1, 5, 9, 17, 33, 64, 100, 300, 5000] {
                let positions = random_positions(board, n, n as u64);
                let (planes, globals, masks) = encode(&positions);
                let (mut l0, mut v0) = (vec![0.0; n * a], vec![0.0; n]);
                plain.forward(board, &planes, &globals, &mut l0, &mut v0).unwrap();
                // Twice: the first pass of a bucket captures, the second replays.
                for _ in 0..2 {
                    let (mut l, mut v) = (vec![0.0; n * a], vec![0.0; n]);
                    graphed
                        .forward_masked(board, &planes, &globals, &masks, &mut l, &mut v)
                        .unwrap();
                    let (dl, dv) = (max_diff(&l, &l0), max_diff(&v, &v0));
                    eprintln!(
                        "{precision} {board} {n}: graphs - none: logits {dl:e}, values {dv:e}"
                    );
                    assert!(dl < tolerance && dv < tolerance, "{precision} {board} {n}: {dl} {dv}");
                }
                // Through the evaluator: the legal logits only, gathered after the replay.
                let batch = Batch {
                    board,
                    positions: &positions,
                    planes: &planes,
                    globals: &globals,
                    masks: &masks,
                };
                let (mut l, mut v) = (vec![f32::NAN; n * a], vec![0.0; n]);
                graphed.evaluate(&batch, &mut Output { logits: &mut l, values: &mut v }).unwrap();
                assert!(max_diff(&v, &v0) < tolerance);
                assert_legal_answers(&l, &l0, &masks, tolerance, &format!("{board} {n}"));
            }
            // Several threads at once, each batch its own answers.
            let positions = random_positions(board, 24, 5);
            let (planes, globals, masks) = encode(&positions);
            let (mut want_l, mut want_v) = (vec![0.0; 24 * a], vec![0.0; 24]);
            plain.forward(board, &planes, &globals, &mut want_l, &mut want_v).unwrap();
            std::thread::scope(|s| {
                for t in 0..4 {
                    let graphed = &graphed;
                    let (planes, globals, masks) = (&planes, &globals, &masks);
                    let (want_l, want_v) = (&want_l, &want_v);
                    s.spawn(move || {
                        // Threads take batches of different sizes (other buckets).
                        let n = 24 - 4 * t;
                        for _ in 0..10 {
                            let (mut l, mut v) = (vec![0.0; n * a], vec![0.0; n]);
                            let p = &planes[..n * planes.len() / 24];
                            let g = &globals[..n * GLOBALS];
                            let m = &masks[..n * a];
                            graphed.forward_masked(board, p, g, m, &mut l, &mut v).unwrap();
                            assert!(max_diff(&l, &want_l[..n * a]) < tolerance);
                            assert!(max_diff(&v, &want_v[..n]) < tolerance);
                        }
                    });
                }
            });
        }
    }
}

/// The largest softmax difference over the legal actions, and the total variation, between two
/// logit rows.
fn policy_gap(a: &[f32], b: &[f32], mask: &[bool]) -> f32 {
    let soft = |l: &[f32]| {
        let legal: Vec<f32> = l.iter().zip(mask).filter(|(_, m)| **m).map(|(x, _)| *x).collect();
        let top = legal.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = legal.iter().map(|x| (x - top).exp()).collect();
        let sum: f32 = e.iter().sum();
        e.into_iter().map(|x| x / sum).collect::<Vec<f32>>()
    };
    let (p, q) = (soft(a), soft(b));
    0.5 * p.iter().zip(&q).map(|(x, y)| (x - y).abs()).sum::<f32>()
}

/// Reduced precision on real positions of every board: the policy over the legal actions moves
/// by a total variation of at most 0.02 and the value by at most 0.02 in bf16 (7-bit mantissas),
/// 0.005 in fp16 (10 bits), against fp32. On the CPU here; `cuda_gives_the_cpu_answers` checks
/// the GPU.
#[test]
fn reduced_precision_agrees_with_fp32_on_every_board() {
    let fp32 = load("m_all.safetensors").unwrap();
    assert_eq!(fp32.precision(), Precision::Fp32, "auto is fp32 on the CPU");
    for (precision, tolerance) in [(Precision::Bf16, 0.02f32), (Precision::Fp16, 0.005)] {
        let m = Model::load_with(models().join("m_all.safetensors"), DeviceChoice::Cpu, precision)
            .unwrap();
        assert_eq!(m.precision(), precision);
        let (mut worst_tv, mut worst_v) = (0.0f32, 0.0f32);
        for board in Board::ALL {
            let n = 48;
            let positions = random_positions(board, n, 5 + board.rings() as u64);
            let a = ActionSpace::new(board).len();
            let (planes, globals, masks) = encode(&positions);
            let (mut l32, mut v32) = (vec![0.0; n * a], vec![0.0; n]);
            fp32.forward_masked(board, &planes, &globals, &masks, &mut l32, &mut v32).unwrap();
            let (mut l, mut v) = (vec![0.0; n * a], vec![0.0; n]);
            m.forward_masked(board, &planes, &globals, &masks, &mut l, &mut v).unwrap();
            for i in 0..n {
                let row = i * a..(i + 1) * a;
                worst_tv =
                    worst_tv.max(policy_gap(&l32[row.clone()], &l[row.clone()], &masks[row]));
                worst_v = worst_v.max((v32[i] - v[i]).abs());
            }
        }
        eprintln!("{precision}: largest policy total variation {worst_tv:e}, value {worst_v:e}");
        assert!(worst_tv <= tolerance && worst_v <= tolerance, "{precision}: {worst_tv} {worst_v}");
        assert!(worst_tv > 0.0, "{precision} computes in its own precision");
    }
}

/// A file whose network breaks when its buffers are converted (an integer index turned into
/// floats, as files exported before reduced precision do) is refused at load time in that
/// precision, naming it; fp32 still loads it.
#[test]
fn a_network_that_fails_in_reduced_precision_is_refused_at_load() {
    let path = models().join("float_index.pt");
    let e = Model::load_code(&path, DeviceChoice::Cpu, Precision::Bf16).unwrap_err();
    assert!(matches!(e, ModelError::Unsupported { precision: Precision::Bf16, .. }), "{e:?}");
    assert!(e.to_string().contains("bf16") && e.to_string().contains("float_index.pt"), "{e}");
    let m = Model::load_code(&path, DeviceChoice::Cpu, Precision::Auto).unwrap();
    assert_eq!(m.precision(), Precision::Fp32);
    assert_eq!(m.stats().batches, 0, "the probe is not counted");
}

/// The host buffers are reused across passes of every size, and passes on several threads at
/// once each keep their own: every answer is the answer of the position alone.
#[test]
fn reused_buffers_give_each_batch_its_own_answers() {
    let m = load("m37.safetensors").unwrap();
    let board = Board::R37;
    let a = ActionSpace::new(board).len();
    let positions = random_positions(board, 64, 23);
    let (planes, globals, _) = encode(&positions);
    let single: Vec<(Vec<f32>, f32)> = (0..positions.len())
        .map(|i| {
            let len = Shape::of(board).planes_len();
            let (mut l, mut v) = (vec![0.0; a], vec![0.0]);
            let (p, g) =
                (&planes[i * len..(i + 1) * len], &globals[i * GLOBALS..(i + 1) * GLOBALS]);
            m.forward(board, p, g, &mut l, &mut v).unwrap();
            (l, v[0])
        })
        .collect();
    let check = |start: usize, len: usize| {
        let plen = Shape::of(board).planes_len();
        let (mut l, mut v) = (vec![0.0; len * a], vec![0.0; len]);
        m.forward(
            board,
            &planes[start * plen..(start + len) * plen],
            &globals[start * GLOBALS..(start + len) * GLOBALS],
            &mut l,
            &mut v,
        )
        .unwrap();
        for j in 0..len {
            let (want_l, want_v) = &single[start + j];
            assert!((v[j] - want_v).abs() < 1e-5, "batch {start}+{len}, position {j}");
            let d = want_l.iter().zip(&l[j * a..(j + 1) * a]).map(|(x, y)| (x - y).abs());
            assert!(d.fold(0.0f32, f32::max) < 1e-4, "batch {start}+{len}, position {j}");
        }
    };
    // Growing, shrinking and growing again in one thread...
    for (start, len) in [(0, 1), (3, 7), (0, 64), (10, 3), (20, 40), (5, 1)] {
        check(start, len);
    }
    // ...and from four threads at once.
    std::thread::scope(|s| {
        for t in 0..4 {
            s.spawn(move || {
                for k in 0..20 {
                    check((t * 7 + k) % 32, 1 + (t * 5 + k * 3) % 32);
                }
            });
        }
    });
}

#[test]
fn the_builtin_network_loads_by_name_and_says_where_it_comes_from() {
    let m = Model::load(zertz_model::BUILTIN, DeviceChoice::Cpu).unwrap();
    let meta = m.metadata();
    assert_eq!(meta.boards, vec![37]);
    assert_eq!(zertz_model::builtin_metadata(), Some(meta));
    // Its provenance: the training config (TOML), the commit that trained it, its figures.
    let provenance = meta.provenance.as_ref().expect("the built-in network has a provenance");
    let config = provenance["config"].as_str().unwrap();
    assert!(config.contains("[run]") && config.contains("[network]"), "{config}");
    let commit = provenance["commit"].as_str().unwrap();
    assert!(commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit()), "{commit}");
    assert!(provenance["figures"].as_object().is_some_and(|f| !f.is_empty()), "{provenance}");
    // It answers on its board and is refused, by name, on the others.
    let positions = random_positions(Board::R37, 16, 3);
    let (planes, globals, masks) = encode(&positions);
    let mut logits = vec![0.0; 16 * ActionSpace::new(Board::R37).len()];
    let mut values = vec![0.0; 16];
    m.forward_masked(Board::R37, &planes, &globals, &masks, &mut logits, &mut values).unwrap();
    assert!(values.iter().all(|v| v.is_finite() && v.abs() <= 1.0), "{values:?}");
    assert!(values.windows(2).any(|w| w[0] != w[1]), "the network reads its input");
    let e = m.check_board(Board::R61).unwrap_err();
    assert!(e.to_string().contains("builtin") && e.to_string().contains("61 rings"), "{e}");
    // A file of that name elsewhere is a file like any other.
    let e = Model::load(Path::new("no-such-dir").join("builtin"), DeviceChoice::Cpu).unwrap_err();
    assert!(matches!(e, ModelError::Read { .. }), "{e:?}");
}

/// The native pass of small batches on the CPU (`native.rs`) gives libtorch's answers on every
/// board, for test networks of 8 and 32 channels and for the built-in one, from one position to
/// the largest batch it runs; a larger batch, several libtorch threads a pass, a network wider
/// than 32 channels, reduced precision or a trusted program go to libtorch.
#[test]
fn the_native_pass_answers_as_libtorch_on_every_board() {
    // 8 channels and 32 (the direct convolution's two block shapes), and the built-in network.
    let (all, m32) = (models().join("m_all.safetensors"), models().join("m32.safetensors"));
    let cases = [
        (all.as_path(), Board::ALL.to_vec()),
        (m32.as_path(), Board::ALL.to_vec()),
        (Path::new(BUILTIN), vec![Board::R37]),
    ];
    for (path, boards) in cases {
        let mut m = Model::load(path, DeviceChoice::Cpu).unwrap();
        assert_eq!(m.native_forward(), Ok(()), "{}", path.display());
        let largest = m.native_batch();
        for board in boards {
            let a = ActionSpace::new(board).len();
            let positions = random_positions(board, largest + 1, board.rings() as u64);
            for b in [1, 3, largest, largest + 1] {
                let (planes, globals, _) = encode(&positions[..b]);
                let mut answers = Vec::new();
                for native in [true, false] {
                    m.set_native_forward(native);
                    let before = m.stats().native_batches;
                    let (mut logits, mut values) = (vec![f32::NAN; b * a], vec![f32::NAN; b]);
                    m.forward(board, &planes, &globals, &mut logits, &mut values).unwrap();
                    let ran = m.stats().native_batches - before;
                    assert_eq!(ran, u64::from(native && b <= largest), "{board}, batch {b}");
                    answers.push((logits, values));
                }
                let ((l1, v1), (l2, v2)) = (&answers[0], &answers[1]);
                let scale = l2.iter().fold(1.0f32, |s, l| s.max(l.abs()));
                let what = format!("{}, {board}, batch {b}", path.display());
                assert!(max_diff(l1, l2) <= 1e-5 * scale, "{what}: {}", max_diff(l1, l2));
                assert!(max_diff(v1, v2) <= 1e-5, "{what}: {}", max_diff(v1, v2));
                assert!(l1.iter().chain(v1).all(|x| x.is_finite()), "{what}");
            }
        }
        m.set_native_forward(true);
        m.set_cpu_threads(2);
        assert!(m.native_forward().is_err());
    }
    // A wider network: libtorch alone, and it says why.
    let why = load("wide.safetensors").unwrap().native_forward().unwrap_err().to_string();
    assert!(why.contains("64 channels"), "{why}");
    // In reduced precision: libtorch alone.
    let bf16 = Model::load_with(&all, DeviceChoice::Cpu, Precision::Bf16).unwrap();
    let why = bf16.native_forward().unwrap_err().to_string();
    assert!(why.contains("libtorch alone"), "{why}");
    // A program (trusted): its own code, through libtorch alone.
    let why = load_code("tail_inf.pt").unwrap().native_forward().unwrap_err().to_string();
    assert!(why.contains("libtorch alone"), "{why}");
}
