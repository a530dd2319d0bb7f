//! What the end-to-end tests of the `zertz` program share: running it (with a deadline), its
//! output as text, and a fresh folder for each test.

#![allow(dead_code)] // each test binary uses its own part

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The program under test.
pub const ZERTZ: &str = env!("CARGO_BIN_EXE_zertz");

/// Seconds a test waits for what must end at once (a refusal, a stop) before it fails: only a
/// command that never ends takes that long, however busy the machine (`zertz` alone takes a
/// while to start there: it loads libtorch).
pub const NEVER: u64 = 60;

/// Runs `zertz ARGS` to its end.
pub fn zertz<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(ZERTZ).args(args).output().expect("zertz runs")
}

/// Runs `zertz` with a deadline: a command that blocks (opening a FIFO, say) is killed and fails
/// the test instead of hanging it.
pub fn zertz_within<S: AsRef<OsStr> + std::fmt::Debug>(args: &[S], secs: u64) -> Output {
    wait_within(spawn(args), secs, &format!("{args:?}"))
}

/// Starts `zertz ARGS` without input, its output piped.
pub fn spawn<S: AsRef<OsStr>>(args: &[S]) -> Child {
    Command::new(ZERTZ)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("zertz runs")
}

/// Waits for `child` (`what` runs in it), killed (and the test failed) past `secs` seconds.
pub fn wait_within(mut child: Child, secs: u64, what: &str) -> Output {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if child.try_wait().expect("zertz can be waited for").is_some() {
            return child.wait_with_output().expect("zertz's output");
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("zertz {what} still runs after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exactly one line on stderr, for any failure.
pub fn assert_one_line(o: &Output) {
    let err = stderr(o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{err}");
}

/// A command line refused by clap before anything runs: status 2 and one `error:` line, nothing
/// more (clap's usage and `--help` hint are not printed); that line.
pub fn usage_error(o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let first = err.lines().next().unwrap_or_default().to_string();
    assert!(first.starts_with("error: "), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{err}");
    first
}

/// A fresh, empty temporary folder for one test (of this test binary: `name` tells them apart).
pub fn temp_dir(name: &str) -> PathBuf {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let dir = std::env::temp_dir().join(format!("zertz-{binary}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
