"""Where the criteria reader fails, property by property: each development phrasing read as the CRM serves it
(readers, phrasing memory, soft strength), then sorted into read right, another property strongest, its property
strongest but the wrong way, or nothing read. The judge report's failures are length wishes, so this says how far
the served reading of length wishes is from the other properties', and how it fails (docs/experiments.md).

    USL_EMBEDDINGS=data/embeddings uv run python training/experiments/reading_by_property.py \\
        --output training/experiments/results/reading_by_property.json
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np


def verdict(weights: np.ndarray, prop: int, sign: int) -> str:
    """right / other property / wrong direction / nothing, by the strongest weight (as read_right judges)."""
    if not np.any(weights):
        return "nothing"
    strongest = int(np.argmax(np.abs(weights)))
    if strongest != prop:
        return "other property"
    return "right" if np.sign(weights[strongest]) == sign else "wrong direction"


def main(argv: list[str] | None = None) -> int:
    from crm_core.compositional.scorer import CompositionalScorer
    from crm_core.properties import NAMES
    from crm_train.compositional import phrasings as P

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=Path("space/models/crm-compositional"),
                        help="a compositional CRM folder, read as served")  # fmt: skip
    parser.add_argument("--output", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    scorer = CompositionalScorer(args.model, backend="auto")
    banks = {"development": P.development_bank(), "second development": P.second_development_bank()}
    results: dict = {}
    for name, bank in banks.items():
        counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        misread: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for p in bank:
            weights = scorer.criteria_side([p.text]).weights.reshape(-1)
            said = verdict(weights, NAMES.index(p.prop), p.sign)
            counts[p.prop][said] += 1
            if said == "other property":
                misread[p.prop][NAMES[int(np.argmax(np.abs(weights)))]] += 1
        results[name] = {prop: {"phrasings": sum(c.values()), **c, "read_as": dict(misread[prop].most_common(3))}
                         for prop, c in counts.items()}  # fmt: skip
        words = results[name]["words"]
        rest = [c for prop, c in results[name].items() if prop != "words"]
        share = sum(c.get("right", 0) for c in rest) / sum(c["phrasings"] for c in rest)
        print(f"{name}: length wishes read right {words.get('right', 0)} of {words['phrasings']} "
              f"({json.dumps({k: v for k, v in words.items() if k not in ('phrasings', 'right')})}); "
              f"the other properties {share:.3f}")  # fmt: skip
    if args.output:
        args.output.write_text(json.dumps({"model": str(args.model), "banks": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
