"""League self-play for Stable-Baselines3 (the optional extra ``zertz[sb3]``): the learner plays a
pool of its own past selves (frozen snapshots of its policy), optionally Rust's players, and its
latest policy, with each episode's opponent drawn from the pool, as board-game agents are
trained with these libraries; the pool's results go to SB3's logger.

- :class:`LeagueVecEnv` is :class:`zertz.sb3.VecEnv` whose opponent (P1) in each game is the
  member of the league drawn for that game's episode: a new draw whenever a game ends.
- :class:`League` is the ``BaseCallback`` that holds the pool: a snapshot of the learner's policy
  when it is built and every ``snapshot_every`` learner steps after (at most ``pool_size``, the
  oldest dropped), the ``engines`` by their specs, and the learner's own current policy drawn
  with probability ``latest_probability``. It counts the learner's wins, draws and losses
  against each member from the episodes' ends (:meth:`League.results`) and records them under
  ``league/`` in the model's logger at each rollout's end.

The opponents are drawn for each game, not for the whole batch: the Rust environment is played
as a two-player batch, the learner's actions stepped in every game and then, in rounds, the
opponents' actions in the games where P1 is to move (``zertz.VecEnv.step`` with ``active``), each
group of games facing one member answered by that member at once (a snapshot's batched
``predict``, a Rust player's ``choose`` game by game). A game that ends restarts in the same
step with a new draw, and its info names the member it was played against
(``infos[i]["league_opponent"]``). The rules are those of ``zertz.sb3.VecEnv`` with an opponent.

>>> from sb3_contrib import MaskablePPO
>>> from stable_baselines3.common.vec_env import VecMonitor
>>> env = VecMonitor(LeagueVecEnv(4, board=37, seed=0))
>>> model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, seed=0)
>>> league = League(model, pool_size=4, snapshot_every=64, engines=["greedy"], seed=0)
>>> league.pool
['snapshot-0', 'greedy']
>>> [r["opponent"] for r in league.results()]  # the learner's results, the latest's included
['snapshot-0', 'greedy', 'latest']
>>> _ = model.learn(1_000, callback=league)  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnvWrapper

from zertz._zertz import Game
from zertz.agents import PlayerLike, checked_specs, player
from zertz.observation import flatten
from zertz.sb3 import VecEnv

#: How a member of the pool is drawn: all alike, or weighted by how badly the learner does
#: against it (prioritized fictitious self-play).
DRAWS = ("uniform", "pfsp")

#: What a member is: a frozen copy of the learner's policy, one of Rust's players (``"engine"``),
#: or the learner's own current policy.
Kind = Literal["snapshot", "engine", "latest"]


@dataclasses.dataclass(eq=False)
class _Member:
    """A member of the league, and the learner's results against it."""

    name: str
    kind: Kind
    #: The learner's steps when a snapshot was taken (None for the others).
    steps: int | None = None
    policy: MaskableActorCriticPolicy | None = None
    player: PlayerLike | None = None
    in_pool: bool = True
    drawn: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def result(self) -> dict[str, Any]:
        games = self.games
        return {
            "opponent": self.name,
            "kind": self.kind,
            "steps": self.steps,
            "in_pool": self.in_pool,
            "drawn": self.drawn,
            "games": games,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score": (self.wins + 0.5 * self.draws) / games if games else None,
        }


def _rows(obs: Any, rows: Any) -> Any:
    """The observations of ``rows`` (flat or dict)."""
    if isinstance(obs, dict):
        return {key: value[rows] for key, value in obs.items()}
    return obs[rows]


class LeagueVecEnv(VecEnv):
    """``num_envs`` games on the Rust vectorized environment with SB3's ``VecEnv`` API, as
    :class:`zertz.sb3.VecEnv` (its keywords but ``opponent``: ``observation``, ``threads``,
    ``max_steps``, ``first_player``, ``opening_plies``, ``seed``), where P1 in each game is
    the member of its :class:`League` drawn for that game's episode (see the module docs). The
    league is the one built on a model of this environment; a reset before that raises
    RuntimeError. An opponent that raises or answers an action that is not legal fails the
    step (its exception, or ValueError naming it and the game), and every later step raises
    RuntimeError until ``reset``. ``infos[i]["league_opponent"]`` names the member that game
    ``i`` was played against, in the step that ends it."""

    def __init__(self, num_envs: int, board: int = 37, blitz: bool = False, **kwargs: Any) -> None:
        if "opponent" in kwargs:
            raise TypeError(
                "LeagueVecEnv takes no opponent: its league draws one for each episode "
                "(zertz.sb3.VecEnv plays a single opponent)"
            )
        super().__init__(num_envs, board, blitz, opponent=None, **kwargs)
        self.league: League | None = None
        self._members: list[_Member] = []
        self._mask: npt.NDArray[np.bool_] = np.zeros(
            (num_envs, self.envs.env.action_space_size), dtype=bool
        )
        self._failure: str | None = None

    def _league(self) -> League:
        if self.league is None:
            raise RuntimeError(
                "LeagueVecEnv has no league yet: build League(model, ...) on the model of this "
                "environment before its first reset (learn makes it)"
            )
        return self.league

    def _observe(self, raw: dict[str, npt.NDArray[np.float32]]) -> Any:
        if self.envs.observation == "flat":
            return flatten(raw["planes"], raw["globals"])
        return raw

    def reset(self) -> Any:
        league = self._league()
        # As zertz.sb3.VecEnv: the batch takes the first of SB3's seeds.
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        self._failure = None
        raw, infos = self.envs.env.reset(seed)
        self._reset_seeds()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._members = league._draw(self.num_envs)
        # The opponents' first turns, where they begin; a result there is not reported (the
        # game restarts, as in the Rust environment with an opponent).
        done = np.ones(self.num_envs, dtype=bool)
        obs, infos = self._guarded(self._opponent_turns, self._observe(raw), infos, done, None)
        self._mask = infos["legal_action_mask"]
        return obs

    def _guarded(self, turns: Callable[..., Any], *args: Any) -> Any:
        """``turns(*args)``; a failure leaves the batch needing a reset."""
        try:
            return turns(*args)
        except BaseException as e:
            self._failure = f"{type(e).__name__}: {e}"
            raise

    def step_wait(
        self,
    ) -> tuple[Any, npt.NDArray[np.float32], npt.NDArray[np.bool_], list[dict[str, Any]]]:
        if self._failure is not None:
            raise RuntimeError(
                f"the environment needs a reset: a step failed before ({self._failure})"
            )
        n = self.num_envs
        # Every game has the learner (P0) to move: its actions everywhere.
        raw, both, terminated, truncated, infos = self.envs.env.step(self._actions)
        rewards = np.zeros(n, dtype=np.float32)
        done = np.zeros(n, dtype=bool)
        out: list[dict[str, Any]] = [{} for _ in range(n)]
        step = (rewards, out)
        self._ended(both, terminated, truncated, done, step)
        obs, infos = self._guarded(self._opponent_turns, self._observe(raw), infos, done, step)
        self._mask = infos["legal_action_mask"]
        return obs, rewards, done, out

    def _ended(
        self,
        both: npt.NDArray[np.float32],
        terminated: npt.NDArray[np.bool_],
        truncated: npt.NDArray[np.bool_],
        done: npt.NDArray[np.bool_],
        step: tuple[npt.NDArray[np.float32], list[dict[str, Any]]] | None,
    ) -> None:
        """Reports the games that the last call ended (into ``step``'s rewards and infos, and
        ``done``), but those already done in this step (a new game that the opponent's first
        turn ended: its result is not reported), and draws their next opponents."""
        ended = np.flatnonzero(terminated | truncated)
        if not ended.size:
            return
        league = self._league()
        report = [i for i in ended if not done[i]]
        if report and step is not None:
            rewards, out = step
            indices, final = self.envs.env.final_observations()
            finals = self._observe(final)
            where = {int(i): k for k, i in enumerate(indices)}
            for i in report:
                rewards[i] = both[i, 0]
                out[i]["terminal_observation"] = _rows(finals, where[int(i)])
                out[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
                out[i]["league_opponent"] = self._members[i].name
                done[i] = True
        for i, member in zip(ended, league._draw(len(ended)), strict=True):
            self._members[i] = member

    def _opponent_turns(
        self,
        obs: Any,
        infos: dict[str, Any],
        done: npt.NDArray[np.bool_],
        step: tuple[npt.NDArray[np.float32], list[dict[str, Any]]] | None,
    ) -> tuple[Any, dict[str, Any]]:
        """Plays the opponents' actions, in rounds of one action in every game where P1 is to
        move, until the learner is to move everywhere; the observations and infos then."""
        league = self._league()
        env = self.envs.env
        while True:
            to_move = infos["to_play"] == 1
            if not to_move.any():
                return obs, infos
            actions = league._answers(
                self._members, obs, infos["legal_action_mask"], to_move, env.game
            )
            raw, both, terminated, truncated, infos = env.step(actions, to_move)
            obs = self._observe(raw)
            self._ended(both, terminated, truncated, done, step)

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """Every game's legal actions (bool ``[N, A]``): the learner's."""
        return self._mask

    @property
    def opponents(self) -> list[str]:
        """The member each game's episode is played against, by game."""
        return [m.name for m in self._members]


class League(BaseCallback):
    """The pool of opponents of ``model``'s :class:`LeagueVecEnv` (wrapped or not: in
    ``VecMonitor``, say), and the callback of its ``learn`` that grows the pool and logs its
    results (see the module docs). ``model`` is sb3-contrib's ``MaskablePPO`` (or another
    algorithm whose policy takes action masks); its policy as it is now is the first snapshot.

    - ``pool_size`` (at least 1): the most snapshots kept, the oldest dropped first; a snapshot
      is a copy of ``model.policy`` (a new policy with its weights), in eval mode and without
      gradients, taken at the start of the first rollout after ``snapshot_every`` (at least 1)
      learner steps since the last one.
    - ``engines``: Rust's players by their specs (``zertz.PLAYER_SPECS``: ``"greedy"``,
      ``"mcts:100"``), members for good; one player each, seeded from ``seed``, given each game
      it plays in turn (a copy of it).
    - ``latest_probability`` (0 to 1): the chance that an episode's opponent is the learner's
      own current policy (``model.policy`` as it trains); otherwise a member of the pool
      (snapshots and engines), drawn by ``draw``: ``"uniform"``, or ``"pfsp"`` (prioritized
      fictitious self-play: weighted by ``(1 - s) ** 2``, ``s`` the learner's score against it
      so far, smoothed as ``(wins + draws / 2 + 1) / (games + 2)``, so that the members it
      loses to are drawn most and those it always beats seldom).
    - ``deterministic``: whether the policies' opponents play their most likely action
      (False: they sample, as the learner does while it trains).
    - ``seed``: the draws' (and those of Rust's players), so that a seeded run draws the same
      opponents; None: unseeded.

    The learner's wins, draws and losses against each member are counted from the episodes'
    ends (``infos[i]["episode"]["r"]`` of ``VecMonitor``, else the step's reward: +1 a win, -1
    a loss, 0 a draw or a truncated game), every finished episode once, in :meth:`results`
    and, at each rollout's end, in the model's logger: ``league/<member>/wins``, ``draws`` and
    ``losses`` for each member of the pool and the latest policy, ``league/snapshots`` (taken
    in all) and ``league/pool`` (the pool's members). ValueError or TypeError for a setting out
    of its range, a spec of ``engines`` that is not a player, a player named twice, or a model whose
    environment is not a :class:`LeagueVecEnv` or whose policy takes no action masks."""

    def __init__(
        self,
        model: BaseAlgorithm,
        *,
        pool_size: int = 8,
        snapshot_every: int = 50_000,
        engines: Iterable[str] | str = (),
        latest_probability: float = 0.5,
        draw: str = "uniform",
        deterministic: bool = False,
        seed: int | None = 0,
        verbose: int = 0,
    ) -> None:
        super().__init__(verbose)
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise ValueError(f"pool_size: must be an integer of at least 1, not {pool_size!r}")
        if (
            isinstance(snapshot_every, bool)
            or not isinstance(snapshot_every, int)
            or snapshot_every < 1
        ):
            raise ValueError(
                f"snapshot_every: must be an integer of at least 1 (learner steps), "
                f"not {snapshot_every!r}"
            )
        if not isinstance(latest_probability, int | float) or not 0 <= latest_probability <= 1:
            raise ValueError(
                f"latest_probability: must be a probability (0 to 1), not {latest_probability!r}"
            )
        if draw not in DRAWS:
            raise ValueError(f"draw must be 'uniform' or 'pfsp', not {draw!r}")
        if not isinstance(model.policy, MaskableActorCriticPolicy):
            raise TypeError(
                "League's opponents play with the legal actions' masks: the model must be "
                "sb3-contrib's MaskablePPO (a MaskableActorCriticPolicy), not one with a "
                f"{type(model.policy).__name__}"
            )
        env = model.get_env()
        while isinstance(env, VecEnvWrapper):
            env = env.venv
        if not isinstance(env, LeagueVecEnv):
            raise ValueError(
                "League plays the opponents of a zertz.league.LeagueVecEnv (wrapped or not); "
                f"the model's environment is {type(env).__name__}"
            )
        if env.league is not None:
            raise ValueError("this LeagueVecEnv already has its league")
        self.pool_size = pool_size
        self.snapshot_every = snapshot_every
        self.latest_probability = float(latest_probability)
        self.draw = draw
        self.deterministic = deterministic
        self.env = env
        self.model = model
        self._model = model
        self._rng = np.random.default_rng(seed)
        self._snapshots: list[_Member] = []
        self._members: list[_Member] = []  # every member ever, in order of joining
        self._by_name: dict[str, _Member] = {}
        self._taken = 0
        self._last_steps = model.num_timesteps
        self._engines = self._build_engines(engines, seed)
        self._latest = self._join(_Member("latest", "latest"))
        self.snapshot()
        env.league = self

    def _build_engines(self, engines: Iterable[str] | str, seed: int | None) -> list[_Member]:
        listed = checked_specs(engines, "engines", "engines:")
        board, blitz = self.env.envs.env.board, self.env.envs.env.blitz
        base = 0 if seed is None else seed
        members = []
        for k, spec in enumerate(listed):
            try:
                built = player(spec, board, blitz, seed=base + k)
            except (ValueError, OSError) as e:
                raise ValueError(f"engines: {spec!r}: {e}") from None
            members.append(self._join(_Member(spec, "engine", player=built)))
        return members

    def _join(self, member: _Member) -> _Member:
        self._members.append(member)
        self._by_name[member.name] = member
        return member

    def _init_callback(self) -> None:
        if self.model is not self._model:
            raise ValueError("this League is the callback of the model it was built with")

    @property
    def pool(self) -> list[str]:
        """The members an episode's opponent is drawn from, but the latest policy: the
        snapshots (oldest first), then Rust's players."""
        return [m.name for m in self._snapshots + self._engines]

    @property
    def snapshots(self) -> list[MaskableActorCriticPolicy]:
        """The snapshots in the pool, oldest first (frozen copies of the learner's policy)."""
        return [m.policy for m in self._snapshots if m.policy is not None]

    def snapshot(self) -> None:
        """Adds a snapshot of the learner's policy as it is now to the pool (dropping the
        oldest beyond ``pool_size``); the callback calls it every ``snapshot_every`` steps."""
        policy = self.model.policy
        # A new policy of the same class and settings with the learner's weights, as SB3 loads
        # a saved one (a deep copy would copy what the last forward pass left behind too).
        frozen = type(policy)(**policy._get_constructor_parameters())
        frozen.load_state_dict(policy.state_dict())
        frozen.to(policy.device)
        frozen.set_training_mode(False)
        frozen.requires_grad_(False)
        assert isinstance(frozen, MaskableActorCriticPolicy)
        steps = self.model.num_timesteps
        member = self._join(_Member(f"snapshot-{self._taken}", "snapshot", steps, policy=frozen))
        self._taken += 1
        self._last_steps = steps
        self._snapshots.append(member)
        while len(self._snapshots) > self.pool_size:
            dropped = self._snapshots.pop(0)
            dropped.in_pool = False  # (games in progress against it play on)
        if self.verbose >= 1:
            print(f"league: {member.name} at {steps} steps; pool {self.pool}")

    def _draw(self, count: int) -> list[_Member]:
        """``count`` opponents drawn for new episodes."""
        pool = self._snapshots + self._engines
        if self.draw == "pfsp":
            scores = np.array([(m.wins + 0.5 * m.draws + 1) / (m.games + 2) for m in pool])
            weights = (1 - scores) ** 2
        else:
            weights = np.ones(len(pool))
        latest = self._rng.random(count) < self.latest_probability
        picks = self._rng.choice(len(pool), size=count, p=weights / weights.sum())
        drawn = [self._latest if x else pool[k] for x, k in zip(latest, picks, strict=True)]
        for member in drawn:
            member.drawn += 1
        return drawn

    def _answers(
        self,
        members: Sequence[_Member],
        obs: Any,
        masks: npt.NDArray[np.bool_],
        to_move: npt.NDArray[np.bool_],
        game: Callable[[int], Game],
    ) -> npt.NDArray[np.int64]:
        """The actions of the games ``to_move`` (an action each, 0 elsewhere), each game's
        answered by its member, the games of one member together."""
        actions = np.zeros(len(members), dtype=np.int64)
        groups: dict[_Member, list[int]] = {}
        for i in np.flatnonzero(to_move).tolist():
            groups.setdefault(members[i], []).append(i)
        for member, games in groups.items():
            rows = np.array(games, dtype=np.intp)
            if member.player is not None:
                actions[rows] = [member.player.choose(game(i)) for i in games]
            else:
                policy = member.policy if member.kind == "snapshot" else self.model.policy
                assert isinstance(policy, MaskableActorCriticPolicy)
                answer, _ = policy.predict(
                    _rows(obs, rows), deterministic=self.deterministic, action_masks=masks[rows]
                )
                actions[rows] = np.asarray(answer).reshape(len(games))
            legal = masks[rows, actions[rows]]
            if not legal.all():
                bad = games[int(np.flatnonzero(~legal)[0])]
                raise ValueError(
                    f"the league's opponent {member.name!r} answered action {actions[bad]} in game "
                    f"{bad}, which is not legal there"
                )
        return actions

    def _on_training_start(self) -> None:
        # A learn that counts its steps from 0 again counts the snapshots' interval from there.
        self._last_steps = min(self._last_steps, self.model.num_timesteps)

    def _on_rollout_start(self) -> None:
        if self.model.num_timesteps - self._last_steps >= self.snapshot_every:
            self.snapshot()

    def _on_step(self) -> bool:
        infos: list[dict[str, Any]] = self.locals["infos"]
        dones = self.locals["dones"]
        rewards = self.locals["rewards"]
        for i in np.flatnonzero(dones):
            info = infos[i]
            name = info.get("league_opponent")
            if name is None:
                continue
            member = self._by_name[name]
            result = float(info["episode"]["r"] if "episode" in info else rewards[i])
            if result > 0:
                member.wins += 1
            elif result < 0:
                member.losses += 1
            else:
                member.draws += 1
        return True

    def _on_rollout_end(self) -> None:
        members = self._snapshots + self._engines
        if self.latest_probability > 0:
            members = [*members, self._latest]
        for m in members:
            self.logger.record(f"league/{m.name}/wins", m.wins)
            self.logger.record(f"league/{m.name}/draws", m.draws)
            self.logger.record(f"league/{m.name}/losses", m.losses)
        self.logger.record("league/snapshots", self._taken)
        self.logger.record("league/pool", len(self._snapshots) + len(self._engines))

    def results(self) -> list[dict[str, Any]]:
        """The learner's results against every member that has been in the league (the
        snapshots in the order taken, dropped ones included, then Rust's players, then the
        latest policy): ``{"opponent" (its name), "kind" ("snapshot", "engine" or "latest"),
        "steps" (the learner's when a snapshot was taken, else None), "in_pool", "drawn"
        (episodes it was drawn for, those in progress included), "games", "wins", "draws",
        "losses", "score" (the learner's, (wins + draws / 2) / games; None before a game)}``."""
        order = {"snapshot": 0, "engine": 1, "latest": 2}
        members = sorted(self._members, key=lambda m: order[m.kind])
        return [m.result() for m in members]
