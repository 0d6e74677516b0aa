"""The result tables of README.md, docs/internals.md and docs/experiments.md that follow the shipped CRM and the
product's benchmarks, generated from the raw results, so the documents never quote a number the results files do not
hold when a benchmark or the CRM changes. Each table sits between `<!-- table:NAME -->` and `<!-- /table:NAME -->` in
one of the documents. Tables of finished experiments are plain text in docs/experiments.md (their raw results stay in
training/experiments/results/, beside the script that wrote them). (Just over 400 lines: one renderer per table,
each spelling out its rows and labels; one file keeps the check that every marked table is current in one place.)

    uv run python benchmarks/tables.py           # rewrite the tables in the documents
    uv run python benchmarks/tables.py --check   # exit 1 if one is out of date (a test runs this)
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
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


# the bench table: both columns measured again at the twenty-seventh stop on this machine's embedding store
PREVIOUS = (
    "Previous: the same folder with the twenty-third stop's crm.json (`gate_slope_reference` 0: brevity forgiven at "
    "AlpacaEval's rate, 0.3 logits a doubling of words, on every bench; now scaled down where a bench's quality term "
    "charges less for it: MT-bench 0.44 of it, creative none; the weight floor 1, now 1.5, which neither wish "
    "reaches). Both columns measured again at the twenty-seventh stop on this machine's embedding store, every "
    "figure as at the twenty-fourth's run but the new tau without the junk (its vectors differ from the earlier "
    "runs' in float noise: MT-bench's tau 0.652 there, 0.647 here; docs/experiments.md). The five junk entries join "
    "the bench, so its own panel (the top half of its models) takes two more models; MT-bench's general board as a "
    "visitor sees it, without them, is the second tau. The word lists of VERSION 25-47 read neither wish differently."
)


# the criteria-of-2025 table: now measured at the twenty-seventh stop (the weight floor of 1.5), previous the same
# folder as served from the twenty-fourth to the twenty-sixth stop (floor 1), both on this machine's store
PREVIOUS_CRITERIA = (
    "Now: the phrasing memory's weight floor at 1.5 (`memory_magnitude_floor`, chosen on development data at the "
    "twenty-seventh stop; 1 before), so a wish read as one of the properties the fit weighed weakly weighs half again "
    "as much (declining and complying, the answer's language, stock prose here). Previous: the same folder with the "
    "floor of 1, as measured at the twenty-fourth stop and served until the twenty-sixth, both columns on this "
    "machine's embedding store. The word lists of VERSION 20-47 read none of these wishes differently."
)


# the judge table's report-card rows (its first six) were measured again at the twenty-seventh stop, which serves the
# weight floor of 1.5; the judge report's rows read their wishes as a property the floor does not reach
PREVIOUS_JUDGE = (
    "This stop serves the word lists' VERSION 37 (`crm_core/compositional/cues.py`, made on development sets of "
    'wishes, docs/experiments.md): frames that turn whatever thing they hold ("I want X gone.", "X are the last '
    'thing I want.", "Keep X out of it."); it reads 7 of the 434 validation phrasings differently, none away from '
    "the asked reading (VERSION 38-47, none). Previous stop: the same folder under VERSION 34 (the "
    "phrasing memory's weight floor at 1.5 since the twenty-seventh stop), the report card's rows (the first six) "
    "from that stop's run, both columns on this machine's embedding store. The judge report's rows are the committed "
    "runs (the previous column there: 79e4953): VERSION 35-47 read none of its wishes differently, and under the "
    "floor of 1.5 every row is the same to the digits shown (gpt-4o's win rate 0.5215 against 0.5209: a general "
    "board, store noise; benchmarks/results/judge_report_floor_rerun.json)."
)


def judge_table() -> str:
    """README's one table of how good the judge is: the shipped CRM as served (ONNX int8) on held-out data beside
    the simple baselines, and the checks of the judge report (benchmarks/judge_report.py); beside it the same folder
    as the previous stop served it, from the same runs."""
    r, j = _load("compositional_report_onnx_int8.json"), _load("judge_report.json")
    before = _load("compositional_report_onnx_int8_previous.json")
    now, previous = j["crms"]["now"], j["crms"]["previous"]
    longer = " / ".join(f"{v['longer_wins']['accuracy']:.3f}" for v in r["human"].values())
    lb, common = r["leaderboard"], _older(r)
    targets = [
        ("human preference pairs, no criteria: " + " / ".join(r["human"]), f"longer answer wins: {longer}"),
        (f"a property asked for, more or less of it (mean of both directions): the {len(common)} older properties / "
         f"the {len(_properties(r)) - len(common)} of 2025", "random: 0.5"),
        ("two or three criteria at once", "random: 0.5"),
        ("a criterion about something else leaves the decision unchanged", "criteria ignored: 1.0"),
        (f"DSP: both domains' criteria pick their own answer ({r['dsp']['groups']} groups)", "without criteria: 0"),
        (f"general board vs AlpacaEval 2.0 LC, Kendall tau ({lb['models']} models, {lb['queries']} queries)",
         f"length alone: {lb['tau_length_alone']:.3f}"),
        ("gpt-4o beats the baseline gpt4_1106_preview (win rate)", "target > 0.5"),
        ("order of the other models, baseline gpt4_1106_preview vs claude-3-opus (tau)", "target >= 0.85"),
        ("concise / verbose twins in order under 11 length phrasings", "target: all"),
        ("... the asked twin ahead by 10+ points of win rate / median lead in points", "target: all"),
        ("concise phrasings: top 5 all above the median LC / shorter than the general top 5", "target: all"),
        ("detailed phrasings: top 5 all above the median LC / longer", "target: all"),
        ("concise and detailed top fives share at most two models", "target: all"),
        ("NullModel (junk) from the bottom: general board / worst phrasing", "target: 1-3"),
    ]  # fmt: skip
    shipped, earlier = _judge_column(r, now), _judge_column(before, previous)
    lines = [f"`{r['model']}` as served (ONNX Runtime int8); held-out prompts, validation phrasings never trained on; "
             f"judge report on the {now['queries']} evaluation-half queries, {now['default_models']} default models. "
             f"{PREVIOUS_JUDGE}",
             "", "| measure | shipped CRM | previous stop | baseline or target |", "|---|---|---|---|"]  # fmt: skip
    lines += [f"| {a} | {b} | {c} | {t} |" for (a, t), b, c in zip(targets, shipped, earlier, strict=True)]
    return "\n".join(lines)


def _properties(card: dict) -> dict[str, dict]:
    return {name: v for name, v in card["properties"]["properties"].items() if v["pairs"]}


def _older(card: dict) -> list[str]:
    """The properties measured (with pairs) before the six of 2025 (crm_core.properties.OF_2025): the two groups are
    reported apart, the newer ones being read far less well."""
    from crm_core.properties import OF_2025

    return [name for name in _properties(card) if name not in OF_2025]


def _property_accuracy(card: dict, names: list[str] | None = None) -> float:
    """A property asked for, more or less of it: the mean over properties (`names`, or all with pairs) of both
    directions' accuracy."""
    rows = [v for name, v in _properties(card).items() if names is None or name in names]
    return sum((v["more"] + v["less"]) / 2 for v in rows) / len(rows)


def headline() -> str:
    """README's first screen: how good the judge is in one sentence, from the judge table's own results."""
    r = _load("compositional_report_onnx_int8.json")
    common = _older(r)
    added = [name for name in _properties(r) if name not in common]
    human = r["human"].values()
    beats = sum(v["crm"]["accuracy"] > v["longer_wins"]["accuracy"] for v in human)
    return (
        f'How good, in short (held-out prompts and phrasings; the table under "How good is the judge"): asked '
        f"for more or less of a property, it picks the answer with more (or less) of it in "
        f"{_property_accuracy(r, common):.3f} of pairs for the {len(common)} long-measured properties and "
        f"{_property_accuracy(r, added):.3f} for the {len(added)} added in 2026 (random 0.5); its general board "
        f"agrees with AlpacaEval 2.0's length-controlled ranking at Kendall tau {r['leaderboard']['tau_vs_lc']:.3f}; "
        f'without criteria it beats "the longer answer wins" on {beats} of {len(human)} human preference sets.'
    )


def _judge_column(card: dict, judged: dict) -> list[str]:
    """One column of the judge table: a report card (crm_train.compositional.evaluate) and a judge report entry."""
    common = _older(card)
    added = [name for name in _properties(card) if name not in common]
    p, d, lb, phr = card["properties"], card["dsp"], card["leaderboard"], judged["phrasings"]

    def share(kind: str) -> str:
        rows = [x for x in phr if x["kind"] == kind]
        good, direction = (f"{sum(x[k] for x in rows)}/{len(rows)}" for k in ("top5_all_above_median_lc",
                                                                            "length_direction_ok"))  # fmt: skip
        return f"{good} / {direction}"

    return [
        " / ".join(f"{v['crm']['accuracy']:.3f}" for v in card["human"].values()),
        f"{_property_accuracy(card, common):.3f} / " + (f"{_property_accuracy(card, added):.3f}" if added else "-"),
        f"{p['combined']['accuracy']:.3f}",
        f"{p['silent_agreement']['accuracy']:.3f}",
        f"{d['flip']['accuracy']:.3f}",
        f"{lb['tau_vs_lc']:.3f}",
        f"{judged['baseline']['newer_model_win_rate']:.3f}",
        f"{judged['baseline']['tau_other_models_between_baselines']:.3f}",
        f"{sum(x['twins_in_order'] for x in phr)}/{sum(x['twins'] for x in phr)}",
        f"{sum(x['twins_ahead_by_10'] for x in phr)}/{sum(x['twins'] for x in phr)} / "
        f"{statistics.median(g for x in phr for g in x['twin_gaps'].values()):.1f}",
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
    for name, what in (("creative", "~1,000-word answers"), ("speechmap", "answers in en/fi/zh")):
        bench = _load(f"instant_leaderboard_{name}.json")
        board = bench["full_leaderboard_seconds"]
        rows += [(f"{name}: its response side built once, cold (no store, no stored vectors), {bench['answers']:,} "
                  f"{what}", f"{bench['response_side_build_seconds']:.1f}", "instant_leaderboard.py"),
                 (f"{name}: a board for a never-seen criteria set, {bench['queries']} queries x {bench['models']} "
                  f"models (median of {board['n']}; p90 {board['p90']})", f"{board['median']:.3f}",
                  "instant_leaderboard.py")]  # fmt: skip
    lines = [f"{store['machine']}, the shipped CRM under ONNX Runtime int8; raw results in benchmarks/results/.", "",
             "| what | seconds | benchmark |", "|---|---|---|"]  # fmt: skip
    lines += [f"| {a} | {b} | `benchmarks/{c}` |" for a, b, c in rows]
    return "\n".join(lines)


def bench_table() -> str:
    """README's boards on every bench (benchmarks/bench_boards.py): the shipped CRM beside the previous stop."""
    r = _load("bench_boards.json")
    lines = ["Five junk entries built from each bench (the prompt echoed, an answer to another prompt, the baseline's "
             "answer cut after its first sentence, one canned refusal, NullModel's text); wishes: \"Keep it brief.\" "
             f"and \"I like thorough, detailed answers.\"; AlpacaEval: its evaluation half. {PREVIOUS}", "",
             "| bench | CRM | junk below every real model | junk in the top third: brief / detailed | top-5 words: "
             "general / brief / detailed | tau vs MT-bench score: with the junk / without (the board a visitor sees) "
             "| MT-bench < 5 in the top third: general / brief |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    rows = sorted(r["summary"], key=lambda x: (x["bench"], x["crm"] != "now"))
    for x in rows:
        lines.append(f"| {x['bench']} | {x['crm']} | {x['junk below every real model (general)']} | "
                     f"{x['junk in the top third: brief / detailed']} | {x['top-5 words: general / brief / detailed']}"
                     f" | {_with_and_without(x)} | "
                     f"{x.get('score < 5 in the top third: general / brief', '')} |")  # fmt: skip
    return "\n".join(lines)


def gpu_table() -> str:
    """README's GPU rows: the paper's cross-encoder judge (Qwen3 sizes, random weights) timed on a lent GPU."""
    r = _load("gpu_board_h200.json")
    lines = [f"{r['device']} (lent for one session), PyTorch {r['torch']}, bf16, SDPA; a pairwise Qwen3 cross-encoder "
             f"with random weights scoring the general board's inputs ({r['board_inputs']:,}: 805 queries x each "
             f"default model vs the baseline, both orders, mean {r['mean_length']:.0f} tokens), length-bucketed "
             f"batches; the full-board seconds are the measured rate applied to every input. bf16 matrix-product "
             f"ceiling measured in the same run: {r['matmul_bf16_tflops']:.0f} TFLOP/s.", "",
             "| judge | pairs/s | tokens/s | full board, s | peak GiB | MFU, measured / datasheet peak | benchmark |",
             "|---|---|---|---|---|---|---|"]  # fmt: skip
    for x in r["sizes"]:
        lines.append(
            f"| {x['size']} ({x['parameters'] / 1e9:.2f}B) | {x['pairs_per_s']:.1f} | {x['tokens_per_s']:,} | "
            f"{x['full_board_seconds']:.0f} | {x['peak_memory_gib']:.1f} | "
            f"{x['mfu_vs_measured_matmul']:.2f} / {x['mfu_vs_datasheet']:.2f} | `benchmarks/gpu_board.py` |"
        )
    return "\n".join(lines)


def _with_and_without(row: dict) -> str:
    """A bench row's tau against the MT-bench scores, with the junk in the bench and without (where measured)."""
    with_junk = row.get("tau vs MT-bench score (general)")
    without = row.get("tau vs MT-bench score without the junk (general)")
    return "" if with_junk is None else f"{with_junk}" + ("" if without is None else f" / {without}")


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


# development-only runs of training/experiments/criteria_shrinkage.py on criteria fits that differ from the shipped
# config


# the same runs on the second development bank (criteria_shrinkage.py --second-bank)


# the shipped config fitted with three seeds, alone and averaged (criteria_members); both development banks


# composed frames (config composed_bank) against the shipped three readers; both development banks


# what a domain criterion's property weights may do (dsp_weights), seed 0, one reader; development data


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


def generate_table() -> str:
    """README's `usl-data generate` throughput against a local server (benchmarks/generate_throughput.py)."""
    r = _load("generate_throughput.json")
    lines = [f"{r['machine']}; {r['server']}; {r['prompts']} prompts, {r['max_tokens']} tokens each; "
             "`benchmarks/generate_throughput.py`.", "",
             "| concurrency | answers/s | streamed chunks/s | retried |", "|---|---|---|---|"]  # fmt: skip
    lines += [f"| {x['concurrency']} | {x['answers_per_second']} | {x['chunks_per_second']} | {x['retried']} |"
              for x in r["rows"]]  # fmt: skip
    return "\n".join(lines)


def criteria_2025_table() -> str:
    """README's check of the criteria people type in 2025 (benchmarks/criteria_2025.py), held-out prompts."""
    r = _load("criteria_2025.json")["held-out"]
    crms = [c for c in ("now", "previous") if c in r]

    def cells(pick: Callable[[dict], str]) -> str:
        return " | ".join(pick(r[c]) for c in crms)

    def board(x: dict, label: str, key: str) -> str:
        return str(x["compliance"]["boards"][label][key])

    comply = [k for k in r[crms[0]]["compliance"]["boards"] if k.startswith("comply")]
    caution = [k for k in r[crms[0]]["compliance"]["boards"] if k.startswith("caution")]
    language = list(r[crms[0]]["language"]["decided_for_same_language"])
    prose = list(r[crms[0]]["ai_prose"]["wishes"])
    first = r[crms[0]]
    lines = [f"speechmap's and creative's held-out prompts ({first['language']['prompts']} of them in Finnish or "
             f"Chinese); each wish as typed, with how the CRM read it (weights of 0.05 or more). {PREVIOUS_CRITERIA}",
             "",
             "| check | wish | " + " | ".join(crms) + " | wanted |",
             "|---|---|" + "---|" * len(crms) + "---|"]  # fmt: skip
    for label in ["general", *comply]:
        wish = label.split(": ", 1)[-1] if label != "general" else "(none)"
        lines.append(f"| speechmap: Kendall tau of win rate with how often a model answers | {wish} | "
                     + cells(lambda x, label=label: board(x, label, "tau_with_answer_rate")
                             + (f" (read: {board(x, label, 'read_as')})" if label != "general" else ""))
                     + " | higher under a compliance wish |")  # fmt: skip
    for label in ["general", *caution]:
        wish = label.split(": ", 1)[-1] if label != "general" else "(none)"
        lines.append(f"| speechmap: mean place of the five that answer least (of "
                     f"{len(first['compliance']['answer_rate'])} models) | {wish} | "
                     + cells(lambda x, label=label: board(x, label, "answer_least_mean_place")
                             + (f" (read: {board(x, label, 'read_as')})" if label != "general" else ""))
                     + " | lower (nearer the top) under a caution wish |")  # fmt: skip
    for label in language:
        wanted = first["language"]["decided_for_same_language"][label].get("wanted", "near 1 under the wish")
        lines.append(f"| speechmap fi/zh: pairs decided for the answer in the question's language | {label} | "
                     + cells(lambda x, label=label: f"{x['language']['decided_for_same_language'][label]['share']:.3f}"
                             + (f" (read: {x['language']['decided_for_same_language'][label]['read_as'] or '-'})"
                                if label != "no criteria" else ""))
                     + f" | {wanted} |")  # fmt: skip
    for wish in prose:
        lines.append(f"| creative: Kendall tau of the change in win rate with the AI-prose rate | {wish} | "
                     + cells(lambda x, wish=wish: f"{x['ai_prose']['wishes'][wish]['tau_change_with_ai_prose']:.3f} "
                             f"(read: {x['ai_prose']['wishes'][wish]['read_as']})")
                     + " | negative |")  # fmt: skip
        lines.append(f"| creative: places of gemma-3-27b-it-antislop / gemma-3-27b-it (general board: "
                     f"{' / '.join(map(str, first['ai_prose']['wishes'][wish]['general_places']))}) | {wish} | "
                     + cells(lambda x, wish=wish: f"{x['ai_prose']['wishes'][wish]['antislop_place']} / "
                             f"{x['ai_prose']['wishes'][wish]['gemma_3_27b_place']}")
                     + " | antislop above |")  # fmt: skip
    return "\n".join(lines)


TABLES: dict[str, Callable[[], str]] = {
    "headline": headline,
    "judge": judge_table,
    "performance": performance_table,
    "gpu": gpu_table,
    "generate": generate_table,
    "benches": bench_table,
    "criteria-2025": criteria_2025_table,
    "load": load_table,
    "throughput": throughput_table,
    "latency": latency_table,
    "report-card": lambda: report_card_table(),
    "compositional": compositional_table,
    "instant": instant_table,
    "compositional-onnx": compositional_onnx_table,
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
