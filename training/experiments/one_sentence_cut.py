"""Would "one sentence where the bench's other answers run long" find the cut-off junk? Counts per bench, not served.

benchmarks/bench_boards.py's first-sentence junk (the baseline's answer cut after its first sentence) stays above two
real models on MT-bench, where answers run 100-200 words: too short for the served cut-short rule (four doublings
under the median of the other answers, where that median is 128 words or more). A candidate: an answer of one
sentence (no line break, at most one sentence end) at least D doublings shorter than the median of the other
models' answers to the prompt, where that median is at least M words. For each (D, M) this counts what the rule
would flag: every real answer (and the concise/verbose twins apart), and the junk. Choices are made on development
data (AlpacaEval's training half, speechmap's and creative's development prompts); MT-bench is a check.

    uv run python training/experiments/one_sentence_cut.py --output training/experiments/results/one_sentence_cut.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "training/experiments"))
END = re.compile(r"[.!?\u3002\uff01\uff1f](?=\s|$)")
# a prompt that asks for a piece of writing, to which one sentence is no answer whatever it says (--pieces)
PIECE = re.compile(r"\b(?:write|compose|draft|craft|create|develop|design|produce|generate|prepare)\b[^.?!]*?"
                   r"\b(?:essays?|stor(?:y|ies)|poems?|emails?|e-mails?|letters?|blog|posts?|articles?|scripts?|"
                   r"speech|reports?|plans?|proposals?|guides?|reviews?|descriptions?|dialogues?|songs?|lyrics|"
                   r"outlines?|itinerar(?:y|ies)|programs?|functions?|code|tutorials?|lessons?|memos?|announcements?|"
                   r"advertisements?|ads?|pitch|narratives?|paragraphs?|summary|summaries|press release)\b",
                   re.IGNORECASE)  # fmt: skip


def one_sentence(text: str) -> bool:
    text = text.strip()
    return "\n" not in text and len(END.findall(text)) <= 1


def development_ids(name: str, folder: Path, prompts: dict[int, str]) -> set[int] | None:
    """The prompts a choice may use: AlpacaEval's training half, the development half of speechmap and creative;
    None for MT-bench (all of it, as a check)."""
    from bench_boards import development_prompt
    from crm_train.compositional.sources import alpaca_train_half

    if name == "alpaca_eval":
        return {i for i, text in prompts.items() if alpaca_train_half(text)}
    if name in ("speechmap", "creative"):
        with open(folder / "instructions.jsonl", encoding="utf-8") as handle:
            sources = {row["idx"]: row.get("source_id", str(row["idx"])) for row in map(json.loads, handle)}
        return {i for i in prompts if development_prompt(sources[i])}
    return None


def count(name: str, folder: Path, doublings: float, least_words: int, pieces: bool = False) -> dict:
    from bench_boards import BASELINES, FIRST_SENTENCE
    from crm_core.nonanswer import length_units
    from preamble_counts import mt_bench, usl_bench

    prompts, answers = mt_bench(folder) if name == "mt_bench" else usl_bench(folder)
    keep = development_ids(name, folder, prompts)
    by_prompt: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for idx, model, text in answers:
        if (keep is None or idx in keep) and (not pieces or PIECE.search(prompts[idx])):
            by_prompt[idx].append((model, text))
    flagged, total, junk = Counter(), Counter(), [0, 0]
    for rows in by_prompt.values():
        log_words = {model: np.log2(1 + length_units(text)) for model, text in rows}
        base = dict(rows).get(BASELINES[name])
        candidates = list(rows)
        if base is not None:
            first = FIRST_SENTENCE.match(base.strip())
            cut = first.group(1) if first else base.strip()[:200]
            candidates.append(("junk", cut))
            log_words["junk"] = np.log2(1 + length_units(cut))
        for model, text in candidates:
            median = float(np.median([log_words[m] for m, _ in rows if m != model]))
            hit = one_sentence(text) and median >= np.log2(1 + least_words) and log_words[model] < median - doublings
            if model == "junk":
                junk[0] += int(hit)
                junk[1] += 1
            else:
                flagged[model] += int(hit)
                total[model] += 1
    twins = sum(n for m, n in flagged.items() if m.endswith(("_concise", "_verbose")))
    return {"real flagged": sum(flagged.values()), "real answers": sum(total.values()), "twins flagged": twins,
            "junk flagged": junk[0], "junk answers": junk[1],
            "most flagged": {m: n for m, n in flagged.most_common(6) if n}}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument("--doublings", type=float, nargs="+", default=[2.0, 3.0],
                        help="D: doublings of words under the others' median")  # fmt: skip
    parser.add_argument("--least-words", type=int, nargs="+", default=[48, 96],
                        help="M: the others' median must be at least this many words")  # fmt: skip
    parser.add_argument("--pieces", action="store_true",
                        help="only prompts that ask for a piece of writing (an essay, email, story, code)")  # fmt: skip
    parser.add_argument("--output", type=Path, help="write the counts here (JSON)")
    args = parser.parse_args(argv)
    result: dict = {}
    for d in args.doublings:
        for m in args.least_words:
            key = f"D={d:g} M={m}"
            result[key] = {}
            for name in ("alpaca_eval", "speechmap", "creative", "mt_bench"):
                r = count(name, args.shared / "usl" / name, d, m, args.pieces)
                result[key][name] = r
                real = f"real {r['real flagged']} of {r['real answers']} (twins {r['twins flagged']})"
                print(f"{key} {name}: {real}, junk {r['junk flagged']} of {r['junk answers']}; "
                      f"most: {r['most flagged']}", flush=True)  # fmt: skip
    if args.output:
        args.output.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
