"""README.md's result tables are the ones benchmarks/tables.py renders from benchmarks/results/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TABLES = REPO / "benchmarks" / "tables.py"


def run_tables(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TABLES), *args], capture_output=True, text=True, timeout=60)


def test_readme_tables_match_the_results_files():
    result = run_tables("--check")
    assert result.returncode == 0, result.stderr


def test_a_stale_or_unmarked_table_is_caught(tmp_path):
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    stale = tmp_path / "README.md"
    stale.write_text(readme.replace("<!-- /table:throughput -->", "| an old row |\n<!-- /table:throughput -->"))
    result = run_tables("--check", "--readme", str(stale))
    assert result.returncode == 1 and "out of date" in result.stderr
    assert run_tables("--readme", str(stale)).returncode == 0  # rewriting repairs it
    assert stale.read_text(encoding="utf-8") == readme
    stale.write_text(readme.replace("<!-- table:latency -->", ""))
    result = run_tables("--check", "--readme", str(stale))
    assert result.returncode != 0 and "no <!-- table:latency -->" in result.stderr
