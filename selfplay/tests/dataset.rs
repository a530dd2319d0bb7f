//! Training data from records: filters, the split by game, counts of what was left out.

use std::path::{Path, PathBuf};

use zertz_env::sgf::End;
use zertz_env::{Board, Game, MarbleSet, Player, SplitMix64, Variant};
use zertz_selfplay::dataset::{DatasetConfig, DatasetError, build};
use zertz_selfplay::records::to_sgf;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zertz-dataset-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A random game to its end on `board`.
fn random_game(board: Board, seed: u64) -> Game {
    let mut rng = SplitMix64(seed);
    let mut g = Game::new(Variant::new(board, MarbleSet::Standard), Player::P0);
    while g.outcome().is_none() {
        let moves = g.legal_moves();
        g.play(&moves[rng.below(moves.len())]).unwrap();
    }
    g
}

/// `sgf` with the players' names of boardspace records.
fn named(sgf: &str, p0: &str, p1: &str) -> String {
    sgf.replace("P0[id \"P0\"]", &format!("P0[id \"{p0}\"]"))
        .replace("P1[id \"P1\"]", &format!("P1[id \"{p1}\"]"))
}

/// Twenty games on 37 rings (every fifth against Dumbot), five on 48, one unfinished, one
/// resigned after its first move, one broken, and a README.
fn records(dir: &Path) -> u64 {
    let mut actions = 0;
    for i in 0..20u64 {
        let g = random_game(Board::R37, i);
        actions += actions_of(&g);
        let bot = if i % 5 == 0 { "Dumbot" } else { "bob" };
        std::fs::write(
            dir.join(format!("g37-{i:02}.sgf")),
            named(&to_sgf(&g, None).unwrap(), "ann", bot),
        )
        .unwrap();
    }
    for i in 0..5u64 {
        let g = random_game(Board::R48, 100 + i);
        std::fs::write(dir.join(format!("g48-{i}.sgf")), to_sgf(&g, None).unwrap()).unwrap();
    }
    let opening = "(;GM[22]SU[Zertz];P0[RtoB 2 0 D 4];P0[R- A 1];P0[Done]";
    std::fs::write(dir.join("unfinished.sgf"), format!("{opening})")).unwrap();
    std::fs::write(dir.join("resigned.sgf"), format!("{opening};P1[Resign])")).unwrap();
    std::fs::write(dir.join("broken.sgf"), "(;GM[22];P0[RtoB 2 0 D 4];P0[7 Edit])").unwrap();
    std::fs::write(dir.join("README.md"), "not a record").unwrap();
    actions
}

fn actions_of(g: &Game) -> u64 {
    let mut pos = *g.start();
    let mut n = 0;
    for m in g.moves() {
        n += pos.move_actions(m).len() as u64;
        pos.play_unchecked(m);
    }
    n
}

#[test]
fn records_become_shards_with_filters_and_a_split_by_game() {
    let dir = temp_dir("records");
    let sources = dir.join("records");
    std::fs::create_dir_all(&sources).unwrap();
    let actions37 = records(&sources);
    let out = dir.join("out");
    let config = DatasetConfig {
        boards: vec![Board::R37],
        exclude_players: vec!["dumbot".into()],
        validation: 0.3,
        shard_size: 100,
        ..DatasetConfig::default()
    };
    let s = build(std::slice::from_ref(&sources), &config, &out, &|_| {}).unwrap();
    assert_eq!(s.records, 28);
    assert_eq!(s.skipped_files, 1);
    assert_eq!(s.failed.get("unreadable action \"Edit\""), Some(&1));
    // 4 games against Dumbot, 5 on 48 rings, the unfinished one.
    assert_eq!(s.filtered.get("player"), Some(&4));
    assert_eq!(s.filtered.get("board"), Some(&5));
    assert_eq!(s.filtered.get("end"), Some(&1));
    // 16 random games and the resigned one; every action of the kept games is a sample.
    assert_eq!(s.train_games + s.validation_games, 17);
    assert!(s.validation_games > 0 && s.train_games > 0, "{s:?}");
    let kept_actions: u64 = s.train_samples + s.validation_samples;
    assert!(kept_actions < actions37 + 1 && kept_actions > actions37 / 2, "{s:?}");
    // games.jsonl: one line per kept game, each in one split, ids in order.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(out.join("games.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 17);
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line["game"], i as u64);
        assert_eq!(line["board"], 37);
        assert_ne!(line["players"][1], "Dumbot");
        assert_eq!(line["moves"].as_array().unwrap().len() as u64, line["turns"].as_u64().unwrap());
    }
    let validation: Vec<&serde_json::Value> =
        lines.iter().filter(|l| l["split"] == "validation").collect();
    assert_eq!(validation.len() as u64, s.validation_games);
    let samples: u64 = validation.iter().map(|l| l["samples"].as_u64().unwrap()).sum();
    assert_eq!(samples, s.validation_samples);
    let resigned = lines.iter().find(|l| l["name"].as_str().unwrap().ends_with("resigned.sgf"));
    assert_eq!(resigned.unwrap()["end"], "resign");
    assert_eq!(resigned.unwrap()["winner"], "P0");
    // Shards of the 37-ring board, in both folders.
    assert!(s.shards.iter().any(|p| p.starts_with(out.join("train"))));
    assert!(s.shards.iter().any(|p| p.starts_with(out.join("validation"))));
    assert!(
        s.shards.iter().all(|p| p.file_name().unwrap().to_string_lossy().starts_with("shard-37-"))
    );

    // The split follows the record's name and the seed, not the order of the sources.
    let again =
        build(std::slice::from_ref(&sources), &config, &dir.join("again"), &|_| {}).unwrap();
    assert_eq!(again.validation_games, s.validation_games);
    let other = DatasetConfig { seed: 7, ..config.clone() };
    let moved = build(std::slice::from_ref(&sources), &other, &dir.join("other"), &|_| {}).unwrap();
    assert_eq!(moved.train_games + moved.validation_games, 17);

    // Only capture ends, at least 10 turns, a cap on games.
    let strict = DatasetConfig {
        ends: vec![End::Capture],
        min_turns: 10,
        max_games: Some(3),
        ..config.clone()
    };
    let few = build(std::slice::from_ref(&sources), &strict, &dir.join("few"), &|_| {}).unwrap();
    assert_eq!(few.train_games + few.validation_games, 3);
    assert_eq!(few.filtered.get("max_games"), Some(&1));

    // A folder that holds data is refused; bad settings too.
    let e = build(std::slice::from_ref(&sources), &config, &out, &|_| {}).unwrap_err();
    assert!(matches!(e, DatasetError::Io { .. }) && e.to_string().contains("not empty"), "{e}");
    let bad = DatasetConfig { validation: 1.5, ..config.clone() };
    assert!(matches!(
        build(&[sources], &bad, &dir.join("bad"), &|_| {}),
        Err(DatasetError::Settings(_))
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}
