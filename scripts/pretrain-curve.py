"""The human-move benchmark during supervised pretraining on a dataset (a learning curve): the
network of a preset size learns the training shards of one board (AdamW, batches of 256 under a
random symmetry, the learning rate falling from --lr to 5% of it, cosine) and is benchmarked on
the validation games every --every steps. The figures of BENCHMARKS.md, "Learning curves of
the human-move benchmark", came from

    .venv/bin/python scripts/pretrain-curve.py --dataset DIR --preset tiny --steps 12000
    .venv/bin/python scripts/pretrain-curve.py --dataset DIR --preset small --steps 12000

with DIR made by `zertz dataset ../shared/records/boardspace-zertz.tar.xz --out DIR --boards 37`;
those of "How predictable the players are" from

    .venv/bin/python scripts/pretrain-curve.py --dataset DIR --steps 4000 --every 4000 \
        --save M.safetensors
    .venv/bin/python scripts/pretrain-curve.py --dataset DIR --steps 4000 --every 4000 \
        --policy-rank 32

then `python -m zertz human-moves --model M.safetensors --dataset DIR --max-games 400`. Prints
one JSON line per benchmark.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import time
from pathlib import Path
from types import SimpleNamespace

import torch

from zertz import action_space_size
from zertz.data import load_shards
from zertz.exported import export
from zertz.human import benchmark
from zertz.nn import NetConfig, ZertzNet
from zertz.training.fitting import Augmenter, sgd_step


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", required=True)
    p.add_argument("--board", type=int, default=37)
    p.add_argument("--preset", default="tiny")
    p.add_argument("--steps", type=int, default=12000)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--lr", type=float, default=0.002)
    p.add_argument("--every", type=int, default=3000)
    p.add_argument("--games", type=int, default=200, help="validation games per benchmark")
    p.add_argument("--chunk", type=int, default=8, help="shards loaded at a time")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--policy-rank", type=int, default=None, help="the preset's unless given")
    p.add_argument("--save", default=None, help="export the final network to this .safetensors")
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    config = NetConfig.preset(a.preset)
    if a.policy_rank is not None:
        config = dataclasses.replace(config, policy_rank=a.policy_rank)
    net = ZertzNet(config, boards=[a.board])
    # What sgd_step needs of a training run.
    run = SimpleNamespace(
        net=net,
        opt=torch.optim.AdamW(net.parameters(), lr=a.lr, weight_decay=1e-4),
        gen=torch.Generator().manual_seed(0),
        cfg=SimpleNamespace(train=SimpleNamespace(value_weight=1.0, captures_weight=1.0)),
    )
    files = sorted((Path(a.dataset) / "train").glob(f"shard-{a.board:02d}-*.npz"))
    augment = Augmenter(a.board, torch.device("cpu"))
    started, done = time.perf_counter(), 0

    def report() -> None:
        net.eval()
        r = benchmark(net, a.dataset, boards=[a.board], max_games=a.games)[a.board]
        net.train()
        minutes = (time.perf_counter() - started) / 60
        print(json.dumps({"step": done, "positions": done * a.batch, "minutes": minutes, **r}))

    net.train()
    while done < a.steps:
        pick = torch.randperm(len(files), generator=run.gen)[: a.chunk].tolist()
        d = load_shards([files[i] for i in pick], action_space_size(a.board))
        arrays = [
            torch.from_numpy(d[k]) for k in ("planes", "globals", "legal_action_mask", "policy")
        ]
        value = torch.from_numpy(d["value"])
        full = torch.ones(len(value), dtype=torch.bool)
        captures = torch.from_numpy(d["final_captures"])
        order = torch.randperm(len(value), generator=run.gen)
        for s in range(0, len(value) - a.batch + 1, a.batch):
            if done >= a.steps:
                break
            lr = a.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * done / a.steps)))
            idx = order[s : s + a.batch]
            batch = (*(x[idx] for x in arrays), value[idx], full[idx], captures[idx])
            sgd_step(run, lr, augment, batch, lambda *_: "diverged")  # type: ignore[arg-type]
            done += 1
            if done % a.every == 0:
                report()
    if done % a.every:
        report()
    if a.save:
        net.eval()
        export(net, a.save, name=f"pretrained-{a.preset}", step=done)


if __name__ == "__main__":
    main()
