"""From validated preference pairs to tokenised training examples, re-drawn every epoch.

Per epoch, from a generator seeded by (seed, epoch) and identical on every process: the direction (original,
or reverse = the loser's criteria with the label flipped, for pairs that carry ``loser_criteria``), criteria
noise, position swap (each pair also as (B, A), label flipped), and how many copies of each pair its source's
weight asks for (each copy draws its own direction and noise). Ties become label 2 for a 3-way head or are
dropped (and counted). Inputs longer than max_length are cut by the prompt budget, never dropped, and counted.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

import polars as pl
import torch
from crm_core.cross_encoder.model import length_feature, pad_batch
from crm_core.cross_encoder.prompts import PromptBudgetError, PromptBuilder
from crm_core.data import load_pairs, rejected_problems, report_rejected
from crm_core.spec import pair_context

from crm_train.cross_encoder.config import TrainConfig
from crm_train.cross_encoder.noise import apply_noise

LABEL_OF = {"model_a": 0, "model_b": 1, "tie": 2}


@dataclass
class Example:
    """One judgement to learn: label 0 = first response preferred, 1 = second, 2 = tie."""

    criteria: list[str]
    context: str | list[dict]
    first: str
    second: str
    label: int
    source: str
    pair_id: str = ""


def read_pairs(files: list[str], log, skip_invalid: bool = False) -> pl.DataFrame:
    """Validated pairs from every file. Each rejected row is printed on stderr (file:line: field: reason) and
    stops the run unless `skip_invalid`, which skips them and says how many; an empty file is an error."""
    frames = []
    for path in files:
        frame, rejected = load_pairs(path, on_error="collect")
        report_rejected(rejected_problems(rejected), "crm-train", skip_invalid)
        if rejected.height:
            reasons = dict(Counter(rejected["reason"].to_list()).most_common(3))
            log(f"{path}: skipped {rejected.height} invalid row(s): {reasons}")
        if frame.height == 0:
            raise ValueError(f"{path}: no valid preference pairs")
        frames.append(frame.with_columns(pl.col("source").fill_null(path)))
    if not frames:
        raise ValueError("no training data: set train_files")
    return pl.concat(frames)


def split_by_prompt(frame: pl.DataFrame, fraction: float, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Hold out `fraction` of the distinct prompts: no prompt is in both splits."""

    def held_out(prompt: str) -> bool:
        digest = hashlib.sha256(f"{seed}\x00{prompt}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < fraction

    mask = frame["prompt"].map_elements(held_out, return_dtype=pl.Boolean)
    return frame.filter(~mask), frame.filter(mask)


def _loser_criteria(row: dict[str, Any]) -> list[str]:
    extra = json.loads(row["extra"]) if row["extra"] else {}
    value = extra.get("loser_criteria") or []
    return [c for c in value if isinstance(c, str) and c.strip()]


def build_examples(
    frame: pl.DataFrame, config: TrainConfig, epoch: int, pool: list[str], train: bool = True
) -> tuple[list[Example], Counter]:
    """This epoch's examples. Validation (`train=False`) gets no noise, no reversal and no swap."""
    rng = random.Random(f"{config.seed}-{epoch}")
    stats: Counter = Counter()
    examples = []
    for row in frame.iter_rows(named=True):
        copies = _copies(config.source_weights.get(row["source"] or "", 1.0), rng) if train else 1
        if copies == 0:
            stats["left_out"] += 1
        elif copies > 1:
            stats["repeated"] += copies - 1
        for _ in range(copies):
            examples += _row_examples(row, config, rng, pool, train, stats)
    stats["examples"] = len(examples)
    return examples, stats


def _copies(weight: float, rng: random.Random) -> int:
    """How many times a pair of this source weight is used this epoch: the whole part, plus one more with the
    fractional part's probability (expected count = weight). Whole weights draw nothing, so runs without
    source_weights see the same random stream as before the option existed."""
    whole = int(weight)
    if weight == whole:
        return whole
    return whole + (rng.random() < weight - whole)


def _row_examples(
    row: dict[str, Any], config: TrainConfig, rng: random.Random, pool: list[str], train: bool, stats: Counter
) -> list[Example]:
    """One pair's examples: its (possibly reversed, noised) judgement, and for pairwise training its swap."""
    label = LABEL_OF[row["preference"]]
    if label == 2 and not config.ties:
        stats["ties_dropped"] += 1
        return []
    criteria = list(row["criteria"])
    if train:
        loser = _loser_criteria(row)
        reverse = config.direction == "reverse" or (config.direction == "random" and rng.random() < 0.5)
        if reverse and loser and label != 2:
            criteria, label = loser, 1 - label
            stats["reversed"] += 1
        if config.noise != "none" and rng.random() < config.noise_probability:
            criteria, kind = apply_noise(config.noise, criteria, rng, pool, loser, config.remove_keep)
            stats[f"noise_{kind}"] += 1
    a, b = row["model_a"][-1]["content"], row["model_b"][-1]["content"]
    example = Example(criteria, pair_context(row), a, b, label, row["source"] or "", row["id"])
    if not (train and config.position_swap and config.objective == "pairwise"):  # pointwise: no order to swap
        return [example]
    stats["swapped"] += 1
    swapped_label = {0: 1, 1: 0, 2: 2}[label]
    return [example, Example(criteria, example.context, b, a, swapped_label, example.source, row["id"])]


def encode_examples(examples: list[Example], builder: PromptBuilder, objective: str) -> tuple[list[dict], int]:
    """Token ids per example (pointwise: the preferred and the other response separately); returns how many
    inputs the budget had to cut."""
    encoded, cut = [], 0
    for ex in examples:
        try:
            item, was_cut = _encode(ex, builder, objective)
        except PromptBudgetError as error:
            raise PromptBudgetError(f"pair {ex.pair_id!r} ({ex.source}): {error}") from None
        encoded.append(item)
        cut += was_cut
    return encoded, cut


def _encode(ex: Example, builder: PromptBuilder, objective: str) -> tuple[dict, bool]:
    if objective == "pairwise":
        e = builder.pair(ex.criteria, ex.context, ex.first, ex.second)
        return {"inputs": [e], "label": ex.label}, bool(e.cut)
    winner, loser = (ex.first, ex.second) if ex.label == 0 else (ex.second, ex.first)
    pair = [builder.point(ex.criteria, ex.context, winner), builder.point(ex.criteria, ex.context, loser)]
    return {"inputs": pair, "label": 0}, any(p.cut for p in pair)


def collate(batch: list[dict], pad_id: int) -> dict[str, torch.Tensor]:
    """Pad to the longest input in the batch. Pointwise batches hold winners first, then losers."""
    inputs = [item["inputs"][0] for item in batch] + [item["inputs"][1] for item in batch if len(item["inputs"]) > 1]
    out = {name: torch.from_numpy(array) for name, array in pad_batch(inputs, pad_id).items()}
    out["labels"] = torch.tensor([item["label"] for item in batch])
    if len(inputs) > len(batch):  # pointwise: the length feature of every input, for a length-slope head
        out["length_feature"] = torch.tensor([length_feature(e.words[0]) for e in inputs], dtype=torch.float32)
    return out
