"""MaskablePPO (sb3-contrib) learns ZÈRTZ against an engine player, then plays matches.

The environment is the Rust vectorized one behind Stable-Baselines3's VecEnv API
(``zertz.sb3.VecEnv``): every step, the learner moves in each of ``--envs`` games and the
opponent (``--opponent``, played in Rust) answers with its whole turn; the learner's reward is
+1 or -1 when a game ends. The trained policy then plays ``zertz.evaluate`` matches with paired
openings against ``random`` and ``greedy`` (W/D/L and Elo with 95% intervals).

    python examples/maskable_ppo.py --minutes 10            # BENCHMARKS.md's run
    python examples/maskable_ppo.py --steps 4096 --games 20  # a quick look

Needs ``pip install 'zertz[sb3]'`` (Stable-Baselines3, sb3-contrib, Gymnasium, torch).
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecMonitor

import zertz
from zertz.sb3 import VecEnv


class Deadline(BaseCallback):
    """Stops training once ``seconds`` have passed."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.end = time.monotonic() + seconds

    def _on_step(self) -> bool:
        return time.monotonic() < self.end


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--board", type=int, default=37)
    p.add_argument("--opponent", default="greedy", help="engine player to train against")
    p.add_argument("--envs", type=int, default=16, help="games stepped together")
    p.add_argument("--minutes", type=float, default=None, help="train for this long")
    p.add_argument("--steps", type=int, default=200_000, help="or for this many steps")
    p.add_argument("--games", type=int, default=200, help="games of each evaluation match")
    p.add_argument("--against", nargs="+", default=["random", "greedy"], help="who to play after")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--save", default=None, help="write the model here (.zip)")
    p.add_argument("--width", type=int, default=64, help="units of the two hidden layers")
    p.add_argument("--rollout", type=int, default=64, help="steps per game between updates")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--json", action="store_true", help="print the results as one JSON line")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    env = VecMonitor(VecEnv(args.envs, args.board, opponent=args.opponent, seed=args.seed))
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=args.rollout,  # x envs = the samples of an update
        batch_size=args.batch,
        n_epochs=args.epochs,
        learning_rate=args.lr,
        gamma=0.995,
        ent_coef=0.01,
        policy_kwargs={"net_arch": [args.width, args.width]},
        seed=args.seed,
        verbose=0,
    )
    budget = args.minutes * 60 if args.minutes is not None else float("inf")
    steps = 10**12 if args.minutes is not None else args.steps
    started = time.monotonic()
    model.learn(steps, callback=Deadline(budget), progress_bar=False)
    seconds = time.monotonic() - started
    print(
        f"trained {model.num_timesteps} steps in {seconds:.0f} s "
        f"({model.num_timesteps / seconds:.0f} steps/s) against {args.opponent}"
    )

    def policy(observation, mask):  # type: ignore[no-untyped-def]
        action, _ = model.predict(observation, action_masks=mask, deterministic=True)
        return int(action)

    results = zertz.evaluate(
        policy, args.against, games=args.games, board=args.board, seed=args.seed
    )
    if args.json:
        print(json.dumps({"steps": model.num_timesteps, "seconds": seconds, "results": results}))
    for result in results:
        print(
            f"against {result['opponent']}: {result['wins']}-{result['draws']}-"
            f"{result['losses']}, score {result['score']:.1%}, Elo {result['elo']:+.0f} "
            f"(95%: {result['elo_low']:+.0f} to {result['elo_high']:+.0f})"
        )
    if args.save:
        model.save(args.save)


if __name__ == "__main__":
    main()
