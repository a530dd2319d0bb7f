"""The self-play actors' benchmark (``python -m zertz bench-actors``): positions per second of
1, 2, ... actors on Ray, and the scaling efficiency."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from zertz.exported import read_metadata
from zertz.files import read_bytes
from zertz.training.actor import SelfPlayActor, ray_module
from zertz.training.config import TrainConfig, load_config
from zertz.training.driver import local_cpus
from zertz.training.selfplay import chunk_seed, selfplay_settings


def _bench_chunk(
    actors: list[Any],
    seq: list[int],
    cfg: TrainConfig,
    model: Any,
    threads: int,
    actor: int,
) -> Any:
    """Hands ``actor`` its next chunk of the benchmark."""
    seq[actor] += 1
    seed = chunk_seed(cfg.run.seed, actor, seq[actor])
    chunk = cfg.distributed.chunk_games
    return actors[actor].play.remote(seq[actor], chunk, seed, 0, model, threads)


def bench_actors(
    config: TrainConfig | str | os.PathLike[str],
    model: str | os.PathLike[str],
    counts: list[int],
    seconds: float,
    address: str = "local",
    *,
    log: Callable[[str], None] = print,
) -> list[dict[str, float]]:
    """Self-play positions per second of 1, 2, ... actors (``counts``) playing ``config``'s
    self-play with the network file ``model``, each count for ``seconds`` after every actor
    has finished a first chunk (loading the network and the engine); the scaling efficiency is
    the rate over ``n`` times the rate of one actor (of the first count). On Ray at
    ``address`` ("local": an instance of this machine's cores). A ``model`` that is not a
    network file is refused (ValueError naming it) before Ray starts."""
    cfg = config if isinstance(config, TrainConfig) else load_config(config)
    read_metadata(model)
    ray = ray_module()
    d = cfg.distributed
    settings, warmup = selfplay_settings(cfg)
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(
            address=address,
            include_dashboard=False,
            logging_level="WARNING",
            **local_cpus(address, max(counts) * d.actor_cpus, log),
        )
    data = ray.put(read_bytes(model, "network"))
    cls = ray.remote(SelfPlayActor).options(num_cpus=d.actor_cpus, num_gpus=d.actor_gpus)
    threads = max(1, int(d.actor_cpus))
    results: list[dict[str, float]] = []
    try:
        for n in counts:
            actors = [cls.remote(a, settings, warmup, "auto") for a in range(n)]
            play = partial(_bench_chunk, actors, [0] * n, cfg, data, threads)
            ray.get([play(a) for a in range(n)])  # loaded and warm
            pending = {play(a): a for a in range(n)}
            t0 = time.perf_counter()
            positions = games = 0
            while True:
                ready, _ = ray.wait(list(pending), num_returns=1)
                a = pending.pop(ready[0])
                now = time.perf_counter()
                played, _files = ray.get(ready[0])
                positions += played.summary.samples
                games += played.summary.games
                if now - t0 >= seconds:
                    break
                pending[play(a)] = a
            elapsed = time.perf_counter() - t0
            for handle in actors:
                ray.kill(handle)
            rate = positions / elapsed
            one = results[0]["positions_per_second"] / results[0]["actors"] if results else rate / n
            row = {
                "actors": float(n),
                "seconds": elapsed,
                "games": float(games),
                "positions": float(positions),
                "positions_per_second": rate,
                "efficiency": rate / (n * one),
            }
            results.append(row)
            log(
                f"{n} actor(s): {positions} positions of {games} games in {elapsed:.1f} s: "
                f"{rate:.1f} positions/s, efficiency {row['efficiency']:.0%}"
            )
    finally:
        if started_here:
            ray.shutdown()
    return results
