//! Players behind another program that speaks the engine protocol ([`crate::protocol`]):
//! `cmd:PROGRAM ARGS`, so that two versions of this engine, or other engines, meet in a match.
//!
//! A [`CommandPlayer`] starts its program with piped standard input and output (its standard error
//! goes where the caller's does), checks that it answers `name`, and then follows the game:
//!
//! - the first position it sees starts a game there with `newgame BOARD [blitz]`;
//! - the opponent's actions are sent with `play ACTION` as [`Player::observe`] hears of them;
//! - [`Player::choose`] sends `setposition TEXT` first when the program's position is not the
//!   game's (a game that starts from an opening, an undo), then `genmove`; the answer is a whole
//!   move, whose first action is returned and whose other hops (a capture chain) are returned by
//!   the following calls without asking again. The program has played them already, so they are
//!   not sent back when they are observed.
//!
//! A program that ends, breaks the protocol, refuses a command (`? ...`) or answers an illegal
//! move fails with [`PlayerError::Engine`], with what it said. Dropping the player sends `quit`
//! and waits a little for the program to end, then kills it.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use zertz_env::{Action, MarbleSet, Player as Side, Position};

use crate::players::{Player, PlayerError, SpecError};

/// The longest answer read from a program, in bytes: more is a broken program.
const MAX_ANSWER: u64 = 1 << 22;

/// How long a dropped player waits for its program to end after `quit` before killing it.
const QUIT_WAIT: Duration = Duration::from_secs(2);

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

/// A player whose decisions come from another program over the engine protocol (see the module
/// description). Named by its spec, `cmd:PROGRAM ARGS`.
#[derive(Debug)]
pub struct CommandPlayer {
    name: String,
    child: Child,
    /// None once closed (when dropped).
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
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

impl CommandPlayer {
    /// Starts `words[0]` with the arguments `words[1..]` and checks that it answers `name`; an
    /// error names the program.
    pub fn start(words: &[String]) -> Result<CommandPlayer, SpecError> {
        let program = words.first().cloned().unwrap_or_default();
        let failed = |error: String| SpecError::Command { program: program.clone(), error };
        if program.is_empty() {
            return Err(failed("no program named".into()));
        }
        let mut child = Command::new(&program)
            .args(&words[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| failed(e.to_string()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(failed("its standard input and output could not be piped".into()));
        };
        let mut player = CommandPlayer {
            name: format!("cmd:{}", join_words(words)),
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
            remote: None,
            echoes: VecDeque::new(),
            plan: VecDeque::new(),
            failure: None,
        };
        player.ask("name").map_err(failed)?;
        Ok(player)
    }

    /// Sends one command and reads its answer: the text after `=` (its lines joined by `\n`),
    /// or an error message for a `?` answer, a program that ended or output that breaks the
    /// protocol.
    fn ask(&mut self, command: &str) -> Result<String, String> {
        let sent = match &mut self.stdin {
            Some(stdin) => {
                stdin.write_all(format!("{command}\n").as_bytes()).and_then(|()| stdin.flush())
            }
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        if let Err(e) = sent {
            return Err(match self.exit_status() {
                Some(status) => format!("it ended before it answered '{command}' ({status})"),
                None => format!("cannot send '{command}': {e}"),
            });
        }
        let mut header: Option<(bool, String)> = None;
        let mut lines: Vec<String> = Vec::new();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let read = (&mut self.stdout).take(MAX_ANSWER).read_until(b'\n', &mut buf);
            let n = match read {
                Ok(n) => n,
                Err(e) => return Err(format!("cannot read the answer to '{command}': {e}")),
            };
            if n == 0 {
                if header.is_some() {
                    break; // an answer that the end of the output closes
                }
                return Err(match self.exit_status() {
                    Some(status) => format!("it ended before it answered '{command}' ({status})"),
                    None => format!("its output ended before it answered '{command}'"),
                });
            }
            if n as u64 >= MAX_ANSWER {
                return Err(format!("its answer to '{command}' is too long"));
            }
            let text = String::from_utf8_lossy(&buf);
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
    /// output closes just before it ends.
    fn exit_status(&mut self) -> Option<String> {
        let deadline = Instant::now() + Duration::from_millis(200);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status.to_string()),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                _ => return None,
            }
        }
    }

    fn error(&self, error: String) -> PlayerError {
        PlayerError::Engine { player: self.name.clone(), error }
    }

    /// Starts a game of `pos`'s variant in the program.
    fn new_game(&mut self, pos: &Position) -> Result<(), String> {
        let variant = pos.variant();
        let blitz = if variant.marbles == MarbleSet::Blitz { " blitz" } else { "" };
        self.remote = None;
        self.ask(&format!("newgame {}{blitz}", variant.board))?;
        self.remote = Some(Position::new(variant, Side::P0));
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

impl CommandPlayer {
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

impl Player for CommandPlayer {
    fn name(&self) -> &str {
        &self.name
    }

    fn choose(&mut self, pos: &Position) -> Result<Action, PlayerError> {
        if let Some(failure) = self.failure.take() {
            return Err(self.error(failure));
        }
        if pos.count_legal_actions() == 0 {
            return Err(PlayerError::NoLegalAction {
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
}

impl Drop for CommandPlayer {
    fn drop(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"quit\n").and_then(|()| stdin.flush());
            // Dropped here: the program also sees the end of its input.
        }
        let deadline = Instant::now() + QUIT_WAIT;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5))
                }
                _ => break,
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
        let e = CommandPlayer::start(&words(&["/no/such/zertz-engine"])).unwrap_err();
        assert!(e.to_string().contains("/no/such/zertz-engine"), "{e}");
    }
}
