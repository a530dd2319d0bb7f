"""PPO with action masks on the vectorized environment, in one file (CleanRL's style).

Two ways to learn, by ``--opponent``:

- one of Rust's players (``random``, ``greedy``, ``mcts:50``, ...): ``VectorEnv(opponent=...)``
  plays it in Rust, and the learner's reward is its own result: plain PPO;
- ``self``: self-play on the two-player environment (``opponent=None``). One network plays both
  sides; each game is two streams of decisions, one per player, and the returns are computed per
  stream: a decision's next state is the same player's next decision, its reward that player's
  result (``infos["rewards"]`` holds both players' each step, so the loser sees its -1), and at
  the end of a rollout the other player's stream is bootstrapped with the negated value of the
  position (zero-sum).

The trained policy then plays ``zertz.evaluate`` matches against ``random`` and ``greedy``.

    python examples/ppo_vector.py --opponent self --steps 40960   # about a minute
    python examples/ppo_vector.py --opponent greedy --minutes 5
    python examples/ppo_vector.py --opponent greedy --network human.safetensors --lr 1e-4 \
        --export agent.safetensors     # the project's network, from people's games

Torch computes on ``--threads`` threads (default 1, ``torch.set_num_threads``): its own default,
a thread per core, costs more CPU per step, and time where the cores are busy
(examples/maskable_ppo.py's measure); give it more where the cores are free and the network
wide.

Needs torch and Gymnasium (``pip install 'zertz[gymnasium]' torch``).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np
import torch
from torch import nn

import zertz
from zertz.agents import score_line
from zertz.gymnasium import VectorEnv
from zertz.observation import observation_size


class Agent(nn.Module):
    """An MLP with a policy head (one logit per action) and a value head."""

    def __init__(self, inputs: int, actions: int, width: int = 256) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(inputs, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU()
        )
        self.policy = nn.Linear(width, actions)
        self.value = nn.Linear(width, 1)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.body(obs)
        logits = self.policy(h).masked_fill(~mask, -1e9)
        return logits, self.value(h).squeeze(-1)


class BoardAgent(nn.Module):
    """The project's network (``zertz.boardnet.BoardNet``: a residual trunk over the board's
    rings, a head that scores each action from the rings it names, a value head) with the same
    answers as :class:`Agent`; ``--network`` names its start (a preset, a network file such as
    one cloned from people's games, or ``builtin``). Its batch norms stay in eval mode, so that
    the policy of a rollout and the one updated on it are the same function."""

    def __init__(self, network: str, board: int) -> None:
        super().__init__()
        from zertz.boardnet import BoardNet

        self.body = BoardNet(network, board=board)

    def train(self, mode: bool = True) -> BoardAgent:
        from zertz.boardnet import freeze_batch_norm

        super().train(mode)
        freeze_batch_norm(self.body)
        return self

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits, value = self.body(obs)
        return logits.masked_fill(~mask, -1e9), value

    def export(self, path: str) -> None:
        """The network file the engine plays (``nn:PATH``)."""
        self.body.export(path)


def advantages_per_player(
    values: np.ndarray,
    movers: np.ndarray,
    rewards: np.ndarray,
    dones: np.ndarray,
    last_value: np.ndarray,
    last_mover: np.ndarray,
    gamma: float,
    lam: float,
) -> np.ndarray:
    """GAE over the two players' streams of each game: ``values``, ``movers`` ``[T, N]`` (who
    decided at each step), ``rewards`` ``[T, N, 2]`` (both players' rewards of each step),
    ``dones`` ``[T, N]`` (the game ended at that step), the value of each game's current
    position for its player to move ``last_value`` and who that is ``last_mover``."""
    t_len, n = values.shape
    rows = np.arange(n)
    next_value = np.zeros((n, 2), np.float32)
    next_adv = np.zeros((n, 2), np.float32)
    live = np.ones((n, 2), np.float32)  # the next decision of the stream is in this game
    pending = np.zeros((n, 2), np.float32)  # reward owed to the stream's last decision
    next_value[rows, last_mover] = last_value
    next_value[rows, 1 - last_mover] = -last_value  # zero-sum: the other side's value
    adv = np.zeros((t_len, n), np.float32)
    for t in reversed(range(t_len)):
        end = dones[t]
        # A game that ended here: both streams end, each with its result.
        next_value[end] = 0.0
        next_adv[end] = 0.0
        live[end] = 0.0
        pending[end] = rewards[t][end]
        m = movers[t]
        delta = pending[rows, m] + gamma * live[rows, m] * next_value[rows, m] - values[t]
        adv[t] = delta + gamma * lam * live[rows, m] * next_adv[rows, m]
        next_value[rows, m] = values[t]
        next_adv[rows, m] = adv[t]
        live[rows, m] = 1.0
        pending[rows, m] = 0.0
    return adv


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--board", type=int, default=37)
    p.add_argument("--opponent", default="self", help="'self', or a player spec")
    p.add_argument("--envs", type=int, default=32)
    p.add_argument("--rollout", type=int, default=32, help="steps per game between updates")
    p.add_argument("--steps", type=int, default=200_000)
    p.add_argument("--minutes", type=float, default=None, help="train for this long instead")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--games", type=int, default=200, help="games of each evaluation match")
    p.add_argument("--against", nargs="+", default=["random", "greedy"], help="who to play after")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch's threads")
    p.add_argument("--width", type=int, default=64, help="units of the two hidden layers")
    p.add_argument(
        "--network",
        default=None,
        help="the project's network instead of the MLP: a preset (tiny), a network file, builtin",
    )
    p.add_argument("--export", default=None, help="with --network: write the network file here")
    p.add_argument("--json", action="store_true", help="print the results as one JSON line")
    args = p.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    selfplay = args.opponent == "self"
    envs = VectorEnv(
        args.envs, args.board, opponent=None if selfplay else args.opponent, seed=args.seed
    )
    n, t_len, a = args.envs, args.rollout, zertz.action_space_size(args.board)
    agent: Agent | BoardAgent
    if args.network is None:
        agent = Agent(observation_size(args.board), a, args.width)
    else:
        agent = BoardAgent(args.network, args.board).train()
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    gamma, lam, clip, epochs, minibatches = 0.995, 0.95, 0.2, 4, 4

    obs_buf = np.zeros((t_len, n, observation_size(args.board)), np.float32)
    mask_buf = np.zeros((t_len, n, a), bool)
    act_buf = np.zeros((t_len, n), np.int64)
    logp_buf = np.zeros((t_len, n), np.float32)
    val_buf = np.zeros((t_len, n), np.float32)
    mover_buf = np.zeros((t_len, n), np.int64)
    rew_buf = np.zeros((t_len, n, 2), np.float32)
    done_buf = np.zeros((t_len, n), bool)

    obs, infos = envs.reset(seed=args.seed)
    to_play = infos["to_play"].astype(np.int64)
    steps, started = 0, time.monotonic()
    deadline = started + args.minutes * 60 if args.minutes is not None else float("inf")
    while (steps < args.steps or args.minutes is not None) and time.monotonic() < deadline:
        for t in range(t_len):
            mask = envs.action_masks()
            with torch.no_grad():
                logits, value = agent(torch.from_numpy(obs), torch.from_numpy(mask))
                logp = torch.log_softmax(logits, -1)
                action = torch.multinomial(logp.exp(), 1)[:, 0]
            obs_buf[t], mask_buf[t], mover_buf[t] = obs, mask, to_play
            act_buf[t], logp_buf[t] = action.numpy(), logp.gather(1, action[:, None])[:, 0].numpy()
            val_buf[t] = value.numpy()
            obs, _, terminated, truncated, infos = envs.step(action.numpy())
            rew_buf[t], done_buf[t] = infos["rewards"], terminated | truncated
            to_play = infos["to_play"].astype(np.int64)
        steps += t_len * n
        with torch.no_grad():
            _, last_value = agent(torch.from_numpy(obs), torch.from_numpy(envs.action_masks()))
        if not selfplay:
            # The learner is P0 in every game: one stream per game.
            mover_buf[:] = 0
            to_play[:] = 0
        adv = advantages_per_player(
            val_buf, mover_buf, rew_buf, done_buf, last_value.numpy(), to_play, gamma, lam
        )
        returns = adv + val_buf
        b_obs = torch.from_numpy(obs_buf.reshape(t_len * n, -1))
        b_mask = torch.from_numpy(mask_buf.reshape(t_len * n, a))
        b_act = torch.from_numpy(act_buf.reshape(-1))
        b_logp = torch.from_numpy(logp_buf.reshape(-1))
        b_adv = torch.from_numpy(adv.reshape(-1))
        b_ret = torch.from_numpy(returns.reshape(-1))
        size = t_len * n // minibatches
        for _ in range(epochs):
            order = torch.randperm(t_len * n)
            for start in range(0, t_len * n, size):
                i = order[start : start + size]
                logits, value = agent(b_obs[i], b_mask[i])
                logp = torch.log_softmax(logits, -1)
                ratio = (logp.gather(1, b_act[i][:, None])[:, 0] - b_logp[i]).exp()
                adv_i = (b_adv[i] - b_adv[i].mean()) / (b_adv[i].std() + 1e-8)
                policy_loss = torch.max(
                    -adv_i * ratio, -adv_i * ratio.clamp(1 - clip, 1 + clip)
                ).mean()
                value_loss = 0.5 * (value - b_ret[i]).pow(2).mean()
                # The entropy of the legal actions (the masked ones have probability 0).
                entropy = -(logp.exp() * logp.clamp(min=-1e4)).sum(-1).mean()
                loss = policy_loss + 0.5 * value_loss - 0.01 * entropy
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
    seconds = time.monotonic() - started
    print(
        f"trained {steps} steps in {seconds:.0f} s ({steps / seconds:.0f} steps/s), "
        f"opponent {args.opponent}"
    )

    def policy(observation: Any, mask: Any) -> int:
        with torch.no_grad():
            logits, _ = agent(torch.from_numpy(observation)[None], torch.from_numpy(mask)[None])
        return int(logits.argmax())

    results = zertz.evaluate(
        policy, args.against, games=args.games, board=args.board, seed=args.seed
    )
    if args.export:
        if not isinstance(agent, BoardAgent):
            raise SystemExit("--export needs --network (a network the engine plays)")
        agent.export(args.export)
        print(f"exported {args.export}")
    if args.json:
        threads = torch.get_num_threads()
        print(
            json.dumps({"steps": steps, "seconds": seconds, "threads": threads, "results": results})
        )
    for r in results:
        print(f"against {score_line(r)}")


if __name__ == "__main__":
    main()
