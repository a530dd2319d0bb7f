"""Network files (zertz.exported): what ``export`` writes is a safetensors file of exactly the
engine's architecture, which safetensors' reference implementation reads; ``load_network`` reads
it back bit for bit; a file that the reference implementation writes with the right tensors and
metadata plays, and one with anything else is refused naming it. Programs (TorchScript files of
an older zertz) play only when trusted, and ``convert_network`` turns them into network files
that play the same games."""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import safetensors
import safetensors.numpy
import safetensors.torch
import torch

import zertz
import zertz_engine
from zertz.exported import (
    average_networks,
    convert_network,
    export,
    load_network,
    metadata_of,
    network_tensors,
    read_metadata,
)
from zertz.nn import MAX_PARAMETERS, NetConfig, ZertzNet

from conftest import BUILTIN_V1, write_network_file

pytestmark = pytest.mark.engine

TINY = NetConfig.preset("tiny")
#: A size of no preset, every size different and small.
ODD = NetConfig(channels=8, blocks=2, policy_rank=3, value_channels=5, value_hidden=7)
#: The smallest network there is.
SMALLEST = NetConfig(channels=1, blocks=1, policy_rank=1, value_channels=1, value_hidden=1)


def trained(
    config: NetConfig, boards: list[int], seed: int, marbles: list[str] | None = None
) -> ZertzNet:
    """A network of random weights and BatchNorm statistics (as after training), in eval mode."""
    torch.manual_seed(seed)
    net = ZertzNet(config, boards=boards, marbles=marbles)
    with torch.no_grad():
        for p in net.parameters():
            p.normal_(0.0, 0.5)
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                assert m.running_mean is not None and m.running_var is not None
                assert m.num_batches_tracked is not None
                m.running_mean.normal_()
                m.running_var.uniform_(0.5, 2.0)
                m.num_batches_tracked.fill_(17)
    return net.eval()


def file_state(net: ZertzNet) -> dict[str, torch.Tensor]:
    """The tensors of ``net`` that its network file holds, by name."""
    state = net.state_dict()
    return {name: state[name] for name, _, _ in network_tensors(net)}


def bits(t: torch.Tensor | np.ndarray) -> bytes:
    """The little-endian float32 bytes of ``t``: equal bytes are equal bits (-0.0 is not 0.0)."""
    a = t.detach().numpy() if isinstance(t, torch.Tensor) else t
    assert a.dtype == np.float32
    return np.ascontiguousarray(a).astype("<f4").tobytes()


def batch(board: int, count: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` positions of random games on ``board``, encoded as a batch."""
    rng = random.Random(seed)
    planes, globals_ = [], []
    for _ in range(count):
        game = zertz.Game(board)
        for _ in range(rng.randrange(30)):
            if game.is_over:
                break
            legal = game.legal_action_indices()
            game.play(int(legal[rng.randrange(len(legal))]))
        p, g = game.encode()
        planes.append(p)
        globals_.append(g)
    return torch.from_numpy(np.stack(planes)), torch.from_numpy(np.stack(globals_))


def weights_bytes(path: Path) -> bytes:
    """The bytes of a safetensors file after its header: the tensors'."""
    data = path.read_bytes()
    return data[8 + int.from_bytes(data[:8], "little") :]


# ------------------------------------------------------------------------ export, load_network


@pytest.mark.parametrize(
    ("config", "boards", "marbles"),
    [
        (TINY, [37], None),
        (ODD, [40, 44, 61], ["blitz"]),
        (ODD, list(zertz.BOARDS), ["blitz", "standard"]),
        (SMALLEST, [48], None),
    ],
    ids=["tiny", "odd-sizes", "odd-sizes-every-board", "smallest"],
)
def test_export_and_load_network_round_trip_exactly(
    tmp_path: Path, config: NetConfig, boards: list[int], marbles: list[str] | None
) -> None:
    net = trained(config, boards, seed=len(boards), marbles=marbles)
    path = export(net, tmp_path / "net.safetensors", step=5)
    back = load_network(path)
    assert not back.training
    assert (back.net_config(), back.boards, back.marbles) == (config, net.boards, net.marbles)
    # The file holds every tensor of the architecture but the training-only head and the batch
    # norms' step counts; each comes back bit for bit.
    want = file_state(net)
    assert set(want) == {
        k
        for k in net.state_dict()
        if not k.startswith("captures.") and not k.endswith("num_batches_tracked")
    }
    got = back.state_dict()
    for name, tensor in want.items():
        assert got[name].shape == tensor.shape and bits(got[name]) == bits(tensor), name
    # The same answers, bit for bit, on each of its boards.
    for board in boards:
        planes, globals_ = batch(board, 5, seed=board)
        with torch.no_grad():
            want_logits, want_value = net(planes, globals_)
            logits, value = back(planes, globals_)
        assert bits(logits) == bits(want_logits) and bits(value) == bits(want_value), board


# ------------------------------------------------------------------- the reference implementation


def test_the_reference_implementation_reads_an_exported_file(tmp_path: Path) -> None:
    net = trained(ODD, [37, 61], seed=2)
    provenance = {"commit": "0" * 40, "note": "ünïcode"}
    path = export(net, tmp_path / "net.safetensors", step=9, provenance=provenance)
    want = file_state(net)

    arrays = safetensors.numpy.load_file(str(path))
    assert set(arrays) == set(want)
    for name, a in arrays.items():
        assert a.dtype == np.float32 and a.shape == tuple(want[name].shape), name
        assert bits(a) == bits(want[name]), name
    tensors = safetensors.torch.load_file(str(path))
    assert set(tensors) == set(want)
    for name, t in tensors.items():
        assert t.dtype == torch.float32 and bits(t) == bits(want[name]), name

    with safetensors.safe_open(str(path), "np") as f:
        header = f.metadata()
        assert set(f.keys()) == set(want)
    assert set(header) == {"zertz", "sha256"}
    assert header["sha256"] == hashlib.sha256(weights_bytes(path)).hexdigest()
    meta = read_metadata(path)
    assert meta.pop("sha256") == header["sha256"]
    assert json.loads(header["zertz"]) == meta
    assert meta["architecture"] == zertz_engine.ARCHITECTURE
    assert meta["format_version"] == zertz.MODEL_FORMAT_VERSION
    assert meta["network"] == asdict(ODD) and meta["step"] == 9
    assert meta["provenance"] == provenance


def test_a_file_of_the_reference_writer_plays(tmp_path: Path) -> None:
    net = trained(TINY, [37], seed=3)
    meta = metadata_of(net, step=3, name="reference", boards=[37])
    path = write_network_file(tmp_path / "reference.safetensors", file_state(net), meta)
    assert read_metadata(path)["sha256"] == hashlib.sha256(weights_bytes(path)).hexdigest()
    back = load_network(path)
    for name, tensor in file_state(net).items():
        assert bits(back.state_dict()[name]) == bits(tensor), name
    result = zertz.match(f"nn:{path}:8", "random", games=2, seed=1)
    assert result["games"] == 2 == result["wins"] + result["draws"] + result["losses"]


def refused_files(folder: Path) -> dict[str, tuple[Path, str]]:
    """Files of the reference writer that are not network files: each, and what the engine
    says of it after its name."""
    net = trained(TINY, [37], seed=4)
    meta = metadata_of(net, step=0, name="reference", boards=[37])
    state = file_state(net)
    bad = "is not an exported zertz model: "
    cases: dict[str, tuple[dict[str, Any], str]] = {
        "extra-metadata": (
            {"extra": {"comment": "hi"}},
            bad + 'its header\'s metadata has an unknown key "comment"',
        ),
        "bad-sha256": ({"sha256": "1" * 64}, bad + "its weights' SHA-256 is "),
        "float16": (
            {"tensors": {**state, "stem.weight": state["stem.weight"].half()}},
            bad + "stem.weight is F16, not F32",
        ),
        "missing-tensor": (
            {"tensors": {k: v for k, v in state.items() if k != "value_fc2.bias"}},
            bad + "it lacks value_fc2.bias, which its architecture has",
        ),
        "extra-tensor": (
            {"tensors": {**state, "evil": torch.zeros(1)}},
            bad + "it holds evil, which its architecture does not have",
        ),
        "training-head": (
            {"tensors": {**state, "captures.bias": net.state_dict()["captures.bias"]}},
            bad + "it holds captures.bias, which its architecture does not have",
        ),
        "wrong-shape": (
            {"tensors": {**state, "ring.bias": torch.zeros(33)}},
            bad + "ring.bias is [33], its architecture's is [32]",
        ),
        "other-sizes": (
            {"meta": {**meta, "network": {**meta["network"], "channels": 16}}},
            bad + "blocks.0.bn1.bias is [32], its architecture's is [16]",
        ),
        "other-architecture": (
            {"meta": {**meta, "architecture": "ResNet"}},
            bad + 'its architecture is "ResNet"; this engine runs "ZertzNet"',
        ),
        "nan": (
            {"tensors": {**state, "no_removal": torch.full((1,), math.nan)}},
            bad + "no_removal holds NaN",
        ),
    }
    files = {}
    for kind, (change, said) in cases.items():
        path = folder / f"{kind}.safetensors"
        write_network_file(
            path,
            change.get("tensors", state),
            change.get("meta", meta),
            sha256=change.get("sha256"),
            extra=change.get("extra"),
        )
        files[kind] = (path, said)
    return files


def test_files_that_are_not_exactly_network_files_are_refused_naming_them(tmp_path: Path) -> None:
    for kind, (path, said) in refused_files(tmp_path).items():
        for read in (load_network, read_metadata):
            with pytest.raises(ValueError) as refused:
                read(path)
            message = str(refused.value)
            assert message.startswith(f"{path} {said}"), (kind, message)
            assert "\n" not in message, kind
        with pytest.raises(ValueError, match=f"^{re.escape(str(path))} "):
            zertz.match(f"nn:{path}:8", "random", games=2, seed=1)


# --------------------------------------------------------------------------- programs, converted


def test_a_torchscript_file_plays_only_when_trusted(tmp_path: Path) -> None:
    spec = f"nn:{BUILTIN_V1}:8"
    with pytest.raises(ValueError) as refused:
        zertz.match(spec, "random", games=2)
    message = str(refused.value)
    assert message.startswith(f"{BUILTIN_V1} is a TorchScript file: a program"), message
    assert f"python -m zertz convert-network {BUILTIN_V1} OUT.safetensors" in message
    assert "--trust-code" in message and "trust_code=True" in message
    config = {"games_per_worker": 1, "full_simulations": 4, "fast_simulations": 2}
    with pytest.raises(ValueError, match="convert-network"):
        zertz.selfplay(tmp_path / "sp", model=BUILTIN_V1, config=config, games=1)
    assert not (tmp_path / "sp").exists()
    for read in (load_network, read_metadata):
        with pytest.raises(ValueError, match="convert-network"):
            read(BUILTIN_V1)
    # Trusted, it plays.
    result = zertz.match(spec, "random", games=2, trust_code=True)
    assert result["games"] == 2 == result["wins"] + result["draws"] + result["losses"]


def test_the_converted_builtin_network_is_the_builtin_one(tmp_path: Path) -> None:
    converted = convert_network(BUILTIN_V1, tmp_path / "converted.safetensors")
    assert converted == tmp_path / "converted.safetensors"
    # The weights, bit for bit, and so their checksum.
    _, sha256, tensors = zertz_engine.read_network(str(converted))
    _, builtin_sha256, builtin = zertz_engine.decode_network(zertz.builtin_model(), "builtin")
    assert [name for name, _, _ in tensors] == [name for name, _, _ in builtin]
    assert tensors == builtin and sha256 == builtin_sha256
    mine, theirs = load_network(converted), load_network("builtin")
    for name, tensor in file_state(theirs).items():
        assert bits(mine.state_dict()[name]) == bits(tensor), name
    assert read_metadata(converted) == read_metadata("builtin")
    # The engine's answers: the same games.
    moves = []
    for model in (converted, "builtin"):
        out = tmp_path / f"{Path(model).stem}.jsonl"
        result = zertz.match(f"nn:{model}:8", "greedy", games=2, seed=3, out=out)
        assert result["games"] == 2
        moves.append([record["moves"] for record in zertz.load_records(out)])
    assert moves[0] == moves[1] and all(moves[0])


# ---------------------------------------------------------------------------------- averages


def test_average_networks_of_network_files(tmp_path: Path) -> None:
    nets = [trained(ODD, [37, 61], seed=10 + i) for i in range(3)]
    paths = [export(n, tmp_path / f"{i}.safetensors", step=i) for i, n in enumerate(nets)]
    mean, meta = average_networks(paths)
    assert meta["step"] == 2 and meta["sha256"] == read_metadata(paths[-1])["sha256"]
    assert (mean.net_config(), mean.boards, mean.marbles) == (ODD, [37, 61], ["standard"])
    for name, tensor in file_state(mean).items():
        want = sum(file_state(n)[name] for n in nets) / 3
        torch.testing.assert_close(tensor, want, rtol=1e-6, atol=1e-6, msg=name)
    # It exports and plays as any network.
    back = load_network(export(mean, tmp_path / "mean.safetensors"))
    for name, tensor in file_state(mean).items():
        assert bits(back.state_dict()[name]) == bits(tensor), name
    other = export(trained(TINY, [37, 61], seed=1), tmp_path / "other.safetensors")
    with pytest.raises(ValueError, match="only networks of one size average"):
        average_networks([*paths, other])


# ------------------------------------------------------------------------- the engine's sizes


def engine_on_sizes(sizes: dict[str, int]) -> str | None:
    """What the engine's encoder says of a network file of ``sizes`` given none of its tensors
    (it checks the sizes first): None where it takes the sizes (and then misses the tensors)."""
    meta = metadata_of(ZertzNet(SMALLEST, boards=[37]), step=0, name="sizes", boards=[37])
    meta["network"] = sizes
    with pytest.raises(ValueError) as refused:
        zertz_engine.encode_network(json.dumps(meta), [])
    message = str(refused.value)
    return None if re.search(r": it has 0 tensors, the architecture \d+", message) else message


def test_the_size_bounds_are_the_engines() -> None:
    """NetConfig's bound on the count and its ranges of each size are the engine's: a network
    that trains here can be exported."""
    assert MAX_PARAMETERS == zertz_engine.MAX_PARAMETERS
    for f in fields(NetConfig):
        values = f.metadata["range"]
        said = engine_on_sizes({**asdict(SMALLEST), f.name: 10**6})
        found = re.search(rf"network\.{f.name} must be from 1 to (\d+), not 1000000$", said or "")
        assert found is not None, said
        most = int(found[1])
        assert values.contains(most) and not values.contains(most + 1), f.name
        assert values.contains(1) and not values.contains(0), f.name
        assert engine_on_sizes({**asdict(SMALLEST), f.name: most}) is None, f.name


@pytest.mark.parametrize(
    "sizes",
    [
        *(asdict(NetConfig.preset(name)) for name in NetConfig.PRESETS),
        asdict(ODD),
        asdict(SMALLEST),
        # Within the bound by the trained parameters (the training-only head included), over it
        # by a network file's weights (the batch norms' statistics included), and just under.
        {"channels": 992, "blocks": 5, "policy_rank": 229, "value_channels": 1, "value_hidden": 1},
        {"channels": 992, "blocks": 5, "policy_rank": 228, "value_channels": 1, "value_hidden": 1},
        {
            "channels": 1024,
            "blocks": 100,
            "policy_rank": 8,
            "value_channels": 16,
            "value_hidden": 64,
        },
    ],
)
def test_net_config_takes_the_sizes_the_engine_takes(sizes: dict[str, int]) -> None:
    said = engine_on_sizes(sizes)
    if said is None:
        NetConfig(**sizes)
        return
    with pytest.raises(ValueError, match="more than the 100,000,000 a network may have") as e:
        NetConfig(**sizes)
    engine = re.search(r"its sizes make (\d+) parameters, more than the 100000000", said)
    assert engine is not None, said
    # Where the network file's count is the one over the bound, the two counts are the same.
    ours = re.search(r"make ([\d,]+) weights in a network file", str(e.value))
    if ours is not None:
        assert int(ours[1].replace(",", "")) == int(engine[1])


@pytest.mark.parametrize("config", [TINY, ODD, SMALLEST], ids=["tiny", "odd", "smallest"])
def test_the_stored_count_is_what_a_network_file_holds(config: NetConfig) -> None:
    tensors = network_tensors(ZertzNet(config, boards=[37]))
    assert config.stored_parameters() == sum(math.prod(shape) for _, shape, _ in tensors)


@pytest.mark.parametrize("name", NetConfig.PRESETS)
def test_every_preset_is_a_network_the_engine_reads(name: str) -> None:
    """The engine's encoder takes each preset's network (its tensors are the architecture's at
    those sizes) and reads it back with the same sizes."""
    config = NetConfig.preset(name)
    net = ZertzNet(config, boards=[37]).eval()
    meta = metadata_of(net, step=0, name=name, boards=[37])
    data = zertz_engine.encode_network(json.dumps(meta), network_tensors(net))
    meta_json, _, tensors = zertz_engine.decode_network(data, name)
    assert json.loads(meta_json)["network"] == asdict(config)
    assert sum(math.prod(shape) for _, shape, _ in tensors) <= zertz_engine.MAX_PARAMETERS
