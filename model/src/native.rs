//! The network's forward pass written out in Rust for small batches on the CPU: what a search
//! player asks for, one to a few positions at a time.
//!
//! Why one file of this size: one forward pass of one architecture. Its weight reading, folded
//! layers and kernels change together whenever `zertz.nn.ZertzNet` does, and the AVX2 kernel
//! (`direct`) stays beside the portable product that it must equal.
//!
//! At batch 1 libtorch spends most of a pass of a small network dispatching its ~300 operations
//! (a few microseconds each) rather than computing: the built-in network (32 channels, 3 blocks)
//! took 1.4–1.7 ms a pass on one core of an AMD EPYC (AVX2), of which its eight convolutions
//! were about a third (BENCHMARKS.md, "The network player on a CPU"). Here the batch-norm layers are folded into the
//! convolutions once at load; each 3×3 convolution is summed directly from a zero-padded copy of
//! its input with AVX2 and FMA (twelve accumulators: 32 output channels at 3 positions), or,
//! on a processor without them, is one matrix product (`matrixmultiply`'s sgemm) over the
//! unfolded inputs of the whole batch; the heads are small matrix products and loops. No
//! dispatch, no allocation once the scratch buffers have grown, no thread pool.
//!
//! It is the engine's architecture (`architecture.rs`) written out for small batches, beside
//! its libtorch backend (`net.rs`); it reads a network file's weights by name
//! ([`Native::from_file`] refuses a name missing, left over, or of another shape), and the
//! model crate's tests hold its answers to the libtorch backend's on every board.

#![allow(unsafe_code)]

use std::collections::BTreeMap;
use std::sync::Mutex;

use tch::{Kind, Tensor};
use zertz_env::Board;
use zertz_env::encode::{GLOBALS, PLANES, Shape};

/// The largest batch the native pass runs; larger ones go to libtorch, whose batched
/// convolutions catch up there (BENCHMARKS.md, "The network player on a CPU").
pub(crate) const NATIVE_MAX_BATCH: usize = 16;
/// The widest trunk the native pass runs (the `tiny` preset's, the built-in network's): from 64
/// channels on, a pass is bound by its arithmetic rather than by libtorch's dispatch, and
/// libtorch's convolutions (oneDNN) are as fast at batch 1 and faster from batch 4 on
/// (BENCHMARKS.md, "The network player on a CPU").
const NATIVE_MAX_CHANNELS: usize = 32;

/// `torch.nn.BatchNorm2d`'s default epsilon, which `ZertzNet` keeps.
const BN_EPS: f64 = 1e-5;
/// What `_pool` subtracts from off-board cells before their maximum.
const OFF_BOARD: f32 = 1e4;

/// `c[m×n] = a[m×k] · b[k×n]`, each matrix given with its row and column strides.
#[allow(clippy::too_many_arguments)]
fn gemm(
    (m, k, n): (usize, usize, usize),
    a: &[f32],
    (rsa, csa): (usize, usize),
    b: &[f32],
    (rsb, csb): (usize, usize),
    c: &mut [f32],
    rsc: usize,
) {
    if m == 0 || n == 0 {
        return;
    }
    let last = |rows: usize, cols: usize, rs: usize, cs: usize| (rows - 1) * rs + (cols - 1) * cs;
    assert!(k > 0 && last(m, k, rsa, csa) < a.len() && last(k, n, rsb, csb) < b.len());
    assert!(last(m, n, rsc, 1) < c.len());
    // SAFETY: the asserts above keep every element read or written inside its slice; `c` is a
    // unique borrow, so it overlaps neither input.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            rsa as isize,
            csa as isize,
            b.as_ptr(),
            rsb as isize,
            csb as isize,
            0.0,
            c.as_mut_ptr(),
            rsc as isize,
            1,
        );
    }
}

/// A linear layer: `w [out][inp]`, `b [out]`.
struct Dense {
    w: Vec<f32>,
    b: Vec<f32>,
    out: usize,
    inp: usize,
}

impl Dense {
    /// `out[rows][self.out] = x[rows][self.inp] · wᵀ + b`.
    fn rows(&self, rows: usize, x: &[f32], out: &mut [f32]) {
        gemm((rows, self.inp, self.out), x, (self.inp, 1), &self.w, (1, self.inp), out, self.out);
        for row in out[..rows * self.out].chunks_exact_mut(self.out) {
            row.iter_mut().zip(&self.b).for_each(|(o, b)| *o += b);
        }
    }
}

/// A convolution with its batch norm folded in: `w [out][inp·k·k]`, `b [out]`, and for a 3×3
/// one the same weights as `wt [inp·9][out]` (output channels side by side, as the direct
/// convolution reads them).
struct Conv {
    w: Vec<f32>,
    wt: Vec<f32>,
    b: Vec<f32>,
    out: usize,
    inp: usize,
}

impl Conv {
    /// A `k`×`k` convolution of weights `w [out][inp·k·k]` and bias `b [out]`.
    fn new(w: Vec<f32>, b: Vec<f32>, out: usize, inp: usize, k: usize) -> Conv {
        let taps = inp * k * k;
        let wt = match k {
            3 => (0..taps * out).map(|j| w[(j % out) * taps + j / out]).collect(),
            _ => Vec::new(),
        };
        Conv { w, wt, b, out, inp }
    }
}

/// The weights of a module, by name, each taken once.
struct State(BTreeMap<String, Tensor>);

impl State {
    fn take(&mut self, name: &str, dims: &[i64]) -> Result<Vec<f32>, String> {
        let t = self.0.remove(name).ok_or_else(|| format!("no {name}"))?;
        if t.size() != dims {
            return Err(format!("{name} is {:?}, not {dims:?}", t.size()));
        }
        let t = t.to_kind(Kind::Float).contiguous().view([-1]);
        Vec::<f32>::try_from(&t).map_err(|e| format!("{name}: {e}"))
    }

    /// The shape of `name` (to size the network from its weights).
    fn dims(&self, name: &str) -> Result<Vec<i64>, String> {
        self.0.get(name).map(|t| t.size()).ok_or_else(|| format!("no {name}"))
    }

    fn dense(&mut self, name: &str, out: usize, inp: usize) -> Result<Dense, String> {
        let w = self.take(&format!("{name}.weight"), &[out as i64, inp as i64])?;
        let b = self.take(&format!("{name}.bias"), &[out as i64])?;
        Ok(Dense { w, b, out, inp })
    }

    /// A batch norm as `x · scale + shift`.
    fn batch_norm(&mut self, name: &str, c: usize) -> Result<(Vec<f64>, Vec<f64>), String> {
        let dims = [c as i64];
        let gamma = self.take(&format!("{name}.weight"), &dims)?;
        let beta = self.take(&format!("{name}.bias"), &dims)?;
        let mean = self.take(&format!("{name}.running_mean"), &dims)?;
        let var = self.take(&format!("{name}.running_var"), &dims)?;
        let scale: Vec<f64> =
            gamma.iter().zip(&var).map(|(&g, &v)| g as f64 / (v as f64 + BN_EPS).sqrt()).collect();
        let shift = (0..c).map(|i| beta[i] as f64 - mean[i] as f64 * scale[i]).collect();
        Ok((scale, shift))
    }

    /// A convolution without bias followed by the batch norm `bn`, folded into one; and the
    /// batch norm's scale, for what else comes before it.
    fn conv_bn(
        &mut self,
        name: &str,
        bn: &str,
        (out, inp, k): (usize, usize, usize),
    ) -> Result<(Conv, Vec<f64>), String> {
        let dims = [out as i64, inp as i64, k as i64, k as i64];
        let mut w = self.take(&format!("{name}.weight"), &dims)?;
        let (scale, shift) = self.batch_norm(bn, out)?;
        for (o, row) in w.chunks_exact_mut(inp * k * k).enumerate() {
            row.iter_mut().for_each(|x| *x = (*x as f64 * scale[o]) as f32);
        }
        let b = shift.iter().map(|&s| s as f32).collect();
        Ok((Conv::new(w, b, out, inp, k), scale))
    }
}

/// A residual block: its first convolution gets a per-channel bias from global pooling.
struct Block {
    conv1: Conv,
    pool: Dense,
    conv2: Conv,
}

/// A `ZertzNet`'s weights, ready for the native pass.
pub(crate) struct Native {
    channels: usize,
    /// Whether 3×3 convolutions run directly with AVX2 and FMA ([`Grid::conv3`]).
    direct: bool,
    /// The stem's convolution, its batch norm folded in; its bias is `stem_globals`'s output.
    stem: Conv,
    /// `stem_globals` with the stem's batch norm folded in.
    stem_globals: Dense,
    blocks: Vec<Block>,
    ring: Dense,
    colour: Dense,
    remove: Dense,
    no_removal: f32,
    query: Dense,
    key: Dense,
    rank_scale: f32,
    hop: Dense,
    pass: Dense,
    value_conv: Conv,
    value_fc1: Dense,
    value_fc2: Dense,
    scratch: Mutex<Vec<Scratch>>,
}

impl std::fmt::Debug for Native {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Native")
            .field("channels", &self.channels)
            .field("blocks", &self.blocks.len())
            .finish_non_exhaustive()
    }
}

/// Reused buffers of one pass.
#[derive(Default)]
struct Scratch {
    input: Vec<f32>,
    mask: Vec<f32>,
    count: Vec<f32>,
    x: Vec<f32>,
    y: Vec<f32>,
    t: Vec<f32>,
    cols: Vec<f32>,
    bias: Vec<f32>,
    pooled: Vec<f32>,
    head: Vec<f32>,
}

/// `max(x, 0)` as torch's ReLU: NaN stays NaN (`f32::max` would make it 0 and hide it from the
/// model's check of its answers).
#[inline]
fn relu(x: f32) -> f32 {
    if x < 0.0 { 0.0 } else { x }
}

/// `v` grown to at least `len` (its contents unspecified), as a slice of `len`.
fn grown(v: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if v.len() < len {
        v.resize(len, 0.0);
    }
    &mut v[..len]
}

/// The geometry of one pass: `b` positions of `hw` cells, channel-major (`[c][b·hw]`).
#[derive(Clone, Copy)]
struct Grid {
    b: usize,
    height: usize,
    width: usize,
}

impl Grid {
    fn hw(self) -> usize {
        self.height * self.width
    }

    fn n(self) -> usize {
        self.b * self.hw()
    }

    /// `out[conv.out][n] = conv(x[conv.inp][n])` for a 3×3 convolution with zero padding,
    /// without its bias: directly from a padded copy of `x` with AVX2 and FMA (`direct`) when
    /// the output channels come in eights, else as one matrix product over the unfolded input
    /// (both in `cols`).
    fn conv3(self, conv: &Conv, x: &[f32], cols: &mut Vec<f32>, out: &mut [f32], direct: bool) {
        #[cfg(target_arch = "x86_64")]
        if direct && conv.out % LANES == 0 {
            return self.conv3_direct(conv, x, cols, out);
        }
        let _ = direct;
        let (n, hw, h, w) = (self.n(), self.hw(), self.height, self.width);
        let cols = grown(cols, conv.inp * 9 * n);
        for ci in 0..conv.inp {
            let plane = &x[ci * n..(ci + 1) * n];
            for ky in 0..3 {
                for kx in 0..3 {
                    let row = &mut cols[(ci * 9 + ky * 3 + kx) * n..][..n];
                    for i in 0..self.b {
                        let (src, dst) = (&plane[i * hw..][..hw], &mut row[i * hw..][..hw]);
                        for y in 0..h {
                            let dst = &mut dst[y * w..][..w];
                            let sy = (y + ky).wrapping_sub(1);
                            if sy >= h {
                                dst.fill(0.0);
                                continue;
                            }
                            let src = &src[sy * w..][..w];
                            // Columns x read src[x + kx - 1]: shifted by one either way.
                            match kx {
                                0 => {
                                    dst[0] = 0.0;
                                    dst[1..].copy_from_slice(&src[..w - 1]);
                                }
                                1 => dst.copy_from_slice(src),
                                _ => {
                                    dst[..w - 1].copy_from_slice(&src[1..]);
                                    dst[w - 1] = 0.0;
                                }
                            }
                        }
                    }
                }
            }
        }
        let k = conv.inp * 9;
        gemm((conv.out, k, n), &conv.w, (k, 1), cols, (n, 1), out, n);
    }

    /// [`Grid::conv3`] without unfolding: each output is summed from a zero-padded copy of the
    /// input (in `padded`), a block of output channels for a few positions at once.
    #[cfg(target_arch = "x86_64")]
    fn conv3_direct(self, conv: &Conv, x: &[f32], padded: &mut Vec<f32>, out: &mut [f32]) {
        let (n, hw, h, w) = (self.n(), self.hw(), self.height, self.width);
        let (wp, pp) = (w + 2, (h + 2) * (w + 2));
        let np = self.b * pp;
        let padded = grown(padded, conv.inp * np);
        padded.fill(0.0);
        for ci in 0..conv.inp {
            for i in 0..self.b {
                for y in 0..h {
                    let src = &x[ci * n + i * hw + y * w..][..w];
                    padded[ci * np + i * pp + (y + 1) * wp + 1..][..w].copy_from_slice(src);
                }
            }
        }
        // The top-left corner of output p's 3×3 window, in the padded grid.
        let corner = |p: usize| {
            let (i, cell) = (p / hw, p % hw);
            i * pp + cell / w * wp + cell % w
        };
        let taps: [usize; 9] = std::array::from_fn(|k| k / 3 * wp + k % 3);
        // SAFETY: `direct` is only set where the processor has AVX2 and FMA (`Native::from_state`).
        unsafe { direct::conv3(conv, padded, np, &taps, n, corner, out) }
    }

    /// `out[c][n] = conv(x[conv.inp][n])` for a 1×1 convolution, without its bias.
    fn conv1(self, conv: &Conv, x: &[f32], out: &mut [f32]) {
        let n = self.n();
        gemm((conv.out, conv.inp, n), &conv.w, (conv.inp, 1), x, (n, 1), out, n);
    }

    /// The mean and maximum of each channel over each position's board (`_pool`):
    /// `out[i][2c]`, means first.
    fn pool(self, x: &[f32], channels: usize, mask: &[f32], count: &[f32], out: &mut [f32]) {
        let (n, hw) = (self.n(), self.hw());
        for i in 0..self.b {
            let m = &mask[i * hw..][..hw];
            let row = &mut out[i * 2 * channels..][..2 * channels];
            for c in 0..channels {
                let v = &x[c * n + i * hw..][..hw];
                let sum: f32 = v.iter().zip(m).map(|(x, m)| x * m).sum();
                let high = v
                    .iter()
                    .zip(m)
                    .map(|(x, m)| x - (1.0 - m) * OFF_BOARD)
                    .fold(f32::NEG_INFINITY, f32::max);
                row[c] = sum / count[i];
                row[channels + c] = high;
            }
        }
    }
}

impl Native {
    /// The native pass of a network file's weights, or why it has none (a network too wide
    /// for it).
    pub(crate) fn from_file(file: &crate::format::NetworkFile) -> Result<Native, String> {
        let state = file.tensors.iter().map(|(name, shape, values)| {
            let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
            (name.clone(), Tensor::from_slice(values).view(dims.as_slice()))
        });
        Native::from_state(state.collect())
    }

    /// The weights of a `ZertzNet` from a module's parameters and buffers; an error names what
    /// does not fit that architecture.
    fn from_state(state: Vec<(String, Tensor)>) -> Result<Native, String> {
        let mut s = State(state.into_iter().collect());
        let dims = s.dims("stem.weight")?;
        let c = dims[0] as usize;
        if dims != [c as i64, PLANES as i64, 3, 3] {
            return Err(format!("stem.weight is {dims:?}"));
        }
        if c > NATIVE_MAX_CHANNELS {
            return Err(format!(
                "libtorch is faster for a network of {c} channels; the native pass runs up to \
                 {NATIVE_MAX_CHANNELS}"
            ));
        }
        let blocks = (0..).take_while(|i| s.0.contains_key(&format!("blocks.{i}.conv1.weight")));
        let blocks = blocks.count();
        let rank = s.dims("query.weight")?[0] as usize;
        let vc = s.dims("value_conv.weight")?[0] as usize;
        let hidden = s.dims("value_fc1.weight")?[0] as usize;

        let (stem, scale) = s.conv_bn("stem", "stem_bn", (c, PLANES, 3))?;
        // The stem's bias (from the globals) comes before its batch norm: scaled by it too.
        let mut stem_globals = s.dense("stem_globals", c, GLOBALS)?;
        let rows = stem_globals.w.chunks_exact_mut(GLOBALS).zip(&mut stem_globals.b);
        for ((row, bias), (&scale, &shift)) in rows.zip(scale.iter().zip(&stem.b)) {
            row.iter_mut().for_each(|w| *w = (*w as f64 * scale) as f32);
            *bias = (*bias as f64 * scale) as f32 + shift;
        }
        let mut block = |i: usize| -> Result<Block, String> {
            let conv = |s: &mut State, j: usize| {
                s.conv_bn(&format!("blocks.{i}.conv{j}"), &format!("blocks.{i}.bn{j}"), (c, c, 3))
            };
            Ok(Block {
                conv1: conv(&mut s, 1)?.0,
                pool: s.dense(&format!("blocks.{i}.pool"), c, 2 * c)?,
                conv2: conv(&mut s, 2)?.0,
            })
        };
        let blocks = (0..blocks).map(&mut block).collect::<Result<Vec<_>, String>>()?;
        let native = Native {
            channels: c,
            direct: direct::available(),
            stem,
            stem_globals,
            blocks,
            ring: s.dense("ring", c, c)?,
            colour: s.dense("colour", 3, c)?,
            remove: s.dense("remove", 1, c)?,
            no_removal: s.take("no_removal", &[1])?[0],
            query: s.dense("query", rank, c)?,
            key: s.dense("key", rank, c)?,
            rank_scale: 1.0 / (rank as f32).sqrt(),
            hop: s.dense("hop", 6, c)?,
            pass: s.dense("pass_", 1, 2 * c)?,
            value_conv: s.conv_bn("value_conv", "value_bn", (vc, c, 1))?.0,
            value_fc1: s.dense("value_fc1", hidden, 2 * vc + GLOBALS)?,
            value_fc2: s.dense("value_fc2", 1, hidden)?,
            scratch: Mutex::new(Vec::new()),
        };
        // Training's auxiliary head, the ring table (the board's geometry here) and batch
        // counters are not part of the pass; anything else is a layer this file does not know.
        let unknown: Vec<&String> = s
            .0
            .keys()
            .filter(|k| {
                !k.starts_with("captures.") && *k != "cells" && !k.ends_with(".num_batches_tracked")
            })
            .collect();
        if let Some(name) = unknown.first() {
            return Err(format!("an unknown weight {name}"));
        }
        Ok(native)
    }

    /// The network on `b` positions of `board` (`planes [b][C][H][W]`, `globals [b][G]`):
    /// `logits [b][A]` and `values [b]`.
    pub(crate) fn forward(
        &self,
        board: Board,
        planes: &[f32],
        globals: &[f32],
        logits: &mut [f32],
        values: &mut [f32],
    ) {
        let shape = Shape::of(board);
        let grid = Grid { b: values.len(), height: shape.height, width: shape.width };
        let mut scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let s = scratch.get_or_insert_with(Scratch::default);
        self.run(board, grid, planes, globals, logits, values, s);
        if let Some(scratch) = scratch {
            self.scratch.lock().unwrap_or_else(|e| e.into_inner()).push(scratch);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        board: Board,
        grid: Grid,
        planes: &[f32],
        globals: &[f32],
        logits: &mut [f32],
        values: &mut [f32],
        s: &mut Scratch,
    ) {
        let (b, hw, n, c) = (grid.b, grid.hw(), grid.n(), self.channels);
        // Channel-major input, the board's mask (plane 0) and its cell count.
        let input = grown(&mut s.input, PLANES * n);
        for i in 0..b {
            for ch in 0..PLANES {
                let src = &planes[(i * PLANES + ch) * hw..][..hw];
                input[ch * n + i * hw..][..hw].copy_from_slice(src);
            }
        }
        let mask = grown(&mut s.mask, n);
        mask.copy_from_slice(&input[..n]);
        let count = grown(&mut s.count, b);
        for (i, count) in count.iter_mut().enumerate() {
            *count = mask[i * hw..][..hw].iter().sum::<f32>().max(1.0);
        }

        // Stem: x = relu(conv(planes) + stem_globals(globals)) · mask.
        let x = grown(&mut s.x, c * n);
        grid.conv3(&self.stem, input, &mut s.cols, x, self.direct);
        let bias = grown(&mut s.bias, b * c);
        self.stem_globals.rows(b, globals, bias);
        for ch in 0..c {
            for i in 0..b {
                let row = &mut x[ch * n + i * hw..][..hw];
                let (m, add) = (&mask[i * hw..][..hw], bias[i * c + ch]);
                row.iter_mut().zip(m).for_each(|(v, m)| *v = relu(*v + add) * m);
            }
        }

        let y = grown(&mut s.y, c * n);
        // The value head's convolution writes its channels into `t` too: they may outnumber the
        // trunk's.
        let t = grown(&mut s.t, c.max(self.value_conv.out) * n);
        let pooled = grown(&mut s.pooled, b * 2 * c.max(self.value_conv.out));
        for block in &self.blocks {
            // y = relu(bn1(conv1(x))) · mask, plus a bias from its pooled features.
            grid.conv3(&block.conv1, x, &mut s.cols, y, self.direct);
            for ch in 0..c {
                let add = block.conv1.b[ch];
                let row = &mut y[ch * n..][..n];
                row.iter_mut().zip(&*mask).for_each(|(v, m)| *v = relu(*v + add) * m);
            }
            grid.pool(y, c, mask, count, pooled);
            block.pool.rows(b, pooled, bias);
            for ch in 0..c {
                for i in 0..b {
                    let add = bias[i * c + ch];
                    y[ch * n + i * hw..][..hw].iter_mut().for_each(|v| *v += add);
                }
            }
            // x = relu(x + bn2(conv2(y))) · mask.
            grid.conv3(&block.conv2, y, &mut s.cols, t, self.direct);
            for ch in 0..c {
                let add = block.conv2.b[ch];
                let (xr, tr) = (&mut x[ch * n..][..n], &t[ch * n..][..n]);
                for ((v, t), m) in xr.iter_mut().zip(tr).zip(&*mask) {
                    *v = relu(*v + (t + add)) * m;
                }
            }
        }

        // Value: tanh(fc2(relu(fc1([pool(relu(bn(conv(x))) · mask), globals])))).
        let vc = self.value_conv.out;
        let v = &mut t[..vc * n];
        grid.conv1(&self.value_conv, x, v);
        for ch in 0..vc {
            let add = self.value_conv.b[ch];
            let row = &mut v[ch * n..][..n];
            row.iter_mut().zip(&*mask).for_each(|(v, m)| *v = relu(*v + add) * m);
        }
        grid.pool(v, vc, mask, count, pooled);
        let width = 2 * vc + GLOBALS;
        let head = grown(&mut s.head, b * width);
        for i in 0..b {
            head[i * width..][..2 * vc].copy_from_slice(&pooled[i * 2 * vc..][..2 * vc]);
            head[i * width + 2 * vc..][..GLOBALS]
                .copy_from_slice(&globals[i * GLOBALS..][..GLOBALS]);
        }
        let hidden = grown(&mut s.bias, b * self.value_fc1.out);
        self.value_fc1.rows(b, head, hidden);
        hidden.iter_mut().for_each(|h| *h = relu(*h));
        self.value_fc2.rows(b, hidden, values);
        values.iter_mut().for_each(|v| *v = v.tanh());

        // Policy, position by position, from the features of the rings.
        grid.pool(x, c, mask, count, pooled);
        let geometry = board.geometry();
        let cells: Vec<usize> = geometry.rings().map(|r| geometry.grid_index(r)).collect();
        let rings = cells.len();
        let actions = logits.len() / b;
        for i in 0..b {
            self.policy(
                grid,
                x,
                i,
                &cells,
                &pooled[i * 2 * c..][..2 * c],
                &mut s.head,
                &mut logits[i * actions..][..actions],
            );
        }
        debug_assert_eq!(actions, 3 * rings * (rings + 1) + 6 * rings + 1);
    }

    /// The logits of position `i` from the trunk's features `x` and its pooled features.
    #[allow(clippy::too_many_arguments)]
    fn policy(
        &self,
        grid: Grid,
        x: &[f32],
        i: usize,
        cells: &[usize],
        pooled: &[f32],
        scratch: &mut Vec<f32>,
        logits: &mut [f32],
    ) {
        let (c, n, hw, r) = (self.channels, grid.n(), grid.hw(), cells.len());
        let k = self.query.out;
        let parts = [r * c, r * c, r * 3, r, r * k, r * k, r * r, r * 6];
        let buf = grown(scratch, parts.iter().sum());
        let (gathered, rest) = buf.split_at_mut(r * c);
        let (f, rest) = rest.split_at_mut(r * c);
        let (colour, rest) = rest.split_at_mut(r * 3);
        let (remove, rest) = rest.split_at_mut(r);
        let (q, rest) = rest.split_at_mut(r * k);
        let (key, rest) = rest.split_at_mut(r * k);
        let (inter, hops) = rest.split_at_mut(r * r);
        for (ring, &cell) in cells.iter().enumerate() {
            for ch in 0..c {
                gathered[ring * c + ch] = x[ch * n + i * hw + cell];
            }
        }
        self.ring.rows(r, gathered, f);
        f.iter_mut().for_each(|v| *v = relu(*v));
        self.colour.rows(r, f, colour);
        self.remove.rows(r, f, remove);
        self.query.rows(r, f, q);
        self.key.rows(r, f, key);
        self.hop.rows(r, f, hops);
        // inter[at][rm] = q[at] · key[rm]
        gemm((r, k, r), q, (k, 1), key, (1, k), inter, r);

        // Placements: colour on `at`, removing `rm` (the last: no removal).
        for col in 0..3 {
            for at in 0..r {
                let base = colour[at * 3 + col];
                let out = &mut logits[(col * r + at) * (r + 1)..][..r + 1];
                for rm in 0..r {
                    out[rm] = base + remove[rm] + inter[at * r + rm] * self.rank_scale;
                }
                out[r] = base + self.no_removal;
            }
        }
        let placements = 3 * r * (r + 1);
        logits[placements..placements + 6 * r].copy_from_slice(hops);
        let mut pass = [0.0];
        self.pass.rows(1, pooled, &mut pass);
        logits[placements + 6 * r] = pass[0];
    }
}

/// Output channels of one AVX register of f32.
const LANES: usize = 8;

/// The direct 3×3 convolution ([`Grid::conv3_direct`]): written as plain loops over arrays of
/// eight, which the compiler turns into AVX2 and FMA instructions inside a function compiled
/// for them. A block holds `V` registers of output channels for `J` positions: 4 × 3 (twelve
/// accumulators) where the output channels come in 32s, else 1 × 8.
mod direct {
    use super::{Conv, LANES};

    /// Whether this processor runs [`conv3`].
    pub(super) fn available() -> bool {
        #[cfg(target_arch = "x86_64")]
        return is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
        #[cfg(not(target_arch = "x86_64"))]
        return false;
    }

    /// `out[o][p] = Σ wt[ci·9 + k][o] · padded[ci][corner(p) + taps[k]]` for the `n` outputs
    /// (`conv.out` a multiple of [`LANES`]).
    ///
    /// # Safety
    /// The processor must have AVX2 and FMA ([`available`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn conv3(
        conv: &Conv,
        padded: &[f32],
        np: usize,
        taps: &[usize; 9],
        n: usize,
        corner: impl Fn(usize) -> usize,
        out: &mut [f32],
    ) {
        let planes = Planes { conv, padded, np, taps };
        if conv.out % (4 * LANES) == 0 {
            planes.run::<4, 3>(n, &corner, out);
        } else {
            planes.run::<1, 8>(n, &corner, out);
        }
    }

    /// What every block of one convolution reads.
    struct Planes<'a> {
        conv: &'a Conv,
        padded: &'a [f32],
        np: usize,
        taps: &'a [usize; 9],
    }

    impl Planes<'_> {
        /// Every output, `V` registers of channels by `J` positions at a time.
        #[inline(always)]
        fn run<const V: usize, const J: usize>(
            &self,
            n: usize,
            corner: &impl Fn(usize) -> usize,
            out: &mut [f32],
        ) {
            for ob in (0..self.conv.out).step_by(V * LANES) {
                let mut p = 0;
                while p < n {
                    let count = J.min(n - p);
                    let mut acc = [[[0.0; LANES]; V]; J];
                    if count == J {
                        let corners: [usize; J] = std::array::from_fn(|j| corner(p + j));
                        acc = self.block::<V, J>(ob, &corners);
                    } else {
                        for (j, acc) in acc.iter_mut().enumerate().take(count) {
                            *acc = self.block::<V, 1>(ob, &[corner(p + j)])[0];
                        }
                    }
                    let rows = out.chunks_exact_mut(n).skip(ob).take(V * LANES);
                    for (l, row) in rows.enumerate() {
                        for (j, acc) in acc.iter().enumerate().take(count) {
                            row[p + j] = acc[l / LANES][l % LANES];
                        }
                    }
                    p += count;
                }
            }
        }

        /// The sums of output channels `ob..ob + V·8` at `J` positions (window corners).
        #[inline(always)]
        fn block<const V: usize, const J: usize>(
            &self,
            ob: usize,
            corners: &[usize; J],
        ) -> [[[f32; LANES]; V]; J] {
            let (conv, taps) = (self.conv, self.taps);
            let mut acc = [[[0.0f32; LANES]; V]; J];
            for ci in 0..conv.inp {
                let plane = &self.padded[ci * self.np..][..self.np];
                for (k, &tap) in taps.iter().enumerate() {
                    let start = (ci * 9 + k) * conv.out + ob;
                    let w: &[f32] = &conv.wt[start..start + V * LANES];
                    for j in 0..J {
                        let x = plane[corners[j] + tap];
                        for v in 0..V {
                            for l in 0..LANES {
                                acc[j][v][l] = w[v * LANES + l].mul_add(x, acc[j][v][l]);
                            }
                        }
                    }
                }
            }
            acc
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Conv, Grid};

    /// A convolution of `out` channels from `inp` with weights from a simple generator.
    fn conv(out: usize, inp: usize, seed: u64) -> Conv {
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        };
        let w: Vec<f32> = (0..out * inp * 9).map(|_| next()).collect();
        Conv::new(w, vec![0.0; out], out, inp, 3)
    }

    /// The direct convolution and the one through the unfolded input agree, for both block
    /// shapes, on a 7×7 and a 9×9 grid, for 1 and 5 positions (a tail of the blocks of 3 and 8).
    #[test]
    fn the_direct_convolution_gives_the_unfolded_ones_answers() {
        if !super::direct::available() {
            return; // only the unfolded one runs here
        }
        for (out, inp) in [(8, 8), (32, 32), (16, 32)] {
            let conv = conv(out, inp, out as u64);
            for (height, b) in [(7, 1), (7, 5), (9, 5)] {
                let grid = Grid { b, height, width: height };
                let n = grid.n();
                let x: Vec<f32> =
                    (0..inp * n).map(|i| ((i * 7919) % 101) as f32 / 50.0 - 1.0).collect();
                let mut cols = Vec::new();
                let (mut direct, mut unfolded) = (vec![0.0; out * n], vec![0.0; out * n]);
                grid.conv3(&conv, &x, &mut cols, &mut direct, true);
                grid.conv3(&conv, &x, &mut cols, &mut unfolded, false);
                let pairs = direct.iter().zip(&unfolded);
                let gap = pairs.map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
                assert!(gap < 1e-4, "{out}x{inp}, {height}x{height}, {b} positions: {gap}");
            }
        }
    }
}
