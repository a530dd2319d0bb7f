//! Searches at once ([`Searches`]): a few run ([`Limits::searches`]), a few more wait in line
//! ([`Limits::search_queue`]), and the rest are answered 503 at once, so that the memory of the
//! searches (each in a tree of at most [`Limits::tree_bytes`]) stays bounded whatever the number
//! of requests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::guard::ApiError;
use crate::settings::Limits;

/// The right to run one search; the next one may start once it is dropped.
pub type SearchSlot = OwnedSemaphorePermit;

/// The searches running and waiting.
#[derive(Debug)]
pub struct Searches {
    running: Arc<Semaphore>,
    waiting: AtomicUsize,
    max: usize,
    queue: usize,
}

/// Counts a request in line for as long as it waits.
struct InLine<'a>(&'a AtomicUsize);

impl Drop for InLine<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Searches {
    /// No search yet, with these limits.
    pub fn new(limits: &Limits) -> Searches {
        Searches {
            running: Arc::new(Semaphore::new(limits.searches)),
            waiting: AtomicUsize::new(0),
            max: limits.searches,
            queue: limits.search_queue,
        }
    }

    /// A slot for one search: at once when one is free, after the searches ahead when the line
    /// has room, else an error (503).
    pub async fn slot(&self) -> Result<SearchSlot, ApiError> {
        if let Ok(slot) = self.running.clone().try_acquire_owned() {
            return Ok(slot);
        }
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.queue {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(ApiError::busy(format!(
                "the server is busy: {} searches run and {} wait; try again in a moment",
                self.max, self.queue
            )));
        }
        let _in_line = InLine(&self.waiting);
        self.running
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| ApiError::busy("the server is stopping"))
    }
}
