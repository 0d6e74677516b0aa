"""benchmarks/gpu_board.py on the CPU: length-bucketed batches cover every input once within the token budget, and
a tiny Qwen3 board run writes the figures README's GPU rows come from."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from conftest import load_script


def test_batches_cover_every_input_once_within_the_budget() -> None:
    bench = load_script("benchmarks/gpu_board.py")
    lengths = np.random.default_rng(1).integers(20, 900, 500)
    plan = bench.batches(lengths, token_budget=4096, max_batch=32)
    rows = np.concatenate(plan)
    assert sorted(rows.tolist()) == list(range(500))
    for batch in plan:
        assert len(batch) <= 32
        assert len(batch) == 1 or len(batch) * lengths[batch].max() <= 4096
    assert len(plan) < 500 / 3  # batched, not one by one


def test_tiny_board_reports_rates(tmp_path: Path) -> None:
    bench = load_script("benchmarks/gpu_board.py")
    lengths = np.random.default_rng(2).integers(30, 200, 80).astype(np.int16)
    np.savez_compressed(tmp_path / "lengths.npz", lengths=lengths, queries=40, models=1)
    out = tmp_path / "board.json"
    assert bench.main(["--lengths", str(tmp_path / "lengths.npz"), "--sizes", "tiny", "--seconds", "30",
                       "--warmup", "1", "--token-budget", "2048", "--output", str(out)]) == 0  # fmt: skip
    report = json.loads(out.read_text(encoding="utf-8"))
    (tiny,) = report["sizes"]
    assert report["board_inputs"] == 80
    assert 0 < tiny["measured_inputs"] <= 80
    assert abs(tiny["pairs_per_s"] - tiny["inputs_per_s"] / 2) <= 0.1  # a pair is both orders: two inputs
    assert abs(tiny["full_board_seconds"] - 80 / tiny["inputs_per_s"]) < 0.2
    assert 0 <= tiny["padding_share"] < 0.5  # sorted by length: little padding
