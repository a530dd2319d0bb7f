"""Native core of the ``zertz`` package (private: import ``zertz`` instead)."""

from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Final, Literal, SupportsIndex, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "BOARDS",
    "DATASET_FORMAT",
    "DATASET_GAMES",
    "DATASET_MANIFEST",
    "DATASET_SPLITS",
    "DATASET_VERSION",
    "DEFAULT_MAX_ACTIONS",
    "DEFAULT_MAX_STEPS",
    "ENCODING_VERSION",
    "MARBLE_SETS",
    "MAX_MATCH_GAMES",
    "MCTS",
    "PLAYER_SPECS",
    "SHARD_FORMAT_VERSION",
    "VECENV_MAX_BYTES",
    "Bot",
    "Episode",
    "Game",
    "Range",
    "Step",
    "VecEnv",
    "__version__",
    "action_space_size",
    "dataset",
    "elo",
    "file_limits",
    "load_records",
    "match_config",
    "match_opening",
    "match_player_seed",
    "match_settings",
    "mcts_settings",
    "observation_shape",
    "open_regular",
    "parse_first_player",
    "parse_player",
    "partial_owner",
    "partial_path",
    "play_match_game",
    "process_runs",
    "read_bounded",
    "ring_cells",
    "search_presets",
    "selfplay_config",
    "selfplay_settings",
    "shard_glob",
    "shard_schema",
    "size_text",
    "symmetry_count",
    "symmetry_tables",
]

__version__: Final[str]
ENCODING_VERSION: Final[int]
SHARD_FORMAT_VERSION: Final[int]
DATASET_VERSION: Final[int]
DATASET_FORMAT: Final[str]
DATASET_MANIFEST: Final[str]
DATASET_SPLITS: Final[tuple[str, str]]
DATASET_GAMES: Final[str]
DEFAULT_MAX_ACTIONS: Final[int]
DEFAULT_MAX_STEPS: Final[int]
BOARDS: Final[tuple[int, int, int, int, int, int]]
MARBLE_SETS: Final[tuple[str, str]]
MAX_MATCH_GAMES: Final[int]
PLAYER_SPECS: Final[str]
VECENV_MAX_BYTES: Final[int]

def shard_glob(prefix: int | None = None) -> str:
    """The glob pattern of the shards of the writer ``prefix`` (a self-play worker's index, a
    board's rings in a dataset), or of every writer (None): their names sort in the order they
    were written."""

def shard_schema() -> list[dict[str, Any]]:
    """The arrays of a self-play shard, in order: ``[{"name", "dtype" (numpy's descriptor),
    "shape" ("S": one entry per sample), "meaning", "since" (the shard format that added
    it)}]``."""

def search_presets() -> dict[str, dict[str, float | int | bool]]:
    """The named search presets and their settings: ``{name: {setting: value}}``
    (``MCTS(preset=...)``, ``[search] preset`` in self-play configs)."""

def partial_path(path: str | PathLike[str]) -> Path:
    """Where this process writes ``path`` before it renames it into place: ``.NAME.partial-PID``
    beside it (the one name of every partial output, Rust's and the package's)."""

def partial_owner(name: str) -> tuple[str, int] | None:
    """``(NAME, PID)`` of a partial output's file name ``.NAME.partial-PID``; None for any other
    name."""

def process_runs(pid: int) -> bool:
    """Whether process ``pid`` runs: this one always, another where the system says (on Linux),
    never elsewhere."""

def read_bounded(path: str | PathLike[str], kind: str) -> bytes:
    """The bytes of a user's file of kind ``kind`` (a name of ``file_limits()``): a regular file
    of at most its kind's bound, opened without blocking. OSError naming the file otherwise: the
    system's (``FileNotFoundError``), "not a regular file (a FIFO)", "3 GiB is more than the 64
    MiB that a metrics file may have"."""

def open_regular(path: str | PathLike[str]) -> int:
    """A user's file opened for reading, of any size: its file descriptor, for ``os.fdopen``. A
    regular file only, checked before it is opened and again once open; OSError naming the file
    otherwise."""

def file_limits() -> dict[str, int]:
    """The bound of each kind of file users name, in bytes, by the kind's name (``config``,
    ``json``, ``metrics``, ``network``, ``checkpoint``)."""

def size_text(bytes: int) -> str:
    """A count of bytes for people, as Rust's messages write it: "812 bytes", "64 MiB",
    "2.5 GiB"."""

def action_space_size(board: int) -> int:
    """Number of indices of the action space of a board (legal or not)."""

def observation_shape(board: int) -> tuple[tuple[int, int, int], int]:
    """Shapes of the observation of a board: ``((C, H, W), G)``."""

def symmetry_count(board: int) -> int:
    """Number of symmetries of a board shape, the identity included."""

def ring_cells(board: int) -> npt.NDArray[np.int64]:
    """The grid cell (row-major index into ``H * W``) of every ring, in ring order."""

def symmetry_tables(board: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Gather tables ``(cells [S, H * W], actions [S, A])`` that apply every symmetry of a board
    to planes and to policies or masks."""

@final
class Game:
    """A ZÈRTZ game: the current position and the moves that led to it."""

    def __new__(cls, board: int = 37, blitz: bool = False, first_player: str = "P0") -> Game: ...
    @staticmethod
    def from_text(text: str) -> Game:
        """A game that starts from a position in the text format (see ``to_text``)."""

    @staticmethod
    def from_sgf(source: str | PathLike[str]) -> Game:
        """A game replayed from a boardspace.net record: SGF text or a file path."""

    @property
    def board(self) -> int:
        """Number of rings of the board shape."""

    @property
    def blitz(self) -> bool:
        """Whether the game uses the blitz marble set."""

    @property
    def to_play(self) -> Literal["P0", "P1"]:
        """The player to move."""

    @property
    def pool(self) -> tuple[int, int, int]:
        """Marbles left in the pool: (white, grey, black)."""

    @property
    def captures(self) -> dict[Literal["P0", "P1"], tuple[int, int, int]]:
        """Marbles captured by each player: (white, grey, black)."""

    @property
    def chain(self) -> str | None:
        """The ring of the marble that must continue a capture chain, or None."""

    @property
    def outcome(self) -> Literal["P0", "P1", "draw"] | None:
        """None while the game goes on, else the winner or "draw"."""

    @property
    def is_over(self) -> bool:
        """Whether the game is over."""

    @property
    def moves(self) -> list[str]:
        """The whole-turn moves played so far, in notation."""

    @property
    def action_space_size(self) -> int:
        """Number of indices of the board's action space (legal or not)."""

    def legal_moves(self) -> list[str]:
        """Legal whole-turn moves in notation (empty once the game is over)."""

    def legal_actions(self) -> list[str]:
        """Legal single actions in notation: placements, single hops, or "pass"."""

    def legal_action_indices(self) -> npt.NDArray[np.int64]:
        """Indices of the legal single actions, int64 [n], in the order of ``legal_actions``."""

    def legal_action_mask(self) -> npt.NDArray[np.bool_]:
        """Legal-action mask, bool [action_space_size]."""

    def play(self, move_: str | SupportsIndex, /) -> None:
        """Plays a whole-turn move or a single action, in notation or as an action index."""

    def decode_action(self, index: SupportsIndex) -> str:
        """The single action with this index, in notation (legal or not). Raises ValueError for an
        index past the end, and for the hops that would leave the board (they have no notation)."""

    def action_index(self, action: str) -> int:
        """The index of a single action given in notation (legal or not)."""

    def encode(
        self, player: Literal["P0", "P1"] | None = None
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """The observation of the player to move (or of ``player``: the planes are the same, the
        globals' own and opponent sides are that player's): planes float32 [C, H, W], globals
        [G]."""

    def to_text(self) -> str:
        """The current position in the text format."""

    def transformed(self, s: int) -> Game:
        """The position under symmetry ``s`` of the board, as a new game without history."""
    def clone(self) -> Game:
        """An independent copy of the game."""

    def __copy__(self) -> Game: ...
    def __deepcopy__(self, memo: object, /) -> Game: ...
    def _repr_svg_(self) -> str:
        """The board drawn as SVG, for notebooks."""

@final
class Range:
    """The values a number setting takes: finite numbers between two ends, and maybe one more
    value outside them (Rust's ``zertz_settings::Range``: its check and its words)."""

    def __eq__(self, value: object, /) -> bool: ...
    def __ne__(self, value: object, /) -> bool: ...
    @staticmethod
    def finite() -> Range:
        """Any finite number."""

    @staticmethod
    def between(low: float, high: float) -> Range:
        """From ``low`` to ``high``, both included."""

    @staticmethod
    def at_least(low: float) -> Range:
        """``low`` or more."""

    @staticmethod
    def at_most(high: float) -> Range:
        """``high`` or less."""

    @staticmethod
    def above(low: float) -> Range:
        """More than ``low``."""

    def up_to(self, high: float) -> Range:
        """The same range with an upper end ``high`` (included)."""

    def also(self, value: float) -> Range:
        """The same range, and ``value`` too (0 for "off")."""

    @property
    def low(self) -> tuple[float, bool] | None:
        """The low end: None where there is none, else ``(value, included)``."""

    @property
    def high(self) -> tuple[float, bool] | None:
        """The high end: None where there is none, else ``(value, included)``."""

    @property
    def extra(self) -> float | None:
        """The one value outside the ends that is taken too, if any."""

    def contains(self, x: float) -> bool:
        """Whether ``x`` is in the range (never NaN nor an infinity)."""

    def reason(self, kind: Literal["int", "number", "seconds"] = "number") -> str:
        """What a value of ``kind`` must be, as an error says it: ``must be between 1 and
        1000``."""

    def describe(self, kind: Literal["int", "number", "seconds"] = "number") -> str:
        """The range in words, as help texts say it: ``1 to 1000``, ``0 or more``."""

@final
class Step:
    """What one step of an :class:`Episode` did."""

    @property
    def mover(self) -> Literal["P0", "P1"]:
        """The player who acted."""

    @property
    def rewards(self) -> tuple[float, float]:
        """The rewards of P0 and of P1."""

    @property
    def terminated(self) -> bool:
        """Whether the game ended, by the rules or by forfeit."""

    @property
    def truncated(self) -> bool:
        """Whether the game reached the step limit."""

    @property
    def illegal(self) -> bool:
        """Whether the action was illegal (a forfeit: its player lost, and it was not played)."""

    @property
    def opponent_actions(self) -> list[int]:
        """The opponent's actions (indices) that answered the learner's action: its whole turn
        (empty without an opponent, and when the action ended the game)."""

    def reward(self, player: str) -> float:
        """The reward of ``player`` ("P0" or "P1")."""

@final
class Episode:
    """One game under the rules of an episode, Rust's (those of :class:`VecEnv` too): a
    step is one single action of the player to move; a game that ends by the rules is terminated
    (+1 to the winner, -1 to the loser, 0 each for a draw by passes or third repetition); after
    ``max_steps`` actions a game that goes on is truncated; an action of the action space that is
    not legal forfeits the game (-1 to its player, +1 to the other; not played); an index outside
    the action space is no action (ValueError).

    With an opponent (:meth:`set_opponent`), a step is the learner's action and the opponent's
    whole turn after it. An opponent that raises or answers an action that is not legal ends the
    episode without a result: its exception comes through as itself (an illegal answer is a
    ValueError), and every later step raises RuntimeError, naming that failure, until
    :meth:`restart`. An opponent cannot step or restart the episode it plays in (RuntimeError)."""

    def __new__(
        cls,
        board: int = 37,
        blitz: bool = False,
        first_player: str = "P0",
        max_steps: SupportsIndex = 1000,
    ) -> Episode: ...
    def set_opponent(
        self, opponent: Callable[[Game], SupportsIndex] | None, learner: str = "P0"
    ) -> None:
        """Plays the side that is not ``learner``'s with ``opponent(game) -> action index``,
        given a copy of the game where it is to move (None: two players), from the next step or
        restart on."""
    def restart(self, first_player: str = "P0") -> list[int]:
        """Starts again from the start with ``first_player`` to move and plays the opponent's
        first turn where it begins; its actions. The episode is whole again after a failure."""
    @property
    def game(self) -> Game:
        """The game of the episode, with its moves: a copy."""

    @property
    def max_steps(self) -> int:
        """The step limit."""

    @property
    def steps(self) -> int:
        """Actions played."""

    @property
    def is_over(self) -> bool:
        """Whether the episode has ended: by the rules, by forfeit, by the step limit or by a
        failure of its opponent."""

    @property
    def failure(self) -> str | None:
        """Why the episode ended without a result (its opponent failed), or None."""

    @property
    def forfeited(self) -> bool:
        """Whether an illegal action ended it."""

    @property
    def truncated(self) -> bool:
        """Whether the step limit ended it."""

    def step(self, action: SupportsIndex) -> Step:
        """Plays ``action`` (an index of the action space) for the player to move, then the
        opponent's turn if there is an opponent."""

@final
class VecEnv:
    """A batch of games stepped together on a thread pool (Gymnasium-style vector API).

    Observations are dicts ``{"planes": float32 [N, C, H, W], "globals": float32 [N, G]}``;
    ``infos`` holds ``"legal_action_mask"`` (bool [N, A]), the same as ``"action_mask"`` (int8 [N,
    A], Gymnasium's type), ``"to_play"`` (uint8 [N], 0 = P0, 1 = P1) and ``"illegal_action"`` (bool
    [N]: the step's action was not legal there and forfeited the game). Rewards are float32 [N, 2]:
    this step's reward of P0 and of P1. The rules of an episode are those of every front end
    (``zertz.Episode``). With ``opponent`` it is a single-agent environment: the learner is P0 in
    every game and the opponent, P1, plays its whole turn inside each step (and its first turn at a
    reset or restart in the games it begins), so the observations, masks and ``to_play`` are always
    P0's and a step's rewards hold the result of a game whoever ended it. The opponent is the spec
    of a player without a network or a program, in the grammar of :data:`PLAYER_SPECS`
    (``"greedy"``, ``"mcts:200"``: one per game, played in Rust, keeping ``max_bytes`` between their
    decisions together), a list of such specs (game ``i`` plays the ``i % len``-th: ``["greedy"] * 3
    + ["random"]`` trains against a mix), or a batched Python policy ``opponent(observations, masks)
    -> actions`` given the observations and masks of the games where it is to move. An opponent that
    raises or answers an action that is not legal fails the step (its exception, or ValueError
    naming the game), and every later step raises RuntimeError, naming that failure (``failure``),
    until ``reset``; so does a step that Ctrl-C interrupted (its searches end at once). An opponent
    cannot step or reset the environment it plays in. Finished games restart at once; their result
    is still in that step's rewards, terminations and truncations (``final_observations`` gives
    their last positions). Every call returns new arrays. ``num_envs`` is at least 1 and ``threads``
    is 0 (every core) or more, each up to Rust's bound (``MAX_NUM_ENVS`` and ``MAX_THREADS``
    of ``zertz_vecenv``, which the error of a larger one states), and the arrays of one step need at
    most ``max_bytes`` (default :data:`VECENV_MAX_BYTES`; the error says what a batch needs); all
    are checked before anything is allocated or started."""

    def __new__(
        cls,
        num_envs: int,
        board: int = 37,
        blitz: bool = False,
        *,
        threads: int = 0,
        max_steps: int = 1000,
        first_player: str = "random",
        opening_plies: int = 0,
        seed: int = 0,
        opponent: str
        | list[str]
        | tuple[str, ...]
        | Callable[[dict[str, npt.NDArray[np.float32]], npt.NDArray[np.bool_]], npt.ArrayLike]
        | None = None,
        max_bytes: int = ...,
    ) -> VecEnv: ...
    @property
    def failure(self) -> str | None:
        """Why the environment needs a reset (its opponent failed, or a step was interrupted),
        or None."""
    @property
    def num_envs(self) -> int:
        """Number of games ``N``."""
    @property
    def board(self) -> int:
        """Board size in rings."""
    @property
    def blitz(self) -> bool:
        """Whether the games use the blitz marble set."""
    @property
    def threads(self) -> int:
        """Worker threads."""
    @property
    def action_space_size(self) -> int:
        """Number of action indices ``A``."""
    @property
    def observation_shape(self) -> tuple[tuple[int, int, int], int]:
        """``((C, H, W), G)``: shapes of one observation's planes and globals."""
    def reset(
        self, seed: int | None = None
    ) -> tuple[dict[str, npt.NDArray[np.float32]], dict[str, npt.NDArray[np.generic]]]:
        """Starts new games everywhere; returns ``(observation, infos)``."""
    def step(
        self, actions: npt.ArrayLike, active: npt.NDArray[np.bool_] | None = None
    ) -> tuple[
        dict[str, npt.NDArray[np.float32]],
        npt.NDArray[np.float32],
        npt.NDArray[np.bool_],
        npt.NDArray[np.bool_],
        dict[str, npt.NDArray[np.generic]],
    ]:
        """Plays ``actions[i]`` in game ``i``; returns
        ``(observation, rewards, terminations, truncations, infos)``. An action that is not legal
        in its game forfeits it (``infos["illegal_action"]``); an index outside the action space
        raises ValueError naming the game, and then nothing is played. With ``active`` (bool
        [N]), only the games where it is True are played; the others are observed as they
        stand."""
    def sample_actions(self) -> npt.NDArray[np.int64]:
        """A uniform random legal action index for every game (int64 [N])."""
    def final_observations(
        self,
    ) -> tuple[npt.NDArray[np.int64], dict[str, npt.NDArray[np.float32]]]:
        """The games that ended at the last ``step`` and the observations of the positions they
        ended in, before they restarted: ``(indices int64 [K], {"planes": [K, C, H, W],
        "globals": [K, G]})`` (empty after a reset)."""
    def game(self, i: int) -> Game:
        """A copy of game ``i`` as a :class:`Game` (IndexError when ``i`` is out of range)."""
    def __len__(self) -> int: ...

_Evaluator = Callable[
    [npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.bool_]],
    tuple[npt.ArrayLike, npt.ArrayLike],
]

@final
class Bot:
    """The bot of one of Rust's players without a network, by its spec (:data:`PLAYER_SPECS`:
    ``"greedy"``, ``"mcts:200"``, ``"alphabeta:2"``), asked for one single action at a time;
    ``seed`` drives its random choices. A network's player is the engine's: build it with
    ``zertz.player``."""

    def __new__(cls, spec: str, *, seed: int = 0) -> Bot: ...
    @property
    def name(self) -> str:
        """The player's name (its spec, as Rust writes it)."""
    def choose(self, game: Game) -> int:
        """The action index the player chooses in ``game``'s current position (ValueError where
        the game is over; RuntimeError where the player failed; Ctrl-C during a search raises
        KeyboardInterrupt)."""

def match_opening(
    board: int = 37, blitz: bool = False, *, seed: int = 0, game: int = 0, actions: int = 0
) -> Game:
    """The start of game ``game`` of a match seeded ``seed`` with ``actions`` random opening
    actions: games ``2k`` and ``2k + 1`` share it (paired openings)."""

def match_player_seed(seed: int, game: int, side: int) -> int:
    """The seed a match seeded ``seed`` gives player A (side 0) or B (side 1) of game ``game``."""

def play_match_game(
    a: str | Callable[..., Any] | Any,
    b: str | Callable[..., Any] | Any,
    game: int,
    *,
    observation: str = "flat",
    who: tuple[str, str] | None = None,
    **settings: Any,
) -> dict[str, Any]:
    """Game ``game`` of a match (``zertz.match``'s keywords: ``board``, ``blitz``, ``seed``,
    ``opening_actions``, ``max_actions``, ``move_time``, ...) between ``a`` (player A, P0 in the
    even games) and ``b``: each a player spec (not a network's) or a Python agent, a
    policy ``policy(observation, mask) -> action`` (observations of the kind ``observation``) or
    a player ``choose(game) -> action``. ``who`` names the sides in errors. Returns
    ``{"record", "a_is_p0", "actions", "a_score"}``; an agent's exception is raised unchanged, an
    answer that is not a legal action index is a ValueError naming its side and the game."""

def elo(wins: int, draws: int, losses: int) -> tuple[float, float, float]:
    """The Elo difference of these results with its 95% interval, as ``zertz match`` reports it:
    ``(elo, low, high)``."""

@final
class MCTS:
    """Batched PUCT search over single actions (AlphaZero), for a list of games at once.

    ``evaluator`` is ``"uniform"`` (default), ``"rollout"`` or a callable
    ``evaluator(planes [B, C, H, W], globals [B, G], masks [B, A]) -> (logits [B, A], values [B])``.
    The settings are those of ``preset`` (``search_presets()``; None: the evaluator's choice,
    ``"rollout"`` for rollouts and ``"default"`` otherwise) with the keywords given on top;
    ``config`` shows them. A keyword of the wrong type or unknown raises TypeError; settings out
    of range (NaN and infinities included) raise ValueError naming the keyword; an exception the
    callable raises reaches the caller unchanged; answers that are not finite (values, or logits
    of legal actions) raise ValueError.

    The settings (None: the preset's value; ``mcts_settings()`` lists them):

    # <generated: mcts settings>
    - ``c_puct`` (default ``None``): Exploration constant `c_init` of PUCT (AlphaZero: 1.25).
      More than 0.
    - ``c_base`` (default ``None``): Growth of exploration with visits, `c_base` (AlphaZero:
      19652). More than 0.
    - ``fpu_reduction`` (default ``None``): First-play urgency: an unvisited child is valued at
      the parent's value minus this times the square root of the prior mass of the children
      already visited (KataGo). Any finite number.
    - ``virtual_loss`` (default ``None``): Virtual loss added on the path of a leaf waiting for
      evaluation. 0 or more.
    - ``leaves_per_round`` (default ``None``): Leaves collected from one tree per evaluation
      round. 1 to 65536.
    - ``policy_temperature`` (default ``None``): Softmax temperature of the priors:
      `softmax(logits / policy_temperature)` over the legal actions (1: the network's own
      distribution; above 1 flattens it, as Leela Chess Zero's `PolicySoftmaxTemp`). More than
      0.
    - ``dirichlet_alpha_total`` (default ``None``): Dirichlet noise at the root: total
      concentration spread over the legal actions (alpha = this / legal actions; KataGo: 10.83).
      More than 0.
    - ``dirichlet_fraction`` (default ``None``): Weight of the noise in the root priors (0 turns
      noise off; AlphaZero: 0.25). 0 to 1.
    - ``gumbel_actions`` (default ``None``): Gumbel root search (Danihelka et al., "Policy
      improvement by planning with Gumbel", ICLR 2022; mctx's `gumbel_muzero_policy`): the
      number of root actions considered, sampled without replacement by Gumbel draws plus log
      priors and narrowed by sequential halving over the search's simulations; the policy target
      is the completed-Q improved policy (`mcts::Tree::policy`). Below the root the search is
      PUCT as usual. 0: PUCT at the root too (visit counts are the policy, Dirichlet noise
      explores). 0 or 2 to 65536.
    - ``gumbel_c_visit`` (default ``None``): `c_visit` of the Gumbel search's value transform
      `sigma(q) = (c_visit + max visits) * c_scale * q`, `q` rescaled to 0..1 over the root's
      children (mctx: 50). 0 or more.
    - ``gumbel_c_scale`` (default ``None``): `c_scale` of the same transform (mctx: 0.1). More
      than 0.
    # </generated: mcts settings>
    """

    def __new__(
        cls,
        evaluator: _Evaluator | str | None = None,
        *,
        preset: Literal["default", "rollout", "network"] | None = None,
        # <generated: mcts keywords>
        c_puct: float | None = None,
        c_base: float | None = None,
        fpu_reduction: float | None = None,
        virtual_loss: float | None = None,
        leaves_per_round: int | None = None,
        policy_temperature: float | None = None,
        dirichlet_alpha_total: float | None = None,
        dirichlet_fraction: float | None = None,
        gumbel_actions: int | None = None,
        gumbel_c_visit: float | None = None,
        gumbel_c_scale: float | None = None,
        # </generated: mcts keywords>
    ) -> MCTS: ...
    @property
    def config(self) -> dict[str, float | int | bool]:
        """The search settings in use (the preset with the overrides)."""
    def search(
        self,
        games: list[Game],
        simulations: int = 800,
        *,
        noise: bool = False,
        noise_alpha_total: float | None = None,
        noise_fraction: float | None = None,
        seed: int = 0,
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.uint32]]:
        """Returns ``(policies [N, A], values [N], visits [N])`` of the roots: the policies are
        the visit distributions, or with ``gumbel_actions`` the Gumbel root's improved policies
        (``softmax(log prior + sigma(completed q))``). ``simulations`` is at most Rust's
        bound, ``zertz_search::mcts::MAX_SIMULATIONS`` (the error of a larger count states it).
        With ``noise=True``, Dirichlet noise is mixed into each root (``noise_alpha_total`` and
        ``noise_fraction``; None: the settings' own), or with ``gumbel_actions`` the root's
        Gumbel draws are seeded by ``seed``. Ctrl-C stops the
        search between rounds of evaluations (``KeyboardInterrupt``); the next call starts
        afresh."""

def load_records(path: str | PathLike[str]) -> list[dict[str, Any]]:
    """The game records of a file (``games-*.jsonl`` of self-play, ``zertz match --out``, one
    per line), each checked by Rust's record type and replayed: ``{"game", "board",
    "blitz", "first_player", "players" (matches only), "moves", "winner", "end",
    "captures"}``. Raises ValueError naming the line that is not a record or does not replay.
    (Records of earlier versions name ``first_player`` ``first``; they read the same.)"""

def parse_first_player(text: str) -> Literal["random", "P0", "P1"]:
    """The word of a first player (``"random"``, ``"P0"`` or ``"P1"``) as ``text`` names it in
    any case: the one reading of ``first_player`` in every front end (``VecEnv``,
    ``zertz.gymnasium``, ``zertz.sb3``). ValueError for any other text."""

def parse_player(spec: str) -> dict[str, Any]:
    """A player spec (its grammar: :data:`PLAYER_SPECS`) read by Rust: ``{"name": the
    canonical spec, "model": the model file or None, "simulations": the count or None,
    "precision": the precision it names or None, "gumbel": the actions its Gumbel root considers
    or None, "depth": an alpha-beta depth or None, "time": its own time per move in seconds or
    None, "program": a ``cmd:`` player's program or None}``.
    Raises ValueError otherwise."""

def dataset(
    sources: Sequence[str | PathLike[str]],
    out: str | PathLike[str],
    *,
    boards: list[int] | None = None,
    min_turns: int = 0,
    exclude_players: Sequence[str] = (),
    exclude_robots: bool = False,
    ends: list[str] | None = None,
    validation: float | None = None,
    seed: int = 0,
    shard_size: int | None = None,
    max_games: int | None = None,
) -> dict[str, Any]:
    """Training shards from game records (as ``zertz dataset``): ``sources`` are record files,
    folders and archives (.tar.xz, .tar.gz, .tar, .zip); ``out`` a new or empty folder that gets
    ``train/`` and ``validation/`` shards (``shard-BB-NNNNN.npz``, one board each) and
    ``games.jsonl`` (every kept game: id, name, split, board, first player, players, end, winner,
    moves), and last the manifest ``dataset.json`` (format, version, sources, settings, summary):
    it is made beside ``out`` as ``.NAME.partial-PID`` and renamed when complete, so a failure
    leaves nothing (and says so) and the next build removes what a killed one left
    (``removed_leftovers`` in the summary). Games are kept by ``boards`` (None: all),
    ``min_turns``, players left out (``exclude_players``, boardspace's robots with
    ``exclude_robots``) and ``ends`` (``"capture"``, ``"resign"``, ``"time"``, ``"draw"``; None:
    all four), at most ``max_games``; a share ``validation`` of them (None: Rust's 0.05) is
    held out by game. Bad records are counted by reason in the summary dict, never raised. A
    folder that holds files, or one that another build is making, raises FileExistsError, a
    source that cannot be read OSError, bad settings ValueError."""

def selfplay_config(
    config: str | PathLike[str] | Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The self-play settings ``config`` (a TOML file, a dict of the same keys, or None: the
    defaults) as Rust reads them: every key, checked. Raises ValueError naming a key that
    is unknown or out of range."""

def selfplay_settings() -> list[dict[str, Any]]:
    """The keyword settings of ``zertz.selfplay`` (those of ``zertz selfplay`` and its config
    files but the ``search`` table: Rust's ``SelfPlayConfig``), one dict per keyword, in
    order: ``{"name", "type"`` (its annotation), ``"default"`` (without a config), ``"doc"}``.
    The keywords of ``selfplay`` in the engine's stub are generated from it
    (``python/tests/settings_stub.py``).

    >>> [s["default"] for s in selfplay_settings() if s["name"] == "full_simulations"]
    [400]
    """

def mcts_settings() -> list[dict[str, Any]]:
    """The keywords of ``MCTS`` (the search's settings as overrides of a preset, but
    ``tree_reuse``: MCTS searches from new roots at each call), one dict per keyword, in order:
    ``{"name", "type"`` (its annotation), ``"default"`` (None: the preset's), ``"doc"}``. The
    keywords of ``MCTS`` in this stub are generated from it (``python/tests/settings_stub.py``).

    >>> [s["name"] for s in mcts_settings()][:3]
    ['c_puct', 'c_base', 'fpu_reduction']
    """

def match_config(**settings: Any) -> dict[str, Any]:
    """The match settings ``settings`` (keywords of ``zertz.match``, of any match:
    ``zertz.evaluate``'s too) as Rust reads them: a dict with every key, checked by Rust's
    own ranges. ValueError names a value out of range, TypeError an unknown keyword or
    a value of the wrong type."""

def match_settings() -> list[dict[str, Any]]:
    """The settings of ``match`` (those of ``zertz match`` and its config files: Rust's
    ``MatchSettings``), one dict per keyword, in order: ``{"name", "type"`` (its annotation),
    ``"default"`` (None: none), ``"doc"}``. The keywords of ``match`` in this stub are generated
    from it (``python/tests/settings_stub.py``).

    >>> [s["default"] for s in match_settings() if s["name"] == "games"]
    [100]
    """
