"""The engine with exported networks: native module of the ``zertz-engine`` package (private:
``zertz.match``, ``zertz.selfplay`` and ``zertz.exported`` use it)."""

from collections.abc import Callable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Final, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "AOTI_MODEL_PREFIX",
    "ARCHITECTURE",
    "BUILTIN_MODEL",
    "CODE_FORMAT_VERSION",
    "MAX_HEADER_BYTES",
    "MAX_PARAMETERS",
    "MIN_SIMULATIONS",
    "MODEL_FORMAT",
    "MODEL_FORMAT_VERSION",
    "NETWORK_PRESETS",
    "NETWORK_SIZE_LIMITS",
    "PRECISIONS",
    "Bot",
    "__version__",
    "bench_player",
    "builtin_model",
    "check_device",
    "compiled_network_path",
    "decode_network",
    "devices",
    "encode_network",
    "match",
    "network_weights",
    "read_network",
    "selfplay",
]

_Evaluator = Callable[
    [npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.bool_]],
    tuple[npt.ArrayLike, npt.ArrayLike],
]

__version__: Final[str]
MODEL_FORMAT: Final[str]
AOTI_MODEL_PREFIX: Final[str]
BUILTIN_MODEL: Final[str]
MODEL_FORMAT_VERSION: Final[int]
CODE_FORMAT_VERSION: Final[int]
ARCHITECTURE: Final[str]
MAX_PARAMETERS: Final[int]
MAX_HEADER_BYTES: Final[int]
MIN_SIMULATIONS: Final[int]
NETWORK_PRESETS: Final[dict[str, dict[str, int]]]
NETWORK_SIZE_LIMITS: Final[dict[str, int]]
PRECISIONS: Final[tuple[str, ...]]

_Tensors = list[tuple[str, list[int], bytes]]

def builtin_model() -> bytes:
    """The built-in network's file (a network file, as ``zertz.export`` writes them) as bytes:
    ``decode_network(builtin_model(), "builtin")`` reads it, ``zertz.exported.load_network(
    "builtin")`` makes its PyTorch network, and its metadata says how it was trained and how it
    plays (``provenance``)."""

def read_network(path: str | PathLike[str]) -> tuple[str, str, _Tensors]:
    """Reads and checks the network file at ``path`` as the engine does before it plays one:
    ``(metadata JSON, SHA-256 of the weights, [(name, shape, float32 bytes)])``. ValueError says
    what is wrong with a file that is not exactly a network file; OSError for one that cannot
    be read. A program (a TorchScript file of an older zertz, an AOTInductor package) is refused
    with the command that converts it (``python -m zertz convert-network``,
    ``zertz.exported.convert_network``). ``zertz.exported.load_network`` makes the PyTorch
    network of one."""

def decode_network(data: bytes, name: str) -> tuple[str, str, _Tensors]:
    """:func:`read_network` on a file's bytes (``name`` names it in errors)."""

def compiled_network_path(sha256: str, device: str, precision: str) -> Path | None:
    """Where the package compiled on this machine from the network file whose weights' SHA-256
    is ``sha256`` is kept (``--compiled`` looks there); None without a cache folder."""

def network_weights(
    channels: int, blocks: int, policy_rank: int, value_channels: int, value_hidden: int
) -> int:
    """The number of weights a network file of these sizes holds, which ``MAX_PARAMETERS``
    bounds (``zertz.nn.NetConfig`` checks the sizes)."""

def encode_network(metadata: str, tensors: _Tensors) -> bytes:
    """The bytes of a network file of ``metadata`` (JSON) and ``tensors``, checked as the
    engine checks one it reads (ValueError names what does not fit the architecture)."""

def selfplay(
    out: str | PathLike[str],
    evaluator: _Evaluator | str | None = None,
    *,
    model: str | PathLike[str] | None = None,
    config: str | PathLike[str] | Mapping[str, Any] | None = None,
    device: str | None = None,
    precision: str | None = None,
    shared_inference: bool = False,
    inference_threads: int | None = None,
    cuda_graphs: bool | None = None,
    trust_code: bool = False,
    # <generated: selfplay keywords>
    board: int = ...,
    blitz: bool = ...,
    games: int = ...,
    threads: int = ...,
    games_per_worker: int = ...,
    seed: int = ...,
    full_simulations: int = ...,
    fast_simulations: int = ...,
    full_search_probability: float = ...,
    temperature: float = ...,
    temperature_actions: int = ...,
    final_temperature: float = ...,
    resign_threshold: float = ...,
    resign_playout_fraction: float = ...,
    max_actions: int = ...,
    shard_size: int = ...,
    # </generated: selfplay keywords>
) -> dict[str, Any]:
    """Runs self-play in-process, writing ``.npz`` shards and ``games-*.jsonl`` records into
    ``out``; returns the summary dict (the same as ``zertz selfplay --json``: games, results,
    samples, shards, actions, evaluations, seconds, ``network_seconds``, ``network_share`` and
    ``network_batches`` (its forward passes) with a model, the ``search`` settings used).

    The games are guided by ``evaluator`` (``"uniform"``, ``"rollout"`` or a callable) or by the
    network file ``model`` (a program, a TorchScript file or an AOTInductor package, only with
    ``trust_code=True``: for one you made yourself on this machine), on ``device``: ``"auto"``,
    ``"cpu"``, ``"cuda"`` (every GPU, a copy of the network on each), ``"cuda:N"`` or
    ``"cuda:N,cuda:M"``, in ``precision``: ``"auto"`` (bf16 on a GPU, fp32 on the CPU),
    ``"fp32"``, ``"bf16"`` or ``"fp16"``; on the CPU each worker runs it itself unless
    ``shared_inference``; on a GPU ``inference_threads`` threads merge the workers' requests;
    None: the engine's defaults, ``"auto"``, ``"auto"`` and 4; on a GPU it runs through CUDA
    graphs where it can: ``cuda_graphs`` None, or True for always, an error where it cannot, or
    False for never. ``config`` is a TOML file, a dict of the same keys (``{"games": 8, "search":
    {"preset": "rollout"}}``) or None (the defaults); the keyword settings below override its
    keys (those of ``zertz selfplay``, listed by ``selfplay_settings()``; ``search`` is a table,
    given in ``config``). A keyword of the wrong type or an unknown one raises TypeError, a value
    out of range ValueError naming it. A folder that already holds self-play output raises
    FileExistsError (nothing is replaced); a model that cannot be read raises OSError, one that
    is not a network file (a program, unless trusted) or not for the board ValueError, one that
    fails while it plays (NaN answers, a device error) RuntimeError. Ctrl-C stops the workers
    after their round of evaluations: the games finished by then are written whole, then
    ``KeyboardInterrupt`` is raised.

    The settings (each defaults to the config's value, else to the engine's default):

    # <generated: selfplay settings>
    - ``board`` (default ``37``): The board, by its number of rings. One of 37, 40, 43, 44, 48
      or 61.
    - ``blitz`` (default ``False``): Blitz marble set (5/7/9) instead of the standard one.
    - ``games`` (default ``100``): Games to play.
    - ``threads`` (default ``0``): Worker threads (0: every core). At most 1024.
    - ``games_per_worker`` (default ``32``): Games searched together by one worker; their leaves
      are evaluated in one batch. 1 to 65536.
    - ``seed`` (default ``0``): Seed of everything random (first player, noise, temperature,
      playout caps).
    - ``full_simulations`` (default ``400``): Simulations of a full search (its visits become a
      policy target; one simulation evaluates the root only). At least 2.
    - ``fast_simulations`` (default ``80``): Simulations of a fast search (KataGo's playout-cap
      randomization; not a policy target). At least 2.
    - ``full_search_probability`` (default ``0.25``): Probability that a move gets a full search
      (1 turns playout-cap randomization off). 0 to 1.
    - ``temperature`` (default ``1.0``): Temperature of move selection for the first
      `temperature_actions` actions of a game. 0 or more.
    - ``temperature_actions`` (default ``20``): Number of actions played with `temperature`;
      later ones use `final_temperature`.
    - ``final_temperature`` (default ``0.0``): Temperature after that (0: the most visited
      action). 0 or more.
    - ``resign_threshold`` (default ``-0.95``): Resign when the root value of the player to move
      stays below this (-1 turns it off). -1 to 1.
    - ``resign_playout_fraction`` (default ``0.1``): Share of games that never resign, to
      measure how often resignation would have been wrong. 0 to 1.
    - ``max_actions`` (default ``1000``): A game is stopped as a draw after this many actions.
      At least 1.
    - ``shard_size`` (default ``4096``): Training samples per shard file. 1 to 1048576.
    # </generated: selfplay settings>
    """

def check_device(name: str) -> None:
    """Checks a device name of the engine's grammar (``auto``, ``cpu``, ``cuda`` (every GPU),
    ``cuda:N`` or ``cuda:N,cuda:M``) without asking the machine what it has. Raises ValueError
    for one that is not a device."""

def devices(name: str) -> list[str]:
    """The devices a device name gives on this machine, in order (``["cpu"]``, ``["cuda:0",
    "cuda:1"]``): ``auto`` is every GPU, or the CPU when there is none. Raises ValueError for a
    name that is not a device or names a GPU this machine does not have.

    >>> devices("cpu")
    ['cpu']
    """

def match(
    a: str,
    b: str,
    *,
    device: str | None = None,
    precision: str | None = None,
    shared_inference: bool = False,
    inference_threads: int | None = None,
    cuda_graphs: bool | None = None,
    trust_code: bool = False,
    # <generated: match keywords>
    games: int = 100,
    board: int = 37,
    blitz: bool = False,
    seed: int = 0,
    threads: int = 0,
    search_threads: int = 0,
    opening_actions: int = 0,
    max_actions: int = 1000,
    out: str | PathLike[str] | None = None,
    answer_time: float = 30.0,
    move_time: float | None = None,
    # </generated: match keywords>
) -> dict[str, Any]:
    """Plays a match in-process between players ``a`` and ``b`` (specs: ``zertz.PLAYER_SPECS``
    says their grammar), alternating who starts; returns the summary dict (the same as
    ``zertz match --json``: ``wins``, ``draws`` and ``losses`` of ``a``, ``score``, ``elo`` with
    ``elo_low`` and ``elo_high`` (95%), ``seconds``, ``move_time``, ``search_threads``, and
    what each side did, ``a_effort`` and ``b_effort``: ``{"moves", "seconds", "cpu_seconds",
    "work", "unit"}``, where ``cpu_seconds`` is the CPU time of every thread that worked for the
    side (its search threads, a ``cmd:`` program's process) and ``work`` counts the ``"nodes"``
    or ``"simulations"`` of ``unit``, None for a player that does not search). Networks run on
    ``device`` in ``precision`` (unless a spec names its own; on a GPU through CUDA graphs where
    they can be: ``cuda_graphs`` None, or True for always, False for never). ``nn:`` players
    read network files; a program (a TorchScript file, an AOTInductor package) plays only with
    ``trust_code=True``, for one you made yourself on this machine, and is refused otherwise with
    the command that converts it.

    The other keywords are the match's settings, those of ``zertz match`` and its config files
    (``match_settings()``); an unknown one raises TypeError, a value of the wrong type TypeError,
    one out of range ValueError naming it:

    # <generated: match settings>
    - ``games`` (default ``100``): Number of games; the players alternate who starts. At most
      16777216.
    - ``board`` (default ``37``): The board, by its number of rings. One of 37, 40, 43, 44, 48
      or 61.
    - ``blitz`` (default ``False``): The blitz marble set (5/7/9) instead of the standard one
      (6/8/10).
    - ``seed`` (default ``0``): Seed of the match (players and games are seeded from it).
    - ``threads`` (default ``0``): Worker threads (0: one per core). Each plays one game at a
      time and keeps its two players' memory: 32 MiB for two alpha-beta players (a 16 MiB table
      each), a search tree for an MCTS or network player (up to 1 GiB on long searches). At most
      1024.
    - ``search_threads`` (default ``0``): Threads of each network player's search (0: the cores
      shared among the games played at once, so that one game at a time searches on every core):
      each thread evaluates rounds of at least 8 leaves of its own and takes turns on the tree.
      The games of a fixed number of simulations depend on it (not on the timing): name it (1,
      say) for games that do not depend on the machine's cores. At most 256.
    - ``opening_actions`` (default ``0``): Random single actions played before the players take
      over, the same for both games of a pair (A on each side once): varied games between
      deterministic players.
    - ``max_actions`` (default ``1000``): Actions after which an unfinished game is a draw. At
      least 1.
    - ``out`` (default ``None``): Write every game as a JSON line to this file, in game order as
      they end: a new file, never one that exists (left out: not written).
    - ``answer_time`` (default ``30.0``): The longest a cmd: player's program may take to answer
      one command, in seconds; past it, or past 1 MiB, it fails the match and is ended. More
      than 0, at most 86400 seconds.
    - ``move_time`` (default ``None``): Time per move in seconds (left out or 0: none) for every
      player that searches (alphabeta, mcts, uniform, nn) and has no :time= of its own: each
      search runs until it is spent instead of counting simulations or depth. Players of
      different kinds meet fairly only this way. 0 or 0.001 to 3600 seconds.
    # </generated: match settings>

    With ``out``, a file that exists (a FIFO among them) raises FileExistsError and is never
    replaced or opened. A bad player spec raises ValueError, a network or program that fails
    during a game RuntimeError; Ctrl-C raises ``KeyboardInterrupt`` (programs are ended at once;
    the games finished are in ``out``)."""

def bench_player(
    spec: str,
    *,
    boards: Sequence[int] | None = None,
    search_threads: Sequence[int] | None = None,
    move_time: float = ...,
    searches: int = ...,
    device: str | None = None,
    precision: str | None = None,
) -> list[dict[str, Any]]:
    """A player's search speed (``zertz bench player``): for each of ``boards`` (rings; None: 37
    and 61, those the player's network plays) and each count of ``search_threads`` (None: 1),
    the simulations (or alpha-beta's positions) per second and per CPU-second of ``searches``
    searches of ``move_time`` seconds on the opening, a middle game and an endgame (a fresh
    player each search, after one to warm up);
    one dict per row (``board``, ``position``, ``search_threads``, ``searches``, ``seconds``,
    ``cpu_seconds``, ``work``, ``unit``, ``per_second``, ``per_cpu_second``). Networks run on
    ``device`` in ``precision``. ``move_time`` and ``searches`` default to the engine's
    (``zertz bench player --help`` shows them). Ctrl-C stops it (KeyboardInterrupt).

    >>> rows = bench_player("mcts:100", move_time=0.05, searches=1)
    >>> [(r["board"], r["position"]) for r in rows][:4]
    [(37, 'opening'), (37, 'middle'), (37, 'endgame'), (61, 'opening')]
    >>> sorted({r["board"] for r in bench_player("nn:builtin", move_time=0.05, searches=1)})
    [37]
    """

@final
class Bot:
    """The bot of one of the engine's players, networks' included (``nn:MODEL[:SIMS]``,
    ``nn:builtin``), asked for one single action at a time in games of ``board`` rings and the
    blitz marble set or not (a network is checked to play them as it loads). A network's search uses
    ``search_threads`` threads (None: every core), each evaluating rounds of leaves of its own
    with one libtorch thread each."""

    def __new__(
        cls,
        spec: str,
        board: int = 37,
        blitz: bool = False,
        *,
        seed: int = 0,
        device: str | None = None,
        precision: str | None = None,
        inference_threads: int | None = None,
        search_threads: int | None = None,
    ) -> Bot: ...
    @property
    def name(self) -> str:
        """The player's name (its spec, as the engine writes it)."""
    def choose(self, game: Any) -> int:
        """The action index the player chooses in the current position of ``game`` (a
        ``zertz.Game`` of the player's board and marble set)."""
