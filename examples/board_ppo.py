"""MaskablePPO with the board policy, started from people's games, then exported to the engine.

1. **The human start** (behaviour cloning, ``zertz.training.pretraining.clone``): the project's
   network learns the moves and results of the boardspace.net games (a dataset that
   ``--records`` makes in ``--dataset`` the first time) for ``--clone-steps`` steps; or
   ``--start FILE`` takes a network file as it is (one cloned before, or ``builtin``), and
   ``--clone-steps 0 --start tiny`` starts from nothing.
2. **PPO** (sb3-contrib's MaskablePPO with ``zertz.sb3.BoardPolicy``: the network's own policy
   and value heads) against ``--opponent`` in ``--envs`` games stepped in Rust, for
   ``--minutes`` or ``--steps``, or for what ``--total-minutes`` leaves after cloning.
3. **The matches**: ``zertz.evaluate`` with paired openings against ``--against`` (the raw
   policy, no search), W/D/L and Elo with 95% intervals.
4. **The engine**: ``--export agent.safetensors`` writes the network file that ``zertz match
   --player nn:agent.safetensors:1`` (no search) or ``nn:agent.safetensors:200`` (200
   simulations a move) plays, as do ``zertz play`` and ``zertz serve``.

    python examples/board_ppo.py --total-minutes 30 --threads 2 --export agent.safetensors \
        --opponent greedy greedy greedy greedy greedy greedy greedy random   # BENCHMARKS.md
    python examples/board_ppo.py --clone-steps 50 --steps 2048 --games 4    # a quick look

Needs ``zertz[sb3]`` and the engine (``zertz[train]``); the records are
``../shared/records/boardspace-zertz.tar.xz`` beside the repository (``--records``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecMonitor

import zertz
from zertz.agents import score_line
from zertz.boardnet import BoardNet
from zertz.sb3 import BoardPolicy, Deadline, VecEnv
from zertz.training.pretraining import clone

RECORDS = Path(__file__).resolve().parents[2] / "shared" / "records" / "boardspace-zertz.tar.xz"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--board", type=int, default=37)
    p.add_argument("--start", default="tiny", help="a preset (fresh weights) or network file")
    p.add_argument("--clone-steps", type=int, default=3000, help="behaviour cloning steps")
    p.add_argument("--dataset", default="data/human", help="the dataset of people's games")
    p.add_argument("--records", nargs="*", default=[str(RECORDS)], help="to make the dataset")
    p.add_argument(
        "--opponent",
        nargs="+",
        default=["greedy"],
        help="Rust's players to train against, one for each game in turn (greedy greedy "
        "greedy random: a quarter of the games against random)",
    )
    p.add_argument("--envs", type=int, default=64, help="games stepped together")
    p.add_argument("--minutes", type=float, default=None, help="PPO for this long")
    p.add_argument(
        "--total-minutes",
        type=float,
        default=None,
        help="cloning and PPO together for this long (PPO gets what cloning leaves)",
    )
    p.add_argument("--steps", type=int, default=100_000, help="or for this many steps")
    p.add_argument("--rollout", type=int, default=32, help="steps per game between updates")
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--games", type=int, default=200, help="games of each evaluation match")
    p.add_argument("--against", nargs="+", default=["random", "greedy"], help="who to play after")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch's threads (1: most steps a CPU second; 2: most a second on 2 idle cores)",
    )
    p.add_argument("--export", default=None, help="write the network file here")
    p.add_argument("--json", action="store_true", help="print the results as one JSON line")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    torch.distributions.Distribution.set_default_validate_args(False)
    began = time.monotonic()
    body = BoardNet(args.start, board=args.board)
    cloned: dict[str, float] = {}
    if args.clone_steps > 0:
        cloned = clone(
            body, args.dataset, records=args.records, steps=args.clone_steps, seed=args.seed
        )
    env = VecMonitor(VecEnv(args.envs, args.board, opponent=args.opponent, seed=args.seed))
    model = MaskablePPO(
        BoardPolicy,
        env,
        n_steps=args.rollout,
        batch_size=args.batch,
        n_epochs=args.epochs,
        learning_rate=args.lr,
        gamma=0.99,
        ent_coef=0.0,
        policy_kwargs={"network": body.net},
        seed=args.seed,
        verbose=0,
    )
    if args.total_minutes is not None:
        # A clone that took the whole budget leaves PPO one step of the environments.
        budget = max(args.total_minutes * 60 - (time.monotonic() - began), 1e-6)
    elif args.minutes is not None:
        budget = args.minutes * 60
    else:
        budget = float("inf")
    steps = args.steps if budget == float("inf") else 10**12
    started = time.monotonic()
    model.learn(steps, callback=Deadline(budget), progress_bar=False)
    seconds = time.monotonic() - started
    print(
        f"cloned {cloned.get('steps', 0)} steps in {cloned.get('seconds', 0.0):.0f} s; PPO "
        f"{model.num_timesteps} steps in {seconds:.0f} s against {' '.join(args.opponent)}"
    )

    def policy(observation, mask):  # type: ignore[no-untyped-def]
        action, _ = model.predict(observation, action_masks=mask, deterministic=True)
        return int(action)

    results = zertz.evaluate(
        policy, args.against, games=args.games, board=args.board, seed=args.seed
    )
    if args.export:
        assert isinstance(model.policy, BoardPolicy)
        print(f"exported {model.policy.export(args.export, step=model.num_timesteps)}")
    if args.json:
        print(
            json.dumps(
                {
                    "clone": cloned,
                    "steps": model.num_timesteps,
                    "seconds": seconds,
                    "results": results,
                }
            )
        )
    for result in results:
        print(f"against {score_line(result)}")


if __name__ == "__main__":
    main()
