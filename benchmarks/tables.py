"""The result tables of README.md, docs/internals.md and docs/experiments.md, generated from the raw results, so the
documents never quote a number the results files do not hold. Each table sits between `<!-- table:NAME -->` and
`<!-- /table:NAME -->` in one of the documents.

    uv run python benchmarks/tables.py           # rewrite the tables in the documents
    uv run python benchmarks/tables.py --check   # exit 1 if one is out of date (a test runs this)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"  # the product's benchmarks
EXPERIMENT_RESULTS = REPO / "training" / "experiments" / "results"  # the research scripts' (docs/experiments.md)

THROUGHPUT_LABELS = {
    "naive": "naive PyTorch (pad to max_length, batch 8, every input)",
    "torch": "engine, PyTorch (distinct inputs, length-sorted, dynamic padding)",
    "onnx-fp32": "engine, ONNX Runtime fp32",
    "onnx-int8": "engine, ONNX Runtime int8 (what the Space runs)",
}


HUMAN_SETS = ("auto_j", "hh_rlhf", "webgpt", "pandalm")  # the human test sets, in the order every table gives them


def _load(name: str) -> dict:
    path = RESULTS / name if (RESULTS / name).is_file() else EXPERIMENT_RESULTS / name
    return json.loads(path.read_text())


def throughput_table() -> str:
    r = _load("throughput_cpu.json")
    lines = [
        f"{r['pairs']} pairs ({r['queries']} queries x every default model, vs the baseline's response), inputs "
        f"{r['input_tokens']['mean']} tokens on average (max {r['input_tokens']['max']}), {r['model']}; "
        f"{r['machine']['cpu_count']}-core CPU, torch {r['machine']['torch']}, {r['rounds']} interleaved rounds, "
        "median.",
        "",
        "| variant | pairs/s | network inputs per round | x naive | peak RSS MB |",
        "|---|---|---|---|---|",
    ]
    for name, v in r["results"].items():
        lines.append(
            f"| {THROUGHPUT_LABELS.get(name, name)} | {v['pairs_per_s']:.2f} | {v['inputs_per_round']} | "
            f"{v['x_naive']:.2f} | {v['peak_rss_mb']} |"
        )
    return "\n".join(lines)


def latency_table() -> str:
    r = _load("leaderboard_latency_cpu.json")
    lines = [
        f"CRM `{r['crm']['folder']}` ({r['crm']['objective']}, {r['crm']['max_length']} tokens, "
        f'{r["crm"]["backend"]}), {r["bench"]} x {r["models"]} models, criteria "{r["criteria"]}", '
        f"{r['machine']['cpus']}-core CPU; each request starts from an empty cache.",
        "",
        "| request | first leaderboard (all models, CIs) | full leaderboard | same request again (cache) |",
        "|---|---|---|---|",
    ]
    topic, bench = r["topic"], r["default_bench"]
    rows = [(f"default bench, {bench['fresh']['queries']} queries", bench),
            (f"one topic ({topic['name']}, {topic['queries']} queries)", topic)]  # fmt: skip
    for label, run in rows:
        fresh, cached = run["fresh"], run["cached"]
        lines.append(
            f"| {label} | {fresh['first_leaderboard_s']:.3f} s ({fresh['first_leaderboard_queries']} "
            f"{'query' if fresh['first_leaderboard_queries'] == 1 else 'queries'}) | "
            f"{fresh['full_leaderboard_s']:.1f} s | {cached['full_leaderboard_s']:.3f} s |"
        )
    return "\n".join(lines)


def report_card_table(r: dict | None = None) -> str:
    """The report card (`benchmarks/report_card.py` prints it too, from the report it just wrote)."""
    r = r or _load("report_card.json")
    lines = [
        f'`{r["model"]}` on {r["backend"]}; accuracy on non-tie pairs; "without criteria" is the same model '
        "with every criterion removed; flip: DSP groups in which both criteria pick their own domain's response.",
        "",
        "| test set | n | accuracy | without criteria | longer wins | random | vs longer wins | position consistency "
        "| ECE | DSP flip |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, v in r["results"].items():
        flip = v.get("flip", {}).get("flip_accuracy")
        margin = v["accuracy"] - v["baselines"]["longer_wins"]
        lines.append(
            f"| {name} | {v['n']} | {v['accuracy']:.3f} | {v['criteria_ablation']['accuracy']:.3f} | "
            f"{v['baselines']['longer_wins']:.3f} | {v['baselines']['random']:.3f} | {margin:+.3f} | "
            f"{v['position_consistency']:.3f} | {v['ece']:.3f} | {'' if flip is None else f'{flip:.3f}'} |"
        )
    return "\n".join(lines)


def judge_table() -> str:
    """README's one table of how good the judge is: the shipped CRM as served (ONNX int8) on held-out data beside
    the simple baselines, and the checks of the judge report (benchmarks/judge_report.py); beside it the same folder
    as the previous stop served it (lift share 0: every soft reading lifted, sure or not), from the same runs."""
    r, j = _load("compositional_report_onnx_int8.json"), _load("judge_report.json")
    before = _load("compositional_report_onnx_int8_previous.json")
    now = j["crms"]["now"]
    others = [v for k, v in j["crms"].items() if k.startswith("now,")]
    previous = next(v for v in others if v["soft_strength"] == now["soft_strength"] and not v["lift_share"])
    longer = " / ".join(f"{v['longer_wins']['accuracy']:.3f}" for v in r["human"].values())
    lb = r["leaderboard"]
    targets = [
        ("human preference pairs, no criteria: " + " / ".join(r["human"]), f"longer answer wins: {longer}"),
        (f"a property asked for, more or less of it ({len(_properties(r))} properties, mean of both directions)",
         "random: 0.5"),
        ("two or three criteria at once", "random: 0.5"),
        ("a criterion about something else leaves the decision unchanged", "criteria ignored: 1.0"),
        (f"DSP: both domains' criteria pick their own answer ({r['dsp']['groups']} groups)", "without criteria: 0"),
        (f"general board vs AlpacaEval 2.0 LC, Kendall tau ({lb['models']} models, {lb['queries']} queries)",
         f"length alone: {lb['tau_length_alone']:.3f}"),
        ("gpt-4o beats the baseline gpt4_1106_preview (win rate)", "target > 0.5"),
        ("order of the other models, baseline gpt4_1106_preview vs claude-3-opus (tau)", "target >= 0.85"),
        ("concise / verbose twins in order under 11 length phrasings", "target: all"),
        ("concise phrasings: top 5 all above the median LC / shorter than the general top 5", "target: all"),
        ("detailed phrasings: top 5 all above the median LC / longer", "target: all"),
        ("concise and detailed top fives share at most two models", "target: all"),
        ("NullModel (junk) from the bottom: general board / worst phrasing", "target: 1-3"),
    ]  # fmt: skip
    shipped, earlier = _judge_column(r, now), _judge_column(before, previous)
    lines = [f"`{r['model']}` as served (ONNX Runtime int8); held-out prompts, validation phrasings never trained on; "
             f"judge report on the {now['queries']} evaluation-half queries, {now['default_models']} default models. "
             "Previous stop: the same folder lifting every soft reading to the soft strength, sure or not (lift "
             "share 0).",
             "", "| measure | shipped CRM | previous stop | baseline or target |", "|---|---|---|---|"]  # fmt: skip
    lines += [f"| {a} | {b} | {c} | {t} |" for (a, t), b, c in zip(targets, shipped, earlier, strict=True)]
    return "\n".join(lines)


def _properties(card: dict) -> list[dict]:
    return [v for v in card["properties"]["properties"].values() if v["pairs"]]


def _judge_column(card: dict, judged: dict) -> list[str]:
    """One column of the judge table: a report card (crm_train.compositional.evaluate) and a judge report entry."""
    p, d, lb, phr = card["properties"], card["dsp"], card["leaderboard"], judged["phrasings"]
    both = sum((v["more"] + v["less"]) / 2 for v in _properties(card)) / len(_properties(card))

    def share(kind: str) -> str:
        rows = [x for x in phr if x["kind"] == kind]
        good, direction = (f"{sum(x[k] for x in rows)}/{len(rows)}" for k in ("top5_all_above_median_lc",
                                                                            "length_direction_ok"))  # fmt: skip
        return f"{good} / {direction}"

    return [
        " / ".join(f"{v['crm']['accuracy']:.3f}" for v in card["human"].values()),
        f"{both:.3f}",
        f"{p['combined']['accuracy']:.3f}",
        f"{p['silent_agreement']['accuracy']:.3f}",
        f"{d['flip']['accuracy']:.3f}",
        f"{lb['tau_vs_lc']:.3f}",
        f"{judged['baseline']['newer_model_win_rate']:.3f}",
        f"{judged['baseline']['tau_other_models_between_baselines']:.3f}",
        f"{sum(x['twins_in_order'] for x in phr)}/{sum(x['twins'] for x in phr)}",
        share("concise"),
        share("detailed"),
        f"{sum(o['shared'] <= 2 for o in judged['top5_overlap'])}/{len(judged['top5_overlap'])}",
        f"{judged['null_model_from_bottom']['general']} / {max(x['null_model_from_bottom'] for x in phr)}",
    ]


def performance_table() -> str:
    """README's one performance table: the Space as a visitor meets it, each row from its own benchmark's file."""
    store, cold = _load("space_start_store.json"), _load("space_start_cold.json")
    instant, added = _load("instant_leaderboard_onnx_int8.json"), _load("add_model.json")
    browser, load = _load("browser_leaderboard_cpu.json"), _load("load_test_compositional.json")
    full, cached = instant["full_leaderboard_seconds"], load["cached"]["seconds"]
    rows = [
        (f"first custom board after the Space starts, response store published ({store['rows']} models)",
         f"{store['seconds_to_first_custom_board']:.1f}", "space_start.py"),
        ("the same without a response store (the bench's responses encoded once)",
         f"{cold['seconds_to_first_custom_board']:.1f}", "space_start.py"),
        (f"a board for a never-seen criteria set, {instant['queries']} queries x {instant['models']} models "
         f"(median of {full['n']}; p90 {full['p90']})", f"{full['median']:.3f}", "instant_leaderboard.py"),
        (f"the same in the browser, click Rank to full table (median of {browser['click_to_table_seconds']['n']})",
         f"{browser['click_to_table_seconds']['median']:.3f}", "browser_leaderboard.py"),
        (f"a cached view while {load['visitors']} visitors rank new criteria non-stop (p95)", f"{cached['p95']:.3f}",
         "load_test.py"),
        (f"a new model on the bench: {added['added_answers']} answers through the response store",
         f"{added['seconds']:.1f}", "add_model.py"),
    ]  # fmt: skip
    lines = [f"{store['machine']}, the shipped CRM under ONNX Runtime int8; raw results in benchmarks/results/.", "",
             "| what | seconds | benchmark |", "|---|---|---|"]  # fmt: skip
    lines += [f"| {a} | {b} | `benchmarks/{c}` |" for a, b, c in rows]
    return "\n".join(lines)


def compositional_table() -> str:
    """The compositional CRM's report card (crm_train.compositional.evaluate)."""
    r = _load("compositional_report.json")
    p, d, lb = r["properties"], r["dsp"], r["leaderboard"]
    lines = [
        f"`{r['model']}`; held-out prompts and validation phrasings only (never trained on).",
        "",
        "| property | pairs | more of it asked: right | less of it asked: right |",
        "|---|---|---|---|",
    ]
    for name, v in p["properties"].items():
        if v["pairs"]:
            lines.append(f"| {name} | {v['pairs']} | {v['more']:.3f} | {v['less']:.3f} |")
    c, s = p["combined"], p["silent_agreement"]
    lines += [
        "",
        "| check | n | result |",
        "|---|---|---|",
        f"| two or three criteria at once: right | {c['n']} | {c['accuracy']:.3f} (se {c['se']:.3f}) |",
        f"| silent criteria: decision unchanged | {s['n']} | {s['accuracy']:.3f} (se {s['se']:.3f}) |",
        f"| DSP flip ({d['groups']} held-out groups) | {d['flip']['n']} | {d['flip']['accuracy']:.3f} |",
        f"| DSP direction accuracy | {d['direction_accuracy']['n']} | {d['direction_accuracy']['accuracy']:.3f} |",
    ]
    for name, v in r["human"].items():
        lines.append(
            f"| {name} test, no criteria: accuracy / longer wins | {v['crm']['n']} | {v['crm']['accuracy']:.3f} / "
            f"{v['longer_wins']['accuracy']:.3f} ({v['margin']:+.3f}, se {v['crm']['se']:.3f}) |"
        )
    lines.append(
        f"| general leaderboard vs AlpacaEval 2.0 LC, evaluation half ({lb['queries']} queries, {lb['models']} "
        f"models): Kendall tau | {lb['models']} | {lb['tau_vs_lc']:.3f} (length alone {lb['tau_length_alone']:.3f}) |"
    )
    g = lb["gpt4_turbo_agreement"]
    lines.append(
        f"| agreement with GPT-4-turbo's verdicts, evaluation half ({len(lb['gpt4_turbo_models'])} default models) "
        f"| {g['n']} | {g['accuracy']:.3f} |"
    )
    trivial = lb.get("gpt4_turbo_agreement_if_the_reference_always_wins")
    won = lb.get("gpt4_turbo_agreement_when_the_model_won")
    if trivial and won:
        lines += [f"| the same, if the reference always won (a constant) | {trivial['n']} | "
                  f"{trivial['accuracy']:.3f} |",
                  f"| the same, on the verdicts where GPT-4-turbo preferred the model | {won['n']} | "
                  f"{won['accuracy']:.3f} |"]  # fmt: skip
    return "\n".join(lines)


def instant_table() -> str:
    r = _load("instant_leaderboard_cpu.json")
    full = r["full_leaderboard_seconds"]
    lines = [
        f"{r['queries']} queries x {r['models']} models, {r['machine']}; every request a never-seen criteria set.",
        "",
        "| what | seconds |",
        "|---|---|",
        f"| response side of the bench, built once ({r['response_side_bytes'] / 1e6:.1f} MB on disk) | "
        f"{r['response_side_build_seconds']} |",
        f"| full leaderboard, new criteria (median of {full['n']}; p90 {full['p90']}) | {full['median']} |",
    ]
    if "topic" in r:
        lines.append(f"| one topic ({r['topic']['name']}, {r['topic']['queries']} queries) | {r['topic']['seconds']} |")
    lines.append(f"| Compare tab: two criteria sets | {r['compare_seconds']} |")
    if "cross_encoder_full_seconds" in r:
        lines.append(f"| cross-encoder path, same full request (fresh cache) | {r['cross_encoder_full_seconds']} |")
    lines.append(f"| RSS after the requests / peak, MB | {r['rss_mb_after_requests']} / {r['peak_rss_mb']} |")
    browser = _load("browser_leaderboard_cpu.json") if (RESULTS / "browser_leaderboard_cpu.json").is_file() else None
    if browser:
        click = browser["click_to_table_seconds"]
        lines += [f"| in the browser (chromium): click Rank to full table, new criteria (median of {click['n']}; "
                  f"max {click['max']}) | {click['median']} |",
                  f"| app process RSS, MB: app up (saved response side loaded) / after the clicks | "
                  f"{browser['rss_mb_app_up']} / {browser['rss_mb_after_requests']} |"]  # fmt: skip
    return "\n".join(lines)


def quality_table() -> str:
    r = _load("quality_variants.json")
    lines = [
        "Quality term alone (no criteria), frozen MiniLM features (128 tokens). Selection: validation columns and "
        "the training half (a development set); the evaluation half is the test.",
        "",
        "| variant | val: annotations / human | dev tau vs LC | test tau vs LC (discrete) | test agreement with "
        "GPT-4-turbo | test margin over longer-wins: auto_j / hh_rlhf / webgpt / pandalm |",
        "|---|---|---|---|---|---|",
    ]
    for name, v in r.items():
        if name == "reference boost":
            continue
        test = v["leaderboard_evaluation_half"]
        val, human = v.get("validation"), v.get("human_test")
        val_text = f"{val['annotations']:.3f} / {val['human']:.3f}" if val else ""
        keys = HUMAN_SETS
        margins = " / ".join(f"{human[k]['margin']:+.3f}" for k in keys) if human else ""
        lines.append(
            f"| {name} | {val_text} | {v['leaderboard_training_half']['tau_vs_lc']:.3f} | {test['tau_vs_lc']:.3f} "
            f"({test['tau_discrete_vs_lc']:.3f}) | {test['gpt4_turbo_agreement']['accuracy']:.3f} | "
            f"{margins} |"
        )
    grid = r.get("reference boost")
    if grid:
        lines += ["", "Reference-similarity boost (`refsim_boost`), chosen on development data only: held-out models "
                  "(the non-default models in three folds, each ranked by a fit on the others) and the training half. "
                  f"Chosen: {grid['chosen']:g}.", "",
                  "| boost | held-out models tau | dev tau (training half) | development mean | test tau |",
                  "|---|---|---|---|---|"]  # fmt: skip
        for boost, g in grid.items():
            if boost != "chosen":
                lines.append(f"| {float(boost):g} | {g['held_out_models_tau']:.3f} | "
                             f"{g['training_half_default_tau']:.3f} | {g['development_mean']:.3f} | "
                             f"{g['evaluation_half_tau']:.3f} |")  # fmt: skip
    return "\n".join(lines)


QUALITY_WINDOWS = {128: "quality_variants.json", 256: "quality_variants_t256.json", 512: "quality_variants_t512.json"}


def quality_window_table() -> str:
    """The quality term's token window side by side (`quality_variants.py --max-tokens N`): the shipped variant at
    the shipped boost, reference similarity alone, and the boost each window's development grid would choose."""
    lines = ["Token window of the frozen MiniLM features (query, response and the reference's answer), quality term "
             "alone; development columns choose, the evaluation half (test) is reported after "
             "(`quality_variants.py --max-tokens N`):", "",
             "| tokens | val: annotations / human | dev tau (boost 30) | reference similarity alone: dev tau | "
             "boost the grid chooses: development mean | test tau (boost 30) | test tau, reference similarity alone "
             "| test tau at the chosen boost | test margin over longer-wins: auto_j / hh_rlhf / webgpt / pandalm |",
             "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for tokens, name in QUALITY_WINDOWS.items():
        if not (RESULTS / name).is_file() and not (EXPERIMENT_RESULTS / name).is_file():
            continue
        r = _load(name)
        v, alone, grid = r[next(iter(r))], r["reference similarity alone"], r["reference boost"]  # first: shipped
        chosen = grid[str(grid["chosen"])]
        margins = " / ".join(f"{v['human_test'][k]['margin']:+.3f}" for k in HUMAN_SETS)
        lines.append(f"| {tokens} | {v['validation']['annotations']:.3f} / {v['validation']['human']:.3f} | "
                     f"{v['leaderboard_training_half']['tau_vs_lc']:.3f} | "
                     f"{alone['leaderboard_training_half']['tau_vs_lc']:.3f} | {grid['chosen']:g}: "
                     f"{chosen['development_mean']:.3f} | {v['leaderboard_evaluation_half']['tau_vs_lc']:.3f} | "
                     f"{alone['leaderboard_evaluation_half']['tau_vs_lc']:.3f} | {chosen['evaluation_half_tau']:.3f} | "
                     f"{margins} |")  # fmt: skip
    return "\n".join(lines)


def quality_finetune_table() -> str:
    """Frozen features + head against MiniLM's top layers fine-tuned with it, same pairs (`quality_finetune.py`)."""
    r = _load("quality_finetune.json")
    pairs, layers = sum(r["training_pairs"].values()), r["args"]["layers"]
    lines = [f"The quality network alone (no reference signals), {pairs:,} training pairs drawn from the shipped "
             f"quality data, {r['max_tokens']} tokens; `tuned` starts from the frozen head and fine-tunes it with "
             f"MiniLM's top {layers} layers (`quality_finetune.py`). Validation and the training half are "
             "development data; the human test sets are tests:", "",
             "| variant | val: annotations / human | dev tau vs LC (training half) | fit | test margin over "
             "longer-wins: auto_j / hh_rlhf / webgpt / pandalm |", "|---|---|---|---|---|"]  # fmt: skip
    for name in ("frozen", "tuned"):
        v = r[name]
        margins = " / ".join(f"{v['human_test'][k]['margin']:+.3f}" for k in HUMAN_SETS)
        if name == "frozen":
            fit = f"{len(v['fit']['history'])} epochs of the head, {v['seconds']:.0f} s"
        else:
            epochs = [h for h in v["fit"]["history"] if h["epoch"] >= 0]
            fit = (f"{len(epochs)} epochs, {sum(h['seconds'] for h in epochs) / 60:.0f} min (+ token states "
                   f"{v['token_states_seconds'] / 60:.0f} min); val loss {v['fit']['history'][0]['val_loss']:.4f} -> "
                   f"{v['fit']['best_val_loss']:.4f}")  # fmt: skip
        lines.append(f"| {name} | {v['validation_gpt4_turbo']:.3f} / {v['validation_human']:.3f} | "
                     f"{v['leaderboard_training_half']['tau_vs_lc']:.3f} | {fit} | {margins} |")  # fmt: skip
    return "\n".join(lines)


def quality_smollm2_table() -> str:
    """MiniLM and SmolLM2 as frozen quality backbones, same pairs and head (`quality_smollm2.py`)."""
    r = _load("quality_smollm2.json")
    pairs = sum(r["training_pairs"].values())
    names = {"minilm_frozen": "MiniLM (all-MiniLM-L6-v2), the shipped backbone",
             "smollm2_layer20": "SmolLM2-135M-Instruct (Q4_1 GGUF, dequantized), layer 20 of 30",
             "smollm2_layer30": "SmolLM2-135M-Instruct (Q4_1 GGUF, dequantized), last layer"}  # fmt: skip
    lines = [f"The quality network alone (no reference signals) on frozen features of each backbone, {pairs:,} "
             f"training pairs drawn from the shipped quality data, {r['args']['max_tokens']} tokens "
             f"(`quality_smollm2.py`; {r['validation_pairs']:,} validation pairs: every human one, every "
             f"{r['args']['gpt4_validation_every']}th GPT-4-turbo one). Validation is development data; the human "
             "test sets are tests (margin over longer-wins; in brackets the standard error of the accuracy):", "",
             "| backbone | val: annotations / human | test margin: auto_j | hh_rlhf | webgpt | pandalm |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for key, label in names.items():
        v = r[key]
        cells = [f"{v['human_test'][k]['margin']:+.3f} ({v['human_test'][k]['crm']['se']:.3f})"
                 for k in HUMAN_SETS]  # fmt: skip
        lines.append(
            f"| {label} | {v['validation_gpt4_turbo']:.3f} / {v['validation_human']:.3f} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def reference_table() -> str:
    r = _load("reference_signals.json")
    chosen = r["chosen"]
    lines = ["Whole-text reference signals (`lexsim_weight`, `length_weight`), chosen on development data only (the "
             "mean of the two dev columns); the evaluation half is scored after the choice.", "",
             "| lexsim weight | length weight | held-out models tau | dev tau (training half) | development mean |",
             "|---|---|---|---|---|"]  # fmt: skip
    for g in r["grid"].values():
        mark = " (chosen)" if g == chosen else ""
        lines.append(f"| {g['lexsim_weight']:g}{mark} | {g['length_weight']:g} | {g['held_out_models_tau']:.3f} | "
                     f"{g['training_half_default_tau']:.3f} | {g['development_mean']:.3f} |")  # fmt: skip
    lines += ["", "| evaluation half | tau vs LC (discrete) | tau vs raw win rate | agreement with GPT-4-turbo |",
              "|---|---|---|---|"]  # fmt: skip
    for name, e in r["evaluation_half"].items():
        lex, length = name.split("/")
        label = f"lexsim {float(lex):g}, length {float(length):g}" + (" (no whole-text signal)" if name == "0.0/0.0"
                                                                       else "")  # fmt: skip
        lines.append(f"| {label} | {e['tau_vs_lc']:.3f} ({e['tau_discrete_vs_lc']:.3f}) | "
                     f"{e['tau_vs_raw_win_rate']:.3f} | {e['gpt4_turbo_agreement']['accuracy']:.3f} |")  # fmt: skip
    return "\n".join(lines)


def concise_table() -> str:
    r = _load("criteria_leaderboards.json")
    lines = ['Under "Prefer short, concise answers." (805 queries x 40 models, shipped CRM):', "",
             "| rank | model | win rate | average words | rank with no criteria |",
             "|---|---|---|---|---|"]  # fmt: skip
    for row in r["concise_top10"]:
        lines.append(f"| {row['rank']} | {row['model']} | {row['win_rate']:.3f} | {row['avg_words']:.1f} | "
                     f"{row['general_rank']} |")  # fmt: skip
    return "\n".join(lines)


def length_tradeoff_table() -> str:
    """Oracle length weights under the two quality terms (`training/experiments/length_tradeoff.py`)."""
    r = _load("length_tradeoff.json")
    names = list(r["curves"])
    lines = [f"Length read perfectly (words weight +s / -s, nothing else; {r['queries']} queries x {r['models']} "
             "models; the shipped reader gives \"Prefer short, concise answers.\" "
             f"{r['shipped_concise_words_weight']}): "
             "Kendall tau between the detailed and concise boards, and the concise board's top 3 with their general "
             "ranks, under each quality term:", "",
             "| s | " + " | ".join(f"{n}: tau | {n}: concise top 3 (general rank)" for n in names) + " |",
             "|---|" + "---|---|" * len(names)]  # fmt: skip
    for i, point in enumerate(r["curves"][names[0]]):
        cells = []
        for name in names:
            p = r["curves"][name][i]
            top = ", ".join(f"{t['model']} ({t['general_rank']})" for t in p["concise_top"][:3])
            cells += [f"{p['tau']:.3f}", top]
        lines.append(f"| {point['scale']:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# development-only runs of training/experiments/criteria_shrinkage.py on criteria fits that differ from the shipped
# config
CRITERIA_FITS = {
    "criteria_fit_previous_dev.json": "previous shipped fit (no stray penalty, 27 short general criteria)",
    "criteria_fit_with_cut_dev.json": "previous fit with the cut inside it (threshold_in_fit)",
    "criteria_fit_stray_dev.json": "+ stray penalty 1.0",
    "criteria_fit_more_general_dev.json": "+ more general criteria (silent_extra: 67 short, 365 rubric questions)",
    "criteria_fit_stray_more_general_dev.json": "+ both",
    "criteria_fit_gate_domains_general_dev.json": "+ both + form gate, domain phrasings as general",
    "criteria_fit_gate_dev.json": "+ both + form gate, domain phrasings as form (previous shipped fit)",
    "criteria_fit_wide_bank_dev.json": "+ the wider phrasing bank (wide_bank: 25,418 phrasings)",
    "criteria_fit_wide_bank_dsp_dev.json": "+ the wider bank + 12 more phrasings per DSP domain (wide_dsp)",
    "criteria_fit_wide_bank_dsp_3000_steps_dev.json": "the same, 3,000 steps instead of 2,000",
    "criteria_fit_wide_bank_dsp_weight_penalty_dev.json": "the same, weight_penalty 0.005 instead of 0.02",
    "criteria_fit_wide_bank_dsp_layer_lr_dev.json": "the same, criteria_layer_lr 1e-4 instead of 5e-5 (shipped)",
}


def cut(name: str) -> dict:
    """A criteria_shrinkage.py result's row at the shipped serving cut (weight 0.25, voice 30)."""
    return next(g for g in _load(name)["development_grid"]
                if g["weight_threshold"] == 0.25 and g["voice_threshold"] == 30.0)  # fmt: skip


# the same runs on the second development bank (criteria_shrinkage.py --second-bank)
SECOND_BANK_FITS = {
    "criteria_fit_gate_dev2.json": "previous shipped fit (form gate)",
    "criteria_fit_wide_bank_dsp_dev2.json": "+ the wider bank + 12 more phrasings per DSP domain",
    "criteria_fit_wide_bank_dsp_layer_lr_dev2.json": "the same, criteria_layer_lr 1e-4 (shipped)",
}


# the shipped config fitted with three seeds, alone and averaged (criteria_members); both development banks
SEED_FITS = {
    "criteria_fit_wide_bank_dsp_layer_lr": "seed 0 (the single fit shipped before)",
    "criteria_fit_wide_bank_dsp_layer_lr_seed1": "seed 1",
    "criteria_fit_wide_bank_dsp_layer_lr_seed2": "seed 2",
    "criteria_fit_members3": "seeds 0-2 averaged (criteria_members 3; shipped before)",
    "criteria_fit_members3_dsp_stray": "seeds 0-2 averaged, dsp_weights stray (shipped)",
}
SEED_COLUMNS = ("silent", "combined", "properties_mean", "properties_min", "dsp_flip_development", "length_board_tau")


def criteria_seeds_table() -> str:
    lines = ["The shipped criteria config with three seeds (seeds 1 and 2 also refit the quality term with their "
             "seed), development data only, at the serving cut 0.25 / 30; each cell is first bank / second bank "
             "(`criteria_shrinkage.py --development-only [--second-bank]`; DSP and the length board do not depend on "
             "the bank):", "",
             "| criteria fit | silent: unchanged | two or three criteria | property pairs (mean of worse direction) | "
             "worst property | DSP flip, unseen domain phrasings | length board tau (MT-bench) |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    rows = {label: (cut(f"{name}_dev.json"), cut(f"{name}_dev2.json")) for name, label in SEED_FITS.items()}
    singles = [rows[label] for label in list(rows)[:3]]
    mean = tuple({k: sum(s[b][k] for s in singles) / len(singles) for k in SEED_COLUMNS} for b in (0, 1))
    for label, (first, second) in [*list(rows.items())[:3], ("mean of the three single fits", mean),
                                   *list(rows.items())[3:]]:  # fmt: skip
        cells = [f"{first[k]:.3f} / {second[k]:.3f}" for k in SEED_COLUMNS[:4]]
        cells += [f"{first[k]:.3f}" for k in SEED_COLUMNS[4:]]
        lines.append(f"| {label} | {' | '.join(cells)} |")
    return "\n".join(lines)


# composed frames (config composed_bank) against the shipped three readers; both development banks
FRAME_FITS = {
    "criteria_fit_members3_dsp_stray": "shipped: three readers, dsp_weights stray",
    "criteria_fit_members3_composed": "the same + 30,000 composed phrasings (composed_bank 30000)",
    "criteria_fit_t512": "the same with a 512-token window (max_tokens 512, refsim_boost 100)",
    "criteria_fit_t256": "the same with a 256-token window (max_tokens 256, refsim_boost 40)",
}


def criteria_frames_table() -> str:
    lines = ["Other fits of the shipped config (composed frames, the token window), development data only, at the "
             "serving cut 0.25 / 30; each cell is first bank / second "
             "bank (`criteria_shrinkage.py --development-only [--second-bank]`):", "",
             "| criteria fit | silent: unchanged | two or three criteria | property pairs (mean of worse direction) | "
             "worst property | DSP flip, unseen domain phrasings | length board tau (MT-bench) |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, label in FRAME_FITS.items():
        first, second = cut(f"{name}_dev.json"), cut(f"{name}_dev2.json")
        cells = [f"{first[k]:.3f} / {second[k]:.3f}" for k in SEED_COLUMNS[:3]]
        cells.append(f"{first['worst_property']} {first['properties_min']:.3f} / "
                     f"{second['worst_property']} {second['properties_min']:.3f}")  # fmt: skip
        cells += [f"{first[k]:.3f}" for k in SEED_COLUMNS[4:]]
        lines.append(f"| {label} | {' | '.join(cells)} |")
    return "\n".join(lines)


def criteria_reader_probe_table() -> str:
    r = _load("criteria_reader_probe.json")
    rows = {"minilm_frozen": "MiniLM, frozen sentence embedding",
            "shipped_reader_0": "shipped reader 0 (re-tuned top layer)",
            "shipped_reader_1": "shipped reader 1", "shipped_reader_2": "shipped reader 2",
            "shipped_reader_0_and_minilm_frozen": "shipped reader 0 beside MiniLM frozen (concatenated)",
            **{k: f"SmolLM2-135M-Instruct (GGUF Q4_1, dequantized), layer {k.removeprefix('smollm2_layer')}, mean "
                  "pooled" for k in r if k.startswith("smollm2_layer")}}  # fmt: skip
    lines = [f"Linear probes on frozen criteria features: fitted on {r['train_phrasings']:,} training phrasings, "
             f"scored on the development banks ({r['development_phrasings']} / {r['second_development_phrasings']} "
             "phrasings); accuracy, first bank / second bank (`training/experiments/criteria_reader_probe.py`):", "",
             "| features | polarity (more or less?) | property (which of 23?) |", "|---|---|---|"]  # fmt: skip
    for key, label in rows.items():
        if key in r:
            pol, prop = r[key]["polarity"], r[key]["property"]
            lines.append(f"| {label} | {pol['development']:.3f} / {pol['second_development']:.3f} | "
                         f"{prop['development']:.3f} / {prop['second_development']:.3f} |")  # fmt: skip
    if "smollm2_zero_shot_polarity" in r:
        z = r["smollm2_zero_shot_polarity"]
        lines.append(f"| SmolLM2-135M-Instruct asked \"more or less?\" (zero-shot, no probe) | "
                     f"{z['development']:.3f} / {z['second_development']:.3f} | - |")  # fmt: skip
    return "\n".join(lines)


def criteria_fits_second_bank_table() -> str:
    return criteria_fits_table(SECOND_BANK_FITS, "the second development phrasing bank, `--second-bank`,")


def criteria_fits_table(fits: dict[str, str] | None = None, bank: str = "development phrasing bank") -> str:
    lines = [f"Criteria fits on development data only ({bank} and general criteria, validation-split "
             "prompts), at the serving cut 0.25 / 30 (`criteria_shrinkage.py --development-only`; the last two columns "
             "exist for fits scored after they were added):", "",
             "| criteria fit | silent: unchanged | two or three criteria | property pairs (mean of worse direction) | "
             "worst property | DSP flip | DSP flip, unseen domain phrasings | length board tau (MT-bench) |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, label in (fits or CRITERIA_FITS).items():
        row = cut(name)
        later = [f"{row[k]:.3f}" if k in row else "-" for k in ("dsp_flip_development", "length_board_tau")]
        lines.append(f"| {label} | {row['silent']:.3f} | {row['combined']:.3f} | {row['properties_mean']:.3f} | "
                     f"{row['worst_property']} {row['properties_min']:.3f} | {row['dsp_flip']:.3f} | "
                     f"{' | '.join(later)} |")  # fmt: skip
    return "\n".join(lines)


# what a domain criterion's property weights may do (dsp_weights), seed 0, one reader; development data
DOMAIN_WEIGHT_FITS = {
    "criteria_fit_wide_bank_dsp_layer_lr_dev.json": "free (as before), seed 0",
    "criteria_fit_dsp_stray_dev.json": "stray: the stray penalty holds them down, seed 0",
    "criteria_fit_dsp_voice_only_dev.json": "voice_only: DSP rows judged by the voice alone, weights held down, seed 0",
    "criteria_fit_members3_dev.json": "free, three readers (shipped before)",
    "criteria_fit_members3_dsp_stray_dev.json": "stray, three readers (shipped)",
}


def domain_weights_table() -> str:
    lines = ["Property weights of domain criteria (`dsp_weights`), development data only (first development bank), "
             "at the serving cut 0.25 / 30 (`criteria_shrinkage.py --development-only`):", "",
             "| dsp_weights | silent: unchanged | two or three criteria | property pairs (mean of worse direction) | "
             "worst property | DSP flip | DSP flip, unseen domain phrasings | property weight of an unseen domain "
             "phrasing (sum of abs) | length board tau (MT-bench) |",
             "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, label in DOMAIN_WEIGHT_FITS.items():
        row = cut(name)
        lines.append(f"| {label} | {row['silent']:.3f} | {row['combined']:.3f} | {row['properties_mean']:.3f} | "
                     f"{row['worst_property']} {row['properties_min']:.3f} | {row['dsp_flip']:.3f} | "
                     f"{row['dsp_flip_development']:.3f} | {row['domain_property_weight']:.2f} | "
                     f"{row['length_board_tau']:.3f} |")  # fmt: skip
    return "\n".join(lines)


def taste_table() -> str:
    r = _load("taste_votes.json")
    med = r["median_tau"]
    counts = list(med["chosen"])
    lines = [f"{r['visitors']} simulated visitors, {int(100 * r['noise'])}% of votes flipped; median Kendall tau "
             "between the board and the visitor's true-taste board (805 queries x 40 models).", "",
             "| pairs | " + " | ".join(f"{c} votes" for c in counts) + " |",
             "|---" * (len(counts) + 1) + "|"]  # fmt: skip
    for strategy in ("chosen", "random"):
        lines.append(f"| {strategy} | " + " | ".join(f"{med[strategy][c]:.3f}" for c in counts) + " |")
    timing = r["refit_and_rerank_seconds"]
    lines += ["", f"Chosen pairs reach the random strategy's 20-vote tau after {r['chosen_reaches_random_20_at']} "
              f"votes; 10 votes lift the median by {r['lift_at_10_votes']:+.3f}. One refit plus the full re-rank: "
              f"median {timing['median']} s, max {timing['max']} s."]  # fmt: skip
    return "\n".join(lines)


def load_table() -> str:
    runs = {"compositional (instant)": _load("load_test_compositional.json"),
            "cross-encoder (crm-minilm, ONNX int8)": _load("load_test_cross_encoder.json")}  # fmt: skip
    first = next(iter(runs.values()))
    lines = [f"{first['visitors']} visitors ranking never-seen criteria for {first['seconds']:.0f} s while one more "
             f"asks for cached views; {first['machine']}; seconds, p50 / p95.", "",
             "| CRM | queries per request | cached view | its queue wait | custom request | its queue wait | "
             "custom requests | queries scored per visitor (min / max) | server RSS MB before / during / after |",
             "|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for name, r in runs.items():
        c, u, m = r["cached"], r["custom"], r["rss_mb"]
        share = r["queries_scored_per_visitor"].values()
        lines.append(f"| {name} | {r['queries_per_request']} | {c['seconds']['p50']} / {c['seconds']['p95']} | "
                     f"{c['queue_wait']['p50']} / {c['queue_wait']['p95']} | {u['seconds']['p50']} / "
                     f"{u['seconds']['p95']} | {u['queue_wait']['p50']} / {u['queue_wait']['p95']} | "
                     f"{u['requests']} | {min(share)} / {max(share)} | {m['before']['p50']} / {m['during']['max']} / "
                     f"{m['after']['p50']} |")  # fmt: skip
    return "\n".join(lines)


ONNX_LABELS = {"pytorch": "PyTorch (float32 compute, float16 weights)", "fp32": "ONNX Runtime float32 export",
               "int8": "ONNX Runtime int8 export (shipped: responses int8, criteria PyTorch)",
               "int8-per-tensor": "int8 per tensor (not used)",
               "int8-criteria": "criteria read through int8 lower layers (not used)"}  # fmt: skip


def compositional_onnx_table() -> str:
    """The compositional CRM's encoders in PyTorch and ONNX Runtime (training/experiments/compositional_onnx.py), and
    its report card as the Space serves it (int8) beside PyTorch's."""
    r = _load("compositional_onnx.json")
    lines = [
        f"`{r['model']}`, {r['machine']}; {r['texts']} AlpacaEval answers encoded, {r['rounds']} interleaved rounds "
        f"(median); criteria: {r['criteria']} validation and development phrasings and silent criteria.",
        "",
        "| encoders | answers/s | x PyTorch | answer vectors: mean / min cosine to PyTorch's | own property read with "
        "PyTorch's sign | phrasings whose surviving weights change | graphs MB | folder MB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, label in ONNX_LABELS.items():
        speed = r["encode_texts_per_s"].get(name)
        vec = r["response_vectors_vs_pytorch"].get(name)
        reads = r["criteria_readings_vs_pytorch"].get(name if name != "int8-per-tensor" else "")
        size = r["sizes"].get(name, {})
        cosine = f"{vec['mean_cosine']:.4f} / {vec['min_cosine']:.4f}" if vec else "1 / 1" if name == "pytorch" else "-"
        lines.append(
            f"| {label} | {speed if speed is not None else '-'} | "
            f"{r['speedup_vs_pytorch'][name] if speed is not None else '-'} | "
            f"{cosine} | "
            f"{reads['own_property_same_sign'] if reads else ('1' if name == 'pytorch' else '-')} | "
            f"{reads['phrasings_with_other_cut_pattern'] if reads else ('0' if name == 'pytorch' else '-')} | "
            f"{size.get('graphs_mb', '-')} | {size.get('folder_mb', '-')} |"
        )
    a, b = _load("compositional_report.json"), _load("compositional_report_onnx_int8.json")

    def row(label: str, get) -> str:
        return f"| {label} | {get(a):.3f} | {get(b):.3f} |"

    lines += ["", "Report card (same data as above), PyTorch vs as served (ONNX int8 response encoder):", "",
              "| measure | PyTorch | ONNX int8 |", "|---|---|---|",
              row("silent criteria: decision unchanged", lambda x: x["properties"]["silent_agreement"]["accuracy"]),
              row("two or three criteria at once", lambda x: x["properties"]["combined"]["accuracy"]),
              row("property pairs, mean of the worse direction",
                  lambda x: sum(v["both"] for v in x["properties"]["properties"].values() if v["pairs"])
                  / sum(1 for v in x["properties"]["properties"].values() if v["pairs"])),
              row("DSP flip", lambda x: x["dsp"]["flip"]["accuracy"])]  # fmt: skip
    lines += [row(f"{name} test accuracy", lambda x, n=name: x["human"][n]["crm"]["accuracy"]) for name in a["human"]]
    lines.append(row("general leaderboard: Kendall tau vs LC", lambda x: x["leaderboard"]["tau_vs_lc"]))
    return "\n".join(lines)


TABLES: dict[str, Callable[[], str]] = {
    "judge": judge_table,
    "performance": performance_table,
    "load": load_table,
    "throughput": throughput_table,
    "latency": latency_table,
    "report-card": lambda: report_card_table(),
    "compositional": compositional_table,
    "instant": instant_table,
    "quality": quality_table,
    "reference": reference_table,
    "quality-window": quality_window_table,
    "quality-finetune": quality_finetune_table,
    "quality-smollm2": quality_smollm2_table,
    "concise": concise_table,
    "length-tradeoff": length_tradeoff_table,
    "taste": taste_table,
    "criteria-fits": criteria_fits_table,
    "criteria-fits-second-bank": criteria_fits_second_bank_table,
    "criteria-seeds": criteria_seeds_table,
    "criteria-frames": criteria_frames_table,
    "criteria-reader-probe": criteria_reader_probe_table,
    "compositional-onnx": compositional_onnx_table,
    "domain-weights": domain_weights_table,
}


DOCUMENTS = (REPO / "README.md", REPO / "docs" / "internals.md", REPO / "docs" / "experiments.md")


def render(text: str, names: list[str] | None = None) -> str:
    """A document with every marked table regenerated; `names` (default: every table) that it lacks are an error."""
    for name in names if names is not None else list(TABLES):
        pattern = re.compile(rf"(<!-- table:{name} -->\n).*?(<!-- /table:{name} -->)", re.S)
        if not pattern.search(text):
            raise ValueError(f"no <!-- table:{name} --> ... <!-- /table:{name} --> block")
        table = TABLES[name]()
        text = pattern.sub(lambda m, table=table: f"{m.group(1)}{table}\n{m.group(2)}", text)
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only check that the documents are up to date")
    parser.add_argument("--documents", type=Path, nargs="+", default=list(DOCUMENTS), metavar="FILE",
                        help="the files holding the tables; every table must be in one of them")  # fmt: skip
    args = parser.parse_args()
    texts = {path: path.read_text(encoding="utf-8") for path in args.documents}
    found = {name: [p for p, t in texts.items() if f"<!-- table:{name} -->" in t] for name in TABLES}
    missing = [name for name, where in found.items() if not where]
    if missing:
        print(f"no <!-- table:{missing[0]} --> block in {', '.join(map(str, texts))}", file=sys.stderr)
        return 2
    stale = []
    for path, text in texts.items():
        wanted = render(text, [name for name, where in found.items() if path in where])
        if wanted != text:
            stale.append(path)
            if not args.check:
                path.write_text(wanted, encoding="utf-8")
                print(f"rewrote the tables in {path}")
    if args.check and stale:
        print(f"{', '.join(map(str, stale))} out of date: run uv run python benchmarks/tables.py", file=sys.stderr)
        return 1
    if args.check:
        print("tables match benchmarks/results/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
