"""Metrics of a CRM on labelled pairs. Labels: 0 = A preferred, 1 = B preferred (ties are scored apart).
Plain functions over arrays, so each number can be checked by hand."""

from __future__ import annotations

import numpy as np


def accuracy(p_a: np.ndarray, labels: np.ndarray) -> float:
    """Share of pairs whose predicted winner (A when P(A) > 0.5) is the labelled one. P(A) = 0.5 counts half."""
    credit = np.where(p_a == 0.5, 0.5, ((p_a > 0.5) == (labels == 0)).astype(float))
    return float(credit.mean()) if len(labels) else float("nan")


def expected_calibration_error(p_a: np.ndarray, labels: np.ndarray, bins: int = 10) -> float:
    """Mean |accuracy - confidence| over equal-width confidence bins on [0.5, 1], weighted by bin size;
    confidence = max(P(A), P(B))."""
    if not len(labels):
        return float("nan")
    confidence = np.maximum(p_a, 1 - p_a)
    correct = (p_a > 0.5) == (labels == 0)
    edges = np.linspace(0.5, 1.0, bins + 1)
    which = np.clip(np.digitize(confidence, edges[1:-1], right=True), 0, bins - 1)
    error = 0.0
    for b in range(bins):
        members = which == b
        if members.any():
            error += members.mean() * abs(correct[members].mean() - confidence[members].mean())
    return float(error)


def longer_wins_accuracy(length_a: np.ndarray, length_b: np.ndarray, labels: np.ndarray) -> float:
    """The baseline that always prefers the longer response (equal lengths: half credit)."""
    p_a = np.where(length_a > length_b, 1.0, np.where(length_a < length_b, 0.0, 0.5))
    return accuracy(p_a, labels)


def random_accuracy(labels: np.ndarray, seed: int = 0) -> float:
    """The baseline that flips a fair, seeded coin per pair (its expectation is 0.5)."""
    return accuracy(np.random.default_rng(seed).integers(0, 2, len(labels)).astype(float), labels)


def flip_consistency(p_a: np.ndarray, labels: np.ndarray, groups: list[str | None]) -> dict[str, float | int]:
    """Over groups of rows that judge the same two responses under different criteria (with different
    winners): the share of groups judged right in every row. Rows without a group are ignored."""
    correct = (p_a > 0.5) == (labels == 0)
    by_group: dict[str, list[bool]] = {}
    for group, right in zip(groups, correct, strict=True):
        if group is not None:
            by_group.setdefault(group, []).append(bool(right))
    flipping = [rows for rows in by_group.values() if len(rows) >= 2]
    both = [all(rows) for rows in flipping]
    return {"groups": len(flipping), "flip_accuracy": float(np.mean(both)) if both else float("nan")}
