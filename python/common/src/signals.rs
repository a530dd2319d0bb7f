//! Ctrl-C in long calls: the work runs with the GIL released, and the thread that Python called
//! from asks Python now and then whether a signal handler raised.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

use crate::error::{Error, guard};

/// How often long calls look for a signal (Ctrl-C) while the GIL is released.
pub const SIGNAL_CHECK: Duration = Duration::from_millis(20);

/// Asks Python whether a signal handler raised (Ctrl-C: `KeyboardInterrupt`), at most once per
/// [`SIGNAL_CHECK`]; keeps the exception. Called with the GIL released, from the thread that
/// called in from Python (only the main thread runs signal handlers).
#[derive(Debug)]
pub struct Signals {
    last: Instant,
    /// The exception a handler raised, kept.
    pub raised: Option<PyErr>,
}

impl Default for Signals {
    fn default() -> Signals {
        Signals { last: Instant::now(), raised: None }
    }
}

impl Signals {
    /// No signal yet; the first check may come at once.
    pub fn new() -> Signals {
        Signals::default()
    }

    /// Whether to stop: a handler raised, now or before.
    pub fn raised(&mut self) -> bool {
        if self.raised.is_none() && self.last.elapsed() >= SIGNAL_CHECK {
            self.last = Instant::now();
            self.raised = Python::attach(|py| py.check_signals().err());
        }
        self.raised.is_some()
    }
}

/// Runs `job` on a thread of its own while this thread, which Python called from, waits with the
/// GIL released and looks for a signal (Ctrl-C), setting `stop` when one comes. Returns the
/// job's result (a panic becomes [`Error::Internal`]) and the signal's exception, if any.
pub fn run_detached<T: Send>(
    py: Python<'_>,
    stop: &AtomicBool,
    job: impl FnOnce() -> Result<T, Error> + Send,
) -> (Result<T, Error>, Option<PyErr>) {
    let mut signals = Signals::new();
    let result = py.detach(|| watch(&mut signals, stop, job));
    (result, signals.raised.take())
}

/// Runs `job` on a thread of its own while this thread (the one Python called from, with the GIL
/// released) looks for a signal in `signals`, setting `stop` when one comes; the job's result (a
/// panic becomes [`Error::Internal`]). [`run_detached`] for a caller already detached.
pub fn watch<T: Send>(
    signals: &mut Signals,
    stop: &AtomicBool,
    job: impl FnOnce() -> Result<T, Error> + Send,
) -> Result<T, Error> {
    std::thread::scope(|scope| {
        // The runner says when it is done, so that a short job is not held to the next check (a
        // player's quick decision).
        let (done, finished) = std::sync::mpsc::channel::<()>();
        let runner = scope.spawn(move || {
            let result = guard(job);
            let _ = done.send(());
            result
        });
        while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            finished.recv_timeout(SIGNAL_CHECK)
        {
            if signals.raised() {
                stop.store(true, Ordering::Relaxed);
            }
        }
        runner.join().unwrap_or_else(|payload| Err(Error::internal(payload.as_ref())))
    })
}
