//! The mutation fuzzer of the test suites (`env/tests/fuzz.rs`, `selfplay/tests/fuzz.rs`,
//! `arena/tests/fuzz.rs`): seeded
//! mutations of valid inputs, fed to a parser for a bounded time, in the ordinary test run.
//!
//! [`fuzz`] starts from a corpus of valid inputs, mutates their bytes (bit flips, byte and token
//! inserts, deletes, splices from another input, duplicated, dropped and swapped lines,
//! truncation) and runs a check on each; the check answers whether the input was accepted, and
//! panics when what the parser did is wrong. Accepted inputs join the pool that later mutations
//! start from, so the search goes deeper into the format than random bytes would.
//!
//! Budget per target: `ZERTZ_FUZZ_SECS` seconds (default 8) and at most `ZERTZ_FUZZ_CASES` inputs
//! (default 1,000,000,000), at least 64 inputs however long they take (a busy machine gets
//! through fewer in the time, and what a target asserts of its figures must hold there too);
//! `ZERTZ_FUZZ_SEED` changes the mutations (default 1). A failing input is printed and written to
//! `target/fuzz-failures/`.
//!
//! ```
//! use zertz_fuzzkit::{Budget, fuzz_within};
//! // What `u16::from_str` accepts is digits only, and writes back the same (leading zeros apart).
//! let budget = Budget { secs: 1.0, cases: 2_000, seed: 1, min_cases: 64 };
//! let corpus = vec![b"123".to_vec(), b"65535".to_vec()];
//! let report = fuzz_within(budget, "u16", corpus, &["9", "+", "0", "x"], |s| {
//!     let Ok(n) = std::str::from_utf8(s).unwrap_or("").parse::<u16>() else { return false };
//!     let digits = s.strip_prefix(b"+").unwrap_or(s);
//!     assert!(digits.iter().all(u8::is_ascii_digit));
//!     assert_eq!(n.to_string().parse::<u16>(), Ok(n));
//!     true
//! });
//! assert!(report.cases >= 64 && report.cases <= 2_000);
//! ```

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

/// SplitMix64: the mutations' random numbers (the fuzzer depends on no crate of the project).
#[derive(Debug)]
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// A name for a failing input's file: FNV-1a of its bytes.
fn fingerprint(input: &[u8]) -> u64 {
    input
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// Mutates byte strings: random edits, tokens of the formats, splices from the pool.
#[derive(Debug)]
struct Mutator {
    rng: Rng,
    tokens: &'static [&'static str],
}

/// Inputs grow no longer than this.
const MAX_LEN: usize = 1 << 16;

impl Mutator {
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { self.rng.below(n) }
    }

    fn token(&mut self) -> &'static [u8] {
        let i = self.below(self.tokens.len());
        self.tokens.get(i).map_or(b"", |t| t.as_bytes())
    }

    /// Line boundaries of `s`: `(start, end)` of every line, its newline included.
    fn lines(s: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut start = 0;
        for (i, &b) in s.iter().enumerate() {
            if b == b'\n' {
                out.push((start, i + 1));
                start = i + 1;
            }
        }
        if start < s.len() {
            out.push((start, s.len()));
        }
        out
    }

    fn mutate(&mut self, input: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
        let mut s = input.to_vec();
        let edits = 1 + self.below(4) * self.below(3);
        for _ in 0..edits {
            let at = self.below(s.len() + 1);
            match self.below(12) {
                0 if !s.is_empty() => {
                    let i = self.below(s.len());
                    s[i] ^= 1 << self.below(8);
                }
                1 if !s.is_empty() => {
                    let i = self.below(s.len());
                    s[i] = self.rng.next_u64() as u8;
                }
                2 if !s.is_empty() => {
                    // A byte of a token, in place: stays close to the format.
                    let i = self.below(s.len());
                    let t = self.token();
                    if let Some(&b) = t.get(self.below(t.len())) {
                        s[i] = b;
                    }
                }
                3 | 4 => {
                    let t = self.token();
                    s.splice(at..at, t.iter().copied());
                }
                5 if !s.is_empty() => {
                    let len = 1 + self.below(16);
                    let end = (at + len).min(s.len());
                    s.drain(at.min(end)..end);
                }
                6 if !pool.is_empty() => {
                    // Splice a slice of another input over a slice of this one.
                    let other = &pool[self.below(pool.len())];
                    let from = self.below(other.len() + 1);
                    let to = (from + self.below(64)).min(other.len());
                    let end = (at + self.below(64)).min(s.len());
                    s.splice(at..end, other[from..to].iter().copied());
                }
                7 | 8 => {
                    let lines = Self::lines(&s);
                    if !lines.is_empty() {
                        let (a, b) = lines[self.below(lines.len())];
                        let line = s[a..b].to_vec();
                        match self.below(3) {
                            0 => {
                                let (c, _) = lines[self.below(lines.len())];
                                s.splice(c..c, line);
                            }
                            1 => {
                                s.drain(a..b);
                            }
                            _ => {
                                let (c, d) = lines[self.below(lines.len())];
                                if d <= a {
                                    let other = s[c..d].to_vec();
                                    s.splice(a..b, other);
                                    s.splice(c..d, line);
                                }
                            }
                        }
                    }
                }
                9 => s.truncate(at),
                10 if !s.is_empty() => {
                    // Repeat a short slice a few times.
                    let end = (at + 1 + self.below(8)).min(s.len());
                    let piece = s[at.min(end)..end].to_vec();
                    for _ in 0..1 + self.below(4) {
                        s.splice(at..at, piece.iter().copied());
                    }
                }
                _ => {
                    let b = self.rng.next_u64() as u8;
                    s.insert(at, b);
                }
            }
        }
        s.truncate(MAX_LEN);
        s
    }
}

/// How long a target runs: whichever of the time and the count of inputs ends first, but at
/// least `min_cases` inputs (fewer only where `cases` says so) however long they take.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// Seconds.
    pub secs: f64,
    /// Inputs (mutations; the corpus itself runs first and is not counted).
    pub cases: u64,
    /// Seed of the mutations (mixed with the target's name).
    pub seed: u64,
    /// Inputs checked whatever the time: what a target asserts of a run's figures (some inputs
    /// accepted, say) holds after that many on any machine, since the mutations depend on the
    /// seed alone.
    pub min_cases: u64,
}

impl Budget {
    /// `ZERTZ_FUZZ_SECS` (default 8), `ZERTZ_FUZZ_CASES` (default 1,000,000,000) and
    /// `ZERTZ_FUZZ_SEED` (default 1); at least 64 inputs.
    pub fn from_env() -> Budget {
        Budget {
            secs: env_or("ZERTZ_FUZZ_SECS", 8.0),
            cases: env_or("ZERTZ_FUZZ_CASES", 1_000_000_000),
            seed: env_or("ZERTZ_FUZZ_SEED", 1),
            min_cases: 64,
        }
    }
}

/// What one run of a target did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Report {
    /// Mutated inputs checked.
    pub cases: u64,
    /// How many of them the check accepted.
    pub accepted: u64,
    /// Seconds taken.
    pub secs: f64,
}

/// [`fuzz_within`] with [`Budget::from_env`].
pub fn fuzz(
    name: &str,
    corpus: Vec<Vec<u8>>,
    tokens: &'static [&'static str],
    check: impl Fn(&[u8]) -> bool,
) -> Report {
    fuzz_within(Budget::from_env(), name, corpus, tokens, check)
}

/// Runs `check` on every input of `corpus`, then on mutations of them until `budget` is spent;
/// `check` says whether the input was accepted (accepted inputs join the pool that mutations start
/// from). `tokens` are pieces of the format that mutations insert. Panics, naming the input and
/// writing it to `target/fuzz-failures/NAME-HASH.bin`, when `check` panics. Prints a line of
/// figures.
pub fn fuzz_within(
    budget: Budget,
    name: &str,
    corpus: Vec<Vec<u8>>,
    tokens: &'static [&'static str],
    check: impl Fn(&[u8]) -> bool,
) -> Report {
    assert!(!corpus.is_empty(), "{name}: empty corpus");
    let Budget { secs, cases: max_cases, seed, min_cases } = budget;
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(secs.clamp(0.0, 1e9));
    let name_seed = name.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    let mut m = Mutator { rng: Rng(seed ^ name_seed), tokens };
    // The corpus itself first: every valid input must pass.
    for input in &corpus {
        run_one(name, input, &check);
    }
    let mut pool = corpus.clone();
    let (mut cases, mut accepted) = (0u64, 0u64);
    // The minimum whatever the time (a busy machine may spend the whole budget on the corpus),
    // then rounds of 64 inputs while the time lasts.
    while cases < max_cases && (cases < min_cases || cases % 64 != 0 || Instant::now() < deadline) {
        // Half from the valid corpus, so that the pool cannot drift to short inputs only.
        let base = if m.below(2) == 0 {
            &corpus[m.below(corpus.len())]
        } else {
            &pool[m.below(pool.len())]
        };
        let input = m.mutate(base, &pool);
        cases += 1;
        if run_one(name, &input, &check) {
            accepted += 1;
            if pool.len() < 4 * corpus.len() + 1000 {
                pool.push(input);
            } else {
                let i = corpus.len() + m.below(pool.len() - corpus.len());
                pool[i] = input;
            }
        }
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "fuzz {name}: {cases} inputs in {secs:.1} s ({accepted} accepted, corpus {}, pool {}, seed {seed})",
        corpus.len(),
        pool.len()
    );
    Report { cases, accepted, secs }
}

fn run_one(name: &str, input: &[u8], check: &impl Fn(&[u8]) -> bool) -> bool {
    match catch_unwind(AssertUnwindSafe(|| check(input))) {
        Ok(accepted) => accepted,
        Err(payload) => {
            let dir =
                PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/fuzz-failures"));
            let _ = std::fs::create_dir_all(&dir);
            let file = dir.join(format!("{name}-{:016x}.bin", fingerprint(input)));
            let _ = std::fs::write(&file, input);
            let msg = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!(
                "fuzz {name}: panic ({msg}) on input {:?} (written to {})",
                String::from_utf8_lossy(input),
                file.display()
            );
        }
    }
}

// ------------------------------------------------------------------------------- configs

/// The repository's `configs/` folder.
pub fn configs_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs"))
}

/// Every .toml file under `configs/` (with and without its comments), and `extra`: a corpus for
/// the config parsers.
pub fn config_corpus(extra: &[String]) -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    let mut dirs = vec![configs_dir()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "toml") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 2, "no configs in {}", configs_dir().display());
    let mut out = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // Without its comments too, so that fewer mutations land in them.
        let bare: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with('#')).collect();
        out.push(bare.join("\n").into_bytes());
        out.push(text.into_bytes());
    }
    out.extend(extra.iter().map(|s| s.clone().into_bytes()));
    out
}

/// Tokens of TOML and of the settings.
pub const TOML_TOKENS: &[&str] = &[
    "=",
    " = ",
    "\n",
    "[",
    "]",
    "[search]",
    "[[search]]",
    "\"",
    "'",
    "\"\"\"",
    "#",
    ",",
    "{",
    "}",
    ".",
    "0",
    "1",
    "-1",
    "1e9",
    "1e39",
    "-0.0",
    "nan",
    "inf",
    "-inf",
    "+inf",
    "true",
    "false",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551616",
    "1024",
    "1025",
    "100000",
    "65536",
    "65537",
    "1048577",
    "0x10",
    "0o7",
    "0b1",
    "1_000",
    "1979-05-27",
    "board",
    "threads",
    "games",
    "games_per_worker",
    "shard_size",
    "players",
    "\"greedy\"",
    "\"nn:m.safetensors:0\"",
    "\"mcts:99999999999\"",
    "c_puct",
    "policy_temperature",
    "dirichlet_fraction",
    "leaves_per_round",
    "out",
    "seed",
    "\\u0000",
    "é",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Counted in inputs alone: no time limit a busy machine could reach first.
    const BUDGET: Budget = Budget { secs: 1e9, cases: 5_000, seed: 7, min_cases: 0 };

    #[test]
    fn mutations_stay_within_the_length_limit_and_change_inputs() {
        let mut m = Mutator { rng: Rng(3), tokens: &["ab", "\n"] };
        let input = b"line one\nline two\nline three\n".to_vec();
        let pool = vec![input.clone()];
        let changed = (0..1000).filter(|_| m.mutate(&input, &pool) != input).count();
        assert!(changed > 900, "{changed} of 1000 mutations changed the input");
        let long = vec![b'x'; MAX_LEN];
        assert!((0..100).all(|_| m.mutate(&long, &pool).len() <= MAX_LEN));
        // No tokens, an empty input and an empty pool are fine too.
        let mut bare = Mutator { rng: Rng(4), tokens: &[] };
        for _ in 0..1000 {
            bare.mutate(b"", &[]);
        }
    }

    #[test]
    fn the_budget_of_inputs_is_kept() {
        let report = fuzz_within(BUDGET, "count", vec![b"abc".to_vec()], &["d"], |_| true);
        assert_eq!(report.cases, 5_000);
        assert_eq!(report.accepted, 5_000);
    }

    #[test]
    #[should_panic(expected = "fuzz finds-x: panic (an x) on input")]
    fn a_check_that_panics_fails_naming_the_input() {
        // Mutations insert the token "x" soon: the check panics on it.
        fuzz_within(BUDGET, "finds-x", vec![b"abc".to_vec()], &["x"], |s| {
            assert!(!s.contains(&b'x'), "an x");
            true
        });
    }

    #[test]
    #[should_panic(expected = "fuzz corpus: panic (bad corpus)")]
    fn the_corpus_itself_is_checked_first() {
        let budget = Budget { cases: 0, ..BUDGET };
        fuzz_within(budget, "corpus", vec![b"ok".to_vec(), b"bad".to_vec()], &[], |s| {
            assert!(s != b"bad", "bad corpus");
            true
        });
    }
}
