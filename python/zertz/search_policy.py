"""Search around any policy: a library's policy (logits and a value) as the evaluator of the
engine's MCTS, so that a user sees what search adds to their own agent.

- A *policy-value function* is a batched callable ``fn(observations, masks) -> (logits,
  values)``: observations ``[B, ...]`` of the ``"flat"`` or ``"dict"`` kind (as the Gymnasium
  environments give them, batched), bool masks ``[B, A]``, and back logits ``[B, A]`` and values
  ``[B]`` from the point of view of the player to move (a win +1, a loss -1).
  :func:`sb3_policy_value` makes one of a Stable-Baselines3 or sb3-contrib actor-critic model
  (``PPO``, ``A2C``, ``MaskablePPO``).
- :class:`PolicyEvaluator` turns one into ``zertz.MCTS``'s evaluator, checking its answers.
- :class:`SearchBot` searches with it at each move: a bot (``name``, ``choose(game)``)
  for ``zertz.evaluate`` and as ``ZertzEnv``'s opponent; :meth:`SearchBot.vector_opponent`
  is the vector environments' batched opponent, one search for all their games.

>>> import numpy as np
>>> import zertz
>>> from zertz.search_policy import SearchBot
>>> def closer_to_a_win(observations, masks):  # flat observations: the globals come last
...     g = observations[:, -20:]  # own and opponent distances to each win set: 9..13, 13..17
...     values = np.tanh(2.0 * (g[:, 13:17].min(axis=1) - g[:, 9:13].min(axis=1)))
...     return np.zeros(masks.shape, np.float32), values
>>> searcher = SearchBot(closer_to_a_win, simulations=16)
>>> searcher.name
'closer_to_a_win+mcts:16'
>>> game = zertz.Game()
>>> bool(game.legal_action_mask()[searcher.choose(game)])
True
>>> result = zertz.evaluate(searcher, ["random"], games=2, progress=False)[0]
>>> result["wins"] + result["draws"] + result["losses"]
2
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from zertz._zertz import MCTS, Game, observation_shape, ring_cells
from zertz.observation import check_observation, flatten

__all__ = [
    "PolicyEvaluator",
    "PolicyValue",
    "SearchBot",
    "game_from_observation",
    "sb3_policy_value",
]

#: A batched policy-value function: ``fn(observations [B, ...], masks [B, A]) -> (logits [B, A],
#: values [B])``, values from the point of view of the player to move.
PolicyValue: TypeAlias = Callable[[Any, npt.NDArray[np.bool_]], Any]

#: What :class:`PolicyEvaluator` does with a value outside [-1, 1].
ValueRange: TypeAlias = Literal["clip", "check"]


def _name_of(fn: object) -> str:
    """A policy's name for messages: its ``name`` (a string), else its ``__name__``, else its
    type's name."""
    for attribute in ("name", "__name__"):
        name = getattr(fn, attribute, None)
        if isinstance(name, str):
            return name
    return type(fn).__name__


def _array(what: str, x: Any) -> npt.NDArray[np.float32]:
    """``x`` as a float32 array (a CPU tensor converts too); ValueError naming ``what``."""
    try:
        return np.asarray(x, dtype=np.float32)
    except (TypeError, ValueError, RuntimeError) as e:  # RuntimeError: a tensor on a GPU
        raise ValueError(f"{what} are not an array of numbers ({type(x).__name__}: {e})") from e


class PolicyEvaluator:
    """``zertz.MCTS``'s evaluator ``(planes, globals, masks) -> (logits, values)`` made of the
    policy-value function ``policy`` (see the module docs), which is given the observations of
    ``observation``'s kind (None: ``policy.observation`` where it has one, as
    :func:`sb3_policy_value`'s has, else ``"flat"``) and a copy of the masks.

    Its answers are checked, and a ValueError naming the policy (``name``; None: its own
    ``name``, else its ``__name__``) says what is wrong: not a pair, logits not of shape
    ``[B, A]``, values not of ``[B]`` (or ``[B, 1]``, a critic's), a legal action's logit or a
    value that is not finite. Logits of illegal actions are never used (a masked distribution's
    ``-inf`` is welcome). ``values="clip"`` (default) clips values to [-1, 1]: a critic is a
    regression without bounds that overshoots a little near the end of a game, and the search
    scores finished games exactly as -1, 0 or +1, so a guess above 1 would rank above a proven
    win. ``values="check"`` refuses a value outside [-1, 1] (by more than 1e-4) instead: for a
    head bounded by construction (tanh), where one outside reveals a value on another scale.
    ``calls`` and ``positions`` count the calls and the positions evaluated.
    """

    def __init__(
        self,
        policy: PolicyValue,
        observation: str | None = None,
        *,
        name: str | None = None,
        values: ValueRange = "clip",
    ) -> None:
        if not callable(policy):
            raise TypeError(f"policy must be a callable fn(observations, masks), not {policy!r}")
        if values not in ("clip", "check"):
            raise ValueError(f"values must be 'clip' or 'check', not {values!r}")
        if observation is None:
            observation = getattr(policy, "observation", "flat")
        self.policy = policy
        self.observation = check_observation(str(observation))
        self.name = name if name is not None else _name_of(policy)
        self.values: ValueRange = values
        self.calls = 0
        self.positions = 0

    def __repr__(self) -> str:
        return f"PolicyEvaluator({self.name!r}, observation={self.observation!r})"

    def __call__(
        self,
        planes: npt.NDArray[np.float32],
        globals_: npt.NDArray[np.float32],
        masks: npt.NDArray[np.bool_],
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        if self.observation == "flat":
            observations: Any = flatten(planes, globals_)
        else:
            observations = {"planes": planes, "globals": globals_}
        answer = self.policy(observations, masks.copy())
        self.calls += 1
        self.positions += len(masks)
        return self.check(answer, masks)

    def check(
        self, answer: Any, masks: npt.NDArray[np.bool_]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """The policy's ``answer`` for positions of legal ``masks`` ``[B, A]``, checked (see the
        class docs): float32 logits ``[B, A]`` (illegal actions' set to 0) and values ``[B]``."""
        who = f"the policy {self.name!r}"
        if not isinstance(answer, (tuple, list)) or len(answer) != 2:
            raise ValueError(f"{who} answered {type(answer).__name__}, not (logits, values)")
        logits = _array(f"{who}: its logits", answer[0])
        values = _array(f"{who}: its values", answer[1])
        b, a = masks.shape
        if logits.shape != (b, a):
            raise ValueError(f"{who}: logits have shape {logits.shape}, not [B, A] = {(b, a)}")
        if values.shape == (b, 1):
            values = values.reshape(b)
        if values.shape != (b,):
            raise ValueError(f"{who}: values have shape {values.shape}, not [B] = {(b,)}")
        bad = masks & ~np.isfinite(logits)
        if bad.any():
            row, action = (int(i[0]) for i in np.nonzero(bad))
            raise ValueError(
                f"{who}: the logit of legal action {action} of position {row} is "
                f"{logits[row, action]} (the logits of legal actions must be finite)"
            )
        if not np.isfinite(values).all():
            row = int(np.flatnonzero(~np.isfinite(values))[0])
            raise ValueError(f"{who}: the value of position {row} is {values[row]}, not finite")
        if self.values == "check":
            outside = np.abs(values) > 1.0 + 1e-4
            if outside.any():
                row = int(np.flatnonzero(outside)[0])
                raise ValueError(
                    f"{who}: the value of position {row} is {values[row]}, outside [-1, 1] "
                    "(values='check'; values='clip' clips)"
                )
        return np.where(masks, logits, np.float32(0.0)), np.clip(values, -1.0, 1.0)


class Sb3PolicyValue:
    """The policy-value function of a Stable-Baselines3 actor-critic model (see
    :func:`sb3_policy_value`)."""

    def __init__(self, model: Any) -> None:
        import inspect

        from gymnasium import spaces

        policy: Any = getattr(model, "policy", None)
        if not (hasattr(policy, "get_distribution") and hasattr(policy, "predict_values")):
            raise TypeError(
                f"{type(model).__name__} is not an actor-critic model (PPO, A2C, MaskablePPO): "
                "its policy has no get_distribution and predict_values"
            )
        if not isinstance(model.action_space, spaces.Discrete):
            raise TypeError(f"the model's action space is {model.action_space}, not Discrete")
        self.model = model
        self.name = type(model).__name__
        self.actions = int(model.action_space.n)
        self.observation = "dict" if isinstance(model.observation_space, spaces.Dict) else "flat"
        parameters = inspect.signature(policy.get_distribution).parameters
        self.maskable = "action_masks" in parameters

    def __repr__(self) -> str:
        return f"sb3_policy_value({self.name})"

    def __call__(
        self, observations: Any, masks: npt.NDArray[np.bool_]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        import torch

        if masks.shape[-1] != self.actions:
            raise ValueError(
                f"the model {self.name} has {self.actions} actions, the positions "
                f"{masks.shape[-1]} (a model of another board?)"
            )
        policy = self.model.policy
        training = policy.training
        policy.set_training_mode(False)
        try:
            with torch.no_grad():
                obs, _ = policy.obs_to_tensor(observations)
                if self.maskable:
                    distribution = policy.get_distribution(obs, action_masks=masks)
                else:
                    distribution = policy.get_distribution(obs)
                logits = distribution.distribution.logits
                values = policy.predict_values(obs)
        finally:
            policy.set_training_mode(training)
        return (
            logits.float().cpu().numpy(),
            values.reshape(-1).float().cpu().numpy(),
        )


def sb3_policy_value(model: Any) -> Sb3PolicyValue:
    """The batched policy-value function of a Stable-Baselines3 or sb3-contrib actor-critic
    ``model`` (``PPO``, ``A2C``, ``MaskablePPO``) with a ``Discrete`` action space: the
    observations go to a tensor on the policy's device (``policy.obs_to_tensor``), the logits
    are those of ``policy.get_distribution(obs, action_masks=masks).distribution``
    (``MaskablePPO``; the others' without masks, as the search looks at the legal actions'
    alone) and the values ``policy.predict_values(obs)``, under ``torch.no_grad()`` in
    evaluation mode (the policy's mode is restored after). Its ``observation`` is the model's
    kind (``"dict"`` for a ``Dict`` space, else ``"flat"``), which :class:`PolicyEvaluator`
    takes. TypeError for a model without a critic (DQN) or a discrete action space; torch is
    imported at the first call. Positions of another count of actions than the model's (a model
    of another board) are a ValueError.

    The value of an SB3 model is the discounted return it expects at its own decisions, from
    the learner's point of view: as the observations are the mover's, that is the player to
    move's, the sign MCTS wants. It is not the expected result: with rewards only at the end,
    ``V = gamma^k E[result]`` for a game ``k`` of the learner's steps from its end (``gamma``
    0.99: 0.6 at 50 steps), so values shrink toward 0 far from the end, while the search scores
    finished games +-1 exactly. It was also learnt against the opponent it trained with (a
    random player's mistakes included), not against the search's best replies. A ``gamma``
    close to 1 makes it a better evaluator."""
    return Sb3PolicyValue(model)


class SearchBot:
    """A bot that searches ``simulations`` simulations (at least 2: one evaluates the root
    alone) of ``zertz.MCTS`` at each move with the policy-value function ``policy`` as its
    evaluator (wrapped in a :class:`PolicyEvaluator` with ``observation`` and ``values``, unless
    it is one; errors name the policy as it names itself), and plays the search's move: the most
    visited (with a proven win, one; never an avoidable proven loss), or at ``temperature``
    above 0 one drawn from the visits to the power ``1 / temperature`` by a generator seeded
    ``seed``. ``preset`` and ``settings`` are ``zertz.MCTS``'s (None: the ``"default"``
    preset; ``"network"`` flattens sharp priors with a policy temperature of 3); a Gumbel root
    (``gumbel_actions``) plays the best of its improved policy. A position with one legal action
    is answered without search.

    It is a bot (``name``: ``POLICY+mcts:SIMULATIONS`` unless ``name`` is given;
    ``choose(game)``), so ``zertz.evaluate(SearchBot(...), ["greedy"])`` measures it and
    ``ZertzEnv(opponent=SearchBot(...))`` plays against it. :meth:`choose_many` searches many
    games at once (one evaluator call serves leaves of all of them); :meth:`vector_opponent` is
    that for the vector environments."""

    def __init__(
        self,
        policy: PolicyValue | PolicyEvaluator,
        simulations: int = 200,
        *,
        observation: str | None = None,
        values: ValueRange = "clip",
        name: str | None = None,
        temperature: float = 0.0,
        seed: int = 0,
        preset: Literal["default", "rollout", "network"] | None = None,
        **settings: Any,
    ) -> None:
        if isinstance(policy, PolicyEvaluator):
            if observation is not None or values != "clip":
                raise TypeError("observation and values are the PolicyEvaluator's own")
            self.evaluator = policy
        else:
            self.evaluator = PolicyEvaluator(policy, observation, values=values)
        if isinstance(simulations, bool) or not isinstance(simulations, int):
            raise TypeError(f"simulations must be an int, not {simulations!r}")
        if simulations < 2:
            raise ValueError(
                f"simulations: must be at least 2 (one evaluates the root alone), not {simulations}"
            )
        if not (np.isfinite(temperature) and temperature >= 0):
            raise ValueError(f"temperature: must be a finite number, 0 or more, not {temperature}")
        self.simulations = simulations
        self.temperature = float(temperature)
        self.mcts = MCTS(self.evaluator, preset=preset, **settings)
        self._name = name if name is not None else f"{self.evaluator.name}+mcts:{simulations}"
        self._rng = np.random.default_rng(seed)

    @property
    def name(self) -> str:
        """The bot's name."""
        return self._name

    def __repr__(self) -> str:
        return f"SearchBot({self._name!r})"

    def search(
        self, games: Sequence[Game]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.uint32]]:
        """``zertz.MCTS.search`` of ``games`` (all of one board) with this bot's evaluator,
        settings and simulations: ``(policies [N, A], values [N], visits [N])``, to compare the
        search's policy with the policy's own."""
        return self.mcts.search(list(games), self.simulations)

    def choose(self, game: Game) -> int:
        """The action index this bot plays in ``game``'s position (ValueError once the game
        is over)."""
        return self.choose_many([game])[0]

    def choose_many(self, games: Iterable[Game]) -> list[int]:
        """The action index this bot plays in each of ``games`` (all of one board), searched
        together: one evaluator call serves leaves of every game. ValueError where a game is
        over."""
        listed = list(games)
        chosen: list[int] = [0] * len(listed)
        searched: list[int] = []
        for i, game in enumerate(listed):
            if game.is_over:
                raise ValueError(f"game {i} is over ({game.outcome}): there is no move to choose")
            legal = game.legal_action_indices()
            if len(legal) == 1:
                chosen[i] = int(legal[0])
            else:
                searched.append(i)
        if searched:
            policies, _, _ = self.search([listed[i] for i in searched])
            for i, row in zip(searched, policies, strict=True):
                chosen[i] = self._pick(row)
        return chosen

    def _pick(self, policy: npt.NDArray[np.float32]) -> int:
        """The move of a search's policy row: its best, or one drawn at the temperature."""
        if self.temperature == 0.0:
            return int(np.argmax(policy))
        weights = policy.astype(np.float64) ** (1.0 / self.temperature)
        total = weights.sum()
        if not (np.isfinite(total) and total > 0):  # a tiny temperature: the best
            return int(np.argmax(policy))
        return int(self._rng.choice(len(weights), p=weights / total))

    def vector_opponent(
        self, board: int = 37, blitz: bool = False
    ) -> Callable[[Any, npt.NDArray[np.bool_]], npt.NDArray[np.int64]]:
        """This bot as the batched opponent ``opponent(observations, masks) -> actions`` of
        the vector environments of ``board`` rings and the marble set (``zertz.VecEnv``,
        ``zertz.gymnasium.VectorEnv``, ``zertz.sb3.VecEnv``), which give it the observations
        (flat or dict) and masks of the games where it is to move, not the games: each game's
        position is rebuilt from its observation (:func:`game_from_observation`: exact, as the
        search looks at the position alone) and checked against its mask, and all are searched
        at once (:meth:`choose_many`)."""
        (c, h, w), g = observation_shape(board)

        def opponent(observations: Any, masks: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
            if isinstance(observations, dict):
                planes, globals_ = observations["planes"], observations["globals"]
            else:
                flat = np.asarray(observations, dtype=np.float32)
                if flat.ndim != 2 or flat.shape[1] != c * h * w + g:
                    raise ValueError(
                        f"observations of shape {flat.shape} are not flat ones of {board} rings"
                    )
                planes, globals_ = flat[:, : c * h * w].reshape(-1, c, h, w), flat[:, c * h * w :]
            games = []
            for i in range(len(masks)):
                game = game_from_observation(planes[i], globals_[i], board, blitz)
                if not np.array_equal(game.legal_action_mask(), masks[i]):
                    raise ValueError(
                        f"the position rebuilt from observation {i} has other legal actions than "
                        "its mask (an observation of another board or marble set?)"
                    )
                games.append(game)
            return np.asarray(self.choose_many(games), dtype=np.int64)

        return opponent


_Layout: TypeAlias = tuple[str, list[int], list[int], list[int]]
_LAYOUTS: dict[tuple[int, bool], _Layout] = {}


def _layout(board: int, blitz: bool) -> _Layout:
    """The marble set's word, the rings of each column, and the marbles of each colour in the
    set and the captures of it alone that win, as the encoding scales the globals by them (read
    from the engine: a start, and a position whose mover has captured one of each; computed
    once a board and set. A dict, not ``functools.cache``: stubtest cannot match a cached
    function's signature)."""
    key = (board, blitz)
    if key not in _LAYOUTS:
        _LAYOUTS[key] = _read_layout(board, blitz)
    return _LAYOUTS[key]


def _read_layout(board: int, blitz: bool) -> _Layout:
    start = Game(board, blitz)
    fields = start.to_text().split()
    columns = [len(column) for column in fields[2].split("/")]
    sets = list(start.pool)
    fields[3] = "/".join(str(n - 1) for n in sets)
    fields[4] = "1/1/1"
    _, globals_ = Game.from_text(" ".join(fields)).encode()
    wins = [round(1.0 / float(x)) for x in globals_[3:6]]
    return fields[1], columns, sets, wins


def game_from_observation(
    planes: npt.NDArray[np.float32],
    globals_: npt.NDArray[np.float32],
    board: int = 37,
    blitz: bool = False,
) -> Game:
    """The position that the observation ``planes [C, H, W]``, ``globals [G]`` of ``board``
    rings and the marble set encodes, as a new game without history whose player to move (the
    observation's "own" side) is P0. Everything the search looks at is in an observation (the
    rings, marbles, pool, captures, chain marble and a pass just before): what is lost is the
    history (so a third repetition is not seen) and which player the mover was. ValueError for
    an observation that encodes no position of that board and marble set."""
    (c, h, w), g = observation_shape(board)
    planes = np.asarray(planes, dtype=np.float32)
    globals_ = np.asarray(globals_, dtype=np.float32)
    if planes.shape != (c, h, w) or globals_.shape != (g,):
        raise ValueError(
            f"an observation of {board} rings has planes {(c, h, w)} and globals {(g,)}, "
            f"not {planes.shape} and {globals_.shape}"
        )
    word, columns, sets, wins = _layout(board, blitz)
    at = planes.reshape(c, h * w)[:, ring_cells(board)] > 0.5  # [C, rings]
    cells = np.where(
        ~at[1], "-", np.where(at[3], "w", np.where(at[4], "g", np.where(at[5], "b", ".")))
    )
    text, chain, ring = [], "-", 0
    for x, rings in enumerate(columns):
        text.append("".join(cells[ring : ring + rings]))
        for row in range(rings):
            if at[7, ring + row]:
                chain = f"{chr(ord('a') + x)}{row + 1}"
        ring += rings

    pool = [round(float(x) * n) for x, n in zip(globals_[0:3], sets, strict=True)]
    own = [round(float(x) * n) for x, n in zip(globals_[3:6], wins, strict=True)]
    other = [round(float(x) * n) for x, n in zip(globals_[6:9], wins, strict=True)]
    # A capture count is scaled to 1 at most: a mover who completed a win set in a capture chain
    # finishes the chain with more. The marbles of a colour are all in the pool, on the board or
    # captured, so a count at its cap is the set's rest (the other side's count is below its cap:
    # two win sets are no position).
    for colour in range(3):
        rest = sets[colour] - pool[colour] - int(at[3 + colour].sum())
        if globals_[3 + colour] >= 1.0:
            own[colour] = rest - other[colour]
        elif globals_[6 + colour] >= 1.0:
            other[colour] = rest - own[colour]
    position = " ".join(
        [
            str(board),
            word,
            "/".join(text),
            "/".join(map(str, pool)),
            "/".join(map(str, own)),
            "/".join(map(str, other)),
            "P0",
            chain,
            "1" if globals_[19] > 0.5 else "0",
        ]
    )
    try:
        return Game.from_text(position)
    except ValueError as e:
        raise ValueError(
            f"the observation encodes no position of {board} rings ({word}): {e}"
        ) from None


def __getattr__(name: str) -> Any:
    if name == "SearchPlayer":  # the old name, kept one release
        import warnings

        warnings.warn(
            "zertz.search_policy.SearchPlayer is deprecated and goes in the next release: use "
            "SearchBot (a player is a side; a bot plays one)",
            DeprecationWarning,
            stacklevel=2,
        )
        return SearchBot
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
