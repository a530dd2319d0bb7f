"""MaskablePPO (sb3-contrib) learns ZÈRTZ in a league of its past selves, then plays matches.

The environment is the Rust vectorized one behind Stable-Baselines3's VecEnv API, with the
opponent of each game's episode drawn from a league (``zertz.league``): frozen snapshots of the
learner taken every ``--snapshot-every`` steps (at most ``--pool``, the oldest dropped),
Rust's players of ``--engines``, and the learner's current policy with probability
``--latest``; ``--draw pfsp`` draws most the members the learner loses to. The learner's wins,
draws and losses against each member go to SB3's logger (``league/...``) and, with ``--json``,
to the results line. The trained policy then plays ``zertz.evaluate`` matches with paired
openings against ``--against`` (W/D/L and Elo with 95% intervals).

    python examples/league_ppo.py --minutes 10 --engines greedy
    python examples/league_ppo.py --steps 4096 --games 20     # a quick look
    python examples/league_ppo.py --policy board --start human.safetensors --minutes 20 \
        --engines greedy --lr 1e-4                            # BENCHMARKS.md: from people's games

Needs ``pip install 'zertz[sb3]'`` (Stable-Baselines3, sb3-contrib, Gymnasium, torch).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecMonitor

import zertz
import zertz.sb3
from zertz.agents import score_line
from zertz.league import DRAWS, League, LeagueVecEnv
from zertz.sb3 import Deadline

#: The policies of ``--policy``: name -> what it is.
POLICIES = {
    "mlp": "SB3's MlpPolicy (MaskablePPO's), two hidden layers of --width units",
    "board": "zertz.sb3.BoardPolicy: the project's network from --start (a preset or a file)",
}


def make_policy_kwargs(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The policy of ``--policy`` as MaskablePPO takes it: ``(policy, policy_kwargs)``."""
    if args.policy == "mlp":
        return "MlpPolicy", {"net_arch": [args.width, args.width]}
    if args.policy == "board":
        return zertz.sb3.BoardPolicy, {"network": args.start}
    raise ValueError(f"--policy must be one of {sorted(POLICIES)}, not {args.policy!r}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--board", type=int, default=37)
    p.add_argument("--envs", type=int, default=64, help="games stepped together")
    p.add_argument("--minutes", type=float, default=None, help="train for this long")
    p.add_argument("--steps", type=int, default=200_000, help="or for this many steps")
    p.add_argument("--threads", type=int, default=1, help="torch's threads")
    p.add_argument("--policy", choices=sorted(POLICIES), default="mlp")
    p.add_argument(
        "--start", default="tiny", help="--policy board: a preset or network file to start from"
    )
    p.add_argument("--pool", type=int, default=8, help="snapshots kept (the oldest dropped)")
    p.add_argument("--snapshot-every", type=int, default=20_000, help="learner steps")
    p.add_argument("--engines", nargs="*", default=[], help="Rust's players in the pool (specs)")
    p.add_argument("--latest", type=float, default=0.5, help="chance of the current policy")
    p.add_argument("--draw", choices=DRAWS, default="uniform", help="how the pool is drawn")
    p.add_argument("--games", type=int, default=200, help="games of each evaluation match")
    p.add_argument("--against", nargs="+", default=["random", "greedy"], help="who to play after")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", default=None, help="write the model here (.zip)")
    p.add_argument("--export", default=None, help="--policy board: write the network file here")
    p.add_argument("--width", type=int, default=64, help="units of the two hidden layers")
    p.add_argument("--rollout", type=int, default=32, help="steps per game between updates")
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--json", action="store_true", help="print the results as one JSON line")
    args = p.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    # The masked distribution checks its arguments at every batch otherwise (6% of a profile).
    torch.distributions.Distribution.set_default_validate_args(False)
    env = VecMonitor(LeagueVecEnv(args.envs, args.board, seed=args.seed))
    policy, policy_kwargs = make_policy_kwargs(args)
    model = MaskablePPO(
        policy,
        env,
        n_steps=args.rollout,  # x envs = the samples of an update
        batch_size=args.batch,
        n_epochs=args.epochs,
        learning_rate=args.lr,
        gamma=0.99,
        ent_coef=0.0,
        policy_kwargs=policy_kwargs,
        seed=args.seed,
        verbose=0,
    )
    league = League(
        model,
        pool_size=args.pool,
        snapshot_every=args.snapshot_every,
        engines=args.engines,
        latest_probability=args.latest,
        draw=args.draw,
        seed=args.seed,
    )
    budget = args.minutes * 60 if args.minutes is not None else float("inf")
    steps = 10**12 if args.minutes is not None else args.steps
    started = time.monotonic()
    model.learn(steps, callback=[Deadline(budget), league], progress_bar=False)
    seconds = time.monotonic() - started
    print(
        f"trained {model.num_timesteps} steps in {seconds:.0f} s "
        f"({model.num_timesteps / seconds:.0f} steps/s) in a league of {league.pool} "
        f"and the latest policy"
    )
    for member in league.results():
        if member["games"]:
            print(
                f"  against {member['opponent']}: {member['wins']}-{member['draws']}-"
                f"{member['losses']} (W-D-L), score {member['score']:.1%}"
            )

    def policy_action(observation, mask):  # type: ignore[no-untyped-def]
        action, _ = model.predict(observation, action_masks=mask, deterministic=True)
        return int(action)

    results = zertz.evaluate(
        policy_action, args.against, games=args.games, board=args.board, seed=args.seed
    )
    if args.json:
        print(
            json.dumps(
                {
                    "steps": model.num_timesteps,
                    "seconds": seconds,
                    "results": results,
                    "league": league.results(),
                }
            )
        )
    for result in results:
        print(f"against {score_line(result)}")
    if args.save:
        model.save(args.save)
    if args.export:
        if not isinstance(model.policy, zertz.sb3.BoardPolicy):
            raise SystemExit("--export needs --policy board (a network the engine plays)")
        print(f"exported {model.policy.export(args.export, step=model.num_timesteps)}")


if __name__ == "__main__":
    main()
