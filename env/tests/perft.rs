//! Perft counts from `tests/perft.txt`: start positions of every board and marble set, and positions
//! taken from boardspace records.
//!
//! The default run checks every depth whose parent level has at most `PERFT_BUDGET` positions
//! (so the suite stays fast); `cargo test --release --test perft -- --ignored` checks them all.

use zertz_env::{Position, perft};

const PERFT_BUDGET: u64 = 6_000_000;

struct Entry {
    id: String,
    position: Position,
    counts: Vec<(u32, u64)>,
}

fn entries() -> Vec<Entry> {
    let text = include_str!("perft.txt");
    let mut out: Vec<Entry> = Vec::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let (key, rest) = line.split_once(' ').expect("key and value");
        match key {
            "id" => out.push(Entry {
                id: rest.to_string(),
                position: Position::from_text("37 standard ..../...../....../......./....../...../.... 6/8/10 0/0/0 0/0/0 P0 - 0").unwrap(),
                counts: Vec::new(),
            }),
            "position" => {
                let e = out.last_mut().expect("id first");
                e.position = Position::from_text(rest).unwrap_or_else(|err| panic!("{}: {err}", e.id));
            }
            "perft" => {
                let (d, n) = rest.split_once(' ').expect("depth and count");
                out.last_mut().expect("id first").counts.push((d.parse().unwrap(), n.parse().unwrap()));
            }
            other => panic!("unknown key {other}"),
        }
    }
    out
}

fn check(all: bool) {
    let entries = entries();
    assert!(entries.len() >= 26);
    let mut checked = 0;
    for e in &entries {
        let mut parent = 1;
        for &(depth, count) in &e.counts {
            if !all && parent > PERFT_BUDGET {
                break;
            }
            assert_eq!(perft(&e.position, depth), count, "{} depth {depth}", e.id);
            checked += 1;
            parent = count;
        }
    }
    assert!(checked >= 2 * entries.len());
}

#[test]
fn perft_counts_match_the_data_file() {
    check(false);
}

#[test]
#[ignore = "slow without --release"]
fn perft_counts_match_the_data_file_at_every_depth() {
    check(true);
}

#[test]
fn known_counts() {
    let start = |b: zertz_env::Board| {
        Position::new(
            zertz_env::Variant::new(b, zertz_env::MarbleSet::Standard),
            zertz_env::Player::P0,
        )
    };
    assert_eq!(perft(&start(zertz_env::Board::R37), 1), 1944);
    assert_eq!(perft(&start(zertz_env::Board::R37), 2), 3_277_260);
    assert_eq!(perft(&start(zertz_env::Board::R48), 1), 2961);
}
