"""crm_core.data benches: the three source layouts, their errors, and the Parquet round trip."""

from __future__ import annotations

import json

import polars as pl
import pytest
from conftest import INSTRUCTIONS, model_items, write_jsonl
from crm_core.data import (
    Bench,
    DataValidationError,
    detect_layout,
    load_alpaca_eval_combined,
    load_alpaca_eval_per_model,
    load_mt_bench,
    open_bench,
)


def test_per_model_layout_reports_missing_queries(per_model_dir):
    bench = open_bench(per_model_dir, baseline="base")
    assert detect_layout(per_model_dir) == "alpaca_eval_per_model"
    assert bench.models == ["alpha", "base", "beta"]
    assert bench.queries["instruction"].to_list() == INSTRUCTIONS
    assert bench.incomplete_models() == {"beta": 1}
    row = bench.responses.filter((pl.col("model") == "alpha") & (pl.col("idx") == 3)).row(0, named=True)
    assert row["output"] == "Alpha says 3"


def test_combined_and_per_model_layouts_give_the_same_content(per_model_dir, combined_dir):
    combined = load_alpaca_eval_combined(combined_dir, models=["alpha", "base"], baseline="base")
    per_model = load_alpaca_eval_per_model(per_model_dir, models=["alpha"], baseline="base")
    assert per_model.models == ["alpha", "base"]  # the baseline is always included
    assert combined.responses.equals(per_model.responses)
    assert combined.queries.columns == ["idx", "dataset", "instruction"]


def test_duplicate_model_query_is_an_error(per_model_dir):
    items = model_items("alpha")
    items.append(dict(items[2]))
    (per_model_dir / "alpha" / "model_outputs.json").write_text(json.dumps(items))
    with pytest.raises(
        DataValidationError, match=r"alpha/model_outputs.json item:7: instruction: duplicate .*\(alpha, 2\)"
    ):
        open_bench(per_model_dir, baseline="base")


def test_duplicate_rows_in_combined_file_are_an_error(combined_dir):
    path = combined_dir / "model_outputs.jsonl.gz"
    rows = [{"model": "base", "idx": i, "generator": "base", "output": "x"} for i in (0, 1, 1)]
    write_jsonl(path, rows)
    with pytest.raises(DataValidationError, match=r"1 duplicate \(model, query\) pair\(s\): \(base, 1\)"):
        load_alpaca_eval_combined(combined_dir, baseline="base")


def test_unknown_baseline_suggests_close_names(per_model_dir):
    with pytest.raises(DataValidationError, match=r"unknown model\(s\): 'bse' \(did you mean \['base'\]\?\)"):
        open_bench(per_model_dir, baseline="bse")


def test_unknown_model_and_unknown_instruction(per_model_dir):
    with pytest.raises(DataValidationError, match="unknown model"):
        open_bench(per_model_dir, models=["gamma"], baseline="base")
    items = model_items("alpha")
    items[4]["instruction"] = "A question nobody asked"
    (per_model_dir / "alpha" / "model_outputs.json").write_text(json.dumps(items))
    with pytest.raises(DataValidationError, match=r"item:5: instruction: not one of the bench's instructions"):
        open_bench(per_model_dir, baseline="base")


def test_bad_combined_line_is_located(combined_dir):
    rows = [
        {"model": "base", "idx": 0, "generator": "base", "output": "x"},
        {"model": "base", "idx": "one", "output": "y"},
    ]
    write_jsonl(combined_dir / "model_outputs.jsonl.gz", [*rows, "{broken"])
    with pytest.raises(DataValidationError) as info:
        load_alpaca_eval_combined(combined_dir, baseline="base")
    assert [(p.line, p.field) for p in info.value.problems] == [(2, "idx"), (3, None)]
    assert "expected int, got str" in str(info.value)


def test_malformed_model_outputs_json(per_model_dir):
    (per_model_dir / "beta" / "model_outputs.json").write_text('[{"instruction": "x", "output": 5}]')
    with pytest.raises(DataValidationError, match=r"beta/model_outputs.json item:1: output: expected str, got int"):
        open_bench(per_model_dir, baseline="base")
    (per_model_dir / "beta" / "model_outputs.json").write_text('[{"instruction": "x",\n "output": }]')
    with pytest.raises(DataValidationError, match=r"beta/model_outputs.json:2: malformed JSON"):
        open_bench(per_model_dir, baseline="base")


def test_save_load_identical_and_keeps_topic_columns(per_model_dir, tmp_path):
    bench = open_bench(per_model_dir, baseline="base")
    bench.queries = bench.queries.with_columns(pl.lit("Education & Learning").alias("topic"), pl.lit(0.5).alias("sim"))
    bench.save(tmp_path / "bench")
    loaded = open_bench(tmp_path / "bench")
    assert loaded.queries.equals(bench.queries)
    assert loaded.responses.equals(bench.responses)
    assert (loaded.name, loaded.baseline) == (bench.name, bench.baseline)
    manifest = json.loads((tmp_path / "bench" / "manifest.json").read_text())
    assert manifest["content_hash"] == bench.content_hash()
    assert manifest["incomplete_models"] == {"beta": 1}
    assert manifest["query_columns"] == ["idx", "instruction", "topic", "sim"]


def test_content_hash_changes_with_content_and_load_detects_tampering(per_model_dir, tmp_path):
    bench = open_bench(per_model_dir, baseline="base")
    original = bench.content_hash()
    shuffled = Bench(bench.name, bench.source, bench.baseline, bench.queries.reverse(), bench.responses.reverse())
    assert shuffled.content_hash() == original
    changed = bench.responses.with_columns(
        pl.when(pl.col("idx") == 0).then(pl.lit("edited")).otherwise(pl.col("output")).alias("output")
    )
    assert Bench(bench.name, bench.source, bench.baseline, bench.queries, changed).content_hash() != original
    bench.save(tmp_path / "bench")
    changed.write_parquet(tmp_path / "bench" / "responses.parquet")
    with pytest.raises(DataValidationError, match="content hash"):
        Bench.load(tmp_path / "bench")


def test_failed_save_keeps_the_previous_bench(per_model_dir, tmp_path, monkeypatch):
    bench = open_bench(per_model_dir, baseline="base")
    bench.save(tmp_path / "bench")
    bench.queries = bench.queries.with_columns(pl.lit("new").alias("topic"))

    def disk_full() -> str:  # fails after the Parquet files are written, before the manifest
        raise OSError("No space left on device")

    monkeypatch.setattr(bench, "content_hash", disk_full)
    with pytest.raises(OSError, match="No space left"):
        bench.save(tmp_path / "bench")
    assert Bench.load(tmp_path / "bench").queries.columns == ["idx", "instruction"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench", "per_model"]


def test_mt_bench_first_turns(tmp_path):
    root = tmp_path / "mt"
    write_jsonl(
        root / "question.jsonl",
        [
            {"question_id": 81, "category": "writing", "turns": ["Write a poem.", "Shorter."]},
            {"question_id": 82, "category": "math", "turns": ["2+2?", "Times 3?"]},
        ],
    )
    for model in ("gpt-4", "vicuna"):
        write_jsonl(
            root / "model_answer" / f"{model}.jsonl",
            [
                {
                    "question_id": q,
                    "model_id": f"{model}-internal",
                    "choices": [{"index": 0, "turns": [f"{model} {q}", "t2"]}],
                }
                for q in (81, 82)
            ],
        )
    bench = load_mt_bench(root)
    assert detect_layout(root) == "mt_bench"
    assert bench.baseline == "gpt-4"
    assert bench.queries.select("idx", "instruction", "category").rows() == [
        (81, "Write a poem.", "writing"),
        (82, "2+2?", "math"),
    ]
    assert bench.responses.filter(pl.col("model") == "vicuna")["output"].to_list() == ["vicuna 81", "vicuna 82"]
    write_jsonl(root / "model_answer" / "vicuna.jsonl", [{"question_id": 81, "choices": []}])
    with pytest.raises(DataValidationError, match=r"vicuna.jsonl:1: choices: expected choices\[0\].turns\[0\]"):
        load_mt_bench(root)
    (root / "model_answer" / "vicuna.jsonl").write_text("")  # an empty answer file: named, not a vanished model
    with pytest.raises(DataValidationError, match=r"vicuna.jsonl: model 'vicuna' has no answers \(an empty file\)"):
        load_mt_bench(root)


def test_not_a_bench_folder(tmp_path):
    with pytest.raises(DataValidationError, match="not a bench folder"):
        open_bench(tmp_path)


@pytest.mark.shared_data
def test_real_alpaca_eval_default_bench(shared_data):
    bench = open_bench(shared_data / "usl" / "alpaca_eval")
    assert (bench.queries.height, len(bench.models), bench.baseline) == (805, 40, "gpt4_1106_preview")
    assert bench.responses.height == 40 * 805 - sum(bench.incomplete_models().values())


@pytest.mark.shared_data
def test_real_alpaca_eval_all_outputs_and_mt_bench(shared_data, tmp_path):
    source = shared_data / "usl" / "alpaca_eval"
    every_model = [m["model"] for m in json.loads((source / "models_index.json").read_text())["models"]]
    bench = load_alpaca_eval_combined(source, models=every_model)
    assert (bench.responses.height, len(bench.models)) == (182_723, 227)
    assert sum(1 for missing in bench.incomplete_models().values() if missing) == 227 - 219
    mt = open_bench(shared_data / "usl" / "mt_bench")
    assert (mt.queries.height, len(mt.models)) == (80, 32)


def test_a_folder_without_alpaca_evals_baseline_takes_its_most_complete_model(tmp_path, capsys):
    """A 2025 bench in AlpacaEval's layout (creative, speechmap) has no gpt4_1106_preview: with no --baseline its
    model with the most non-empty answers is the baseline, ties broken by name, and the choice is said."""
    root = tmp_path / "bench2025"
    write_jsonl(root / "instructions.jsonl", [{"idx": i, "instruction": t} for i, t in enumerate(INSTRUCTIONS)])
    rows = [{"model": m, "idx": i, "output": f"{m} answers {i}"} for m in ("zeta", "eta") for i in range(6)]
    rows += [{"model": "omega", "idx": i, "output": "" if i else "only one"} for i in range(6)]
    write_jsonl(root / "model_outputs.jsonl.gz", rows)
    bench = open_bench(root)
    assert bench.baseline == "eta"  # eta and zeta answered all six; eta first by name; omega answered one
    assert bench.name == "bench2025"  # named by its folder, not as AlpacaEval
    assert "baseline eta" in capsys.readouterr().err
    assert open_bench(root, baseline="zeta").baseline == "zeta"
