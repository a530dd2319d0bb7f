"""The whole run's progress with its ETA: in a terminal a bar redrawn under the log lines, in a
notebook a bar updated in place, and everywhere the ETA in the line that starts an iteration (a
pipe or a log file gets no bar, only those lines).

The ETA is the mean time of the iterations this process has run, times the iterations left
(pretraining aside: it comes before the first iteration, and :meth:`RunProgress.begin_iterations`
starts the iterations' clock after it).

>>> ticks = iter([0.0, 600.0, 660.0])
>>> lines: list[str] = []
>>> p = RunProgress(4, 1, log=lines.append, mode="plain", clock=lambda: next(ticks))
>>> p.begin_iterations()  # after 10 minutes of pretraining
>>> p.eta_note()
''
>>> p.advance()
>>> p.eta_note()
' (ETA 2:00, 1:00 an iteration)'
"""

from __future__ import annotations

import html
import sys
import time
from collections.abc import Callable
from typing import Any, Literal, TextIO

#: Characters of the bar.
WIDTH = 24


def clock_text(seconds: float) -> str:
    """``1:05`` for 65 s, ``2:00:00`` for two hours."""
    s = max(0, round(seconds))
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (IPython with a kernel)."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def detect(stream: TextIO) -> Literal["terminal", "notebook", "plain"]:
    """The bar's place: a notebook's output, the terminal of ``stream``, or none."""
    if in_notebook():
        return "notebook"
    isatty = getattr(stream, "isatty", None)
    return "terminal" if isatty is not None and isatty() else "plain"


class RunProgress:
    """The progress of ``total`` iterations, ``done`` of them finished before this process.

    :meth:`log` is the log function to give the loop: it writes the line through ``log`` and
    redraws the bar below it. :meth:`advance` counts an iteration; :meth:`close` leaves the
    terminal's last line clean."""

    def __init__(
        self,
        total: int,
        done: int,
        *,
        log: Callable[[str], None],
        stream: TextIO | None = None,
        mode: Literal["terminal", "notebook", "plain"] | None = None,
        clock: Callable[[], float] = time.monotonic,
        unit: str = "iterations",
    ) -> None:
        self.total = total
        #: What is counted (``iterations``; ``steps`` for behaviour cloning).
        self.unit = unit
        self.first = done
        self.done = done
        self._log = log
        self.stream = stream if stream is not None else sys.stderr
        #: Where the bar goes: a terminal's line, a notebook's output, or nowhere ("plain").
        self.mode = mode or detect(self.stream)
        self.clock = clock
        self.started = clock()
        #: When the iterations began: what :meth:`per_iteration` counts from.
        self.iterations_started = self.started
        #: The last log line, shown beside the bar (what the run is doing).
        self.phase = ""
        self._handle: Any = None
        self._drawn = False

    def begin_iterations(self) -> None:
        """The iterations start now: what this process did before them (pretraining) counts in
        the time elapsed, not in the time of an iteration."""
        self.iterations_started = self.clock()

    def per_iteration(self) -> float | None:
        """Mean seconds of the iterations run by this process (since :meth:`begin_iterations`);
        None before the first ends."""
        ran = self.done - self.first
        return (self.clock() - self.iterations_started) / ran if ran > 0 else None

    def eta(self) -> float | None:
        """Seconds left, from :meth:`per_iteration`; None while it is unknown."""
        per = self.per_iteration()
        return None if per is None else per * max(0, self.total - self.done)

    def eta_note(self) -> str:
        """`` (ETA 12:30, 2:05 an iteration)`` once an iteration has ended, else nothing."""
        per = self.per_iteration()
        if per is None:
            return ""
        left = per * max(0, self.total - self.done)
        return f" (ETA {clock_text(left)}, {clock_text(per)} an iteration)"

    def text(self) -> str:
        """``3/12 iterations |██████          | 25% · 6:10 elapsed · ETA 18:30 · PHASE``."""
        fraction = self.done / max(1, self.total)
        filled = round(fraction * WIDTH)
        eta = self.eta()
        parts = [
            f"{self.done}/{self.total} {self.unit} |{'█' * filled}{' ' * (WIDTH - filled)}|",
            f"{fraction:.0%}",
            f"{clock_text(self.clock() - self.started)} elapsed",
            f"ETA {'after the first iteration' if eta is None else clock_text(eta)}",
        ]
        if self.phase:
            parts.append(self.phase)
        return " · ".join(parts)

    def log(self, line: str) -> None:
        self._clear()
        self._log(line)
        self.phase = line.strip()[:60]
        self.draw()

    def advance(self) -> None:
        """One more iteration finished."""
        self.done += 1
        self.draw()

    def draw(self) -> None:
        if self.mode == "terminal":
            self.stream.write("\r\x1b[K" + self.text())
            self.stream.flush()
            self._drawn = True
        elif self.mode == "notebook":
            from IPython.display import HTML, display

            view = HTML(  # type: ignore[no-untyped-call]
                f'<progress value="{self.done}" max="{max(1, self.total)}" '
                f'style="width: 20em"></progress> <code>{html.escape(self.text())}</code>'
            )
            if self._handle is None:
                self._handle = display(view, display_id=True)  # type: ignore[no-untyped-call]
            else:
                self._handle.update(view)

    def _clear(self) -> None:
        if self.mode == "terminal" and self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def close(self) -> None:
        """Ends the bar: the terminal's line is left with the last state and a new line."""
        if self.mode == "terminal" and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
