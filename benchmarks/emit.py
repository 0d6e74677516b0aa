"""How every benchmark here hands back its raw results: printed as JSON, and written to --output when given."""

from __future__ import annotations

import json
from pathlib import Path


def emit(result: dict, output: Path | None, drop: tuple[str, ...] = ()) -> None:
    """`drop`: keys left out of the printout (long raw lists); the file keeps everything."""
    print(json.dumps({k: v for k, v in result.items() if k not in drop}, indent=2))
    if output:
        output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


def add_model_argument(parser) -> None:
    """The flag every board benchmark takes: `--model NAME=DIR`, repeatable (read back by named_folders)."""
    what = "a compositional CRM folder to judge, with the name the report gives it (repeatable)"
    parser.add_argument("--model", action="append", required=True, metavar="NAME=DIR", help=what)


def named_folders(parser, specs: list[str]) -> list[tuple[str, str]]:
    """`--model NAME=DIR` values as (name, folder) pairs; anything else is the parser's error."""
    pairs = [spec.partition("=")[::2] for spec in specs]
    for spec, (_, folder) in zip(specs, pairs, strict=True):
        if not folder:
            parser.error(f"--model takes NAME=DIR, got {spec!r}")
    return pairs
