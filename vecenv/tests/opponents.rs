//! A batch with opponents ([`VecEnv::set_opponents`]): the learner always moves, the opponent's
//! whole turn is played inside the step, and a game the opponent ends gives the learner its loss.

use zertz_env::{Action, Board, MarbleSet, Player, Position, SplitMix64};
use zertz_vecenv::{Config, Error, FirstPlayer, Opponent, VecEnv};

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

/// An opponent that fails or answers an illegal action is an error naming the game.
#[test]
fn a_failing_opponent_is_an_error() {
    struct Broken(bool);
    impl Opponent for Broken {
        fn act(&mut self, _: &Position) -> Result<Action, String> {
            if self.0 { Err("went away".into()) } else { Ok(Action::Pass) }
        }
    }
    for failing in [true, false] {
        let config = Config { num_envs: 2, first_player: FirstPlayer::P0, ..Config::default() };
        let mut env = VecEnv::new(config).unwrap();
        let opponents: Vec<Box<dyn Opponent>> =
            vec![Box::new(Broken(failing)), Box::new(Broken(failing))];
        env.set_opponents(opponents, Player::P1).unwrap();
        let mut buf = env.buffers();
        let e = env.reset(None, &mut buf.view()).unwrap_err();
        assert!(matches!(e, Error::Opponent { env: 0, .. }), "{e}");
        let text = e.to_string();
        assert!(text.contains(if failing { "went away" } else { "illegal" }), "{text}");
    }
    let mut env = VecEnv::new(Config { num_envs: 2, ..Config::default() }).unwrap();
    let e = env.set_opponents(Vec::new(), Player::P1).unwrap_err();
    assert!(matches!(e, Error::Length { name: "opponents", .. }));
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
