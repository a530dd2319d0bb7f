"""The metrics of a training run: ``RUN/metrics.jsonl`` (one JSON object per iteration) and
TensorBoard files in ``RUN/tb``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class Metrics:
    """Appends each iteration's statistics to the run folder's metrics."""

    def __init__(self, folder: Path) -> None:
        self.dir = folder
        self._tb: Any = None

    def record(self, stats: dict[str, Any]) -> None:
        with open(self.dir / "metrics.jsonl", "a") as f:
            f.write(json.dumps(stats) + "\n")
        try:
            if self._tb is None:
                from torch.utils.tensorboard import SummaryWriter

                self._tb = SummaryWriter(str(self.dir / "tb"))
        except ImportError:
            return
        it = stats["iteration"]
        for k, v in stats.items():
            if isinstance(v, int | float) and k != "iteration":
                self._tb.add_scalar(k, v, it)
        for opp, r in stats.get("evaluation", {}).items():
            self._tb.add_scalar(f"score/{opp}", r["score"], it)
        self._tb.flush()
