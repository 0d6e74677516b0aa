"""How strongly a wish about each property should count: the readers' gain, chosen on development data.

The readers weigh the six properties of 2025 (crm_core.properties.OF_2025) ten times less than the others (their
median weight for training phrasings: dialogue 0.01-0.16, stock prose 0.12-0.18, against 1-4 for the older ones),
so even a wish read right hardly moves a pair, and the serving threshold (0.25 of raw weight) removes many
readings of them altogether: the report card's pairs for the six sit at 0.536. The fit gave each property only the
weight its training pairs needed, and where a property's differences are wide (a story with a third of its words in
dialogue is seven spreads from one without) that is small. The gain (crm_train.compositional.memory.gained_memory,
applied by CompositionalHeads to the readers' raw weight, before the threshold, on the property a sentence is most
about) lifts the readers' weight for a property and direction to `factor` x the weight under which a clear
difference decides 85% of the training split's pairs against the quality term, where they fall short.

Each factor is judged on development data only: the report card's property pairs, combined and silent criteria on
the held-out prompts of the validation split (not the test split), under the development banks' phrasings (never
trained on, never the validation bank), and the development phrasings read right.

    mkdir -p runs/prev && git archive 2d7452d space/models/crm-compositional | tar -x -C runs/prev
    USL_EMBEDDINGS=data/embeddings uv run python training/experiments/reader_gain.py \\
        --model runs/prev/space/models/crm-compositional --factors 0 2 4 8 \\
        --output training/experiments/results/reader_gain.json

(the folder before the gain: the shipped one's memory holds it now, and its magnitudes with it)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=Path("space/models/crm-compositional"),
                        help="a compositional CRM folder with a phrasing memory")  # fmt: skip
    parser.add_argument("--shared", type=Path, default=Path("../shared/data"), help="the shared data folder")
    parser.add_argument("--embeddings", default="data/embeddings", help="the embedding store")
    parser.add_argument("--factors", type=float, nargs="+", default=[0, 2, 4, 8],
                        help="gain factors to try (0: no gain, the readers as fitted)")  # fmt: skip
    parser.add_argument("--decides", type=float, default=0.85,
                        help="the share of clear training pairs the needed weight decides as asked")  # fmt: skip
    parser.add_argument("--least-share", type=float, default=0.5,
                        help="no gain where the readers weigh fewer than this share of a label's training "
                        "phrasings the right way (0: a gain wherever the weight is short)")  # fmt: skip
    parser.add_argument("--output", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)

    from crm_core.properties import NAMES, OF_2025
    from crm_train.compositional import phrasings as P
    from crm_train.compositional import sources as S
    from crm_train.compositional.evaluate import Judge, property_report
    from crm_train.compositional.features import make_groups
    from crm_train.compositional.memory import gained_memory, memory_phrasings, needed_weights
    from phrasing_memory_grid import read_right

    judge = Judge(args.model, args.embeddings, backend="onnx")
    memory = judge.heads.memory
    if memory is None:
        parser.error(f"{args.model} has no phrasing memory")
    groups = S.answer_groups(args.shared)
    train = make_groups([g for g in groups if S.split(g[0]) == "train"], judge.features, progress=True)
    development = make_groups([g for g in groups if S.split(g[0]) == "validation"], judge.features, progress=True)
    texts, labels = memory_phrasings(args.shared)
    bank = P.development_bank() + P.second_development_bank() + P.negation_development_sentences()
    signs = {(p.prop, p.sign) for p in bank}  # pairs need phrasings both ways: a property asked one way only is out
    bank = [p for p in bank if (p.prop, -p.sign) in signs]
    k = len(judge.heads.spread)
    needed = needed_weights(judge.scorer, train, args.decides)
    results: dict = {"model": str(args.model), "decides": args.decides, "least_share": args.least_share,
                     "needed": {NAMES[i]: [round(float(x), 3) for x in needed[i]] for i in range(k)},
                     "magnitude": {NAMES[i]: [round(float(x), 3) for x in memory.magnitude[i]] for i in range(k)},
                     "factors": {}}  # fmt: skip
    for factor in args.factors:
        judge.heads.memory, judge.heads.gain = memory, memory.gain  # each factor from the folder's own memory
        gained = gained_memory(judge.scorer, texts, labels, train, factor, args.least_share, args.decides,
                               progress=False, needed=needed) if factor else memory  # fmt: skip
        judge.heads.memory, judge.heads.gain = gained, gained.gain
        report = property_report(judge, development, 1.5, 0.3, bank=bank, general=P.DEVELOPMENT_GENERAL)
        per = report["properties"]
        mean = {
            group: float(np.nanmean([(per[p]["more"] + per[p]["less"]) / 2 for p in names if p in per]))
            for group, names in (("older", [n for n in NAMES[:k] if n not in OF_2025]), ("of 2025", OF_2025))
        }
        right = {"older": [0, 0], "of 2025": [0, 0]}
        for phrasing in bank:
            tally = right["of 2025" if phrasing.prop in OF_2025 else "older"]
            tally[0] += read_right(judge.criteria([phrasing.text]).weights, NAMES.index(phrasing.prop), phrasing.sign)
            tally[1] += 1
        lifted = gained.gain is not None and gained.gain > 1
        results["factors"][str(factor)] = {
            "gain": {} if gained.gain is None else {NAMES[i]: [round(float(x), 2) for x in gained.gain[i]]
                                                    for i in range(k) if lifted[i].any()},
            "magnitude": {NAMES[i]: [round(float(x), 3) for x in gained.magnitude[i]] for i in range(k)
                          if gained.gain is not None and lifted[i].any()},
            "pairs_mean_of_both_directions": {g: round(v, 4) for g, v in mean.items()},
            "read_right": right, "combined": report["combined"], "silent_agreement": report["silent_agreement"],
            "per_property": per}  # fmt: skip
        print(factor, json.dumps({key: results["factors"][str(factor)][key] for key in
                                  ("pairs_mean_of_both_directions", "read_right", "combined", "silent_agreement")}),
              flush=True)  # fmt: skip
    if args.output:
        args.output.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
