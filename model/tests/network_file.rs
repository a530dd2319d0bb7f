//! Network files (safetensors: weights and metadata, read as data) in the engine: the engine's
//! own architecture answers as PyTorch's `ZertzNet` does on the same weights, and a file that is
//! anything but a network file (a program, a corrupt or crafted file) is refused, or is harmless.
//!
//! The files are written by the Python package (`zertz.exported.export`, and TorchScript programs
//! crafted to do harm) with the interpreter of `$ZERTZ_PYTHON`, else the repository's
//! `.venv/bin/python`; the crafted headers are written here, byte by byte.

mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::{ActionSpace, Board};
use zertz_model::format::MAX_HEADER_BYTES;
use zertz_model::{DeviceChoice, Model, ModelError, Precision, decode_network, encode_network};

use common::{encode, max_diff};

/// The batch sizes that the answers are compared at: one position, around the native pass's
/// largest batch (16), and larger.
const SIZES: [usize; 7] = [1, 2, 7, 16, 17, 64, 256];

/// What the crafted programs write.
const PAYLOAD: &[u8] = b"#!/bin/sh\necho written by a network file\n";

/// What the files that they would overwrite hold.
const VICTIM: &str = "the victim's own bytes\n";

/// The old TorchScript built-in network (the weights of `builtin.safetensors`).
fn builtin_v1() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/builtin-v1.pt")
}

/// A folder written once for all tests. Network files: `net.safetensors` (16 channels, 2 blocks,
/// every board, its batch norms with the statistics and affine weights of a trained network),
/// `loud.safetensors` (the same with the value head's last bias 100). For every board, 256
/// positions of random games (`planes{B}.f32`, `globals{B}.f32`, `masks{B}.u8`) and PyTorch's
/// answers of `net` on the first `n` of them for each of [`SIZES`] (`logits{B}_{n}.f32`,
/// `values{B}_{n}.f32`, little-endian), computed on one thread as the engine's passes are.
/// Programs (TorchScript) with the metadata a trusted program may have: `overwrite.pt`
/// (overwrites `victim.txt` with [`PAYLOAD`] at every pass), `create.pt` (creates `created.sh`),
/// the same aimed at `control.txt` and `created_control.sh` (`overwrite_control.pt`,
/// `create_control.pt`: run trusted, to show that they do what they say), `loop.pt` (its
/// `metadata()` and `forward` never return), `negate.pt` (the old built-in network, its value
/// negated at batch 1).
fn files() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let v1 = serde_json::to_string(&builtin_v1().to_str().unwrap()).unwrap();
        let script = format!("BUILTIN_V1 = {v1}\n") + SCRIPT;
        common::written_by_python("network-file-tests", &script)
    })
}

/// The Python of [`files`] (after a line naming `BUILTIN_V1`).
const SCRIPT: &str = r##"
import copy, json, sys
import numpy as np
import torch
import zertz
from zertz.nn import NetConfig, ZertzNet
from zertz.exported import CODE_FORMAT_VERSION, export, metadata_of

d = sys.argv[1]
SIZES = [1, 2, 7, 16, 17, 64, 256]
BOARDS = list(zertz.BOARDS)
# One thread, as the engine's passes on the CPU.
torch.set_num_threads(1)
torch.manual_seed(1)

# Batch norms as training leaves them: statistics and affine weights far from their defaults.
net = ZertzNet(
    NetConfig(channels=16, blocks=2, policy_rank=4, value_channels=8, value_hidden=16),
    boards=BOARDS,
)
with torch.no_grad():
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.normal_(0.0, 0.5)
            m.running_var.uniform_(0.25, 4.0)
            m.weight.uniform_(0.5, 1.5)
            m.bias.normal_(0.0, 0.3)
net.eval()
export(net, f"{d}/net.safetensors", step=3)

# A value head with more channels than the trunk.
wide = ZertzNet(
    NetConfig(channels=8, blocks=1, policy_rank=4, value_channels=16, value_hidden=16),
    boards=[37],
)
wide.eval()
export(wide, f"{d}/wide.safetensors")

# The value head's last bias 100: tanh(100 + ...) is 1.
loud = copy.deepcopy(net)
with torch.no_grad():
    loud.value_fc2.bias.fill_(100.0)
export(loud, f"{d}/loud.safetensors")

# Positions of random games on every board, and PyTorch's answers for each batch size (the
# first n positions).
rng = np.random.default_rng(7)
for b in BOARDS:
    planes, globals_, masks = [], [], []
    game = zertz.Game(b)
    while len(planes) < max(SIZES):
        if game.is_over:
            game = zertz.Game(b)
        p, g = game.encode()
        planes.append(p)
        globals_.append(g)
        masks.append(game.legal_action_mask())
        game.play(int(rng.choice(game.legal_action_indices())))
    x, g = torch.from_numpy(np.stack(planes)), torch.from_numpy(np.stack(globals_))
    x.numpy().astype("<f4").tofile(f"{d}/planes{b}.f32")
    g.numpy().astype("<f4").tofile(f"{d}/globals{b}.f32")
    np.stack(masks).astype(np.uint8).tofile(f"{d}/masks{b}.u8")
    with torch.no_grad():
        for n in SIZES:
            logits, values = net(x[:n], g[:n])
            logits.numpy().astype("<f4").tofile(f"{d}/logits{b}_{n}.f32")
            values.numpy().astype("<f4").tofile(f"{d}/values{b}_{n}.f32")

# Programs (TorchScript), with metadata the engine accepts from a trusted program.
meta = json.dumps(
    metadata_of(net, step=0, name="crafted", boards=[37], format_version=CODE_FORMAT_VERSION)
)


class Writes(torch.nn.Module):
    """Writes `payload` into the file `target` (creating it if need be) at every pass: a shared
    mapping of the file (torch.from_file) filled with the bytes."""

    def __init__(self, target: str, payload: bytes):
        super().__init__()
        self.meta = meta
        self.target = target
        self.register_buffer("payload", torch.tensor(list(payload), dtype=torch.uint8))

    @torch.jit.export
    def metadata(self) -> str:
        return self.meta

    def forward(self, planes: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = self.payload.numel()
        mapped = torch.from_file(self.target, shared=True, size=n, dtype=torch.uint8)
        mapped.copy_(self.payload)
        b = planes.shape[0]
        # The mapping is used in the answer, so that the write is kept.
        return torch.zeros(b, 4441), torch.zeros(b) + mapped.sum().float() * 0.0


PAYLOAD = b"#!/bin/sh\necho written by a network file\n"
for name, target in [
    ("overwrite", "victim.txt"),
    ("overwrite_control", "control.txt"),
    ("create", "created.sh"),
    ("create_control", "created_control.sh"),
]:
    torch.jit.save(torch.jit.script(Writes(f"{d}/{target}", PAYLOAD)), f"{d}/{name}.pt")
for target in ["victim.txt", "control.txt"]:
    open(f"{d}/{target}", "w").write("the victim's own bytes\n")


class Loops(torch.nn.Module):
    """metadata() and forward never return."""

    def __init__(self):
        super().__init__()
        self.meta = meta

    @torch.jit.export
    def metadata(self) -> str:
        i = 0
        while i >= 0:
            i = (i + 1) % 7
        return self.meta

    def forward(self, planes: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        i = 0
        while i >= 0:
            i = (i + 1) % 7
        b = planes.shape[0]
        return torch.zeros(b, 4441), torch.zeros(b)


torch.jit.save(torch.jit.script(Loops()), f"{d}/loop.pt")


class Negates(torch.nn.Module):
    """The old built-in network, its value negated for a batch of one position (what a search
    asks most): a program can answer anything."""

    def __init__(self, inner: torch.jit.ScriptModule):
        super().__init__()
        self.inner = inner

    @torch.jit.export
    def metadata(self) -> str:
        return self.inner.metadata()

    def forward(self, planes: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits, value = self.inner(planes, g)
        if planes.shape[0] == 1:
            value = -value
        return logits, value


torch.jit.save(torch.jit.script(Negates(torch.jit.load(BUILTIN_V1))), f"{d}/negate.pt")
"##;

fn read_f32(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

/// The positions of [`files`] on `board`: planes, globals and legal masks of 256 positions.
fn inputs(board: Board) -> (Vec<f32>, Vec<f32>, Vec<bool>) {
    let b = board.rings();
    let planes = read_f32(&files().join(format!("planes{b}.f32")));
    let globals = read_f32(&files().join(format!("globals{b}.f32")));
    let masks = std::fs::read(files().join(format!("masks{b}.u8"))).unwrap();
    let n = SIZES[SIZES.len() - 1];
    assert_eq!(planes.len(), n * Shape::of(board).planes_len());
    assert_eq!((globals.len(), masks.len()), (n * GLOBALS, n * ActionSpace::new(board).len()));
    (planes, globals, masks.into_iter().map(|m| m == 1).collect())
}

/// `model`'s logits and values on the first `n` positions of `planes` and `globals`.
fn answers(
    model: &Model,
    board: Board,
    planes: &[f32],
    globals: &[f32],
    n: usize,
) -> (Vec<f32>, Vec<f32>) {
    let a = ActionSpace::new(board).len();
    let (mut logits, mut values) = (vec![f32::NAN; n * a], vec![f32::NAN; n]);
    let p = &planes[..n * Shape::of(board).planes_len()];
    model.forward(board, p, &globals[..n * GLOBALS], &mut logits, &mut values).unwrap();
    (logits, values)
}

/// Whether two slices hold the same floats, bit for bit; else the first difference.
fn same_bits(x: &[f32], y: &[f32]) -> Result<(), String> {
    if x.len() != y.len() {
        return Err(format!("{} values against {}", x.len(), y.len()));
    }
    match x.iter().zip(y).position(|(a, b)| a.to_bits() != b.to_bits()) {
        None => Ok(()),
        Some(i) => {
            Err(format!("at {i}: {} against {} (largest gap {})", x[i], y[i], max_diff(x, y)))
        }
    }
}

fn load(name: &str) -> Result<Model, ModelError> {
    Model::load(files().join(name), DeviceChoice::Cpu)
}

fn load_code(name: &str) -> Result<Model, ModelError> {
    Model::load_code(files().join(name), DeviceChoice::Cpu, Precision::Auto)
}

/// A refusal in one line that names the file and says `says`.
fn assert_says(e: &ModelError, path: &Path, says: &str) {
    let text = e.to_string();
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(text.contains(name) && text.contains(says), "{says:?} not in: {text}");
    assert!(!text.contains('\n'), "{text}");
}

/// Refused as a program, unread: the error that says how to convert it or trust it.
fn assert_code_refused(path: &Path) {
    for precision in [Precision::Auto, Precision::Bf16] {
        let e = Model::load_with(path, DeviceChoice::Cpu, precision).unwrap_err();
        assert!(matches!(e, ModelError::Code { package: false, .. }), "{e:?}");
        assert_says(&e, path, "convert-network");
    }
}

// ---------------------------------------------------------------------------------------------
// Equal answers

/// Through libtorch (the native pass off), the engine's `ZertzNet` on a network file's weights
/// gives PyTorch's answers bit for bit, on every board and at every batch size.
#[test]
fn libtorch_answers_as_pytorch_bit_for_bit_on_every_board() {
    let mut m = load("net.safetensors").unwrap();
    m.set_native_forward(false);
    for board in Board::ALL {
        let (planes, globals, _) = inputs(board);
        for n in SIZES {
            let b = board.rings();
            let (logits, values) = (format!("logits{b}_{n}.f32"), format!("values{b}_{n}.f32"));
            let (want_l, want_v) =
                (read_f32(&files().join(&logits)), read_f32(&files().join(&values)));
            // Read by this test alone (70 MB in all).
            std::fs::remove_file(files().join(logits)).unwrap();
            let (l, v) = answers(&m, board, &planes, &globals, n);
            same_bits(&l, &want_l).unwrap_or_else(|e| panic!("{board}, batch {n}: logits {e}"));
            same_bits(&v, &want_v).unwrap_or_else(|e| panic!("{board}, batch {n}: values {e}"));
            assert!(n == 1 || v.windows(2).any(|w| w[0] != w[1]), "the network reads its input");
        }
    }
    assert_eq!(m.stats().native_batches, 0);
}

/// The native pass (batches of up to 16 positions on the CPU in fp32, batch norms folded) agrees
/// with libtorch on every board: logits within 1e-3 relative, values within 1e-4.
#[test]
fn the_native_pass_agrees_with_libtorch_on_every_board() {
    let native = load("net.safetensors").unwrap();
    assert_eq!(native.native_forward(), Ok(()));
    let mut libtorch = load("net.safetensors").unwrap();
    libtorch.set_native_forward(false);
    let mut passes = 0;
    for board in Board::ALL {
        let (planes, globals, _) = inputs(board);
        for n in SIZES.into_iter().filter(|&n| n <= native.native_batch()) {
            let (l1, v1) = answers(&native, board, &planes, &globals, n);
            let (l2, v2) = answers(&libtorch, board, &planes, &globals, n);
            passes += 1;
            for (i, (x, y)) in l1.iter().zip(&l2).enumerate() {
                assert!((x - y).abs() <= 1e-3 * y.abs().max(1.0), "{board}, batch {n}, logit {i}");
            }
            assert!(max_diff(&v1, &v2) <= 1e-4, "{board}, batch {n}: {}", max_diff(&v1, &v2));
        }
    }
    assert_eq!(native.stats().native_batches, passes);
    assert_eq!(libtorch.stats().native_batches, 0);
}

/// A value head with more channels than the trunk runs natively and agrees with libtorch (the
/// native pass once wrote its channels past a buffer sized for the trunk's: a panic, which hung
/// `zertz match`).
#[test]
fn a_value_head_wider_than_the_trunk_runs_natively() {
    let native = load("wide.safetensors").unwrap();
    assert_eq!(native.native_forward(), Ok(()));
    let mut libtorch = load("wide.safetensors").unwrap();
    libtorch.set_native_forward(false);
    let (planes, globals, _) = inputs(Board::R37);
    for n in SIZES.into_iter().filter(|&n| n <= native.native_batch()) {
        let (l1, v1) = answers(&native, Board::R37, &planes, &globals, n);
        let (l2, v2) = answers(&libtorch, Board::R37, &planes, &globals, n);
        for (i, (x, y)) in l1.iter().zip(&l2).enumerate() {
            assert!((x - y).abs() <= 1e-3 * y.abs().max(1.0), "batch {n}, logit {i}");
        }
        assert!(max_diff(&v1, &v2) <= 1e-4, "batch {n}: {}", max_diff(&v1, &v2));
    }
    assert!(native.stats().native_batches > 0);
}

/// bf16 and fp16 on the CPU stay near fp32 on every board: values within 0.1, and the best legal
/// action mostly (4 times in 5) the same, else one whose fp32 logit is within 0.1 of the best.
#[test]
fn reduced_precision_on_the_cpu_stays_near_fp32() {
    let fp32 = load("net.safetensors").unwrap();
    let n = 64;
    for precision in [Precision::Bf16, Precision::Fp16] {
        let path = files().join("net.safetensors");
        let m = Model::load_with(&path, DeviceChoice::Cpu, precision).unwrap();
        assert_eq!((m.precision(), m.device()), (precision, tch::Device::Cpu));
        let (mut same, mut total, mut worst_v) = (0, 0, 0.0f32);
        for board in Board::ALL {
            let a = ActionSpace::new(board).len();
            let (planes, globals, masks) = inputs(board);
            let (l32, v32) = answers(&fp32, board, &planes, &globals, n);
            let (l, v) = answers(&m, board, &planes, &globals, n);
            worst_v = worst_v.max(max_diff(&v, &v32));
            assert!(l.iter().chain(&v).all(|x| x.is_finite()), "{precision} {board}");
            for i in 0..n {
                let row = i * a..(i + 1) * a;
                let best = |l: &[f32]| {
                    let legal = masks[row.clone()].iter().enumerate().filter(|(_, m)| **m);
                    let mut legal = legal.map(|(j, _)| j);
                    let first = legal.next().unwrap();
                    legal.fold(first, |b, j| if l[j] > l[b] { j } else { b })
                };
                let (b32, b) = (best(&l32[row.clone()]), best(&l[row.clone()]));
                let gap = l32[row.start + b32] - l32[row.start + b];
                assert!(gap <= 0.1, "{precision} {board}, position {i}: fp32 logit gap {gap}");
                same += usize::from(b == b32);
                total += 1;
            }
        }
        eprintln!("{precision}: best legal action as fp32's {same}/{total}, values {worst_v:e}");
        assert!(worst_v <= 0.1, "{precision}: {worst_v}");
        // (bf16: 354 of 384 when written; fp16: 383.)
        assert!(same * 5 >= total * 4, "{precision}: {same}/{total}");
    }
}

/// The old TorchScript built-in network (a program: trusted here) and the built-in network file
/// of the same weights answer alike, bit for bit, through libtorch.
#[test]
fn the_old_torchscript_builtin_answers_as_the_builtin_network_file() {
    let old = Model::load_code(builtin_v1(), DeviceChoice::Cpu, Precision::Fp32).unwrap();
    let mut new = Model::load(zertz_model::BUILTIN, DeviceChoice::Cpu).unwrap();
    new.set_native_forward(false);
    assert_eq!(old.metadata().boards, new.metadata().boards);
    assert_eq!((old.metadata().sha256.as_deref(), new.metadata().sha256.is_some()), (None, true));
    let board = Board::R37;
    let positions = zertz_model::bench::sample_positions(board, 64, 11);
    let (planes, globals, _) = encode(&positions);
    for n in [1, 17, 64] {
        let (l1, v1) = answers(&old, board, &planes, &globals, n);
        let (l2, v2) = answers(&new, board, &planes, &globals, n);
        same_bits(&l1, &l2).unwrap_or_else(|e| panic!("batch {n}: logits {e}"));
        same_bits(&v1, &v2).unwrap_or_else(|e| panic!("batch {n}: values {e}"));
    }
}

// ---------------------------------------------------------------------------------------------
// Programs: refused unless trusted

/// A program that overwrites a file at every pass is refused (in any precision: a reduced one
/// would run a probe pass), and the file keeps its bytes; trusted, the same program aimed at
/// another file does overwrite it.
#[test]
fn a_program_that_overwrites_a_file_is_refused_and_the_file_is_unchanged() {
    let victim = files().join("victim.txt");
    assert_code_refused(&files().join("overwrite.pt"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), VICTIM);
    // What it would have done.
    let control = files().join("control.txt");
    let m = load_code("overwrite_control.pt").unwrap();
    let (planes, globals, _) = inputs(Board::R37);
    answers(&m, Board::R37, &planes, &globals, 1);
    assert_eq!(std::fs::read(&control).unwrap(), PAYLOAD);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), VICTIM);
}

/// A program that creates a file of its own bytes (a script, say) is refused, and no file
/// appears; trusted, the same program aimed at another name does create it.
#[test]
fn a_program_that_creates_a_file_is_refused_and_no_file_appears() {
    let created = files().join("created.sh");
    assert_code_refused(&files().join("create.pt"));
    assert!(!created.exists(), "{} was created", created.display());
    // What it would have done.
    let control = files().join("created_control.sh");
    assert!(!control.exists());
    let m = load_code("create_control.pt").unwrap();
    let (planes, globals, _) = inputs(Board::R37);
    answers(&m, Board::R37, &planes, &globals, 1);
    assert_eq!(std::fs::read(&control).unwrap(), PAYLOAD);
    assert!(!created.exists());
}

/// A program whose `metadata()` and `forward` never return is refused at once: loading never
/// runs a file's code. (On a thread, so that a load that hangs fails the test after a minute
/// instead of hanging it; no load takes that long, however busy the machine.)
#[test]
fn a_program_that_loops_forever_is_refused_at_once() {
    let path = files().join("loop.pt");
    let (tx, rx) = std::sync::mpsc::channel();
    let p = path.clone();
    std::thread::spawn(move || {
        let answers = [Precision::Auto, Precision::Bf16]
            .map(|precision| Model::load_with(&p, DeviceChoice::Cpu, precision).map(|_| ()));
        // (The test may have given up waiting.)
        tx.send(answers).ok();
    });
    let answers = rx.recv_timeout(Duration::from_secs(60)).expect("loading the program hangs");
    for answer in answers {
        let e = answer.unwrap_err();
        assert!(matches!(e, ModelError::Code { .. }), "{e:?}");
        assert_says(&e, &path, "--trust-code");
    }
}

/// A program that lies (the old built-in network, its value negated for a single position) is
/// refused untrusted; trusted, it does lie.
#[test]
fn a_program_that_negates_the_value_at_batch_1_is_refused_unless_trusted() {
    let path = files().join("negate.pt");
    assert_code_refused(&path);
    let liar = load_code("negate.pt").unwrap();
    let honest = Model::load_code(builtin_v1(), DeviceChoice::Cpu, Precision::Fp32).unwrap();
    let positions = zertz_model::bench::sample_positions(Board::R37, 2, 5);
    let (planes, globals, _) = encode(&positions);
    let (_, v1) = answers(&liar, Board::R37, &planes, &globals, 1);
    let (_, want1) = answers(&honest, Board::R37, &planes, &globals, 1);
    assert!(want1[0] != 0.0 && v1[0] == -want1[0], "{v1:?} {want1:?}");
    let (_, v2) = answers(&liar, Board::R37, &planes, &globals, 2);
    let (_, want2) = answers(&honest, Board::R37, &planes, &globals, 2);
    assert_eq!(v2, want2);
}

// ---------------------------------------------------------------------------------------------
// Corrupt and crafted network files

/// A network file's bytes, and where its weights start.
fn network_bytes() -> (Vec<u8>, usize) {
    let bytes = std::fs::read(files().join("net.safetensors")).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    (bytes, 8 + n)
}

/// `bytes` written as `name` in the folder of [`files`].
fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let path = files().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data).iter().map(|b| format!("{b:02x}")).collect()
}

/// 64 bytes changed in the middle of the weights: the checksum says the file is corrupt.
#[test]
fn corrupted_bytes_are_caught_by_the_checksum() {
    let (mut bytes, start) = network_bytes();
    let middle = bytes.len() / 2;
    assert!(middle > start && middle + 64 < bytes.len(), "the middle is in the weights");
    bytes[middle..middle + 64].iter_mut().for_each(|b| *b ^= 0xa5);
    let path = write("corrupt.safetensors", &bytes);
    let e = Model::load(&path, DeviceChoice::Cpu).unwrap_err();
    assert!(matches!(e, ModelError::NotAModel { .. }), "{e:?}");
    assert_says(&e, &path, "SHA-256");
    assert_says(&e, &path, "the file is corrupt");
}

/// A weight patched to NaN: caught by the checksum, and where the checksum was patched to match,
/// by the check that every weight is finite (naming the tensor).
#[test]
fn nan_weights_are_refused_by_the_checksum_or_the_finiteness_check() {
    let (mut bytes, start) = network_bytes();
    // The tensor whose bytes come first.
    let header: Map<String, Value> = serde_json::from_slice(&bytes[8..start]).unwrap();
    let first = header
        .iter()
        .find(|(_, t)| t.get("data_offsets").is_some_and(|o| o[0] == 0))
        .map(|(name, _)| name.clone())
        .unwrap();
    let old = sha256_hex(&bytes[start..]);
    bytes[start..start + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let path = write("nan_unsummed.safetensors", &bytes);
    let e = Model::load(&path, DeviceChoice::Cpu).unwrap_err();
    assert_says(&e, &path, "the file is corrupt");
    // The checksum of the patched weights in the header (of the same length).
    let new = sha256_hex(&bytes[start..]);
    let text = std::str::from_utf8(&bytes[8..start]).unwrap().replace(&old, &new);
    assert_eq!(text.len(), start - 8);
    bytes[8..start].copy_from_slice(text.as_bytes());
    let path = write("nan_summed.safetensors", &bytes);
    let e = Model::load(&path, DeviceChoice::Cpu).unwrap_err();
    assert!(matches!(e, ModelError::NotAModel { .. }), "{e:?}");
    assert_says(&e, &path, &format!("{first} holds NaN"));
}

/// A 3 GB (sparse) file is refused by its length before a byte is read, a valid header at its
/// start or not.
#[test]
fn a_file_past_the_bound_is_refused_unread() {
    let (bytes, _) = network_bytes();
    for (name, header) in [("sparse.safetensors", &[][..]), ("headed.safetensors", &bytes[..])] {
        let path = write(name, header);
        std::fs::File::options().write(true).open(&path).unwrap().set_len(3 << 30).unwrap();
        let e = Model::load(&path, DeviceChoice::Cpu).unwrap_err();
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(e, ModelError::Read { .. }), "{e:?}");
        assert_says(&e, &path, "more than the 1 GiB");
    }
}

/// A 900 MB (sparse) file whose header is a small network's: refused by comparing its length
/// with the header's, before its weights are read.
#[test]
fn a_file_longer_than_its_header_says_is_refused_before_its_weights_are_read() {
    let (bytes, start) = network_bytes();
    let path = write("long.safetensors", &bytes);
    let len: u64 = 900_000_000;
    std::fs::File::options().write(true).open(&path).unwrap().set_len(len).unwrap();
    let e = Model::load(&path, DeviceChoice::Cpu).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(e, ModelError::NotAModel { .. }), "{e:?}");
    let (described, held) = (bytes.len() - start, len - start as u64);
    assert_says(
        &e,
        &path,
        &format!("its header describes {described} bytes of weights, and the file holds {held}"),
    );
}

/// A value head biased far past 1 (as a program could answer 5.0): the engine's own tanh keeps
/// every value it answers within [-1, 1], through libtorch, the native pass and in bf16.
#[test]
fn a_huge_value_bias_still_answers_values_within_one() {
    let path = files().join("loud.safetensors");
    let mut fp32 = Model::load(&path, DeviceChoice::Cpu).unwrap();
    let bf16 = Model::load_with(&path, DeviceChoice::Cpu, Precision::Bf16).unwrap();
    for board in Board::ALL {
        let (planes, globals, _) = inputs(board);
        for native in [true, false] {
            fp32.set_native_forward(native);
            for n in [1, 16, 64] {
                for (m, what) in [(&fp32, "fp32"), (&bf16, "bf16")] {
                    let (_, v) = answers(m, board, &planes, &globals, n);
                    let what = format!("{what} {board}, batch {n}: {v:?}");
                    assert!(v.iter().all(|v| (-1.0..=1.0).contains(v)), "{what}");
                    assert!(v.iter().all(|&v| v > 0.99), "saturated: {what}");
                }
            }
        }
    }
    assert!(fp32.stats().native_batches > 0);
}

/// A tensor of a crafted file: name, type (as safetensors names it), shape, bytes.
#[derive(Clone)]
struct Part {
    name: String,
    dtype: &'static str,
    shape: Vec<usize>,
    bytes: Vec<u8>,
}

/// The metadata JSON and the tensors of `net.safetensors`, as crafting starts from them.
fn network_parts() -> (Value, Vec<Part>) {
    let file = zertz_model::read_network(&files().join("net.safetensors")).unwrap();
    let parts = file
        .tensors
        .into_iter()
        .map(|(name, shape, values)| Part {
            name,
            dtype: "F32",
            shape,
            bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        })
        .collect();
    (serde_json::from_str(&file.json).unwrap(), parts)
}

/// A safetensors file of `parts` laid end to end, written by hand: the header length, a header
/// whose `__metadata__` is `info`, then the bytes.
fn safetensors(info: &Map<String, Value>, parts: &[Part]) -> Vec<u8> {
    let mut header = Map::new();
    header.insert("__metadata__".into(), Value::Object(info.clone()));
    let mut data = Vec::new();
    for p in parts {
        let start = data.len();
        data.extend_from_slice(&p.bytes);
        let entry =
            json!({"dtype": p.dtype, "shape": p.shape, "data_offsets": [start, data.len()]});
        header.insert(p.name.clone(), entry);
    }
    let header = serde_json::to_vec(&header).unwrap();
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&header);
    out.extend_from_slice(&data);
    out
}

/// A network file of `metadata` and `parts` with its checksum, as the engine writes one.
fn summed(metadata: &Value, parts: &[Part]) -> Vec<u8> {
    let data: Vec<u8> = parts.iter().flat_map(|p| p.bytes.iter().copied()).collect();
    let mut info = Map::new();
    info.insert("zertz".into(), Value::String(metadata.to_string()));
    info.insert("sha256".into(), Value::String(sha256_hex(&data)));
    safetensors(&info, parts)
}

/// Every way a header can be wrong, each refused in one line that names the file and the
/// problem: its length, its text, its metadata, its tensors. The same file crafted without a
/// change loads and answers as the exported one.
#[test]
fn header_problems_are_refused_naming_the_file_and_the_problem() {
    let (metadata, parts) = network_parts();
    // Unchanged, the crafted file is a network file.
    let path = write("crafted.safetensors", &summed(&metadata, &parts));
    let crafted = Model::load(&path, DeviceChoice::Cpu).unwrap();
    let exported = load("net.safetensors").unwrap();
    assert_eq!(crafted.metadata(), exported.metadata());
    let (planes, globals, _) = inputs(Board::R48);
    assert_eq!(
        answers(&crafted, Board::R48, &planes, &globals, 7),
        answers(&exported, Board::R48, &planes, &globals, 7)
    );

    let valid = summed(&metadata, &parts);
    let with_meta = |edit: &dyn Fn(&mut Map<String, Value>)| {
        let mut m = metadata.as_object().unwrap().clone();
        edit(&mut m);
        summed(&Value::Object(m), &parts)
    };
    let with_parts = |edit: &dyn Fn(&mut Vec<Part>)| {
        let mut p = parts.clone();
        edit(&mut p);
        summed(&metadata, &p)
    };
    let with_info = |edit: &dyn Fn(&mut Map<String, Value>)| {
        let data: Vec<u8> = parts.iter().flat_map(|p| p.bytes.iter().copied()).collect();
        let mut info = Map::new();
        info.insert("zertz".into(), Value::String(metadata.to_string()));
        info.insert("sha256".into(), Value::String(sha256_hex(&data)));
        edit(&mut info);
        safetensors(&info, &parts)
    };
    let part =
        |p: &mut Vec<Part>, name: &str| -> usize { p.iter().position(|t| t.name == name).unwrap() };
    let sizes = |key: &'static str, v: u64| {
        with_meta(&move |m| {
            m.get_mut("network").unwrap()[key] = json!(v);
        })
    };

    let mut long = valid.clone();
    long[..8].copy_from_slice(&(MAX_HEADER_BYTES + 1).to_le_bytes());
    let mut past_end = valid.clone();
    past_end[..8].copy_from_slice(&(valid.len() as u64).to_le_bytes());
    let mut not_utf8 = valid.clone();
    let at = valid.windows(11).position(|w| w == b"stem.weight").unwrap();
    not_utf8[at] = 0xff;
    let mut not_json = 8u64.to_le_bytes().to_vec();
    not_json.extend_from_slice(b"[1, 2]  ");

    let cases: Vec<(&str, Vec<u8>, String)> = vec![
        (
            "long-header",
            long,
            format!(
                "its header would be {} bytes, more than the {MAX_HEADER_BYTES} it may have",
                MAX_HEADER_BYTES + 1
            ),
        ),
        (
            "header-past-the-end",
            past_end,
            format!(
                "its header would be {} bytes, and the file is {} bytes long",
                valid.len(),
                valid.len()
            ),
        ),
        ("short", vec![1, 2, 3], "it is 3 bytes long, too short for a header".into()),
        ("not-utf8", not_utf8, "its header is not UTF-8".into()),
        ("not-json", not_json, "unreadable header".into()),
        (
            "unknown-key",
            with_info(&|i| {
                i.insert("run".into(), json!("rm -rf"));
            }),
            r#"its header's metadata has an unknown key "run""#.into(),
        ),
        (
            "no-checksum",
            with_info(&|i| {
                i.remove("sha256");
            }),
            r#"its header has no "sha256" checksum"#.into(),
        ),
        (
            "no-metadata",
            with_info(&|i| {
                i.remove("zertz");
            }),
            r#"its header has no "zertz" metadata"#.into(),
        ),
        (
            "extra-tensor",
            with_parts(&|p| {
                p.push(Part {
                    name: "extra".into(),
                    dtype: "F32",
                    shape: vec![1],
                    bytes: vec![0; 4],
                })
            }),
            "it holds extra, which its architecture does not have".into(),
        ),
        (
            "missing-tensor",
            with_parts(&|p| {
                let i = part(p, "value_fc2.bias");
                p.remove(i);
            }),
            "it lacks value_fc2.bias, which its architecture has".into(),
        ),
        (
            "f16",
            with_parts(&|p| {
                let i = part(p, "no_removal");
                p[i].dtype = "F16";
                p[i].bytes.truncate(2);
            }),
            "no_removal is F16, not F32".into(),
        ),
        (
            "wrong-shape",
            with_parts(&|p| {
                let i = part(p, "no_removal");
                p[i].shape = vec![1, 1];
            }),
            "no_removal is [1, 1], its architecture's is [1]".into(),
        ),
        (
            "no-channels",
            sizes("channels", 0),
            "network.channels must be from 1 to 1024, not 0".into(),
        ),
        (
            "5000-channels",
            sizes("channels", 5000),
            "network.channels must be from 1 to 1024, not 5000".into(),
        ),
        (
            "unknown-size",
            with_meta(&|m| {
                m.get_mut("network").unwrap()["heads"] = json!(3);
            }),
            "its network sizes are unreadable".into(),
        ),
        (
            "other-architecture",
            with_meta(&|m| {
                m.insert("architecture".into(), json!("Other"));
            }),
            r#"its architecture is "Other"; this engine runs "ZertzNet""#.into(),
        ),
        (
            "no-architecture",
            with_meta(&|m| {
                m.remove("architecture");
            }),
            "its metadata names no architecture".into(),
        ),
        (
            "format-version-1",
            with_meta(&|m| {
                m.insert("format_version".into(), json!(1));
            }),
            "uses format version 1, but this engine reads format version 2".into(),
        ),
    ];
    for (name, bytes, says) in cases {
        let path = write(&format!("header-{name}.safetensors"), &bytes);
        let e = Model::load(&path, DeviceChoice::Cpu).unwrap_err();
        let kind_ok = match name {
            "format-version-1" => matches!(e, ModelError::Version { .. }),
            _ => matches!(e, ModelError::NotAModel { .. }),
        };
        assert!(kind_ok, "{name}: {e:?}");
        assert_says(&e, &path, &says);
        // The decoder of bytes in memory says the same.
        let e = decode_network(&path, &bytes).unwrap_err();
        assert_says(&e, &path, &says);
    }
}

/// What `encode_network` writes, `decode_network` reads back: the same metadata, tensors and
/// checksum; what it cannot read back (NaN, a missing tensor) it refuses to write.
#[test]
fn encode_then_decode_round_trips() {
    let file = zertz_model::read_network(&files().join("net.safetensors")).unwrap();
    let bytes = encode_network(&file.json, &file.tensors).unwrap();
    let back = decode_network(Path::new("again.safetensors"), &bytes).unwrap();
    assert_eq!((&back.json, &back.sizes, &back.sha256), (&file.json, &file.sizes, &file.sha256));
    assert_eq!(back.tensors, file.tensors);
    assert_eq!(back.metadata, file.metadata);
    assert_eq!(back.metadata.sha256.as_deref(), Some(file.sha256.as_str()));
    // The checksum is of the weights: the exported file's, whatever the header's order.
    let exported = std::fs::read(files().join("net.safetensors")).unwrap();
    assert_eq!(file.sha256, sha256_hex(&exported[network_bytes().1..]));
    let mut nan = file.tensors.clone();
    nan[3].2[0] = f32::NAN;
    let e = encode_network(&file.json, &nan).unwrap_err();
    assert!(e.to_string().contains(&format!("{} holds NaN", nan[3].0)), "{e}");
    let mut missing = file.tensors.clone();
    missing.pop();
    assert!(encode_network(&file.json, &missing).is_err());
}

/// The built-in network is a network file, with the checksum of its weights in its metadata.
#[test]
fn the_builtin_network_is_a_network_file_with_its_checksum() {
    let m = Model::load(zertz_model::BUILTIN, DeviceChoice::Cpu).unwrap();
    let sha256 = m.metadata().sha256.clone().expect("a network file's checksum");
    let bytes = zertz_model::builtin_bytes();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    assert_eq!(sha256, sha256_hex(&bytes[8 + n..]));
    let file = decode_network(Path::new(zertz_model::BUILTIN), bytes).unwrap();
    assert_eq!((file.sha256, file.metadata.architecture.as_deref()), (sha256, Some("ZertzNet")));
    assert_eq!(m.native_forward(), Ok(()));
}
