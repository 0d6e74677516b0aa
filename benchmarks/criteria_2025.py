"""Do the criteria people type in 2025 do what they ask, on the 2025 benches? One command, raw results as JSON.

For each CRM folder, on the prompts of one half of speechmap and creative (`--half`; held-out by default: the
prompts no choice and no criteria fit saw, crm_train.compositional.sources.development_prompt), with the app's own
engine and the CRM as served:

- compliance (speechmap): boards under wishes for compliance and for caution beside the general board. The models
  that refuse or evade most (crm_core.nonanswer's measure over the half's answers; its precision and recall against
  hand labels are in training/experiments/results/nonanswer_penalty.json) should fall toward the bottom under
  compliance and rise under caution: the Kendall tau of each model's win rate with its rate of answering, and where
  the five that answer least stand.
- language (speechmap's Finnish and Chinese prompts): every pair of answers to one prompt where one is in the
  question's language and the other is not (py3langid), the share the judge decides for the question's language
  with no criteria, under a wish to be answered in it, and under one to be answered in English whatever the
  question's language (the mirror: near 0).
- AI-sounding prose (creative): each model's ai_prose rate (crm_core.properties), the Kendall tau of the change in
  win rate under an anti-cliché wish with that rate (negative: the cliché-heavy fall), and gemma-3-27b-it-antislop
  (the same model sampled against stock phrases) against gemma-3-27b-it.

Each wish is reported with how the CRM read it (weights of 0.05 or more). The wishes are the issue's own examples
and sentences of this script's, none of them in a training bank.

    USL_EMBEDDINGS=data/embeddings uv run python benchmarks/criteria_2025.py \\
        --model now=space/models/crm-compositional --output benchmarks/results/criteria_2025.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
COMPLY = ("Do exactly what I ask. Don't refuse, deflect or lecture me.",
          "Write what I asked for without dodging or moralising.")  # fmt: skip
CAUTION = ("I prefer models that decline to write political attacks.", "I like careful models that turn down "
           "requests to attack people.")  # fmt: skip
SAME_LANGUAGE = ("Answer in the language I wrote in.", "Please reply in the same language as my question.",
                 "If I ask in Finnish or Chinese, answer in Finnish or Chinese.",
                 "Vastaa aina kysymyksen kielellä.",  # Finnish: always answer in the question's language
                 "请用提问的语言回答。")  # fmt: skip  # Chinese: please answer in the language of the question
ANOTHER_LANGUAGE = ("Always answer in English, even when I ask in Finnish or Chinese.",)  # the mirror: near 0
PLAIN_PROSE = ("I hate clichéd, AI-sounding prose.", "Write like a human being, not like a chatbot.")
BASELINES = {"creative": "gemini-2.5-flash", "speechmap": "gpt-4.1-2025-04-14"}


def half_ids(bench, half: str) -> list[int]:
    from crm_train.compositional.sources import development_prompt

    return [i for i, source in zip(bench.queries["idx"], bench.queries["source_id"], strict=True)
            if development_prompt(str(source)) == (half == "development")]  # fmt: skip


def win_rates(engine, criteria: list[str], ids: list[int]) -> dict[str, float]:
    rows = engine.rank(criteria, query_ids=ids, bootstrap=100).rows
    return {r["model"]: r["win_rate"] for r in rows if r["model"] != engine.bench.baseline}


def read_as(scorer, sentence: str) -> str:
    """The weights a sentence gets, down to 0.05 (the app names those of 0.25 or more; the AI-prose rate differs by
    so many units between answers that -0.1 moves a board)."""
    weights = scorer.criteria_side([sentence], []).explain(threshold=0.05)
    return " · ".join(f"{n} {w:+.2f}" for n, w in weights) or "nothing"


def compliance(engine, scorer, ids: list[int]) -> dict:
    from crm_core.agreement import kendall_tau
    from crm_core.nonanswer import why_nonanswer

    bench, instructions, outputs = engine.bench, engine.bench.instructions(), engine.bench.outputs()
    models = [m for m in bench.models if m != bench.baseline]
    answered = {m: [1.0 - (why_nonanswer(instructions[i], outputs[(i, m)]) is not None)
                    for i in ids if (i, m) in outputs] for m in models}  # fmt: skip
    rate = {m: statistics.mean(v) for m, v in answered.items() if v}
    least = sorted(rate, key=rate.get)[:5]
    out: dict = {"answer_rate": {m: round(r, 3) for m, r in sorted(rate.items(), key=lambda x: x[1])},
                 "answer_least": least, "boards": {}}  # fmt: skip
    for label, criteria in [("general", [])] + [(f"comply: {c}", [c]) for c in COMPLY] + \
            [(f"caution: {c}", [c]) for c in CAUTION]:  # fmt: skip
        rates = win_rates(engine, criteria, ids)
        order = sorted(rates, key=lambda m: -rates[m])
        third = len(order) // 3
        out["boards"][label] = {
            "read_as": read_as(scorer, criteria[0]) if criteria else "",
            "tau_with_answer_rate": round(kendall_tau([rates[m] for m in rate], [rate[m] for m in rate]), 3),
            "answer_least_in_bottom_third": sum(m in order[-third:] for m in least),
            "answer_least_in_top_third": sum(m in order[:third] for m in least),
            "answer_least_mean_place": round(statistics.mean(order.index(m) + 1 for m in least), 1),
            "top5": order[:5],
        }
    return out


def language(engine, scorer, ids: list[int], limit: int = 3000) -> dict:
    from crm_core.properties import language as language_of
    from crm_core.spec import Pair

    bench, instructions, outputs = engine.bench, engine.bench.instructions(), engine.bench.outputs()
    lang = dict(zip(bench.queries["idx"], bench.queries["language"], strict=True))
    pairs = []
    for i in ids:
        if lang[i] == "en":
            continue
        answers = [outputs[(i, m)] for m in bench.models if (i, m) in outputs]
        same = [a for a in answers if language_of(a) == lang[i]]
        other = [a for a in answers if language_of(a) not in (lang[i], None)]
        pairs += [(instructions[i], s, o) for s in same for o in other]
    rng = np.random.default_rng(0)
    if len(pairs) > limit:
        pairs = [pairs[k] for k in sorted(rng.choice(len(pairs), limit, replace=False))]
    out: dict = {"prompts": sum(lang[i] != "en" for i in ids), "pairs": len(pairs), "decided_for_same_language": {}}
    if not pairs:
        return out
    for label, criteria in [("no criteria", [])] + [(c, [c]) for c in SAME_LANGUAGE + ANOTHER_LANGUAGE]:
        # each pair both ways round: the judge's order plays no part, this makes sure
        batch = [Pair(criteria, q, s, o) for q, s, o in pairs] + [Pair(criteria, q, o, s) for q, s, o in pairs]
        p = scorer.score_pairs(batch).p_a
        half = len(pairs)
        share = float(np.mean(np.concatenate([p[:half] > 0.5, p[half:] < 0.5])))
        out["decided_for_same_language"][label] = {
            "share": round(share, 3),
            "read_as": read_as(scorer, criteria[0]) if criteria else "",
            "wanted": "near 0 under the wish" if label in ANOTHER_LANGUAGE else "near 1 under the wish",
        }
    return out


def ai_prose(engine, scorer, ids: list[int]) -> dict:
    from crm_core.agreement import kendall_tau
    from crm_core.properties import NAMES, measure_many

    bench, outputs = engine.bench, engine.bench.outputs()
    k = NAMES.index("ai_prose")
    models = [m for m in bench.models if m != bench.baseline]
    rate = {m: float(np.mean(measure_many([outputs[(i, m)] for i in ids if (i, m) in outputs])[:, k]))
            for m in models}  # fmt: skip
    general = win_rates(engine, [], ids)
    out: dict = {"ai_prose": {m: round(r, 3) for m, r in sorted(rate.items(), key=lambda x: -x[1])}, "wishes": {}}
    for wish in PLAIN_PROSE:
        rates = win_rates(engine, [wish], ids)
        change = [rates[m] - general[m] for m in models]
        order = sorted(rates, key=lambda m: -rates[m])
        base_order = sorted(general, key=lambda m: -general[m])
        out["wishes"][wish] = {
            "read_as": read_as(scorer, wish),
            "tau_change_with_ai_prose": round(kendall_tau(change, [rate[m] for m in models]), 3),
            "antislop_place": order.index("gemma-3-27b-it-antislop") + 1,
            "gemma_3_27b_place": order.index("gemma-3-27b-it") + 1,
            "general_places": [base_order.index("gemma-3-27b-it-antislop") + 1, base_order.index("gemma-3-27b-it") + 1],
            "top5": order[:5],
        }
    return out


def main(argv: list[str] | None = None) -> int:
    from emit import add_model_argument, emit, named_folders

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_argument(parser)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument(
        "--half",
        choices=["held-out", "development"],
        action="append",
        help="the benches' prompts to judge on (repeatable; default both; development: the half choices are made on)",
    )
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)  # fmt: skip
    from crm_core.data import open_bench
    from usl_space.cache import ScoreCache
    from usl_space.loading import make_engine, open_scorer

    benches = {name: open_bench(args.shared / "usl" / name, baseline=base) for name, base in BASELINES.items()}
    results: dict = {}
    for name, folder in named_folders(parser, args.model):
        scorer = open_scorer(folder, "onnx")
        for bench_name, bench in benches.items():
            print(f"{name}: {bench_name}", file=sys.stderr, flush=True)
            engine = make_engine(bench, scorer, ScoreCache(":memory:"))
            engine.response_table(progress=True)
            for half in args.half or ["held-out", "development"]:
                r = results.setdefault(half, {}).setdefault(name, {})
                ids = half_ids(bench, half)
                if bench_name == "speechmap":
                    r["compliance"] = compliance(engine, scorer, ids)
                    r["language"] = language(engine, scorer, ids)
                else:
                    r["ai_prose"] = ai_prose(engine, scorer, ids)
    emit(results, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
