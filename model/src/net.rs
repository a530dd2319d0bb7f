//! The engine's architecture ([`crate::architecture`]) run through libtorch on any device and
//! in any precision: the layers of `zertz.nn.ZertzNet` built from a network file's weights.
//!
//! Each layer calls the ATen operation that PyTorch's module calls (`conv2d`, `batch_norm` with
//! the running statistics, `linear`, ...), in the same order, so that on one device and in one
//! precision the answers are those of `ZertzNet` in eval mode, bit for bit; `native.rs` is the
//! same architecture written out for small batches on the CPU. Nothing of the file runs: the
//! file holds numbers, and this is the code.

use std::collections::BTreeMap;

use tch::{Device, Kind, Tensor};
use zertz_env::Board as Rings;

use crate::architecture::Sizes;
use crate::format::{NetworkFile, by_name};
use crate::tensors::first_line;

/// `torch.nn.BatchNorm2d`'s default epsilon and momentum, which `ZertzNet` keeps.
const BN_EPS: f64 = 1e-5;
const BN_MOMENTUM: f64 = 0.1;
/// What `_pool` subtracts from off-board cells before their maximum.
const OFF_BOARD: f64 = 1e4;

/// A linear layer.
struct Linear {
    w: Tensor,
    b: Tensor,
}

/// A batch norm in eval mode.
struct BatchNorm {
    weight: Tensor,
    bias: Tensor,
    mean: Tensor,
    var: Tensor,
}

/// A residual block.
struct Block {
    conv1: Tensor,
    bn1: BatchNorm,
    pool: Linear,
    conv2: Tensor,
    bn2: BatchNorm,
}

/// A `ZertzNet` on a device, in a precision.
pub(crate) struct Net {
    stem: Tensor,
    stem_globals: Linear,
    stem_bn: BatchNorm,
    blocks: Vec<Block>,
    ring: Linear,
    colour: Linear,
    remove: Linear,
    no_removal: Tensor,
    query: Linear,
    key: Linear,
    hop: Linear,
    pass: Linear,
    /// `1 / sqrt(policy_rank)`, as Python computes it (in f64).
    rank_scale: f64,
    value_conv: Tensor,
    value_bn: BatchNorm,
    value_fc1: Linear,
    value_fc2: Linear,
    /// The grid cell of every ring, per board (ring count), on the device.
    cells: BTreeMap<usize, Tensor>,
}

// SAFETY: a `Net`'s tensors are written once, when it is built, and only read afterwards (as
// inputs of libtorch operations, which may read one tensor from several threads at once, as
// a TorchScript module's parameters are read by concurrent passes).
#[allow(unsafe_code)]
unsafe impl Sync for Net {}

type Fallible<T> = Result<T, String>;

fn err(e: tch::TchError) -> String {
    first_line(&e)
}

/// glibc's `mallopt` parameters: the size from which an allocation is its own mapping, and
/// the free memory at the top of the heap past which it is given back to the system.
const M_TRIM_THRESHOLD: std::ffi::c_int = -1;
const M_MMAP_THRESHOLD: std::ffi::c_int = -3;

#[allow(unsafe_code)]
unsafe extern "C" {
    fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
}

/// Keeps the memory of a pass on the CPU in the process from one pass to the next: a pass at
/// batch 256 makes and frees tensors of megabytes, which glibc otherwise maps and unmaps (or
/// trims off the heap) each time, and the page faults of mapping them again cost 5-10% of the
/// pass (`perf`: 16% of its time in the kernel, against 8% for the same network run by
/// TorchScript's interpreter, whose order of frees happened to spare it). At most 256 MiB of
/// freed memory stays with the process. Set once.
fn keep_pass_memory() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: mallopt only sets glibc's allocator parameters; it is thread-safe.
        #[allow(unsafe_code)]
        unsafe {
            mallopt(M_MMAP_THRESHOLD, 64 << 20);
            mallopt(M_TRIM_THRESHOLD, 256 << 20);
        }
    });
}

impl Net {
    /// The network of `file`'s weights on `device`, converted to `kind`.
    pub(crate) fn new(file: &NetworkFile, device: Device, kind: Kind) -> Fallible<Net> {
        if device == Device::Cpu && cfg!(target_env = "gnu") {
            keep_pass_memory();
        }
        let tensors = by_name(file);
        let t = |name: &str| -> Fallible<Tensor> {
            let (shape, values) =
                tensors.get(name).ok_or_else(|| format!("no {name} in the network"))?;
            let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
            Tensor::f_from_slice(values)
                .and_then(|t| t.f_view(dims.as_slice()))
                .and_then(|t| t.f_to_device(device))
                .and_then(|t| t.f_to_kind(kind))
                .map_err(err)
        };
        let linear = |name: &str| -> Fallible<Linear> {
            Ok(Linear { w: t(&format!("{name}.weight"))?, b: t(&format!("{name}.bias"))? })
        };
        let bn = |name: &str| -> Fallible<BatchNorm> {
            Ok(BatchNorm {
                weight: t(&format!("{name}.weight"))?,
                bias: t(&format!("{name}.bias"))?,
                mean: t(&format!("{name}.running_mean"))?,
                var: t(&format!("{name}.running_var"))?,
            })
        };
        let Sizes { blocks, policy_rank, .. } = file.sizes;
        let blocks = (0..blocks)
            .map(|i| {
                Ok(Block {
                    conv1: t(&format!("blocks.{i}.conv1.weight"))?,
                    bn1: bn(&format!("blocks.{i}.bn1"))?,
                    pool: linear(&format!("blocks.{i}.pool"))?,
                    conv2: t(&format!("blocks.{i}.conv2.weight"))?,
                    bn2: bn(&format!("blocks.{i}.bn2"))?,
                })
            })
            .collect::<Fallible<Vec<Block>>>()?;
        let mut cells = BTreeMap::new();
        for &rings in &file.metadata.boards {
            let Some(board) = Rings::from_rings(rings) else { continue };
            let geometry = board.geometry();
            let idx: Vec<i64> = geometry.rings().map(|r| geometry.grid_index(r) as i64).collect();
            cells.insert(
                rings,
                Tensor::f_from_slice(&idx).and_then(|t| t.f_to_device(device)).map_err(err)?,
            );
        }
        Ok(Net {
            stem: t("stem.weight")?,
            stem_globals: linear("stem_globals")?,
            stem_bn: bn("stem_bn")?,
            blocks,
            ring: linear("ring")?,
            colour: linear("colour")?,
            remove: linear("remove")?,
            no_removal: t("no_removal")?,
            query: linear("query")?,
            key: linear("key")?,
            hop: linear("hop")?,
            pass: linear("pass_")?,
            rank_scale: 1.0 / (policy_rank as f64).sqrt(),
            value_conv: t("value_conv.weight")?,
            value_bn: bn("value_bn")?,
            value_fc1: linear("value_fc1")?,
            value_fc2: linear("value_fc2")?,
            cells,
        })
    }

    /// `(logits [B, A], values [B])` of a batch of the `rings`-ring board: `planes [B, C, H,
    /// W]` and `globals [B, G]` on the network's device, in its precision
    /// (`ZertzNet.evaluate`).
    pub(crate) fn forward(
        &self,
        planes: &Tensor,
        globals: &Tensor,
        rings: usize,
    ) -> Fallible<(Tensor, Tensor)> {
        let cells = self.cells.get(&rings).ok_or_else(|| format!("no cells of {rings} rings"))?;
        let board = Board::of(planes).map_err(err)?;
        let x = self.trunk(planes, globals, &board).map_err(err)?;
        let value = self.value(&x, &board, globals).map_err(err)?;
        let logits = self.policy(&x, &board, cells).map_err(err)?;
        Ok((logits, value))
    }

    /// The trunk's features. Each tensor is dropped at its last use, as TorchScript's
    /// interpreter frees it: fewer live tensors at large batches.
    fn trunk(
        &self,
        planes: &Tensor,
        globals: &Tensor,
        board: &Board,
    ) -> Result<Tensor, tch::TchError> {
        let bias = linear(&self.stem_globals, globals)?.f_unsqueeze(2)?.f_unsqueeze(3)?;
        let mut x = conv(planes, &self.stem, 1)?;
        x = x.f_add(&bias)?;
        x = batch_norm(&x, &self.stem_bn)?;
        x = x.f_relu()?;
        x = x.f_mul(&board.mask)?;
        for block in &self.blocks {
            let mut y = conv(&x, &block.conv1, 1)?;
            y = batch_norm(&y, &block.bn1)?;
            y = y.f_relu()?;
            y = y.f_mul(&board.mask)?;
            let pooled = linear(&block.pool, &board.pool(&y)?)?;
            y = y.f_add(&pooled.f_unsqueeze(2)?.f_unsqueeze(3)?)?;
            let mut t = conv(&y, &block.conv2, 1)?;
            drop(y);
            t = batch_norm(&t, &block.bn2)?;
            x = x.f_add(&t)?;
            drop(t);
            x = x.f_relu()?;
            x = x.f_mul(&board.mask)?;
        }
        Ok(x)
    }

    fn value(&self, x: &Tensor, board: &Board, globals: &Tensor) -> Result<Tensor, tch::TchError> {
        let v = batch_norm(&conv(x, &self.value_conv, 0)?, &self.value_bn)?;
        let v = v.f_relu()?.f_mul(&board.mask)?;
        let v = Tensor::f_cat(&[board.pool(&v)?, globals.shallow_clone()], 1)?;
        let hidden = linear(&self.value_fc1, &v)?.f_relu()?;
        linear(&self.value_fc2, &hidden)?.f_tanh()?.f_squeeze_dim(1)
    }

    fn policy(&self, x: &Tensor, board: &Board, cells: &Tensor) -> Result<Tensor, tch::TchError> {
        let b = x.size()[0];
        let f = x.f_flatten(2, -1)?.f_index_select(2, cells)?.f_transpose(1, 2)?;
        let f = linear(&self.ring, &f)?.f_relu()?;
        let colour = linear(&self.colour, &f)?.f_transpose(1, 2)?;
        let remove = Tensor::f_cat(
            &[
                linear(&self.remove, &f)?.f_squeeze_dim(2)?,
                self.no_removal.f_expand([b, 1], false)?,
            ],
            1,
        )?;
        let q = linear(&self.query, &f)?;
        let k = linear(&self.key, &f)?.f_transpose(1, 2)?;
        let inter = q.f_bmm(&k)?.f_mul_scalar(self.rank_scale)?;
        let inter = inter.f_constant_pad_nd([0i64, 1].as_slice())?;
        let place = colour
            .f_unsqueeze(3)?
            .f_add(&remove.f_unsqueeze(1)?.f_unsqueeze(1)?)?
            .f_add(&inter.f_unsqueeze(1)?)?;
        let hops = linear(&self.hop, &f)?;
        let pass = linear(&self.pass, &board.pool(x)?)?;
        Tensor::f_cat(&[place.f_flatten(1, -1)?, hops.f_flatten(1, -1)?, pass], 1)
    }
}

fn linear(l: &Linear, x: &Tensor) -> Result<Tensor, tch::TchError> {
    x.f_linear(&l.w, Some(&l.b))
}

/// A convolution without bias, `padding` on each side.
fn conv(x: &Tensor, w: &Tensor, padding: i64) -> Result<Tensor, tch::TchError> {
    x.f_conv2d(
        w,
        None::<&Tensor>,
        [1i64, 1].as_slice(),
        [padding, padding].as_slice(),
        [1i64, 1].as_slice(),
        1,
    )
}

fn batch_norm(x: &Tensor, bn: &BatchNorm) -> Result<Tensor, tch::TchError> {
    x.f_batch_norm(
        Some(&bn.weight),
        Some(&bn.bias),
        Some(&bn.mean),
        Some(&bn.var),
        false,
        BN_MOMENTUM,
        BN_EPS,
        true,
    )
}

/// What every layer reads of the board: its mask `[B, 1, H, W]` (plane 0), its cell count
/// `[B, 1]`, and what `_pool` subtracts from the cells off it (`(1 - mask) · 1e4`, computed
/// once, as TorchScript's common-subexpression pass leaves it).
struct Board {
    mask: Tensor,
    count: Tensor,
    off: Tensor,
}

impl Board {
    fn of(planes: &Tensor) -> Result<Board, tch::TchError> {
        let mask = planes.f_narrow(1, 0, 1)?;
        let dims = [2i64, 3];
        let count =
            mask.f_sum_dim_intlist(dims.as_slice(), false, None::<Kind>)?.f_clamp_min(1.0)?;
        let off = mask.f_rsub_scalar(1.0)?.f_mul_scalar(OFF_BOARD)?;
        Ok(Board { mask, count, off })
    }

    /// Mean and max over the board's cells: `[B, C, H, W]` → `[B, 2C]` (`_pool`).
    fn pool(&self, x: &Tensor) -> Result<Tensor, tch::TchError> {
        let dims = [2i64, 3];
        let mean = x
            .f_mul(&self.mask)?
            .f_sum_dim_intlist(dims.as_slice(), false, None::<Kind>)?
            .f_div(&self.count)?;
        let high = x.f_sub(&self.off)?.f_amax(dims.as_slice(), false)?;
        Tensor::f_cat(&[mean, high], 1)
    }
}
