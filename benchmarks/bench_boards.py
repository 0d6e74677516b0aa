"""Can the boards be believed on every bench? One command, a table per bench, for one or more CRM folders.

For each bench of the shared data (MT-bench, creative, speechmap, and AlpacaEval's evaluation half), the bench is
read as usl-rank reads it and five junk entries are added, built from the bench's own data (`junk_entries`): the
prompt echoed back, a fluent answer to another prompt of the bench, the baseline's answer cut after its first
sentence, one canned refusal for every prompt, and NullModel's text (AlpacaEval's adversarial answer). Then the
app's own engine (instant path, the CRM as served) gives three boards: general (no criteria), a brief wish and a
detailed wish. Checked:

- junk: every junk entry below every real model on the general board; none in the top third under either wish;
- MT-bench: Kendall tau of the general board's win rates vs the published MT-bench scores (baseline left out), with
  the junk in the bench and without it (the board a visitor sees: five more entries make the bench's own panel, a
  share of its models, two models larger), and the real models with a score under 5 in the top third;
- wishes: the brief top five's answers shorter than the general top five's, the detailed top five's longer.

    USL_EMBEDDINGS=data/embeddings uv run python benchmarks/bench_boards.py \\
        --model now=space/models/crm-compositional --output benchmarks/results/bench_boards.json
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import json
import re
import statistics
import sys
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINES = {"mt_bench": "gpt-4", "creative": "gemini-2.5-flash", "speechmap": "gpt-4.1-2025-04-14",
             "alpaca_eval": "gpt4_1106_preview"}  # fmt: skip
BRIEF, DETAILED = "Keep it brief.", "I like thorough, detailed answers."
REFUSAL = "I'm sorry, but I can't help with that."
JUNK = ("junk-echo", "junk-other-prompt", "junk-first-sentence", "junk-refusal", "junk-nullmodel")
FIRST_SENTENCE = re.compile(r"^(.+?[.!?])(\s|$)", re.S)


def null_model_text(shared: Path) -> str:
    """NullModel's answer (one fixed text that fooled LLM judges) from the AlpacaEval outputs."""
    with gzip.open(shared / "usl/alpaca_eval/model_outputs.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["model"] == "NullModel":
                return row["output"]
    raise ValueError("no NullModel answer in the AlpacaEval outputs")


def junk_entries(bench, null_text: str):
    """The bench with the five junk entries added (rows for every query the baseline answered)."""
    import polars as pl

    instructions = bench.instructions()
    outputs = bench.outputs()
    ids = sorted(i for i in instructions if (i, bench.baseline) in outputs)
    rows = []
    for n, idx in enumerate(ids):
        base = outputs[(idx, bench.baseline)]
        other = outputs[(ids[(n + len(ids) // 2) % len(ids)], bench.baseline)]
        first = FIRST_SENTENCE.match(base.strip())
        texts = (instructions[idx], other, first.group(1) if first else base.strip()[:200], REFUSAL, null_text)
        rows += [{"idx": idx, "model": name, "output": text, "generator": name}
                 for name, text in zip(JUNK, texts, strict=True)]  # fmt: skip
    extra = pl.DataFrame(rows, schema=bench.responses.schema)
    return replace(bench, responses=pl.concat([bench.responses, extra]))


def open_benches(shared: Path, names: list[str], alpaca_half: str = "evaluation", half: str = "all") -> dict:
    from crm_core.data import open_bench
    from crm_core.data.importers import read_instructions
    from crm_train.compositional.sources import alpaca_train_half
    from usl_space.catalog import default_models

    benches = {}
    for name in names:
        folder = shared / "usl" / name
        if name == "alpaca_eval":
            bench = open_bench(folder, models=default_models(), baseline=BASELINES[name])
            frame = read_instructions(folder / "instructions.jsonl")
            ids = [i for i, t in zip(frame["idx"], frame["instruction"], strict=True)
                   if alpaca_train_half(t) == (alpaca_half == "training")]  # fmt: skip
            benches[name] = (bench, ids)
        else:
            bench = open_bench(folder, baseline=BASELINES[name])
            benches[name] = (bench, None)
            if name in ("speechmap", "creative") and half != "all":  # choices are made on development prompts
                wanted = half == "development"
                ids = [i for i, source in zip(bench.queries["idx"], bench.queries["source_id"], strict=True)
                       if development_prompt(source) == wanted]  # fmt: skip
                benches[name] = (bench, ids)
    return benches


def development_prompt(source_id: str) -> bool:
    """The speechmap and creative prompts that choices are made on: half of them, by a hash of the prompt's source id
    (speechmap's is the split training/experiments/nonanswer_penalty.py and its hand labels use)."""
    return hashlib.sha256(source_id.encode()).digest()[0] % 2 == 0


def mt_bench_scores(shared: Path) -> dict[str, float]:
    with open(shared / "usl/mt_bench/leaderboard_mt_bench_score.csv", encoding="utf-8") as handle:
        return {row["model_answer_id"]: float(row["mt_bench_score"]) for row in csv.DictReader(handle)}


def judge_bench(engine, name: str, ids: list[int] | None, scores: dict[str, float], without_junk=None) -> dict:
    """The three boards of `engine`'s bench (junk included); `without_junk`: an engine on the same bench without
    the junk, whose general board's tau against `scores` is reported beside."""
    from crm_core.agreement import kendall_tau

    bench = engine.bench
    real = [m for m in bench.models if m not in JUNK and m != bench.baseline]
    everyone = [*real, *JUNK]

    def board(criteria: list[str]) -> list[dict]:
        kwargs = {"query_ids": ids} if ids is not None else {}
        return engine.rank(criteria, models=everyone, bootstrap=200, **kwargs).rows

    result: dict = {"queries": len(ids) if ids is not None else bench.queries.height, "models": len(real),
                    "baseline": bench.baseline, "boards": {}}  # fmt: skip
    words: dict[str, float] = {}
    for label, criteria in (("general", []), ("brief", [BRIEF]), ("detailed", [DETAILED])):
        rows = [r for r in board(criteria) if r["model"] != bench.baseline]
        order = [r["model"] for r in rows]
        words.update({r["model"]: r["avg_words"] for r in rows if label == "general"})
        real_order = [m for m in order if m not in JUNK]
        third = max(1, len(order) // 3)
        entry = {
            "order": [(r["model"], round(r["win_rate"], 3)) for r in rows],
            "top5": real_order[:5],
            "top5_words": round(statistics.mean(words[m] for m in real_order[:5]), 1),
            "junk_in_top_third": [m for m in order[:third] if m in JUNK],
            "junk_above_a_real_model": [m for m in JUNK if order.index(m) < max(order.index(r) for r in real)],
        }
        if scores:
            judged = [m for m in real if m in scores]
            rates = {r["model"]: r["win_rate"] for r in rows}
            entry["tau_vs_mt_bench"] = round(kendall_tau([rates[m] for m in judged], [scores[m] for m in judged]), 3)
            entry["weak_in_top_third"] = [m for m in order[:third] if scores.get(m, 10) < 5]
            if without_junk is not None and label == "general":
                kwargs = {"query_ids": ids} if ids is not None else {}
                alone = {
                    r["model"]: r["win_rate"] for r in without_junk.rank([], models=real, bootstrap=0, **kwargs).rows
                }
                entry["tau_vs_mt_bench_without_junk"] = round(
                    kendall_tau([alone[m] for m in judged], [scores[m] for m in judged]), 3
                )
        result["boards"][label] = entry
    general = result["boards"]["general"]["top5_words"]
    result["brief_shorter"] = result["boards"]["brief"]["top5_words"] < general
    result["detailed_longer"] = result["boards"]["detailed"]["top5_words"] > general
    return result


def summary(crm: str, bench: str, r: dict) -> dict:
    b = r["boards"]
    lengths = " / ".join(f"{b[k]['top5_words']:.0f}" for k in ("general", "brief", "detailed"))
    row = {"crm": crm, "bench": bench,
           "junk below every real model (general)": f"{len(JUNK) - len(b['general']['junk_above_a_real_model'])}/5",
           "junk in the top third: brief / detailed": f"{len(b['brief']['junk_in_top_third'])} / "
                                                      f"{len(b['detailed']['junk_in_top_third'])}",
           "top-5 words: general / brief / detailed": lengths,
           "general top 3": ", ".join(b["general"]["top5"][:3])}  # fmt: skip
    if "tau_vs_mt_bench" in b["general"]:
        row["tau vs MT-bench score (general)"] = b["general"]["tau_vs_mt_bench"]
        row["tau vs MT-bench score without the junk (general)"] = b["general"].get("tau_vs_mt_bench_without_junk")
        row["score < 5 in the top third: general / brief"] = (f"{len(b['general']['weak_in_top_third'])} / "
                                                              f"{len(b['brief']['weak_in_top_third'])}")  # fmt: skip
    return row


def main(argv: list[str] | None = None) -> int:
    from emit import add_model_argument, emit, named_folders

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_argument(parser)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument(
        "--bench", action="append", choices=sorted(BASELINES), help="benches to judge (repeatable; default: all four)"
    )
    parser.add_argument(
        "--alpaca-half",
        choices=["evaluation", "training"],
        default="evaluation",
        help="AlpacaEval's half to rank (training: development data for choices)",
    )
    parser.add_argument(
        "--half",
        "--speechmap-half",
        choices=["all", "development", "held-out"],
        default="all",
        help="speechmap's and creative's prompts to rank (development: the half choices are made on; held-out: the "
        "other half)",
    )
    parser.add_argument(
        "--gate-length-cap",
        type=float,
        action="append",
        help="also judge with this gate_length_cap (repeatable; default: as served)",
    )
    parser.add_argument(
        "--gate-length-floor",
        type=float,
        action="append",
        help="also judge with this gate_length_floor quantile (repeatable; default: as served)",
    )
    parser.add_argument(
        "--gate-reference",
        metavar="SPREAD:SLOPE",
        action="append",
        help="also judge with the gate scaled to each bench from this gate_spread_reference:gate_slope_reference "
        "(0:0: the gate as set, on every bench; repeatable; default: as served)",
    )
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)  # fmt: skip
    for reference in args.gate_reference or []:
        if not re.fullmatch(r"\d+(\.\d*)?:\d+(\.\d*)?", reference):
            parser.error(f"--gate-reference {reference}: expected SPREAD:SLOPE, two numbers >= 0 such as 0.432:0.158")
    from usl_space.cache import ScoreCache
    from usl_space.loading import make_engine, open_scorer

    names = args.bench or ["mt_bench", "creative", "speechmap", "alpaca_eval"]
    null_text = null_model_text(args.shared)
    plain = open_benches(args.shared, names, args.alpaca_half, args.half)
    benches = {name: (junk_entries(bench, null_text), ids) for name, (bench, ids) in plain.items()}
    scores = mt_bench_scores(args.shared)
    results, table = {}, []
    for name, folder in named_folders(parser, args.model):
        scorer = open_scorer(folder, "onnx")
        as_served = scorer.serving
        reference = (as_served.gate_spread_reference, as_served.gate_slope_reference)
        served = (as_served.gate_length_cap, as_served.gate_length_floor, *reference)
        settings = [served, *((c, served[1], *reference) for c in args.gate_length_cap or []),
                    *((served[0], f, *reference) for f in args.gate_length_floor or []),
                    *((*served[:2], *map(float, r.split(":"))) for r in args.gate_reference or [])]  # fmt: skip
        for bench_name, (bench, ids) in benches.items():
            print(f"{name}: {bench_name}", file=sys.stderr, flush=True)
            engine = make_engine(bench, scorer, ScoreCache(":memory:"))
            engine.response_table(progress=True)
            alone = (
                make_engine(plain[bench_name][0], scorer, ScoreCache(":memory:")) if bench_name == "mt_bench" else None
            )
            for cap, floor, spread, slope in dict.fromkeys(settings):
                scorer.serving = replace(as_served, gate_length_cap=cap, gate_length_floor=floor,
                                         gate_spread_reference=spread, gate_slope_reference=slope)  # fmt: skip
                setting = f"length cap {cap:g}, floor {floor:g}, gate reference {spread:g}:{slope:g}"
                label = name if (cap, floor, spread, slope) == served else f"{name}, {setting}"
                r = judge_bench(engine, bench_name, ids, scores if bench_name == "mt_bench" else {}, alone)
                results.setdefault(label, {})[bench_name] = r
                table.append(summary(label, bench_name, r))
            scorer.serving = as_served
    emit({"summary": table, "crms": results}, args.output, drop=("crms",))
    return 0


if __name__ == "__main__":
    sys.exit(main())
