"""scripts/plots.py: the plots of BENCHMARKS.md are drawn from the figures beside them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_scripts_hostile import REPO, script

plots = script("plots")
FOLDER = REPO / "docs" / "plots"


def texts(svg: str) -> list[str]:
    """The text of an SVG drawn with ``svg.fonttype`` none: titles, labels, ticks, legend."""
    return [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", svg) if t.strip()]


def test_every_plot_is_drawn_from_its_figures(tmp_path: Path) -> None:
    """Each committed plot has its data file, and drawing it again writes the same words and
    numbers (the texts; the curves' coordinates depend on matplotlib's version)."""
    data = sorted(p.stem for p in FOLDER.glob("*.json"))
    drawn = sorted(p.stem for p in FOLDER.glob("*.svg"))
    assert data == drawn and len(data) >= 2
    plots.main(["--out", str(tmp_path)])
    for name in data:
        committed = texts((FOLDER / f"{name}.svg").read_text(encoding="utf-8"))
        again = texts((tmp_path / f"{name}.svg").read_text(encoding="utf-8"))
        assert committed == again, name
        figures = json.loads((FOLDER / f"{name}.json").read_text(encoding="utf-8"))
        assert figures["title"] in again and figures["source"]["commit"] in " ".join(again)
        assert all(s["label"] in again for s in figures["series"])


def test_a_plot_is_linked_from_the_benchmarks() -> None:
    benchmarks = (REPO / "BENCHMARKS.md").read_text(encoding="utf-8")
    for path in FOLDER.glob("*.svg"):
        assert f"(docs/plots/{path.name})" in benchmarks, path.name


@pytest.mark.parametrize(
    ("figures", "message"),
    [
        ({"title": "t"}, "keys must be"),
        (
            {
                "title": "t",
                "x": {"label": "x"},
                "y": {"label": "y"},
                "source": {"machine": "m", "commit": "c", "command": "c"},
                "series": [{"label": "s", "x": [1, 2], "y": [1]}],
            },
            "x and y differ in length",
        ),
        (
            {
                "title": "t",
                "x": {"label": "x"},
                "y": {"label": "y"},
                "source": {"machine": "m", "commit": "c", "command": "c"},
                "series": [{"label": "s", "x": [1, 2], "y": [1, [2, "NaN"]]}],
            },
            "every x and y must be a finite number",
        ),
        ({"title": "t", "x": "x", "y": [], "source": {}, "series": {}}, "source"),
        ("{not json", "not a JSON file"),
    ],
)
def test_bad_figures_are_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], figures: object, message: str
) -> None:
    text = figures if isinstance(figures, str) else json.dumps(figures)
    (tmp_path / "bad.json").write_text(text)
    with pytest.raises(SystemExit) as e:
        plots.main(["--folder", str(tmp_path), "--out", str(tmp_path)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {tmp_path / 'bad.json'}") and message in err
    assert not (tmp_path / "bad.svg").exists()
