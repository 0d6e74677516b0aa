"""Criteria noise (after the paper): teach the CRM to rely on criteria that are really there.

Each function takes the pair's criteria and a seeded `random.Random` and returns new criteria; none changes the
label. `remove` keeps each criterion with probability `keep` (the winner is still the winner under fewer
criteria); `add` appends criteria of unrelated pairs (irrelevant criteria must not move the verdict); `replace`
swaps a minority of the criteria for the loser's or unrelated ones, so most still point to the winner. The
label-flipping use of the loser's criteria is the "reverse" direction, in crm_train.cross_encoder.examples.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from pathlib import Path

NOISE_KINDS = ("remove", "add", "replace")


def remove_noise(criteria: Sequence[str], rng: random.Random, keep: float = 0.5) -> list[str]:
    """Keep each criterion with probability `keep`, in order; may leave none (general preference)."""
    return [c for c in criteria if rng.random() < keep]


def add_noise(criteria: Sequence[str], rng: random.Random, pool: Sequence[str], most: int = 2) -> list[str]:
    """Append 1..`most` criteria drawn from `pool` that the pair does not already have, at random positions."""
    present = set(criteria)
    out = list(criteria)
    for _ in range(rng.randint(1, most)):
        candidate = _draw(pool, rng, present)
        if candidate is None:
            break
        out.insert(rng.randint(0, len(out)), candidate)
        present.add(candidate)
    return out


def replace_noise(
    criteria: Sequence[str], rng: random.Random, pool: Sequence[str], loser_criteria: Sequence[str] = ()
) -> list[str]:
    """Replace a minority (at least one, fewer than half) of the criteria with the loser's criteria when the
    pair has them, else with unrelated ones. With fewer than three criteria no minority exists: falls back to
    `add_noise`, which also leaves the label true."""
    if len(criteria) < 3:
        return add_noise(criteria, rng, pool)
    out = list(criteria)
    present = set(out)
    count = rng.randint(1, (len(out) - 1) // 2)
    for position in rng.sample(range(len(out)), count):
        source = [c for c in loser_criteria if c not in present] or pool
        candidate = _draw(source, rng, present)
        if candidate is not None:
            present.add(candidate)
            out[position] = candidate
    return out


def apply_noise(
    kind: str, criteria: Sequence[str], rng: random.Random, pool: Sequence[str], loser_criteria: Sequence[str] = (),
    keep: float = 0.5,
) -> tuple[list[str], str]:  # fmt: skip
    """Apply one noise `kind` ('random' picks one per call); return the criteria and the kind applied."""
    if kind == "random":
        kind = rng.choice(NOISE_KINDS)
    if kind == "remove":
        return remove_noise(criteria, rng, keep), kind
    if kind == "add":
        return add_noise(criteria, rng, pool), kind
    if kind == "replace":
        return replace_noise(criteria, rng, pool, loser_criteria), kind
    raise ValueError(f"unknown noise kind {kind!r}; expected one of {[*NOISE_KINDS, 'random']}")


def _draw(pool: Sequence[str], rng: random.Random, exclude: set[str], tries: int = 20) -> str | None:
    for _ in range(tries if pool else 0):
        candidate = pool[rng.randrange(len(pool))]
        if candidate not in exclude:
            return candidate
    return None


def read_noise_pool(path: str | os.PathLike) -> list[str]:
    """Criteria from JSON lines: a record's ``criteria`` (string or list) or ``score_rubric.criteria``
    (BiGGen rubrics)."""
    found: list[str] = []
    with open(path, encoding="utf-8") as handle:
        for line_number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            record = json.loads(line)
            value = record.get("criteria", (record.get("score_rubric") or {}).get("criteria"))
            values = value if isinstance(value, list) else [value]
            texts = [v.strip() for v in values if isinstance(v, str) and v.strip()]
            if value is not None and not texts:
                raise ValueError(f"{path}:{line_number}: criteria: expected a string or a list of strings")
            found.extend(texts)
    if not found:
        raise ValueError(f"{Path(path)}: no criteria found (expected 'criteria' or 'score_rubric.criteria' fields)")
    return found
