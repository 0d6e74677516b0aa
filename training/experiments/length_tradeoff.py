"""How far can ANY reading of "detailed" vs "concise" reverse the leaderboard, and what does it cost the top of the
concise board? A diagnostic for two targets that pull apart: Kendall tau <= -0.90 between the detailed and concise
boards (issue "CRM v2") and "the top of the concise board is concise AND good" (issue "general quality").

It skips the criteria reader altogether: an oracle criteria side puts weight +s (detailed) or -s (concise) on the
words property and nothing else, for a grid of s, and ranks all 805 AlpacaEval queries x 40 default models as the
app does (weighted win rate: mean P(preferred to the baseline's answer); PyTorch vectors, from the embedding store
when $USL_EMBEDDINGS names one, where the Space reads int8 ones). Two quality terms under it:

- shipped: the shipped CRM's quality term, reference-guided signals included (the baseline's answers are also the
  reference answers, so the baseline answer is judged against itself);
- without reference: the same term with its reference-guided part (embedding and word similarity to the reference
  answer, length relative to it) left out: the network alone.

For each, the tau between the two boards and the general rank (no criteria, same quality term, the baseline
counted) of the concise board's top five judged models (the baseline, 0.5 by construction, is left out of both),
and how far behind the baseline's answer the other answers start. The shipped reader's own words weight for
"Prefer short, concise answers." is recorded beside.

    USL_EMBEDDINGS=data/embeddings uv run python training/experiments/length_tradeoff.py \\
        --data ../shared/data/usl/alpaca_eval --output training/experiments/results/length_tradeoff.json \\
        --plot docs/length_tradeoff.png
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

SCALES = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 24.0, 48.0)


def win_rates(score: np.ndarray, rows: np.ndarray, baseline_column: int) -> np.ndarray:
    """Weighted win rate of every model (mean over queries of P(preferred to the baseline's answer)) from one score
    per response; `rows` (queries x models) indexes `score`, -1 where a model has no answer."""
    from usl_space.board import pointwise_matrices

    scores = np.where(rows >= 0, score[np.maximum(rows, 0)], np.nan)
    _, preference = pointwise_matrices(scores, baseline_column)
    return np.nanmean(preference, axis=0)


def tradeoff(quality: np.ndarray, words: np.ndarray, rows: np.ndarray, models: Sequence[str], baseline: str,
             scales: Sequence[float] = SCALES, top: int = 5) -> list[dict]:  # fmt: skip
    """For each weight s: tau between the boards under +s and -s on `words`, and the concise board's top `top` with
    their general ranks (under `quality` alone, baseline counted). The baseline is left out of both: it is 0.5 on
    every board by construction, judged against itself."""
    from crm_core.agreement import kendall_tau

    j_base = list(models).index(baseline)
    others = [j for j in range(len(models)) if j != j_base]
    general = win_rates(quality, rows, j_base)
    general_rank = {models[j]: r + 1 for r, j in enumerate(np.argsort(-general, kind="stable"))}
    out = []
    for s in scales:
        detailed = win_rates(quality + s * words, rows, j_base)
        concise = win_rates(quality - s * words, rows, j_base)
        tau = kendall_tau(detailed[others], concise[others])
        best = [models[j] for j in np.argsort(-concise, kind="stable") if j != j_base][:top]
        out.append({"scale": s, "tau": round(float(tau), 3),
                    "concise_top": [{"model": m, "general_rank": general_rank[m]} for m in best]})  # fmt: skip
    return out


def gap_to_baseline(quality: np.ndarray, rows: np.ndarray, baseline_column: int) -> dict[str, float]:
    """Percentiles of quality(answer) - quality(baseline's answer to the same query) over the judged answers: how far
    behind every answer starts before any criterion weighs in."""
    present = (rows >= 0) & (rows[:, [baseline_column]] >= 0)
    present[:, baseline_column] = False
    gap = quality[rows] - quality[rows[:, [baseline_column]]]
    return {f"p{q}": round(float(np.percentile(gap[present], q)), 3) for q in (5, 25, 50, 75, 95)}


def plot(curves: dict[str, list[dict]], shipped_scale: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for name, points in curves.items():
        x = [p["scale"] for p in points]
        left.plot(x, [p["tau"] for p in points], marker="o", label=name)
        right.plot(x, [p["concise_top"][0]["general_rank"] for p in points], marker="o", label=name)
    for axis in (left, right):
        axis.set_xscale("log")
        axis.axvline(shipped_scale, color="grey", linestyle=":", label="shipped reading of 'concise'")
        axis.set_xlabel("words weight s (per spread), oracle reading")
    left.axhline(-0.9, color="red", linestyle="--", label="target tau -0.90")
    left.set_ylabel("Kendall tau, detailed vs concise board")
    right.set_ylabel("general rank of the concise #1 (of 40)")
    right.invert_yaxis()
    left.legend(fontsize=7)
    right.legend(fontsize=7)
    fig.suptitle("Length criteria read perfectly: 805 AlpacaEval queries x 40 models", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="the AlpacaEval folder (its default_models.txt is the board)")
    parser.add_argument("--model", help="compositional CRM folder (default: the shipped one)")
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    parser.add_argument("--plot", type=Path, help="write the two curves here (PNG)")
    args = parser.parse_args(argv)
    from crm_core.compositional.scorer import CompositionalScorer
    from crm_core.properties import NAMES
    from emit import emit
    from usl_space.loading import default_crm, open_data

    bench = open_data(args.data)
    scorer = CompositionalScorer(args.model or default_crm(), backend="torch")
    query = dict(zip(bench.queries["idx"].to_list(), bench.queries["instruction"].to_list(), strict=True))
    pairs = zip(bench.responses["idx"].to_list(), bench.responses["model"].to_list(), strict=True)
    output = dict(zip(pairs, bench.responses["output"].to_list(), strict=True))
    keys = sorted(output)
    queries, responses = [query[i] for i, _ in keys], [output[k] for k in keys]
    references = [output.get((i, scorer.reference_model)) for i, _ in keys]
    with_reference = scorer.response_side(queries, responses, references, progress=True)
    without_reference = scorer.response_side(queries, responses, None)
    models = sorted({m for _, m in keys})
    ids = sorted(query)
    row_of = {k: r for r, k in enumerate(keys)}
    rows = np.array([[row_of.get((i, m), -1) for m in models] for i in ids], dtype=np.int64)
    words = with_reference.z[:, NAMES.index("words")].astype(np.float64)
    concise = scorer.criteria_side(["Prefer short, concise answers."]).weights[NAMES.index("words")]
    terms = {"shipped quality (reference-guided)": with_reference.quality,
             "quality without its reference part": without_reference.quality}  # fmt: skip
    curves = {name: tradeoff(quality, words, rows, models, bench.baseline) for name, quality in terms.items()}
    j_base = models.index(bench.baseline)
    gaps = {name: gap_to_baseline(quality, rows, j_base) for name, quality in terms.items()}
    result = {"bench": bench.name, "queries": len(ids), "models": len(models), "baseline": bench.baseline,
              "reference_model": scorer.reference_model, "shipped_concise_words_weight": round(float(concise), 3),
              "quality_gap_to_baseline": gaps, "curves": curves}  # fmt: skip
    emit(result, args.output)
    if args.plot:
        plot(curves, abs(float(concise)), args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
