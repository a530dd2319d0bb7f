"""The reference network (zertz.nn), its export as a network file (zertz.exported), and the
engine's loader of network files (``zertz model``, ``nn:`` players, ``zertz selfplay --model``).
tests/test_network_files.py has the file format itself."""

from __future__ import annotations

import copy
import json
import math
import os
import random
import re
import subprocess
import warnings
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import safetensors.torch
import torch

import zertz
import zertz_engine
from zertz import MARBLE_SETS
from zertz.exported import (
    AOTI_DTYPES,
    average_networks,
    export,
    load_network,
    metadata_of,
    network_tensors,
    read_metadata,
)
from zertz.nn import NetConfig, NonFiniteError, ZertzNet, marbles_of, non_finite

from conftest import zertz_bin

TINY = NetConfig.preset("tiny")


def encode(games: list[zertz.Game]) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch ``[B, C, H, W]``, ``[B, G]`` of positions of one board."""
    encoded = [g.encode() for g in games]
    planes = torch.from_numpy(np.stack([p for p, _ in encoded]))
    globals_ = torch.from_numpy(np.stack([g for _, g in encoded]))
    return planes, globals_


def positions(board: int, count: int, seed: int, blitz: bool = False) -> list[zertz.Game]:
    """``count`` positions of one random game (the start first), spread over the game."""
    rng = random.Random(seed)
    game = zertz.Game(board, blitz=blitz)
    seen: list[zertz.Game] = []
    while not game.is_over:
        seen.append(game.clone())
        legal = game.legal_action_indices()
        game.play(int(legal[rng.randrange(len(legal))]))
    step = max(1, len(seen) // count)
    return seen[::step][:count]


def chain_position(board: int, seed: int) -> zertz.Game:
    """A position in the middle of a capture chain (the same player must hop again)."""
    rng = random.Random(seed)
    for _ in range(100):
        game = zertz.Game(board)
        while not game.is_over:
            if game.chain is not None:
                return game
            legal = game.legal_action_indices()
            game.play(int(legal[rng.randrange(len(legal))]))
    raise AssertionError(f"no capture chain in 100 random games on {board} rings")


def randomised(net: ZertzNet, seed: int = 0) -> ZertzNet:
    """``net`` with random BatchNorm affine parameters and running statistics (a few train-mode
    forwards on perturbed real positions), in eval mode: the export must carry all of them."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.copy_(0.5 + torch.rand(m.weight.shape, generator=gen))
                m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.3)
        net.no_removal.fill_(0.7)
        net.train()
        for i, board in enumerate(net.boards):
            planes, globals_ = encode(positions(board, 8, seed=seed + i))
            for _ in range(3):
                noisy = planes.clone()
                noisy[:, 1:] += torch.randn(noisy[:, 1:].shape, generator=gen) * noisy[:, :1]
                net(noisy, globals_ + torch.rand(globals_.shape, generator=gen))
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            assert m.running_mean is not None and m.running_var is not None
            assert m.running_mean.abs().max() > 1e-3 and (m.running_var - 1).abs().max() > 1e-3
    return net.eval()


def run_engine(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(zertz_bin()), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def net_all() -> ZertzNet:
    torch.manual_seed(0)
    return randomised(ZertzNet(TINY, boards=list(zertz.BOARDS)))


# ----------------------------------------------------------------------------------- NetConfig


def test_presets() -> None:
    sizes = {name: NetConfig.preset(name) for name in NetConfig.PRESETS}
    assert [(c.channels, c.blocks) for c in sizes.values()] == [
        (32, 3),
        (64, 6),
        (128, 10),
        (192, 15),
    ]
    assert NetConfig.from_dict({"preset": "small"}) == sizes["small"]
    assert NetConfig.from_dict({}) == NetConfig()
    with pytest.raises(ValueError, match="huge"):
        NetConfig.preset("huge")
    with pytest.raises(ValueError, match="huge"):
        NetConfig.from_dict({"preset": "huge"})


def test_from_dict_overrides_a_preset() -> None:
    cfg = NetConfig.from_dict({"preset": "medium", "blocks": 2, "policy_rank": 3})
    assert (cfg.channels, cfg.blocks, cfg.policy_rank) == (128, 2, 3)
    assert cfg.value_channels == NetConfig.preset("medium").value_channels


def test_from_dict_rejects_unknown_keys() -> None:
    with pytest.raises(ValueError, match="chanels"):
        NetConfig.from_dict({"chanels": 8})
    with pytest.raises(ValueError, match="dropout"):
        NetConfig.from_dict({"preset": "tiny", "dropout": 0.1})


@pytest.mark.parametrize("value", [0, -3, 1.5, True, "8", None])
@pytest.mark.parametrize("key", ["channels", "blocks", "policy_rank", "value_hidden"])
def test_from_dict_rejects_bad_values(key: str, value: Any) -> None:
    with pytest.raises(ValueError, match=rf"network\.{key}\b"):
        NetConfig.from_dict({key: value})


def test_net_config_round_trips_through_the_net() -> None:
    cfg = NetConfig(channels=8, blocks=2, policy_rank=2, value_channels=4, value_hidden=8)
    assert ZertzNet(cfg, boards=[37]).net_config() == cfg


@pytest.mark.parametrize("boards", [[], [36], [37, 100]])
def test_net_rejects_unknown_boards(boards: list[int]) -> None:
    with pytest.raises(ValueError, match="boards"):
        ZertzNet(TINY, boards=boards)


def test_net_plays_the_standard_marbles_unless_told() -> None:
    assert ZertzNet(TINY, boards=[37]).marbles == ["standard"]
    assert ZertzNet(TINY, boards=[37], marbles=["blitz"]).marbles == ["blitz"]
    # Sorted and without repeats, as the boards.
    both = ZertzNet(TINY, boards=[37], marbles=["standard", "blitz", "standard"])
    assert both.marbles == ["blitz", "standard"] == sorted(MARBLE_SETS)
    assert marbles_of(True) == ["blitz"] and marbles_of(False) == ["standard"]


@pytest.mark.parametrize("marbles", [[], ["fast"], ["standard", "Blitz"], "blitz"])
def test_net_rejects_unknown_marble_sets(marbles: Any) -> None:
    with pytest.raises(ValueError, match="marbles must be a non-empty list"):
        ZertzNet(TINY, boards=[37], marbles=marbles)


# ------------------------------------------------------------------------------------- forward


@pytest.mark.parametrize("blitz", [False, True])
@pytest.mark.parametrize("board", zertz.BOARDS)
def test_forward_shapes_on_every_board(net_all: ZertzNet, board: int, blitz: bool) -> None:
    games = positions(board, 5, seed=board, blitz=blitz)
    planes, globals_ = encode(games)
    with torch.no_grad():
        logits, value = net_all(planes, globals_)
    assert logits.shape == (len(games), zertz.action_space_size(board))
    assert value.shape == (len(games),)
    assert logits.dtype == value.dtype == torch.float32
    assert torch.isfinite(logits).all()
    assert ((value > -1) & (value < 1)).all()
    # Positions differ, so do the outputs (the network reads its input).
    assert not torch.allclose(logits[0], logits[-1])


def test_forward_is_per_position(net_all: ZertzNet) -> None:
    """In eval mode a position's outputs do not depend on the rest of its batch."""
    games = positions(48, 6, seed=3)
    planes, globals_ = encode(games)
    with torch.no_grad():
        logits, value = net_all(planes, globals_)
        one_logits, one_value = net_all(planes[2:3], globals_[2:3])
    torch.testing.assert_close(one_logits[0], logits[2], rtol=0, atol=1e-5)
    torch.testing.assert_close(one_value[0], value[2], rtol=0, atol=1e-5)


def test_forward_refuses_other_boards_and_bad_shapes() -> None:
    net = ZertzNet(TINY, boards=[37]).eval()
    planes, globals_ = encode(positions(61, 2, seed=0))
    with pytest.raises(ValueError, match=r"\[37\].*61"):
        net(planes, globals_)
    planes, globals_ = encode(positions(37, 2, seed=0))
    with pytest.raises(ValueError, match="same B"):
        net(planes, globals_[:1])
    with pytest.raises(ValueError, match="empty"):
        net(planes[:0], globals_[:0])


@pytest.mark.parametrize("pair", [(40, 44), (43, 48)])
def test_forward_refuses_a_batch_of_two_boards(
    tmp_path: Path, net_all: ZertzNet, pair: tuple[int, int]
) -> None:
    """40 and 44 rings (43 and 48) share a grid, so their encodings stack into one tensor; the
    network must not read the whole batch as the first position's board."""
    a, b = pair
    assert zertz.observation_shape(a) == zertz.observation_shape(b)
    planes_a, globals_a = encode(positions(a, 2, seed=1))
    planes_b, globals_b = encode(positions(b, 2, seed=2))
    planes = torch.cat([planes_a, planes_b])
    globals_ = torch.cat([globals_a, globals_b])
    with pytest.raises(ValueError, match="one board"):
        net_all(planes, globals_)
    back = load_network(export(net_all, tmp_path / "m.safetensors"))
    with pytest.raises(ValueError, match="one board"):
        back(planes, globals_)


def test_masked_log_softmax() -> None:
    from zertz.nn import masked_log_softmax

    logits = torch.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    legal = torch.tensor([[True, False, True], [False, True, False]])
    logp = masked_log_softmax(logits, legal)
    assert torch.isneginf(logp[~legal]).all()
    torch.testing.assert_close(logp[legal].exp().sum(), torch.tensor(2.0))
    torch.testing.assert_close(logp[1, 1], torch.tensor(0.0))


# -------------------------------------------------------------------------------------- export


def test_export_round_trip(tmp_path: Path, net_all: ZertzNet) -> None:
    path = export(net_all, tmp_path / "sub" / "model.safetensors", step=123, name="test-net")
    assert path == tmp_path / "sub" / "model.safetensors"
    meta = read_metadata(path)
    assert meta["format"] == zertz.MODEL_FORMAT
    assert meta["format_version"] == zertz.MODEL_FORMAT_VERSION
    assert meta["architecture"] == "ZertzNet"
    assert re.fullmatch("[0-9a-f]{64}", meta["sha256"])
    assert meta["encoding_version"] == zertz.ENCODING_VERSION
    assert meta["name"] == "test-net"
    assert meta["step"] == 123
    assert meta["boards"] == list(zertz.BOARDS)
    assert meta["marbles"] == ["standard"]
    assert meta["action_space"] == {str(b): zertz.action_space_size(b) for b in zertz.BOARDS}
    assert meta["network"] == asdict(TINY)
    assert meta["globals"] == zertz.observation_shape(37)[1]
    # The eager network is not changed by exporting it.
    assert net_all.metadata() == "{}"
    assert not net_all.training


def test_export_of_some_boards(tmp_path: Path, net_all: ZertzNet) -> None:
    meta = read_metadata(export(net_all, tmp_path / "m.safetensors", boards=[61, 37, 61]))
    assert meta["boards"] == [37, 61]
    assert meta["action_space"] == {"37": 4441, "61": 11713}
    back = load_network(tmp_path / "m.safetensors")
    assert back.boards == [37, 61]
    planes, globals_ = encode(positions(48, 2, seed=0))
    with pytest.raises(ValueError, match=r"\[37, 61\].*48"):
        back(planes, globals_)


def test_export_says_which_marble_sets_the_network_plays(tmp_path: Path) -> None:
    blitz = ZertzNet(TINY, boards=[37], marbles=["blitz"])
    meta = read_metadata(export(blitz, tmp_path / "blitz.safetensors", boards=[37]))
    assert meta["marbles"] == ["blitz"]
    assert load_network(tmp_path / "blitz.safetensors").marbles == ["blitz"]
    both = ZertzNet(TINY, boards=[37], marbles=["blitz", "standard"])
    both_file = export(both, tmp_path / "both.safetensors")
    assert read_metadata(both_file)["marbles"] == ["blitz", "standard"]
    # A file whose metadata names no marble sets (as the built-in network's, converted from a
    # file exported before the field): the standard marbles, as the engine reads it.
    net = ZertzNet(TINY, boards=[37]).eval()
    meta = metadata_of(net, step=0, name="old", boards=[37])
    del meta["marbles"]
    old = tmp_path / "old.safetensors"
    old.write_bytes(zertz_engine.encode_network(json.dumps(meta), network_tensors(net)))
    assert "marbles" not in json.loads(zertz_engine.read_network(str(old))[0])
    assert read_metadata(old)["marbles"] == ["standard"]
    assert load_network(old).marbles == ["standard"]


def test_only_networks_of_one_marble_set_average(tmp_path: Path) -> None:
    standard = export(ZertzNet(TINY, boards=[37]), tmp_path / "standard.safetensors")
    blitz = [
        export(ZertzNet(TINY, boards=[37], marbles=["blitz"]), tmp_path / f"blitz{i}.safetensors")
        for i in range(2)
    ]
    net, meta = average_networks(blitz)
    assert net.marbles == meta["marbles"] == ["blitz"]
    assert read_metadata(export(net, tmp_path / "mean.safetensors"))["marbles"] == ["blitz"]
    with pytest.raises(ValueError, match="only networks of one marble set average"):
        average_networks([standard, blitz[0]])
    with pytest.raises(ValueError, match="only networks of one marble set average"):
        average_networks([blitz[1], standard])


def test_a_loaded_network_refuses_another_board(tmp_path: Path) -> None:
    path = export(ZertzNet(TINY, boards=[37]), tmp_path / "m.safetensors")
    back = load_network(path)
    planes, globals_ = encode(positions(37, 2, seed=0))
    with torch.no_grad():
        logits, _ = back(planes, globals_)
    assert logits.shape == (2, zertz.action_space_size(37))
    planes, globals_ = encode(positions(61, 2, seed=0))
    with pytest.raises(ValueError, match=r"accepts boards \[37\], not 61 rings"):
        back(planes, globals_)


def test_export_leaves_no_temporary_files(tmp_path: Path, net_all: ZertzNet) -> None:
    export(net_all, tmp_path / "a.safetensors")
    export(net_all, tmp_path / "a.safetensors", step=2)  # replaces it
    export(net_all, tmp_path / "b.safetensors")
    assert sorted(os.listdir(tmp_path)) == ["a.safetensors", "b.safetensors"]
    assert read_metadata(tmp_path / "a.safetensors")["step"] == 2


def test_failed_export_keeps_the_old_file(
    tmp_path: Path, net_all: ZertzNet, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = export(net_all, tmp_path / "m.safetensors", step=1)
    before = path.read_bytes()
    written: list[bytes] = []

    def broken_replace(src: Any, dst: Any) -> None:
        # The new file was written whole beside the old one; putting it in place fails.
        written.append(Path(src).read_bytes())
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        export(net_all, path, step=2)
    monkeypatch.undo()
    assert len(written) == 1 and written[0] != before
    assert os.listdir(tmp_path) == ["m.safetensors"]
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("stem.weight", math.nan),
        ("value_fc2.bias", math.inf),
        ("no_removal", -math.inf),
        ("stem_bn.running_var", math.nan),  # a buffer
    ],
)
def test_export_refuses_non_finite_weights(
    tmp_path: Path, net_all: ZertzNet, name: str, value: float
) -> None:
    """A diverged network (NaN or infinite weights) is never written: the old file stays."""
    path = export(net_all, tmp_path / "m.safetensors", step=1)
    before = path.read_bytes()
    net = copy.deepcopy(net_all)
    assert non_finite(net) == []
    with torch.no_grad():
        tensor = dict([*net.named_parameters(), *net.named_buffers()])[name]
        tensor.view(-1)[0] = value
    assert non_finite(net) == [name]
    with pytest.raises(
        NonFiniteError, match=rf"cannot export .*m\.safetensors: .*NaN or infinite.*{name}"
    ):
        export(net, path, step=2)
    assert os.listdir(tmp_path) == ["m.safetensors"]
    assert path.read_bytes() == before
    assert isinstance(NonFiniteError("x"), ValueError)


def test_load_network_matches_the_eager_net(tmp_path: Path, net_all: ZertzNet) -> None:
    """The network read back from its file answers as the one exported, bit for bit, on every
    board."""
    back = load_network(export(net_all, tmp_path / "m.safetensors"))
    assert not back.training
    assert (back.net_config(), back.boards, back.marbles) == (TINY, net_all.boards, ["standard"])
    for board in zertz.BOARDS:
        planes, globals_ = encode(positions(board, 4, seed=board + 1))
        with torch.no_grad():
            want_logits, want_value = net_all(planes, globals_)
            logits, value = back(planes, globals_)
        assert torch.equal(logits, want_logits) and torch.equal(value, want_value), board


def test_read_metadata_refuses_other_files(tmp_path: Path) -> None:
    text = tmp_path / "text.safetensors"
    text.write_text("hello\n")
    with pytest.raises(ValueError, match=r"text\.safetensors is not an exported zertz model"):
        read_metadata(text)
    # A program (TorchScript: what an older zertz exported) is refused with the ways on.
    bare = tmp_path / "bare.pt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(torch.jit.script(ZertzNet(TINY, boards=[37]).eval()), str(bare))
    for read in (read_metadata, load_network):
        with pytest.raises(ValueError, match=r"bare\.pt is a TorchScript file.*convert-network"):
            read(bare)


# ------------------------------------------------------------------------------------ engine


def engine_positions() -> list[zertz.Game]:
    """About 20 positions: the start, a middle and a capture chain of every board, and a few
    blitz games."""
    games: list[zertz.Game] = []
    for board in zertz.BOARDS:
        games += positions(board, 2, seed=board)
        games.append(chain_position(board, seed=board))
    games += positions(37, 2, seed=5, blitz=True)
    games += positions(61, 1, seed=6, blitz=True)
    return games


def test_engine_matches_pytorch(tmp_path: Path, program: Path, net_all: ZertzNet) -> None:
    model = export(net_all, tmp_path / "model.safetensors")
    games = engine_positions()
    assert any(g.chain is not None for g in games)
    assert {g.board for g in games} == set(zertz.BOARDS)
    file = tmp_path / "positions.txt"
    file.write_text("".join(g.to_text() + "\n" for g in games))
    proc = run_engine("model", "eval", model, "--positions", file, "--device", "cpu")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(rows) == len(games)

    back = load_network(model)
    for game, row in zip(games, rows, strict=True):
        planes, globals_ = encode([game])
        with torch.no_grad():
            logits, value = back(planes, globals_)
        assert len(row["logits"]) == zertz.action_space_size(game.board)
        got_logits = torch.tensor(row["logits"], dtype=torch.float64)
        torch.testing.assert_close(
            got_logits, logits[0].double(), rtol=0, atol=1e-5, msg=game.to_text()
        )
        assert abs(float(row["value"]) - float(value[0])) <= 1e-5, game.to_text()


@pytest.mark.parametrize("command", ["match", "selfplay"])
def test_engine_refuses_a_model_for_another_board(
    tmp_path: Path, program: Path, command: str
) -> None:
    model = export(ZertzNet(TINY, boards=[37]), tmp_path / "model.safetensors")
    out = tmp_path / "out"
    if command == "match":
        args: list[str | Path] = [
            "match", "--player", f"nn:{model}:4", "--player", "random", "--games", "1",
            "--board", "61", "--device", "cpu",
        ]  # fmt: skip
    else:
        config = tmp_path / "selfplay.toml"
        config.write_text("board = 61\ngames = 1\nfull_simulations = 4\nfast_simulations = 2\n")
        args = [
            "selfplay", "--config", config, "--model", model, "--games", "1", "--out", out,
            "--device", "cpu",
        ]  # fmt: skip
    proc = run_engine(*args)
    assert proc.returncode != 0
    message = proc.stderr.replace(str(model), "MODEL").strip()
    assert re.search(r"\b37\b", message) and re.search(r"\b61\b", message), proc.stderr
    assert "panicked" not in message and len(message.splitlines()) == 1, proc.stderr
    assert not out.exists()


#: Files that are not network files, and what the engine says of each.
CORRUPT = {
    "truncated": "is not an exported zertz model",
    "flipped": "is not an exported zertz model: its weights' SHA-256 is",
    "text": "is not an exported zertz model",
    "no_metadata": 'is not an exported zertz model: its header has no "zertz" metadata',
    "state_dict": "is a TorchScript file: a program",
    "torchscript": "is a TorchScript file: a program",
}


def corrupt_files(folder: Path) -> dict[str, Path]:
    """One file of each kind of :data:`CORRUPT`, named after it."""
    good = export(ZertzNet(TINY, boards=[37]), folder / "good.safetensors")
    data = good.read_bytes()
    files = {kind: folder / f"{kind}.safetensors" for kind in CORRUPT}
    files["truncated"].write_bytes(data[: len(data) // 2])
    flipped = bytearray(data)
    flipped[-4] ^= 0x01  # the lowest bit of the last weight: still finite, the checksum finds it
    files["flipped"].write_bytes(bytes(flipped))
    files["text"].write_text("this is not a model\n" * 10)
    # The tensors of a network without the header's metadata (safetensors' reference writer).
    tensors = {k: v.contiguous() for k, v in network_state(ZertzNet(TINY, boards=[37])).items()}
    safetensors.torch.save_file(tensors, str(files["no_metadata"]))
    torch.save(ZertzNet(TINY, boards=[37]).state_dict(), files["state_dict"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = torch.jit.script(ZertzNet(TINY, boards=[37]).eval())
        torch.jit.save(module, str(files["torchscript"]))
    return files


def network_state(net: ZertzNet) -> dict[str, torch.Tensor]:
    """The tensors of ``net`` that its network file holds, by name."""
    return {name: net.state_dict()[name] for name, _, _ in network_tensors(net)}


@pytest.mark.parametrize("kind", sorted(CORRUPT))
def test_a_corrupt_model_is_refused_naming_it(tmp_path: Path, kind: str) -> None:
    path = corrupt_files(tmp_path)[kind]
    for read in (read_metadata, load_network):
        with pytest.raises(ValueError) as refused:
            read(path)
        message = str(refused.value)
        assert message.startswith(f"{path} {CORRUPT[kind]}"), message
        assert "\n" not in message
    with pytest.raises(ValueError, match=re.escape(f"{path} {CORRUPT[kind]}")):
        zertz.match(f"nn:{path}:4", "random", games=2, threads=1, device="cpu")


@pytest.mark.parametrize("kind", sorted(CORRUPT))
def test_engine_refuses_a_corrupt_model(tmp_path: Path, program: Path, kind: str) -> None:
    path = corrupt_files(tmp_path)[kind]
    proc = run_engine("model", "info", path, "--device", "cpu")
    assert proc.returncode != 0
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"{path} {CORRUPT[kind]}" in lines[0]


def test_engine_model_info(tmp_path: Path, program: Path) -> None:
    model = export(ZertzNet(TINY, boards=[61, 37]), tmp_path / "model.safetensors", step=42)
    proc = run_engine("model", "info", model, "--device", "cpu")
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["boards"] == [37, 61]
    assert info["step"] == 42
    assert info["encoding_version"] == zertz.ENCODING_VERSION
    assert info["action_space"] == {"37": 4441, "61": 11713}


def test_the_packages_compile_every_precision_the_engine_names() -> None:
    """``export_aoti`` compiles in each number format the engine names (``zertz.PRECISIONS``,
    ``auto`` apart: the engine's choice, not a format), and in no other."""
    assert set(AOTI_DTYPES) == set(zertz.PRECISIONS) - {"auto"}
