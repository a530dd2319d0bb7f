//! The games kept for every browser ([`Games`]): each browser's own quota, the processes of
//! programs, and which game goes when a limit is reached.
//!
//! - A browser at its quota ([`Limits::client_games`]) loses its own game left alone longest;
//!   a game left alone for [`Limits::idle_game`] goes; past [`Limits::games`] for all browsers a
//!   new game is refused. A browser's games never go because of another browser.
//! - A program (`cmd:`) is a process for each of its bots: a game reserves its processes
//!   before they start ([`Games::reserve_programs`]) and frees them once the game is dropped and
//!   its processes have ended, so that no more than [`Limits::programs`] run at once.
//!
//! A game is behind an asynchronous lock taken without waiting ([`Games::lock`]): a request on a
//! game whose bot is thinking is answered at once (409), and holds no thread while it waits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use axum::http::StatusCode;
use tokio::sync::{OwnedMutexGuard, OwnedSemaphorePermit, Semaphore};

use crate::guard::{ApiError, Client};
use crate::session::GameSession;
use crate::settings::Limits;
use crate::token::new_token;

/// A kept game: the session, and the processes it holds (freed after the session is dropped,
/// so after its programs have ended).
pub struct Kept {
    /// The game.
    pub session: GameSession,
    /// The processes of its programs, reserved.
    _programs: Option<OwnedSemaphorePermit>,
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept").field("session", &self.session).finish_non_exhaustive()
    }
}

/// A kept game behind its lock.
pub type Cell = tokio::sync::Mutex<Kept>;

/// A kept game, locked for one request.
pub type Locked = OwnedMutexGuard<Kept>;

#[derive(Debug)]
struct Entry {
    cell: Arc<Cell>,
    client: Client,
    used: Instant,
    programs: usize,
}

/// Games that left the table (evicted, or every game at the end), to be dropped where a
/// blocking wait is allowed: dropping a program's player waits for its process to end.
#[derive(Debug, Default)]
#[must_use = "drop it on a blocking thread"]
pub struct Dropped(Vec<Arc<Cell>>);

impl Dropped {
    /// Drops the games on a blocking thread (now, if there are none to drop).
    pub async fn drop_off_thread(self) {
        if !self.0.is_empty() {
            let _ = tokio::task::spawn_blocking(move || drop(self)).await;
        }
    }

    /// Whether there is nothing to drop.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The games of every browser.
#[derive(Debug)]
pub struct Games {
    entries: Mutex<HashMap<String, Entry>>,
    programs: Arc<Semaphore>,
    limits: Limits,
}

impl Games {
    /// No games yet, with these limits.
    pub fn new(limits: &Limits) -> Games {
        Games {
            entries: Mutex::new(HashMap::new()),
            programs: Arc::new(Semaphore::new(limits.programs)),
            limits: limits.clone(),
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reserves `n` processes for a new game of `client` (none for `n` = 0). When every process
    /// is taken, the client's own games with programs left alone longest are dropped (and their
    /// processes waited for) to make room; an error (503) when that is not enough.
    pub async fn reserve_programs(
        &self,
        client: &Client,
        n: usize,
    ) -> Result<Option<OwnedSemaphorePermit>, ApiError> {
        if n == 0 {
            return Ok(None);
        }
        let refused = || {
            ApiError::busy(format!(
                "the server runs {} programs already (its limit): end one of your games \
                 with a program, or try again later",
                self.limits.programs
            ))
        };
        let n32 = u32::try_from(n).map_err(|_| refused())?;
        loop {
            if let Ok(permit) = self.programs.clone().try_acquire_many_owned(n32) {
                return Ok(Some(permit));
            }
            let dropped = {
                let mut entries = self.entries();
                let oldest = entries
                    .iter()
                    .filter(|(_, e)| e.programs > 0 && e.client == *client)
                    .min_by_key(|(_, e)| e.used)
                    .map(|(k, _)| k.clone());
                match oldest.and_then(|k| entries.remove(&k)) {
                    Some(e) => Dropped(vec![e.cell]),
                    None => return Err(refused()),
                }
            };
            dropped.drop_off_thread().await;
        }
    }

    /// Whether `client` may start a new game now: a quick check before its bots start (the
    /// limits are enforced again when it is kept).
    pub fn check_room(&self, client: &Client) -> Result<(), ApiError> {
        let entries = self.entries();
        let own = entries.values().filter(|e| e.client == *client).count();
        // A client at its own quota makes room by losing its own oldest game.
        if entries.len() >= self.limits.games && own < self.limits.client_games {
            return Err(self.full());
        }
        Ok(())
    }

    fn full(&self) -> ApiError {
        ApiError::busy(format!(
            "the server keeps {} games already (its limit): try again later",
            self.limits.games
        ))
    }

    /// Keeps `session` for `client` with its reserved processes; its new id, and the games that
    /// went to make room (the client's own left alone longest, and games left alone too long).
    /// An error (503) when all browsers' games together are at the limit and none of them may
    /// go; the session is then handed back to be dropped.
    pub fn insert(
        &self,
        client: &Client,
        session: GameSession,
        programs: Option<OwnedSemaphorePermit>,
    ) -> Result<(String, Dropped), (ApiError, Dropped)> {
        let count = session.programs();
        let cell = Arc::new(tokio::sync::Mutex::new(Kept { session, _programs: programs }));
        let id = match new_token() {
            Ok(id) => id,
            Err(e) => {
                let error = ApiError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("no random bytes for a game id: {e}"),
                );
                return Err((error, Dropped(vec![cell])));
            }
        };
        let mut dropped = Vec::new();
        let mut entries = self.entries();
        let now = Instant::now();
        let idle: Vec<String> = entries
            .iter()
            .filter(|(_, e)| now.duration_since(e.used) >= self.limits.idle_game)
            .map(|(k, _)| k.clone())
            .collect();
        dropped.extend(idle.iter().filter_map(|k| entries.remove(k)).map(|e| e.cell));
        loop {
            let own: Vec<(&String, &Entry)> =
                entries.iter().filter(|(_, e)| e.client == *client).collect();
            if own.len() < self.limits.client_games {
                break;
            }
            let oldest = own.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| (*k).clone());
            dropped.extend(oldest.and_then(|k| entries.remove(&k)).map(|e| e.cell));
        }
        if entries.len() >= self.limits.games {
            dropped.push(cell);
            return Err((self.full(), Dropped(dropped)));
        }
        let entry = Entry { cell, client: client.clone(), used: now, programs: count };
        entries.insert(id.clone(), entry);
        Ok((id, Dropped(dropped)))
    }

    /// The game `id`, locked for one request, and marked as used; 404 when there is none, 409
    /// while another request has it (its bot is thinking).
    pub fn lock(&self, id: &str) -> Result<Locked, ApiError> {
        let cell = {
            let mut entries = self.entries();
            match entries.get_mut(id) {
                Some(e) => {
                    e.used = Instant::now();
                    e.cell.clone()
                }
                None => {
                    return Err(ApiError::new(
                        StatusCode::NOT_FOUND,
                        format!("no game {id:?} (it ended long ago, or the server restarted)"),
                    ));
                }
            }
        };
        cell.try_lock_owned().map_err(|_| {
            ApiError::new(
                StatusCode::CONFLICT,
                "the game is busy: a bot is thinking, try again when it has moved",
            )
        })
    }

    /// How many games are kept.
    pub fn len(&self) -> usize {
        self.entries().len()
    }

    /// Whether no game is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every game, taken out of the table (when the server stops).
    pub fn take_all(&self) -> Dropped {
        Dropped(self.entries().drain().map(|(_, e)| e.cell).collect())
    }
}
