"""Choosing the weights of the quality term's whole-text reference signals (crm_core.compositional.reference) on
development data: `lexsim_weight` (TF-IDF cosine to the reference answer) and `length_weight` (length relative to it).

The embedding cosine to the reference reads 128 tokens; the lexical one reads the whole answer, and the length
term takes back out the judges' taste for length that the quality network still carries. Both are added after the
quality fit, like the reference boost, so a grid costs no refit. Development measures, as for the boost
(training/experiments/quality_variants.py):
1. held-out models: the 45 non-default annotated models in three folds by name; a fold's board (mean P(beating
   the reference) over its training-half annotations) comes from a quality fit on the other two folds plus the
   human votes, boosted as `--model` was (its crm.json); all are ranked against AlpacaEval 2.0's published
   length-controlled win rates;
2. the 40 default models on the training half of the instructions (the served quality term of `--model`).
The chosen pair has the best mean of the two taus. The IDF table is built from the annotated answers of all 45
models (it reads no verdict). The evaluation half is scored for the chosen pair and for (0, 0) only, after the
choice, beside each other.

    uv run python training/experiments/reference_signals.py --model space/models/crm-compositional \\
        --output training/experiments/results/reference_signals.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

LEXSIM_WEIGHTS = (0.0, 1.0, 2.0, 3.0, 5.0)
LENGTH_WEIGHTS = (0.0, -0.25, -0.5, -1.0)


def held_out_boards(judge, annotations: list, human_train: list, validation: list, idf, boost: float) -> list:
    """Per fold: (model per pair, the fold net's quality difference to the reference, lexical similarity, relative
    length) for the fold's annotation pairs; each fold net's reference weight boosted by `boost`, as the model's."""
    import torch
    from crm_core.compositional.reference import lexical_similarity, relative_length
    from crm_train.compositional.train import CompositionalConfig, boost_reference, fit_quality, pair_tensors

    config, spread = CompositionalConfig(), judge.heads.spread
    val_t = pair_tensors(validation, judge.features, spread, config)
    fold = {m: int(hashlib.sha256(m.encode()).hexdigest(), 16) % 3 for m in {p.meta["model"] for p in annotations}}
    out = []
    for f in range(3):
        train = [p for p in annotations if fold[p.meta["model"]] != f]
        test = [p for p in annotations if fold[p.meta["model"]] == f]
        train_t = pair_tensors(train + human_train, judge.features, spread, config)
        net, _ = fit_quality(train_t, val_t, config)
        rows = list(range(len(train)))  # the annotation rows come first and all have a reference
        boost_reference(net, train_t, [p.prompt for p in train], rows, boost)
        test_t = pair_tensors(test, judge.features, spread, config)
        with torch.no_grad():
            dq = (net(test_t["xa"], test_t["sa"]) - net(test_t["xb"], test_t["sb"])).numpy()
        texts, refs = [p.a for p in test], [p.reference for p in test]
        lex = lexical_similarity(texts, refs, idf) - 1.0  # the reference's own similarity is 1
        out.append(([p.meta["model"] for p in test], dq, lex, relative_length(texts, refs)))
    return out


def held_out_tau(folds: list, lc: dict, lexsim: float, length: float) -> float:
    from crm_core.agreement import kendall_tau

    board = {}
    for models, dq, lex, rel in folds:
        p = 1 / (1 + np.exp(-(dq + lexsim * lex + length * rel)))
        for m in set(models):
            board[m] = float(p[np.array(models) == m].mean())
    ranked = [m for m in board if m in lc]
    return kendall_tau(np.array([board[m] for m in ranked]), np.array([lc[m] for m in ranked]))


def with_weights(judge, lexsim: float, length: float) -> None:
    judge.heads.params["lexsim_weight"] = np.array([lexsim], np.float32)
    judge.heads.params["length_weight"] = np.array([length], np.float32)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="space/models/crm-compositional", type=Path,
                        help="a compositional CRM (the default-model board uses its quality term)")  # fmt: skip
    parser.add_argument("--shared", default="../shared/data", type=Path, help="the shared data folder")
    parser.add_argument("--embeddings", default="data/embeddings", help="the embedding store (built on demand)")
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    from crm_core.compositional.reference import IdfTable
    from crm_train.compositional import sources as S
    from crm_train.compositional.config import CompositionalConfig
    from crm_train.compositional.evaluate import Judge, leaderboard_report, published_lc
    from emit import emit

    judge = Judge(args.model, args.embeddings)
    annotations = S.annotation_pairs(args.shared)
    held = [S.annotation_validation(p.prompt) for p in annotations]
    ann_train = [p for p, h in zip(annotations, held, strict=True) if not h]
    validation = [p for p, h in zip(annotations, held, strict=True) if h] + S.human_pairs(args.shared, "validation")
    idf = IdfTable.build(dict.fromkeys(t for p in annotations for t in (p.a, p.reference)))
    judge.scorer.idf = idf
    lc = published_lc(args.shared)
    boost = judge.scorer.spec.extra.get("config", {}).get("refsim_boost", CompositionalConfig().refsim_boost)
    folds = held_out_boards(judge, ann_train, S.human_pairs(args.shared, "train"), validation, idf, float(boost))
    grid = {}
    for lexsim in LEXSIM_WEIGHTS:
        for length in LENGTH_WEIGHTS:
            with_weights(judge, lexsim, length)
            models_tau = held_out_tau(folds, lc, lexsim, length)
            default_tau = leaderboard_report(judge, args.shared, "training")["tau_vs_lc"]
            grid[f"{lexsim}/{length}"] = {"lexsim_weight": lexsim, "length_weight": length,
                                          "held_out_models_tau": round(models_tau, 4),
                                          "training_half_default_tau": default_tau,
                                          "development_mean": round((models_tau + default_tau) / 2, 4)}  # fmt: skip
            print(json.dumps(grid[f"{lexsim}/{length}"]), flush=True)
    chosen = max(grid.values(), key=lambda row: row["development_mean"])
    evaluation = {}
    for row in ({"lexsim_weight": 0.0, "length_weight": 0.0}, chosen):
        with_weights(judge, row["lexsim_weight"], row["length_weight"])
        board = leaderboard_report(judge, args.shared)
        evaluation[f"{row['lexsim_weight']}/{row['length_weight']}"] = {
            k: board[k] for k in ("tau_vs_lc", "tau_discrete_vs_lc", "tau_vs_raw_win_rate", "gpt4_turbo_agreement")
        }
    result = {"model": str(args.model), "idf": {"documents": idf.documents, "words": len(idf.idf)}, "grid": grid,
              "chosen": chosen, "evaluation_half": evaluation}  # fmt: skip
    emit(result, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
