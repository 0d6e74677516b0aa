"""benchmarks/bench_boards.py: the junk it adds and the MT-bench tau it reports with the junk in the bench and
without it (the board a visitor sees)."""

from __future__ import annotations

import gzip
import json

from conftest import load_script


def _tiny_bench(tmp_path, name: str, swapped: bool = False):
    from crm_core.data import open_bench

    data = tmp_path / name
    data.mkdir()
    (data / "instructions.jsonl").write_text(
        "".join(json.dumps({"idx": i, "instruction": f"Explain how topic {i} works."}) + "\n" for i in range(6))
    )
    answers = {  # from a bare line to a full answer, so the models differ in quality
        "gpt4_1106_preview": "Topic {i} works in three steps. First it starts. Then it runs. Finally it stops.",
        "m1": "No.",
        "m2": "It works.",
        "m3": "Topic {i} works by starting and then running until it stops.",
        "m4": "Topic {i} works in steps: it starts, it runs, and it stops once the work is done.",
    }
    if swapped:  # the best and the worst model trade answers: the bench's board turns round
        answers["m1"], answers["m4"] = answers["m4"], answers["m1"]
    rows = [{"model": m, "idx": i, "output": text.format(i=i)} for m, text in answers.items() for i in range(6)]
    with gzip.open(data / "model_outputs.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in rows))
    return open_bench(data)


def test_the_tau_without_the_junk_is_the_plain_bench_s_own_board(tmp_path):
    from crm_core.agreement import kendall_tau
    from usl_space.cache import ScoreCache
    from usl_space.loading import make_engine, open_scorer

    boards = load_script("benchmarks/bench_boards.py")
    plain = _tiny_bench(tmp_path, "plain")
    junked = boards.junk_entries(plain, "NULL")
    assert set(junked.models) == set(plain.models) | set(boards.JUNK)
    scorer = open_scorer(None, "onnx")
    engine = make_engine(junked, scorer, ScoreCache(":memory:"))
    # the figure must come from the engine it is given, not from the junk bench's board: give it one that differs
    alone = make_engine(_tiny_bench(tmp_path, "swapped", swapped=True), scorer, ScoreCache(":memory:"))
    scores = {"m1": 1.0, "m2": 2.0, "m3": 3.0, "m4": 4.0}

    result = boards.judge_bench(engine, "mt_bench", None, scores, alone)
    general = result["boards"]["general"]
    rates = {r["model"]: r["win_rate"] for r in alone.rank([], models=list(scores), bootstrap=0).rows}
    assert general["tau_vs_mt_bench_without_junk"] == round(
        kendall_tau([rates[m] for m in scores], list(scores.values())), 3
    )
    assert general["tau_vs_mt_bench"] > 0 > general["tau_vs_mt_bench_without_junk"]
    assert "tau_vs_mt_bench_without_junk" not in result["boards"]["brief"]  # a general board's figure only
    row = boards.summary("now", "mt_bench", result)
    assert row["tau vs MT-bench score without the junk (general)"] == general["tau_vs_mt_bench_without_junk"]
    assert row["tau vs MT-bench score (general)"] == general["tau_vs_mt_bench"]

    without = boards.judge_bench(engine, "mt_bench", None, scores)  # no plain engine given: nothing claimed
    assert "tau_vs_mt_bench_without_junk" not in without["boards"]["general"]
    assert boards.summary("now", "mt_bench", without)["tau vs MT-bench score without the junk (general)"] is None
