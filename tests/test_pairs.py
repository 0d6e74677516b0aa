"""crm_core.data pairs: validation with exact locations, lossless round trips, and the real files."""

from __future__ import annotations

import json

import polars as pl
import pytest
from conftest import pair, write_jsonl
from crm_core.data import (
    PAIR_SCHEMA,
    DataValidationError,
    load_pairs,
    pair_records,
    pairs_from_dataset,
    pairs_to_dataset,
    write_pairs,
)


def test_valid_file_loads_into_typed_frame(tmp_path):
    path = write_jsonl(tmp_path / "p.jsonl", [pair(0), pair(1, preference="tie", criteria=[]), pair(2, idx=7)])
    frame = load_pairs(path)
    assert frame.schema == pl.Schema(PAIR_SCHEMA)
    assert frame["id"].to_list() == ["p0", "p1", "p2"]
    assert frame["preference"].to_list() == ["model_a", "tie", "model_a"]
    assert frame["criteria"].to_list()[1] == []
    assert frame["model_a"][0][1]["content"] == "A answer"


def test_idx_is_accepted_as_id(tmp_path):
    record = pair(0, id=...)
    record["idx"] = 41
    frame = load_pairs(write_jsonl(tmp_path / "p.jsonl", [record]))
    assert frame["id"].to_list() == ["41"]


def test_write_and_reload_is_lossless_with_extra_fields(tmp_path):
    extra = pair(0, source="auto_j", label_source="human", criteria_source="rubric", meta={"votes": [1, 2], "s": "x"})
    records = [extra, pair(1, note="kept")]
    frame = load_pairs(write_jsonl(tmp_path / "in.jsonl", records))
    write_pairs(frame, tmp_path / "out.jsonl")
    written = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert written == records
    assert load_pairs(tmp_path / "out.jsonl").equals(frame)


def test_datasets_round_trip(tmp_path):
    frame = load_pairs(write_jsonl(tmp_path / "p.jsonl", [pair(0, meta={"k": 1}), pair(1, preference="model_b")]))
    dataset = pairs_to_dataset(frame)
    assert dataset.num_rows == 2
    assert dataset[1]["preference"] == "model_b"
    assert pairs_from_dataset(dataset).equals(frame)
    assert pair_records(pairs_from_dataset(dataset)) == pair_records(frame)


BAD_INPUTS = [
    ("missing field", pair(0, preference=...), "preference", "missing field"),
    ("bad preference", pair(0, preference="A"), "preference", "expected one of ['model_a', 'model_b', 'tie']"),
    (
        "empty response",
        pair(0, model_b=[{"role": "user", "content": "q"}, {"role": "assistant", "content": "  "}]),
        "model_b",
        "empty response",
    ),
    ("criteria not a list", pair(0, criteria="be concise"), "criteria", "expected a list of strings"),
    ("criteria with a number", pair(0, criteria=["ok", 3]), "criteria", "expected a list of strings"),
    (
        "conversation ends with the user",
        pair(0, model_a=[{"role": "assistant", "content": "hi"}, {"role": "user", "content": "q"}]),
        "model_a",
        "must end with the assistant",
    ),
    ("no id", pair(0, id=...), "id", "missing field"),
    ("bad role", pair(0, model_a=[{"role": "bot", "content": "x"}]), "model_a", "role must be one of"),
    ("empty prompt", pair(0, prompt=""), "prompt", "expected a non-empty string"),
]


@pytest.mark.parametrize(("case", "record", "field", "message"), BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_row_error_names_file_line_field(tmp_path, case, record, field, message):
    path = write_jsonl(tmp_path / "p.jsonl", [pair(9), record])
    with pytest.raises(DataValidationError) as info:
        load_pairs(path)
    (problem,) = info.value.problems
    assert (problem.file, problem.line, problem.field) == (str(path), 2, field)
    assert message in problem.message
    assert f"{path}:2: {field}: " in str(info.value)


def test_malformed_json_and_non_object_lines(tmp_path):
    path = write_jsonl(tmp_path / "p.jsonl", [pair(0), '{"id": "x", "prompt": ', "[1, 2]"])
    with pytest.raises(DataValidationError) as info:
        load_pairs(path)
    lines = [(p.line, p.message.split(":")[0]) for p in info.value.problems]
    assert lines == [(2, "malformed JSON"), (3, "expected a JSON object, got list [1, 2]")]


def test_duplicate_id_points_at_first_occurrence(tmp_path):
    path = write_jsonl(tmp_path / "p.jsonl", [pair(0), pair(1), pair(0)])
    with pytest.raises(DataValidationError, match=r":3: id: duplicate id 'p0', first seen on line 1"):
        load_pairs(path)


def test_collect_mode_keeps_good_rows_and_returns_every_rejection(tmp_path):
    records = [pair(0), pair(1, preference="B"), "not json", pair(3), pair(4, criteria=None)]
    path = write_jsonl(tmp_path / "p.jsonl", records)
    frame, rejected = load_pairs(path, on_error="collect")
    assert frame["id"].to_list() == ["p0", "p3"]
    assert rejected.select("line", "field").rows() == [(2, "preference"), (3, None), (5, "criteria")]
    assert rejected["raw"][1] == "not json"
    assert frame.height + rejected["line"].n_unique() == len(records)


def test_all_errors_reported_not_only_first(tmp_path):
    path = write_jsonl(tmp_path / "p.jsonl", [pair(i, preference="bad") for i in range(25)])
    with pytest.raises(DataValidationError) as info:
        load_pairs(path)
    assert len(info.value.problems) == 25
    assert f"{path}:20: preference" in str(info.value) and "and 5 more problem(s)" in str(info.value)  # first 20


def test_failed_write_leaves_previous_file_intact(tmp_path):
    target = write_jsonl(tmp_path / "out.jsonl", [pair(0)])
    before = target.read_text()
    broken = pl.DataFrame({"id": ["x"], "extra": ["{not json"]}).with_columns(
        *[pl.lit(None).alias(c) for c in PAIR_SCHEMA if c not in ("id", "extra")]
    )
    with pytest.raises(json.JSONDecodeError):
        write_pairs(broken, target)
    assert target.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


@pytest.mark.shared_data
def test_real_preference_files_load_and_every_rejection_has_a_reason(shared_data):
    totals = {}
    for path in sorted((shared_data / "preferences").glob("*/pairs.jsonl")):
        frame, rejected = load_pairs(path, on_error="collect")
        n_lines = sum(1 for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
        assert frame.height + rejected["line"].n_unique() == n_lines
        assert rejected["reason"].str.len_chars().min() or rejected.is_empty()
        assert frame["id"].n_unique() == frame.height
        totals[path.parent.name] = (frame.height, rejected.height)
    assert totals["webgpt"] == (901, 0)
    assert totals["auto_j"][0] > 1300
