"""Distributed training on a real Ray cluster of three nodes on this machine (``ray start --head
--num-cpus 1`` and two ``ray start --address ... --num-cpus 1``), driven by ``python -m zertz
train --ray ADDRESS`` as a user runs it: a run end to end, an actor killed with SIGKILL, the
learner killed with SIGKILL, Ctrl-C and a resumed run, a node that dies. The tests share one
cluster on free ports (starting one takes about 20 s here); each begins with its three nodes alive,
a node killed before started again, and no actor of an earlier run left. Every wait is bounded."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib
import pytest

pytest.importorskip("ray")

import zertz
from zertz.plots import read_metrics
from zertz.training import final_table, load_config
from zertz.training.distributed import parse_chunk_name

#: One xdist worker runs them all (``pytest -n 2 --dist loadgroup``), on the module's cluster.
GROUP = "ray-cluster"
pytestmark = pytest.mark.xdist_group(GROUP)

ROOT = Path(__file__).resolve().parents[2]
RAY = Path(sys.executable).parent / "ray"

#: The tiny run of the tests: 3 iterations of a one-block network, chunks of 2 games.
CONFIG = """
[run]
board = 37
iterations = 3
seed = 0
device = "cpu"
torch_threads = 1

[network]
channels = 16
blocks = 1
policy_rank = 4
value_channels = 8
value_hidden = 16

[selfplay]
threads = 1
games_per_worker = 2
full_simulations = 16
fast_simulations = 8
max_actions = 300
shard_size = 256

[train]
batch_size = 32
steps = 8
window = 2

[evaluate]
every = 1
games = 2
simulations = 8
opponents = ["random"]
final_games = 2
final_opponents = ["random"]

[distributed]
actors = 2
chunk_games = 2
# 8 steps x 32 positions / 2: an iteration every 128 positions (about 3 chunks).
train_ratio = 2.0
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def children(pid: int) -> set[int]:
    """Every process below ``pid``."""
    below: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            below.setdefault(ppid, []).append(int(entry.name))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for c in below.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def processes(title: str) -> list[int]:
    """Processes whose command line starts with ``title`` (Ray names its workers
    ``ray::CLASS...``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if cmd.startswith(title):
                found.append(int(entry.name))
    return found


def wait_for(what: str, ok: Callable[[], bool], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not ok():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        time.sleep(0.2)


@dataclass
class Cluster:
    """A head and two nodes, each a ``ray start --block`` process of its own."""

    address: str
    temp: Path
    #: The environment of every process of the cluster and of its drivers: Ray's token
    #: authentication with a token of this cluster's own.
    env: dict[str, str] = field(
        default_factory=lambda: {
            **os.environ,
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": secrets.token_hex(32),
            # A node that stops answering is dead after about 5 s (Ray's default: 30 s).
            "RAY_health_check_period_ms": "1000",
            "RAY_health_check_timeout_ms": "1000",
            "RAY_health_check_failure_threshold": "5",
        }
    )
    nodes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self, name: str, args: list[str]) -> None:
        env = self.env
        log = open(self.temp / f"{name}.log", "wb")
        self.nodes[name] = subprocess.Popen(
            [
                str(RAY),
                *("start", "--block", "--num-cpus", "1", "--node-ip-address", "127.0.0.1"),
                *("--temp-dir", str(self.temp / "ray"), "--disable-usage-stats", *args),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )

    def logs(self, name: str, lines: int = 20) -> str:
        """The end of ``ray start``'s output for ``name`` and the warnings and errors of the
        cluster's own logs (raylets, GCS), for a failure's message."""
        out = [
            f"== {name}.log",
            *(self.temp / f"{name}.log").read_text(errors="replace").splitlines()[-lines:],
        ]
        for log in sorted((self.temp / "ray" / "session_latest" / "logs").glob("*.out")):
            if log.name.startswith(("raylet", "gcs_server")):
                bad = [
                    line
                    for line in log.read_text(errors="replace").splitlines()
                    if re.match(r"\[[^]]* [WEF] ", line)
                ]
                out += [f"== {log.name}", *bad[-lines:]]
        return "\n".join(out)

    def node_of(self, pid: int) -> str:
        for name, node in self.nodes.items():
            if pid in children(node.pid):
                return name
        raise AssertionError(f"process {pid} is on no node of the cluster")

    def kill(self, name: str) -> None:
        """Kills a node and everything on it at once (SIGKILL), as a machine that fails."""
        node = self.nodes.pop(name)
        for pid in [node.pid, *children(node.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        node.wait(10)

    def stop_all(self, seconds: float = 10) -> None:
        """Stops every node at once, the head last: SIGTERM to each, then SIGKILL to the
        process group of any still running after ``seconds``. (One at a time, head first, two
        nodes out of three waited out their 30 s each for a head that was gone: a minute per
        test.)"""
        nodes = list(self.nodes.values())[::-1]
        self.nodes.clear()
        for node in nodes:
            node.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + seconds
        for node in nodes:
            try:
                node.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(node.pid, signal.SIGKILL)
                node.wait(10)


NODES = ("node1", "node2")


@pytest.fixture(scope="module")
def three_nodes() -> Iterator[Cluster]:
    """The module's cluster: a head and two nodes."""
    # A short folder: Ray's unix sockets live under it (paths of at most 107 bytes).
    temp = Path(tempfile.mkdtemp(prefix="zr-"))
    port = free_port()
    c = Cluster(address=f"127.0.0.1:{port}", temp=temp)
    try:
        c.start(
            "head",
            [
                *("--head", "--port", str(port), "--include-dashboard=false"),
                *("--ray-client-server-port", str(free_port())),
            ],
        )
        wait_for("the head", lambda: _listening(port), 60)
        _start_nodes(c)
        yield c
    finally:
        c.stop_all()
        shutil.rmtree(temp, ignore_errors=True)


def _start_nodes(c: Cluster) -> None:
    """Starts the nodes that are not running (all, or those a test killed), one at a time: two
    nodes starting together on one machine can both time out."""
    for name in NODES:
        if name not in c.nodes:
            _start_node(c, name)


#: Tries and seconds per try for a node to join the cluster.
NODE_TRIES, NODE_SECONDS = 3, 60


def _start_node(c: Cluster, name: str) -> None:
    """Starts a node and waits until the head counts it alive. A node whose ``ray start`` ends,
    or that has not joined after ``NODE_SECONDS``, is killed and started again, up to
    ``NODE_TRIES`` times: on a busy machine a start can fail (in CI once, a node never joined in
    90 s, with nothing left to say why). The last failure shows the ends of the node's logs."""
    for _ in range(NODE_TRIES):
        c.start(name, ["--address", c.address])
        alive = len(c.nodes)
        deadline = time.monotonic() + NODE_SECONDS
        while c.nodes[name].poll() is None and time.monotonic() < deadline:
            if _nodes_alive(c, alive):
                return
            time.sleep(0.2)
        status = c.nodes[name].poll()
        logs = c.logs(name)
        c.kill(name)
    raise AssertionError(
        f"{name} did not join the cluster in {NODE_TRIES} tries of {NODE_SECONDS} s "
        f"(the last: {'still running' if status is None else f'ended with status {status}'}):"
        f"\n{logs}"
    )


@pytest.fixture
def cluster(three_nodes: Cluster, request: pytest.FixtureRequest) -> Cluster:
    """The shared cluster as a fresh one: three nodes alive, no actor of an earlier run."""
    if os.environ.get("PYTEST_XDIST_WORKER") and not request.node.nodeid.endswith(f"@{GROUP}"):
        # Another process would run the other tests on a cluster of its own, and each one's
        # processes() would see the other's actors.
        pytest.fail(
            "pytest -n: the Ray tests need --dist loadgroup, and a pytest whose nodeids xdist "
            "can mark (9.1; see python/requirements-dev.txt)",
            pytrace=False,
        )
    wait_for(
        "the actors of an earlier run to go",
        lambda: not processes("ray::SelfPlayActor") and not processes("ray::Learner"),
        30,
    )
    _start_nodes(three_nodes)
    return three_nodes


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _nodes_alive(c: Cluster, n: int) -> bool:
    return _alive_nodes(c) == n


def _alive_nodes(c: Cluster) -> int:
    out = subprocess.run(
        [str(RAY), "status", "--address", c.address],
        capture_output=True,
        text=True,
        timeout=60,
        env=c.env,
    ).stdout
    active = out.split("Active:", 1)[-1].split("Pending:", 1)[0]
    return len(re.findall(r"node_", active))


@dataclass
class Training:
    """``python -m zertz train --ray`` running in the background, its output in a file."""

    proc: subprocess.Popen[bytes]
    out: Path
    run: Path

    def text(self) -> str:
        return self.out.read_text(errors="replace")

    def wait_for(self, what: str, ok: Callable[[], bool], seconds: float) -> None:
        try:
            wait_for(what, lambda: ok() or self.proc.poll() is not None, seconds)
        except AssertionError:
            self.proc.kill()
            raise AssertionError(f"{what}: timed out; the output:\n{self.text()}") from None
        if not ok():
            raise AssertionError(f"{what}: the run ended first; the output:\n{self.text()}")

    def finish(self, seconds: float = 240) -> int:
        try:
            return self.proc.wait(seconds)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError(f"the run did not end; the output:\n{self.text()}") from None


def train(tmp: Path, cluster: Cluster, config: str = CONFIG, name: str = "out") -> Training:
    cfg = tmp / "run.toml"
    cfg.write_text(config)
    out = tmp / f"{name}.log"
    run = tmp / "run"
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "zertz", "train", "--config", str(cfg), "--run", str(run)),
            *("--ray", cluster.address),
        ],
        stdout=open(out, "wb"),
        stderr=subprocess.STDOUT,
        cwd=ROOT,
        env={**cluster.env, "PYTHONUNBUFFERED": "1"},
    )
    return Training(proc, out, run)


def chunks(run: Path) -> list[dict[str, Any]]:
    """Every chunk filed in the run folder (its chunk.json, with the folder's name)."""
    found = []
    for f in sorted(run.glob("shards/iter-*/c-a*/chunk.json")):
        found.append({**json.loads(f.read_text()), "name": f.parent.name})
    return found


def check_games_counted_once(run: Path) -> None:
    """Each chunk is filed once, its games are in its records, and the metrics count every
    filed game exactly once."""
    filed = chunks(run)
    names = [c["name"] for c in filed]
    assert len(names) == len(set(names)), names
    for c in filed:
        assert parse_chunk_name(c["name"]) == (c["actor"], c["seq"])
        folder = next(run.glob(f"shards/iter-*/{c['name']}"))
        records = sum(len(f.read_text().splitlines()) for f in folder.glob("games-*.jsonl"))
        assert records == c["games"], (c, records)
    rows = read_metrics(run)
    trained = {r["iteration"] for r in rows if r["iteration"] > 0}
    counted = sum(r["selfplay_games"] for r in rows if r["iteration"] > 0)
    assert counted == sum(c["games"] for c in filed if c["iteration"] + 1 in trained)


def test_a_run_end_to_end_on_three_nodes(tmp_path: Path, cluster: Cluster) -> None:
    t = train(tmp_path, cluster)
    assert t.finish() == 0, t.text()
    out = t.text()
    assert "2 self-play actors" in out and "the last iteration has its games" in out
    # The whole run's ETA, after each iteration (a log file: no bar).
    assert "1/3 iterations (ETA " in out and "2/3 iterations (ETA " in out, out
    rows = read_metrics(t.run)
    assert [r["iteration"] for r in rows] == [1, 2, 3]
    assert all(r["distributed"] and r["chunks"] >= 1 for r in rows)
    # The learner trained at the ratio: 8 steps of 32 per 128 positions at least.
    assert all(r["selfplay_positions"] >= 128 for r in rows), rows
    assert [r["step"] for r in rows] == [8, 16, 24]
    # The chunks are the two actors' (each on a node of its own: every node has one CPU). Not
    # necessarily both: on a busy machine one actor may start after the other has played every
    # chunk the run needs, and the run does not wait for it (CI saw this once). That both run
    # at once is held by the test of the killed actor, which waits for both processes.
    actors = {c["actor"] for c in chunks(t.run)}
    assert actors and actors <= {0, 1}, actors
    # Staleness is measured in learner steps: the first networks were 0 steps old, and a chunk
    # played with an older network than the learner's counts how many steps behind it was.
    assert rows[0]["staleness_mean"] == 0
    assert all(0 <= r["staleness_mean"] <= r["staleness_max"] <= r["step"] for r in rows)
    check_games_counted_once(t.run)
    # The run folder is the one-machine loop's.
    for iteration in (1, 2, 3):
        assert (t.run / "models" / f"iter-{iteration:04d}.safetensors").exists()
    assert (t.run / "checkpoint.pt").exists() and (t.run / "tb").is_dir()
    assert "random" in final_table(t.run)
    matplotlib.use("Agg")
    assert len(zertz.plot(t.run).axes) >= 3
    assert load_config(t.run / "config.toml").distributed.actors == 2


def test_an_actor_killed_is_restarted_and_its_chunk_played_again(
    tmp_path: Path, cluster: Cluster
) -> None:
    # Iterations of 512 positions (about 5 s here), 6 of them: the restarted actor (a new
    # process that loads torch and the engine, about 4 s) has the time to play its chunk again.
    config = CONFIG.replace("iterations = 3", "iterations = 6")
    t = train(tmp_path, cluster, config.replace("train_ratio = 2.0", "train_ratio = 0.5"))
    t.wait_for("the actors", lambda: len(processes("ray::SelfPlayActor")) == 2, 120)
    t.wait_for("a first chunk", lambda: bool(chunks(t.run)), 120)
    victim = processes("ray::SelfPlayActor")[0]
    os.kill(victim, signal.SIGKILL)
    assert t.finish() == 0, t.text()
    out = t.text()
    restarted = re.search(
        r"actor (\d) restarted: process (\d+) died, process (\d+) played chunk (\d+)", out
    )
    assert restarted, out
    actor, old, new, seq = (int(x) for x in restarted.groups())
    assert old == victim and new != victim
    # The chunk the new process played first was filed once, and the actor's chunks have no gap:
    # the one it was playing when it was killed was played again, not lost.
    again = [c for c in chunks(t.run) if (c["actor"], c["seq"]) == (actor, seq)]
    assert len(again) == 1 and again[0]["pid"] == new, again
    seqs = sorted(c["seq"] for c in chunks(t.run) if c["actor"] == actor)
    assert seqs == list(range(len(seqs))), seqs
    assert [r["iteration"] for r in read_metrics(t.run)] == list(range(1, 7))
    check_games_counted_once(t.run)


def test_the_learner_killed_resumes_from_its_checkpoint_and_ctrl_c_stops_the_run(
    tmp_path: Path, cluster: Cluster
) -> None:
    t = train(tmp_path, cluster, CONFIG.replace("iterations = 3", "iterations = 5"))
    t.wait_for("iteration 1", lambda: (t.run / "metrics.jsonl").exists(), 120)
    [learner] = processes("ray::Learner")
    os.kill(learner, signal.SIGKILL)
    t.wait_for("iteration 3", lambda: len(read_metrics(t.run)) >= 3, 180)
    assert "the learner died" in t.text()
    # Ctrl-C: the driver stops the actors and the learner, and says how to resume.
    t.proc.send_signal(signal.SIGINT)
    assert t.finish(60) == 130, t.text()
    assert "run the same command again to resume" in t.text()
    wait_for(
        "the actors and the learner to go",
        lambda: not processes("ray::SelfPlayActor") and not processes("ray::Learner"),
        30,
    )
    before = read_metrics(t.run)
    # The steps go on from each checkpoint: a learner that started again from nothing would
    # count from 0.
    assert [r["step"] for r in before] == [8 * r["iteration"] for r in before]
    again = train(tmp_path, cluster, CONFIG.replace("iterations = 3", "iterations = 5"), "again")
    assert again.finish() == 0, again.text()
    resumed = re.search(r"resuming after iteration (\d+) \(step (\d+)\)", again.text())
    assert resumed, again.text()
    # From the checkpoint of the last metrics line, or of the one before when Ctrl-C stopped the
    # learner between the line and its checkpoint (the line is written first; the resumed run
    # drops it and trains that iteration again).
    last = before[-1]["iteration"]
    assert int(resumed[1]) in (last, last - 1), (before, again.text())
    assert int(resumed[2]) == 8 * int(resumed[1])
    rows = read_metrics(t.run)
    assert [r["iteration"] for r in rows] == [1, 2, 3, 4, 5]
    assert [r["step"] for r in rows] == [8, 16, 24, 32, 40]
    check_games_counted_once(t.run)


def test_a_dead_node_is_reported_and_the_run_goes_on(tmp_path: Path, cluster: Cluster) -> None:
    # Iterations of 512 positions, twenty of them (a second or two each): Ray finds the node
    # dead after its health checks fail five times a second apart, long before the run ends. (Six
    # iterations ended first on a loaded machine: the actor left played them in 8 s.)
    config = CONFIG.replace("iterations = 3", "iterations = 20")
    t = train(tmp_path, cluster, config.replace("train_ratio = 2.0", "train_ratio = 0.5"))
    t.wait_for("the actors", lambda: len(processes("ray::SelfPlayActor")) == 2, 120)
    t.wait_for("a first chunk", lambda: bool(chunks(t.run)), 120)
    [learner] = processes("ray::Learner")
    actor_nodes = {cluster.node_of(p) for p in processes("ray::SelfPlayActor")}
    node = sorted(actor_nodes - {cluster.node_of(learner)})[0]
    cluster.kill(node)
    t.wait_for("the dead node's report", lambda: "the run goes on with the others" in t.text(), 60)
    assert t.finish() == 0, t.text()
    out = t.text()
    assert re.search(r"node [0-9.]+ \(\w+\) is dead: .* the run goes on", out), out
    rows = read_metrics(t.run)
    assert [r["iteration"] for r in rows] == list(range(1, 21))
    # The last iterations were played by the actor left (its node's CPU is taken by nobody
    # else: the dead node's actor has nowhere to restart).
    assert rows[-1]["actors"] == 1, rows[-1]
    check_games_counted_once(t.run)
