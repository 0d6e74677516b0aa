"""The word-list reader (crm_core.compositional.cues) and the phrasing memory's magnitude floor, on development data
only: each setting's share of the development banks' phrasings read right, and property pairs on the training
split's answer groups under the development banks' phrasings (the report card's pairs, combined and silent
criteria, with development phrasings and general criteria; crm_train.compositional.evaluate.property_report).

    USL_EMBEDDINGS=data/embeddings uv run python training/experiments/cue_reader.py \\
        --output training/experiments/results/cue_reader.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

SIX = ("nonanswer", "other_language", "ai_prose", "dialogue", "lexical_variety", "repetition")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=Path("space/models/crm-compositional"),
                        help="a compositional CRM folder with its phrasing memory")  # fmt: skip
    parser.add_argument("--shared", type=Path, default=Path("../shared/data"), help="the shared data folder")
    parser.add_argument("--embeddings", default="data/embeddings", help="the embedding store")
    parser.add_argument("--cue-reader", type=float, nargs="+", default=[0, 1, 2],
                        help="cue_reader settings to try (0 off, 1 fill, 2 fill and disagree)")  # fmt: skip
    parser.add_argument("--floor", type=float, nargs="+", default=[0, 0.5, 1.0],
                        help="memory_magnitude_floor settings to try")  # fmt: skip
    parser.add_argument("--groups", type=int, default=400, help="training-split answer groups drawn for the pairs")
    parser.add_argument("--pairs-only", action="store_true",
                        help="only the property pairs: skip reading every bank (half the run's time; a magnitude "
                        "floor moves weights, rarely which property a sentence reads as)")  # fmt: skip
    parser.add_argument("--output", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)

    from crm_core.properties import NAMES
    from crm_train.compositional import phrasings as P
    from crm_train.compositional import sources as S
    from crm_train.compositional.evaluate import Judge, property_report
    from crm_train.compositional.features import make_groups

    sys.path.insert(0, str(Path(__file__).parent))
    from phrasing_memory_grid import read_right

    judge = Judge(args.model, args.embeddings, "onnx")
    scorer, shipped = judge.scorer, judge.scorer.serving
    banks = P.reading_banks()
    train = [g for g in S.answer_groups(args.shared) if S.split(g[0]) == "train"]
    train = [train[i] for i in np.random.default_rng(0).choice(len(train), min(args.groups, len(train)), replace=False)]
    groups = make_groups(train, judge.features)
    pair_bank = [p for name, bank in banks.items() if name != "length in units" for p in bank]
    both_ways = {p.prop for p in pair_bank if p.sign > 0} & {p.prop for p in pair_bank if p.sign < 0}
    pair_bank = [p for p in pair_bank if p.prop in both_ways]  # property_report draws each direction
    results = []
    for cue in args.cue_reader:
        for floor in args.floor:
            scorer.serving = replace(shipped, cue_reader=cue, memory_magnitude_floor=floor)
            row: dict = {"cue_reader": cue, "memory_magnitude_floor": floor, "read right": {}}
            for name, bank in {} if args.pairs_only else banks.items():
                print(f"cue_reader {cue}, floor {floor}: reading {name} ...", file=sys.stderr, flush=True)
                hits = {"six": [0, 0], "older": [0, 0]}
                for p in bank:
                    soft, must = scorer.criteria_sides([p.text])
                    part = "six" if p.prop in SIX else "older"
                    hits[part][0] += read_right(soft.weights + must.weights, NAMES.index(p.prop), p.sign)
                    hits[part][1] += 1
                row["read right"][name] = {k: f"{a}/{n}" for k, (a, n) in hits.items() if n}
            print(f"cue_reader {cue}, floor {floor}: the property pairs (about 20 minutes on 2 cores) ...",
                  file=sys.stderr, flush=True)  # fmt: skip
            started = time.perf_counter()
            report = property_report(judge, groups, 1.5, 0.3, bank=pair_bank, general=P.DEVELOPMENT_GENERAL)
            row["seconds"] = round(time.perf_counter() - started)
            both = {k: v["both"] for k, v in report["properties"].items()}
            row["pairs, both ways"] = both
            row["pairs, less / more"] = {k: [v["less"], v["more"]] for k, v in report["properties"].items()}
            row["pairs: six / older (mean)"] = [
                round(float(np.mean([both[k] for k in both if k in SIX])), 3),
                round(float(np.nanmean([both[k] for k in both if k not in SIX])), 3),
            ]
            row["combined"] = report["combined"]["accuracy"]
            row["silent"] = report["silent_agreement"]["accuracy"]
            results.append(row)
            print(json.dumps({k: v for k, v in row.items() if not k.startswith("pairs, ")}), flush=True)
    if args.output:
        args.output.write_text(json.dumps({"model": str(args.model), "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
