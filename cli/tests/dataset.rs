//! `zertz dataset` never leaves a dataset half-written: a build that fails part-way leaves
//! nothing and says so, the next build removes what a killed one left, and a folder that another
//! build is making is refused.

mod common;
use common::{stderr, temp_dir, zertz};

use std::path::{Path, PathBuf};

use zertz_env::records::to_sgf;
use zertz_env::{Board, Game, MarbleSet, Player, SplitMix64, Variant};

/// Ten random games on 37 rings as records in `dir/records`.
fn records(dir: &Path) -> PathBuf {
    let folder = dir.join("records");
    std::fs::create_dir_all(&folder).unwrap();
    for i in 0..10u64 {
        let mut rng = SplitMix64(i);
        let mut g = Game::new(Variant::new(Board::R37, MarbleSet::Standard), Player::P0);
        while g.outcome().is_none() {
            let moves = g.legal_moves();
            g.play(&moves[rng.below(moves.len())]).unwrap();
        }
        std::fs::write(folder.join(format!("g{i}.sgf")), to_sgf(&g, None).unwrap()).unwrap();
    }
    folder
}

/// The temporary folders of dataset builds in `dir`.
fn partials(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".partial-"))
        .collect()
}

#[test]
fn a_build_that_fails_part_way_leaves_nothing_and_says_so() {
    let dir = temp_dir("fails");
    let good = records(&dir);
    let corrupt = dir.join("corrupt.tar.xz");
    std::fs::write(&corrupt, b"no xz stream").unwrap();
    let out = dir.join("out");
    let o = zertz(&[Path::new("dataset"), &good, &corrupt, Path::new("--out"), &out]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("was not made") && err.contains("corrupt.tar.xz"), "{err}");
    assert!(err.contains("nothing was left"), "{err}");
    assert!(!out.exists());
    assert_eq!(partials(&dir), Vec::<String>::new());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_leftover_of_a_killed_build_goes_with_a_note() {
    let dir = temp_dir("leftover");
    let good = records(&dir);
    let out = dir.join("out");
    // A killed build's temporary folder: no process has this id.
    let killed = dir.join(".out.partial-4294967295");
    std::fs::create_dir_all(killed.join("train")).unwrap();
    std::fs::write(killed.join("games.jsonl"), "{\"game\": 0, \"na").unwrap();
    let o = zertz(&[Path::new("dataset"), &good, Path::new("--out"), &out, Path::new("--json")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("note: removed") && stderr(&o).contains(".out.partial-4294967295"));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(summary["removed_leftovers"], serde_json::json!([killed.to_string_lossy()]));
    assert!(!killed.exists() && out.join("dataset.json").is_file());
    let games = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    assert_eq!(games.lines().count(), 10);

    // One of a process that runs (this test) is another build under way: refused (status 2),
    // and left alone.
    let again = dir.join("again");
    let running = dir.join(format!(".again.partial-{}", std::process::id()));
    std::fs::create_dir(&running).unwrap();
    let o = zertz(&[Path::new("dataset"), &good, Path::new("--out"), &again]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("being made by another build"), "{}", stderr(&o));
    assert!(running.is_dir() && !again.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
