"""The metrics of a training run: ``RUN/metrics.jsonl`` (one JSON object per iteration) and
TensorBoard files in ``RUN/tb``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from zertz.files import append_text, read_text
from zertz.training.layout import RunLayout


def iteration_of(line: str) -> int | None:
    """The iteration of a line of ``metrics.jsonl``; None for one that is not a JSON object with
    an int ``iteration`` (a line cut short by a kill, or damaged)."""
    try:
        row = json.loads(line)
    except ValueError:
        return None
    it = row.get("iteration") if isinstance(row, dict) else None
    return it if isinstance(it, int) and not isinstance(it, bool) else None


class Metrics:
    """Appends each iteration's statistics to the run folder's metrics."""

    def __init__(self, folder: Path) -> None:
        self.dir = folder
        self._tb: Any = None

    @property
    def path(self) -> Path:
        return RunLayout(self.dir).metrics

    def keep(self, iteration: int, pretrained: bool) -> int:
        """Makes ``metrics.jsonl`` hold what the checkpoint holds, before a run resumes: one line
        per iteration 1 to ``iteration`` (the last of each, where a kill between a line and its
        checkpoint repeated one), the line of the pretraining (iteration 0) when
        ``pretrained``, in order; lines of iterations the checkpoint does not hold (they are
        run again), lines cut short and lines that are no metrics go. Rewritten atomically,
        and only when that changes it; returns the number of lines that went. A file that is
        not a regular one (a link to ``/dev/zero``), or past ``zertz.files.LIMITS["metrics"]``,
        is refused before it is opened (OSError naming it)."""
        if not self.path.exists():
            return 0
        text = read_text(self.path, "metrics", errors="replace")
        lines = text.splitlines()
        kept: dict[int, str] = {}
        for line in lines:
            it = iteration_of(line)
            if it is not None and (1 <= it <= iteration or (it == 0 and pretrained)):
                kept[it] = line
        new = "".join(kept[i] + "\n" for i in sorted(kept))
        if new != text:
            # Imported here: reading metrics (iteration_of, zertz.plot) needs no torch.
            from zertz.training.folder import atomic_write_text

            atomic_write_text(self.path, new)
        return len(lines) - len(kept)

    def last(self, key: str) -> Any:
        """``key`` of the last line of ``metrics.jsonl`` that has it; None when none has."""
        if not self.path.exists():
            return None
        found = None
        for line in read_text(self.path, "metrics", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and key in row:
                found = row[key]
        return found

    def record(self, stats: dict[str, Any]) -> None:
        # On the disk before the checkpoint that follows it (a full disk: one line naming it).
        append_text(self.path, json.dumps(stats) + "\n")
        try:
            if self._tb is None:
                from torch.utils.tensorboard import SummaryWriter

                self._tb = SummaryWriter(str(RunLayout(self.dir).tensorboard))
        except ImportError:
            return
        it = stats["iteration"]
        for k, v in stats.items():
            if isinstance(v, int | float) and k != "iteration":
                self._tb.add_scalar(k, v, it)
        for opp, r in stats.get("evaluation", {}).items():
            self._tb.add_scalar(f"score/{opp}", r["score"], it)
        self._tb.flush()
