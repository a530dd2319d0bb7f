"""One conformance test for every RL front end: ``zertz.VecEnv`` (Rust), the Gymnasium vector and
single-game environments and the PettingZoo environment play the same actions and must report
the same rewards, ends and forfeits, those that the rules of an episode (``zertz.Episode``) give,
computed here again from ``zertz.Game`` alone."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any, Literal, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt
import pytest

import zertz
from zertz import Episode

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

from zertz.gymnasium import VectorEnv, ZertzEnv
from zertz.pettingzoo import PLAYERS, ZertzAEC


class Result(NamedTuple):
    """One step as a front end reports it: who acted, the mover's reward, the other's (None
    where the front end reports only the mover's), the ends, the forfeit."""

    mover: str
    reward: float
    other: float | None
    terminated: bool
    truncated: bool
    illegal: bool


class Front(Protocol):
    name: str

    def mask(self) -> npt.NDArray[np.bool_]: ...
    def to_play(self) -> str: ...
    def step(self, action: int) -> Result: ...


class VecFront:
    name = "VecEnv"

    def __init__(self, board: int, blitz: bool, max_steps: int) -> None:
        self.env = zertz.VecEnv(1, board, blitz, first_player="P0", max_steps=max_steps, seed=3)
        _, self.infos = self.env.reset(3)

    def mask(self) -> npt.NDArray[np.bool_]:
        return np.asarray(self.infos["legal_action_mask"][0])

    def to_play(self) -> str:
        return f"P{int(self.infos['to_play'][0])}"

    def step(self, action: int) -> Result:
        mover = self.to_play()
        _, rewards, terminated, truncated, self.infos = self.env.step([action])
        m = 0 if mover == "P0" else 1
        return Result(
            mover,
            float(rewards[0, m]),
            float(rewards[0, 1 - m]),
            bool(terminated[0]),
            bool(truncated[0]),
            bool(self.infos["illegal_action"][0]),
        )


class GymVectorFront(VecFront):
    name = "gymnasium VectorEnv"

    def __init__(self, board: int, blitz: bool, max_steps: int) -> None:
        self.envs = VectorEnv(
            1, board, blitz, first_player="P0", max_steps=max_steps, seed=3, opponent=None
        )
        _, self.infos = self.envs.reset(seed=3)

    def step(self, action: int) -> Result:
        mover = self.to_play()
        _, rewards, terminated, truncated, self.infos = self.envs.step(np.array([action]))
        m = 0 if mover == "P0" else 1
        both = self.infos["rewards"][0]
        assert float(rewards[0]) == float(both[m]), "the reward is the mover's"
        return Result(
            mover,
            float(rewards[0]),
            float(both[1 - m]),
            bool(terminated[0]),
            bool(truncated[0]),
            bool(self.infos["illegal_action"][0]),
        )


class GymFront:
    name = "gymnasium ZertzEnv"

    def __init__(self, board: int, blitz: bool, max_steps: int) -> None:
        self.env = ZertzEnv(board, blitz, max_steps=max_steps, first_player="P0", opponent=None)
        _, self.info = self.env.reset(seed=3)

    def mask(self) -> npt.NDArray[np.bool_]:
        return np.asarray(self.info["action_mask"]).astype(bool)

    def to_play(self) -> str:
        return f"P{int(self.info['to_play'])}"

    def step(self, action: int) -> Result:
        mover = self.to_play()
        _, reward, terminated, truncated, self.info = self.env.step(action)
        m = 0 if mover == "P0" else 1
        both = self.info["rewards"]
        assert float(reward) == both[m], "the reward is the mover's"
        return Result(
            mover, float(reward), both[1 - m], terminated, truncated, self.info["illegal_action"]
        )


class AecFront:
    name = "pettingzoo ZertzAEC"

    def __init__(self, board: int, blitz: bool, max_steps: int) -> None:
        self.env = ZertzAEC(board, blitz, max_steps=max_steps)
        self.env.reset(seed=3)

    def mask(self) -> npt.NDArray[np.bool_]:
        observation = self.env.observe(self.env.agent_selection)
        return np.asarray(observation["action_mask"]).astype(bool)

    def to_play(self) -> str:
        return PLAYERS[self.env.agent_selection]

    def step(self, action: int) -> Result:
        agent = self.env.agent_selection
        rival = "player_1" if agent == "player_0" else "player_0"
        self.env.step(action)
        return Result(
            PLAYERS[agent],
            float(self.env.rewards[agent]),
            float(self.env.rewards[rival]),
            self.env.terminations[agent],
            self.env.truncations[agent],
            bool(self.env.infos[agent].get("illegal_action", False)),
        )


class EpisodeFront:
    name = "zertz.Episode"

    def __init__(self, board: int, blitz: bool, max_steps: int) -> None:
        self.episode = Episode(board, blitz, "P0", max_steps)

    def mask(self) -> npt.NDArray[np.bool_]:
        return self.episode.game.legal_action_mask()

    def to_play(self) -> str:
        return self.episode.game.to_play

    def step(self, action: int) -> Result:
        s = self.episode.step(action)
        rival: Literal["P0", "P1"] = "P1" if s.mover == "P0" else "P0"
        return Result(
            s.mover,
            s.reward(s.mover),
            s.reward(rival),
            s.terminated,
            s.truncated,
            s.illegal,
        )


FRONTS: list[Callable[[int, bool, int], Front]] = [
    VecFront,
    GymVectorFront,
    GymFront,
    AecFront,
    EpisodeFront,
]


def reference(board: int, blitz: bool, max_steps: int, actions: list[int]) -> Iterator[Result]:
    """The rules, from ``zertz.Game`` alone: what each step of ``actions`` must report."""
    game = zertz.Game(board, blitz, "P0")
    for k, action in enumerate(actions, 1):
        mover = game.to_play
        if not game.legal_action_mask()[action]:
            yield Result(mover, -1.0, 1.0, True, False, True)
            return
        game.play(action)
        if game.outcome is not None:
            won = 0.0 if game.outcome == "draw" else (1.0 if game.outcome == mover else -1.0)
            yield Result(mover, won, -won, True, False, False)
            return
        yield Result(mover, 0.0, 0.0, False, k >= max_steps, False)
        if k >= max_steps:
            return


def script(board: int, blitz: bool, seed: int, illegal_at: int | None) -> list[int]:
    """Random legal actions to the end of a game (at most 1000), one illegal at ``illegal_at``."""
    rng = np.random.default_rng(seed)
    game = zertz.Game(board, blitz, "P0")
    actions: list[int] = []
    while not game.is_over and len(actions) < 1000:
        mask = game.legal_action_mask()
        if len(actions) == illegal_at:
            actions.append(int(rng.choice(np.flatnonzero(~mask))))
            break
        action = int(rng.choice(np.flatnonzero(mask)))
        actions.append(action)
        game.play(action)
    return actions


CASES = [
    # (board, blitz, max_steps, seed, illegal_at): whole games, a truncation, forfeits.
    (37, False, 1000, 1, None),
    (48, True, 1000, 2, None),
    (61, False, 1000, 3, None),
    (37, False, 7, 4, None),
    (40, True, 1000, 5, 0),
    (37, False, 1000, 6, 5),
    (44, False, 1000, 7, 12),
]


@pytest.mark.parametrize(("board", "blitz", "max_steps", "seed", "illegal_at"), CASES)
@pytest.mark.parametrize("make", FRONTS, ids=lambda f: str(getattr(f, "name", f)))
def test_every_front_end_follows_the_rules_of_an_episode(
    make: Callable[[int, bool, int], Front],
    board: int,
    blitz: bool,
    max_steps: int,
    seed: int,
    illegal_at: int | None,
) -> None:
    actions = script(board, blitz, seed, illegal_at)
    expected = list(reference(board, blitz, max_steps, actions))
    assert expected[-1].terminated or expected[-1].truncated
    front = make(board, blitz, max_steps)
    for k, (action, want) in enumerate(zip(actions, expected, strict=False)):
        assert front.to_play() == want.mover, (front.name, k)
        legal = front.mask()
        assert bool(legal[action]) != want.illegal, (front.name, k)
        got = front.step(action)
        if got.other is None:
            want = want._replace(other=None)
        assert got == want, (front.name, k)


@pytest.mark.parametrize("make", FRONTS, ids=lambda f: str(getattr(f, "name", f)))
def test_an_index_outside_the_action_space_is_an_error_and_plays_nothing(
    make: Callable[[int, bool, int], Front],
) -> None:
    front = make(37, False, 1000)
    size = zertz.action_space_size(37)
    for bad in (size, size + 5):
        with pytest.raises(ValueError, match="out of range"):
            front.step(bad)
    assert front.to_play() == "P0"
    action = int(np.flatnonzero(front.mask())[0])
    got = front.step(action)
    assert (got.mover, got.reward, got.terminated, got.illegal) == ("P0", 0.0, False, False)


def test_the_episode_names_any_int_out_of_range_and_plays_nothing() -> None:
    # Rust's Episode takes any Python int (numpy's too) and names one that is no index of
    # the action space, or no step limit, with a ValueError: never an OverflowError.
    episode = Episode(37)
    size = zertz.action_space_size(37)
    for bad in (-1, size, 2**70, -(2**70), np.int64(2**40)):
        with pytest.raises(ValueError, match=rf"action index {int(bad)} out of range 0\.\.{size}"):
            episode.step(bad)
    assert episode.steps == 0 and not episode.is_over
    for bad in (0, -1, 2**32, 2**70):
        with pytest.raises(ValueError, match="max_steps must be at least 1"):
            Episode(37, max_steps=bad)
    assert Episode(37, max_steps=2**32 - 1).max_steps == 2**32 - 1


# ---------------------------------------------------------------------------------------------
# Opponents that fail. Every single-agent front end runs its opponent's turn in Rust's
# episode (zertz_vecenv::Episode::opponent_answer judges each answer), so an opponent that
# raises, answers an action that is not legal or re-enters the environment it plays in does
# the same everywhere: the step raises, and every later step raises RuntimeError naming the
# failure until a reset.


class Boom(Exception):
    """What a failing opponent raises."""


class Opponent:
    """One game's opponent, whatever form a front end takes it in: from its ``fail_at``-th
    answer on (counting from 1), it raises (``"raise"``), answers an action that is not legal
    (``"illegal"``) or calls its environment's ``step`` or ``reset`` (``"step"``, ``"reset"``),
    letting the error through or, with ``swallow``, answering its first legal action after all.
    Otherwise it answers its last legal action."""

    def __init__(self, mode: str, fail_at: int, swallow: bool = False) -> None:
        self.mode, self.fail_at, self.swallow = mode, fail_at, swallow
        self.answers = 0
        self.reentered: list[str] = []
        self.front: OpponentFront | None = None

    def answer(self, mask: npt.NDArray[np.bool_]) -> int:
        self.answers += 1
        legal = np.flatnonzero(mask)
        if self.mode == "none" or self.answers < self.fail_at:
            return int(legal[-1])
        if self.mode == "raise":
            raise Boom("the opponent went away")
        if self.mode == "illegal":
            return int(np.flatnonzero(~mask)[0])
        assert self.front is not None
        try:
            self.front.reenter(self.mode)
        except RuntimeError as e:
            self.reentered.append(str(e))
            if not self.swallow:
                raise
        return int(legal[-1])


class OpponentFront(Protocol):
    name: str

    def reset(self) -> None: ...
    def step(self) -> tuple[float, bool]: ...
    def learner_to_move(self) -> bool: ...
    def reenter(self, how: str) -> None: ...


class GymOpponentFront:
    """``ZertzEnv`` with a Python policy (``opponent(obs, mask)``) or a player (``choose``)."""

    def __init__(self, opponent: Opponent, as_player: bool) -> None:
        self.name = "ZertzEnv" + ("(player)" if as_player else "")
        if as_player:

            class Chooser:
                name = "chooser"

                def choose(self, game: zertz.Game) -> int:
                    return opponent.answer(game.legal_action_mask())

            self.env = ZertzEnv(37, opponent=Chooser(), first_player="P1")
        else:
            self.env = ZertzEnv(
                37, opponent=lambda obs, mask: opponent.answer(mask), first_player="P1"
            )

    def reset(self) -> None:
        self.env.reset(seed=1)

    def step(self) -> tuple[float, bool]:
        action = int(self.env.action_masks().argmax())  # (0 once the episode has failed)
        _, reward, terminated, truncated, _ = self.env.step(action)
        if terminated or truncated:
            self.reset()
        return float(reward), bool(terminated or truncated)

    def learner_to_move(self) -> bool:
        return self.env.game.to_play == "P0"

    def reenter(self, how: str) -> None:
        if how == "step":
            self.env.step(int(np.flatnonzero(self.env.action_masks())[0]))
        else:
            self.env.reset()


class EpisodeOpponentFront:
    """``zertz.Episode`` with ``opponent(game)``."""

    name = "Episode"

    def __init__(self, opponent: Opponent) -> None:
        self.episode = Episode(37, first_player="P1")
        self.episode.set_opponent(lambda game: opponent.answer(game.legal_action_mask()))

    def reset(self) -> None:
        self.episode.restart("P1")

    def step(self) -> tuple[float, bool]:
        step = self.episode.step(int(self.episode.game.legal_action_mask().argmax()))
        if step.terminated or step.truncated:
            self.reset()
        return step.reward("P0"), step.terminated or step.truncated

    def learner_to_move(self) -> bool:
        return self.episode.game.to_play == "P0"

    def reenter(self, how: str) -> None:
        if how == "step":
            self.episode.step(int(np.flatnonzero(self.episode.game.legal_action_mask())[0]))
        else:
            self.episode.restart("P1")


class VectorOpponentFront:
    """The batched fronts: ``zertz.VecEnv``, Gymnasium's ``VectorEnv`` and (where
    Stable-Baselines3 is installed) ``zertz.sb3.VecEnv``, two games each, with a batched
    ``opponent(observations, masks)``."""

    def __init__(self, opponent: Opponent, kind: str) -> None:
        self.name = kind

        def batched(observations: Any, masks: npt.NDArray[np.bool_]) -> list[int]:
            return [opponent.answer(m) for m in masks]

        settings: dict[str, Any] = {"opponent": batched, "first_player": "P1", "seed": 2}
        if kind == "VecEnv":
            self.env: Any = zertz.VecEnv(2, 37, **settings)
        elif kind == "VectorEnv":
            self.env = VectorEnv(2, 37, **settings)
        else:
            sb3 = pytest.importorskip("zertz.sb3")
            self.env = sb3.VecEnv(2, 37, **settings)
        self.mask = np.zeros((2, zertz.action_space_size(37)), dtype=bool)

    def _masks(self, infos: dict[str, Any]) -> None:
        self.mask = np.asarray(infos["legal_action_mask"])

    def reset(self) -> None:
        if self.name == "sb3.VecEnv":
            self.env.reset()
            self.mask = self.env.action_masks()
        else:
            _, infos = self.env.reset(seed=2)
            self._masks(infos)

    def step(self) -> tuple[float, bool]:
        actions = self.mask.argmax(axis=1)
        if self.name == "sb3.VecEnv":
            _, rewards, dones, _ = self.env.step(actions)
            self.mask = self.env.action_masks()
            return float(rewards[0]), bool(dones[0])
        _, rewards, terminated, truncated, infos = self.env.step(actions)
        self._masks(infos)
        if self.name == "VecEnv":
            rewards = rewards[:, 0]
        return float(rewards[0]), bool(terminated[0] or truncated[0])

    def learner_to_move(self) -> bool:
        if self.name == "sb3.VecEnv":
            return True  # (SB3's API has no player to move: the learner always is)
        env = self.env if self.name == "VecEnv" else self.env.env
        return all(env.game(i).to_play == "P0" for i in range(2))

    def reenter(self, how: str) -> None:
        if how == "step":
            self.env.step(self.mask.argmax(axis=1))
        else:
            self.env.reset()


OPPONENT_FRONTS: list[tuple[str, Callable[[Opponent], OpponentFront]]] = [
    ("ZertzEnv", lambda o: GymOpponentFront(o, as_player=False)),
    ("ZertzEnv(player)", lambda o: GymOpponentFront(o, as_player=True)),
    ("Episode", EpisodeOpponentFront),
    ("VecEnv", lambda o: VectorOpponentFront(o, "VecEnv")),
    ("VectorEnv", lambda o: VectorOpponentFront(o, "VectorEnv")),
    ("sb3.VecEnv", lambda o: VectorOpponentFront(o, "sb3.VecEnv")),
]

#: What the step that meets each failure raises, and what every later step raises.
FAILURES = {
    "raise": (Boom, "the opponent went away"),
    "illegal": (ValueError, r"the opponent answered action \d+ .*not legal"),
    "step": (RuntimeError, "cannot step or (reset|restart) the (environment|episode) it plays in"),
    "reset": (RuntimeError, "cannot step or (reset|restart) the (environment|episode) it plays in"),
}


def play_until_the_opponent_fails(front: OpponentFront, opponent: Opponent) -> None:
    """Steps ``front`` until the step that meets the opponent's failure, which must raise its
    error; the steps before it play as usual, the learner to move after each."""
    kind, message = FAILURES[opponent.mode]
    with pytest.raises(kind, match=message):
        for _ in range(200):
            front.step()
            assert front.learner_to_move()
    assert opponent.answers >= opponent.fail_at


@pytest.mark.parametrize("mode", sorted(FAILURES))
@pytest.mark.parametrize(("name", "make"), OPPONENT_FRONTS, ids=[n for n, _ in OPPONENT_FRONTS])
def test_an_opponent_that_fails_leaves_the_environment_needing_a_reset(
    name: str, make: Callable[[Opponent], OpponentFront], mode: str
) -> None:
    opponent = Opponent(mode, fail_at=4)
    front = make(opponent)
    opponent.front = front
    front.reset()  # the opponent begins: its first answer
    play_until_the_opponent_fails(front, opponent)
    _, message = FAILURES[mode]
    # Never again a step played as another's: every step names the failure until a reset.
    for _ in range(3):
        with pytest.raises(RuntimeError, match=f"needs a reset: .*({message})"):
            front.step()
    opponent.mode = "none"
    front.reset()
    assert front.learner_to_move()
    for _ in range(20):
        front.step()
        assert front.learner_to_move()


@pytest.mark.parametrize("mode", ["step", "reset"])
@pytest.mark.parametrize(("name", "make"), OPPONENT_FRONTS, ids=[n for n, _ in OPPONENT_FRONTS])
def test_an_opponent_that_reenters_its_environment_changes_nothing(
    name: str, make: Callable[[Opponent], OpponentFront], mode: str
) -> None:
    # An opponent that calls its environment's step or reset and goes on after the error plays
    # the very games of one that does not.
    def run(mode: str) -> tuple[list[tuple[float, bool]], list[str]]:
        opponent = Opponent(mode, fail_at=3, swallow=True)
        front = make(opponent)
        opponent.front = front
        front.reset()
        results = [front.step() for _ in range(40)]
        assert front.learner_to_move()
        return results, opponent.reentered

    reentering, refused = run(mode)
    plain, _ = run("none")
    assert reentering == plain
    assert len(refused) >= 30, refused
    assert all("it plays in" in e for e in refused), refused[0]


#: A child that steps an environment whose opponent searches for hours (alpha-beta to depth 12
#: on 61 rings) until a signal stops the step, then checks that the environment refuses every
#: step until a reset, and plays after one. Argument: the front end. A signal that comes between
#: two calls rather than inside a step is noted ("outside") and the child steps again.
_STEP_UNTIL_STOPPED = r"""
import signal, sys
import numpy as np
import zertz
from zertz.gymnasium import VectorEnv, ZertzEnv

class Terminated(Exception):
    pass

def terminate(signum, frame):
    raise Terminated("terminated")

signal.signal(signal.SIGTERM, terminate)
front = sys.argv[1]
spec = "alphabeta:12"
if front == "ZertzEnv":
    env = ZertzEnv(61, opponent=spec, first_player="P0")
    env.reset(seed=0)
    step = lambda: env.step(int(env.action_masks().argmax()))
    failure = lambda: env.episode.failure
else:
    env = zertz.VecEnv(2, 61, opponent=spec, first_player="P0", threads=2)
    if front == "VectorEnv":
        env = VectorEnv(2, 61, opponent=spec, first_player="P0", threads=2)
    env.reset(seed=0)
    step = lambda: env.step(env.sample_actions())
    failure = lambda: (env if front == "VecEnv" else env.env).failure
for attempt in range(5):
    print("stepping", flush=True)
    try:
        step()
        print("the search ended without the signal", flush=True)
        sys.exit(3)
    except (KeyboardInterrupt, Terminated) as e:
        if failure() is None:
            print("outside", flush=True)
            continue
        print("stopped:", type(e).__name__, "|", failure(), flush=True)
        break
try:
    step()
    print("a step after the stop was played", flush=True)
    sys.exit(4)
except RuntimeError as e:
    print("refused:", e, flush=True)
env.reset(seed=1)
print("reset", flush=True)
"""


@pytest.mark.parametrize("front", ["ZertzEnv", "VecEnv", "VectorEnv"])
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_opponents_search_and_the_step(front: str, sent: int) -> None:
    """Ctrl-C (or SIGTERM, where a handler raises) reaches the searches of the opponents that an
    environment runs inside its step: a step whose searches would run for hours ends with the
    signal's exception, and the environment needs a reset (its caller never saw that step). The
    bound only catches a search that never stops; the time it takes is a benchmark's
    (scripts/bench-stops.py)."""
    child = subprocess.Popen(
        [sys.executable, "-c", _STEP_UNTIL_STOPPED, front],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    try:
        assert child.stdout is not None
        for _ in range(5):
            line = child.stdout.readline()
            lines.append(line)
            if line != "stepping\n":
                break
            time.sleep(0.5)  # (into the search, most likely; a signal before it is retried)
            child.send_signal(sent)
            line = child.stdout.readline()
            lines.append(line)
            if line != "outside\n":
                break
        child.wait(timeout=120)
        # (The rest through the same reader: communicate() would lose what it has buffered.)
        out, err = child.stdout.read(), child.stderr.read() if child.stderr else ""
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    lines += out.splitlines(keepends=True)
    text = "".join(lines)
    assert child.returncode == 0, text + err
    raised = "KeyboardInterrupt" if sent == signal.SIGINT else "Terminated"
    stopped = next(line for line in lines if line.startswith("stopped:"))
    assert stopped.startswith(f"stopped: {raised} |"), text
    if front == "ZertzEnv":
        assert "the opponent failed" in stopped, text
    else:
        assert f"a step was interrupted ({raised}) before it returned" in stopped, text
    assert "refused:" in text and "needs a reset" in text, text
    assert lines[-1] == "reset\n", text
