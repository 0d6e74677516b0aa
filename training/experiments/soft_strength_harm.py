"""What the soft strength does to phrasings the readers misread: how often a served reading puts a strong weight
on a property the sentence does not ask for, under each (soft_strength, lift_from, lift_share) setting.

For every phrasing of the development banks (crm_train.compositional.phrasings, never trained on; `--validation`
adds the validation bank, for reporting once a choice is made) the shipped readers' weights and the sentence
embedding are taken once; then, as crm_core.compositional.heads serves one soft sentence, the phrasing memory's
override and `at_strength` are applied under each setting. Reported per bank: phrasings with a weight of at least 1
on another property than theirs ("harm": e.g. "A thorough, blow-by-blow treatment would be welcome." read as
refusal 0.65, apology 0.45, summary 0.4 and lifted to refusal 3.1), the total weight on other properties, and the
median weight on the asked property where it points the right way (what the lift is for). The boards' side of the
choice is benchmarks/judge_report.py --gate (docs/experiments.md).

    uv run python training/experiments/soft_strength_harm.py --output \\
        training/experiments/results/soft_strength_harm.json
"""

from __future__ import annotations

import json
import sys

import numpy as np

SETTINGS = [(0.0, 0.0, 0.0), (0.6, 0.5, 0.0), (0.6, 1.0, 0.0), (0.6, 0.5, 0.5), (0.6, 0.5, 0.6), (0.6, 0.5, 0.7),
            (0.6, 0.5, 0.8), (0.7, 0.5, 0.6)]  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    from crm_core.properties import NAMES
    from crm_train.compositional import phrasings as P
    from phrasing_memory_grid import readers_and_memory  # this folder's; the memory is applied below, as served

    args, scorer, memory = readers_and_memory(__doc__.split("\n\n")[0], argv)
    banks = {"development": P.development_bank() + P.second_development_bank()}
    if args.validation:
        banks["validation"] = P.validation_bank()
    read = {name: [(scorer.criteria_side([p.text]).weights, scorer.encoder.encode([p.text])[0], NAMES.index(p.prop),
                    p.sign) for p in bank] for name, bank in banks.items()}  # fmt: skip
    results = []
    for strength, lift_from, lift_share in SETTINGS:
        row: dict = {"soft_strength": strength, "lift_from": lift_from, "lift_share": lift_share}
        for name, rows in read.items():
            harm, other, right = 0, 0.0, []
            for weights, vector, prop, sign in rows:
                served = memory.override(weights, vector)
                if strength > 0:
                    served = memory.at_strength(served, strength, lift_from, lift_share)
                elsewhere = np.abs(np.delete(served, prop))
                harm += int(elsewhere.max() >= 1.0)
                other += float(elsewhere.sum())
                if np.sign(served[prop]) == sign:
                    right.append(abs(float(served[prop])))
            row[name] = {"phrasings": len(rows), "strong_weight_elsewhere": harm,
                         "weight_elsewhere": round(other, 1), "right_direction": len(right),
                         "median_right_weight": round(float(np.median(right)), 2)}  # fmt: skip
        results.append(row)
        print(json.dumps(row))
    if args.output:
        args.output.write_text(json.dumps({"model": str(args.model), "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
