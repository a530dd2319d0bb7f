#!/usr/bin/env python3
"""A bounded load test of the web board (`zertz serve`): memory and answers under load.

Starts `zertz serve` on a free loopback port, then runs CLIENTS browsers (each with its own
cookie) for SECONDS: each plays games on 61 rings against `mcts:20000` (the page's largest
search: every bot turn is one) and asks an analysis of 20,000 simulations of every position
it reaches, with random legal moves of its own. Every answer must be a 2xx or a JSON 503 (the
server at its limit of searches at once); the server's peak memory (VmHWM of /proc/PID/status)
must stay under its budget: its resident memory once started, plus --searches times --tree-mib
(the searches at once, each in a tree of at most that), plus --games-mib for the games kept.

Prints the answers by status, the latency of each kind of request and answer (median, 95th
percentile, largest), and the memory figures; exits 1 when an answer was something else or the
budget was passed. Standard library only.

    cargo build --release --bin zertz
    python3 scripts/load-serve.py                       # 20 clients, 30 s
    python3 scripts/load-serve.py --clients 8 --seconds 10 --searches 4 --tree-mib 256
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MAX_CLIENTS = 64
MAX_SECONDS = 600.0
SIMULATIONS = 20_000  # the page's largest search (zertz_serve::settings::MAX_PAGE_SIMULATIONS)


def memory_kib(pid: int, field: str) -> int:
    """A field of /proc/PID/status in KiB (VmHWM: the peak resident memory; VmRSS: now)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


class Stats:
    """Answers by status and latencies by kind of request, from every client."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.statuses: collections.Counter[int] = collections.Counter()
        self.latencies: dict[str, list[float]] = collections.defaultdict(list)
        self.bad: list[str] = []

    def note(self, kind: str, status: int, seconds: float, problem: str | None) -> None:
        with self.lock:
            self.statuses[status] += 1
            answer = "503" if status == 503 else f"{status // 100}xx"
            self.latencies[f"{kind} ({answer})"].append(seconds)
            if problem:
                self.bad.append(f"{kind}: {problem}")


class Browser:
    """One client with its own cookie, as a browser of the page."""

    def __init__(self, url: str, stats: Stats, seed: int) -> None:
        self.url = url
        self.stats = stats
        self.rng = random.Random(seed)
        self.cookie = ""
        host = url.split("//", 1)[1]
        self.headers = {"Origin": f"http://{host}", "Sec-Fetch-Site": "same-origin"}

    def call(self, kind: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = dict(self.headers)
        if self.cookie:
            headers["Cookie"] = self.cookie
        data = None
        if method == "POST":
            headers["Content-Type"] = "application/json"
            data = json.dumps(body if body is not None else {}).encode()
        req = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        start = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=300) as resp:
                status, raw, cookie = resp.status, resp.read(), resp.headers.get("Set-Cookie")
        except urllib.error.HTTPError as e:
            status, raw, cookie = e.code, e.read(), None
        except (urllib.error.URLError, OSError) as e:
            self.stats.note(kind, 0, time.monotonic() - start, f"no answer: {e!r}")
            return 0, None
        seconds = time.monotonic() - start
        if cookie and not self.cookie:
            self.cookie = cookie.split(";", 1)[0]
        problem = None
        try:
            value = json.loads(raw) if path.startswith("/api/") else None
        except ValueError:
            value, problem = None, f"{status} answered {raw[:200]!r}, not JSON"
        if problem is None and not (200 <= status < 300 or status == 503):
            problem = f"{status}: {raw[:200]!r}"
        if problem is None and status == 503 and not (value and "error" in value):
            problem = f"503 without a message: {raw[:200]!r}"
        self.stats.note(kind, status, seconds, problem)
        return status, value

    def random_move(self, game: dict[str, Any]) -> str:
        legal = game["legal"]
        if legal["hops"]:
            return str(self.rng.choice(legal["hops"])["text"])
        if legal["pass"]:
            return "pass"
        at = self.rng.choice(sorted(legal["place"]))
        removes = legal["place"][at]
        colour = self.rng.choice(legal["colours"])
        return f"{colour}{at},{self.rng.choice(removes)}" if removes else f"{colour}{at}"

    def run(self, end: float) -> None:
        self.call("page", "GET", "/")
        game: dict[str, Any] | None = None
        while time.monotonic() < end:
            if game is None or game.get("over"):
                status, game = self.call(
                    "new game",
                    "POST",
                    "/api/games",
                    {"board": 61, "opponent": f"mcts:{SIMULATIONS}", "colour": "P1"},
                )
                if status != 200:
                    game = None
                    time.sleep(0.2)
                continue
            assert game is not None
            if self.rng.random() < 0.5:
                body = {"position": game["position"], "simulations": SIMULATIONS}
                if self.call("analysis", "POST", "/api/analyze", body)[0] == 503:
                    time.sleep(0.2)
                continue
            if game["bot_to_move"]:
                status, view = self.call("bot turn", "POST", f"/api/games/{game['id']}/bot")
            else:
                move = {"move": self.random_move(game)}
                status, view = self.call("move", "POST", f"/api/games/{game['id']}/play", move)
            if status == 200:
                game = view
            elif status == 503:
                time.sleep(0.2)
            else:
                game = None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--searches", type=int, default=2, help="zertz serve --searches")
    parser.add_argument("--tree-mib", type=int, default=512, help="zertz serve --tree-mib")
    parser.add_argument("--games-mib", type=int, default=64, help="memory allowed for the games")
    parser.add_argument("--program", default=str(ROOT / "target" / "release" / "zertz"))
    args = parser.parse_args()
    if not 1 <= args.clients <= MAX_CLIENTS or not 0 < args.seconds <= MAX_SECONDS:
        parser.error(f"1 to {MAX_CLIENTS} clients, at most {MAX_SECONDS:.0f} s")
    server = subprocess.Popen(
        [
            args.program,
            "serve",
            "--port",
            "0",
            "--searches",
            str(args.searches),
            "--tree-mib",
            str(args.tree_mib),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if "http://" not in line:
            print(f"zertz serve did not start: {line!r}", file=sys.stderr)
            return 1
        url = line[line.index("http://") :].split()[0].rstrip("/")
        base_kib = memory_kib(server.pid, "VmRSS")
        stats = Stats()
        end = time.monotonic() + args.seconds
        browsers = [Browser(url, stats, seed) for seed in range(args.clients)]
        threads = [threading.Thread(target=b.run, args=(end,)) for b in browsers]
        peak_rss = 0
        started = time.monotonic()
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            peak_rss = max(peak_rss, memory_kib(server.pid, "VmRSS"))
            time.sleep(0.1)
            if time.monotonic() > end + 600:
                print("a client hung", file=sys.stderr)
                return 1
        took = time.monotonic() - started
        hwm_kib = memory_kib(server.pid, "VmHWM")
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    budget_kib = base_kib + (args.searches * args.tree_mib + args.games_mib) * 1024
    total = sum(stats.statuses.values())
    print(
        f"zertz serve --searches {args.searches} --tree-mib {args.tree_mib}: "
        f"{args.clients} clients for {args.seconds:.0f} s ({took:.1f} s with the last answers)"
    )
    print(
        f"requests: {total}, by status: "
        + ", ".join(f"{s}: {n}" for s, n in sorted(stats.statuses.items()))
    )
    for kind, seconds in sorted(stats.latencies.items()):
        ordered = sorted(seconds)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        print(
            f"  {kind:18} {len(ordered):6} requests, median {statistics.median(ordered):6.3f} s, "
            f"95% {p95:6.3f} s, largest {ordered[-1]:6.3f} s"
        )
    print(
        f"memory: {base_kib / 1024:.0f} MiB at the start, peak resident {hwm_kib / 1024:.0f} MiB "
        f"(VmHWM; {peak_rss / 1024:.0f} MiB seen), budget {budget_kib / 1024:.0f} MiB "
        f"= start + {args.searches} x {args.tree_mib} MiB + {args.games_mib} MiB; "
        f"server exit status {server.returncode}"
    )
    failed = False
    if stats.bad:
        failed = True
        print(f"{len(stats.bad)} answers neither 2xx nor a JSON 503, the first:", file=sys.stderr)
        for b in stats.bad[:10]:
            print("  " + b, file=sys.stderr)
    if hwm_kib > budget_kib:
        failed = True
        print("the server passed its memory budget", file=sys.stderr)
    if server.returncode != 0:
        failed = True
        print(f"zertz serve ended with {server.returncode} after SIGTERM", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
