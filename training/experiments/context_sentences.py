"""How a sentence that only says who the visitor is ("I'm a nurse.") is read, as served: as context (its voice only),
as nothing, or as some property the visitor never asked for.

The readers read stray properties in some self-descriptions ("I'm writing a lyrical essay." as fewer bullets, -1.48),
which tilt a board; the word lists' VERSION 44 reads such a sentence for its voice (tone, domain) only and names it
(`cues.about_the_visitor`, `CompositionalScorer.context`). This counts, for the two sets of development.toml
`context_sentences` (the design set the rule was written on, and one written before it was measured and kept unread),
how many are read as context, how many read
as nothing the app names (no weight of 0.25 or more) and how many read as a property; and, as the rule's check, how
many development and training wishes it takes for context (none may be).

    USL_EMBEDDINGS=data/embeddings uv run python training/experiments/context_sentences.py \
        --output training/experiments/results/context_sentences.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
NAMED = 0.25  # the weight the app's read-out names (CriteriaSide.explain)


def count(scorer, texts: list[str]) -> dict:
    """Of these sentences as served: read as context (voice only), as nothing the app names, as a property."""
    from crm_core.properties import NAMES

    out: dict = {"sentences": len(texts), "context, voice only": 0, "read as nothing": 0, "read as a property": {}}
    for text in texts:
        if scorer.context(text):
            out["context, voice only"] += 1
            continue
        weights = scorer.criteria_side([text]).weights.reshape(-1)
        if np.abs(weights).max(initial=0.0) < NAMED:
            out["read as nothing"] += 1
        else:
            k = int(np.argmax(np.abs(weights)))
            out["read as a property"][text] = f"{NAMES[k]} {weights[k]:+.2f}"
    return out


def main(argv: list[str] | None = None) -> int:
    from crm_core.compositional.cues import VERSION, about_the_visitor
    from crm_core.compositional.scorer import CompositionalScorer
    from crm_train.compositional import phrasings as P

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=REPO / "space/models/crm-compositional",
                        help="a compositional CRM folder, read as served")  # fmt: skip
    parser.add_argument("--output", type=Path, help="write the counts as JSON here")
    parser.add_argument("--without-rule", action="store_true",
                        help="read every sentence as before VERSION 44: none is read as context")  # fmt: skip
    args = parser.parse_args(argv)
    scorer = CompositionalScorer(args.model, backend="auto")
    if args.without_rule:
        scorer.context = lambda sentence: False
    results: dict = {"cues VERSION": VERSION, "rule": not args.without_rule}
    for name, texts in P.development_sentences("context_sentences").items():
        results[name] = count(scorer, texts)
        found = results[name]
        print(f"{name}: {found['context, voice only']} as context, {found['read as nothing']} read as nothing, "
              f"{len(found['read as a property'])} read as a property, of {len(texts)}", file=sys.stderr)  # fmt: skip
    wishes = {p.text for bank in [*P.reading_banks().values(), P.training_sentences()] for p in bank}
    taken = sorted(t for t in wishes if about_the_visitor(t))
    results["development and training wishes taken for context"] = {"taken": taken, "wishes": len(wishes)}
    print(f"development and training wishes taken for context: {len(taken)} of {len(wishes)}", file=sys.stderr)
    if args.output:
        args.output.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
