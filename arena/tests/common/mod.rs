//! What the tests of players share: programs (shell scripts) that hang as broken engines do, a
//! check that a process they started has ended, a player that checks every action it chooses,
//! and a stop set part-way through a match.

#![allow(dead_code)] // each test binary uses its own part

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use zertz_arena::players::{Bot, BotError, PlayerSpec, WorkUnit};
use zertz_env::{Action, Position};

/// A program that answers `name` and `newgame`, then runs `genmove` as given (`sleep 1000`: it
/// thinks forever); it first starts `sleep 1000` of its own and writes that process's pid to
/// `pidfile`.
pub fn hanging(pidfile: &Path, genmove: &str) -> PlayerSpec {
    let body = format!(
        "sleep 1000 & echo $! > '{}'; while read -r line; do case \"$line\" in \
         genmove) {genmove};; name) printf '= fake\\n\\n';; *) printf '=\\n\\n';; esac; done",
        pidfile.display()
    );
    PlayerSpec::Command(vec!["sh".into(), "-c".into(), body])
}

/// A file for a pid, unique to this test process.
pub fn pidfile(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("zertz-{name}-{}.pid", std::process::id()))
}

/// A `genmove` for [`hanging`] that makes the file `marker` (the program has been asked for a
/// move), then thinks forever.
pub fn thinking_forever(marker: &Path) -> String {
    format!("touch '{}'; sleep 1000", marker.display())
}

/// How long a test waits for what must happen at once (a process to end, a file to appear)
/// before it fails: only what never happens takes that long, whatever the machine's load.
pub const NEVER: Duration = Duration::from_secs(60);

/// Waits until `path` exists; fails the test after [`NEVER`].
pub fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + NEVER;
    while !path.exists() {
        assert!(Instant::now() < deadline, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether the process whose pid `pidfile` holds has ended (gone, or a zombie waiting for init)
/// within [`NEVER`].
pub fn ended(pidfile: &Path) -> bool {
    let pid = std::fs::read_to_string(pidfile).unwrap().trim().to_string();
    let deadline = Instant::now() + NEVER;
    while Instant::now() < deadline {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.rsplit(')').next().is_some_and(|s| s.trim().starts_with('Z')) => {
                return true;
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    false
}

/// Wraps a player and checks every action it chooses.
pub struct Checked(pub Box<dyn Bot>);

impl Bot for Checked {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, BotError> {
        let a = self.0.choose(pos)?;
        assert!(pos.is_legal_action(&a), "{} chose {a:?} in {}", self.name(), pos.to_text());
        Ok(a)
    }

    fn observe(&mut self, before: &Position, action: &Action) {
        self.0.observe(before, action);
    }

    fn work(&self) -> Option<(WorkUnit, u64)> {
        self.0.work()
    }
}

/// Runs `run` with a stop flag that is set `delay` after it starts (on a thread of its own), as
/// Ctrl-C sets a match's. (A moment drawn, not an event awaited: what the stop finds under way
/// depends on the machine's speed; see [`stopped_when_file`].)
pub fn stopped_after<T>(
    delay: Duration,
    run: impl FnOnce(&std::sync::atomic::AtomicBool) -> T,
) -> T {
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(delay);
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        run(&stop)
    })
}

/// Runs `run` with a stop flag that is set once `marker` exists (on a thread of its own; a file
/// that never appears fails the test after [`NEVER`]), as Ctrl-C sets a match's.
pub fn stopped_when_file<T>(
    marker: &Path,
    run: impl FnOnce(&std::sync::atomic::AtomicBool) -> T,
) -> T {
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            wait_for_file(marker);
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        run(&stop)
    })
}
