//! A batch with opponents ([`VecEnv::set_opponents`]): the learner always moves, the opponent's
//! whole turn is played inside the step, and a game the opponent ends gives the learner its loss.

use zertz_env::{Action, Board, MarbleSet, Player, Position, SplitMix64};
use zertz_vecenv::{
    Answer, BatchOpponent, Config, DEFAULT_MAX_BYTES, Error, FirstPlayer, MAX_NUM_ENVS, Opponent,
    VecEnv, step_bytes,
};

/// A uniform random legal action, and how many actions it chose.
struct RandomOpponent {
    rng: SplitMix64,
    acted: usize,
}

impl Opponent for RandomOpponent {
    fn act(&mut self, pos: &Position) -> Result<Action, String> {
        self.acted += 1;
        let k = self.rng.below(pos.count_legal_actions());
        pos.nth_legal_action(k).ok_or_else(|| "no legal action".to_string())
    }
}

fn env(n: usize, first: FirstPlayer, seed: u64) -> VecEnv {
    let config = Config {
        num_envs: n,
        board: Board::R37,
        marbles: MarbleSet::Blitz,
        threads: 2,
        first_player: first,
        seed,
        ..Config::default()
    };
    let mut env = VecEnv::new(config).unwrap();
    let opponents: Vec<Box<dyn Opponent>> = (0..n)
        .map(|i| Box::new(RandomOpponent { rng: SplitMix64(i as u64), acted: 0 }) as _)
        .collect();
    env.set_opponents(opponents, Player::P1).unwrap();
    env
}

/// Random play of the learner until many games end: every observation is the learner's, every
/// game ends with a result for both sides (zero-sum), and the learner both wins and loses.
#[test]
fn the_learner_always_moves_and_sees_its_losses() {
    let n = 8;
    for first in [FirstPlayer::Random, FirstPlayer::P0, FirstPlayer::P1] {
        let mut env = env(n, first, 5);
        assert!(env.has_opponents());
        let mut buf = env.buffers();
        env.reset(Some(5), &mut buf.view()).unwrap();
        let mut actions = vec![0u32; n];
        let (mut wins, mut losses, mut games) = (0, 0, 0);
        while games < 60 {
            for i in 0..n {
                assert_eq!(buf.to_play[i], 1, "{first:?}: game {i} waits for the opponent");
                assert_eq!(env.game(i).unwrap().position().turn(), Player::P1);
            }
            env.sample_actions(&mut actions);
            env.step(&actions, &mut buf.view()).unwrap();
            for i in 0..n {
                let r = &buf.rewards[2 * i..2 * i + 2];
                assert_eq!(r[0], -r[1], "zero-sum");
                if buf.terminated[i] || buf.truncated[i] {
                    games += 1;
                    wins += usize::from(r[1] > 0.0);
                    losses += usize::from(r[1] < 0.0);
                } else {
                    assert_eq!(r, [0.0, 0.0], "rewards only at the end");
                }
            }
        }
        assert!(wins > 0 && losses > 0, "{first:?}: {wins} wins, {losses} losses");
    }
}

/// With the opponent moving first, its first turn is played at the reset: the learner's first
/// observation is a position where one marble has been placed.
#[test]
fn an_opponent_that_begins_plays_at_the_reset() {
    let mut env = env(4, FirstPlayer::P0, 1);
    let mut buf = env.buffers();
    env.reset(None, &mut buf.view()).unwrap();
    for i in 0..4 {
        let game = env.game(i).unwrap();
        assert_eq!(game.steps(), 1);
        assert_eq!(game.position().turn(), Player::P1);
    }
}

/// The same seeds give the same games, whatever the threads.
#[test]
fn opponents_are_reproducible() {
    let run = || {
        let mut env = env(6, FirstPlayer::Random, 9);
        let mut buf = env.buffers();
        env.reset(Some(9), &mut buf.view()).unwrap();
        let mut actions = vec![0u32; 6];
        for _ in 0..50 {
            env.sample_actions(&mut actions);
            env.step(&actions, &mut buf.view()).unwrap();
        }
        (0..6).map(|i| env.game(i).unwrap().position().hash()).collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

/// An opponent that fails or answers an illegal action is an error naming the game, and the
/// batch then refuses every step, naming that error, until a reset.
#[test]
fn a_failing_opponent_fails_the_batch_until_a_reset() {
    /// Fails (or answers a pass, which is illegal while marbles can be placed) from its
    /// `after`-th answer on.
    struct Broken {
        failing: bool,
        after: usize,
        answered: usize,
    }
    impl Opponent for Broken {
        fn act(&mut self, pos: &Position) -> Result<Action, String> {
            self.answered += 1;
            if self.answered <= self.after {
                return Ok(pos.nth_legal_action(0).unwrap());
            }
            if self.failing { Err("went away".into()) } else { Ok(Action::Pass) }
        }
    }
    let broken = |failing: bool, after: usize| -> Vec<Box<dyn Opponent>> {
        (0..2).map(|_| Box::new(Broken { failing, after, answered: 0 }) as _).collect()
    };
    for failing in [true, false] {
        let config = Config { num_envs: 2, first_player: FirstPlayer::P0, ..Config::default() };
        let mut env = VecEnv::new(config).unwrap();
        // At the reset: the opponent begins every game.
        env.set_opponents(broken(failing, 0), Player::P1).unwrap();
        let mut buf = env.buffers();
        let e = env.reset(None, &mut buf.view()).unwrap_err();
        if failing {
            assert!(matches!(e, Error::Opponent { env: 0, .. }), "{e}");
        } else {
            assert!(matches!(e, Error::IllegalAnswer { env: 0, .. }), "{e}");
        }
        let text = e.to_string();
        let why = if failing { "the opponent failed: went away" } else { "not legal here" };
        assert!(text.contains(why) && text.contains("reset"), "{text}");
        let e = env.step(&[0, 0], &mut buf.view()).unwrap_err();
        assert!(matches!(&e, Error::Failed(r) if r.contains(why)), "{e}");
        // In a step: its first answer is good, its second fails.
        env.set_opponents(broken(failing, 1), Player::P1).unwrap();
        env.reset(None, &mut buf.view()).unwrap();
        assert_eq!(env.failure(), None);
        let mut actions = [0u32; 2];
        env.sample_actions(&mut actions);
        let e = env.step(&actions, &mut buf.view()).unwrap_err();
        assert!(matches!(e, Error::Opponent { env: 0, .. } | Error::IllegalAnswer { env: 0, .. }));
        assert!(env.failure().is_some_and(|r| r.contains(why)));
        for _ in 0..2 {
            let e = env.step(&actions, &mut buf.view()).unwrap_err();
            let text = e.to_string();
            assert!(text.starts_with("the environment needs a reset: game 0: "), "{text}");
            assert_eq!(text.matches("reset").count(), 1, "{text}");
        }
    }
    let mut env = VecEnv::new(Config { num_envs: 2, ..Config::default() }).unwrap();
    let e = env.set_opponents(Vec::new(), Player::P1).unwrap_err();
    assert!(matches!(e, Error::Length { name: "opponents", .. }));
}

/// A batch opponent that is one random player for every game plays the same games as per-game
/// random players would, with each game's generator: it is asked once per round for every game
/// where it is to move, in index order, never for a game where the learner moves.
#[test]
fn a_batch_opponent_is_asked_for_the_games_where_it_moves() {
    struct Batch {
        rngs: Vec<SplitMix64>,
        rounds: usize,
    }
    impl BatchOpponent for Batch {
        fn act(&mut self, games: &[usize], positions: &[Position], answers: &mut [Answer]) {
            self.rounds += 1;
            assert!(games.windows(2).all(|w| w[0] < w[1]), "{games:?}");
            for ((&i, pos), answer) in games.iter().zip(positions).zip(answers) {
                assert_eq!(pos.turn(), Player::P0, "game {i}: the learner is P1");
                let k = self.rngs[i].below(pos.count_legal_actions());
                *answer = pos.nth_legal_action(k).ok_or_else(|| "no legal action".to_string());
            }
        }
    }
    let run = |batched: bool| {
        let mut env = env(6, FirstPlayer::Random, 4);
        if batched {
            let rngs = (0..6).map(|i| SplitMix64(i as u64)).collect();
            env.set_batch_opponent(Box::new(Batch { rngs, rounds: 0 }), Player::P1);
        }
        let mut buf = env.buffers();
        env.reset(Some(4), &mut buf.view()).unwrap();
        let mut actions = vec![0u32; 6];
        let mut seen = Vec::new();
        for _ in 0..80 {
            env.sample_actions(&mut actions);
            env.step(&actions, &mut buf.view()).unwrap();
            assert!(buf.to_play.iter().all(|&p| p == 1));
            let steps: Vec<u32> = (0..6).map(|i| env.game(i).unwrap().steps()).collect();
            seen.push((buf.rewards.clone(), buf.terminated.clone(), buf.truncated.clone(), steps));
        }
        let hashes: Vec<u64> = (0..6).map(|i| env.game(i).unwrap().position().hash()).collect();
        (seen, hashes)
    };
    assert_eq!(run(true), run(false));
}

/// A batch's arrays are bounded in memory: one that needs more than `max_bytes` a step is
/// refused, saying how much it needs and how to allow it.
#[test]
fn a_batch_past_its_memory_bound_is_refused() {
    let n = 65536;
    let needed = step_bytes(n, Board::R61);
    assert!(needed > 800 << 20 && needed < DEFAULT_MAX_BYTES, "{needed}");
    let config = Config { num_envs: n, board: Board::R61, threads: 1, ..Config::default() };
    let e = VecEnv::new(Config { max_bytes: 512 << 20, ..config.clone() }).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("65536 games of 61 rings write 899.8 MiB a step"), "{text}");
    assert!(text.contains("more than max_bytes (512 MiB); raise max_bytes"), "{text}");
    let e = VecEnv::new(Config { num_envs: MAX_NUM_ENVS, ..config.clone() }).unwrap_err();
    assert!(e.to_string().contains("more than max_bytes (1 GiB)"), "{e}");
    // Just enough is enough.
    let small = Config { num_envs: 3, max_bytes: step_bytes(3, Board::R61), ..config };
    assert!(VecEnv::new(small.clone()).is_ok());
    let e = VecEnv::new(Config { max_bytes: small.max_bytes - 1, ..small }).unwrap_err();
    assert!(matches!(e, Error::Config(_)), "{e}");
}

/// `step_some` plays the active games only; the others keep their positions and are observed.
#[test]
fn step_some_plays_the_active_games_only() {
    let config = Config { num_envs: 4, threads: 2, seed: 3, ..Config::default() };
    let mut env = VecEnv::new(config).unwrap();
    let mut buf = env.buffers();
    env.reset(None, &mut buf.view()).unwrap();
    let before: Vec<u64> = (0..4).map(|i| env.game(i).unwrap().position().hash()).collect();
    let mut actions = vec![0u32; 4];
    env.sample_actions(&mut actions);
    // An inactive game's action is not read: out of range there is no error.
    actions[1] = u32::MAX;
    let active = [true, false, true, false];
    env.step_some(&actions, Some(&active), &mut buf.view()).unwrap();
    for (i, &played) in active.iter().enumerate() {
        let game = env.game(i).unwrap();
        assert_eq!(game.position().hash() != before[i], played, "game {i}");
        assert_eq!(game.steps(), u32::from(played));
        assert_eq!(buf.to_play[i] as usize, game.position().turn().index());
    }
    let e = env.step_some(&actions, Some(&[true]), &mut buf.view()).unwrap_err();
    assert!(matches!(e, Error::Length { name: "active", .. }));
    let e = env.step_some(&actions, Some(&[true; 4]), &mut buf.view()).unwrap_err();
    assert!(matches!(e, Error::OutOfRange { env: 1, .. }));
}
