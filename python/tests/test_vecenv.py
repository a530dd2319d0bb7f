"""zertz.VecEnv: shapes, conformance with zertz.Game, auto-reset, seeding, bad input, fork."""

from __future__ import annotations

import multiprocessing as mp
import os

import numpy as np
import pytest

import zertz

CONFIGS = [(board, blitz) for board in zertz.BOARDS for blitz in (False, True)]


def test_shapes_and_dtypes() -> None:
    env = zertz.VecEnv(5, 48, seed=1)
    (c, h, w), g = env.observation_shape
    a = env.action_space_size
    assert (c, h, w, g, a) == (8, 8, 8, 20, zertz.action_space_size(48))
    obs, infos = env.reset(seed=1)
    assert obs["planes"].shape == (5, c, h, w) and obs["planes"].dtype == np.float32
    assert obs["globals"].shape == (5, g) and obs["globals"].dtype == np.float32
    mask = infos["legal_action_mask"]
    assert mask.shape == (5, a) and mask.dtype == np.bool_
    # The old name, kept one release, and the libraries' int8: the same mask.
    assert infos["legal_mask"] is mask and np.array_equal(infos["action_mask"], mask)
    assert infos["to_play"].shape == (5,) and infos["to_play"].dtype == np.uint8
    obs, rewards, terminations, truncations, infos = env.step(env.sample_actions())
    assert rewards.shape == (5, 2) and rewards.dtype == np.float32
    assert terminations.shape == truncations.shape == (5,)
    assert terminations.dtype == truncations.dtype == np.bool_
    assert len(env) == 5 and env.num_envs == 5 and env.board == 48 and not env.blitz
    assert repr(env).startswith("VecEnv(num_envs=5, board=48")


@pytest.mark.parametrize(("board", "blitz"), CONFIGS)
def test_conformance(board: int, blitz: bool) -> None:
    """Random legal play: masks and observations agree with zertz.Game, rewards are zero-sum
    and only at the end, finished games restart."""
    n = 8
    env = zertz.VecEnv(n, board, blitz, seed=board, threads=2)
    obs, infos = env.reset()
    finished = 0
    for _ in range(2000):
        games = [env.game(i) for i in range(n)]
        for i, game in enumerate(games):
            assert not game.is_over
            np.testing.assert_array_equal(infos["legal_action_mask"][i], game.legal_action_mask())
            planes, globals_ = game.encode()
            np.testing.assert_array_equal(obs["planes"][i], planes)
            np.testing.assert_array_equal(obs["globals"][i], globals_)
            assert infos["to_play"][i] == (0 if game.to_play == "P0" else 1)
        actions = env.sample_actions()
        assert all(infos["legal_action_mask"][i, a] for i, a in enumerate(actions))
        obs, rewards, terminations, truncations, infos = env.step(actions)
        np.testing.assert_array_equal(rewards.sum(axis=1), np.zeros(n))
        for i, game in enumerate(games):
            game.play(int(actions[i]))
            if terminations[i]:
                finished += 1
                winner = game.outcome
                expected = {"P0": 1.0, "P1": -1.0}.get(winner or "", 0.0)
                assert rewards[i, 0] == expected
                fresh = env.game(i)
                assert fresh.pool == ((5, 7, 9) if blitz else (6, 8, 10)), "a new game starts"
                assert fresh.captures == {"P0": (0, 0, 0), "P1": (0, 0, 0)}
            else:
                assert rewards[i, 0] == rewards[i, 1] == 0.0
                if not truncations[i]:
                    assert env.game(i).to_text() == game.to_text()
        if finished >= 10:
            break
    assert finished >= 10


def test_seeds_are_reproducible() -> None:
    def run(seed: int, threads: int) -> list[int]:
        env = zertz.VecEnv(16, seed=0, threads=threads)
        env.reset(seed=seed)
        trace: list[int] = []
        for _ in range(40):
            actions = env.sample_actions()
            env.step(actions)
            trace.extend(actions.tolist())
        return trace

    assert run(3, 1) == run(3, 2)
    assert run(3, 2) != run(4, 2)


def test_first_player_and_truncation() -> None:
    env = zertz.VecEnv(4, first_player="P1", max_steps=2)
    _, infos = env.reset()
    assert (infos["to_play"] == 1).all()
    env.step(env.sample_actions())
    _, rewards, terminations, truncations, _ = env.step(env.sample_actions())
    assert truncations.all() and not terminations.any() and not rewards.any()


def test_every_call_returns_new_arrays() -> None:
    env = zertz.VecEnv(2, seed=1)
    obs1, _ = env.reset()
    kept = obs1["planes"].copy()
    env.step(env.sample_actions())
    np.testing.assert_array_equal(obs1["planes"], kept)


def test_bad_input_raises_clear_errors() -> None:
    with pytest.raises(ValueError, match="no 50-ring board: choose 37"):
        zertz.VecEnv(2, 50)
    with pytest.raises(ValueError, match="num_envs must be between 1 and 1048576, not 0"):
        zertz.VecEnv(0)
    with pytest.raises(ValueError, match="first_player"):
        zertz.VecEnv(2, first_player="white")
    with pytest.raises(OverflowError):
        zertz.VecEnv(-1)
    env = zertz.VecEnv(3, seed=2)
    env.reset()
    before = env.game(0).to_text()
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        env.step([0, 1])
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        env.step(np.zeros((3, 1), dtype=np.int64))
    with pytest.raises(TypeError, match="integers"):
        env.step(np.zeros(3, dtype=np.float32))
    with pytest.raises(TypeError, match="integers"):
        env.step(["a", "b", "c"])
    with pytest.raises(ValueError, match="game 1: action -1 is out of range"):
        env.step(np.array([0, -1, 0]))
    size = env.action_space_size
    with pytest.raises(ValueError, match=f"game 0: action {size} is out of range"):
        env.step(np.array([size, 0, 0]))
    assert env.game(0).to_text() == before, "nothing was played"
    # An illegal action (a pass while marbles can be placed) forfeits its game alone.
    legal = env.sample_actions()
    legal[2] = size - 1
    mover = env.game(2).to_play
    _, rewards, terminated, _, infos = env.step(legal)
    assert infos["illegal_action"].tolist() == [False, False, True]
    assert terminated[2] and rewards[2].tolist() == ([-1.0, 1.0] if mover == "P0" else [1.0, -1.0])
    assert env.game(0).to_text() != before, "the other games played"
    with pytest.raises(IndexError, match="game index 3 is out of range"):
        env.game(3)
    with pytest.raises(IndexError, match="game index -1 is out of range"):
        env.game(-1)
    with pytest.raises(IndexError, match="game index 18446744073709551616 is out of range"):
        env.game(2**64)
    # Integer arrays of other dtypes are accepted.
    env.step(env.sample_actions().astype(np.int32))
    env.step(env.sample_actions().astype(np.uint16))


def _child(env: zertz.VecEnv, queue: mp.Queue[int]) -> None:
    env.reset(seed=1)
    for _ in range(5):
        env.step(env.sample_actions())
    queue.put(os.getpid())


def test_safe_across_fork() -> None:
    """A forked child (as PyTorch DataLoader workers are) steps the parent's environment without
    waiting on the parent's worker threads."""
    env = zertz.VecEnv(64, threads=2, seed=1)
    env.reset()
    env.step(env.sample_actions())  # the thread pool is running
    ctx = mp.get_context("fork")
    queue: mp.Queue[int] = ctx.Queue()
    child = ctx.Process(target=_child, args=(env, queue))
    child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child hung")
    assert child.exitcode == 0
    assert queue.get(timeout=60) == child.pid  # (only a hang fails: load slows a child)
    env.step(env.sample_actions())  # the parent goes on


def test_a_batch_past_its_memory_bound_is_refused() -> None:
    # The arrays of one step are bounded in memory, not only the count of games: the error
    # says what the batch needs, the bound, and how to raise it, before anything is allocated.
    games = 1 << 20
    message = (
        rf"^invalid config: {games} games of 61 rings write 14\.1 GiB a step, more than "
        r"max_bytes \(1 GiB\); raise max_bytes to allow it, or step fewer games$"
    )
    assert zertz.VECENV_MAX_BYTES == 1 << 30
    with pytest.raises(ValueError, match=message):
        zertz.VecEnv(games, 61)
    with pytest.raises(ValueError, match=r"write 56\.2 KiB a step, more than max_bytes \(1 KiB\)"):
        zertz.VecEnv(4, 61, max_bytes=1024)
    env = zertz.VecEnv(4, 61, max_bytes=57_584)  # exactly what it needs
    obs, _ = env.reset(seed=0)
    assert obs["planes"].shape[0] == 4
    with pytest.raises(ValueError, match="more than max_bytes"):
        zertz.VecEnv(4, 61, max_bytes=57_583)


def test_the_gymnasium_and_sb3_batches_take_the_bound() -> None:
    gymnasium = pytest.importorskip("zertz.gymnasium")
    with pytest.raises(ValueError, match="more than max_bytes"):
        gymnasium.VectorEnv(1 << 20, 61)
    assert gymnasium.VectorEnv(2, 37, max_bytes=1 << 20).num_envs == 2
