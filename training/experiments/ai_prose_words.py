"""Build the word list behind the `ai_prose` property (crm_core/ai_prose_words.txt): words that many 2025 models use
far more often than human-written English does.

The model side is the creative bench's answers to its development prompts (half of the 300 by a hash of the
prompt's source id; the other half checks the property); the human side is `wordfreq`'s English frequencies (books,
subtitles, news, web text, Wikipedia). A word is listed when

- its rate in the models' answers is at least RATIO times its human rate (both per million words),
- at least half the models use it at least RATIO times as often as people do (one model's habit is not the
  machine's voice),
- it occurs in answers to at least a fifth of the prompts (a word a prompt asks for, "soulmate", is not), and
- the models use it at least MIN_RATE times per million words (a rare word adds nothing to a rate).

Fiction uses some words more than general English does ("whispered"); the list keeps those that pass the ratio,
as readers of 2025's model fiction meet them over and over. The list is written with the models' rate of each
word and how many models pass the ratio; wordfreq's figures are read at build time and not stored (its data is
CC BY-SA 4.0).

    uv run python training/experiments/ai_prose_words.py --output packages/crm-core/src/crm_core/ai_prose_words.txt
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

RATIO = 8.0
MIN_RATE = 20.0  # per million words
PROMPT_SHARE = 0.2
WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")


def development_prompt(source_id: str) -> bool:
    return hashlib.sha256(source_id.encode()).digest()[0] % 2 == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", type=Path, default=Path("../shared/data/usl/creative"),
                        help="the creative bench folder (instructions.jsonl, model_outputs.jsonl.gz)")  # fmt: skip
    parser.add_argument("--output", type=Path, required=True, help="the word list to write")
    args = parser.parse_args()
    from wordfreq import word_frequency

    with open(args.bench / "instructions.jsonl", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    development = {r["idx"] for r in rows if development_prompt(r["source_id"])}
    per_model: dict[str, Counter] = defaultdict(Counter)
    prompts_with: dict[str, set[int]] = defaultdict(set)
    with gzip.open(args.bench / "model_outputs.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["idx"] not in development:
                continue
            words = WORD.findall(row["output"].lower().replace("’", "'"))
            per_model[row["model"]].update(words)
            for word in set(words):
                prompts_with[word].add(row["idx"])
    totals = {m: sum(c.values()) for m, c in per_model.items()}
    pooled: Counter = Counter()
    for counts in per_model.values():
        pooled.update(counts)
    all_words = sum(totals.values())
    listed = []
    for word, count in pooled.items():
        rate = 1e6 * count / all_words
        if len(word) < 4 or rate < MIN_RATE or len(prompts_with[word]) < PROMPT_SHARE * len(development):
            continue
        human = max(1e6 * word_frequency(word, "en"), 0.05)  # wordfreq's floor: unseen words count as rare, not 0
        if rate < RATIO * human:
            continue
        models_over = sum(1e6 * per_model[m][word] / totals[m] >= RATIO * human for m in per_model)
        if models_over >= len(per_model) / 2:
            listed.append((word, rate, human, models_over))
    listed.sort(key=lambda x: -x[1] / x[2])
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as handle:
        handle.write(
            f"# built by training/experiments/ai_prose_words.py from {len(development)} creative prompts' "
            f"answers by {len(per_model)} models ({all_words:,} words) against wordfreq's English\n"
        )
        handle.write(f"# word, models' rate per million words, models using it >= {RATIO:g}x as often as people do\n")
        for word, rate, _, models_over in listed:
            handle.write(f"{word}\t{rate:.1f}\t{models_over}\n")
    print(f"{len(listed)} words -> {args.output}")


if __name__ == "__main__":
    main()
