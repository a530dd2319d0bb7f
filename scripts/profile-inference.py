"""Where a forward pass of a network file spends its time on a GPU, by kernel (torch's
profiler): the first part of issue 13's "measure first". Prints the kernels that take most of
the device time over a few passes, and the share of the pass the device is busy at all (the rest
is launch overhead and host work between kernels, which CUDA graphs remove).

    python scripts/profile-inference.py MODEL.safetensors [--batch 1024] [--precision bf16] \
        [--board 37]

Runs on the CPU too (without device times), which is only useful to check the script.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch.profiler import ProfilerActivity, profile

import zertz
from zertz.exported import AOTI_DTYPES, load_network


def positions(board: int, n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Planes and globals of ``n`` positions of random games on ``board``."""
    rng = np.random.default_rng(seed)
    planes: list[np.ndarray] = []
    globals_: list[np.ndarray] = []
    game = zertz.Game(board)
    while len(planes) < n:
        if game.outcome is not None:
            game = zertz.Game(board)
        p, g = game.encode()
        planes.append(p)
        globals_.append(g)
        game.play(int(rng.choice(game.legal_action_indices())))
    return torch.from_numpy(np.stack(planes)), torch.from_numpy(np.stack(globals_))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a network file (.safetensors)")
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--precision", default="bf16", choices=sorted(AOTI_DTYPES))
    parser.add_argument("--board", type=int, default=37)
    parser.add_argument("--passes", type=int, default=10)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = AOTI_DTYPES[args.precision]
    model = load_network(args.model, device).to(dtype)
    planes, globals_ = positions(args.board, args.batch)
    planes, globals_ = planes.to(device, dtype), globals_.to(device, dtype)

    def run() -> None:
        with torch.no_grad():
            model.evaluate(planes, globals_, args.board)

    def sync() -> None:
        if device == "cuda":
            torch.cuda.synchronize()

    for _ in range(5):
        run()
    sync()
    start = time.perf_counter()
    for _ in range(args.passes):
        run()
    sync()
    wall = (time.perf_counter() - start) / args.passes
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        for _ in range(args.passes):
            run()
        sync()
    events = prof.key_averages()
    sort = "cuda_time_total" if device == "cuda" else "cpu_time_total"
    print(events.table(sort_by=sort, row_limit=15, max_name_column_width=60))
    if device == "cuda":
        busy = sum(e.device_time_total for e in events if e.device_type.name == "CUDA") / 1e6
        busy /= args.passes
        print(
            f"batch {args.batch} in {args.precision}: {wall * 1e3:.3f} ms a pass "
            f"({args.batch / wall:,.0f} evaluations/s); kernels busy {busy * 1e3:.3f} ms "
            f"({busy / wall:.0%} of the pass)"
        )
    else:
        print(f"batch {args.batch} on the CPU: {wall * 1e3:.3f} ms a pass")


if __name__ == "__main__":
    main()
