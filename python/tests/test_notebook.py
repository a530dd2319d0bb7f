"""notebooks/train.ipynb runs from top to bottom with the tiny training config.

The notebook needs the ``zertz`` program (``$ZERTZ_BIN`` or ``target/release/zertz``) for
self-play and matches; the test is skipped when it cannot be found.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "train.ipynb"
TINY = REPO / "configs" / "train" / "tiny.toml"
KERNEL = "zertz-test-python"


def this_interpreter_kernel(folder: Path) -> KernelManager:
    """A kernel manager that launches ipykernel with this very interpreter (the test's venv),
    whatever kernelspecs the machine has installed."""
    spec = folder / KERNEL
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "zertz test", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel))
    specs = KernelSpecManager(kernel_dirs=[str(folder)])
    return KernelManager(kernel_name=KERNEL, kernel_spec_manager=specs)


def texts(nb: nbformat.NotebookNode) -> str:
    """Every text output of the executed notebook: streams and plain-text results."""
    parts: list[str] = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out["output_type"] == "stream":
                parts.append(out["text"])
            elif "data" in out:
                parts.append(out["data"].get("text/plain", ""))
    return "\n".join(parts)


def test_notebook_trains_plots_and_plays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = tmp_path / "run"
    monkeypatch.setenv("ZERTZ_NOTEBOOK_CONFIG", str(TINY))
    monkeypatch.setenv("ZERTZ_NOTEBOOK_RUN", str(run))
    monkeypatch.setenv("MPLBACKEND", "Agg")

    nb = nbformat.read(NOTEBOOK, as_version=4)  # type: ignore[no-untyped-call]
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, "stored outputs"
    check = "import sys\nprint(sys.executable)"
    nb.cells.append(nbformat.v4.new_code_cell(check))  # type: ignore[no-untyped-call]
    client = NotebookClient(
        nb,
        km=this_interpreter_kernel(tmp_path / "kernels"),
        timeout=300,
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell

    assert (run / "metrics.jsonl").is_file()
    assert (run / "models" / "best.safetensors").is_file()
    kernel_python = nb.cells[-1].outputs[0]["text"].strip()
    assert os.path.abspath(kernel_python) == os.path.abspath(sys.executable), "the venv kernel"
    out = texts(nb)
    assert "random" in out and "network after iteration" in out, "the final table"
    assert "you: " in out and "network: " in out, "the game against the network"
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    boards = [o for o in outputs if "image/svg+xml" in o.get("data", {})]
    assert len(boards) >= 3, "the boards are drawn"
