"""How often a sentence about the visitor's own questions is read as a wish for questions back, as served.

The readers learned `question_back` (the answer asks the visitor something) from the word "question", so "My
questions are usually about cooking." weighed +2.79 for answers that ask questions back. The word lists' VERSION 39
tells the visitor's questions from the answer's (`cues.questions_are_the_visitors`) and the heads drop such a reading
(`heads._not_questions_back`). This counts, for the two sets of development.toml `visitors_questions` (the design set
the rule was written on, and one written before it and kept unread until it was made), the sentences whose strongest
reading is questions back and those with any questions-back weight of 0.05 or more; and, as a check that the rule
leaves real wishes for questions back alone, the development banks' question_back phrasings read right.

    USL_EMBEDDINGS=data/embeddings uv run python training/experiments/visitors_questions.py \
        --output training/experiments/results/visitors_questions.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def count(scorer, texts: list[str]) -> dict:
    """Of these sentences as served: how many read mostly as questions back, how many carry any such weight."""
    from crm_core.properties import NAMES

    k = NAMES.index("question_back")
    weights = [scorer.criteria_side([t]).weights.reshape(-1) for t in texts]
    strongest = [bool(np.any(w)) and int(np.argmax(np.abs(w))) == k for w in weights]
    return {"sentences": len(texts), "question_back strongest": int(sum(strongest)),
            "any question_back weight": int(sum(abs(float(w[k])) >= 0.05 for w in weights)),
            "read as questions back": [t for t, s in zip(texts, strongest, strict=True) if s]}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    from crm_core.compositional.cues import VERSION
    from crm_core.compositional.scorer import CompositionalScorer
    from crm_core.properties import NAMES
    from crm_train.compositional import phrasings as P

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=REPO / "space/models/crm-compositional",
                        help="a compositional CRM folder, read as served")  # fmt: skip
    parser.add_argument("--output", type=Path, help="write the counts as JSON here")
    args = parser.parse_args(argv)
    scorer = CompositionalScorer(args.model, backend="auto")
    results: dict = {"cues VERSION": VERSION}
    for name, texts in P.development_sentences("visitors_questions").items():
        results[name] = count(scorer, texts)
        print(f"{name}: {results[name]['question_back strongest']} of {len(texts)} read mostly as questions back, "
              f"{results[name]['any question_back weight']} with any such weight", file=sys.stderr)  # fmt: skip
    k = NAMES.index("question_back")
    wishes = [p for bank in P.reading_banks().values() for p in bank if p.prop == "question_back"]
    right = 0
    for p in wishes:
        w = scorer.criteria_side([p.text]).weights.reshape(-1)
        right += int(bool(np.any(w)) and int(np.argmax(np.abs(w))) == k and bool(np.sign(w[k]) == p.sign))
    results["development question_back wishes read right"] = {"right": right, "phrasings": len(wishes)}
    print(f"development question_back wishes read right: {right} of {len(wishes)}", file=sys.stderr)
    if args.output:
        args.output.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
