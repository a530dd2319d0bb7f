"""The project's network for RL libraries (zertz.boardnet, zertz.sb3.BoardPolicy and
BoardFeatures), behaviour cloning on people's games (zertz.training.pretraining.clone), and a
library agent exported to the engine."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
import torch

import zertz
import zertz.sb3
from zertz._zertz import shard_glob
from zertz.boardnet import BoardNet, board_of_actions, freeze_batch_norm
from zertz.exported import export, load_network
from zertz.nn import NetConfig, ZertzNet
from zertz.observation import flatten

pytestmark = pytest.mark.engine

sb3_contrib = pytest.importorskip("sb3_contrib")


def positions(board: int = 37, n: int = 6, seed: int = 0) -> list[zertz.Game]:
    """``n`` positions of random play on ``board`` (varied, none over)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        g = zertz.Game(board)
        for _ in range(2 * i):
            if g.is_over:
                break
            legal = np.flatnonzero(g.legal_action_mask())
            g.play(int(rng.choice(legal)))
        out.append(g)
    return out


def observations(games: list[zertz.Game]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    planes, globals_ = zip(*(g.encode() for g in games), strict=True)
    p, g = torch.from_numpy(np.stack(planes)), torch.from_numpy(np.stack(globals_))
    return torch.from_numpy(flatten(p.numpy(), g.numpy())), p, g


def test_boardnet_reads_flat_and_dict_observations_as_the_network_does() -> None:
    torch.manual_seed(0)
    body = BoardNet("tiny", board=37).eval()
    flat, planes, globals_ = observations(positions())
    with torch.no_grad():
        logits, value = body(flat)
    with torch.no_grad():
        want_logits, want_value = body.net(planes, globals_)
        d_logits, d_value = body({"planes": planes, "globals": globals_})
    assert torch.equal(logits, want_logits) and torch.equal(value, want_value)
    assert torch.equal(d_logits, logits) and torch.equal(d_value, value)
    # The positions differ, and so do the answers.
    assert len({round(float(v), 6) for v in value}) > 1
    with pytest.raises(ValueError, match="flat observations"):
        body(flat[:, :-1])
    with pytest.raises(ValueError, match="planes"):
        body({"planes": planes[:, :-1], "globals": globals_})


def test_boardnet_is_made_from_a_preset_sizes_a_file_or_a_network(tmp_path: Path) -> None:
    torch.manual_seed(1)
    net = ZertzNet(NetConfig.preset("tiny"), boards=[37, 61])
    path = export(net, tmp_path / "n.safetensors")
    from_file = BoardNet(path, board=61)
    assert torch.equal(from_file.net.stem.weight, net.stem.weight)
    copied = BoardNet(net, board=37)
    assert torch.equal(copied.net.stem.weight, net.stem.weight)
    # A copy: training the body leaves the network given alone.
    assert copied.net.stem.weight.data_ptr() != net.stem.weight.data_ptr()
    sizes = {"channels": 8, "blocks": 1, "policy_rank": 2, "value_channels": 4, "value_hidden": 8}
    assert BoardNet(sizes, board=48).sizes() == sizes
    assert BoardNet(NetConfig(**sizes), board=48).net.boards == [48]
    assert BoardNet("builtin", board=37).net.boards == [37]
    with pytest.raises(ValueError, match="not 48 rings"):
        BoardNet(path, board=48)
    with pytest.raises(ValueError, match="neither a preset"):
        BoardNet("huge", board=37)
    with pytest.raises(TypeError, match="network must be"):
        BoardNet(3, board=37)  # type: ignore[arg-type]
    assert board_of_actions(zertz.action_space_size(61)) == 61
    with pytest.raises(ValueError, match="no board has 5 actions"):
        board_of_actions(5)


def ppo(env: Any, **policy_kwargs: Any) -> Any:
    """A small MaskablePPO with the board policy."""
    return sb3_contrib.MaskablePPO(
        zertz.sb3.BoardPolicy,
        env,
        n_steps=16,
        batch_size=32,
        n_epochs=2,
        learning_rate=1e-3,
        seed=0,
        policy_kwargs=policy_kwargs,
    )


@pytest.mark.parametrize("observation", ["flat", "dict"])
def test_board_policy_trains_with_its_batch_norms_frozen(observation: str) -> None:
    torch.set_num_threads(1)
    env = zertz.sb3.VecEnv(4, board=37, opponent="random", seed=0, observation=observation)
    model = ppo(env, network="tiny")
    policy = model.policy
    assert isinstance(policy, zertz.sb3.BoardPolicy)
    norms = [m for m in policy.body.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    stats = [cast(torch.Tensor, m.running_mean).clone() for m in norms]
    weights = policy.body.net.stem.weight.detach().clone()
    model.learn(64)
    # The weights learnt; the batch norms' statistics did not move (eval mode throughout).
    assert not torch.equal(policy.body.net.stem.weight, weights)
    assert norms and all(
        torch.equal(cast(torch.Tensor, m.running_mean), s)
        for m, s in zip(norms, stats, strict=True)
    )
    policy.set_training_mode(True)
    assert not any(m.training for m in norms)
    # Its deterministic move is the network's best legal action.
    obs = env.reset()
    masks = env.action_masks()
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    tensor, _ = policy.obs_to_tensor(obs)
    with torch.no_grad():
        logits, _ = policy.body(tensor)
    best = logits.masked_fill(~torch.from_numpy(masks), float("-inf")).argmax(1)
    assert actions.tolist() == best.tolist()


def test_board_policy_starts_from_a_network_and_saves(tmp_path: Path) -> None:
    torch.set_num_threads(1)
    torch.manual_seed(2)
    net = ZertzNet(NetConfig.preset("tiny"), boards=[37])
    start = export(net, tmp_path / "start.safetensors")
    env = zertz.sb3.VecEnv(4, board=37, opponent="random", seed=0)
    from_file = ppo(env, network=str(start))
    assert torch.equal(from_file.policy.body.net.stem.weight, load_network(start).stem.weight)
    # Given the network itself, the saved model holds it and loads without any file.
    model = ppo(env, network=net)
    assert torch.equal(model.policy.body.net.stem.weight, net.stem.weight)
    model.learn(32)
    model.save(tmp_path / "model.zip")
    start.unlink()
    back = sb3_contrib.MaskablePPO.load(tmp_path / "model.zip", env=env)
    obs = env.reset()
    masks = env.action_masks()
    a, _ = model.predict(obs, action_masks=masks, deterministic=True)
    b, _ = back.predict(obs, action_masks=masks, deterministic=True)
    assert a.tolist() == b.tolist()
    assert torch.equal(back.policy.body.net.stem.weight, model.policy.body.net.stem.weight)
    # A file gone, or of another board: refused in a line.
    with pytest.raises(ValueError, match="neither a preset nor a network file"):
        ppo(env, network=str(start))
    with pytest.raises(ValueError, match="not 61 rings"):
        ppo(zertz.sb3.VecEnv(2, board=61, seed=0), network=net)


def test_an_exported_agent_answers_as_the_policy_and_plays_in_the_engine(tmp_path: Path) -> None:
    torch.set_num_threads(1)
    env = zertz.sb3.VecEnv(4, board=37, opponent="random", seed=0)
    model = ppo(env)
    model.learn(32)
    policy = model.policy
    path = policy.export(tmp_path / "agent.safetensors", step=32)
    engine_net = load_network(path)
    flat, planes, globals_ = observations(positions())
    with torch.no_grad():
        want = policy.body(flat)
        got = engine_net(planes, globals_)
    assert torch.equal(want[0], got[0]) and torch.equal(want[1], got[1])
    assert zertz.exported.read_metadata(path)["step"] == 32
    # The engine plays it, without search and with.
    result = zertz.match(f"nn:{path}:1", "random", games=2, seed=0, search_threads=1)
    assert result["games"] == 2
    result = zertz.match(f"nn:{path}:8", "random", games=2, seed=0, search_threads=1)
    assert result["games"] == 2


def test_board_features_serve_plain_ppo() -> None:
    from stable_baselines3 import PPO

    torch.set_num_threads(1)
    env = zertz.sb3.VecEnv(2, board=37, opponent="random", seed=0)
    model = PPO(
        "MlpPolicy",
        env,
        n_steps=16,
        batch_size=32,
        n_epochs=1,
        policy_kwargs={
            "features_extractor_class": zertz.sb3.BoardFeatures,
            "features_extractor_kwargs": {"network": "tiny"},
        },
    )
    channels = NetConfig.preset("tiny").channels
    (_, globals_size) = zertz.observation_shape(37)
    assert model.policy.features_extractor.features_dim == 2 * channels + globals_size
    model.learn(32)
    # 40 and 44 rings share their observations: the board must be named.
    with pytest.raises(ValueError, match="give board="):
        zertz.sb3.BoardFeatures(zertz.sb3.VecEnv(1, board=40, seed=0).observation_space)
    named = zertz.sb3.BoardFeatures(
        zertz.sb3.VecEnv(1, board=40, seed=0).observation_space, board=44
    )
    assert named.body.board == 44


def test_a_deadline_ends_learning_after_its_rollout() -> None:
    from stable_baselines3 import PPO

    torch.set_num_threads(1)
    env = zertz.sb3.VecEnv(2, board=37, opponent="random", seed=0)
    model = PPO("MlpPolicy", env, n_steps=8, batch_size=16, n_epochs=1, seed=0)
    # A deadline already past at the first step: the learning ends in the first rollout.
    model.learn(10**9, callback=zertz.sb3.Deadline(1e-9))
    assert 0 < model.num_timesteps <= 16
    model.learn(32, callback=zertz.sb3.Deadline(math.inf), reset_num_timesteps=True)
    assert model.num_timesteps >= 32
    for bad in (0, -1.0, math.nan, True, "60", None):
        with pytest.raises(ValueError, match="seconds must be a number above 0"):
            zertz.sb3.Deadline(bad)  # type: ignore[arg-type]


def test_freeze_batch_norm_leaves_the_rest_training() -> None:
    net = ZertzNet(NetConfig.preset("tiny"), boards=[37]).train()
    freeze_batch_norm(net)
    norms = [m for m in net.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    assert norms and not any(m.training for m in norms)
    assert net.training and net.stem.training


@pytest.fixture(scope="module")
def human(games: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset of the 300 real records."""
    out = tmp_path_factory.mktemp("clone") / "human"
    zertz.dataset([games], out, boards=[37], seed=0)
    return out


def policy_loss(net: ZertzNet, dataset: Path) -> float:
    """The cross-entropy of ``net`` on the first 256 positions of the dataset's first shard."""
    return shard_policy_loss(net, sorted((dataset / "train").glob("shard-37-*.npz"))[0])


def shard_policy_loss(net: ZertzNet, shard: Path) -> float:
    """The cross-entropy of ``net`` on the first 256 positions of a 37-ring shard."""
    from zertz.data import load_shards
    from zertz.nn import masked_log_softmax

    data = load_shards([shard], zertz.action_space_size(37))
    planes = torch.from_numpy(data["planes"][:256])
    globals_ = torch.from_numpy(data["globals"][:256])
    legal = torch.from_numpy(data["legal_action_mask"][:256])
    target = torch.from_numpy(data["policy"][:256])
    net.eval()
    with torch.no_grad():
        logp = masked_log_softmax(net(planes, globals_)[0], legal)
    return float(-torch.where(target > 0, target * logp, torch.zeros_like(logp)).sum(1).mean())


def test_clone_learns_peoples_moves(human: Path) -> None:
    from zertz.training.pretraining import clone

    torch.set_num_threads(1)
    torch.manual_seed(3)
    body = BoardNet("tiny", board=37)
    before = policy_loss(body.net, human)
    stats = clone(body, human, steps=40, batch_size=64, learning_rate=3e-3, progress=False)
    assert stats["steps"] == 40 and stats["samples"] > 0
    # (40 steps move the cross-entropy by about 0.07 from 3.96: people's moves are hard to
    # predict; the main job's 3,000 steps reach 19% top-1.)
    assert policy_loss(body.net, human) < before - 0.03
    assert not body.net.training
    # A BoardPolicy's network learns as well.
    env = zertz.sb3.VecEnv(2, board=37, seed=0)
    policy = ppo(env).policy
    first = policy.body.net.stem.weight.detach().clone()
    clone(policy, human, steps=2, batch_size=16, progress=False)
    assert not torch.equal(policy.body.net.stem.weight, first)


def test_clone_makes_its_dataset_and_refuses_bad_input(games: Path, tmp_path: Path) -> None:
    from zertz.training.pretraining import clone

    torch.set_num_threads(1)
    net = ZertzNet(NetConfig(channels=8, blocks=1), boards=[37])
    stats = clone(net, tmp_path / "made", records=[games], steps=1, progress=False)
    assert (tmp_path / "made" / "dataset.json").exists() and stats["steps"] == 1
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "train").mkdir()
    with pytest.raises(ValueError, match="dataset"):
        clone(net, tmp_path / "half", steps=1, progress=False)
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        clone(net, tmp_path / "made", steps=0, progress=False)
    with pytest.raises(ValueError, match="learning_rate"):
        clone(net, tmp_path / "made", learning_rate=float("nan"), progress=False)
    with pytest.raises(ValueError, match="not \\[61\\]"):
        clone(net, tmp_path / "made", boards=[61], progress=False)
    with pytest.raises(TypeError, match="network must be"):
        clone("tiny", tmp_path / "made", progress=False)


def test_distill_learns_the_teachers_search(tmp_path: Path) -> None:
    from zertz.training.pretraining import distill

    torch.set_num_threads(1)
    torch.manual_seed(5)
    body = BoardNet("tiny", board=37)
    games = tmp_path / "teacher"
    stats = distill(
        body,
        games,
        games_played=4,
        simulations=8,
        threads=1,
        steps=30,
        batch_size=32,
        learning_rate=3e-3,
        progress=False,
    )
    assert stats["games"] == 4 and stats["steps"] == 30 and stats["samples"] > 0
    shards = sorted(games.glob(shard_glob()))
    assert shards and not body.net.training
    # The search's visits are the policy target: the student comes closer to them.
    fresh = BoardNet("tiny", board=37).net
    assert shard_policy_loss(body.net, shards[0]) < shard_policy_loss(fresh, shards[0]) - 0.1
    # The teacher's games are kept: a second student learns them without playing again.
    again = distill(
        ZertzNet(NetConfig(channels=8, blocks=1), boards=[37]), games, steps=1, progress=False
    )
    assert again["games"] == 0 and sorted(games.glob(shard_glob())) == shards
    with pytest.raises(ValueError, match="not 61"):
        distill(body, games, board=61, progress=False)
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        distill(body, games, steps=0, progress=False)
