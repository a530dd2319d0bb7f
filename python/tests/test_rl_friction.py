"""What a new user of the RL libraries types works as written (issue 61): SB3's routes from the
id (``make_vec_env``, ``MaskablePPO("MlpPolicy", ENV_ID)``, which ask for
``render_mode="rgb_array"``), ``action_masks()`` on ``gymnasium.make``'s environment, the docs'
code blocks (extracted from docs/rl-libraries.md and run as they stand, on fewer steps), the
examples' ``--threads``, the torch pins of the extras, and TorchRL's ``GymEnv`` with workers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import zertz
from zertz.observation import rgb_array
from zertz.optional import INSTALL_ENGINE, missing_engine

from conftest import run_example

gymnasium = pytest.importorskip("gymnasium")

from zertz.gymnasium import ENV_ID, ZertzEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "rl-libraries.md"
SVG = "{http://www.w3.org/2000/svg}"


def code_blocks(section: str, language: str = "python") -> list[str]:
    """The code blocks of ``language`` in the section of docs/rl-libraries.md whose heading
    starts with ``section``, as the file holds them."""
    text = DOCS.read_text()
    start = text.index(f"\n## {section}")
    end = text.find("\n## ", start + 1)
    body = text[start : end if end >= 0 else len(text)]
    return re.findall(rf"```{language}\n(.*?)```", body, re.S)


def with_steps(code: str, written: str, steps: str) -> str:
    """``code`` with its one step count ``written`` replaced by ``steps``."""
    assert code.count(written) == 1, f"the docs' code no longer has {written} once"
    return code.replace(written, steps)


def run_python(code: str, tmp_path: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Runs ``code`` as a user's script file (in a fresh interpreter, as pasted)."""
    script = tmp_path / "user.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done


def play(env: Any, steps: int, seed: int = 0) -> None:
    """Legal random actions for ``steps`` steps, resetting at the end of each game."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    for _ in range(steps):
        mask = env.get_wrapper_attr("action_masks")()
        *_, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            env.reset()


# 1. render_mode="rgb_array", which SB3 asks for when it makes an environment from its id.


def test_rgb_array_draws_the_rings_and_marbles_of_the_board() -> None:
    env = ZertzEnv(37, opponent="greedy", render_mode="rgb_array")
    play(env, 9, seed=1)
    image = env.render()
    assert isinstance(image, np.ndarray)
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    root = ET.fromstring(env.game._repr_svg_())
    assert image.shape[:2] == (int(root.attrib["height"]), int(root.attrib["width"]))

    def rgb(colour: str) -> list[int]:
        return [int(colour[i : i + 2], 16) for i in (1, 3, 5)]

    background = root.find(f"{SVG}rect")
    assert background is not None
    assert image[0, 0].tolist() == rgb(background.attrib["fill"])
    rings = marbles = 0
    for circle in root.iter(f"{SVG}circle"):
        x, y, r = (float(circle.attrib[k]) for k in ("cx", "cy", "r"))
        if circle.attrib["fill"] == "none":  # a ring: its line, at its radius
            assert image[int(y), int(x + r)].tolist() == rgb(circle.attrib["stroke"])
            rings += 1
        else:  # a marble: its colour at its centre
            assert image[int(y), int(x)].tolist() == rgb(circle.attrib["fill"])
            marbles += 1
    game = env.game
    on_board = sum(zertz.Game(37).pool) - sum(game.pool) - sum(map(sum, game.captures.values()))
    assert 0 < rings <= 37 and marbles == on_board > 0
    # The image follows the game, and is the package's one drawing of it.
    np.testing.assert_array_equal(image, rgb_array(game))
    assert not np.array_equal(image, rgb_array(zertz.Game(37)))


def test_every_render_mode_passes_gymnasiums_checker() -> None:
    from gymnasium.utils.env_checker import check_env

    for mode in ("ansi", "rgb_array"):
        env = ZertzEnv(37, render_mode=mode)
        check_env(env)
        env.reset(seed=0)
        assert isinstance(env.render(), str if mode == "ansi" else np.ndarray)
    assert ZertzEnv(37).render() is None
    with pytest.raises(ValueError, match="render_mode must be None or 'ansi' or 'rgb_array', not"):
        ZertzEnv(render_mode="human")


def test_sb3_makes_the_environment_from_its_id_as_the_docs_write_it(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    # The docs' block of SB3's routes from the id, on fewer steps.
    code = with_steps(code_blocks("Stable-Baselines3")[1], ".learn(4_096)", ".learn(1_024)")
    report = "print('MADE', model.num_timesteps, type(single.env).__name__)\n"
    lines = run_python(code + report, tmp_path).stdout.splitlines()
    assert lines[:2] == ["(4, 4441)", "(372, 260, 3)"], lines
    assert lines[-1] == "MADE 1024 DummyVecEnv", lines


def test_sb3_routes_from_the_id_train_and_mask() -> None:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env

    envs = make_vec_env("zertz/Zertz-v0", n_envs=4)
    assert envs.render_mode == "rgb_array"
    model = MaskablePPO("MlpPolicy", envs, n_steps=32, batch_size=64, n_epochs=1, seed=0)
    model.learn(128)
    assert model.num_timesteps >= 128
    # Every game's mask is its own, and only legal actions were played (no forfeits).
    masks = get_action_masks(envs)
    assert masks.shape == (4, zertz.action_space_size(37)) and masks.any(axis=1).all()
    for i, mask in enumerate(masks):
        game = envs.get_attr("game", [i])[0]
        np.testing.assert_array_equal(mask, game.legal_action_mask())
    single = MaskablePPO("MlpPolicy", "zertz/Zertz-v0", seed=0)
    made = single.get_env()
    assert made is not None
    obs: Any = made.reset()
    action, _ = single.predict(obs, action_masks=get_action_masks(made))
    assert get_action_masks(made)[0, int(action[0])]


# 2. action_masks() on gymnasium.make's environment.


def test_gymnasium_make_gives_the_environment_with_its_methods() -> None:
    env = gymnasium.make(ENV_ID, board=37, opponent="greedy")
    assert isinstance(env, ZertzEnv)
    _, info = env.reset(seed=0)
    mask = env.action_masks()
    np.testing.assert_array_equal(mask, info["action_mask"].astype(bool))
    np.testing.assert_array_equal(mask, env.get_wrapper_attr("action_masks")())
    unwrapped: Any = env.unwrapped
    np.testing.assert_array_equal(mask, unwrapped.action_masks())
    # Under a wrapper of one's own, Gymnasium's route reaches it.
    wrapped = gymnasium.wrappers.RecordEpisodeStatistics(gymnasium.make(ENV_ID))
    wrapped.reset(seed=0)
    assert wrapped.get_wrapper_attr("action_masks")().shape == mask.shape
    # Gymnasium's order enforcement stays: a step before the first reset is refused.
    fresh = gymnasium.make(ENV_ID)
    with pytest.raises(gymnasium.error.ResetNeeded, match=r"before calling env\.reset"):
        fresh.step(0)
    # And Gymnasium's checker still runs where one asks for it.
    checked = gymnasium.make(ENV_ID, disable_env_checker=False)
    assert isinstance(checked, gymnasium.wrappers.PassiveEnvChecker)
    checked.reset(seed=0)
    assert checked.get_wrapper_attr("action_masks")().any()


def test_the_docs_gymnasium_block_runs_as_written() -> None:
    code = code_blocks("Gymnasium")[0]
    scope: dict[str, Any] = {}
    exec(compile(code, str(DOCS), "exec"), scope)
    env, envs = scope["env"], scope["envs"]
    assert scope["mask"].dtype == bool and scope["mask"].shape == (zertz.action_space_size(37),)
    assert isinstance(env, ZertzEnv) and envs.num_envs == 256


def test_sb3_contribs_evaluation_callback_finds_the_masks() -> None:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3.common.monitor import Monitor

    evaluation = Monitor(gymnasium.make(ENV_ID, opponent="random"))
    callback = MaskableEvalCallback(evaluation, n_eval_episodes=2, eval_freq=64, verbose=0)
    model = MaskablePPO("MlpPolicy", gymnasium.make(ENV_ID), n_steps=64, batch_size=64, seed=0)
    model.learn(64, callback=callback)
    # It evaluated (with the masks: a masked policy never forfeits, so results are -1, 0 or 1).
    assert callback.n_calls == 64 and -1.0 <= callback.last_mean_reward <= 1.0


# The info holds numbers and arrays of one shape, which vectorizers stack.


@pytest.mark.parametrize("opponent", ["random", None])
def test_the_info_stacks_in_gymnasiums_own_vector_environments(opponent: str | None) -> None:
    envs = gymnasium.make_vec(ENV_ID, num_envs=3, vectorization_mode="sync", opponent=opponent)
    _, infos = envs.reset(seed=0)
    for _ in range(30):
        masks = infos["action_mask"].astype(bool)
        assert masks.shape == (3, zertz.action_space_size(37))
        actions = [int(np.flatnonzero(m)[0]) if m.any() else 0 for m in masks]
        _, _, _, _, infos = envs.step(np.array(actions))
        assert infos["to_play"].dtype.kind == "i" and set(infos["to_play"]) <= {0, 1}
        assert infos["illegal_action"].dtype == bool
        if opponent is None:
            assert infos["rewards"].shape == (3, 2) and infos["rewards"].dtype == np.float32
        for key, value in infos.items():
            assert value.dtype != object or key.startswith("final"), key


def test_the_opponents_actions_are_on_the_environment() -> None:
    env = ZertzEnv(37, opponent="greedy", first_player="P1")
    _, info = env.reset(seed=0)
    assert len(env.opponent_actions) == 1 and "opponent_actions" not in info
    assert info["to_play"] == 0 and env.game.to_play == "P0"
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert len(env.opponent_actions) >= 1


# 3. The docs' Stable-Baselines3 snippet.


def test_the_docs_sb3_snippet_trains_and_evaluates(tmp_path: Path) -> None:
    pytest.importorskip("sb3_contrib")
    code = with_steps(code_blocks("Stable-Baselines3")[0], "learn(100_000", "learn(10_240")
    report = "import json\nprint('RESULTS', json.dumps([model.num_timesteps, results]))\n"
    done = run_python(code + report, tmp_path)
    # SB3's table, once every 5 updates of 2,048 steps.
    assert "rollout/" in done.stdout and re.search(r"total_timesteps\s*\|\s*10240", done.stdout)
    steps, results = json.loads(done.stdout.split("RESULTS ", 1)[1])
    assert steps == 10_240
    assert [r["opponent"] for r in results] == ["random", "greedy"]
    assert all(r["games"] == 200 for r in results)
    # zertz.evaluate's line per opponent, on stderr.
    assert re.findall(r"^evaluate: (\w+): \d+-\d+-\d+ ", done.stderr, re.M) == ["random", "greedy"]


# 4. The examples' --threads.


@pytest.mark.parametrize(
    "script, args",
    [
        ("maskable_ppo.py", ["--steps", "128", "--envs", "4", "--games", "2"]),
        ("ppo_vector.py", ["--steps", "64", "--envs", "4", "--rollout", "16", "--games", "2"]),
    ],
)
def test_the_examples_take_torchs_threads(script: str, args: list[str]) -> None:
    pytest.importorskip("torch")
    if script == "maskable_ppo.py":
        pytest.importorskip("sb3_contrib")
    for threads in (1, 2):
        assert run_example(script, *args, "--threads", str(threads))["threads"] == threads


# 5. The torch pins, and how to install the engine.


def name_of(requirement: str) -> str:
    """The project named by a requirement (``"sb3-contrib>=2.4"``: ``"sb3-contrib"``)."""
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0]


def test_every_extra_that_brings_torch_pins_the_engines_version() -> None:
    dev = (ROOT / "python" / "requirements-dev.txt").read_text().splitlines()
    (pin,) = [line for line in dev if name_of(line) == "torch"]
    assert re.fullmatch(r"torch==[0-9.]+", pin), pin
    project = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())["project"]
    extras: dict[str, list[str]] = project["optional-dependencies"]
    # The libraries that import torch (and the engine, which links its libtorch).
    brings_torch = {"torch", "stable-baselines3", "sb3-contrib", "torchrl", "zertz-engine"}
    with_torch = [name for name, reqs in extras.items() if brings_torch & set(map(name_of, reqs))]
    assert {"train", "sb3"} <= set(with_torch)
    for name in with_torch:
        assert [r for r in extras[name] if name_of(r) == "torch"] == [pin], name
    engine = tomllib.loads((ROOT / "python" / "engine" / "pyproject.toml").read_text())
    assert [r for r in engine["project"]["dependencies"] if name_of(r) == "torch"] == [pin]
    # An extra's exact pin is the one the project tests with.
    for reqs in extras.values():
        for requirement in reqs:
            if "==" in requirement:
                assert requirement in dev, requirement


def test_the_engines_import_error_says_what_the_docs_say() -> None:
    error = missing_engine("zertz.match", ImportError("No module", name="zertz_engine"))
    assert error is not None and error.name == "zertz_engine"
    message = str(error)
    assert "\n" not in message and message == f"zertz.match {INSTALL_ENGINE}"
    assert "zertz[train]" in message
    # Its commands are the docs' install block's (the extras aside), at the pinned versions.
    commands = re.findall(r"(?:LIBTORCH_USE_PYTORCH=1 )?pip install [^,(]*[^,( ]", message)
    assert len(commands) == 2, message

    def bare(command: str) -> str:
        return re.sub(r"\[[a-z0-9,]*\]", "", command)

    (block,) = code_blocks("Installing", "sh")
    lines = [bare(line) for line in block.splitlines()]
    for command in commands:
        assert any(line.startswith(bare(command)) for line in lines), command
    dev = (ROOT / "python" / "requirements-dev.txt").read_text().splitlines()
    for pin in re.findall(r"(?:torch|maturin)==[0-9.]+", message):
        assert pin in dev, pin


# 6. TorchRL.


def test_torchrl_as_the_docs_write_it(tmp_path: Path) -> None:
    pytest.importorskip("torchrl")
    # The docs' script: the user's line, GymEnv("zertz/Zertz-v0", num_envs=8), whose workers
    # (spawned) import the script again and find the id there, then the in-process route.
    code = code_blocks("Gymnasium")[1]
    assert 'GymEnv("zertz/Zertz-v0", num_envs=8)' in code
    report = (
        "    masks, to_play = data['next', 'action_mask'], data['to_play']\n"
        "    print('SHAPES', tuple(masks.shape), tuple(to_play.shape))\n"
        "    print('VEC', vec.batch_size[0], sorted(vec.observation_spec.keys()))\n"
    )
    lines = run_python(code + report, tmp_path).stdout.splitlines()
    assert "SHAPES (8, 6, 4441) (8, 6)" in lines, lines
    vec = next(line for line in lines if line.startswith("VEC"))
    assert vec.startswith("VEC 256 ") and "'action_mask'" in vec and "'to_play'" in vec, vec


def test_torchrl_wraps_the_rust_vector_environment() -> None:
    envs = pytest.importorskip("torchrl.envs")
    utils = pytest.importorskip("torchrl.envs.utils")
    for opponent in ("random", None):
        env = envs.GymWrapper(gymnasium.make_vec(ENV_ID, num_envs=8, opponent=opponent))
        utils.check_env_specs(env)
        data = env.rollout(5, break_when_any_done=False)
        assert data["next", "observation"].shape == (8, 5, zertz.observation.observation_size(37))
        assert data["next", "action_mask"].shape == (8, 5, zertz.action_space_size(37))
