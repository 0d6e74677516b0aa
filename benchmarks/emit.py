"""How every benchmark here hands back its raw results: printed as JSON, and written to --output when given."""

from __future__ import annotations

import json
from pathlib import Path


def emit(result: dict, output: Path | None, drop: tuple[str, ...] = ()) -> None:
    """`drop`: keys left out of the printout (long raw lists); the file keeps everything."""
    print(json.dumps({k: v for k, v in result.items() if k not in drop}, indent=2))
    if output:
        output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
