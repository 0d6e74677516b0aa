"""Do people have reason to believe the boards? One command for the checks of the "rankings people believe" issue,
run through the app's own engine (instant path, the CRM as served), for one or more CRM folders side by side:

- baseline: gpt-4o-2024-05-13's win rate against gpt4_1106_preview on the general board (a judge without favourites
  lets a better model beat the baseline), and Kendall tau between the orders of the other models with
  gpt4_1106_preview and with claude-3-opus-20240229 as the baseline;
- twins: AlpacaEval's *_concise / *_verbose answers of one model; under every concise phrasing each concise twin
  must rank above its verbose twin, under every detailed phrasing below it, and lead it by >= 10 points of win rate
  (a wish must visibly move the board, not just reorder neighbours);
- concise AND good: under each concise phrasing never trained on (phrasings.LENGTH_VALIDATION_PAIRS, and "Prefer
  short, concise answers."), the top five default models are all above the median published AlpacaEval 2.0 LC win
  rate of the default models and shorter on average than the general top five; detailed: longer; each pair's
  concise and detailed top fives share at most two models;
- humans: the general board vs AlpacaEval 2.0 LC (Kendall tau) on the 40 models of early 2024 and on every default
  model with a published LC (no Chatbot Arena Elo is in the shared data);
- junk last: NullModel's place from the bottom on the general board and under every phrasing.

The bench is the default models plus the twins and NullModel; `--half evaluation` (the default) ranks the
AlpacaEval instructions outside the quality term's training half, `--half training` the others (development data:
choices are made there, with `--phrasings development` and `--gate`; the evaluation half only reports).
`--phrasings units` pairs the development sentences that ask for length in units of text ("Keep it to one
paragraph."); `--phrasings training` uses the training bank's own whole length sentences, read as a visitor types
them.

    USL_EMBEDDINGS=data/embeddings uv run python benchmarks/judge_report.py --data ../shared/data/usl/alpaca_eval \\
        --model before=runs/crm-before --model now=space/models/crm-compositional \\
        --output benchmarks/results/judge_report.json
    USL_EMBEDDINGS=data/embeddings uv run python benchmarks/judge_report.py --data ../shared/data/usl/alpaca_eval \\
        --model now=space/models/crm-compositional --half training --phrasings development \\
        --gate 0:0 --gate 0.5:0 --gate 0.3:0 --gate 0.5:0.3 --gate 0.2:0.3 \\
        --output benchmarks/results/judge_report_development.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import replace
from pathlib import Path

TWINS = ("Mixtral-8x7B-Instruct-v0.1", "alpaca-7b", "claude-2.1", "gpt-3.5-turbo-1106", "gpt4_0613",
         "gpt4_1106_preview")  # fmt: skip
JUNK = "NullModel"
OTHER_BASELINE = "claude-3-opus-20240229"
NEWER_MODEL = "gpt-4o-2024-05-13"
TWIN_GAP = 10.0  # points of win rate by which the asked twin should lead (issue 55)
CONCISE_EXTRA = "Prefer short, concise answers."
# length phrasings of our own for choices (development); the validation ones (phrasings.LENGTH_VALIDATION_PAIRS,
# never trained on) only report
DEVELOPMENT_PAIRS = [
    ("I like thorough, detailed answers.", "Keep it brief."),
    ("Explain in depth.", "I prefer short answers."),
    ("Long answers please.", "Be concise."),
]


def length_wishes(bank) -> tuple[list[str], list[str]]:
    """The texts of a phrasing bank's length wishes: (those asking for more, those asking for less), in order."""
    words = [p for p in bank if p.prop == "words"]
    return [p.text for p in words if p.sign > 0], [p.text for p in words if p.sign < 0]


def ranks_from_bottom(board: dict[str, dict], model: str) -> int:
    """1 = last."""
    order = sorted(board, key=lambda m: board[m]["win_rate"])
    return order.index(model) + 1


def judge(engine, ids: list[int], defaults: list[str], lc: dict[str, float], original: list[str],
          pairs: list[tuple[str | None, str]]) -> dict:  # fmt: skip
    from crm_core.agreement import kendall_tau

    everyone = [*defaults, *(f"{t}_{kind}" for t in TWINS for kind in ("concise", "verbose")), JUNK]

    def board(criteria: list[str], models: list[str], baseline: str | None = None) -> dict[str, dict]:
        ranker = engine.with_baseline(baseline) if baseline else engine
        rows = ranker.rank(criteria, query_ids=ids, models=models, bootstrap=200).rows
        return {row["model"]: row for row in rows}

    base = engine.baseline
    general = board([], defaults)
    swapped = board([], defaults, OTHER_BASELINE)
    others = [m for m in defaults if m not in (base, OTHER_BASELINE)]
    judged = [m for m in defaults if m != base and m in lc]
    median_lc = statistics.median(lc[m] for m in defaults if m in lc)

    def tau_lc(models: list[str]) -> float:
        return round(kendall_tau([general[m]["win_rate"] for m in models], [lc[m] for m in models]), 3)

    def top5(rows: dict[str, dict]) -> list[str]:
        return sorted((m for m in defaults if m != base), key=lambda m: -rows[m]["win_rate"])[:5]

    def words(models: list[str]) -> float:
        return round(statistics.mean(general_all[m]["avg_words"] for m in models), 1)

    general_all = board([], everyone)
    general_top = top5(general)
    result = {
        "queries": len(ids),
        "default_models": len(defaults),
        "baseline": {"newer_model": NEWER_MODEL, "newer_model_win_rate": general[NEWER_MODEL]["win_rate"],
                     "other_baseline": OTHER_BASELINE,
                     "tau_other_models_between_baselines": round(kendall_tau(
                         [general[m]["win_rate"] for m in others], [swapped[m]["win_rate"] for m in others]), 3)},
        "humans": {"tau_vs_lc_original_40": tau_lc([m for m in judged if m in original]),
                   "tau_vs_lc_all_defaults": tau_lc(judged), "models_with_lc": len(judged),
                   "arena_elo": "not in the shared data"},
        "general_top5": [{"model": m, "avg_words": general_all[m]["avg_words"]} for m in general_top],
        "null_model_from_bottom": {"general": ranks_from_bottom(general_all, JUNK)},
        "median_lc_of_defaults": round(median_lc, 2),
        "phrasings": [],
    }  # fmt: skip
    tops: dict[str, list[str]] = {}
    for detailed, concise in pairs:
        for kind, text in (("detailed", detailed), ("concise", concise)):
            if text is None:
                continue
            rows = board([text], everyone)
            top = tops[text] = top5(rows)
            shorter = words(top) < words(general_top)
            twins = {t: rows[f"{t}_concise"]["rank"] < rows[f"{t}_verbose"]["rank"] for t in TWINS}
            sign = 1 if kind == "concise" else -1  # the asked twin's lead over the other, in points of win rate
            gaps = {t: round(100 * sign * (rows[f"{t}_concise"]["win_rate"] - rows[f"{t}_verbose"]["win_rate"]), 1)
                    for t in TWINS}  # fmt: skip
            if kind == "detailed":
                twins = {t: not ok for t, ok in twins.items()}
            result["phrasings"].append({
                "kind": kind, "criteria": text, "top5": [{"model": m, "lc": lc.get(m)} for m in top],
                "top5_all_above_median_lc": all(lc.get(m, 0.0) > median_lc for m in top),
                "top5_avg_words": words(top), "general_top5_avg_words": words(general_top),
                "length_direction_ok": shorter if kind == "concise" else not shorter,
                "twins_in_order": sum(twins.values()), "twins": len(TWINS),
                "twins_out_of_order": [t for t, ok in twins.items() if not ok], "twin_gaps": gaps,
                "twins_ahead_by_10": sum(g >= TWIN_GAP for g in gaps.values()),
                "null_model_from_bottom": ranks_from_bottom(rows, JUNK),
            })  # fmt: skip
    result["top5_overlap"] = [{"detailed": d, "concise": c, "shared": len(set(tops[d]) & set(tops[c]))}
                              for d, c in pairs if d is not None and c is not None]  # fmt: skip
    return result


def summary(name: str, r: dict) -> dict:
    """The one short table README shows: one value per check."""
    phr = r["phrasings"]
    concise, detailed = [p for p in phr if p["kind"] == "concise"], [p for p in phr if p["kind"] == "detailed"]

    def share(rows: list[dict], key: str) -> str:
        return f"{sum(bool(p[key]) for p in rows)}/{len(rows)}"

    twins = sum(p["twins_in_order"] for p in phr), sum(p["twins"] for p in phr)
    ahead = sum(p.get("twins_ahead_by_10", 0) for p in phr)
    gaps = sorted(g for p in phr for g in p.get("twin_gaps", {}).values())
    return {
        "crm": name,
        "gpt-4o beats the baseline (win rate > 0.5)": r["baseline"]["newer_model_win_rate"],
        "tau, other models, two baselines (>= 0.85)": r["baseline"]["tau_other_models_between_baselines"],
        "twins in order (all)": f"{twins[0]}/{twins[1]}",
        "asked twin ahead by >= 10 points": f"{ahead}/{twins[1]}",
        "twin gap, median points": statistics.median(gaps) if gaps else None,
        "concise top 5 above the median LC": share(concise, "top5_all_above_median_lc"),
        "concise top 5 shorter than the general top 5": share(concise, "length_direction_ok"),
        "detailed top 5 above the median LC": share(detailed, "top5_all_above_median_lc"),
        "detailed top 5 longer than the general top 5": share(detailed, "length_direction_ok"),
        "concise/detailed top 5 share <= 2": share([{"ok": o["shared"] <= 2} for o in r["top5_overlap"]], "ok"),
        "tau vs LC, original 40 / all defaults": f"{r['humans']['tau_vs_lc_original_40']} / "
                                                 f"{r['humans']['tau_vs_lc_all_defaults']}",
        "NullModel from the bottom: general / worst phrasing": f"{r['null_model_from_bottom']['general']} / "
                                                               f"{max(p['null_model_from_bottom'] for p in phr)}",
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    from emit import add_model_argument, emit, named_folders

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="an AlpacaEval folder like ../shared/data/usl/alpaca_eval")
    add_model_argument(parser)
    parser.add_argument(
        "--half",
        choices=["evaluation", "training"],
        default="evaluation",
        help="which half of the instructions to rank (training: development data for choices)",
    )
    parser.add_argument(
        "--phrasings",
        choices=["validation", "development", "units", "training"],
        default="validation",
        help="length phrasings: the validation ones (never trained on; for reporting), our development ones, the "
        "development sentences asking for length in units of text ('Keep it to one paragraph.'), or the training "
        "bank's 15 pairs of whole length sentences (what a visitor typing them as written gets)",
    )
    parser.add_argument(
        "--gate",
        action="append",
        default=[],
        metavar="GATE:SLOPE[:SCALE[:STRENGTH[:LIFT[:SHARE[:CAP]]]]]",
        help="also judge each CRM with these serving settings (quality_gate:gate_length_slope, then weight_scale: how "
        "far a typed criterion may outweigh quality, soft_strength, lift_from and lift_share: how much a soft "
        "criterion weighs whatever its wording, and gate_length_cap: the most doublings of words the gate forgives; "
        "those left out are as served; repeatable)",
    )
    parser.add_argument(
        "--fold",
        metavar="K/N",
        help="with --half training: rank only fold K (0 to N-1) of N of the half, for a CRM whose quality term "
        "never saw that fold's verdicts (training/experiments/quality_folds.py)",
    )
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)  # fmt: skip
    fold = _fold(parser, args.fold, args.half)
    if any(not 2 <= len(g.split(":")) <= 7 for g in args.gate):
        parser.error("--gate takes GATE:SLOPE[:SCALE[:STRENGTH[:LIFT[:SHARE[:CAP]]]]] (two to seven numbers)")
    from crm_core.data import open_bench
    from crm_core.data.importers import read_instructions, read_models_file
    from crm_train.compositional.evaluate import published_lc
    from crm_train.compositional.sources import alpaca_train_half
    from usl_space.cache import ScoreCache
    from usl_space.catalog import default_models
    from usl_space.loading import make_engine, open_scorer

    data = Path(args.data)
    defaults = default_models()
    bench_models = [*defaults, *(f"{t}_{kind}" for t in TWINS for kind in ("concise", "verbose")), JUNK]
    bench = open_bench(data, models=bench_models)
    instructions = read_instructions(data / "instructions.jsonl")
    training = {int(i) for i, t in zip(instructions["idx"], instructions["instruction"], strict=True)
                if alpaca_train_half(t)}  # fmt: skip
    ids = sorted(i for i in instructions["idx"].to_list() if (i in training) == (args.half == "training"))
    if fold is not None:
        from crm_train.compositional.sources import development_fold

        text = dict(zip(instructions["idx"].to_list(), instructions["instruction"].to_list(), strict=True))
        ids = [i for i in ids if development_fold(text[i], fold[1]) == fold[0]]
    shared = data.parents[1]
    lc = published_lc(shared)
    original = read_models_file(data / "default_models.txt")
    if args.phrasings == "validation":
        from crm_train.compositional.phrasings import LENGTH_VALIDATION_PAIRS

        pairs = [*LENGTH_VALIDATION_PAIRS, (None, CONCISE_EXTRA)]
    elif args.phrasings == "training":
        from crm_train.compositional.phrasings import TRAIN_SENTENCES

        pairs = list(zip(*TRAIN_SENTENCES["words"], strict=True))
    elif args.phrasings == "units":  # development: length asked in units of text, paired in order
        from itertools import zip_longest

        from crm_train.compositional.phrasings import unit_development_sentences

        pairs = list(zip_longest(*length_wishes(unit_development_sentences())))
    else:  # ours, and the length phrasings of the second development bank, paired in order
        from crm_train.compositional.phrasings import second_development_bank

        pairs = [*DEVELOPMENT_PAIRS, *zip(*length_wishes(second_development_bank()), strict=True)]
    results, table = {}, []
    for name, folder in named_folders(parser, args.model):
        engine = make_engine(bench, open_scorer(folder, "onnx"), ScoreCache(":memory:"))
        engine.response_table(progress=True)
        scorer = engine.scorer
        as_served = scorer.serving
        served = (as_served.quality_gate, as_served.gate_length_slope, as_served.weight_scale, as_served.soft_strength,
                  as_served.lift_from, as_served.lift_share, as_served.gate_length_cap)  # fmt: skip
        asked = [(*given, *served[len(given) :]) for given in (tuple(map(float, g.split(":"))) for g in args.gate)]
        settings = list(dict.fromkeys([served, *asked]))  # the served setting once
        for gate, slope, scale, strength, lift, share, cap in settings:
            setting = (f"gate {gate:g}, length slope {slope:g}, weight scale {scale:g}, soft strength {strength:g} "
                       f"from {lift:g} share {share:g}, length cap {cap:g}")  # fmt: skip
            label = name if (gate, slope, scale, strength, lift, share, cap) == served else f"{name}, {setting}"
            scorer.serving = replace(
                as_served,
                quality_gate=gate,
                gate_length_slope=slope,
                gate_length_cap=cap,
                weight_scale=scale,
                soft_strength=strength,
                lift_from=lift,
                lift_share=share,
            )
            results[label] = {"model": folder, "quality_gate": gate, "gate_length_slope": slope, "gate_length_cap": cap,
                              "weight_scale": scale,
                              "soft_strength": strength, "lift_from": lift, "lift_share": share,
                              **judge(engine, ids, defaults, lc, original, pairs)}  # fmt: skip
            table.append(summary(label, results[label]))
    emit({"half": args.half, "fold": args.fold, "phrasings": args.phrasings, "summary": table, "crms": results},
         args.output, drop=("crms",))  # fmt: skip
    return 0


def _fold(parser: argparse.ArgumentParser, given: str | None, half: str) -> tuple[int, int] | None:
    """--fold K/N as (K, N), with a parser error for anything else."""
    if given is None:
        return None
    k, _, n = given.partition("/")
    if not (k.isdigit() and n.isdigit() and int(k) < int(n) and int(n) >= 2):
        parser.error(f"--fold takes K/N with 0 <= K < N and N >= 2, got {given!r}")
    if half != "training":
        parser.error("--fold cuts the training half: give --half training")
    return int(k), int(n)


if __name__ == "__main__":
    sys.exit(main())
