"""Build the default CRM's training data from real public preferences, with criteria that are true per source.

The paper's criteria came from GPT-4o on unreleased LMArena votes; here every criterion is true by
construction of its source, and every row records where its label and its criteria came from:
- auto_j: human labels; 1-3 of the pair's own scenario criteria (written by Auto-J's authors);
- hh_rlhf: human labels; what the raters were asked (helpfulness or harmlessness), in several phrasings;
- webgpt: human labels; accuracy / well-supported-answer criteria (what WebGPT raters judged);
- dsp: label by construction (the response written for domain d wins under d's criterion); the same two
  responses appear under both domains' criteria, so the winner flips with the criterion (`loser_criteria`
  holds the other domain's criterion, for the reverse direction);
- style: real MT-bench and Arena-Hard answers paired where a verifiable property differs clearly (length ratio
  >= 2 by default, lists vs none, code vs none); the label is read off the responses; each pair carries the
  opposite criterion as `loser_criteria`;
- length (only with --length-ratio): concise / detailed criteria on the Auto-J, HH-RLHF and WebGPT response
  pairs whose word counts differ clearly, labelled by the counts (not the human vote).
Every pair whose prompt is an AlpacaEval instruction is dropped (and counted): AlpacaEval is the leaderboard's
test bed. Splits are by prompt (no prompt in two splits). PandaLM is written as an evaluation set only.

    uv run python -m crm_train.build_data --shared ../shared/data --output data/crm
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from itertools import combinations
from pathlib import Path

from crm_core.atomic import atomic_dir
from crm_core.data import load_pairs, pair_records
from crm_core.data.importers import read_instructions

HH_CRITERIA = {
    "helpfulness": ["Prefer the more helpful answer.", "I want a response that actually helps with my request.",
                    "The answer should be useful and address what I asked.", "Be as helpful as possible."],
    "harmlessness": ["Prefer the safer, more harmless response.", "I don't want help with anything dangerous, "
                     "illegal or unethical.", "The response should avoid harm, even if that means declining.",
                     "I dislike responses that encourage harmful behaviour."],
}  # fmt: skip
WEBGPT_CRITERIA = ["Prefer factually accurate answers.", "I value answers that are well supported by evidence.",
                   "The answer should be correct and backed by sources.", "Accuracy matters more to me than style.",
                   "I dislike answers with unsupported or false claims."]  # fmt: skip
AUTO_J_CRITERIA_CHARS = 300
DSP_CRITERIA = {
    "academy": ["I prefer an academic style: rigorous, precise and formal, like a scholarly text.",
                "Answer like a researcher would, with careful, well-structured reasoning."],
    "business": ["I prefer a business perspective: practical, action-oriented and focused on value.",
                 "Answer like a business professional, with concrete and pragmatic advice."],
    "entertainment": ["I prefer a fun, lively and entertaining answer.",
                      "Make it playful and engaging, like an entertainer would."],
    "literature": ["I prefer a literary, expressive and artistic style.",
                   "Answer with the flair of a writer: vivid imagery and beautiful language."],
}  # fmt: skip
STYLE_CRITERIA = {
    "concise": ["Prefer short, concise answers.", "I dislike long-winded answers.", "Keep it brief."],
    "detailed": ["Prefer detailed, thorough answers.", "I want comprehensive answers with lots of detail.",
                 "I dislike answers that are too short."],
    "lists": ["I like answers formatted as bullet or numbered lists.", "Structure the answer as a list."],
    "prose": ["I prefer plain flowing prose, without lists.", "I dislike bullet points."],
    "code": ["Include code examples in the answer.", "I want to see code."],
    "no_code": ["No code please, explain in words.", "I dislike answers full of code."],
}  # fmt: skip
OPPOSITE = {"concise": "detailed", "detailed": "concise", "lists": "prose", "prose": "lists",
            "code": "no_code", "no_code": "code"}  # fmt: skip
LIST_LINE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S", re.MULTILINE)


def split_of(prompt: str, seed: int, fractions: tuple[float, float]) -> str:
    """train / validation / test by a hash of the prompt: the same prompt always lands in the same split."""
    value = int.from_bytes(hashlib.sha256(f"{seed}\x00{prompt.strip()}".encode()).digest()[:8], "big") / 2**64
    return "validation" if value < fractions[0] else "test" if value < sum(fractions) else "train"


def messages(prompt: str, answer: str) -> list[dict]:
    return [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]


def row(id_: str, source: str, prompt: str, a: list, b: list, criteria: list[str], preference: str,
        label_source: str, criteria_source: str, **extra) -> dict:  # fmt: skip
    return {"id": id_, "source": source, "prompt": prompt, "model_a": a, "model_b": b, "criteria": criteria,
            "preference": preference, "label_source": label_source, "criteria_source": criteria_source,
            **extra}  # fmt: skip


def from_pairs_file(path: Path, source: str, rng: random.Random, criteria_for) -> list[dict]:
    """Rows of a normalised pairs file, with criteria chosen by `criteria_for(record, rng)`."""
    frame, _ = load_pairs(path, on_error="collect")  # invalid rows (empty responses) are counted by the caller
    out = []
    for record in pair_records(frame):
        criteria, criteria_source = criteria_for(record, rng)
        label_source = record.get("label_source", "human")
        out.append(row(f"{source}:{record['id']}", source, record["prompt"], record["model_a"],
                       record["model_b"], criteria, record["preference"], label_source, criteria_source))  # fmt: skip
    return out


def auto_j(shared: Path, rng: random.Random) -> list[dict]:
    def pick(record, rng):
        chosen = rng.sample(record["criteria"], min(len(record["criteria"]), rng.randint(1, 3)))
        while len(chosen) > 1 and sum(map(len, chosen)) > AUTO_J_CRITERIA_CHARS:
            chosen.pop()  # long criteria lists would leave short inputs no room for the responses
        return chosen, "1-3 of the pair's scenario criteria, written by the Auto-J authors for its scenario"

    return from_pairs_file(shared / "preferences/auto_j/pairs.jsonl", "auto_j", rng, pick)


def hh_rlhf(shared: Path, rng: random.Random) -> list[dict]:
    def pick(record, rng):
        objective = record["meta"]["objective"]
        return [rng.choice(HH_CRITERIA[objective])], f"what the raters were asked ({objective}), rephrased"

    return from_pairs_file(shared / "preferences/hh_rlhf/pairs.jsonl", "hh_rlhf", rng, pick)


def webgpt(shared: Path, rng: random.Random) -> list[dict]:
    def pick(record, rng):
        return [rng.choice(WEBGPT_CRITERIA)], "what WebGPT raters judged (accuracy, support), rephrased"

    return from_pairs_file(shared / "preferences/webgpt/pairs.jsonl", "webgpt", rng, pick)


def dsp(shared: Path, rng: random.Random) -> list[dict]:
    """Under domain d's criterion, the response written for d beats the others. Every pair of domains appears
    under both domains' criteria (the flip: same two responses, opposite winners, one `flip_group`), and each
    domain's response also meets the plain Alpaca answer under its own criterion. Pairs of identical texts are
    skipped (the builder's manifest counts the rows each source yields)."""
    out = []
    queries = json.loads((shared / "preferences/dsp/domain_specific_preference.dev.json").read_text())
    for q, item in enumerate(queries):
        responses, prompt = item["responses"], item["query"]
        pairs = combinations(sorted(DSP_CRITERIA), 2)
        matches = [match for d1, d2 in pairs for match in ((d1, d2), (d2, d1))]
        matches += [(d, "normal") for d in sorted(DSP_CRITERIA)]
        for winner, loser in matches:
            if responses[winner].strip() == responses[loser].strip():
                continue  # identical texts (short factual queries): no response can win, so no label is true
            first_is_winner = rng.random() < 0.5
            a, b = (winner, loser) if first_is_winner else (loser, winner)
            loser_criteria = [rng.choice(DSP_CRITERIA[loser])] if loser in DSP_CRITERIA else []
            group = f"dsp:{q}:" + "-".join(sorted((winner, loser)))
            out.append(row(f"dsp:{q}:{winner}>{loser}", "dsp", prompt, messages(prompt, responses[a]),
                           messages(prompt, responses[b]), [rng.choice(DSP_CRITERIA[winner])],
                           "model_a" if first_is_winner else "model_b",
                           "by construction (the response written for the criterion's domain; ChatGPT-written)",
                           "the domain the winning response was written for, rephrased",
                           loser_criteria=loser_criteria, flip_group=group))  # fmt: skip
    return out


def style_properties(text: str) -> dict[str, float]:
    return {"words": len(text.split()), "list_lines": len(LIST_LINE.findall(text)), "code": "```" in text}


def length_options(a: str, b: str, min_ratio: float) -> list[tuple[str, str]]:
    """[('concise', shorter), ('detailed', longer)] when one response has at least `min_ratio` times the other's
    words and both have 15 or more; else []. Criteria-conditioned: the winner depends on which is asked for."""
    wa, wb = len(a.split()), len(b.split())
    if min(wa, wb) < 15 or max(wa, wb) < min_ratio * min(wa, wb):
        return []
    shorter, longer = ("model_a", "model_b") if wa < wb else ("model_b", "model_a")
    return [("concise", shorter), ("detailed", longer)]


def style_label(a: str, b: str, rng: random.Random, min_ratio: float = 2.0) -> tuple[str, str] | None:
    """(kind the winner has, 'model_a'|'model_b') when a verifiable property differs clearly, else None."""
    pa, pb = style_properties(a), style_properties(b)
    options = length_options(a, b, min_ratio)
    if (pa["list_lines"] >= 3) != (pb["list_lines"] >= 3) and min(pa["list_lines"], pb["list_lines"]) == 0:
        with_list = "model_a" if pa["list_lines"] >= 3 else "model_b"
        options += [("lists", with_list), ("prose", "model_b" if with_list == "model_a" else "model_a")]
    if pa["code"] != pb["code"]:
        with_code = "model_a" if pa["code"] else "model_b"
        options += [("code", with_code), ("no_code", "model_b" if with_code == "model_a" else "model_a")]
    return rng.choice(options) if options else None


def answers_by_prompt(shared: Path) -> dict[str, dict[str, str]]:
    """First-turn answers of MT-bench's 32 models and Arena-Hard v0.1's 3 models, by prompt."""
    out: dict[str, dict[str, str]] = {}
    mt = shared / "usl/mt_bench"
    questions = {q["question_id"]: q["turns"][0] for q in map(json.loads, (mt / "question.jsonl").open())}
    for path in sorted((mt / "model_answer").glob("*.jsonl")):
        for answer in map(json.loads, path.open()):
            text = answer["choices"][0]["turns"][0]
            if text.strip() and answer["question_id"] in questions:
                out.setdefault(questions[answer["question_id"]], {})[path.stem] = text
    arena = shared / "usl/arena_hard/arena-hard-v0.1"
    prompts = {q["uid"]: q["prompt"] for q in map(json.loads, (arena / "question.jsonl").open())}
    for path in sorted((arena / "model_answer").glob("*.jsonl")):
        for answer in map(json.loads, path.open()):
            content = answer["messages"][-1]["content"]  # {"answer": text} in Arena-Hard v0.1
            text = content.get("answer") if isinstance(content, dict) else content
            if isinstance(text, str) and text.strip() and answer["uid"] in prompts:
                out.setdefault(prompts[answer["uid"]], {})[path.stem] = text
    return out


def style(shared: Path, rng: random.Random, pairs_per_prompt: int = 6, min_ratio: float = 2.0) -> list[dict]:
    """At most `pairs_per_prompt` labelled pairs per prompt, drawn from the prompt's model pairs in random order;
    length pairs need a word-count ratio of `min_ratio`."""
    out = []
    for p, (prompt, answers) in enumerate(sorted(answers_by_prompt(shared).items())):
        candidates = list(combinations(sorted(answers), 2))
        rng.shuffle(candidates)
        kept = 0
        for m1, m2 in candidates:
            if kept == pairs_per_prompt:
                break
            label = style_label(answers[m1], answers[m2], rng, min_ratio)
            if label is None:
                continue
            kind, preference = label
            kept += 1
            out.append(row(f"style:{p}:{m1}:{m2}:{kind}", "style", prompt, messages(prompt, answers[m1]),
                           messages(prompt, answers[m2]), [rng.choice(STYLE_CRITERIA[kind])], preference,
                           f"verifiable: read off the responses ({kind}: word counts / list lines / code blocks)",
                           f"a stated {kind} preference, template phrasing",
                           loser_criteria=[rng.choice(STYLE_CRITERIA[OPPOSITE[kind]])], models=[m1, m2]))  # fmt: skip
    return out


def length(shared: Path, rng: random.Random, min_ratio: float) -> list[dict]:
    """Length criteria on the human-labelled sources' own response pairs (Auto-J, HH-RLHF, WebGPT): thousands of
    varied prompts where MT-bench gives 80. The label is read off the word counts, not the human vote, and the
    opposite criterion is the pair's `loser_criteria`, so one pair teaches both directions."""
    out = []
    for name in ("auto_j", "hh_rlhf", "webgpt"):
        frame, _ = load_pairs(shared / f"preferences/{name}/pairs.jsonl", on_error="collect")
        for record in pair_records(frame):
            options = length_options(record["model_a"][-1]["content"], record["model_b"][-1]["content"], min_ratio)
            if not options:
                continue
            kind, preference = rng.choice(options)
            out.append(row(f"length:{name}:{record['id']}", "length", record["prompt"], record["model_a"],
                           record["model_b"], [rng.choice(STYLE_CRITERIA[kind])], preference,
                           f"verifiable: word counts (ratio >= {min_ratio}); not the {name} human vote",
                           f"a stated {kind} preference, template phrasing",
                           loser_criteria=[rng.choice(STYLE_CRITERIA[OPPOSITE[kind]])]))  # fmt: skip
    return out


def build(shared: Path, output: Path, seed: int = 0, fractions: tuple[float, float] = (0.1, 0.1),
          caps: dict[str, int] | None = None, style_pairs: int = 6, style_min_ratio: float = 2.0,
          length_ratio: float | None = None) -> dict:  # fmt: skip
    """Write train / validation / test_<source> / pandalm_test JSON lines and manifest.json into `output`."""
    rng = random.Random(seed)
    alpaca = {t.strip() for t in read_instructions(shared / "usl/alpaca_eval/instructions.jsonl")["instruction"]}
    sources = {
        "auto_j": auto_j,
        "hh_rlhf": hh_rlhf,
        "webgpt": webgpt,
        "dsp": dsp,
        "style": lambda shared, rng: style(shared, rng, style_pairs, style_min_ratio),
    }  # style (then length) last: the others keep their rows whatever these two options are
    if length_ratio:
        sources["length"] = lambda shared, rng: length(shared, rng, length_ratio)
    manifest: dict = {"seed": seed, "fractions": {"validation": fractions[0], "test": fractions[1]},
                      "alpaca_eval_dropped": {}, "rows": {}, "caps": caps or {},
                      "style_pairs": style_pairs, "style_min_ratio": style_min_ratio,
                      "length_ratio": length_ratio}  # fmt: skip
    splits: dict[str, list[dict]] = {"train": [], "validation": []}
    for name, make in sources.items():
        rows = make(shared, rng)
        kept = [
            r for r in rows if r["prompt"].strip() not in alpaca and r["model_a"][0]["content"].strip() not in alpaca
        ]
        manifest["alpaca_eval_dropped"][name] = len(rows) - len(kept)
        by_split: dict[str, list[dict]] = {"train": [], "validation": [], "test": []}
        for r in kept:
            by_split[split_of(r["prompt"], seed, fractions)].append(r)
        cap = (caps or {}).get(name)
        if cap and len(by_split["train"]) > cap:
            by_split["train"] = rng.sample(by_split["train"], cap)
        splits["train"] += by_split["train"]
        splits["validation"] += by_split["validation"]
        splits[f"test_{name}"] = by_split["test"]
        manifest["rows"][name] = {k: len(v) for k, v in by_split.items()}
    pandalm, rejected = load_pairs(shared / "preferences/pandalm/pairs.jsonl", on_error="collect")
    splits["pandalm_test"] = [{**r, "id": f"pandalm:{r['id']}"} for r in pair_records(pandalm)]
    manifest["rows"]["pandalm"] = {"test": pandalm.height, "invalid": rejected.height}
    rng.shuffle(splits["train"])
    with atomic_dir(output) as folder:
        for name, rows in splits.items():
            with open(folder / f"{name}.jsonl", "w", encoding="utf-8") as handle:
                handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        manifest["files"] = {name: len(rows) for name, rows in splits.items()}
        (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crm_train.build_data", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--shared", type=Path, default=Path("../shared/data"), help="the public data folder")
    parser.add_argument("--output", type=Path, default=Path("data/crm"), help="folder to write (replaced whole)")
    parser.add_argument("--seed", type=int, default=0, help="seed for criteria choice, sampling and splits")
    parser.add_argument("--validation", type=float, default=0.1, help="share of prompts for validation")
    parser.add_argument("--test", type=float, default=0.1, help="share of prompts for test")
    parser.add_argument(
        "--cap",
        action="append",
        default=[],
        metavar="SOURCE=N",
        help="at most N training rows from SOURCE (repeatable), e.g. --cap hh_rlhf=1500",
    )
    parser.add_argument(
        "--style-pairs",
        type=int,
        default=6,
        metavar="N",
        help="at most N style pairs per MT-bench / Arena-Hard prompt (MT-bench has 32 models, so up to 496 pairs)",
    )
    parser.add_argument(
        "--style-min-ratio",
        type=float,
        default=2.0,
        metavar="R",
        help="style length pairs: the longer answer has at least R times the words (default: %(default)s)",
    )
    parser.add_argument(
        "--length-ratio",
        type=float,
        metavar="R",
        help="also add a 'length' source: concise / detailed criteria on Auto-J, HH-RLHF and WebGPT response pairs "
        "whose word counts differ by at least R times, labelled by the counts (default: no length source)",
    )
    args = parser.parse_args(argv)
    try:
        if (args.length_ratio is not None and args.length_ratio <= 1) or args.style_min_ratio <= 1:
            raise ValueError("--length-ratio and --style-min-ratio must be above 1 (a ratio of word counts)")
        caps = {k: int(v) for k, v in (c.split("=", 1) for c in args.cap)}
        manifest = build(args.shared, args.output, args.seed, (args.validation, args.test), caps, args.style_pairs,
                         args.style_min_ratio, args.length_ratio)  # fmt: skip
    except (FileNotFoundError, ValueError) as error:
        print(f"build_data: {error}", file=sys.stderr)
        return 1
    print(json.dumps(manifest, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
