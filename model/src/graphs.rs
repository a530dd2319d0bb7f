//! CUDA graphs for forward passes on a GPU (`--cuda-graphs`).
//!
//! A network of many small kernels spends much of a GPU pass launching them. A CUDA graph
//! records the kernels of one pass once and launches them all at the price of one. A graph is
//! captured per board and *bucket* of batch sizes ([`BUCKETS`]): a batch runs in the smallest
//! bucket that holds it, its rows copied into the graph's fixed input tensors (f32, converted to
//! the model's precision inside the graph), and the first rows of the graph's fixed outputs are
//! its answers (the padding rows are computed and ignored: every row of the network is
//! independent of the others). Batches larger than the largest bucket run without a graph.
//!
//! Each pass takes a [`Lane`] from the pool: a CUDA stream of its own and the graphs captured on
//! it. Concurrent passes (several inference threads) thus run on distinct streams, and the copy
//! in, the replay and the copy out of a pass are ordered on its stream. A graph is captured the
//! first time its lane meets its bucket, after three passes that warm the network up
//! (TorchScript's executor optimises a method on its first calls); captures are thread-local, so
//! the other lanes go on meanwhile. The first passes of a job are therefore slower.
//!
//! Network files run the engine's layers for the board; trusted TorchScript files run their
//! `evaluate(planes, globals, rings)` method, which reads nothing of
//! its input on the host (`forward` reads the board from plane 0, a synchronisation that a graph
//! cannot hold); packages run their board's model.

#![allow(unsafe_code)]

use std::collections::HashMap;
use std::ffi::c_int;
use std::ptr;
use std::sync::Mutex;
use std::time::Instant;

use tch::Tensor;

use crate::shim::{
    self, Graph, Stream, check, take, zertz_graph_begin, zertz_graph_end, zertz_graph_free,
    zertz_graph_new, zertz_graph_replay, zertz_stream_enter, zertz_stream_exit, zertz_stream_free,
    zertz_stream_new, zertz_stream_synchronize,
};

/// The batch sizes graphs are captured for: powers of two and the halves between them, so that
/// a batch pads at most a third of its size.
pub const BUCKETS: [usize; 22] = [
    1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072,
    4096,
];

/// Passes run before a capture.
const WARM_UP: usize = 3;

/// The most lanes on one device in the process: libtorch's pool has 32 streams per device and
/// priority and hands them out in turn, and two lanes on one stream would record into each
/// other's captures. Passes past it run without graphs.
const MAX_LANES: usize = 32;

/// Lanes alive, per device.
static LANES: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// The smallest bucket that holds `b` positions, if any.
pub fn bucket(b: usize) -> Option<usize> {
    BUCKETS.iter().copied().find(|&x| x >= b)
}

/// A pinned (page-locked) host copy of `src`, for asynchronous copies to a GPU.
pub(crate) fn pin_memory(src: &Tensor) -> Result<Tensor, String> {
    let (mut out, mut err) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: a live tensor; the shim catches every exception and hands over a new tensor.
    check(unsafe { shim::zertz_pin_memory(src.as_ptr(), &mut out, &mut err) }, err)?;
    // SAFETY: `out` is a tensor the shim allocated for us, owned from here on.
    Ok(unsafe { Tensor::from_ptr(out) })
}

/// An asynchronous copy of `src` into `dst` on the calling thread's current stream.
pub(crate) fn copy_async(dst: &mut Tensor, src: &Tensor) -> Result<(), String> {
    let mut err = ptr::null_mut();
    // SAFETY: two live tensors; the shim catches every exception.
    check(unsafe { shim::zertz_copy_async(dst.as_mut_ptr(), src.as_ptr(), &mut err) }, err)
}

/// Waits for the work queued on the calling thread's current stream of CUDA device `device` (a
/// lane's, when one is entered). Not the whole device: another thread may be capturing a graph
/// on its own stream, and a device-wide synchronisation would break that capture.
pub(crate) fn synchronize_current(device: usize) -> Result<(), String> {
    let mut err = ptr::null_mut();
    // SAFETY: the shim catches every exception.
    check(unsafe { shim::zertz_current_stream_synchronize(device as c_int, &mut err) }, err)
}

/// A CUDA stream of libtorch's pool, and the memory pool of the graphs captured on it.
pub(crate) struct CudaStream(*mut Stream);

// SAFETY: a stream handle may be used from any thread (one at a time: lanes are taken from a
// pool under its lock), and is freed once, on drop.
unsafe impl Send for CudaStream {}

impl CudaStream {
    fn new(device: usize) -> Result<CudaStream, String> {
        let mut err = ptr::null_mut();
        // SAFETY: the shim catches every exception and returns null with a message.
        let s = unsafe { zertz_stream_new(device as c_int, &mut err) };
        if s.is_null() { Err(take(err).unwrap_or_default()) } else { Ok(CudaStream(s)) }
    }

    /// Makes this stream (and its device) the calling thread's current one until the guard
    /// drops.
    pub(crate) fn enter(&self) -> Result<Entered, String> {
        let mut err = ptr::null_mut();
        // SAFETY: a live stream; the shim catches every exception. The guard is made whatever
        // happened, so that exiting puts back what entering changed.
        let entered = unsafe { zertz_stream_enter(self.0, &mut err) };
        let guard = Entered(self.0);
        check(entered, err).map(|()| guard)
    }

    fn synchronize(&self) -> Result<(), String> {
        let mut err = ptr::null_mut();
        // SAFETY: a live stream.
        check(unsafe { zertz_stream_synchronize(self.0, &mut err) }, err)
    }
}

impl Drop for CudaStream {
    fn drop(&mut self) {
        // SAFETY: freed once.
        unsafe { zertz_stream_free(self.0) }
    }
}

/// While it lives, the thread runs its CUDA work on a lane's stream. Dropped before its lane.
pub(crate) struct Entered(*mut Stream);

impl Drop for Entered {
    fn drop(&mut self) {
        // SAFETY: the stream outlives the guard (see `Model::run_timed`).
        unsafe { zertz_stream_exit(self.0) }
    }
}

/// Held while a graph is captured and while one is freed. Each capture registers its graph
/// with the device's default CUDA generator, and freeing it unregisters it; libtorch keeps those
/// graphs in a set of the generator's state without a lock (`CUDAGeneratorState::
/// register_graph`, `unregister_graph`), so that captures on several inference threads at once
/// could lose a registration, and the graph's destructor then aborted the process ("The graph
/// should be registered to the state": self-play on an H200, four inference threads). Captures
/// happen once per lane and bucket, so that waiting for each other costs little.
static GENERATOR: Mutex<()> = Mutex::new(());

/// A captured CUDA graph.
struct CudaGraph(*mut Graph);

// SAFETY: as for CudaStream.
unsafe impl Send for CudaGraph {}

impl CudaGraph {
    fn new() -> Result<CudaGraph, String> {
        let mut err = ptr::null_mut();
        // SAFETY: the shim catches every exception and returns null with a message.
        let g = unsafe { zertz_graph_new(&mut err) };
        if g.is_null() { Err(take(err).unwrap_or_default()) } else { Ok(CudaGraph(g)) }
    }

    fn call(
        &self,
        f: unsafe extern "C" fn(*mut Graph, *mut *mut std::ffi::c_char) -> c_int,
    ) -> Result<(), String> {
        let mut err = ptr::null_mut();
        // SAFETY: a live graph; the shim catches every exception.
        check(unsafe { f(self.0, &mut err) }, err)
    }
}

impl Drop for CudaGraph {
    fn drop(&mut self) {
        let _generator = GENERATOR.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: freed once.
        unsafe { zertz_graph_free(self.0) }
    }
}

/// A capture under way: ended on drop if not before.
struct Capturing<'a> {
    graph: &'a CudaGraph,
    ended: bool,
}

impl Capturing<'_> {
    fn end(mut self) -> Result<(), String> {
        self.ended = true;
        self.graph.call(zertz_graph_end)
    }
}

impl Drop for Capturing<'_> {
    fn drop(&mut self) {
        if !self.ended {
            let _ = self.graph.call(zertz_graph_end);
        }
    }
}

/// One captured pass: the graph and its fixed input and output tensors.
struct Captured {
    graph: CudaGraph,
    planes: Tensor,
    globals: Tensor,
    logits: Tensor,
    values: Tensor,
}

/// A stream and the graphs captured on it, by board (ring count) and bucket.
pub(crate) struct Lane {
    pub(crate) stream: CudaStream,
    device: usize,
    _counted: Counted,
    graphs: HashMap<(usize, usize), Captured>,
}

impl Lane {
    /// Runs `b` positions whose planes `[b, C, H, W]` and globals `[b, G]` (f32, on the host,
    /// pinned) are given, in the graph of `rings` and the bucket of `b`. The first time, the
    /// graph is captured from `network`, which runs the network on f32 inputs on the device
    /// (converting them to the model's precision). The answers are views of the graph's fixed
    /// outputs, valid until this lane runs again, with the time the copy in ended (after `wait`,
    /// which synchronises the device for benchmarks). Call it with the lane's stream entered.
    pub(crate) fn run(
        &mut self,
        rings: usize,
        planes: &Tensor,
        globals: &Tensor,
        network: impl Fn(&Tensor, &Tensor) -> Result<(Tensor, Tensor), String>,
        wait: impl Fn() -> Result<(), String>,
    ) -> Result<(Instant, (Tensor, Tensor)), String> {
        let b = planes.size()[0];
        let size = bucket(b as usize).ok_or_else(|| format!("no graph holds {b} positions"))?;
        let key = (rings, size);
        if !self.graphs.contains_key(&key) {
            let on = (tch::Kind::Float, tch::Device::Cuda(self.device));
            let mut dims = planes.size();
            dims[0] = size as i64;
            let fixed_planes = Tensor::zeros(dims.as_slice(), on);
            let fixed_globals = Tensor::zeros([size as i64, globals.size()[1]], on);
            // Warm-up, then the capture, all on this lane's stream.
            for _ in 0..WARM_UP {
                let _warm = network(&fixed_planes, &fixed_globals)?;
            }
            self.stream.synchronize()?;
            let graph = CudaGraph::new()?;
            // (Released before `graph` can be dropped below, which takes it again.)
            let generator = GENERATOR.lock().unwrap_or_else(|e| e.into_inner());
            let mut err = ptr::null_mut();
            // SAFETY: a live graph and the lane's live stream, entered by the caller.
            check(unsafe { zertz_graph_begin(graph.0, self.stream.0, &mut err) }, err)?;
            // The capture ends whatever happens inside it, a panic included: a stream left
            // capturing would fail every later pass on it.
            let capturing = Capturing { graph: &graph, ended: false };
            let outputs = network(&fixed_planes, &fixed_globals);
            let ended = capturing.end();
            drop(generator);
            let (logits, values) = outputs?;
            ended?;
            self.graphs.insert(
                key,
                Captured { graph, planes: fixed_planes, globals: fixed_globals, logits, values },
            );
        }
        let c = self.graphs.get_mut(&key).expect("captured above");
        copy_async(&mut c.planes.narrow(0, 0, b), planes)?;
        copy_async(&mut c.globals.narrow(0, 0, b), globals)?;
        wait()?;
        let copied_in = Instant::now();
        c.graph.call(zertz_graph_replay)?;
        Ok((copied_in, (c.logits.narrow(0, 0, b), c.values.narrow(0, 0, b))))
    }
}

/// One lane in [`LANES`], while it lives.
struct Counted(usize);

impl Drop for Counted {
    fn drop(&mut self) {
        let mut lanes = LANES.lock().unwrap_or_else(|e| e.into_inner());
        lanes[self.0] -= 1;
    }
}

/// The lanes of one model on one CUDA device.
pub(crate) struct Graphs {
    device: usize,
    lanes: Mutex<Vec<Lane>>,
}

impl Graphs {
    pub(crate) fn new(device: usize) -> Graphs {
        Graphs { device, lanes: Mutex::new(Vec::new()) }
    }

    /// A lane of the pool, or a new one; `None` when the device has [`MAX_LANES`] already (the
    /// pass then runs without graphs).
    pub(crate) fn take(&self) -> Result<Option<Lane>, String> {
        if let Some(lane) = self.lanes.lock().unwrap_or_else(|e| e.into_inner()).pop() {
            return Ok(Some(lane));
        }
        {
            let mut lanes = LANES.lock().unwrap_or_else(|e| e.into_inner());
            if lanes.len() <= self.device {
                lanes.resize(self.device + 1, 0);
            }
            if lanes[self.device] >= MAX_LANES {
                return Ok(None);
            }
            lanes[self.device] += 1;
        }
        // Counted from here: dropping the lane (or the stream, if that fails) gives it back.
        let counted = Counted(self.device);
        let stream = CudaStream::new(self.device)?;
        Ok(Some(Lane { stream, device: self.device, graphs: HashMap::new(), _counted: counted }))
    }

    /// Gives a lane back to the pool.
    pub(crate) fn put(&self, lane: Lane) {
        self.lanes.lock().unwrap_or_else(|e| e.into_inner()).push(lane);
    }
}
