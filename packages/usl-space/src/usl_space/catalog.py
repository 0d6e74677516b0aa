"""The project's own model lists: which models a default board shows (models.csv), and what a person choosing a
model needs beside each name (organisation, open or proprietary weights, release month) for those and for the models
of the 2025 benches (models_2025.csv: creative and speechmap).

The lists were written by hand from public facts (each lab's release announcements): the 40 well-known models of
early 2024 that the board showed before (../shared/data/usl/alpaca_eval/default_models.txt, kept for continuity;
`on_board_since` "original") and 15 that people compared in late 2024 (`on_board_since` 2026-11). A model whose
GPT-4-turbo verdicts trained the quality term is not on it (tests/test_judging.py checks this against the data).
In models_2025.csv a release month is blank where it is not known (an alias such as chatgpt-4o-latest moves), and the
anonymous models say so, weights "unknown".
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

COLUMNS = ("model", "organisation", "weights", "released", "on_board_since")
WEIGHTS = ("open", "proprietary", "unknown")
RELEASED = re.compile(r"20\d\d-(0[1-9]|1[0-2])")


@dataclass(frozen=True)
class ModelInfo:
    model: str
    organisation: str
    weights: str  # "open", "proprietary" or "unknown" (an anonymous model)
    released: str  # YYYY-MM, or blank where it is not known
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
        if info.weights not in WEIGHTS:
            raise ValueError(f"{where}:{line}: weights: expected one of {', '.join(WEIGHTS)}, got {info.weights!r}")
        if info.released and not RELEASED.fullmatch(info.released):
            raise ValueError(f"{where}:{line}: released: expected YYYY-MM or blank, got {info.released!r}")
        out[info.model] = info
    return out


@lru_cache(maxsize=2)
def _read(name: str) -> dict[str, ModelInfo]:
    return parse_catalog((resources.files("usl_space") / name).read_text(encoding="utf-8"), name)


@lru_cache(maxsize=1)
def catalog() -> dict[str, ModelInfo]:
    """Every model the project knows, by name: the default board's (models.csv, in its order), then the 2025
    benches' (models_2025.csv)."""
    return {**_read("models.csv"), **_read("models_2025.csv")}


def default_models() -> list[str]:
    """The default board's models (the baseline gpt4_1106_preview among them): models.csv only."""
    return list(_read("models.csv"))


# what the shared benches' prompts are (../shared/data/usl/*), as the bench picker and `usl-data build` name them
KNOWN_BENCHES = {
    "alpaca_eval": "everyday instructions (AlpacaEval)",
    "mt_bench": "questions over eight skills (MT-bench, first turns)",
    "creative": "creative-writing prompts, ~1,000-word answers",
    "speechmap": "requests to criticise governments, in English, Finnish and Chinese (SpeechMap)",
}


def model_facts(models: list[str]) -> dict[str, dict[str, str]]:
    """Each model's organisation, weights and release month from the catalog, for a bench's manifest; blank where
    the catalog does not list the model (the anonymous models say so there)."""
    known = catalog()
    blank = {"organisation": "", "weights": "", "released": ""}
    return {m: ({"organisation": known[m].organisation, "weights": known[m].weights, "released": known[m].released}
                if m in known else dict(blank)) for m in models}  # fmt: skip
