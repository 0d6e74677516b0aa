"""How far two orderings of the same items agree: the one Kendall tau every report, benchmark and the app's Compare
tab use (boards against published scores, against each other, against another baseline)."""

from __future__ import annotations

import numpy as np


def kendall_tau(x: np.ndarray | list[float], y: np.ndarray | list[float]) -> float:
    """Kendall's tau-b between two scorings of the same items (ties handled; NaN if either is constant)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"rankings differ in length: {x.shape} vs {y.shape}")
    i, j = np.triu_indices(len(x), k=1)
    dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    concordant_minus_discordant = float((dx * dy).sum())
    pairs_x, pairs_y = float((dx != 0).sum()), float((dy != 0).sum())
    if pairs_x == 0 or pairs_y == 0:
        return float("nan")
    return concordant_minus_discordant / np.sqrt(pairs_x * pairs_y)
