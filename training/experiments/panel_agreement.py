"""Does likeness to the panel mean quality when the panel itself disagrees? (issue "one judge for every bench")

The quality term adds how close an answer comes to a panel's answers to the same query (embedding cosine, TF-IDF
cosine, relative length: crm_core.compositional.reference). Where the panel converges (a fact, a fix, a recipe),
likeness is evidence of being right; where it scatters (a story, a poem: creative's prompts), likeness is evidence
only of being typical, and an original answer is charged for it. Here the reference part of each query is weighed
by how much its panel agrees with itself (the mean pairwise embedding cosine of its answers, `a`): in full at
`a >= high`, not at all at `a <= low`, linearly between. Measured:

- development, AlpacaEval's training half (named panel, as served there; and with that panel taken off, the bench's
  own panel as every other bench gets it): the general board's tau vs the published length-controlled win rates of
  the default models; per-query agreement with GPT-4-turbo's verdicts for the 58 models it annotated, on the tenth
  of prompts the quality fit never trained on, by quintile of `a` and on writing prompts (stories, poems, songs);
- held out, reported only: MT-bench's general board vs its published scores; creative's and speechmap's general
  boards (how far each moves from the served one; their top five), and where the junk entries of
  benchmarks/bench_boards.py land on every bench.

    USL_EMBEDDINGS=data/embeddings uv run python training/experiments/panel_agreement.py \\
        --output training/experiments/results/panel_agreement.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "training/experiments"))

WRITING = re.compile(r"\b(story|stories|poem|poetry|song|lyrics|haiku|limerick|rap|script|tale|sonnet|fiction|"
                     r"fictional|screenplay|verse|jokes?|narrative|fable)\b", re.I)  # fmt: skip


def agreement_weight(agreement: np.ndarray, low: float, high: float, floor: float = 0.0) -> np.ndarray:
    """1 at `high` and above, `floor` at `low` and below, linear between (high <= low: 1 everywhere, as served)."""
    if high <= low:
        return np.ones_like(agreement)
    return floor + (1 - floor) * np.clip((agreement - low) / (high - low), 0.0, 1.0)


def parse_gate(text: str) -> tuple[float, float, float, str]:
    """LOW:HIGH[:FLOOR[:PARTS]], PARTS all (the whole reference part) or refsim (the embedding cosine only)."""
    fields = text.split(":")
    low, high = float(fields[0]), float(fields[1])
    floor = float(fields[2]) if len(fields) > 2 else 0.0
    parts = fields[3] if len(fields) > 3 else "all"
    if parts not in ("all", "refsim"):
        raise SystemExit(f"--gates {text}: PARTS must be all or refsim, not {parts!r}")
    return low, high, floor, parts


def hit_rate(hits: list[bool], where: list[bool]) -> float:
    """The share of `hits` true among the rows `where` marks."""
    return round(float(np.mean([h for h, w in zip(hits, where, strict=True) if w])), 3)


class Bench:
    """One bench's rows, their network score, vectors and what the reference part needs."""

    def __init__(self, judge, bench, ids: set[int] | None):
        from crm_core.compositional.reference import words as word_tokens

        outputs, query = bench.outputs(), bench.instructions()
        self.baseline = bench.baseline
        self.keys = sorted(k for k in outputs if (ids is None or k[0] in ids) and outputs[k].strip())
        texts = [outputs[k] for k in self.keys]
        self.network = judge.side([query[i] for i, _ in self.keys], texts).quality
        self.vecs = judge.features.embed(texts)
        self.lex = [judge.scorer.idf.vector(t) for t in texts]
        self.words = np.array([len(word_tokens(t)) for t in texts], dtype=np.float64)
        self.groups: dict[int, list[int]] = {}
        for r, (i, _) in enumerate(self.keys):
            self.groups.setdefault(i, []).append(r)
        self.query_of = np.array([i for i, _ in self.keys])
        self.weights = judge.heads.reference_weights

    def reference(self, panel_rows: dict[int, list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(per row, the weighted reference part against its query's panel, and its embedding-cosine share; per
        row, its panel's agreement)."""
        from consensus_reference import consensus_signals

        refsim, lexsim, rel = consensus_signals(self.groups, panel_rows, self.vecs, self.lex, self.words)
        w = self.weights
        cosine = w["refsim_weight"] * refsim
        part = cosine + w["lexsim_weight"] * lexsim + w["length_weight"] * rel
        agreement = {}
        for i, rows in panel_rows.items():
            v, n = self.vecs[rows], len(rows)
            agreement[i] = float(((v @ v.T).sum() - n) / (n * (n - 1))) if n > 1 else 1.0
        return part, cosine, np.array([agreement.get(i, 1.0) for i in self.query_of])

    def rows_of(self, models: set[str] | None) -> dict[int, list[int]]:
        return {i: [r for r in rows if models is None or self.keys[r][1] in models] for i, rows in self.groups.items()}

    def gated(self, panel_rows: dict[int, list[int]], scale: float, gate: tuple) -> tuple[np.ndarray, np.ndarray]:
        part, cosine, agree = self.reference(panel_rows)
        low, high, floor, parts = gate
        weight = agreement_weight(agree, low, high, floor)
        reference = weight * part if parts == "all" else part - cosine + weight * cosine
        return self.network + scale * reference, agree

    def quality(self, scale: float, gate: tuple, panel: set[str] | None, share: float = 0.0):
        """The quality term: network + scale x reference, the reference (or its cosine alone) weighed by the panel's
        agreement; with `share`, the panel is the bench's own (usl_space.instant.own_panel over a first board
        compared with every entry, as served)."""
        from usl_space.instant import own_panel

        if share:
            first, _ = self.gated(self.rows_of(None), scale, gate)
            panel = set(own_panel(first, self.keys, share))
        return self.gated(self.rows_of(panel), scale, gate)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=REPO / "space/models/crm-compositional", help="the CRM")
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument("--embeddings", default=str(REPO / "data/embeddings"), help="the embedding store")
    parser.add_argument(
        "--gates",
        default="0:0,0.6:0.75,0.65:0.8,0.7:0.85,0.75:0.9",
        help="LOW:HIGH[:FLOOR[:PARTS]] agreement ramps to try, comma-separated: the weight is FLOOR "
        "(default 0) at LOW and below, 1 at HIGH and above; PARTS all (default) or refsim (the "
        "embedding cosine only); 0:0 = the reference part in full, as served",
    )
    parser.add_argument("--benches", default="mt_bench,creative,speechmap", help="held-out benches to report")
    parser.add_argument("--output", type=Path, help="write the results here (JSON)")
    args = parser.parse_args(argv)
    from bench_boards import BASELINES, JUNK, junk_entries, mt_bench_scores, null_model_text
    from consensus_reference import general_board
    from crm_core.agreement import kendall_tau
    from crm_core.data import open_bench
    from crm_train.compositional import sources as S
    from crm_train.compositional.evaluate import Judge, published_lc
    from usl_space.catalog import default_models

    gates = [parse_gate(g) for g in args.gates.split(",")]
    judge = Judge(args.model, args.embeddings, backend="onnx")
    panel = set(judge.scorer.reference_models)
    null_text = null_model_text(args.shared)
    instructions = S.alpaca_instructions(args.shared)
    half = {i for i, t in instructions.items() if S.alpaca_train_half(t)}
    untrained = {i for i in half if S.annotation_validation(instructions[i])}
    lc, mt = published_lc(args.shared), mt_bench_scores(args.shared)
    with gzip.open(args.shared / "usl/alpaca_eval/judge_annotations_weighted_gpt4_turbo.jsonl.gz", "rt") as handle:
        verdicts = [json.loads(line) for line in handle]
    verdicts = [v for v in verdicts if v["idx"] in untrained and abs(v["preference"] - 1.5) >= 0.1]
    report: dict = {"gates": gates, "development": {}, "held_out": {}}

    # development 1: the default board (and junk) on AlpacaEval's training half
    alpaca = Bench(judge, junk_entries(open_bench(args.shared / "usl/alpaca_eval", models=default_models(),
                                                  baseline=BASELINES["alpaca_eval"]), null_text), half)  # fmt: skip
    # development 2: the 58 annotated models against the baseline on the prompts the fit never trained on
    annotated = sorted({v["model"] for v in verdicts} | panel | {BASELINES["alpaca_eval"]})
    pairs_bench = Bench(judge, open_bench(args.shared / "usl/alpaca_eval", models=annotated,
                                          baseline=BASELINES["alpaca_eval"]), untrained)  # fmt: skip
    row = {k: r for r, k in enumerate(pairs_bench.keys)}
    pairs = [(row[(v["idx"], v["model"])], row[(v["idx"], pairs_bench.baseline)], v["preference"] > 1.5, v["idx"])
             for v in verdicts if (v["idx"], v["model"]) in row and (v["idx"], pairs_bench.baseline) in row
             and v["model"] != pairs_bench.baseline]  # fmt: skip

    def board_row(bench: Bench, quality: np.ndarray, labels: dict[str, float] | None) -> dict:
        board = general_board(quality, bench.keys, bench.baseline)
        order = sorted(board, key=lambda m: -board[m])
        real = [m for m in order if m not in JUNK]
        out = {"top5": real[:5], "junk_ranks": {m: order.index(m) + 1 for m in JUNK if m in board},
               "models": len(real), "board": {m: round(board[m], 4) for m in order}}  # fmt: skip
        if labels:
            judged = [m for m in real if m in labels]
            out["tau"] = round(kendall_tau([board[m] for m in judged], [labels[m] for m in judged]), 3)
        return out

    names = [":".join(f"{x:g}" if isinstance(x, float) else x for x in gate) for gate in gates]
    for name, gate in zip(names, gates, strict=True):
        dev: dict = {}
        quality, agree = alpaca.quality(1.0, gate, panel)
        dev["named panel: tau vs LC"] = board_row(alpaca, quality, lc)["tau"]
        quality, _ = alpaca.quality(0.5, gate, None, share=0.5)
        dev["own panel (named one taken off): tau vs LC"] = board_row(alpaca, quality, lc)["tau"]
        quality, agree = pairs_bench.quality(1.0, gate, panel)
        edges = np.quantile(agree, [0.2, 0.4, 0.6, 0.8])
        hits = [(quality[a] > quality[b]) == better for a, b, better, _ in pairs]
        fifth = [int(np.searchsorted(edges, agree[a])) for a, *_ in pairs]
        writing = [bool(WRITING.search(instructions[i])) for *_, i in pairs]
        dev["verdicts agreed (named panel)"] = round(float(np.mean(hits)), 4)
        dev["... by quintile of agreement"] = [hit_rate(hits, [f == q for f in fifth]) for q in range(5)]
        dev["... writing prompts / others"] = [hit_rate(hits, writing), hit_rate(hits, [not w for w in writing])]
        report["development"][name] = dev
        print(name, json.dumps(dev), flush=True)
    report["development"]["verdict pairs"] = len(pairs)

    for bench_name in filter(None, args.benches.split(",")):
        folder = args.shared / "usl" / bench_name
        bench = Bench(judge, junk_entries(open_bench(folder, baseline=BASELINES[bench_name]), null_text), None)
        rows: dict = {}
        for name, gate in zip(names, gates, strict=True):
            quality, _ = bench.quality(0.5, gate, None, share=0.5)
            rows[name] = board_row(bench, quality, mt if bench_name == "mt_bench" else None)
        served = rows[names[0]]["board"]
        common = sorted(served)
        for gate, result in rows.items():
            result["tau_with_first"] = round(kendall_tau([served[m] for m in common],
                                                         [result["board"][m] for m in common]), 3)  # fmt: skip
            brief = {k: v for k, v in result.items() if k != "board"}
            print(bench_name, gate, json.dumps(brief), flush=True)
        _, _, agree = bench.reference(bench.rows_of(None))
        rows["agreement percentiles 10/50/90 (every answer)"] = np.percentile(agree, [10, 50, 90]).round(3).tolist()
        report["held_out"][bench_name] = rows
    if args.output:
        args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
