"""The training run's progress bar and ETA (zertz.training.progress)."""

from __future__ import annotations

import io

from zertz.training.progress import RunProgress, clock_text, detect


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_clock_text() -> None:
    assert clock_text(0) == "0:00"
    assert clock_text(65.4) == "1:05"
    assert clock_text(7322) == "2:02:02"


def test_the_eta_is_the_mean_iteration_of_this_process_times_those_left() -> None:
    clock = Clock()
    lines: list[str] = []
    # A resumed run: 2 of 10 iterations were done before; they do not count in the mean.
    p = RunProgress(10, 2, log=lines.append, mode="plain", clock=clock)
    assert p.eta() is None and p.eta_note() == ""
    assert "ETA after the first iteration" in p.text()
    clock.now += 30
    p.advance()
    clock.now += 50
    p.advance()
    assert p.per_iteration() == 40
    assert p.eta() == 40 * 6
    assert p.eta_note() == " (ETA 4:00, 0:40 an iteration)"
    assert p.text().startswith("4/10 iterations |")
    assert "40%" in p.text() and "1:20 elapsed" in p.text()


def test_a_terminal_gets_a_bar_under_the_log_lines() -> None:
    clock = Clock()
    lines: list[str] = []
    out = io.StringIO()
    p = RunProgress(3, 0, log=lines.append, stream=out, mode="terminal", clock=clock)
    p.log("iteration 1/3")
    assert lines == ["iteration 1/3"]
    assert out.getvalue().startswith("\r\x1b[K0/3 iterations |")
    assert out.getvalue().endswith("iteration 1/3")  # the last line, beside the bar
    clock.now += 10
    p.advance()
    before = len(out.getvalue())
    p.log("iteration 2/3")
    # The bar is cleared before the line is logged, then drawn again with the ETA.
    assert out.getvalue()[before:].startswith("\r\x1b[K\r\x1b[K1/3 iterations")
    assert "ETA 0:20" in out.getvalue()[before:]
    p.close()
    assert out.getvalue().endswith("\n")


def test_a_pipe_gets_no_bar() -> None:
    out = io.StringIO()  # not a terminal
    assert detect(out) == "plain"
    lines: list[str] = []
    p = RunProgress(3, 0, log=lines.append, stream=out)
    p.log("iteration 1/3")
    p.advance()
    p.close()
    assert lines == ["iteration 1/3"] and out.getvalue() == ""


def test_the_pretraining_is_no_iteration() -> None:
    """The main job pretrains for minutes before its first iteration: the ETA once counted that
    as the first iteration's time (``iteration 2/12 (ETA 8:06:10, 44:12 an iteration)``)."""
    clock = Clock()
    lines: list[str] = []
    p = RunProgress(12, 0, log=lines.append, mode="plain", clock=clock)
    clock.now += 2532  # pretraining
    p.begin_iterations()
    assert p.eta_note() == ""
    clock.now += 120  # the first iteration
    p.advance()
    assert p.per_iteration() == 120
    assert p.eta_note() == " (ETA 22:00, 2:00 an iteration)"
    # The time elapsed is the whole process's, pretraining included.
    assert "44:12 elapsed" in p.text() and "ETA 22:00" in p.text()
