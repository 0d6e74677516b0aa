"""What the preamble rule (crm_core.nonanswer.preamble_only) flags on each bench: every real answer, and the junk
entry benchmarks/bench_boards.py builds by cutting the baseline's answer after its first sentence, per bench and per
model, with a few examples of each model's flagged answers so they can be read by hand.

A preamble alone ("Sure!", "Here is a recipe:", "There could be several reasons why ...", "1.", a heading, nothing)
is a non-answer: the rule should flag many cut-off answers and almost no real ones, and the real ones it flags
should read as answers that stop before they start.

    uv run python training/experiments/preamble_counts.py --output training/experiments/results/preamble_counts.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
EXAMPLES = 3


def mt_bench(folder: Path) -> tuple[dict[int, str], list[tuple[int, str, str]]]:
    """(prompts, (question id, model, first-turn answer)) of MT-bench's own layout."""
    prompts = {}
    with open(folder / "question.jsonl", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            prompts[row["question_id"]] = row["turns"][0]
    answers = []
    for path in sorted((folder / "model_answer").glob("*.jsonl")):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                answers.append((row["question_id"], path.stem, row["choices"][0]["turns"][0]))
    return prompts, answers


def usl_bench(folder: Path) -> tuple[dict[int, str], list[tuple[int, str, str]]]:
    """(prompts, (idx, model, answer)) of the layout `usl-data build` reads."""
    with open(folder / "instructions.jsonl", encoding="utf-8") as handle:
        prompts = {row["idx"]: row["instruction"] for row in map(json.loads, handle)}
    with gzip.open(folder / "model_outputs.jsonl.gz", "rt", encoding="utf-8") as handle:
        answers = [(row["idx"], row["model"], row["output"] or "") for row in map(json.loads, handle)]
    return prompts, answers


def count(prompts: dict[int, str], answers: list[tuple[int, str, str]], baseline: str) -> dict:
    from bench_boards import FIRST_SENTENCE
    from crm_core.nonanswer import preamble_only

    flagged, total = Counter(), Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    junk = {"flagged": 0, "answers": 0, "examples": []}
    for idx, model, text in answers:
        if idx not in prompts:
            continue
        total[model] += 1
        if preamble_only(prompts[idx], text):
            flagged[model] += 1
            if len(examples[model]) < EXAMPLES:
                examples[model].append(text.strip()[:120])
        if model == baseline:
            first = FIRST_SENTENCE.match(text.strip())
            cut = first.group(1) if first else text.strip()[:200]
            junk["answers"] += 1
            if preamble_only(prompts[idx], cut):
                junk["flagged"] += 1
                if len(junk["examples"]) < 2 * EXAMPLES:
                    junk["examples"].append(cut[:120])
    return {"real answers": {"flagged": sum(flagged.values()), "answers": sum(total.values())},
            "first sentence alone (junk)": junk,
            "by model": {m: {"flagged": n, "answers": total[m], "examples": examples[m]}
                         for m, n in flagged.most_common()}}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    from bench_boards import BASELINES
    from emit import emit

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument("--output", type=Path, help="write the counts here (JSON)")
    args = parser.parse_args(argv)
    result = {}
    for name, baseline in BASELINES.items():
        folder = args.shared / "usl" / name
        prompts, answers = mt_bench(folder) if name == "mt_bench" else usl_bench(folder)
        result[name] = count(prompts, answers, baseline)
        r = result[name]
        print(f"{name}: real {r['real answers']['flagged']} of {r['real answers']['answers']}, first sentence alone "
              f"{r['first sentence alone (junk)']['flagged']} of {r['first sentence alone (junk)']['answers']}",
              file=sys.stderr)  # fmt: skip
    emit({k: {"real answers": v["real answers"]} for k, v in result.items()}, None)
    if args.output:
        args.output.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
