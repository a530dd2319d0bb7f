"""The reference policy/value network (:mod:`zertz.exported` writes it for the engine).

One set of weights works on every board shape: the trunk is fully convolutional over the axial
grid of the encoding (cells off the board are masked to zero after every layer, and pooling counts
only the board's cells), and the policy head scores each action from the features of the rings it
names, gathered with :func:`zertz.ring_cells`:

- a placement of colour ``c`` on ring ``at`` removing ``rm`` scores
  ``colour[c, at] + remove[rm] + q[at] · k[rm]`` (a low-rank interaction between the two rings;
  "no removal" has a learned bias instead of ``remove`` and no interaction);
- a hop from ``ring`` in direction ``d`` scores ``hop[ring, d]``;
- a pass scores from the pooled features.

The board is read from the input itself (plane 0 counts the board's cells, which differ for every
shape), so ``forward(planes, globals)`` takes any batch of one board. Trained weights are only
meaningful on the boards and marble sets they were trained on (``boards``, ``marbles``):
:func:`zertz.exported.export` records those in the metadata, and the engine refuses a model for
another board or marble set.

>>> import torch, zertz
>>> from zertz.nn import NetConfig, ZertzNet
>>> net = ZertzNet(NetConfig.preset("tiny"), boards=[37]).eval()
>>> planes, globals_ = zertz.Game().encode()
>>> logits, value = net(torch.from_numpy(planes)[None], torch.from_numpy(globals_)[None])
>>> logits.shape, value.shape
(torch.Size([1, 4441]), torch.Size([1]))
"""

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from types import MappingProxyType
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

import zertz_engine
from zertz._zertz import BOARDS, MARBLE_SETS, Range, observation_shape, ring_cells


def marbles_of(blitz: bool) -> list[str]:
    """The marble sets of a network trained on games of one set (``blitz`` or not).

    >>> marbles_of(True), marbles_of(False)
    (['blitz'], ['standard'])
    """
    standard, blitz_set = MARBLE_SETS
    return [blitz_set] if blitz else [standard]


def check_marbles(marbles: list[str]) -> list[str]:
    """``marbles`` checked, sorted and without repeats (as a network's boards): ValueError unless
    it is a non-empty list of names of :data:`MARBLE_SETS`.

    >>> check_marbles(["standard", "blitz", "blitz"])
    ['blitz', 'standard']
    """
    if not marbles or isinstance(marbles, str) or any(m not in MARBLE_SETS for m in marbles):
        raise ValueError(
            f"marbles must be a non-empty list of {list(MARBLE_SETS)}, not {marbles!r}"
        )
    return sorted(set(marbles))


class NonFiniteError(ValueError):
    """A network (or a loss) holds NaN or infinite values: such weights are never exported or
    checkpointed (training diverged, usually from too high a learning rate)."""


def non_finite(module: nn.Module) -> list[str]:
    """The names of the parameters and buffers of ``module`` that hold NaN or infinite values."""
    tensors = [*module.named_parameters(), *module.named_buffers()]
    return [
        name
        for name, t in tensors
        if t.is_floating_point() and not bool(torch.isfinite(t.detach()).all())
    ]


def check_finite(module: nn.Module, what: str) -> None:
    """NonFiniteError (naming ``what`` and the first tensors) when ``module`` holds NaN or
    infinite parameters or buffers."""
    if bad := non_finite(module):
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        raise NonFiniteError(
            f"{what}: the network holds NaN or infinite values ({', '.join(bad[:3])}{more}); "
            "training diverged (lower train.learning_rate)"
        )


#: The most parameters a network may have: the engine's bound (``zertz_engine.MAX_PARAMETERS``,
#: which it checks in every network file it reads), 4e8 bytes of float32 weights, which training
#: holds about four times (the gradients and AdamW's two moments). The ``large`` preset has 1.1e7.
MAX_PARAMETERS: int = zertz_engine.MAX_PARAMETERS


def parameter_count(
    channels: int, blocks: int, policy_rank: int, value_channels: int, value_hidden: int
) -> int:
    """The count of :class:`ZertzNet`'s parameters at these sizes (:class:`NetConfig`'s: the
    weights that training updates, the auxiliary head's included; the same on every board),
    computed without building it."""
    shapes = [observation_shape(b) for b in BOARDS]
    planes = max(planes for (planes, _, _), _ in shapes)
    globals_ = max(globals_ for _, globals_ in shapes)
    c, r = channels, policy_rank
    vc, vh = value_channels, value_hidden
    stem = 9 * planes * c + (globals_ * c + c) + 2 * c  # conv, globals, batch norm
    # Two 3x3 convolutions, two batch norms and the pooling's linear layer.
    block = 2 * 9 * c * c + 2 * 2 * c + (2 * c * c + c)
    policy = (
        (c * c + c)  # ring
        + (3 * c + 3)  # colour
        + (c + 1)  # remove
        + 1  # no_removal
        + 2 * (c * r + r)  # query, key
        + (6 * c + 6)  # hop
        + (2 * c + 1)  # pass_
    )
    value = (
        c * vc  # value_conv
        + 2 * vc  # value_bn
        + ((2 * vc + globals_) * vh + vh)  # value_fc1
        + (vh + 1)  # value_fc2
        + (6 * vh + 6)  # captures
    )
    return stem + blocks * block + policy + value


#: Each size's largest value, the engine's (the smallest is 1).
_LIMITS = zertz_engine.NETWORK_SIZE_LIMITS


def _size(default: int, most: int) -> Any:
    """A size of :class:`NetConfig`: an integer from 1 to ``most`` (the engine's
    :class:`~zertz.Range`, whose words the error takes)."""
    return field(default=default, metadata={"range": Range.between(1, most)})


@dataclass(frozen=True)
class NetConfig:
    """Size of the network. Presets: ``tiny`` (trains on two CPU cores), ``small``, ``medium``,
    ``large`` (for a GPU). Every size is an integer within its declared range (``range`` in
    the field's metadata), and together they make at most :data:`MAX_PARAMETERS` parameters
    (:meth:`parameters`): ValueError names the key, or the sizes and the count, when the config
    is made, before any weight is allocated."""

    # The defaults are the tiny preset; the bounds and presets are the engine's architecture's.
    #: Channels of the residual trunk.
    channels: int = _size(32, _LIMITS["channels"])
    #: Residual blocks (each with a global-pooling bias, as in KataGo).
    blocks: int = _size(3, _LIMITS["blocks"])
    #: Rank of the placement/removal interaction of the policy head.
    policy_rank: int = _size(8, _LIMITS["policy_rank"])
    #: Channels of the value head before pooling.
    value_channels: int = _size(16, _LIMITS["value_channels"])
    #: Hidden units of the value head.
    value_hidden: int = _size(64, _LIMITS["value_hidden"])

    #: The named sizes, by name: ``(channels, blocks)`` (the engine's presets).
    SIZES: ClassVar[Mapping[str, tuple[int, int]]] = MappingProxyType(
        {name: (s["channels"], s["blocks"]) for name, s in zertz_engine.NETWORK_PRESETS.items()}
    )
    #: The names of the sizes, smallest first.
    PRESETS: ClassVar[tuple[str, ...]] = tuple(SIZES)

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, int) or isinstance(v, bool):
                raise ValueError(f"network.{f.name} must be a positive integer, not {v!r}")
            values: Range = f.metadata["range"]
            try:
                inside = values.contains(v)
            except OverflowError:  # an int that no float holds: past every bound
                inside = False
            if not inside:
                raise ValueError(f"network.{f.name} {values.reason('int')}, not {v!r}")
        sizes = (
            f"network: {self.blocks} blocks of {self.channels} channels (policy_rank "
            f"{self.policy_rank}, value_channels {self.value_channels}, value_hidden "
            f"{self.value_hidden})"
        )
        if (count := self.parameters()) > MAX_PARAMETERS:
            raise ValueError(
                f"{sizes} make {count:,} parameters, more than the {MAX_PARAMETERS:,} a network "
                "may have"
            )
        # The engine bounds what a network file holds, which differs a little (a network that
        # trained, and then could not be exported, is refused here instead).
        if (stored := self.stored_parameters()) > MAX_PARAMETERS:
            raise ValueError(
                f"{sizes} make {stored:,} weights in a network file (the batch norms' statistics "
                f"included), more than the {MAX_PARAMETERS:,} a network may have"
            )

    def parameters(self) -> int:
        """The count of :class:`ZertzNet`'s parameters at this size: :func:`parameter_count`.

        >>> NetConfig.preset("tiny").parameters() == sum(
        ...     p.numel() for p in ZertzNet(NetConfig.preset("tiny"), boards=[37]).parameters()
        ... )
        True
        """
        return parameter_count(**asdict(self))

    def stored_parameters(self) -> int:
        """The count of the weights a network file of this size holds (the engine's count, which
        :data:`MAX_PARAMETERS` bounds too): :meth:`parameters` without the training-only head,
        with the batch norms' running means and variances.

        >>> from zertz.exported import network_tensors
        >>> net = ZertzNet(NetConfig.preset("tiny"), boards=[37])
        >>> NetConfig.preset("tiny").stored_parameters() == sum(
        ...     len(data) // 4 for _, _, data in network_tensors(net)
        ... )
        True
        """
        return zertz_engine.network_weights(**asdict(self))

    @staticmethod
    def preset(name: str) -> "NetConfig":
        """A named size (:attr:`SIZES`: ``(channels, blocks)`` by name, ``tiny`` the smallest).

        >>> NetConfig.preset("small").channels == NetConfig.SIZES["small"][0]
        True
        """
        if name not in NetConfig.SIZES:
            raise ValueError(
                f"unknown network preset {name!r}: choose one of {list(NetConfig.PRESETS)}"
            )
        return NetConfig(**zertz_engine.NETWORK_PRESETS[name])

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "NetConfig":
        """From a mapping such as a config's ``[network]`` table: ``preset`` and/or any field.
        Unknown keys raise ValueError."""
        d = dict(d)
        base = NetConfig.preset(str(d.pop("preset"))) if "preset" in d else NetConfig()
        known = {f.name for f in fields(NetConfig)}
        unknown = sorted(set(d) - known, key=repr)  # (keys of any type)
        if unknown:
            raise ValueError(f"unknown network keys {unknown}: expected preset or {sorted(known)}")
        return NetConfig(**{**asdict(base), **d})


#: The auxiliary head's weights (``captures.weight``, ``captures.bias``): training only, absent
#: from checkpoints written before it.
AUX_PREFIX = "captures."
#: The auxiliary head predicts each side's final captures divided by this.
CAPTURES_SCALE = 5.0


def _pool(x: Tensor, mask: Tensor, count: Tensor) -> Tensor:
    """Mean and max over the board's cells: ``[B, C, H, W]`` → ``[B, 2C]``."""
    mean = (x * mask).sum(dim=(2, 3)) / count
    high = (x - (1.0 - mask) * 1e4).amax(dim=(2, 3))
    return torch.cat([mean, high], dim=1)


class _Block(nn.Module):
    """A residual block whose first convolution gets a per-channel bias from global pooling."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.pool = nn.Linear(2 * c, c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x: Tensor, mask: Tensor, count: Tensor) -> Tensor:
        y = F.relu(self.bn1(self.conv1(x))) * mask
        y = y + self.pool(_pool(y, mask, count))[:, :, None, None]
        y = self.bn2(self.conv2(y))
        return F.relu(x + y) * mask


class ZertzNet(nn.Module):
    """Residual policy/value network: ``forward(planes [B, C, H, W], globals [B, G])`` →
    ``(logits [B, A], value [B])`` (``C, H, W`` and ``G``: ``zertz.observation_shape(board)``);
    logits over the board's whole action space (the engine and the losses mask illegal actions),
    value in ``-1..1`` for the player to move. ``boards`` and
    ``marbles`` (names of :data:`MARBLE_SETS`, default ``["standard"]``) are what it is trained
    for: the export writes them in the metadata."""

    boards: list[int]
    marbles: list[str]
    cells: Tensor
    config_json: str
    metadata_json: str

    def __init__(
        self, config: NetConfig, boards: list[int], marbles: list[str] | None = None
    ) -> None:
        super().__init__()
        bad = [b for b in boards if b not in BOARDS]
        if not boards or bad:
            raise ValueError(f"boards must be a non-empty list of {BOARDS}, not {boards}")
        marbles = ["standard"] if marbles is None else check_marbles(marbles)
        (planes, _, _), globals_ = observation_shape(boards[0])
        c = config.channels
        self.config_json = json.dumps(asdict(config), sort_keys=True)
        self.boards = sorted(set(boards))
        self.marbles = marbles
        # cells[R, :R] is the grid cell of every ring of the R-ring board.
        cells = torch.zeros(max(BOARDS) + 1, max(BOARDS), dtype=torch.long)
        for b in BOARDS:
            cells[b, :b] = torch.from_numpy(ring_cells(b))
        self.register_buffer("cells", cells, persistent=False)
        self.metadata_json = "{}"

        self.stem = nn.Conv2d(planes, c, 3, padding=1, bias=False)
        self.stem_globals = nn.Linear(globals_, c)
        self.stem_bn = nn.BatchNorm2d(c)
        self.blocks = nn.ModuleList([_Block(c) for _ in range(config.blocks)])

        self.ring = nn.Linear(c, c)
        self.colour = nn.Linear(c, 3)
        self.remove = nn.Linear(c, 1)
        self.no_removal = nn.Parameter(torch.zeros(1))
        self.query = nn.Linear(c, config.policy_rank)
        self.key = nn.Linear(c, config.policy_rank)
        self.hop = nn.Linear(c, 6)
        self.pass_ = nn.Linear(2 * c, 1)
        self.rank_scale = 1.0 / float(config.policy_rank) ** 0.5

        self.value_conv = nn.Conv2d(c, config.value_channels, 1, bias=False)
        self.value_bn = nn.BatchNorm2d(config.value_channels)
        self.value_fc1 = nn.Linear(2 * config.value_channels + globals_, config.value_hidden)
        self.value_fc2 = nn.Linear(config.value_hidden, 1)
        # Auxiliary (training only): each side's captures by colour at the game's end.
        self.captures = nn.Linear(config.value_hidden, 6)

    def forward(self, planes: Tensor, globals_: Tensor) -> tuple[Tensor, Tensor]:
        return self.evaluate(planes, globals_, self._rings(planes, globals_))

    def forward_train(self, planes: Tensor, globals_: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """:meth:`forward` and the auxiliary head that training alone uses: the marbles each
        side will hold at the game's end ``[B, 6]`` (white, grey, black; the mover's first), in
        units of :data:`CAPTURES_SCALE`. Not part of an exported network."""
        logits, value, hidden = self._heads(planes, globals_, self._rings(planes, globals_))
        return logits, value, self.captures(hidden)

    def _rings(self, planes: Tensor, globals_: Tensor) -> int:
        """The board of a batch, checked: one board the network accepts."""
        if planes.dim() != 4 or globals_.dim() != 2 or planes.size(0) != globals_.size(0):
            raise ValueError("expected planes [B, C, H, W] and globals [B, G] with the same B")
        if planes.size(0) == 0:
            raise ValueError("empty batch")
        mask = planes[:, 0:1]
        rings = int(mask[0].sum().round())
        if rings not in self.boards:
            raise ValueError(
                "this network accepts boards " + str(self.boards) + ", not " + str(rings) + " rings"
            )
        count = mask.sum(dim=(2, 3)).clamp(min=1.0)
        # 40 and 44 rings (43 and 48) share a grid, so a batch could mix them.
        if bool((count != count[0]).any()):
            raise ValueError("a batch must hold positions of one board")
        return rings

    def evaluate(self, planes: Tensor, globals_: Tensor, rings: int) -> tuple[Tensor, Tensor]:
        """:meth:`forward` for a batch of the ``rings``-ring board, without the checks that read
        the input (what :func:`export_aoti` compiles, one board at a time)."""
        logits, value, _ = self._heads(planes, globals_, rings)
        return logits, value

    def _heads(self, planes: Tensor, globals_: Tensor, rings: int) -> tuple[Tensor, Tensor, Tensor]:
        """Logits, value and the value head's hidden layer (which the auxiliary head reads)."""
        x, mask, count = self._trunk(planes, globals_)
        hidden = self._value_hidden(x, mask, count, globals_)
        value = torch.tanh(self.value_fc2(hidden)).squeeze(1)
        return self._policy(x, mask, count, rings), value, hidden

    def _trunk(self, planes: Tensor, globals_: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The residual trunk's features ``[B, C, H, W]``, the board's mask and its cell count."""
        mask = planes[:, 0:1]
        count = mask.sum(dim=(2, 3)).clamp(min=1.0)
        x = self.stem(planes) + self.stem_globals(globals_)[:, :, None, None]
        x = F.relu(self.stem_bn(x)) * mask
        for block in self.blocks:
            x = block(x, mask, count)
        return x, mask, count

    def _policy(self, x: Tensor, mask: Tensor, count: Tensor, rings: int) -> Tensor:
        """The logits over the board's whole action space."""
        b = x.size(0)
        # Policy: per-ring features gathered from the grid.
        # An integer again after an engine converts every buffer to bf16 or fp16 (exact below 256).
        idx = self.cells[rings, :rings].long()
        f = x.flatten(2).index_select(2, idx).transpose(1, 2)  # [B, R, C]
        f = F.relu(self.ring(f))
        colour = self.colour(f).transpose(1, 2)  # [B, 3, R]
        remove = torch.cat(
            [self.remove(f).squeeze(2), self.no_removal.expand(b, 1)], dim=1
        )  # [B, R + 1]
        inter = torch.bmm(self.query(f), self.key(f).transpose(1, 2)) * self.rank_scale
        inter = F.pad(inter, (0, 1))  # [B, R, R + 1]: no interaction with "no removal"
        place = colour[:, :, :, None] + remove[:, None, None, :] + inter[:, None, :, :]
        hops = self.hop(f)  # [B, R, 6]
        pooled = _pool(x, mask, count)
        return torch.cat([place.flatten(1), hops.flatten(1), self.pass_(pooled)], dim=1)

    def _value_hidden(self, x: Tensor, mask: Tensor, count: Tensor, globals_: Tensor) -> Tensor:
        """The value head's hidden layer, which the value and the auxiliary head read."""
        v = F.relu(self.value_bn(self.value_conv(x))) * mask
        v = torch.cat([_pool(v, mask, count), globals_], dim=1)
        return F.relu(self.value_fc1(v))

    def load_weights(self, state: Mapping[str, Any]) -> bool:
        """Loads a state dict of this network's sizes. One saved before the auxiliary head
        existed (a checkpoint of an older zertz) lacks ``captures.*`` and leaves this network's
        fresh head; anything else missing or unexpected raises RuntimeError. Returns whether the
        head was missing."""
        own = self.state_dict()
        missing = sorted(set(own) - set(state))
        unexpected = sorted(set(state) - set(own))
        older = bool(missing) and all(k.startswith(AUX_PREFIX) for k in missing)
        if unexpected or (missing and not older):
            raise RuntimeError(
                f"weights that do not fit the network (missing {missing[:3]}, unexpected "
                f"{unexpected[:3]})"
            )
        self.load_state_dict(state, strict=not older)
        return older

    @torch.jit.export
    def metadata(self) -> str:
        """The metadata JSON of an exported model (``{}`` before export)."""
        return self.metadata_json

    def net_config(self) -> NetConfig:
        """The size this network was built with."""
        return NetConfig(**json.loads(self.config_json))


def masked_log_softmax(logits: Tensor, legal: Tensor) -> Tensor:
    """Log-probabilities over the legal actions (``-inf`` elsewhere)."""
    return torch.log_softmax(logits.masked_fill(~legal, float("-inf")), dim=1)
