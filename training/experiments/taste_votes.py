"""Teach it with a few votes: simulated visitors on the full default bench (805 queries x 40 models).

Each simulated visitor has a hidden true taste: two or three measured properties they care about (signed weights
of 1-3 spreads) plus a voice of their own (a random direction of the voice space). They type a partial or vague
version of it: one validation phrasing about one of their properties, or a general sentence that names none.
Then they vote as their true taste says, with 10% of votes flipped (noise). After 0, 3, 5, 10 and 20 votes the
board of the refitted weights (usl_space.taste) is compared with the board of the true taste (Kendall tau of the
win rates); the pairs are chosen by `next_pair` or at random, side by side for the same visitor. Also timed: one
refit plus the full re-rank (CIs, Rank (UB), topics) through the engine.

    uv run python training/experiments/taste_votes.py --data ../shared/data/usl/alpaca_eval \\
        --cache-dir data/instant-cache --output training/experiments/results/taste_votes.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

TASTE_PROPERTIES = ["words", "bullets", "numbered", "headings", "bold", "code_blocks", "emoji", "question_back",
                    "caveats", "first_person", "exclamations", "summary", "greeting", "numbers"]  # fmt: skip
VAGUE = ["I want good answers.", "Help me with my work.", "Answers that suit me.", "Be useful."]
CHECKPOINTS = (0, 3, 5, 10, 20)


def main(argv: list[str] | None = None) -> int:  # noqa: C901 (an experiment script: setup, run, report)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="the bench (AlpacaEval folder or usl-data bench)")
    parser.add_argument("--model", help="compositional CRM folder (default: the shipped one)")
    parser.add_argument("--cache-dir", required=True, help="cache folder holding (or receiving) the response side")
    parser.add_argument("--visitors", type=int, default=60, help="simulated visitors (default: %(default)s)")
    parser.add_argument("--noise", type=float, default=0.1, help="share of votes flipped (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every draw (default: %(default)s)")
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    from crm_core.agreement import kendall_tau
    from crm_core.properties import NAMES
    from crm_train.compositional.phrasings import validation_bank
    from usl_space.loading import load_engine
    from usl_space.taste import features, model_means, next_pair, refit

    engine = load_engine(args.data, args.model, cache=Path(args.cache_dir) / "scores.sqlite", topics=False)
    table = engine.response_table(progress=True)
    scorer, x, quality = engine.scorer, features(table.side), table.side.quality
    models = list(engine.models)
    base = models.index(engine.baseline)
    ids = sorted(engine.query)
    rows = table.rows(ids, models)
    means = model_means(x, rows)
    others = [j for j in range(len(models)) if j != base]
    k = len(NAMES)
    phrasings = {}
    for p in validation_bank():
        phrasings.setdefault((p.prop, p.sign), []).append(p.text)

    def rates(theta: np.ndarray) -> np.ndarray:
        score = quality + x @ theta
        s = np.where(rows >= 0, score[rows], np.nan)
        with np.errstate(over="ignore"):
            pref = 1 / (1 + np.exp(-(s - s[:, [base]])))
        return np.nanmean(pref, axis=0)[others]

    rng = np.random.default_rng(args.seed)
    results = {"chosen": {c: [] for c in CHECKPOINTS}, "random": {c: [] for c in CHECKPOINTS}}
    visitors = []
    for v in range(args.visitors):
        props = rng.choice([p for p in TASTE_PROPERTIES if (p, 1) in phrasings and (p, -1) in phrasings],
                           size=int(rng.integers(2, 4)), replace=False)  # fmt: skip
        signs = rng.choice([-1, 1], size=len(props))
        w_true = np.zeros(k)
        for p, sign in zip(props, signs, strict=True):
            w_true[NAMES.index(p)] = sign * rng.uniform(1, 3)
        # from its own generator: the visitors' properties and typed sentences do not depend on the voice's rank
        # (a CRM with several criteria fits has a wider voice space), so CRMs are compared on the same visitors
        u_true = np.random.default_rng([args.seed, v]).normal(0, 1, scorer.heads.rank)
        u_true *= 0.5 / max(np.std(table.side.voice @ u_true), 1e-9)  # a voice worth half a spread
        theta_true = np.concatenate([w_true, u_true])
        truth = rates(theta_true)
        if rng.random() < 0.25:
            typed = [str(rng.choice(VAGUE))]
        else:
            typed = [str(rng.choice(phrasings[(props[0], int(signs[0]))]))]
        prior = scorer.criteria_side(typed)
        visitor = {"true_properties": {str(p): float(w_true[NAMES.index(p)]) for p in props}, "typed": typed}
        for strategy in ("chosen", "random"):
            side, cov = prior, np.eye(len(theta_true)) / 4.0
            votes_a, votes_b, outcomes, asked = [], [], [], set()
            order = list(np.argsort(-rates(np.concatenate([side.weights, side.voice]))))
            local = np.random.default_rng(args.seed * 1000 + v)
            taus = {}
            for t in range(max(CHECKPOINTS) + 1):
                if t in CHECKPOINTS:
                    current = rates(np.concatenate([side.weights, side.voice]))
                    taus[t] = kendall_tau(current, truth)
                    results[strategy][t].append(taus[t])
                if t == max(CHECKPOINTS):
                    break
                if strategy == "chosen":
                    q, a, b = next_pair(side, cov, x, quality, rows, [others[i] for i in order], asked, local,
                                        means=means)  # fmt: skip
                else:
                    while True:
                        q = int(local.integers(len(ids)))
                        a, b = (int(j) for j in local.choice(others, 2, replace=False))
                        if rows[q, a] >= 0 and rows[q, b] >= 0 and (q, a, b) not in asked:
                            break
                asked.add((q, a, b))
                ra, rb = rows[q, a], rows[q, b]
                true_diff = quality[ra] - quality[rb] + (x[ra] - x[rb]) @ theta_true
                outcome = float(true_diff > 0)
                if local.random() < args.noise:
                    outcome = 1 - outcome
                votes_a.append(ra)
                votes_b.append(rb)
                outcomes.append(outcome)
                side, cov = refit(prior, x, np.array(votes_a), np.array(votes_b), np.array(outcomes), quality)
                order = list(np.argsort(-rates(np.concatenate([side.weights, side.voice]))))
            visitor[strategy] = {str(t): round(float(tau), 4) for t, tau in taus.items()}
        visitors.append(visitor)
        print(v, visitor["typed"], visitor["chosen"], visitor["random"], flush=True)
    summary = {s: {str(t): round(float(np.median(results[s][t])), 4) for t in CHECKPOINTS} for s in results}
    random20 = summary["random"]["20"]
    reach = next((t for t in CHECKPOINTS if summary["chosen"][str(t)] >= random20), None)
    timings = []
    for trial in range(10):  # one refit on 10 votes, then the engine's full re-rank with the fitted weights
        pick = rng.choice(len(x), size=(10, 2))
        started = time.perf_counter()
        side, _ = refit(scorer.criteria_side([f"Timing run {trial}: no emojis."]), x, pick[:, 0], pick[:, 1],
                        rng.integers(0, 2, 10).astype(float), quality)  # fmt: skip
        board = engine.rank([f"Timing run {trial}: no emojis."], side=side)
        timings.append(time.perf_counter() - started)
        assert board.done
    result = {
        "visitors": args.visitors, "noise": args.noise, "median_tau": summary,
        "chosen_reaches_random_20_at": reach,
        "lift_at_10_votes": round(summary["chosen"]["10"] - summary["chosen"]["0"], 4),
        "refit_and_rerank_seconds": {"median": round(statistics.median(timings), 3), "max": round(max(timings), 3)},
        "per_visitor": visitors,
    }  # fmt: skip
    text = json.dumps(result, indent=2)
    print(json.dumps({k: v for k, v in result.items() if k != "per_visitor"}, indent=2))
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
