"""A quality term that carries to any bench: the reference panel replaced by a leave-one-out consensus.

The shipped quality term adds to its network's score how close an answer comes to the answers of a fixed panel of
eight AlpacaEval models (embedding cosine, TF-IDF cosine, relative length; crm_core.compositional.reference). No
other bench has those models, so off AlpacaEval the term loses the signal that made it work (MT-bench: tau 0.385
against the published scores, NullModel first). Here the panel is every real model of the bench other than the
answer's own (a leave-one-out consensus: no model named, none favoured by construction), computed exactly and fast
with sums (the mean cosine to the others is the answer's vector dotted with the sum of the others' unit vectors,
over their number). General boards only (no criteria), win rate = mean P(preferred to the baseline) as the engine
counts it; variants:

- `network`: the quality network alone (no reference signal);
- `panel`: the shipped fixed panel (AlpacaEval only: what is served now);
- `consensus`: the shipped weights over the consensus signals; `consensus xK`: the reference part scaled by K.
- `self-chosen top S xK`: a panel the bench chooses itself, the top share S of its real models on a first board
  (win rates over the baseline, the baseline in the panel), twice over (seventh session);
- `own panel top S x0.5, R round(s)`: as served since the fourteenth session (usl_space.instant.own_panel,
  ServingConfig.panel_share): the first board is the served one (every entry in the consensus, junk included),
  models ranked by their mean quality above each query's mean, every entry eligible, chosen R times;
- `own panel by beats|sigmoid top S x0.5`: the same with another score for a model (`own_panel_by`): the mean share of
  its query's other answers it beats (a Borda count, so one outlying query weighs no more than another), or its mean
  P(preferred) against each (twenty-sixth session; `--scales 0.5 --output
  training/experiments/results/consensus_reference_panel_scores.json`: not served, docs/experiments.md).

Choices are made on AlpacaEval's training half (development; tau vs the published length-controlled win rates);
MT-bench (tau vs the published MT-bench scores, which never choose anything) and the junk entries of
benchmarks/bench_boards.py are reported as held-out checks.

    USL_EMBEDDINGS=data/embeddings uv run python training/experiments/consensus_reference.py \\
        --output training/experiments/results/consensus_reference.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))


def sparse_sum(vectors: list[dict[str, float]]) -> Counter:
    total: Counter = Counter()
    for v in vectors:
        total.update(v)
    return total


def consensus_signals(groups: dict[int, list[int]], panel_rows: dict[int, list[int]], vecs: np.ndarray,
                      lex: list[dict[str, float]], words: np.ndarray) -> tuple[np.ndarray, ...]:  # fmt: skip
    """Per row: mean embedding cosine, mean TF-IDF cosine and mean tanh(log2 length ratio) to the panel rows of its
    query other than itself."""
    n = len(vecs)
    refsim, lexsim, rel = np.zeros(n), np.zeros(n), np.zeros(n)
    for idx, rows in groups.items():
        panel = panel_rows.get(idx, [])
        if not panel:
            continue
        in_panel = set(panel)
        vec_sum = vecs[panel].sum(axis=0)
        lex_sum = sparse_sum([lex[p] for p in panel])
        panel_words = words[panel]
        for r in rows:
            own = r in in_panel
            others = len(panel) - own
            if others <= 0:
                continue
            refsim[r] = (vecs[r] @ vec_sum - (vecs[r] @ vecs[r] if own else 0.0)) / others
            dot = sum(v * lex_sum.get(w, 0.0) for w, v in lex[r].items())
            lexsim[r] = (dot - (1.0 if own and lex[r] else 0.0)) / others
            ratios = np.tanh(np.log2((words[r] + 1) / (panel_words + 1)))
            rel[r] = ratios.sum() / others  # its own ratio, if in the panel, is tanh(0) = 0
    return refsim, lexsim, rel


def general_board(quality: np.ndarray, keys: list[tuple[int, str]], baseline: str) -> dict[str, float]:
    """Each model's mean P(preferred to the baseline) over the queries both answered (no criteria: the sigmoid of
    the quality gap)."""
    base = {i: quality[r] for r, (i, m) in enumerate(keys) if m == baseline}
    total: dict[str, list[float]] = {}
    for r, (i, m) in enumerate(keys):
        if m != baseline and i in base:
            total.setdefault(m, []).append(1 / (1 + math.exp(-(quality[r] - base[i]))))
    return {m: float(np.mean(v)) for m, v in total.items()}


def own_panel_by(quality: np.ndarray, keys: list[tuple[int, str]], share: float, how: str) -> list[str]:
    """The own panel with another score for a model than its mean quality above its query's mean: `beats`, the
    mean share of the query's other answers its answer scores above (a Borda count: one outlying query weighs no
    more than any other), or `sigmoid`, the mean P(preferred) against each other answer to the query. Neither names
    a model. Both average 0.5 over a query's answers, so usl_space.instant.own_panel ranks the per-answer scores."""
    from usl_space.instant import own_panel

    per_answer = np.full(len(keys), 0.5)
    idx = np.array([i for i, _ in keys])
    for query in np.unique(idx):
        rows = np.flatnonzero(idx == query)
        if len(rows) < 2:
            continue
        diff = quality[rows][:, None] - quality[rows][None, :]
        if how == "beats":
            won = (diff > 0).sum(axis=1) + 0.5 * ((diff == 0).sum(axis=1) - 1)
        elif how == "sigmoid":
            won = (1 / (1 + np.exp(-diff))).sum(axis=1) - 0.5
        else:
            raise ValueError(f"unknown panel score {how!r}")
        per_answer[rows] = won / (len(rows) - 1)
    return own_panel(per_answer, keys, share)


def self_chosen(network: np.ndarray, first: np.ndarray, keys: list[tuple[int, str]], pool: list[str], share: float,
                k: float, rounds: int, baseline: str | None, signals: tuple,
                how: str = "above") -> np.ndarray:  # fmt: skip
    """The quality term with a panel the bench chooses itself, `rounds` times, from the quality term before (`first`,
    then this one's), each answer compared with those other than its own at `k` x the reference weights. With a
    `baseline` (the seventh session's variants): the top `share` of the `pool` models by win rate over the baseline,
    and the baseline. Without: usl_space.instant.own_panel, as served."""
    from usl_space.instant import own_panel

    groups, vecs, lex, words, weights = signals
    quality = first
    for _ in range(rounds):
        if baseline:
            board = general_board(quality, keys, baseline)
            ranked = sorted((m for m in board if m in pool), key=lambda m: -board[m])
            chosen = set(ranked[: max(2, round(share * len(ranked)))]) | {baseline}
        elif how == "above":
            chosen = set(own_panel(quality, keys, share))
        else:
            chosen = set(own_panel_by(quality, keys, share, how))
        top_rows = {i: [r for r in rows if keys[r][1] in chosen] for i, rows in groups.items()}
        t_ref, t_lex, t_rel = consensus_signals(groups, top_rows, vecs, lex, words)
        reference = (
            weights["refsim_weight"] * t_ref + weights["lexsim_weight"] * t_lex + weights["length_weight"] * t_rel
        )
        quality = network + k * reference
    return quality


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=REPO / "space/models/crm-compositional", help="the CRM")
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument("--embeddings", default=str(REPO / "data/embeddings"), help="the embedding store")
    parser.add_argument("--scales", default="0.5,1,2,3", help="reference-part scales K to try (consensus xK)")
    parser.add_argument("--output", type=Path, help="write the results here (JSON)")
    args = parser.parse_args(argv)
    from bench_boards import BASELINES, JUNK, junk_entries, mt_bench_scores, null_model_text
    from crm_core.agreement import kendall_tau
    from crm_core.compositional.reference import words as word_tokens
    from crm_core.data import open_bench
    from crm_train.compositional import sources as S
    from crm_train.compositional.evaluate import Judge, published_lc
    from usl_space.catalog import default_models

    judge = Judge(args.model, args.embeddings, backend="onnx")
    weights = judge.heads.reference_weights
    idf = judge.scorer.idf
    null_text = null_model_text(args.shared)
    lc = published_lc(args.shared)
    mt = mt_bench_scores(args.shared)
    instructions = S.alpaca_instructions(args.shared)
    dev_ids = {i for i, t in instructions.items() if S.alpaca_train_half(t)}
    benches = {
        "alpaca_eval (development: training half)": (
            junk_entries(open_bench(args.shared / "usl/alpaca_eval", models=default_models(),
                                    baseline=BASELINES["alpaca_eval"]), null_text), dev_ids, lc),
        "mt_bench (held out)": (junk_entries(open_bench(args.shared / "usl/mt_bench"), null_text), None, mt),
    }  # fmt: skip
    scales = [float(s) for s in args.scales.split(",")]
    report: dict = {"weights": weights, "benches": {}}
    for name, (bench, ids, labels) in benches.items():
        outputs = bench.outputs()
        query = bench.instructions()
        keys = sorted(k for k in outputs if (ids is None or k[0] in ids) and outputs[k].strip())
        texts = [outputs[k] for k in keys]
        side = judge.side([query[i] for i, _ in keys], texts)  # the network alone: no panel
        vecs = judge.features.embed(texts)
        lex = [idf.vector(t) for t in texts]
        words = np.array([len(word_tokens(t)) for t in texts], dtype=np.float64)
        groups: dict[int, list[int]] = {}
        for r, (i, _) in enumerate(keys):
            groups.setdefault(i, []).append(r)
        real = [m for m in bench.models if m not in JUNK]
        panel_rows = {i: [r for r in rows if keys[r][1] in real] for i, rows in groups.items()}
        refsim, lexsim, rel = consensus_signals(groups, panel_rows, vecs, lex, words)
        reference = (weights["refsim_weight"] * refsim + weights["lexsim_weight"] * lexsim
                     + weights["length_weight"] * rel)  # fmt: skip
        every_rows = {i: rows for i, rows in groups.items()}  # the bench as served: junk entries in the panel too
        e_ref, e_lex, e_rel = consensus_signals(groups, every_rows, vecs, lex, words)
        every = weights["refsim_weight"] * e_ref + weights["lexsim_weight"] * e_lex + weights["length_weight"] * e_rel
        variants = {"network": side.quality.copy(), "consensus of every entry x0.5": side.quality + 0.5 * every}
        if "alpaca" in name:
            panel = judge.scorer.reference_models
            shipped = judge.side([query[i] for i, _ in keys], texts,
                                 [[outputs[(i, p)] for p in panel if (i, p) in outputs] for i, _ in keys])  # fmt: skip
            variants["panel (shipped)"] = shipped.quality
        for k in scales:
            variants[f"consensus x{k:g}"] = side.quality + k * reference
        # a panel the bench chooses itself: the top share of real models on a first board (network + consensus
        # x0.5), each answer compared with those other than its own; repeated `rounds` times
        signals = (groups, vecs, lex, words, weights)
        for share in (0.33, 0.5):
            for k in (0.5, 1.0):
                variants[f"self-chosen top {share:g} x{k:g}"] = self_chosen(
                    side.quality, side.quality + 0.5 * reference, keys, real, share, k, 2, bench.baseline, signals
                )
        # as served (usl_space.instant.own_panel): the first board is the served one (the consensus of every entry,
        # junk included), models ranked by their mean quality above each query's mean (no baseline), every entry
        # eligible, the panel chosen `rounds` times
        for share in (0.33, 0.5, 0.67):
            for rounds in (1, 2):
                variants[f"own panel top {share:g} x0.5, {rounds} round(s)"] = self_chosen(
                    side.quality, side.quality + 0.5 * every, keys, [], share, 0.5, rounds, None, signals
                )
        for how in ("beats", "sigmoid"):
            for share in (0.33, 0.5):
                variants[f"own panel by {how} top {share:g} x0.5"] = self_chosen(
                    side.quality, side.quality + 0.5 * every, keys, [], share, 0.5, 1, None, signals, how
                )
        for only, signal, w in (("refsim", refsim, "refsim_weight"), ("lexsim", lexsim, "lexsim_weight")):
            variants[f"consensus, {only} only"] = side.quality + weights[w] * signal
        rows = {}
        for variant, quality in variants.items():
            board = general_board(quality, keys, bench.baseline)
            order = sorted(board, key=lambda m: -board[m])
            judged = [m for m in board if m in labels and m not in JUNK]
            real_order = [m for m in order if m not in JUNK]
            lowest_real = max(order.index(m) for m in real_order)
            rows[variant] = {
                "tau": round(kendall_tau([board[m] for m in judged], [labels[m] for m in judged]), 3),
                "models": len(judged),
                "junk_above_a_real_model": [m for m in JUNK if order.index(m) < lowest_real],
                "junk_ranks_from_top": {m: order.index(m) + 1 for m in JUNK},
                "top5": real_order[:5],
            }
            print(
                f"{name:45s} {variant:28s} tau {rows[variant]['tau']:6.3f}  junk above a real model: "
                f"{len(rows[variant]['junk_above_a_real_model'])}/5  top: {', '.join(real_order[:3])}",
                flush=True,
            )
        report["benches"][name] = rows
    if args.output:
        args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
