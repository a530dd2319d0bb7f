//! Training data from records: filters, the split by game, counts of what was left out.

use std::path::{Path, PathBuf};

use zertz_env::records::to_sgf;
use zertz_env::sgf::End;
use zertz_env::{Board, Game, MarbleSet, Player, SplitMix64, Variant};
use zertz_selfplay::dataset::{
    DatasetConfig, DatasetError, FORMAT, FORMAT_VERSION, MANIFEST, build,
};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zertz-dataset-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The temporary folders of dataset builds in `dir` (`.NAME.partial-PID`).
fn partials(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains(".partial-"))
        .collect();
    found.sort();
    found
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
    // The manifest, written last: format, version, settings, and the summary with the shards
    // named in the folder.
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(MANIFEST)).unwrap()).unwrap();
    assert_eq!(manifest["format"], FORMAT);
    assert_eq!(manifest["version"], FORMAT_VERSION);
    assert_eq!(manifest["settings"]["boards"], serde_json::json!([37]));
    assert_eq!(manifest["settings"]["validation"], 0.3);
    assert_eq!(manifest["summary"]["train_games"], s.train_games);
    let named: Vec<PathBuf> = manifest["summary"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| PathBuf::from(p.as_str().unwrap()))
        .collect();
    assert_eq!(named.iter().map(|p| out.join(p)).collect::<Vec<_>>(), s.shards);
    assert!(named.iter().all(|p| p.is_relative()));
    // Nothing else beside it: the temporary folder took its name.
    assert_eq!(partials(&dir), Vec::<PathBuf>::new());
    // Shards of the 37-ring board, in both folders.
    assert!(s.shards.iter().all(|p| p.is_file()));
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

/// A source whose records are read before the build fails: a good folder, then an archive that is
/// not one.
fn failing_sources(dir: &Path) -> Vec<PathBuf> {
    let good = dir.join("records");
    std::fs::create_dir_all(&good).unwrap();
    records(&good);
    let corrupt = dir.join("corrupt.tar.xz");
    std::fs::write(&corrupt, b"these bytes are no xz stream").unwrap();
    vec![good, corrupt]
}

#[test]
fn a_build_that_fails_part_way_leaves_nothing() {
    let dir = temp_dir("fails");
    let sources = failing_sources(&dir);
    let config = DatasetConfig { shard_size: 10, ..DatasetConfig::default() };
    let progress = std::cell::Cell::new(0);
    let out = dir.join("out");
    let e = build(&sources, &config, &out, &|n| progress.set(n)).unwrap_err();
    // The records of the first source were read (and their shards written) before the failure.
    assert!(progress.get() >= 20, "{}", progress.get());
    let DatasetError::Stopped { source, cleanup, out: named, .. } = &e else {
        panic!("not Stopped: {e:?}")
    };
    assert!(matches!(**source, DatasetError::Archive(_)), "{source:?}");
    assert!(cleanup.is_none() && named == &out, "{e:?}");
    let message = e.to_string();
    assert!(
        message.contains("corrupt.tar.xz") && message.contains("nothing was left"),
        "{message}"
    );
    // No dataset, half or whole, and no temporary folder.
    assert!(!out.exists());
    assert_eq!(partials(&dir), Vec::<PathBuf>::new());

    // An empty folder given as `out` stays as it was: empty.
    let empty = dir.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let e = build(&sources, &config, &empty, &|_| {}).unwrap_err();
    assert!(matches!(e, DatasetError::Stopped { .. }), "{e:?}");
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
    assert_eq!(partials(&dir), Vec::<PathBuf>::new());
    // ...and takes the dataset once the sources are good.
    let s = build(&sources[..1], &config, &empty, &|_| {}).unwrap();
    assert!(empty.join(MANIFEST).is_file() && s.shards.iter().all(|p| p.starts_with(&empty)));

    // A source that does not exist is refused before anything is written.
    let missing = vec![sources[0].clone(), dir.join("none.tar.xz")];
    let nested = dir.join("new").join("out");
    let e = build(&missing, &config, &nested, &|_| {}).unwrap_err();
    assert!(matches!(e, DatasetError::Archive(_)), "{e:?}");
    assert!(!dir.join("new").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_leftover_of_a_killed_build_is_removed_by_the_next() {
    let dir = temp_dir("leftover");
    let sources = failing_sources(&dir);
    let good = &sources[..1];
    let config = DatasetConfig::default();
    let out = dir.join("out");
    // What a build killed half-way leaves: its temporary folder, of a process that is gone (no
    // process has this id), with a shard and games.jsonl cut short.
    let killed = dir.join(".out.partial-4294967295");
    std::fs::create_dir_all(killed.join("train")).unwrap();
    std::fs::write(killed.join("train").join("shard-37-00000.npz"), b"cut").unwrap();
    std::fs::write(killed.join("games.jsonl"), "{\"game\": 0, \"na").unwrap();
    // Another dataset's temporary folder, and a file whose name only looks like one.
    let other = dir.join(".other.partial-4294967295");
    std::fs::create_dir(&other).unwrap();
    let lookalike = dir.join(".out.partial-notapid");
    std::fs::write(&lookalike, "").unwrap();

    let s = build(good, &config, &out, &|_| {}).unwrap();
    assert_eq!(s.removed_leftovers, vec![killed.clone()]);
    assert!(!killed.exists() && other.exists() && lookalike.exists());
    assert!(out.join(MANIFEST).is_file());
    let games = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
    assert_eq!(games.lines().count() as u64, s.train_games + s.validation_games);

    // The temporary folder of a build that still runs (this process) is another build under way:
    // refused, and left alone.
    let again = dir.join("again");
    let running = dir.join(format!(".again.partial-{}", std::process::id()));
    std::fs::create_dir(&running).unwrap();
    let e = build(good, &config, &again, &|_| {}).unwrap_err();
    assert!(
        matches!(&e, DatasetError::InUse { partial, pid, .. }
            if partial == &running && *pid == std::process::id()),
        "{e:?}"
    );
    assert!(e.to_string().contains("another build"), "{e}");
    assert!(running.is_dir() && !again.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The ends a dataset keeps are named once: the ends of a finished game, in any case; any other
/// name (`unfinished` among them) is refused with the list.
#[test]
fn ends_are_read_by_name_and_a_wrong_one_is_answered_with_the_list() {
    use zertz_selfplay::dataset::{DatasetConfig, UnknownEnd, parse_ends};
    assert_eq!(DatasetConfig::default().ends, End::FINISHED);
    assert_eq!(parse_ends(&["Capture", "draw"]), Ok(vec![End::Capture, End::Draw]));
    for bad in ["unfinished", "checkmate"] {
        let e = parse_ends(&["capture", bad]).unwrap_err();
        assert_eq!(e, UnknownEnd(bad.into()));
        assert_eq!(e.to_string(), format!("ends take capture, resign, time and draw, not {bad:?}"));
    }
}
