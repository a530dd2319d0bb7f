//! How a failure is reported, decided once per error type beside the type itself: every front
//! reads the [`ErrorClass`] instead of sorting errors again. The `zertz` program's exit status
//! follows from [`ErrorClass::while_working`] (1 for a failure while working, 2 for a refusal),
//! and the Python bindings' exception class from [`Cause`] (`ValueError`, the `OSError` of the
//! I/O error's kind, `RuntimeError`, `KeyboardInterrupt`).
//!
//! ```
//! use zertz_env::{Cause, ErrorClass};
//! let class = ErrorClass::refused(Cause::Invalid);
//! assert!(!class.while_working);
//! assert_eq!(ErrorClass::during(Cause::Stopped).cause, Cause::Stopped);
//! ```

use std::io::ErrorKind;

/// What kind of failure an error is, and whether the work had begun.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorClass {
    /// What failed.
    pub cause: Cause,
    /// Whether the work had begun: a failure while working (a network that fails, a disk that
    /// fills, a stop) rather than input refused before anything was done.
    pub while_working: bool,
}

impl ErrorClass {
    /// Refused before any work began.
    pub const fn refused(cause: Cause) -> ErrorClass {
        ErrorClass { cause, while_working: false }
    }

    /// Failed while working.
    pub const fn during(cause: Cause) -> ErrorClass {
        ErrorClass { cause, while_working: true }
    }
}

/// What failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// Input that cannot be used: an argument, a setting, a file's content, a wrong answer of the
    /// caller's evaluator (Python: `ValueError`).
    Invalid,
    /// A file or folder that cannot be read, written or created (Python: the `OSError` subclass
    /// of the kind, `FileNotFoundError`, `FileExistsError`, ...).
    Io(ErrorKind),
    /// The machine failed the work: a network's answer, a device, a thread pool that cannot
    /// start (Python: `RuntimeError`).
    Failed,
    /// Stopped by its stop flag (Ctrl-C; Python: `KeyboardInterrupt`).
    Stopped,
}

/// An error that says how it is reported.
pub trait Classify {
    /// This error's class.
    fn class(&self) -> ErrorClass;
}
