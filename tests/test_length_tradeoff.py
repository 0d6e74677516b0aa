"""training/experiments/length_tradeoff.py: its boards must be the app's weighted win rates, a length-only judge
must reverse the board exactly, and a quality gap to the baseline that the length weight cannot overcome must keep
it from doing so (the effect the benchmark measures on the real bench)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "training" / "experiments"))

from length_tradeoff import gap_to_baseline, tradeoff, win_rates  # noqa: E402

MODELS = ["base", "a", "b", "c", "d", "e"]


def _bench(queries: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Words (per response) and the row table (queries x models) of a random bench, every answer present."""
    rng = np.random.default_rng(seed)
    offsets = np.array([0.0, -1.0, -0.5, 0.5, 1.0, 1.5])  # the baseline in the middle, "a" the shortest
    words = rng.normal(size=queries * len(MODELS)) + np.tile(offsets, queries)
    rows = np.arange(queries * len(MODELS)).reshape(queries, len(MODELS))
    return words, rows


def test_win_rates_are_the_mean_probability_of_beating_the_baseline_answer():
    score = np.array([0.0, 1.0, -1.0, 2.0, 0.5, -0.5])  # two queries, three models, the baseline first
    rows = np.array([[0, 1, 2], [3, 4, -1]])  # the third model has no answer to the second query
    got = win_rates(score, rows, baseline_column=0)

    def sigmoid(x: float) -> float:
        return 1 / (1 + np.exp(-x))

    expected = [0.5, (sigmoid(1.0) + sigmoid(0.5 - 2.0)) / 2, sigmoid(-1.0)]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_a_length_only_judge_reverses_the_board():
    words, rows = _bench()
    points = tradeoff(np.zeros_like(words), words, rows, MODELS, "base", scales=(0.5, 4.0))
    assert [p["tau"] for p in points] == [-1.0, -1.0]
    assert points[0]["concise_top"][0]["model"] == "a"  # the shortest on average wins "concise"


def test_a_baseline_far_ahead_in_quality_keeps_the_boards_alike_until_length_outweighs_it():
    words, rows = _bench()
    quality = np.tile(np.array([6.0, 3.0, 2.5, 2.0, 1.5, 1.0]), len(rows))  # the baseline far ahead, a > b > ...
    points = tradeoff(quality, words, rows, MODELS, "base", scales=(0.1, 1e4))
    assert points[0]["tau"] > 0.5  # quality still orders both boards
    assert points[1]["tau"] < -0.9  # a huge length weight reverses them
    assert points[0]["concise_top"][0] == {"model": "a", "general_rank": 2}  # the baseline is never listed


def test_the_gap_to_the_baseline_counts_only_other_models_answers_to_the_same_query():
    quality = np.array([5.0, 1.0, 2.0, 3.0, 0.0, -1.0])
    rows = np.array([[0, 1, 2], [3, 4, -1]])  # query 2: the baseline scores 3, one answer 0, one missing
    gaps = gap_to_baseline(quality, rows, baseline_column=0)
    np.testing.assert_allclose(gaps["p50"], -3.0)  # gaps -4, -3, -3
    np.testing.assert_allclose([gaps["p5"], gaps["p95"]], [-3.9, -3.0])
