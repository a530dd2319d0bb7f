"""Players one decision at a time, and an Elo for any Python policy.

- :func:`player` builds any of Rust's players by its spec (the grammar is
  ``zertz.PLAYER_SPECS``; a network's, ``nn:``, with the engine installed); ``choose(game)``
  answers an action index.
- A *policy* is a Python callable ``policy(observation, mask) -> action``: the observation of the
  player to move (``"flat"`` or ``"dict"``, as the Gymnasium environments give it), its legal
  mask (bool ``[A]``), and an action index back. A trained Stable-Baselines3 model is one:
  ``lambda obs, mask: int(model.predict(obs, action_masks=mask, deterministic=True)[0])``.
- :func:`evaluate` plays a policy against Rust's players in matches with paired openings, as
  ``zertz match`` plays them, and gives W/D/L and the Elo difference with its 95% interval on the
  same scale (docs/rl-libraries.md has a ladder of Rust's players to place it on).

>>> import zertz
>>> from zertz.agents import evaluate, player
>>> greedy = player("greedy", seed=1)
>>> game = zertz.Game()
>>> game.play(greedy.choose(game))
>>> game.to_play
'P1'
>>> first_legal = lambda obs, mask: int(mask.argmax())
>>> result = evaluate(first_legal, ["random"], games=4, progress=False)[0]
>>> result["opponent"], result["games"], result["wins"] + result["draws"] + result["losses"]
('random', 4, 4)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeAlias

import numpy as np
import numpy.typing as npt

from zertz._zertz import (
    DEFAULT_MAX_ACTIONS,
    Bot,
    Game,
    elo,
    match_config,
    match_player_seed,
    parse_player,
    play_match_game,
)
from zertz.observation import check_observation, observe
from zertz.optional import needs_engine

#: A Python policy: ``policy(observation, mask) -> action index``.
Policy: TypeAlias = Callable[[Any, npt.NDArray[np.bool_]], Any]


class PlayerLike(Protocol):
    """A player that answers an action index for a game's current position."""

    @property
    def name(self) -> str: ...

    def choose(self, game: Game) -> int: ...


def player(
    spec: str,
    board: int = 37,
    blitz: bool = False,
    *,
    seed: int = 0,
    **inference: Any,
) -> PlayerLike:
    """The player of ``spec``, for games of ``board`` rings and the blitz marble set or
    not. A network's player (``nn:``) is the engine's (``zertz_engine.Bot``, loaded now and
    checked to play the board and marble set; ``inference`` takes its ``device``, ``precision``,
    ``inference_threads`` and ``search_threads``); ImportError saying what to install where the
    engine is not. The others are :class:`zertz.Bot`, in the torch-free package. ValueError
    for a spec that is not a player."""
    parsed = parse_player(spec)
    if parsed["model"] is None:
        if inference:
            raise TypeError(f"{sorted(inference)} are a network's settings; {spec!r} has none")
        return Bot(spec, seed=seed)
    with needs_engine(f"the player {spec!r}"):
        import zertz_engine
    engine_player: PlayerLike = zertz_engine.Bot(spec, board, blitz, seed=seed, **inference)
    return engine_player


#: What chooses actions: a Python policy, or a player (``choose(game)``).
Agent: TypeAlias = Policy | PlayerLike


def agent_answer(agent: Agent, game: Game, observation: str, who: str = "the policy") -> int:
    """The action index that ``agent`` answers for ``game``'s player to move, legal or not (a
    policy is given the observation of ``observation``'s kind and the legal mask, a player a
    copy of the game); ValueError for an answer that is not an integer (naming ``who``). For
    what judges the answer itself (Rust's episode does for an environment's opponent)."""
    if hasattr(agent, "choose"):
        answer: Any = agent.choose(game.clone())
    else:
        answer = agent(observe(game, observation), game.legal_action_mask())
    try:
        return int(np.asarray(answer).item())
    except (TypeError, ValueError) as e:
        raise ValueError(f"{who} answered {answer!r}, not an action index") from e


def score_line(result: dict[str, Any]) -> str:
    """One line of a result of :func:`evaluate`: the opponent, W-D-L, score and Elo with its
    95% interval (what ``evaluate`` writes to stderr, and the examples print)."""
    return (
        f"{result['opponent']}: {result['wins']}-{result['draws']}-{result['losses']} "
        f"(W-D-L), score {result['score']:.3f}, Elo {result['elo']:+.0f} "
        f"(95%: {result['elo_low']:+.0f} to {result['elo_high']:+.0f})"
    )


def same_player(specs: Iterable[str]) -> tuple[str, str, str] | None:
    """The first two of ``specs`` that name one player in two spellings (``mcts:10`` and
    ``mcts: 10``: Rust's canonical specs, :func:`zertz.parse_player`'s ``"name"``,
    compared), with that player's canonical spec; None where each names a player of its own.
    ValueError for a spec that is not a player (a caller that words that error checks first).

    >>> same_player(["random", "mcts:10", "MCTS: 10"])
    ('mcts:10', 'MCTS: 10', 'mcts:10')
    """
    named: dict[str, str] = {}  # canonical spec: as written
    for spec in specs:
        name = parse_player(spec)["name"]
        if name in named:
            return named[name], spec, name
        named[name] = spec
    return None


def checked_specs(specs: Iterable[str] | str, what: str, each: str) -> list[str]:
    """``specs`` (one spec or several) as a list, each checked by the player-spec grammar (Rust's):
    TypeError where they are not strings, ValueError naming a spec that is not a player
    (``"{each} 'SPEC': why"``) or one player named twice in any spelling (``"{what} name one
    player twice"``).

    >>> checked_specs("greedy", "opponents", "opponent")
    ['greedy']
    >>> checked_specs(["mcts:10", "mcts: 10"], "engines", "engine")
    Traceback (most recent call last):
    ValueError: engines name one player twice: 'mcts:10' and 'mcts: 10' (both mcts:10)
    """
    if isinstance(specs, str):
        specs = [specs]
    try:
        listed = list(specs)
    except TypeError:
        raise TypeError(f"{what} must be player specs, not {specs!r}") from None
    for spec in listed:
        if not isinstance(spec, str):
            raise TypeError(f"{what} must be player specs (str), not {spec!r}")
        try:
            parse_player(spec)
        except ValueError as e:
            raise ValueError(f"{each} {spec!r}: {e}") from None
    if twice := same_player(listed):
        first, again, name = twice
        raise ValueError(f"{what} name one player twice: {first!r} and {again!r} (both {name})")
    return listed


def _opponents(
    specs: Iterable[str] | str, board: int, blitz: bool, seed: int
) -> list[tuple[str, PlayerLike]]:
    """Each opponent of :func:`evaluate` with its player for game 0 (built now: a spec that is
    not a player, a network that cannot be read or does not play the board and marble set, a
    program that does not start or answer its name, fail here); ValueError naming the opponent,
    or one player named twice (in any spelling: Rust's canonical specs are compared)."""
    listed = checked_specs(specs, "opponents", "opponent")
    if not listed:
        raise ValueError("opponents: name at least one player")
    built = []
    for spec in listed:
        try:
            built.append((spec, player(spec, board, blitz, seed=match_player_seed(seed, 0, 1))))
        except (ValueError, OSError) as e:
            raise ValueError(f"opponent {spec!r}: {e}") from None
    return built


def evaluate(
    policy: Agent,
    opponents: Iterable[str] = ("random", "greedy"),
    games: int = 100,
    *,
    board: int = 37,
    blitz: bool = False,
    observation: str = "flat",
    opening_actions: int = 2,
    seed: int = 0,
    max_actions: int = DEFAULT_MAX_ACTIONS,
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Plays ``policy`` (a Python policy, or a player: anything with ``choose(game)``, such as
    :func:`player`'s) against each of ``opponents`` (specs of Rust's players) for ``games``
    games each, in Rust's match games (``zertz._zertz.play_match_game``, the policy as player
    A): games ``2k`` and ``2k + 1`` start from the same
    ``opening_actions`` random actions (paired openings) with the policy on each side in turn
    (P0 in the even games), the opponents seeded as the match seeds its player B (a network's
    player loads once, seeded as game 0's), and a game
    longer than ``max_actions`` single actions a draw. Returns one dict per opponent:
    ``{"opponent", "games", "wins", "draws", "losses", "score", "elo", "elo_low", "elo_high"}``
    (the policy's Elo difference over the opponent with its 95% interval, computed by
    Rust as ``zertz match`` computes it). ``observation`` is the kind the policy takes. A
    line per opponent goes to stderr (with the count of games as they end, on a terminal)
    unless ``progress`` is False.

    Everything is checked before the first game: the settings (by Rust's ranges of a
    match), ``games`` at least 1, and every opponent (its spec, built once: a network read and
    able to play the board and marble set, a ``cmd:`` program started and answering its name),
    no player named twice in any spelling; ValueError or TypeError names the culprit, and no
    game is played. Each side is given a copy of the game (a player's ``choose``) or the
    observation and a copy of the mask (a policy), never the game being played; an answer that
    is not a legal action is a ValueError naming its side (the policy, or the opponent's spec)
    and the game. Ctrl-C (or a signal handler that raises, for SIGTERM) stops a Rust
    player's search at once."""
    kind = check_observation(observation)
    if not (hasattr(policy, "choose") or callable(policy)):
        raise TypeError(f"policy must be a callable or a player (choose(game)), not {policy!r}")
    # Rust's ranges of a match, in its words ("games: must be at most ..."); a match of
    # no games would evaluate nothing.
    match_config(
        games=games,
        board=board,
        blitz=blitz,
        seed=seed,
        opening_actions=opening_actions,
        max_actions=max_actions,
    )
    if games < 1:
        raise ValueError(f"games: must be at least 1 to evaluate, not {games}")
    results = []
    settings = {
        "board": board,
        "blitz": blitz,
        "seed": seed,
        "opening_actions": opening_actions,
        "max_actions": max_actions,
    }
    for spec, first in _opponents(opponents, board, blitz, seed):
        # Rust builds its players for each game, seeded as the match seeds its player B;
        # a network is the engine package's, loaded once for the match (its searches seeded as
        # game 0's player B) and played as a Python player.
        side: str | PlayerLike = first if parse_player(spec)["model"] is not None else spec
        wins = draws = losses = 0
        started = time.monotonic()
        # The count of each game on a terminal; the result line everywhere.
        live = progress and sys.stderr.isatty()
        for g in range(games):
            played = play_match_game(
                policy,
                side,
                g,
                observation=kind,
                who=("the policy", f"the opponent {spec!r}"),
                **settings,
            )
            score = played["a_score"]
            if score == 1.0:
                wins += 1
            elif score == 0.0:
                losses += 1
            else:
                draws += 1
            if live:
                done = g + 1
                print(
                    f"\revaluate: {spec}: game {done}/{games}, "
                    f"{wins}-{draws}-{losses}, {time.monotonic() - started:.0f} s",
                    end="" if done < games else "\n",
                    file=sys.stderr,
                    flush=True,
                )
        rating, low, high = elo(wins, draws, losses)
        result = {
            "opponent": spec,
            "games": games,
            "wins": wins,
            "draws": draws,
            "losses": losses,
            "score": (wins + 0.5 * draws) / games,
            "elo": rating,
            "elo_low": low,
            "elo_high": high,
        }
        if progress:
            print(f"evaluate: {score_line(result)}", file=sys.stderr, flush=True)
        results.append(result)
    return results
