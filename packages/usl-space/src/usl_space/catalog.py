"""The project's own model list (models.csv): which models a default board shows, and what a person choosing a
model needs beside each name (organisation, open or proprietary weights, release month).

The list was written by hand from public facts (each lab's release announcements): the 40 well-known models of
early 2024 that the board showed before (../shared/data/usl/alpaca_eval/default_models.txt, kept for continuity;
`on_board_since` "original") and 15 that people compared in late 2024 (`on_board_since` 2026-11). A model whose
GPT-4-turbo verdicts trained the quality term is not on it (tests/test_catalog.py checks this against the data).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

COLUMNS = ("model", "organisation", "weights", "released", "on_board_since")


@dataclass(frozen=True)
class ModelInfo:
    model: str
    organisation: str
    weights: str  # "open" or "proprietary"
    released: str  # YYYY-MM
    on_board_since: str  # "original" (the early-2024 list) or the month it joined

    @property
    def open_weights(self) -> bool:
        return self.weights == "open"


def parse_catalog(text: str, where: str = "models.csv") -> dict[str, ModelInfo]:
    """Rows of a models.csv, checked: the header, one row per model, weights open / proprietary."""
    reader = csv.DictReader(io.StringIO(text))
    if tuple(reader.fieldnames or ()) != COLUMNS:
        raise ValueError(f"{where}: header must be {','.join(COLUMNS)}, got {reader.fieldnames}")
    out: dict[str, ModelInfo] = {}
    for line, row in enumerate(reader, 2):
        info = ModelInfo(**{k: (row[k] or "").strip() for k in COLUMNS})
        if not info.model or info.model in out:
            raise ValueError(f"{where}:{line}: model: empty or repeated ({info.model!r})")
        if info.weights not in ("open", "proprietary"):
            raise ValueError(f"{where}:{line}: weights: expected 'open' or 'proprietary', got {info.weights!r}")
        out[info.model] = info
    return out


@lru_cache(maxsize=1)
def catalog() -> dict[str, ModelInfo]:
    """The shipped models.csv, by model name, in the file's order."""
    return parse_catalog((resources.files("usl_space") / "models.csv").read_text(encoding="utf-8"))


def default_models() -> list[str]:
    """The default board's models (the baseline gpt4_1106_preview among them)."""
    return list(catalog())
