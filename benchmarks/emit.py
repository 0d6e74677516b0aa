"""How every benchmark here hands back its raw results: printed as JSON, and written to --output when given."""

from __future__ import annotations

import json
from pathlib import Path


def emit(result: dict, output: Path | None) -> None:
    text = json.dumps(result, indent=2)
    print(text)
    if output:
        output.write_text(text + "\n", encoding="utf-8")
