//! Players behind another program that speaks the engine protocol ([`crate::protocol`]):
//! `cmd:PROGRAM ARGS`, so that two versions of this engine, or other engines, meet in a match.
//!
//! Why one file of this size: one client of the engine protocol, whose process handling, limits and
//! replies are only right together.
//!
//! A [`CommandBot`] starts its program with piped standard input and output (its standard error
//! goes where the caller's does), checks that it answers `name`, and then follows the game:
//!
//! - the first position it sees starts a game there with `newgame BOARD [blitz]`;
//! - the opponent's actions are sent with `play ACTION` as [`Bot::observe`] hears of them;
//! - [`Bot::choose`] sends `setposition TEXT` first when the program's position is not the
//!   game's (a game that starts from an opening, an undo), then `genmove`; the answer is a whole
//!   move, whose first action is returned and whose other hops (a capture chain) are returned by
//!   the following calls without asking again. The program has played them already, so they are
//!   not sent back when they are observed.
//!
//! A program that ends, breaks the protocol, refuses a command (`? ...`) or answers an illegal
//! move fails with [`BotError::Engine`], with what it said. Every answer is held to
//! [`ProgramLimits`]: it must come within a time limit ([`DEFAULT_ANSWER_TIME`] by default) and
//! be at most a size ([`DEFAULT_ANSWER_BYTES`]); past either the player fails with one line
//! saying so, and its program is ended at once. The answers are read on a thread of their own
//! through a short queue, so that a program that floods its output takes no more memory than
//! the limit, and the wait for an answer also ends when the limits' stop flag is set (Ctrl-C in
//! a match).
//!
//! On Unix the program runs in a process group of its own, so that ending it also ends the
//! programs it started (`sh -c ...`, say). Dropping the player sends `quit` and waits a little for
//! the program to end, then kills its group. [`end_all_programs`] kills every program still
//! running, for signal handlers and the end of a process.

use std::collections::{BTreeSet, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use zertz_settings::{Kind, Range};

use zertz_env::{Action, MarbleSet, Player, Position};

use super::{Bot, BotError, SpecError};

/// The longest wait for one answer of a program by default.
pub const DEFAULT_ANSWER_TIME: Duration = Duration::from_secs(30);

/// The largest answer of a program, in bytes, by default: a move, or a few lines of analysis,
/// are far shorter.
pub const DEFAULT_ANSWER_BYTES: usize = 1 << 20;

/// The longest answer time that can be set (a day): longer is a mistake.
pub const MAX_ANSWER_TIME: Duration = Duration::from_secs(86_400);

/// The answer times that can be set, in seconds: more than 0, at most [`MAX_ANSWER_TIME`].
pub const ANSWER_TIME: Range = Range::above(0.0).up_to(MAX_ANSWER_TIME.as_secs_f64());

/// How long a dropped player waits for its program to end after `quit` before killing it.
const QUIT_WAIT: Duration = Duration::from_secs(2);

/// How often a wait for an answer looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(20);

/// Lines of output read ahead of the answer being read: with the line limit, what a program's
/// output can take in memory.
const QUEUED_LINES: usize = 4;

/// What each answer of a program is held to, and the flag that stops a wait for one.
#[derive(Clone, Debug)]
pub struct ProgramLimits {
    /// The longest wait for one answer (at most [`MAX_ANSWER_TIME`]).
    pub answer_time: Duration,
    /// The largest answer, in bytes, its lines together.
    pub answer_bytes: usize,
    /// When set (Ctrl-C), a wait for an answer ends at once with an error and the program is
    /// ended.
    pub stop: Option<Arc<AtomicBool>>,
}

impl Default for ProgramLimits {
    fn default() -> ProgramLimits {
        ProgramLimits {
            answer_time: DEFAULT_ANSWER_TIME,
            answer_bytes: DEFAULT_ANSWER_BYTES,
            stop: None,
        }
    }
}

impl ProgramLimits {
    /// The default limits with `answer_time` (which must be positive and at most
    /// [`MAX_ANSWER_TIME`]: see [`check_answer_time`]).
    pub fn with_answer_time(answer_time: Duration) -> ProgramLimits {
        ProgramLimits { answer_time, ..ProgramLimits::default() }
    }

    fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
    }
}

/// An answer time in seconds, checked: positive, finite and at most [`MAX_ANSWER_TIME`]; the
/// error says what is allowed.
pub fn check_answer_time(seconds: f64) -> Result<Duration, String> {
    match ANSWER_TIME.check(seconds, Kind::Seconds) {
        Ok(()) => Ok(Duration::from_secs_f64(seconds)),
        Err(reason) => Err(format!("a program's answer time {reason}, not {seconds}")),
    }
}

/// The process groups of the programs running now, by the pid of their leader (the program).
static RUNNING: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// Kills every program that a [`CommandBot`] of this process started and that has not been
/// ended yet, with the programs they started (their process groups). For signal handlers
/// (Ctrl-C, SIGTERM) and the end of a process: the players that own them then fail.
pub fn end_all_programs() {
    let running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
    for &pid in running.iter() {
        kill_group(pid);
    }
}

/// Kills the process group led by `pid` (on other systems than Unix, nothing).
fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// The words of a `cmd:` spec: split on whitespace; a double-quoted part may hold whitespace
/// (`"my engine"`), and inside quotes `\"` is a quote and `\\` a backslash (a backslash elsewhere
/// is itself, as in Windows paths). An error says what is wrong.
pub fn split_words(text: &str) -> Result<Vec<String>, &'static str> {
    let mut words = Vec::new();
    let mut word = String::new();
    let (mut in_word, mut quoted) = (false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' => quoted = false,
                '\\' if matches!(chars.peek(), Some('"' | '\\')) => {
                    word.extend(chars.next());
                }
                _ => word.push(c),
            }
        } else if c.is_whitespace() {
            if in_word {
                words.push(std::mem::take(&mut word));
                in_word = false;
            }
        } else {
            in_word = true;
            if c == '"' {
                quoted = true;
            } else {
                word.push(c);
            }
        }
    }
    if quoted {
        return Err("a double quote is not closed");
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Writes words back as [`split_words`] reads them: separated by one space, in double quotes
/// (with `\"` and `\\`) where a word is empty or holds whitespace or a quote.
pub fn join_words(words: &[String]) -> String {
    let mut out = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        if w.is_empty() || w.chars().any(|c| c.is_whitespace() || c == '"') {
            out.push('"');
            for c in w.chars() {
                if c == '"' || c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
        } else {
            out.push_str(w);
        }
    }
    out
}

/// A line of a program's output, or how its output ended, as the reading thread saw it.
enum Output {
    /// A line, its end included.
    Line(Vec<u8>),
    /// A line longer than the answer limit: the reading stopped.
    TooLong,
    /// The output ended (the program closed it, or ended).
    End,
    /// Reading failed.
    Failed(std::io::Error),
}

/// Reads `stdout` line by line on a thread of its own into a queue of [`QUEUED_LINES`] lines of
/// at most `max_line` bytes each; the thread ends with the output, or when the queue's receiver
/// is dropped.
fn read_lines(stdout: ChildStdout, max_line: usize) -> std::io::Result<Receiver<Output>> {
    let (tx, rx) = std::sync::mpsc::sync_channel(QUEUED_LINES);
    std::thread::Builder::new().name("zertz-program-output".into()).spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut line = Vec::new();
            let limit = max_line as u64 + 1;
            let sent = match (&mut reader).take(limit).read_until(b'\n', &mut line) {
                Ok(0) => return drop(tx.send(Output::End)),
                Ok(n) if n > max_line => return drop(tx.send(Output::TooLong)),
                Ok(_) => tx.send(Output::Line(line)),
                Err(e) => return drop(tx.send(Output::Failed(e))),
            };
            if sent.is_err() {
                return;
            }
        }
    })?;
    Ok(rx)
}

/// Writes the commands sent on the queue to `stdin` on a thread of its own (a program that does
/// not read its input can block a write, never the player); the thread ends, closing the
/// program's input, when the queue's sender is dropped or a write fails.
fn write_lines(mut stdin: ChildStdin) -> std::io::Result<SyncSender<String>> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<String>(QUEUED_LINES);
    std::thread::Builder::new().name("zertz-program-input".into()).spawn(move || {
        for line in rx {
            if stdin.write_all(line.as_bytes()).and_then(|()| stdin.flush()).is_err() {
                return;
            }
        }
    })?;
    Ok(tx)
}

/// A player whose decisions come from another program over the engine protocol (see the module
/// description). Named by its spec, `cmd:PROGRAM ARGS`.
#[derive(Debug)]
pub struct CommandBot {
    name: String,
    /// None once ended.
    child: Option<Child>,
    /// The queue of commands to the program; None once closed.
    input: Option<SyncSender<String>>,
    /// The program's output, line by line.
    output: Receiver<Output>,
    limits: ProgramLimits,
    /// The position of the program's game; None before a game is started.
    remote: Option<Position>,
    /// Actions the program has played (the rest of its last move) that the game has not yet
    /// reported through `observe`, with the position each is played in.
    echoes: VecDeque<(Position, Action)>,
    /// The hops of the program's last move still to be returned by `choose`.
    plan: VecDeque<(Position, Action)>,
    /// What went wrong while following the game in `observe`, reported by the next `choose`.
    failure: Option<String>,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Output::Line(l) => write!(f, "Line({} bytes)", l.len()),
            Output::TooLong => f.write_str("TooLong"),
            Output::End => f.write_str("End"),
            Output::Failed(e) => write!(f, "Failed({e})"),
        }
    }
}

impl CommandBot {
    /// Starts `words[0]` with the arguments `words[1..]` and checks that it answers `name`, with
    /// the default [`ProgramLimits`]; an error names the program.
    pub fn start(words: &[String]) -> Result<CommandBot, SpecError> {
        CommandBot::start_with(words, ProgramLimits::default())
    }

    /// [`CommandBot::start`] with other limits.
    pub fn start_with(words: &[String], limits: ProgramLimits) -> Result<CommandBot, SpecError> {
        let program = words.first().cloned().unwrap_or_default();
        let failed = |error: String| SpecError::Command { program: program.clone(), error };
        if program.is_empty() {
            return Err(failed("no program named".into()));
        }
        let mut command = Command::new(&program);
        command.args(&words[1..]).stdin(Stdio::piped()).stdout(Stdio::piped());
        command.stderr(Stdio::inherit());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().map_err(|e| failed(e.to_string()))?;
        RUNNING.lock().unwrap_or_else(PoisonError::into_inner).insert(child.id());
        let pipes = match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => write_lines(stdin)
                .and_then(|input| Ok((input, read_lines(stdout, limits.answer_bytes)?))),
            _ => Err(std::io::Error::other("its standard input and output could not be piped")),
        };
        let (input, output) = match pipes {
            Ok(p) => p,
            Err(e) => {
                end(&mut child);
                return Err(failed(e.to_string()));
            }
        };
        let mut player = CommandBot {
            name: format!("cmd:{}", join_words(words)),
            child: Some(child),
            input: Some(input),
            output,
            limits,
            remote: None,
            echoes: VecDeque::new(),
            plan: VecDeque::new(),
            failure: None,
        };
        player.ask("name").map_err(failed)?;
        Ok(player)
    }

    /// Sends one command and reads its answer: the text after `=` (its lines joined by `\n`),
    /// or an error message for a `?` answer, a program that ended, output that breaks the
    /// protocol, an answer past the limits or a stop. A failure other than a `?` answer ends the
    /// program: the player cannot be used again.
    fn ask(&mut self, command: &str) -> Result<String, String> {
        let answer = self.exchange(command);
        if answer.as_ref().is_err_and(|e| !e.starts_with("it answered '?")) {
            self.end();
        }
        answer
    }

    fn exchange(&mut self, command: &str) -> Result<String, String> {
        let sent = match &self.input {
            Some(input) => match input.try_send(format!("{command}\n")) {
                Ok(()) => Ok(()),
                // Commands that the program has not read yet: it is stuck.
                Err(TrySendError::Full(_)) => {
                    Err(format!("it does not read its input (sending '{command}')"))
                }
                Err(TrySendError::Disconnected(_)) => Err(format!("cannot send '{command}'")),
            },
            None => Err(format!("cannot send '{command}': it was ended")),
        };
        if let Err(e) = sent {
            return Err(match self.exit_status() {
                Some(status) => format!("it ended before it answered '{command}' ({status})"),
                None => e,
            });
        }
        let deadline = Instant::now() + self.limits.answer_time;
        let mut header: Option<(bool, String)> = None;
        let mut lines: Vec<String> = Vec::new();
        let mut bytes = 0usize;
        let too_long = |limit: usize| {
            format!(
                "its answer to '{command}' is longer than {limit} bytes (the limit of an answer)"
            )
        };
        loop {
            let now = Instant::now();
            if self.limits.stopped() {
                return Err(format!("stopped while it thought about '{command}'"));
            }
            if now >= deadline {
                return Err(format!(
                    "it did not answer '{command}' within {} (the limit of an answer)",
                    seconds(self.limits.answer_time)
                ));
            }
            let line = match self.output.recv_timeout(STOP_POLL.min(deadline - now)) {
                Ok(Output::Line(line)) => line,
                Err(RecvTimeoutError::Timeout) => continue,
                Ok(Output::TooLong) => return Err(too_long(self.limits.answer_bytes)),
                Ok(Output::Failed(e)) => {
                    return Err(format!("cannot read the answer to '{command}': {e}"));
                }
                Ok(Output::End) | Err(RecvTimeoutError::Disconnected) => {
                    if header.is_some() {
                        break; // an answer that the end of the output closes
                    }
                    return Err(match self.exit_status() {
                        Some(status) => {
                            format!("it ended before it answered '{command}' ({status})")
                        }
                        None => format!("its output ended before it answered '{command}'"),
                    });
                }
            };
            bytes += line.len();
            if bytes > self.limits.answer_bytes {
                return Err(too_long(self.limits.answer_bytes));
            }
            let text = String::from_utf8_lossy(&line);
            let line = text.trim_end_matches(['\n', '\r']);
            match &header {
                None if line.trim().is_empty() => continue,
                None => {
                    let ok = match line.chars().next() {
                        Some('=') => true,
                        Some('?') => false,
                        _ => {
                            return Err(format!(
                                "it answered '{}' to '{command}', not '= ...' or '? ...'",
                                one_line(line)
                            ));
                        }
                    };
                    // After '=' or '?': an optional id, then the text.
                    let rest = line[1..].trim_start_matches(|c: char| c.is_ascii_digit());
                    header = Some((ok, rest.trim().to_string()));
                }
                Some(_) if line.trim().is_empty() => break,
                Some(_) => lines.push(line.to_string()),
            }
        }
        let (ok, first) = header.unwrap_or_default();
        let text = std::iter::once(first).chain(lines).collect::<Vec<_>>().join("\n");
        if ok {
            Ok(text)
        } else {
            Err(format!("it answered '? {}' to '{command}'", one_line(&text)))
        }
    }

    /// How the program ended (`exit status: 1`), if it has: it is given a moment, since its
    /// output closes just before it ends. The programs it left behind are ended with it.
    fn exit_status(&mut self) -> Option<String> {
        let child = self.child.as_mut()?;
        if !wait_for_end(child, Duration::from_millis(200)) {
            return None;
        }
        let mut child = self.child.take()?;
        self.input = None;
        end(&mut child).map(|status| status.to_string())
    }

    /// Ends the program now (and the programs it started): its group is killed and it is reaped.
    fn end(&mut self) {
        self.input = None;
        if let Some(mut child) = self.child.take() {
            end(&mut child);
        }
    }

    fn error(&self, error: String) -> BotError {
        BotError::Engine { player: self.name.clone(), error }
    }

    /// Starts a game of `pos`'s variant in the program.
    fn new_game(&mut self, pos: &Position) -> Result<(), String> {
        let variant = pos.variant();
        let blitz = if variant.marbles == MarbleSet::Blitz { " blitz" } else { "" };
        self.remote = None;
        self.ask(&format!("newgame {}{blitz}", variant.board))?;
        self.remote = Some(Position::new(variant, Player::P0));
        Ok(())
    }

    /// Brings the program to `pos`: a new game when it has none of this variant, then
    /// `setposition` when it is elsewhere.
    fn sync(&mut self, pos: &Position) -> Result<(), String> {
        if self.remote.is_none_or(|r| r.variant() != pos.variant()) {
            self.new_game(pos)?;
        }
        if self.remote.as_ref() != Some(pos) {
            self.remote = None;
            self.ask(&format!("setposition {}", pos.to_text()))?;
            self.remote = Some(*pos);
        }
        Ok(())
    }
}

impl CommandBot {
    /// Sends an action of the opponent's to the program: a new game first if it has none, then
    /// `play` when the program is at `before`. Elsewhere (a game that started from an opening)
    /// nothing is sent: `choose` sets the position.
    fn follow(&mut self, before: &Position, action: &Action) -> Result<(), String> {
        if self.remote.is_none() {
            self.new_game(before)?;
        }
        if self.remote.as_ref() == Some(before) {
            self.remote = None;
            self.ask(&format!("play {}", before.action_to_string(action)))?;
            self.remote = before.play_action(action).ok();
        }
        Ok(())
    }
}

/// `text` on one line (its lines joined by " | ").
fn one_line(text: &str) -> String {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" | ")
}

impl Bot for CommandBot {
    fn name(&self) -> &str {
        &self.name
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, BotError> {
        if let Some(failure) = self.failure.take() {
            return Err(self.error(failure));
        }
        if pos.count_legal_actions() == 0 {
            return Err(BotError::NoLegalAction {
                player: self.name.clone(),
                position: pos.to_text(),
            });
        }
        // The next hop of the program's chain.
        if let Some(&(at, a)) = self.plan.front() {
            if at == *pos {
                self.plan.pop_front();
                return Ok(a);
            }
            self.plan.clear();
            self.echoes.clear();
        }
        self.sync(pos).map_err(|e| self.error(e))?;
        let answer = self.ask("genmove").map_err(|e| self.error(e))?;
        let text = answer.lines().next().unwrap_or("").trim();
        let m = pos.parse_legal_move(text).map_err(|e| {
            self.error(format!("it answered '{text}' to 'genmove', not a legal move here: {e}"))
        })?;
        let mut at = *pos;
        for a in pos.move_actions(&m) {
            self.echoes.push_back((at, a));
            self.plan.push_back((at, a));
            at.play_action_unchecked(&a);
        }
        self.remote = Some(at);
        let (_, first) = self.plan.pop_front().expect("a move has at least one action");
        Ok(first)
    }

    fn observe(&mut self, before: &Position, action: &Action) {
        if self.failure.is_some() {
            return;
        }
        if let Some((at, a)) = self.echoes.front() {
            if at == before && a == action {
                self.echoes.pop_front();
                return;
            }
            self.echoes.clear();
            self.plan.clear();
        }
        if let Err(e) = self.follow(before, action) {
            self.failure = Some(e);
        }
    }

    /// The program's CPU time so far (its threads, and the children it has waited for), from
    /// `/proc` in hundredths of a second; zero where there is no `/proc` (other systems than
    /// Linux) or the program has ended.
    fn cpu_elsewhere(&self) -> Duration {
        self.child.as_ref().and_then(|c| process_cpu(c.id())).unwrap_or_default()
    }
}

/// The CPU time of process `pid` and of the children it has waited for (`/proc/PID/stat`'s
/// utime, stime, cutime and cstime, in the kernel's fixed 100 ticks a second).
fn process_cpu(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command's name, which is in parentheses and may hold anything.
    let rest = &stat[stat.rfind(')')? + 1..];
    // (Fields 14 to 17 of the line: 12 to 15 after the name's.)
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|f| f.parse::<u64>().ok())
        .sum::<Option<u64>>()?;
    Some(Duration::from_millis(ticks * 10))
}

impl Drop for CommandBot {
    fn drop(&mut self) {
        if let Some(input) = self.input.take() {
            let _ = input.try_send("quit\n".into());
            // Dropped here: once the queue is written, the program sees the end of its input.
        }
        let Some(mut child) = self.child.take() else { return };
        wait_for_end(&mut child, QUIT_WAIT);
        end(&mut child);
    }
}

/// Waits up to `wait` for `child` to end, without reaping it; whether it has.
fn wait_for_end(child: &mut Child, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    loop {
        if has_ended(child) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Whether `child` has ended, without reaping it: its pid, the id of its process group, stays
/// its own until [`end`] has ended the group.
fn has_ended(child: &mut Child) -> bool {
    #[cfg(unix)]
    {
        use rustix::process::{Pid, WaitId, WaitIdOptions, waitid};
        let Some(pid) = i32::try_from(child.id()).ok().and_then(Pid::from_raw) else {
            return true;
        };
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        // An error: the child is gone (reaped already), or cannot be asked.
        waitid(WaitId::Pid(pid), options).map_or(true, |status| status.is_some())
    }
    #[cfg(not(unix))]
    {
        !matches!(child.try_wait(), Ok(None))
    }
}

/// Kills `child`'s process group (the programs it started, and itself if it still runs) while
/// `child` is not yet reaped, so that its pid, the group's id, cannot have been reused; then
/// reaps it. How it ended, if that can be known.
fn end(child: &mut Child) -> Option<std::process::ExitStatus> {
    kill_group(child.id());
    let _ = child.kill();
    forget(child.id());
    child.wait().ok()
}

/// `pid`'s program is ended: [`end_all_programs`] leaves it alone.
fn forget(pid: u32) {
    RUNNING.lock().unwrap_or_else(PoisonError::into_inner).remove(&pid);
}

/// A duration in words: `30 s`, `0.2 s`.
fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn words_split_on_whitespace_and_quotes() {
        assert_eq!(split_words("a  b\tc").unwrap(), words(&["a", "b", "c"]));
        assert_eq!(split_words(" \"my engine\" -x").unwrap(), words(&["my engine", "-x"]));
        assert_eq!(split_words("nn:\"a b\"/m.pt").unwrap(), words(&["nn:a b/m.pt"]));
        assert_eq!(
            split_words(r#""say \"hi\"" C:\m\x"#).unwrap(),
            words(&["say \"hi\"", r"C:\m\x"])
        );
        assert_eq!(split_words(r#""" x"#).unwrap(), words(&["", "x"]));
        assert_eq!(split_words("").unwrap(), Vec::<String>::new());
        assert!(split_words("a \"b").is_err());
    }

    #[test]
    fn joined_words_split_back() {
        for list in [
            words(&["zertz", "engine", "--player", "nn:runs/a/m.pt:800"]),
            words(&["my engine", "", "\"", "\\", "a\\\"b c", "C:\\x y\\"]),
        ] {
            let text = join_words(&list);
            assert_eq!(split_words(&text).unwrap(), list, "{text}");
        }
        assert_eq!(join_words(&words(&["a", "b c"])), "a \"b c\"");
    }

    #[test]
    fn a_program_that_does_not_exist_is_named() {
        let e = CommandBot::start(&words(&["/no/such/zertz-engine"])).unwrap_err();
        assert!(e.to_string().contains("/no/such/zertz-engine"), "{e}");
    }
}
