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
use zertz_env::Board;

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

impl Net {
    /// The network of `file`'s weights on `device`, converted to `kind`.
    pub(crate) fn new(file: &NetworkFile, device: Device, kind: Kind) -> Fallible<Net> {
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
            let Some(board) = Board::from_rings(rings) else { continue };
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
        let (x, mask, count) = self.trunk(planes, globals).map_err(err)?;
        let value = self.value(&x, &mask, &count, globals).map_err(err)?;
        let logits = self.policy(&x, &mask, &count, cells).map_err(err)?;
        Ok((logits, value))
    }

    fn trunk(
        &self,
        planes: &Tensor,
        globals: &Tensor,
    ) -> Result<(Tensor, Tensor, Tensor), tch::TchError> {
        let mask = planes.f_narrow(1, 0, 1)?;
        let count =
            mask.f_sum_dim_intlist([2i64, 3].as_slice(), false, None::<Kind>)?.f_clamp_min(1.0)?;
        let bias = linear(&self.stem_globals, globals)?.f_unsqueeze(2)?.f_unsqueeze(3)?;
        let x = conv(planes, &self.stem, 1)?.f_add(&bias)?;
        let mut x = batch_norm(&x, &self.stem_bn)?.f_relu()?.f_mul(&mask)?;
        for block in &self.blocks {
            let y = batch_norm(&conv(&x, &block.conv1, 1)?, &block.bn1)?.f_relu()?.f_mul(&mask)?;
            let pooled = linear(&block.pool, &pool(&y, &mask, &count)?)?;
            let y = y.f_add(&pooled.f_unsqueeze(2)?.f_unsqueeze(3)?)?;
            let y = batch_norm(&conv(&y, &block.conv2, 1)?, &block.bn2)?;
            x = x.f_add(&y)?.f_relu()?.f_mul(&mask)?;
        }
        Ok((x, mask, count))
    }

    fn value(
        &self,
        x: &Tensor,
        mask: &Tensor,
        count: &Tensor,
        globals: &Tensor,
    ) -> Result<Tensor, tch::TchError> {
        let v =
            batch_norm(&conv(x, &self.value_conv, 0)?, &self.value_bn)?.f_relu()?.f_mul(mask)?;
        let v = Tensor::f_cat(&[pool(&v, mask, count)?, globals.shallow_clone()], 1)?;
        let hidden = linear(&self.value_fc1, &v)?.f_relu()?;
        linear(&self.value_fc2, &hidden)?.f_tanh()?.f_squeeze_dim(1)
    }

    fn policy(
        &self,
        x: &Tensor,
        mask: &Tensor,
        count: &Tensor,
        cells: &Tensor,
    ) -> Result<Tensor, tch::TchError> {
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
        let pass = linear(&self.pass, &pool(x, mask, count)?)?;
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

/// Mean and max over the board's cells: `[B, C, H, W]` → `[B, 2C]` (`_pool`).
fn pool(x: &Tensor, mask: &Tensor, count: &Tensor) -> Result<Tensor, tch::TchError> {
    let dims = [2i64, 3];
    let mean =
        x.f_mul(mask)?.f_sum_dim_intlist(dims.as_slice(), false, None::<Kind>)?.f_div(count)?;
    let high = x
        .f_sub(&mask.f_rsub_scalar(1.0)?.f_mul_scalar(OFF_BOARD)?)?
        .f_amax(dims.as_slice(), false)?;
    Tensor::f_cat(&[mean, high], 1)
}
