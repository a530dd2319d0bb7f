//! Tunes the alpha-beta evaluation by matches: a candidate set of weights against the default
//! ones, paired games (each random opening played twice, the sides swapped), at a time per move,
//! games in parallel on every core. Prints the candidate's score with its Elo and 95% interval.
//!
//!     cargo run --release -p zertz-arena --example tune_alphabeta -- CANDIDATE [SECONDS] [PAIRS] [BOARD]
//!
//! CANDIDATE names one of the weight sets below (`list` prints them).

use std::time::Duration;

use rayon::prelude::*;
use zertz_arena::AlphaBetaBot;
use zertz_arena::Bot;
use zertz_arena::matches::{elo, play_game_from};
use zertz_env::{Board, Game, MarbleSet, Player, Position, SplitMix64, Variant};
use zertz_search::alphabeta::Weights;

fn candidates() -> Vec<(&'static str, Weights)> {
    let d = Weights::default();
    vec![
        ("default", d),
        // The default of the first round (its other candidates: BENCHMARKS.md).
        (
            "round1",
            Weights {
                need: [0, 700, 260, 110, 50, 24, 12, 6, 3, 2, 1, 1, 0],
                marble: [40, 30, 25],
                tempo: 20,
            },
        ),
        ("round2", Weights { need: [0, 1200, 400, 130, 45, 16, 6, 2, 1, 0, 0, 0, 0], ..d }),
        ("steepest", Weights { need: [0, 3000, 600, 120, 25, 6, 1, 0, 0, 0, 0, 0, 0], ..d }),
        ("sharp-two", Weights { need: [0, 2000, 800, 130, 35, 10, 3, 1, 0, 0, 0, 0, 0], ..d }),
    ]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all = candidates();
    let name = args.first().map_or("list", String::as_str);
    let Some(&(_, weights)) = all.iter().find(|(n, _)| *n == name) else {
        for (n, w) in &all {
            println!("{n}: {w:?}");
        }
        return;
    };
    let secs: f64 = args.get(1).map_or(0.1, |s| s.parse().expect("seconds"));
    let pairs: usize = args.get(2).map_or(50, |s| s.parse().expect("pairs"));
    let board: Board = args.get(3).map_or(Board::R37, |s| s.parse().expect("board"));
    let variant = Variant::new(board, MarbleSet::Standard);
    let time = Some(Duration::from_secs_f64(secs));
    let scores: Vec<f64> = (0..2 * pairs)
        .into_par_iter()
        .map(|g| {
            let mut rng = SplitMix64(0x5EED ^ (g / 2) as u64);
            let mut game = Game::from_position(Position::new(variant, Player::P0));
            for _ in 0..4 {
                let pos = *game.position();
                let a = pos.nth_legal_action(rng.below(pos.count_legal_actions())).expect("legal");
                game.play_action(&a).expect("legal");
            }
            let mut cand = AlphaBetaBot::new(None).with_weights(weights);
            let mut base = AlphaBetaBot::new(None);
            cand.set_move_time(time);
            base.set_move_time(time);
            let cand_first = g % 2 == 0;
            let (p0, p1): (&mut dyn Bot, &mut dyn Bot) =
                if cand_first { (&mut cand, &mut base) } else { (&mut base, &mut cand) };
            let played = play_game_from(p0, p1, game, 4, 2000).expect("a game");
            let cand_side = if cand_first { Player::P0 } else { Player::P1 };
            match played.winner {
                Some(w) if w == cand_side => 1.0,
                Some(_) => 0.0,
                None => 0.5,
            }
        })
        .collect();
    let wins = scores.iter().filter(|&&s| s == 1.0).count() as u32;
    let draws = scores.iter().filter(|&&s| s == 0.5).count() as u32;
    let losses = scores.len() as u32 - wins - draws;
    let score = scores.iter().sum::<f64>() / scores.len() as f64;
    println!(
        "{name} vs default, {secs} s per move, {} games on {variant}: +{wins} ={draws} -{losses}, \
         score {score:.3}, Elo {}",
        scores.len(),
        elo(wins, draws, losses)
    );
}
