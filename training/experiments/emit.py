"""The benchmarks' way of handing back raw results (benchmarks/emit.py: printed as JSON, written to --output), for
the experiments here: one implementation, loaded from its file (this folder is not a package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location("benchmarks_emit", Path(__file__).resolve().parents[2] / "benchmarks"
                                               / "emit.py")  # fmt: skip
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
emit = _module.emit
