"""Shared fixtures: small data the tests write themselves, and the real ../shared/data when it is there."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    """../shared/data beside the checkout, or $USL_SHARED_DATA."""
    return Path(os.environ.get("USL_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture
def shared_data() -> Path:
    path = shared_data_dir()
    if not (path / "usl").is_dir():
        pytest.skip(f"real data folder {path} is absent (set USL_SHARED_DATA to point at shared/data)")
    return path


def write_jsonl(path: Path, records: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as handle:
        for record in records:
            handle.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
    return path


INSTRUCTIONS = [f"Question number {i}: explain topic {i}." for i in range(6)]
MODELS = {"base": "Baseline answer", "alpha": "Alpha says", "beta": "Beta replies"}


def model_items(model: str, skip: tuple[int, ...] = ()) -> list[dict]:
    return [
        {"instruction": text, "output": f"{MODELS[model]} {i}", "generator": model}
        for i, text in enumerate(INSTRUCTIONS)
        if i not in skip
    ]


@pytest.fixture
def per_model_dir(tmp_path: Path) -> Path:
    """AlpacaEval's upstream layout: <model>/model_outputs.json; beta misses query 5."""
    root = tmp_path / "per_model"
    for model in MODELS:
        folder = root / model
        folder.mkdir(parents=True)
        items = model_items(model, skip=(5,) if model == "beta" else ())
        (folder / "model_outputs.json").write_text(json.dumps(items))
    return root


@pytest.fixture
def combined_dir(tmp_path: Path) -> Path:
    """The combined layout of ../shared/data/usl/alpaca_eval."""
    root = tmp_path / "combined"
    write_jsonl(
        root / "instructions.jsonl",
        [{"idx": i, "dataset": "toy", "instruction": t} for i, t in enumerate(INSTRUCTIONS)],
    )
    rows = [
        {"model": m, "idx": i, "generator": m, "output": f"{MODELS[m]} {i}"}
        for m in MODELS
        for i in range(len(INSTRUCTIONS))
    ]
    write_jsonl(root / "model_outputs.jsonl.gz", rows)
    return root


def pair(i: int = 0, **overrides) -> dict:
    record = {
        "id": f"p{i}",
        "prompt": f"Prompt {i}",
        "model_a": [{"role": "user", "content": f"Prompt {i}"}, {"role": "assistant", "content": "A answer"}],
        "model_b": [{"role": "user", "content": f"Prompt {i}"}, {"role": "assistant", "content": "B answer"}],
        "criteria": ["prefer concise answers"],
        "preference": "model_a",
    }
    record.update(overrides)
    return {k: v for k, v in record.items() if v is not ...}
