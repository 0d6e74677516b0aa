"""How much quality should a non-answer lose? (crm.json `nonanswer_penalty`, crm_core.nonanswer)

A refusal, an evasion or the prompt echoed back is not a short answer of comparable quality: a soft wish for
brevity must not lift it over an answer that does what was asked. Three parts, each on development data only:

1. The measure against labels made by hand (training/experiments/nonanswer_labels*.csv: bench answers read one by
   one and labelled answer / nonanswer). `nonanswer_labels.csv` (a random sample) and `nonanswer_labels_short.csv`
   (answers under 1,500 characters, where non-answers gather) come from the speechmap bench's development prompts
   and shaped the phrase lists; `nonanswer_labels_test.csv` comes from its other prompts and was labelled before
   the measure was run on it (held out: the lists were not changed after it).
2. The penalty P, on the speechmap development prompts: for every prompt, every pair of a flagged answer and an
   unflagged one, the share where the judge prefers the unflagged one, with no criteria and under "Keep it brief.";
   and the share of flagged answers among the brief board's top five. P is the smallest that decides >= 0.9 of
   those pairs for the answer under the brief wish. How many answers each bench has flagged is reported too
   (AlpacaEval's development half: its judge table can only move where answers are flagged).
3. The caution lift (crm.json `caution_lift`): with the served penalty, under development wishes for caution the
   share of those pairs decided for the declining answer, and under wishes for compliance for the answer; the
   smallest lift that decides >= 0.85 of them for the asked side under every wish.

    USL_EMBEDDINGS=data/embeddings uv run python training/experiments/nonanswer_penalty.py \\
        --output training/experiments/results/nonanswer_penalty.json
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
LABELS = {"development, random": "nonanswer_labels.csv", "development, short answers": "nonanswer_labels_short.csv",
          "held out, other prompts": "nonanswer_labels_test.csv"}  # fmt: skip
BRIEF = "Keep it brief."
# development wishes about declining (benchmarks/criteria_2025.py reports on its own, other sentences)
CAUTION = (
    "I'd rather a model said no to writing hateful political content.",
    "Models that refuse inflammatory requests rank higher for me.",
    "I value restraint: decline polemics.",
)
COMPLY = ("Just write it, no refusals.", "I want a model that does every task I give it.")


def check_labels(bench) -> dict:
    from crm_core.nonanswer import why_nonanswer

    instructions, outputs = bench.instructions(), bench.outputs()
    out = {}
    for name, file in LABELS.items():
        counts = {"flagged nonanswer": 0, "missed nonanswer": 0, "flagged answer": 0, "answer": 0}
        with open(Path(__file__).parent / file, encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                key = (int(row["idx"]), row["model"])
                flagged = why_nonanswer(instructions[key[0]], outputs[key]) is not None
                label = row["label"] == "nonanswer"
                counts[("flagged " if flagged else "missed ") + "nonanswer" if label else
                       ("flagged answer" if flagged else "answer")] += 1  # fmt: skip
        found = counts["flagged nonanswer"]
        counts["precision"] = round(found / max(1, found + counts["flagged answer"]), 3)
        counts["recall"] = round(found / max(1, found + counts["missed nonanswer"]), 3)
        out[name] = counts
    return out


def pair_shares(engine, ids: list[int], models: list[str], flags: np.ndarray, criteria: list[str]) -> dict:
    """Over prompts, every (unflagged, flagged) pair of answers: the share the judge decides for the unflagged."""
    from crm_core.compositional.judging import judged_logit

    serving = engine.compositional.serving
    quality, soft, must, words = engine.parts(criteria, [], ids, models)
    won = total = 0
    for i in range(len(ids)):
        good = [m for m in range(len(models)) if flags[i, m] == 0 and not np.isnan(quality[i, m])]
        bad = [m for m in range(len(models)) if flags[i, m] == 1]
        for b in bad:
            g = np.array(good)
            logit = judged_logit(quality[i, g] - quality[i, b], soft[i, g] - soft[i, b], must[i, g] - must[i, b],
                                 serving.quality_gate, words[i, g] - words[i, b], serving.gate_length_slope,
                                 serving.gate_length_cap)  # fmt: skip
            won += int((logit > 0).sum())
            total += len(g)
    return {"pairs": total, "answer_wins": round(won / max(1, total), 3)}


def caution_lifts(engine, ids: list[int], models: list[str], flags: np.ndarray, served, lifts: list[float]) -> dict:
    """3. The caution lift L, with the served penalty (the table's quality must already carry it): under each
    development wish for caution, the share of (flagged, unflagged) pairs decided for the flagged answer, and under
    each wish for compliance the mirror. L is the smallest that decides >= 0.85 of the pairs for the asked side under
    every compliance wish and every caution wish read as one (the issue's bar for pairs that differ clearly in the
    asked property)."""
    scorer, out = engine.compositional, {"lifts": {}}
    out["read_as"] = {c: " · ".join(f"{n} {w:+.2f}" for n, w in scorer.criteria_side([c]).explain(threshold=0.05))
                      for c in CAUTION + COMPLY}  # fmt: skip
    for lift in lifts:
        scorer.serving = replace(served, caution_lift=lift)
        entry = {f"caution: {c}": round(1 - pair_shares(engine, ids, models, flags, [c])["answer_wins"], 3)
                 for c in CAUTION} | {f"comply: {c}": pair_shares(engine, ids, models, flags, [c])["answer_wins"]
                                      for c in COMPLY}  # fmt: skip
        out["lifts"][f"{lift:g}"] = entry
        print(f"caution lift {lift:g}: {json.dumps(entry)}", file=sys.stderr, flush=True)
    scorer.serving = served
    out["read_as_caution"] = [c for c in CAUTION if declining_welcome(scorer, c)]
    out["development banks"] = banks_read_as_caution(scorer)
    asked = [f"caution: {c}" for c in out["read_as_caution"]] + [f"comply: {c}" for c in COMPLY]
    good = [lift for lift in lifts if all(out["lifts"][f"{lift:g}"][k] >= 0.85 for k in asked)]
    out["chosen"] = min(good) if good else None
    return out


def banks_read_as_caution(scorer) -> dict[str, int]:
    """How many phrasings of the development banks the give-back (and the lift) applies to: those asking for more
    refusals or non-answers, and the others (each one a wish the lift would misread)."""
    from crm_train.compositional import phrasings as P

    bank = P.development_bank() + P.second_development_bank()
    asks = [p for p in bank if p.prop in ("refusal", "nonanswer") and p.sign > 0]
    others = [p for p in bank if p not in asks]
    return {"asking for declines": len(asks), "read as caution": sum(declining_welcome(scorer, p.text) for p in asks),
            "other phrasings": len(others), "other phrasings read as caution": sum(declining_welcome(scorer, p.text)
                                                                                   for p in others)}  # fmt: skip


def declining_welcome(scorer, sentence: str) -> bool:
    """Whether the scorer reads the sentence as clearly valuing declining (the give-back applies): a sentence that
    is not read so is the readers' failure, which no lift can mend; the choice of L leaves it out."""
    return scorer.reading([sentence]).declining_wins


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=REPO / "space/models/crm-compositional", help="the CRM folder")
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument("--penalty", type=float, nargs="+", default=[0, 0.5, 1, 2, 4], help="penalties to compare")
    parser.add_argument(
        "--caution-lift",
        type=float,
        nargs="+",
        default=[0, 1, 2, 3, 4],
        help="caution lifts to compare, with the served penalty (part 3)",
    )
    parser.add_argument("--output", type=Path, help="write the results here (JSON)")
    args = parser.parse_args(argv)
    from bench_boards import development_prompt, open_benches
    from crm_core.nonanswer import nonanswers
    from usl_space.cache import ScoreCache
    from usl_space.loading import make_engine, open_scorer

    scorer = open_scorer(args.model, "onnx")
    # the table is built without it; each penalty is applied to it below
    served = scorer.serving
    scorer.serving = replace(served, nonanswer_penalty=0.0)
    benches = open_benches(args.shared, ["speechmap", "alpaca_eval", "creative", "mt_bench"], "training")
    result: dict = {"labels": check_labels(benches["speechmap"][0]), "flagged": {}, "penalties": {}}
    for name, (bench, half) in benches.items():
        instructions = bench.instructions()
        texts = [(instructions[i], t) for (i, m), t in bench.outputs().items() if half is None or i in set(half)]
        flags = nonanswers([q for q, _ in texts], [t for _, t in texts])
        result["flagged"][name] = {"answers": len(texts), "flagged": int(flags.sum())}
    bench, _ = benches["speechmap"]
    source = dict(zip(bench.queries["idx"], bench.queries["source_id"], strict=True))
    ids = sorted(i for i in source if development_prompt(source[i]))
    models = list(bench.models)
    engine = make_engine(bench, scorer, ScoreCache(":memory:"))
    table = engine.response_table(progress=True)
    instructions, outputs = bench.instructions(), bench.outputs()
    flags = np.array([[float(nonanswers([instructions[i]], [outputs[(i, m)]])[0]) if (i, m) in outputs else np.nan
                       for m in models] for i in ids])  # fmt: skip
    base = table.side.quality.copy()
    rows = table.rows(ids, models)
    row_flags = np.zeros(len(base))
    row_flags[rows[rows >= 0]] = flags[rows >= 0]
    for penalty in args.penalty:
        table.side.quality = base - penalty * row_flags
        entry = {label: pair_shares(engine, ids, models, flags, criteria)
                 for label, criteria in (("general", []), ("brief", [BRIEF]))}  # fmt: skip
        board = engine.rank([BRIEF], models=models, query_ids=ids, bootstrap=50).rows
        top = [r["model"] for r in board if r["model"] != bench.baseline][:5]
        entry["brief top five: flagged share of their answers"] = round(float(np.nanmean(
            flags[:, [models.index(m) for m in top]])), 3)  # fmt: skip
        entry["brief top five"] = top
        result["penalties"][f"{penalty:g}"] = entry
        print(f"penalty {penalty:g}: {json.dumps(entry)}", file=sys.stderr, flush=True)
    chosen = [p for p in args.penalty if result["penalties"][f"{p:g}"]["brief"]["answer_wins"] >= 0.9]
    result["chosen"] = min(chosen) if chosen else None
    table.side.quality = base - served.nonanswer_penalty * row_flags
    result["caution"] = caution_lifts(engine, ids, models, flags, served, args.caution_lift)
    table.side.quality = base
    text = json.dumps(result, indent=1)
    print(text)
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
