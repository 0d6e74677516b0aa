"""The result tables of README.md and docs/ are the ones benchmarks/tables.py renders from benchmarks/results/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TABLES = REPO / "benchmarks" / "tables.py"
DOCUMENTS = [REPO / "README.md", REPO / "docs" / "internals.md", REPO / "docs" / "experiments.md"]


def run_tables(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TABLES), *args], capture_output=True, text=True, timeout=60)


def test_the_tables_match_the_results_files():
    result = run_tables("--check")
    assert result.returncode == 0, result.stderr


def test_a_stale_or_unmarked_table_is_caught(tmp_path):
    copies = []
    for path in DOCUMENTS:
        copies.append(tmp_path / path.name)
        copies[-1].write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    readme, internals, _ = copies
    original = readme.read_text(encoding="utf-8")
    readme.write_text(original.replace("<!-- /table:judge -->", "| an old row |\n<!-- /table:judge -->"))
    result = run_tables("--check", "--documents", *map(str, copies))
    assert result.returncode == 1 and "out of date" in result.stderr and "README.md" in result.stderr
    assert run_tables("--documents", *map(str, copies)).returncode == 0  # rewriting repairs it
    assert readme.read_text(encoding="utf-8") == original
    internals.write_text(internals.read_text(encoding="utf-8").replace("<!-- table:latency -->", ""))
    result = run_tables("--check", "--documents", *map(str, copies))
    assert result.returncode != 0 and "no <!-- table:latency -->" in result.stderr
