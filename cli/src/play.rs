//! `zertz play`: a game against the engine in the terminal.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use zertz_env::{Board, Player, Variant};

use crate::common::{
    DeviceArgs, SearchThreadsArgs, VariantArgs, default_player, default_player_help, failed,
    player_help, spec_defaults,
};

/// The arguments of `zertz play`.
#[derive(Args, Debug)]
pub struct PlayArgs {
    /// The engine (see `zertz match --help` for the specs).
    #[arg(long, long_help = player_help(
        "The engine",
        &format!("{}. {}", spec_defaults(), default_player_help()),
    ))]
    pub opponent: Option<String>,
    /// Play against this network file (the same as --opponent nn:MODEL:SIMS).
    #[arg(long, conflicts_with = "opponent")]
    pub model: Option<PathBuf>,
    /// Simulations per move of the network given with --model (a count past the engine's most
    /// is refused, naming it).
    #[arg(
        long,
        requires = "model",
        default_value_t = zertz_arena::players::DEFAULT_NEURAL_SIMULATIONS,
        value_parser = clap::value_parser!(u32)
            .range(1..=i64::from(zertz_arena::players::MAX_SIMULATIONS))
    )]
    pub simulations: u32,
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub search: SearchThreadsArgs,
    #[command(flatten)]
    pub variant: VariantArgs,
    /// Let the engine move first.
    #[arg(long)]
    pub engine_first: bool,
    /// Seed of the engine.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

/// Plays a game against the engine on standard input and output.
pub fn run(args: PlayArgs) -> Result<ExitCode> {
    let PlayArgs { opponent, model, simulations, device, search, variant, engine_first, seed } =
        args;
    let (board, blitz) = (variant.board, variant.blitz);
    let opponent = match model {
        Some(m) => format!("nn:{}:{simulations}", m.display()),
        None => opponent.unwrap_or_else(|| default_player(board, blitz)),
    };
    play(&opponent, &device, search.get(), board, blitz, engine_first, seed)
}

fn play(
    opponent: &str,
    device: &DeviceArgs,
    search_threads: usize,
    board: Board,
    blitz: bool,
    engine_first: bool,
    seed: u64,
) -> Result<ExitCode> {
    use std::io::BufRead;
    use zertz_arena::players::PlayerSpec;
    let spec: PlayerSpec = opponent.parse().map_err(anyhow::Error::msg)?;
    let variant = Variant::of_blitz(board, blitz);
    let mut models = zertz_arena::Models::new().with_search_threads(search_threads);
    let inference = device.inference()?;
    for (key, network) in
        zertz_model::inference::load_networks(spec.network(), Some(variant), &inference)?
    {
        models.insert_key(key, network.evaluator);
    }
    let mut engine = spec.build(seed, &models).map_err(anyhow::Error::msg)?;
    let (you, them) =
        if engine_first { (Player::P1, Player::P0) } else { (Player::P0, Player::P1) };
    let mut game = zertz_env::Game::new(variant, Player::P0);
    // Positions before each of your turns, for undo.
    let mut history: Vec<zertz_env::Game> = Vec::new();
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    println!(
        "You are {you}; the engine ({}) is {them}. Type a move (Wd4,a1, b4xd6, pass), \
              `moves`, `undo` or `quit`.",
        engine.name()
    );
    loop {
        // The engine plays until it is your turn or the game ends.
        while !game.is_over() && game.position().turn() == them {
            let before = *game.position();
            let action = engine.choose(&before).map_err(failed)?;
            println!("{them} plays {}", before.action_to_string(&action));
            game.play_action(&action).map_err(|e| anyhow::anyhow!("the engine played {e}"))?;
            engine.observe(&before, &action);
        }
        print!("\n{}", game.position().diagram());
        if let Some(outcome) = game.outcome() {
            println!(
                "{}",
                match outcome.winner() {
                    Some(p) if p == you => "You win.",
                    Some(_) => "The engine wins.",
                    None => "Draw.",
                }
            );
            return Ok(ExitCode::SUCCESS);
        }
        print!("{you}> ");
        std::io::stdout().flush()?;
        let Some(line) = lines.next() else { return Ok(ExitCode::SUCCESS) };
        let line = line?;
        let input = line.trim();
        let pos = *game.position();
        match input {
            "" => continue,
            "quit" | "exit" => return Ok(ExitCode::SUCCESS),
            "moves" => {
                let moves: Vec<String> =
                    pos.legal_moves().iter().map(|m| pos.move_to_string(m)).collect();
                println!("{} legal moves: {}", moves.len(), moves.join(" "));
                continue;
            }
            "undo" => {
                match history.pop() {
                    Some(g) => {
                        game = g;
                        // The engine's tree follows the game only forwards: start it afresh.
                        engine = spec.build(seed, &models).map_err(anyhow::Error::msg)?;
                        println!("Undone.");
                    }
                    None => println!("Nothing to undo."),
                }
                continue;
            }
            _ => {}
        }
        let before = game.clone();
        // A whole move, or a single hop of a chain.
        let result = match pos.parse_legal_move(input) {
            Ok(m) => {
                let mut p = pos;
                let mut ok = true;
                for a in pos.move_actions(&m) {
                    ok &= game.play_action(&a).is_ok();
                    engine.observe(&p, &a);
                    p.play_action_unchecked(&a);
                }
                ok
            }
            Err(_) => match pos.parse_legal_action(input) {
                Ok(a) => {
                    let ok = game.play_action(&a).is_ok();
                    engine.observe(&pos, &a);
                    ok
                }
                Err(e) => {
                    let moves: Vec<String> =
                        pos.legal_moves().iter().map(|m| pos.move_to_string(m)).collect();
                    let shown = moves.iter().take(40).cloned().collect::<Vec<_>>().join(" ");
                    let more = if moves.len() > 40 { " …" } else { "" };
                    println!("{e}. Legal moves ({}): {shown}{more}", moves.len());
                    false
                }
            },
        };
        if result && before.position().turn() == you {
            history.push(before);
        }
    }
}
