"""Does reading the whole answer change the board? (issue "one judge for every bench", long answers)

The quality network reads an answer's embedding over its first 128 tokens (crm_core.encoder); properties and the
reference signals read the whole text. A creative answer is ~1,300 tokens: the network sees its first tenth. Here
the answer's vector is instead the mean of the unit vectors of its consecutive windows of `--window` words (at most
`--windows` of them, renormalised), the rest of the quality term as served, and the general board is compared with
the served one:

- AlpacaEval's training half (development): tau vs the published length-controlled win rates, both readings;
- creative (no labels in the shared data): how far the board moves (tau between the two boards, top five of each).

    USL_EMBEDDINGS=data/embeddings uv run python training/experiments/long_answers.py \\
        --output training/experiments/results/long_answers.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "training/experiments"))


def windows(text: str, size: int, most: int) -> list[str]:
    """Consecutive windows of `size` words (the first `most`); a text with fewer words is one window."""
    words = text.split()
    return [" ".join(words[i : i + size]) for i in range(0, max(len(words), 1), size)][:most] or [text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=REPO / "space/models/crm-compositional", help="the CRM")
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument("--embeddings", default=str(REPO / "data/embeddings"), help="the embedding store")
    parser.add_argument("--window", type=int, default=90, help="words per window (~128 MiniLM tokens)")
    parser.add_argument("--windows", type=int, default=8, help="windows read at most per answer")
    parser.add_argument("--output", type=Path, help="write the results here (JSON)")
    args = parser.parse_args(argv)
    from bench_boards import BASELINES
    from consensus_reference import general_board
    from crm_core.agreement import kendall_tau
    from crm_core.compositional.heads import mlp, quality_input
    from crm_core.data import open_bench
    from crm_train.compositional import sources as S
    from crm_train.compositional.evaluate import Judge, published_lc
    from usl_space.catalog import default_models
    from usl_space.instant import panels_of

    judge = Judge(args.model, args.embeddings, backend="onnx")
    heads = judge.heads
    instructions = S.alpaca_instructions(args.shared)
    dev = {i for i, t in instructions.items() if S.alpaca_train_half(t)}
    lc = published_lc(args.shared)
    benches = {
        "alpaca_eval (development: training half)": (open_bench(args.shared / "usl/alpaca_eval",
                                                                models=default_models(),
                                                                baseline=BASELINES["alpaca_eval"]), dev),
        "creative": (open_bench(args.shared / "usl/creative", baseline=BASELINES["creative"]), None),
    }  # fmt: skip
    report: dict = {"window_words": args.window, "windows": args.windows, "benches": {}}
    for name, (bench, ids) in benches.items():
        outputs, query = bench.outputs(), bench.instructions()
        keys = sorted(k for k in outputs if (ids is None or k[0] in ids) and outputs[k].strip())
        texts = [outputs[k] for k in keys]
        panels, scale = panels_of(judge.scorer, keys, outputs)
        served = judge.scorer.response_side([query[i] for i, _ in keys], texts, panels, reference_scale=scale)
        parts = [windows(t, args.window, args.windows) for t in texts]
        flat = [w for p in parts for w in p]
        vecs = judge.features.embed(flat, progress=True)
        owner = np.repeat(np.arange(len(parts)), [len(p) for p in parts])
        whole = np.zeros((len(parts), vecs.shape[1]))
        np.add.at(whole, owner, vecs)
        whole /= np.linalg.norm(whole, axis=1, keepdims=True)
        qvec = judge.features.embed([query[i] for i, _ in keys])
        first = judge.features.embed(texts)
        network_first = mlp(heads.params, "quality", quality_input(qvec, first, served.z))[:, 0]
        network_whole = mlp(heads.params, "quality", quality_input(qvec, whole.astype(np.float32), served.z))[:, 0]
        boards = {"first 128 tokens (served)": served.quality,
                  "whole answer": served.quality - network_first + network_whole}  # fmt: skip
        rows: dict = {"answers": len(keys), "mean_windows": round(len(flat) / len(parts), 2)}
        rates = {}
        for label, quality in boards.items():
            rates[label] = general_board(quality, keys, bench.baseline)
            order = sorted(rates[label], key=lambda m: -rates[label][m])
            rows[label] = {"top5": order[:5]}
            judged = [m for m in rates[label] if m in lc]
            if ids is not None:
                rows[label]["tau_vs_lc"] = round(kendall_tau([rates[label][m] for m in judged],
                                                             [lc[m] for m in judged]), 3)  # fmt: skip
        a, b = rates.values()
        common = sorted(a)
        rows["tau_between_boards"] = round(kendall_tau([a[m] for m in common], [b[m] for m in common]), 3)
        report["benches"][name] = rows
        print(name, json.dumps(rows), flush=True)
    if args.output:
        args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
