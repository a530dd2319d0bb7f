"""``python -m zertz``: train, export, plot.

python -m zertz train --config configs/train/default.toml --run runs/default
python -m zertz export runs/default/checkpoint.pt model.safetensors
python -m zertz export runs/default/checkpoint.pt model.pt2 --device cpu --precision fp32
python -m zertz convert-network old-model.pt model.safetensors
python -m zertz compile-network model.safetensors --device cuda --precision bf16
python -m zertz random-model medium.safetensors --network medium --boards 37 --marbles blitz
python -m zertz human-moves --model runs/human/models/best.safetensors --dataset data/human
python -m zertz human-ceiling --dataset data/human
python -m zertz plot runs/default --out curves.png
python -m zertz table runs/default
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The signals that stopped a training run (Ctrl-C, a kill), as against its budget of minutes.
_signalled: list[int] = []


def _interrupt(signum: int, frame: object) -> None:
    _signalled.append(signum)
    raise KeyboardInterrupt


def _program() -> str:
    """The zertz program for the hint that ends a run: the repository's build, else ``zertz``."""
    built = Path(__file__).resolve().parents[2] / "target" / "release" / "zertz"
    return str(built) if built.is_file() else "zertz"


def random_model(
    out: str,
    network: str,
    boards: str,
    seed: int,
    device: str = "cpu",
    precision: str = "fp32",
    marbles: str = "standard",
) -> Path:
    """Exports a network of the preset size ``network`` with random weights (seeded) for
    ``boards`` ("37,48" or "all") and the marble sets ``marbles`` ("standard", "blitz",
    "standard,blitz" or "all"): a network file, or an AOTInductor package for ``device`` in
    ``precision`` when ``out`` ends in ``.pt2``; a ``.pt`` name is refused
    (:func:`zertz.training.folder.check_network_name`)."""
    import torch

    import zertz
    from zertz.exported import export, export_aoti
    from zertz.nn import NetConfig, ZertzNet
    from zertz.training.folder import check_network_name

    check_network_name(out)

    if boards.strip() == "all":
        rings = list(zertz.BOARDS)
    else:
        try:
            rings = [int(b) for b in boards.split(",")]
        except ValueError:
            raise ValueError(
                f"--boards must be ring counts like 37,48 or all, not {boards!r}"
            ) from None
    torch.manual_seed(seed)
    sets = list(zertz.MARBLE_SETS) if marbles.strip() == "all" else marbles.split(",")
    net = ZertzNet(NetConfig.preset(network), boards=rings, marbles=sets).eval()
    if Path(out).suffix == ".pt2":
        return export_aoti(net, out, name=f"random-{network}", device=device, precision=precision)
    return export(net, out, name=f"random-{network}")


def _ring_counts(boards: str | None) -> list[int] | None:
    """``--boards`` (``37,48``) as ring counts; None for all."""
    try:
        return None if boards is None else [int(b) for b in boards.split(",")]
    except ValueError:
        raise ValueError(f"--boards must be ring counts like 37,48, not {boards!r}") from None


def _print_boards(
    result: dict[int, dict[str, Any]],
    as_json: bool,
    empty: str,
    line: Callable[[int, dict[str, Any]], str],
) -> None:
    """Prints ``result`` (keyed by board): one JSON object with ``as_json``, else ``line`` of
    each board; ValueError(``empty``) without boards."""
    if as_json:
        print(json.dumps({str(b): r for b, r in result.items()}))
    elif not result:
        raise ValueError(empty)
    else:
        for board, r in result.items():
            print(line(board, r))


def convert(src: str, dst: str) -> str:
    """Converts a network that an older zertz exported as TorchScript into a network file
    (:func:`zertz.exported.convert_network`: nothing of the old file runs); the line that names
    the new file and the SHA-256 of its weights."""
    from zertz.exported import convert_network, read_metadata
    from zertz.training.folder import check_network_name

    check_network_name(dst)
    out = convert_network(src, dst)
    return f"{out} (sha256 {read_metadata(out)['sha256']})"


def compile_(network: str, device: str, precision: str) -> str:
    """Compiles the network file ``network`` into an AOTInductor package in the cache
    (:func:`zertz.exported.compile_network`), or finds it there; the package's path."""
    from zertz.exported import compile_network

    return str(compile_network(network, device=device, precision=precision))


def human_moves(
    model: str, dataset: str, boards: str | None, max_games: int | None, as_json: bool
) -> None:
    """Prints the human-move benchmark of a network file (see ``zertz.human``)."""
    from zertz.exported import load_network
    from zertz.human import benchmark

    result = benchmark(
        load_network(model), dataset, boards=_ring_counts(boards), max_games=max_games
    )
    _print_boards(
        result,
        as_json,
        f"{dataset} has no validation games of those boards",
        lambda board, r: (
            f"{board} rings: top-1 {r['top1']:.1%}, top-5 {r['top5']:.1%}, the value predicts "
            f"the winner {r['value']:.1%} ({r['decisions']} decisions of {r['games']} games)\n"
            f"  {r['placements']} placements: top-1 {r['place_top1']:.1%}, top-5 "
            f"{r['place_top5']:.1%}; the colour and ring alone: top-1 {r['marble_top1']:.1%}, "
            f"top-5 {r['marble_top5']:.1%}\n"
            f"  {r['captures']} captures: top-1 {r['capture_top1']:.1%}, top-5 "
            f"{r['capture_top5']:.1%}"
        ),
    )


def human_ceiling(
    dataset: str, boards: str | None, plies: int, min_count: int, as_json: bool
) -> None:
    """Prints how predictable the players' moves are where positions recur (``zertz.human``)."""
    from zertz.human import ceiling

    result = ceiling(
        dataset,
        boards=_ring_counts(boards),
        plies=plies,
        min_count=min_count,
        log=lambda line: print(line, file=sys.stderr),
    )
    _print_boards(
        result,
        as_json,
        f"{dataset} has no games of those boards",
        lambda board, r: (
            f"{board} rings ({r['games']} games): {r['decisions']} decisions of the first {plies} "
            f"turns at {r['positions']} positions seen {min_count} times or more: the players' "
            f"own frequencies score top-1 {r['top1']:.1%}, top-5 {r['top5']:.1%}; mirror "
            f"images as one ({r['class_decisions']} decisions at {r['class_positions']} "
            f"positions): top-1 {r['class_top1']:.1%}, top-5 {r['class_top5']:.1%}"
        ),
    )


def _package_options(parser: argparse.ArgumentParser) -> None:
    """The options of an AOTInductor package (an OUT that ends in .pt2)."""
    parser.add_argument(
        "--device", default="cpu", help="a .pt2 package's device: cpu (default) or cuda"
    )
    parser.add_argument(
        "--precision", default="fp32", help="a .pt2 package's number format: fp32, bf16 or fp16"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m zertz", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="run or resume an AlphaZero training run")
    t.add_argument("--config", required=True, help="a configs/train/*.toml file")
    t.add_argument("--run", help="run folder (default: runs/<config name>)")
    t.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="train on Ray: auto (this machine's cluster), local (a Ray instance for this run) "
        "or HOST:PORT of a cluster's head (default: [distributed] address; none: one machine)",
    )
    t.add_argument(
        "--minutes",
        type=float,
        help="a budget of time: no iteration starts that would end past it (judged by the "
        "longest so far); run the same command again to go on",
    )
    t.add_argument(
        "--from",
        dest="carry_on_from",
        metavar="CHECKPOINT",
        help="a new run folder carries on from another run's checkpoint.pt (its network, "
        "optimizer and counters; the self-play it trained on stays behind)",
    )
    e = sub.add_parser(
        "export",
        help="export a training checkpoint as a network file (.safetensors: weights, which "
        "the engine runs as data) or an AOTInductor package (.pt2: a program, which the engine "
        "runs only with --trust-code)",
    )
    e.add_argument("checkpoint", help="RUN/checkpoint.pt")
    e.add_argument(
        "out", help="the file to write: OUT.safetensors, or OUT.pt2 for a package (not .pt)"
    )
    e.add_argument(
        "--provenance",
        metavar="JSON",
        help="a JSON file of one object written into the metadata as provenance (the training "
        "config, commit and figures of a network that ships; network files only)",
    )
    _package_options(e)
    cv = sub.add_parser(
        "convert-network",
        help="convert a network that an older zertz exported as TorchScript (.pt) into a "
        "network file, reading its weights as data (nothing of the file runs)",
    )
    cv.add_argument("src", help="the TorchScript file (OLD.pt)")
    cv.add_argument("dst", help="the network file to write (NEW.safetensors)")
    cp = sub.add_parser(
        "compile-network",
        help="compile a network file into an AOTInductor package on this machine, kept in the "
        "cache under its weights' SHA-256 (the engine runs it with --compiled)",
    )
    cp.add_argument("network", help="the network file (or builtin)")
    _package_options(cp)
    r = sub.add_parser(
        "random-model",
        help="export a network of a preset size with random weights (for benchmarks)",
    )
    r.add_argument(
        "out", help="the file to write: OUT.safetensors, or OUT.pt2 for a package (not .pt)"
    )
    r.add_argument(
        "--network", default="tiny", help="a preset size (zertz.nn.NetConfig.PRESETS; default tiny)"
    )
    r.add_argument(
        "--boards", default="37", help="ring counts, comma separated (default 37), or all"
    )
    r.add_argument(
        "--marbles",
        default="standard",
        help="marble sets, comma separated: standard (the default), blitz, or all",
    )
    r.add_argument("--seed", type=int, default=0)
    _package_options(r)
    h = sub.add_parser(
        "human-moves",
        help="how well a model predicts the moves of a dataset's validation games",
    )
    h.add_argument("--model", required=True, help="a network file")
    h.add_argument("--dataset", required=True, help="a folder made by zertz dataset")
    h.add_argument("--boards", default=None, help="ring counts, comma separated (default: all)")
    h.add_argument("--max-games", type=int, default=None, help="validation games per board")
    h.add_argument("--json", action="store_true", help="print one JSON object")
    c = sub.add_parser(
        "human-ceiling",
        help="how predictable a dataset's moves are at the positions that recur (openings)",
    )
    c.add_argument("--dataset", required=True, help="a folder made by zertz dataset")
    c.add_argument("--boards", default=None, help="ring counts, comma separated (default: all)")
    c.add_argument("--plies", type=int, default=6, help="turns of each game read (default 6)")
    c.add_argument(
        "--min-count", type=int, default=100, help="occurrences of a position (default 100)"
    )
    c.add_argument("--json", action="store_true", help="print one JSON object")
    b = sub.add_parser(
        "bench-actors",
        help="self-play positions per second of 1, 2, ... Ray actors (distributed training)",
    )
    b.add_argument("--config", required=True, help="a configs/train/*.toml file")
    b.add_argument("--model", required=True, help="the network file the actors play with")
    b.add_argument("--actors", default="1,2", help="actor counts, comma separated (default 1,2)")
    b.add_argument("--seconds", type=float, default=60.0, help="seconds per count (default 60)")
    b.add_argument("--ray", default="local", metavar="ADDRESS", help="auto, local or HOST:PORT")
    b.add_argument("--json", action="store_true", help="print one JSON list")
    p = sub.add_parser("plot", help="draw the loss and Elo curves of a run")
    p.add_argument("run")
    p.add_argument("--out", default=None, help="image file (default: RUN/curves.png)")
    tb = sub.add_parser("table", help="print the last evaluation of a run")
    tb.add_argument("run")
    args = parser.parse_args(argv)

    try:
        if args.command == "train":
            from zertz.plots import read_metrics
            from zertz.training import final_table, load_config, train
            from zertz.training.folder import read_state
            from zertz.training.layout import RunLayout

            # A kill (SIGTERM) stops the run as Ctrl-C does (a call of main in a process that
            # was signalled before starts without those).
            _signalled.clear()
            signal.signal(signal.SIGTERM, _interrupt)
            signal.signal(signal.SIGINT, _interrupt)
            run = Path(args.run or Path("runs") / Path(args.config).stem)
            cfg = load_config(args.config)
            iterations = cfg.run.iterations
            if args.ray or cfg.distributed.address:
                if args.minutes is not None or args.carry_on_from is not None:
                    raise ValueError("--minutes and --from are for runs on one machine, not Ray")
                from zertz.training.distributed import train_distributed

                train_distributed(cfg, run, args.ray)
            else:
                train(cfg, run, minutes=args.minutes, carry_on_from=args.carry_on_from)
            # How far the run is: its checkpoint says, never the metrics (a line may be lost).
            state = read_state(run)
            done = state.iteration if state else 0
            if done < iterations and args.minutes is not None and not _signalled:
                print(
                    f"stopped after iteration {done} within {args.minutes:g} minutes: run the "
                    f"same command (without --from) again to go on with {run}"
                )
                return 0
            if done < iterations:
                print(f"stopped: run the same command again to resume {run}")
                return 130
            layout = RunLayout(run)
            metrics = layout.metrics
            rows = read_metrics(run) if metrics.exists() else []
            if not any(r["iteration"] == done for r in rows):
                print(
                    f"{run}: all {iterations} iterations are done, but {metrics} has lost the "
                    f"line of the last one, {done} (with its evaluation): the file was cut short "
                    "or changed after the run wrote it, and running again cannot make it again; "
                    f"the games of that evaluation are in {layout.matches}"
                )
                if rows:
                    print("the last evaluation it holds:")
            if rows:
                print(final_table(run))
            print(f"\nplay against it: {_program()} play --model {layout.best}")
        elif args.command == "export":
            from zertz.files import read_json
            from zertz.training import export_checkpoint

            provenance = None
            if args.provenance is not None:
                provenance = read_json(args.provenance, "json")
                if not isinstance(provenance, dict):
                    raise ValueError(f"{args.provenance} must hold one JSON object")
            print(
                export_checkpoint(
                    args.checkpoint, args.out, args.device, args.precision, provenance
                )
            )
        elif args.command == "convert-network":
            print(convert(args.src, args.dst))
        elif args.command == "compile-network":
            print(compile_(args.network, args.device, args.precision))
        elif args.command == "random-model":
            print(
                random_model(
                    args.out,
                    args.network,
                    args.boards,
                    args.seed,
                    args.device,
                    args.precision,
                    args.marbles,
                )
            )
        elif args.command == "human-moves":
            human_moves(args.model, args.dataset, args.boards, args.max_games, args.json)
        elif args.command == "human-ceiling":
            human_ceiling(args.dataset, args.boards, args.plies, args.min_count, args.json)
        elif args.command == "bench-actors":
            from zertz.training.distributed import bench_actors

            try:
                counts = [int(n) for n in args.actors.split(",")]
            except ValueError:
                raise ValueError(
                    f"--actors must be counts like 1,2,4, not {args.actors!r}"
                ) from None
            if not counts or min(counts) < 1:
                raise ValueError(f"--actors must be counts of at least 1, not {args.actors!r}")
            rows = bench_actors(args.config, args.model, counts, args.seconds, args.ray)
            if args.json:
                print(json.dumps(rows))
        elif args.command == "plot":
            from zertz.plots import plot
            from zertz.training.layout import RunLayout

            out = Path(args.out or RunLayout(Path(args.run)).curves)
            plot(args.run).savefig(out, dpi=100)
            print(out)
        elif args.command == "table":
            from zertz.training import final_table

            print(final_table(args.run))
    except (ValueError, OSError, RuntimeError, KeyError, ImportError) as err:
        if isinstance(err, ImportError):
            # Without torch and the engine (the torch-free wheel): what to install, in one line
            # (plot, table and human-ceiling need neither).
            from zertz.optional import missing_engine

            err = missing_engine(f"python -m zertz {args.command}", err) or err
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
