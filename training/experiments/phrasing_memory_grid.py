"""How the phrasing memory's rule was chosen: phrasings read right under each setting, development banks only.

For every phrasing of the two development banks (crm_train.compositional.phrasings, never trained on) and their
general criteria, the shipped readers' weights are taken once (memory off), then the memory's override is applied
under each (neighbours, agreement, nearest cosine) setting. A property phrasing is read right when its strongest
weight is on its property, in its direction; a general criterion when it moves no property. `--validation` also
reports the validation bank, once the choice is made. Two rules were tried: first a vote on
(property, direction) (`phrasing_memory_grid.json`), then, shipped, a vote on the property alone with the
direction from the reader (`phrasing_memory_grid_property_vote.json`, the code as it is now). Settings were
then compared on the boards of the judge report's development phrasings (training half); the first rule's best
grid setting (20 / 0.6 / 0.5) and its scratch pick (10 / 0.7 / 0.6) in `phrasing_memory_judge_dev.json`, the
property vote at both in `phrasing_memory_judge_dev_property_vote.json` (docs/experiments.md):

    USL_EMBEDDINGS=data/embeddings uv run python benchmarks/judge_report.py --data ../shared/data/usl/alpaca_eval \\
        --model v10=runs/mem-10-0.7-0.6 --model v20=runs/mem-20-0.6-0.5 --half training --phrasings development \\
        --output training/experiments/results/phrasing_memory_judge_dev_property_vote.json

(each runs/mem-* folder: the shipped one, its memory saved again with that setting; runs/crm-scale15, "nomem":
the shipped one without a memory)

    uv run python training/experiments/phrasing_memory_grid.py --model space/models/crm-compositional \\
        --output training/experiments/results/phrasing_memory_grid_property_vote.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np


def read_right(weights: np.ndarray, prop: int | None, sign: int) -> bool:
    if prop is None:
        return not np.any(weights)
    strongest = int(np.argmax(np.abs(weights)))
    return bool(weights[strongest] != 0 and strongest == prop and np.sign(weights[strongest]) == sign)


def readers_and_memory(description: str, argv: list[str] | None):
    """The command line the phrasing-memory experiments share (--model, --validation, --output), and the folder's
    scorer with its phrasing memory taken off (the readers' own weights) beside that memory."""
    from crm_core.compositional.scorer import CompositionalScorer

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--model", type=Path, default=Path("space/models/crm-compositional"),
                        help="a compositional CRM folder with its phrasing memory")  # fmt: skip
    parser.add_argument("--validation", action="store_true", help="also report the validation bank")
    parser.add_argument("--output", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    scorer = CompositionalScorer(args.model, backend="auto")
    memory = scorer.heads.memory
    if memory is None:
        parser.error(f"{args.model} has no phrasing memory; build it: python -m crm_train.compositional.memory")
    scorer.heads.memory = None
    return args, scorer, memory


def main(argv: list[str] | None = None) -> int:
    from crm_core.compositional.memory import PhrasingMemory
    from crm_core.properties import NAMES
    from crm_train.compositional import phrasings as P

    args, scorer, memory = readers_and_memory(__doc__.split("\n\n")[0], argv)
    banks = {"development": P.development_bank(), "second development": P.second_development_bank()}
    if args.validation:
        banks["validation"] = P.validation_bank()
    rows = {name: [(p.text, NAMES.index(p.prop), p.sign) for p in bank] for name, bank in banks.items()}
    rows["development general"] = [(text, None, 0) for text in P.DEVELOPMENT_GENERAL]
    if args.validation:
        rows["validation general"] = [(text, None, 0) for text in P.VALIDATION_GENERAL]
    read = {name: [(scorer.criteria_side([t]).weights, scorer.encoder.encode([t])[0], prop, sign)
                   for t, prop, sign in bank] for name, bank in rows.items()}  # fmt: skip

    def score(setting: PhrasingMemory | None) -> dict[str, int]:
        return {name: sum(read_right(setting.override(w, v) if setting else w, prop, sign) for w, v, prop, sign in rs)
                for name, rs in read.items()}  # fmt: skip

    results = [{"setting": "readers alone", **score(None)}]
    for neighbours, agreement, similarity in itertools.product((5, 10, 20), (0.6, 0.7, 0.8), (0.5, 0.6, 0.7)):
        setting = PhrasingMemory(memory.vectors, memory.labels, memory.magnitude, neighbours, agreement, similarity)
        results.append({"setting": f"{neighbours} / {agreement} / {similarity}", **score(setting)})
    for row in results:
        row["development total"] = row["development"] + row["second development"]
        print(json.dumps(row))
    best = max(results[1:], key=lambda r: (r["development total"], r["development general"]))
    print(
        f"most development phrasings read right: {best['setting']} ({best['development total']} of "
        f"{len(rows['development']) + len(rows['second development'])})"
    )
    if args.output:
        args.output.write_text(json.dumps({"sizes": {k: len(v) for k, v in rows.items()}, "results": results,
                                           "best": best["setting"]}, indent=1) + "\n")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
