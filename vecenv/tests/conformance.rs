//! The conformance test every environment configuration passes, and the API's edge cases.

use zertz_env::{Board, MarbleSet, Position, Variant};
use zertz_vecenv::{Config, Error, FirstPlayer, MAX_NUM_ENVS, MAX_THREADS, VecEnv};

fn config(board: Board, marbles: MarbleSet, n: usize) -> Config {
    Config { num_envs: n, board, marbles, threads: 2, seed: 11, ..Config::default() }
}

/// Random legal play on every board and marble set until many games have ended: masks agree with
/// the rules, rewards are zero-sum and only at the end, finished games restart.
#[test]
fn every_configuration_conforms() {
    for variant in Variant::all() {
        let n = 16;
        let mut env = VecEnv::new(config(variant.board, variant.marbles, n)).unwrap();
        let a = env.action_space().len();
        let mut buf = env.buffers();
        env.reset(Some(3), &mut buf.view()).unwrap();
        let mut actions = vec![0u32; n];
        let mut finished = 0;
        let mut steps = 0;
        while finished < 40 {
            // The observation describes the game each slot holds now.
            for i in 0..n {
                let pos: Position = *env.game(i).unwrap().position();
                assert!(!pos.is_over(), "{variant}: slot {i} holds a finished game");
                let mask = &buf.mask[i * a..(i + 1) * a];
                let mut expected = vec![false; a];
                for act in pos.legal_actions() {
                    expected[env.action_space().index(&act)] = true;
                }
                assert_eq!(mask, &expected[..], "{variant}: mask of slot {i}");
                assert_eq!(buf.to_play[i] as usize, pos.turn().index());
                let shape = env.shape();
                let (mut planes, mut globals) = (vec![0.0; shape.planes_len()], vec![0.0; 20]);
                pos.encode(&mut planes, &mut globals);
                let p = shape.planes_len();
                assert_eq!(&buf.planes[i * p..(i + 1) * p], &planes[..]);
                assert_eq!(&buf.globals[i * 20..(i + 1) * 20], &globals[..]);
            }
            let before: Vec<Position> = (0..n).map(|i| *env.game(i).unwrap().position()).collect();
            env.sample_actions(&mut actions);
            env.step(&actions, &mut buf.view()).unwrap();
            steps += 1;
            // The games that ended, with the positions they ended in.
            let finals = env.final_positions();
            let ended: Vec<usize> =
                (0..n).filter(|&i| buf.terminated[i] || buf.truncated[i]).collect();
            assert_eq!(finals.iter().map(|&(i, _)| i).collect::<Vec<_>>(), ended, "{variant}");
            for &(i, final_pos) in &finals {
                let act = env.action_space().decode(actions[i] as usize).unwrap();
                assert_eq!(final_pos, before[i].play_action(&act).unwrap(), "{variant}: slot {i}");
            }
            for i in 0..n {
                let (r0, r1) = (buf.rewards[2 * i], buf.rewards[2 * i + 1]);
                assert_eq!(r0 + r1, 0.0, "{variant}: rewards sum to zero");
                let act = env.action_space().decode(actions[i] as usize).unwrap();
                let after = before[i].play_action(&act).unwrap();
                if buf.terminated[i] {
                    finished += 1;
                    let score = match after.outcome() {
                        Some(o) => o.score(zertz_env::Player::P0) as f32,
                        None => 0.0, // third repetition: the env keeps the history
                    };
                    assert_eq!(r0, score, "{variant}: P0's reward is the outcome");
                    assert_eq!(env.game(i).unwrap().steps(), 0, "{variant}: a new game starts");
                } else {
                    assert_eq!((r0, r1), (0.0, 0.0), "{variant}: no reward before the end");
                    assert!(!after.is_over());
                    if !buf.truncated[i] {
                        assert_eq!(*env.game(i).unwrap().position(), after);
                    }
                }
            }
            assert!(steps < 20_000, "{variant}: games do not end");
        }
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let run = |threads: usize| {
        let mut env =
            VecEnv::new(Config { threads, ..config(Board::R48, MarbleSet::Blitz, 33) }).unwrap();
        let mut buf = env.buffers();
        env.reset(Some(5), &mut buf.view()).unwrap();
        let mut actions = vec![0u32; 33];
        let mut trace = Vec::new();
        for _ in 0..200 {
            env.sample_actions(&mut actions);
            env.step(&actions, &mut buf.view()).unwrap();
            trace.extend_from_slice(&actions);
            trace.extend(buf.rewards.iter().map(|&r| r as i32 as u32));
        }
        (trace, buf.planes.clone())
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
}

#[test]
fn reset_with_a_seed_is_reproducible_and_seeds_differ() {
    let mut env = VecEnv::new(config(Board::R37, MarbleSet::Standard, 8)).unwrap();
    let mut buf = env.buffers();
    let mut play = |env: &mut VecEnv, seed: u64| {
        env.reset(Some(seed), &mut buf.view()).unwrap();
        let mut actions = vec![0u32; 8];
        let mut trace = Vec::new();
        for _ in 0..50 {
            env.sample_actions(&mut actions);
            env.step(&actions, &mut buf.view()).unwrap();
            trace.extend_from_slice(&actions);
        }
        trace
    };
    let a = play(&mut env, 1);
    assert_eq!(a, play(&mut env, 1));
    assert_ne!(a, play(&mut env, 2));
}

#[test]
fn first_player_and_opening_plies() {
    for (first, want) in [(FirstPlayer::P0, 0u8), (FirstPlayer::P1, 1u8)] {
        let mut env = VecEnv::new(Config {
            first_player: first,
            ..config(Board::R37, MarbleSet::Standard, 4)
        })
        .unwrap();
        let mut buf = env.buffers();
        env.reset(None, &mut buf.view()).unwrap();
        assert!(buf.to_play.iter().all(|&p| p == want));
    }
    let mut env = VecEnv::new(config(Board::R37, MarbleSet::Standard, 64)).unwrap();
    let mut buf = env.buffers();
    env.reset(None, &mut buf.view()).unwrap();
    let p1 = buf.to_play.iter().filter(|&&p| p == 1).count();
    assert!((16..=48).contains(&p1), "random first player: {p1} of 64 start with P1");
    let mut env =
        VecEnv::new(Config { opening_plies: 3, ..config(Board::R37, MarbleSet::Standard, 8) })
            .unwrap();
    let mut buf = env.buffers();
    env.reset(None, &mut buf.view()).unwrap();
    for i in 0..8 {
        let pos = env.game(i).unwrap().position();
        assert!(pos.rings().count_ones() < 37, "opening plies were played");
        assert!(!pos.is_over());
    }
}

#[test]
fn truncation_at_the_step_limit() {
    let mut env =
        VecEnv::new(Config { max_steps: 3, ..config(Board::R61, MarbleSet::Standard, 4) }).unwrap();
    let mut buf = env.buffers();
    env.reset(None, &mut buf.view()).unwrap();
    let mut actions = vec![0u32; 4];
    for step in 1..=3 {
        env.sample_actions(&mut actions);
        env.step(&actions, &mut buf.view()).unwrap();
        let done = buf.truncated.iter().filter(|&&t| t).count();
        assert_eq!(done, if step == 3 { 4 } else { 0 });
    }
    assert!(buf.rewards.iter().all(|&r| r == 0.0));
    assert!((0..4).all(|i| env.game(i).unwrap().steps() == 0));
}

#[test]
fn bad_input_is_refused_and_changes_nothing() {
    assert!(matches!(
        VecEnv::new(Config { num_envs: 0, ..Config::default() }),
        Err(Error::Config(_))
    ));
    // Bounds are checked before anything is allocated or started: a billion games once aborted
    // on a failed allocation, a million threads were started one by one.
    for (num_envs, threads, what) in [
        (1_000_000_000, 1, "num_envs"),
        (MAX_NUM_ENVS + 1, 1, "num_envs"),
        (2, 1_000_000, "threads"),
    ] {
        let err = VecEnv::new(Config { num_envs, threads, ..Config::default() }).unwrap_err();
        assert!(matches!(err, Error::Config(ref m) if m.starts_with(what)), "{err}");
    }
    assert_eq!(
        VecEnv::new(Config { num_envs: 2, threads: MAX_THREADS.min(4), ..Config::default() })
            .unwrap()
            .num_envs(),
        2
    );
    let mut env = VecEnv::new(config(Board::R37, MarbleSet::Standard, 2)).unwrap();
    let mut buf = env.buffers();
    env.reset(None, &mut buf.view()).unwrap();
    let before = env.game(0).unwrap().position().to_text();
    let size = env.action_space().len();
    assert_eq!(
        env.step(&[0], &mut buf.view()),
        Err(Error::Length { name: "actions", expected: 2, found: 1 })
    );
    let mut legal = vec![0u32; 2];
    env.sample_actions(&mut legal);
    let err = env.step(&[legal[0], size as u32], &mut buf.view()).unwrap_err();
    assert_eq!(err, Error::OutOfRange { env: 1, action: size as u32, size });
    assert_eq!(env.game(0).unwrap().position().to_text(), before, "nothing was played");
    assert!(env.forfeits().is_empty());
    // An illegal action (a pass while marbles can be placed) forfeits its game alone.
    let pass = env.action_space().pass_index() as u32;
    let mover = env.game(1).unwrap().position().turn().index();
    env.step(&[legal[0], pass], &mut buf.view()).unwrap();
    assert_eq!(env.forfeits(), vec![1]);
    assert_ne!(env.game(0).unwrap().position().to_text(), before, "game 0 played its action");
    assert!(buf.terminated[1] && !buf.truncated[1] && !buf.terminated[0]);
    assert_eq!((buf.rewards[2 + mover], buf.rewards[2 + 1 - mover]), (-1.0, 1.0));
    assert_eq!(env.game(1).unwrap().steps(), 0, "the forfeited game restarted");
    let finals: Vec<usize> = env.final_positions().into_iter().map(|(i, _)| i).collect();
    assert_eq!(finals, vec![1]);
    env.sample_actions(&mut legal);
    env.step(&legal, &mut buf.view()).unwrap();
    assert!(env.forfeits().is_empty());
    let mut short = env.buffers();
    short.mask.pop();
    assert!(matches!(env.step(&legal, &mut short.view()), Err(Error::Length { name: "mask", .. })));
}

#[test]
fn snapshots_restore_a_game() {
    let mut env = VecEnv::new(config(Board::R37, MarbleSet::Standard, 2)).unwrap();
    let mut buf = env.buffers();
    env.reset(None, &mut buf.view()).unwrap();
    let snap = env.game(0).unwrap().clone();
    let mut actions = vec![0u32; 2];
    env.sample_actions(&mut actions);
    env.step(&actions, &mut buf.view()).unwrap();
    assert_ne!(env.game(0).unwrap().position(), snap.position());
    env.restore(0, snap.clone()).unwrap();
    assert_eq!(env.game(0).unwrap().position(), snap.position());
    let mut other = VecEnv::new(config(Board::R48, MarbleSet::Standard, 1)).unwrap();
    assert!(other.restore(0, snap).is_err());
}
