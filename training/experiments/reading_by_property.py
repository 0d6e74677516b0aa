"""Where the criteria reader fails, property by property: each development phrasing read as the CRM serves it
(readers, phrasing memory, soft strength; the two development banks and the whole sentences asking for length in
units of text), then sorted into read right, another property strongest, its property strongest but the wrong way,
or nothing read. The judge report's failures are length wishes, so this says how far the served reading of length
wishes is from the other properties', and how it fails (docs/experiments.md).

    USL_EMBEDDINGS=data/embeddings uv run python training/experiments/reading_by_property.py \\
        --output training/experiments/results/reading_by_property.json
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

# the failures issue 56 quoted (2026-11-26), each with the property and direction it asks for: a check only,
# never in a bank (reported apart from the development banks, which choices may use)
ISSUE_EXAMPLES = [("Spare no detail.", "words", 1), ("Not too wordy.", "words", -1),
                  ("Nothing too long, please.", "words", -1), ("Skip the elaboration.", "words", -1),
                  ("Lots of dialogue, please.", "dialogue", 1), ("I hate clichéd, AI-sounding prose.", "ai_prose", -1),
                  ("Answer in the language I wrote in.", "other_language", -1),
                  ("Do exactly what I ask. Don't refuse, deflect or lecture me.", "nonanswer", -1),
                  ("I prefer models that decline to write political attacks.", "nonanswer", 1)]  # fmt: skip


def verdict(weights: np.ndarray, prop: int, sign: int) -> str:
    """right / other property / wrong direction / nothing, by the strongest weight (as read_right judges)."""
    if not np.any(weights):
        return "nothing"
    strongest = int(np.argmax(np.abs(weights)))
    if strongest != prop:
        return "other property"
    return "right" if np.sign(weights[strongest]) == sign else "wrong direction"


def training_read_back(scorer) -> dict:
    """Verdict counts for training phrasings read back as a visitor typing them would have them read: the soft
    side (a sentence with never / always / must is a must criterion, counted apart), by the readers alone (no
    phrasing memory, no soft strength) and as served."""
    import random

    from crm_core.compositional.scorer import is_must
    from crm_core.properties import NAMES
    from crm_train.compositional import phrasings as P

    whole = P.training_sentences()
    drawn = random.Random(0).sample(P.training_bank(0, 0.0, wide=True), 1500)
    heads, out = scorer.heads, {}
    memory, served = heads.memory, heads.serving
    for name, bank in (("whole sentences", whole), ("1,500 of the wide bank", drawn)):
        out[name] = {"must criteria": sum(is_must(p.text) for p in bank)}
        for stage in ("readers alone", "as served"):
            alone = stage == "readers alone"
            heads.memory, heads.serving = (None, replace(served, soft_strength=0.0)) if alone else (memory, served)
            said = collections.Counter(verdict(scorer.criteria_sides([p.text])[0].weights, NAMES.index(p.prop), p.sign)
                                       for p in bank if not is_must(p.text))  # fmt: skip
            out[name][stage] = dict(said)
            print(f"{name}, {stage}: {dict(said)}")
    heads.memory, heads.serving = memory, served
    return out


def shown(path: Path) -> str:
    """A model folder as the results file names it: relative to the repository where it lies inside it (a run from
    another checkout of the code passes an absolute path), else its name, so no machine's path is committed."""
    resolved = path.resolve()
    repo = Path(__file__).resolve().parents[2]
    return str(resolved.relative_to(repo)) if resolved.is_relative_to(repo) else path.name


def main(argv: list[str] | None = None) -> int:
    from crm_core.compositional.scorer import CompositionalScorer
    from crm_core.properties import NAMES, OF_2025
    from crm_train.compositional import phrasings as P

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=Path("space/models/crm-compositional"),
                        help="a compositional CRM folder, read as served")  # fmt: skip
    parser.add_argument("--output", type=Path, help="write the results as JSON here")
    parser.add_argument("--training", action="store_true",
                        help="instead: the training bank's own phrasings read back (its 120 whole sentences, and "
                        "1,500 drawn from the wide bank, seed 0), by the readers alone and as served")  # fmt: skip
    parser.add_argument("--bank", action="append", metavar="NAME",
                        help="read only this development set (repeatable; names as phrasings.reading_banks() gives "
                        "them, e.g. 'wishes as typed, eighth set (dialogue)')")  # fmt: skip
    parser.add_argument("--validation", action="store_true",
                        help="instead: the validation bank (never trained on, never a choice's data), for reporting "
                        "a choice once it is made")  # fmt: skip
    args = parser.parse_args(argv)
    scorer = CompositionalScorer(args.model, backend="auto")
    if args.training:
        results = training_read_back(scorer)
        if args.output:
            args.output.write_text(json.dumps({"model": shown(args.model), "training": results}, indent=1) + "\n")
        return 0
    banks = P.reading_banks() | {"the issue's examples": [P.Phrasing(*example) for example in ISSUE_EXAMPLES]}
    if args.bank:
        unknown = [name for name in args.bank if name not in banks]
        if unknown:
            parser.error(f"no development set named {unknown[0]!r}; known: {', '.join(map(repr, banks))}")
        banks = {name: banks[name] for name in args.bank}
    if args.validation:
        banks = {"validation": P.validation_bank()}
    results: dict = {}
    for name, bank in banks.items():
        counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        misread: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for p in bank:
            weights = scorer.criteria_side([p.text]).weights.reshape(-1)
            if NAMES.index(p.prop) >= len(weights):  # a CRM fitted before the property existed cannot read it
                weights = np.zeros(len(NAMES))
            said = verdict(weights, NAMES.index(p.prop), p.sign)
            counts[p.prop][said] += 1
            if said == "other property":
                misread[p.prop][NAMES[int(np.argmax(np.abs(weights)))]] += 1
        results[name] = {prop: {"phrasings": sum(c.values()), **c, "read_as": dict(misread[prop].most_common(3))}
                         for prop, c in counts.items()}  # fmt: skip
        words = results[name].get("words")
        rest = [c for prop, c in results[name].items() if prop != "words" and prop not in OF_2025]
        share = sum(c.get("right", 0) for c in rest) / max(sum(c["phrasings"] for c in rest), 1)
        new = [c for prop, c in results[name].items() if prop in OF_2025]
        how = json.dumps({k: v for k, v in (words or {}).items() if k not in ("phrasings", "right")})
        parts = [f"length wishes read right {words.get('right', 0)} of {words['phrasings']} ({how})"] if words else []
        parts += [f"the other properties {share:.3f}"] if rest else []
        parts += ([f"the six of 2026-11-27 {sum(c.get('right', 0) for c in new)} of {sum(c['phrasings'] for c in new)}"]
                  if new else [])  # fmt: skip
        print(f"{name}: " + "; ".join(parts))
    if args.output:
        args.output.write_text(json.dumps({"model": shown(args.model), "banks": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
