//! A [`Model`]'s forward pass: inputs staged into reused host buffers and copied to the device,
//! the network run (directly or through CUDA graphs), and the answers brought back, widened
//! and checked.

use std::cell::{Cell, RefCell};
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::Instant;

use tch::{Device, IValue, Kind, Tensor};
use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::{ActionSpace, Board};

use crate::model::Backend;
use crate::stats::{RunningGuard, Staging};
use crate::tensors::{
    first_line, gather_legal, kind_of, nth_set_bit, pack_masks, pair, select_packed, unpack_widen,
    widen,
};
use crate::{Answers, Model, ModelError, Phases, graphs};

thread_local! {
    /// The libtorch threads this thread last set for its forward passes (0: none yet).
    static INTRA_OP_THREADS: Cell<usize> = const { Cell::new(0) };
    /// Every logit of a pass on the CPU whose caller wants the legal ones alone
    /// ([`Answers::Compact`]), kept from one pass to the next.
    static DENSE: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// Gives the calling thread `threads` libtorch threads for its forward passes on the CPU, once
/// per thread and count: libtorch keeps the count per thread (OpenMP's and MKL's), and setting
/// it rebuilds a thread pool of its own, which costs more than a small pass.
fn intra_op_threads(threads: usize) {
    INTRA_OP_THREADS.with(|set| {
        if set.get() != threads {
            tch::set_num_threads(threads.clamp(1, i32::MAX as usize) as i32);
            set.set(threads);
        }
    });
}

impl Model {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn run_timed(
        &self,
        board: Board,
        planes: &[f32],
        globals: &[f32],
        masks: Option<&[bool]>,
        answers: Answers,
        logits: &mut [f32],
        values: &mut [f32],
        sync: bool,
    ) -> Result<Phases, ModelError> {
        self.check_board(board)?;
        let shape = Shape::of(board);
        let actions = ActionSpace::new(board).len();
        let b = values.len();
        let fail = |reason: String| ModelError::Forward { path: self.path.clone(), reason };
        let compact = answers == Answers::Compact;
        if planes.len() != b * shape.planes_len()
            || globals.len() != b * GLOBALS
            || (!compact && logits.len() != b * actions)
            || masks.is_some_and(|m| m.len() != b * actions)
            || (compact && masks.is_none())
        {
            return Err(fail(format!("buffers do not hold {b} positions of {board}")));
        }
        if compact && !self.device.is_cuda() {
            // On the CPU every logit is computed on the host anyway: into a buffer of this
            // thread's, then the legal ones gathered.
            let masks = masks.unwrap_or_default();
            return DENSE.with(|dense| {
                let mut dense = dense.borrow_mut();
                dense.resize(b * actions, 0.0);
                let phases = self.run_timed(
                    board,
                    planes,
                    globals,
                    Some(masks),
                    Answers::Legal,
                    &mut dense,
                    values,
                    sync,
                )?;
                gather_legal(&dense, masks, logits).map_err(fail)?;
                Ok(phases)
            });
        }
        if b == 0 {
            return Ok(Phases::default());
        }
        let started = Instant::now();
        let _running = RunningGuard::start(&self.running);
        if let Some(native) = self.native_for(b) {
            native.forward(board, planes, globals, logits, values);
            let forward = started.elapsed();
            self.check_finite(logits, values, masks, actions)?;
            self.count(b, started);
            self.native_batches.fetch_add(1, Ordering::Relaxed);
            return Ok(Phases { forward, ..Phases::default() });
        }
        if self.device == Device::Cpu {
            intra_op_threads(self.cpu_threads);
        }
        // (Only the calling thread's stream: a device-wide synchronisation would break the
        // capture of a CUDA graph that another inference thread may be recording.)
        let wait = || match (sync, self.device) {
            (true, Device::Cuda(i)) => graphs::synchronize_current(i),
            _ => Ok(()),
        };

        // In: one copy of planes and globals into a reused host buffer, one transfer to the
        // device (asynchronous from pinned memory), converted to the model's precision there.
        let staging = self.stage(planes, globals);
        let dims = [b as i64, shape.planes as i64, shape.height as i64, shape.width as i64];
        let host_planes = staging.host.narrow(0, 0, planes.len() as i64).view(dims);
        let host_globals = staging.host.narrow(0, planes.len() as i64, globals.len() as i64);
        let host_globals = host_globals.view([b as i64, GLOBALS as i64]);
        // With CUDA graphs, the pass runs on a lane (a stream and its graphs) of its own, from
        // the copy in to the copy out.
        let mut lane = match (&self.graphs, graphs::bucket(b)) {
            (Some(graphs), Some(_)) => graphs.take().map_err(fail)?,
            _ => None,
        };
        let entered = lane.as_ref().map(|lane| lane.stream.enter()).transpose().map_err(fail)?;
        let (copied_in, out) = if let Some(lane) = lane.as_mut() {
            let network = |p: &Tensor, g: &Tensor| self.evaluate_fixed(board, p, g);
            lane.run(board.rings(), &host_planes, &host_globals, network, wait).map_err(fail)?
        } else {
            // (Copied as f32 then converted: libtorch would convert a CPU tensor on the CPU
            // first, into pageable memory, and the transfer would no longer be asynchronous.)
            let total = (planes.len() + globals.len()) as i64;
            let on_device = staging.host.narrow(0, 0, total).to_device_(
                self.device,
                Kind::Float,
                self.device.is_cuda(),
                false,
            );
            let on_device = on_device.to_kind(kind_of(self.precision));
            let p = on_device.narrow(0, 0, planes.len() as i64).view(dims);
            let g = on_device.narrow(0, planes.len() as i64, globals.len() as i64);
            let g = g.view([b as i64, GLOBALS as i64]);
            wait().map_err(fail)?;
            let copied_in = Instant::now();
            (copied_in, tch::no_grad(|| self.run_backend(board, p, g)).map_err(fail)?)
        };
        wait().map_err(fail)?;
        let forwarded = Instant::now();
        let (l, v) = out;
        if l.size() != [b as i64, actions as i64] || v.size() != [b as i64] {
            return Err(fail(format!(
                "outputs of shapes {:?} and {:?}, expected [{b}, {actions}] and [{b}]",
                l.size(),
                v.size()
            )));
        }
        // Out: the answers cross in the model's precision (half the bytes of fp32 in bf16 and
        // fp16) into a reused pinned host buffer, and are widened from there straight into the
        // caller's buffers.
        let legal_checked = if self.device.is_cuda() {
            // Only the legal logits: the masks go over packed into bits (an eighth of the bytes
            // of bools), the legal logits are selected there, and only they come back.
            let bytes = (b * actions).div_ceil(8);
            let legal = match (answers, masks) {
                (Answers::Legal | Answers::Compact, Some(masks)) => {
                    Some(self.packed_masks(masks, bytes))
                }
                _ => None,
            };
            let la = legal.as_ref().map_or(b * actions, |(_, k)| *k) as i64;
            // In the answers' own number format (a package may give f32 in any precision).
            let back = self.pooled(&self.answers, la as usize, l.kind());
            let mut host_l = back.host.narrow(0, 0, la);
            let flat = l.reshape([-1]);
            let selected = match &legal {
                Some((bits, _)) => {
                    let mut on_device = Tensor::empty([bytes as i64], (Kind::Uint8, self.device));
                    graphs::copy_async(&mut on_device, &bits.host.narrow(0, 0, bytes as i64))
                        .map_err(fail)?;
                    let selected = select_packed(&flat, &on_device).map_err(fail)?;
                    if selected.numel() as i64 != la {
                        return Err(fail(format!(
                            "{} logits selected for {la} legal actions",
                            selected.numel()
                        )));
                    }
                    selected
                }
                None => flat,
            };
            // In order on the pass's stream: the second copy, blocking, waits for both.
            graphs::copy_async(&mut host_l, &selected).map_err(fail)?;
            let host_v =
                v.reshape([-1]).f_to_device(Device::Cpu).map_err(|e| fail(first_line(&e)))?;
            // Selected, only the legal logits are checked (as they are written): the check
            // below reads every logit, and on a GPU's large batches that pass over the whole
            // action space cost more than the network.
            let legal_checked = match &legal {
                Some((bits, k)) if compact => {
                    if logits.len() != *k {
                        return Err(fail(format!(
                            "room for {} legal logits where {k} actions are legal",
                            logits.len()
                        )));
                    }
                    widen(&host_l, logits).map_err(fail)?;
                    // SAFETY: as below.
                    #[allow(unsafe_code)]
                    let packed = unsafe {
                        std::slice::from_raw_parts(bits.host.data_ptr().cast::<u8>(), bytes)
                    };
                    let bad = logits.iter().position(|l| !l.is_finite());
                    Some(bad.map(|j| (nth_set_bit(packed, j), logits[j])))
                }
                Some((bits, _)) => {
                    // SAFETY: a contiguous CPU tensor of at least `bytes` bytes that this pass
                    // alone holds until it goes back to the pool.
                    #[allow(unsafe_code)]
                    let packed = unsafe {
                        std::slice::from_raw_parts(bits.host.data_ptr().cast::<u8>(), bytes)
                    };
                    let bad = unpack_widen(&host_l, packed, logits).map_err(fail)?;
                    Some(bad.map(|i| (i, logits[i])))
                }
                None => {
                    widen(&host_l, logits).map_err(fail)?;
                    None
                }
            };
            widen(&host_v, values).map_err(fail)?;
            let mut pool = self.answers.lock().unwrap_or_else(|e| e.into_inner());
            pool.push(back);
            if let Some((bits, _)) = legal {
                pool.push(bits);
            }
            legal_checked
        } else {
            widen(&l.contiguous(), logits).map_err(fail)?;
            widen(&v.contiguous(), values).map_err(fail)?;
            None
        };
        // The device has read the host buffer once the answers are back.
        self.unstage(staging);
        drop(entered);
        if let (Some(graphs), Some(lane)) = (&self.graphs, lane) {
            graphs.put(lane);
        }
        match legal_checked {
            Some(bad_logit) => self.check_finite_at(values, bad_logit, actions, true)?,
            None => self.check_finite(logits, values, masks, actions)?,
        }
        self.count(b, started);
        Ok(Phases {
            copy_in: copied_in - started,
            forward: forwarded - copied_in,
            copy_out: forwarded.elapsed(),
        })
    }

    /// Counts a pass of `b` positions that started at `started`.
    fn count(&self, b: usize, started: Instant) {
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.positions.fetch_add(b as u64, Ordering::Relaxed);
        self.busy_nanos.fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    /// The network on inputs already on the device in its precision: `(logits, values)`.
    fn run_backend(&self, board: Board, p: Tensor, g: Tensor) -> Result<(Tensor, Tensor), String> {
        match &self.backend {
            Backend::Net(net) => net.forward(&p, &g, board.rings()),
            Backend::Script(module) => {
                pair(module.forward_is(&[IValue::Tensor(p), IValue::Tensor(g)]))
            }
            Backend::Aoti(package) => package.run(board.rings(), &p, &g),
        }
    }

    /// What a CUDA graph records: the network on f32 inputs on the device, converted to its
    /// precision, for a board known in advance (the engine's layers; TorchScript's `evaluate` method, which does not
    /// read the board from the input as `forward` does; a package's model of the board).
    fn evaluate_fixed(
        &self,
        board: Board,
        planes: &Tensor,
        globals: &Tensor,
    ) -> Result<(Tensor, Tensor), String> {
        let kind = kind_of(self.precision);
        let convert = |t: &Tensor| t.f_to_kind(kind).map_err(|e| first_line(&e));
        let (p, g) = (convert(planes)?, convert(globals)?);
        tch::no_grad(|| match &self.backend {
            Backend::Net(net) => net.forward(&p, &g, board.rings()),
            Backend::Script(module) => {
                let rings = IValue::Int(board.rings() as i64);
                pair(module.method_is("evaluate", &[IValue::Tensor(p), IValue::Tensor(g), rings]))
                    .map_err(|e| {
                        format!(
                            "{e} (files exported before CUDA graphs lack evaluate(): export again)"
                        )
                    })
            }
            // (Refused by enable_cuda_graphs; run as without graphs.)
            Backend::Aoti(_) => self.run_backend(board, p, g),
        })
    }

    /// A host buffer from the pool (a new one, or one grown, when none is large enough) holding
    /// `planes` then `globals`.
    fn stage(&self, planes: &[f32], globals: &[f32]) -> Staging {
        let staging = self.pooled(&self.staging, planes.len() + globals.len(), Kind::Float);
        let dst = staging.host.data_ptr().cast::<f32>();
        // SAFETY: `host` is a contiguous CPU tensor of `capacity >= need` f32s that this pass
        // alone holds (taken from the pool under its lock, returned only after the device has
        // read it), so the two copies write inside it and nothing reads or writes it meanwhile.
        #[allow(unsafe_code)]
        unsafe {
            std::ptr::copy_nonoverlapping(planes.as_ptr(), dst, planes.len());
            std::ptr::copy_nonoverlapping(globals.as_ptr(), dst.add(planes.len()), globals.len());
        }
        staging
    }

    /// `masks` packed into bits (eight actions a byte: [`pack_masks`]) in a pinned host buffer
    /// of bytes from the pool (`bytes`: `masks.len()` / 8, rounded up), and how many actions
    /// are legal.
    fn packed_masks(&self, masks: &[bool], bytes: usize) -> (Staging, usize) {
        debug_assert_eq!(bytes, masks.len().div_ceil(8));
        let buffer = self.pooled(&self.answers, bytes.max(1), Kind::Uint8);
        let ptr = buffer.host.data_ptr().cast::<u8>();
        // SAFETY: a contiguous CPU tensor of at least `bytes` bytes that this pass alone holds
        // (taken from the pool under its lock).
        #[allow(unsafe_code)]
        let out = unsafe { std::slice::from_raw_parts_mut(ptr, bytes) };
        let k = pack_masks(masks, out);
        (buffer, k)
    }

    /// A host buffer of at least `need` numbers of `kind` (pinned on a GPU's host) from `pool`,
    /// or a new one, grown in powers of two so that a few sizes serve every batch. A pass holds
    /// it alone until it gives it back.
    fn pooled(&self, pool: &Mutex<Vec<Staging>>, need: usize, kind: Kind) -> Staging {
        let mut buffers = pool.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = buffers.iter().position(|s| s.capacity >= need && s.host.kind() == kind) {
            return buffers.swap_remove(i);
        }
        drop(buffers);
        let capacity = need.next_power_of_two();
        let host = Tensor::zeros([capacity as i64], (kind, Device::Cpu));
        // Pinned on a GPU's host, for asynchronous copies; pageable memory if that fails.
        let host = match self.device.is_cuda() {
            true => graphs::pin_memory(&host).unwrap_or(host),
            false => host,
        };
        Staging { host, capacity }
    }

    /// Returns a host buffer to the pool.
    fn unstage(&self, staging: Staging) {
        self.staging.lock().unwrap_or_else(|e| e.into_inner()).push(staging);
    }

    /// Refuses NaN and infinite answers (see [`Model::forward_masked`]).
    fn check_finite(
        &self,
        logits: &[f32],
        values: &[f32],
        masks: Option<&[bool]>,
        actions: usize,
    ) -> Result<(), ModelError> {
        let wrong = |i: usize, l: f32| match masks {
            Some(m) => m[i] && !l.is_finite(),
            None => l.is_nan() || l == f32::INFINITY,
        };
        let bad_logit = logits.iter().enumerate().position(|(i, &l)| wrong(i, l));
        self.check_finite_at(values, bad_logit.map(|i| (i, logits[i])), actions, masks.is_some())
    }

    /// Refuses NaN and infinite values, and the logit `bad_logit` if any (its flat index in
    /// `[b, A]` and its value).
    fn check_finite_at(
        &self,
        values: &[f32],
        bad_logit: Option<(usize, f32)>,
        actions: usize,
        legal: bool,
    ) -> Result<(), ModelError> {
        let b = values.len();
        let bad = |what: String| ModelError::NonFinite { path: self.path.clone(), what };
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(bad(format!("values ({} for position {i} of {b})", values[i])));
        }
        if let Some((i, logit)) = bad_logit {
            let legal = if legal { "legal " } else { "" };
            return Err(bad(format!(
                "logits ({logit} for {legal}action {} of position {} of {b})",
                i % actions,
                i / actions
            )));
        }
        Ok(())
    }
}
