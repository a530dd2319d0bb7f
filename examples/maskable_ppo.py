"""MaskablePPO (sb3-contrib) learns ZÈRTZ against one of Rust's players, then plays matches.

The environment is the Rust vectorized one behind Stable-Baselines3's VecEnv API
(``zertz.sb3.VecEnv``): every step, the learner moves in each of ``--envs`` games and the
opponent (``--opponent``, played in Rust) answers with its whole turn; the learner's reward is
+1 or -1 when a game ends. The trained policy then plays ``zertz.evaluate`` matches with paired
openings against ``random`` and ``greedy`` (W/D/L and Elo with 95% intervals).

The policy is SB3's MLP with one change: its last layer knows the action space's layout. A
placement's logit is a score of its marble colour on its ring plus a score of the ring it
removes, so that what is learnt about a ring serves every action that uses it, where a plain
4,441-way layer learns each action alone (BENCHMARKS.md: 93% against random after 400,000
steps, where the plain layer reached 81.5%).

    python examples/maskable_ppo.py --minutes 10            # BENCHMARKS.md's run
    python examples/maskable_ppo.py --steps 4096 --games 20  # a quick look

Torch computes on ``--threads`` threads (default 1, ``torch.set_num_threads``). Its own default,
a thread per core, costs more CPU per step: on two cores shared with other work, two threads
took 1.2 to 2 times one thread's CPU-seconds per step, and were faster in wall time only while
the other core was free. Give it more where the cores are free and the network wide.

Needs ``pip install 'zertz[sb3]'`` (Stable-Baselines3, sb3-contrib, Gymnasium, torch).
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.vec_env import VecMonitor
from torch import nn

import zertz
from zertz.agents import score_line
from zertz.sb3 import Deadline, VecEnv


class ActionLayoutHead(nn.Module):
    """Logits of the action space of ``rings`` rings (env/src/action_space.rs): placement
    ``(c R + at)(R + 1) + rm`` scores colour ``c`` on ring ``at`` plus removed ring ``rm`` (``R``:
    none); then the ``6 R`` hops (ring and direction) and the pass, one score each."""

    def __init__(self, latent: int, rings: int) -> None:
        super().__init__()
        assert 3 * rings * (rings + 1) + 6 * rings + 1 == zertz.action_space_size(rings)
        self.rings = rings
        self.placements = nn.Linear(latent, 3 * rings + rings + 1)  # colour x ring, removal
        self.others = nn.Linear(latent, 6 * rings + 1)  # hops, pass

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        r, p = self.rings, self.placements(latent)
        put = p[:, : 3 * r].reshape(-1, 3, r, 1)
        remove = p[:, 3 * r :].reshape(-1, 1, 1, r + 1)
        return torch.cat([(put + remove).flatten(1), self.others(latent)], dim=1)


class LayoutPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's MLP policy with :class:`ActionLayoutHead` as its last layer."""

    def _build(self, lr_schedule):  # type: ignore[no-untyped-def]
        super()._build(lr_schedule)
        # The board whose action space this is.
        sizes = {zertz.action_space_size(b): b for b in zertz.BOARDS}
        rings = sizes[self.action_space.n]  # type: ignore[attr-defined]
        self.action_net = ActionLayoutHead(self.mlp_extractor.latent_dim_pi, rings)
        self.action_net.apply(lambda m: self.init_weights(m, gain=0.01))
        self.optimizer = self.optimizer_class(
            self.parameters(),
            lr=lr_schedule(1),  # type: ignore[call-arg]
            **self.optimizer_kwargs,
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--board", type=int, default=37)
    p.add_argument("--opponent", default="random", help="player spec to train against")
    p.add_argument("--envs", type=int, default=64, help="games stepped together")
    p.add_argument("--minutes", type=float, default=None, help="train for this long")
    p.add_argument("--steps", type=int, default=200_000, help="or for this many steps")
    p.add_argument("--games", type=int, default=200, help="games of each evaluation match")
    p.add_argument("--against", nargs="+", default=["random", "greedy"], help="who to play after")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch's threads")
    p.add_argument("--save", default=None, help="write the model here (.zip)")
    p.add_argument("--width", type=int, default=64, help="units of the two hidden layers")
    p.add_argument("--rollout", type=int, default=32, help="steps per game between updates")
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--json", action="store_true", help="print the results as one JSON line")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    # The masked distribution checks its arguments at every batch otherwise (6% of a profile).
    torch.distributions.Distribution.set_default_validate_args(False)
    env = VecMonitor(VecEnv(args.envs, args.board, opponent=args.opponent, seed=args.seed))
    model = MaskablePPO(
        LayoutPolicy,
        env,
        n_steps=args.rollout,  # x envs = the samples of an update
        batch_size=args.batch,
        n_epochs=args.epochs,
        learning_rate=args.lr,
        gamma=0.99,
        ent_coef=0.0,
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
        threads = torch.get_num_threads()
        out = {"steps": model.num_timesteps, "seconds": seconds, "threads": threads}
        print(json.dumps({**out, "results": results}))
    for result in results:
        print(f"against {score_line(result)}")
    if args.save:
        model.save(args.save)


if __name__ == "__main__":
    main()
