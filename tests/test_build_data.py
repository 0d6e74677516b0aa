"""crm_train.build_data: honest criteria, the AlpacaEval rule, prompt-disjoint splits (real shared data)."""

from __future__ import annotations

import json
import random
from collections import defaultdict

import pytest
from crm_core.data import load_pairs
from crm_train.build_data import STYLE_CRITERIA, build, length_options, style_label, style_properties


def test_style_labels_follow_the_responses():
    short, long = "A short answer with at least fifteen words in it, which is surely enough here, ok.", "word " * 60
    kinds = {style_label(short, long, random.Random(s)) for s in range(40)}
    assert kinds == {("concise", "model_a"), ("detailed", "model_b")}
    listed = "Steps:\n1. one thing\n2. another thing\n3. a third thing and more words here"
    prose = "You do one thing, then another thing, and then a third thing with more words here."
    assert {style_label(listed, prose, random.Random(s)) for s in range(40)} == {
        ("lists", "model_a"),
        ("prose", "model_b"),
    }
    assert style_label("same length text here", "same length text there", random.Random(0)) is None
    assert style_properties("```py\nx = 1\n```")["code"]


def test_length_options_need_the_ratio_and_fifteen_words():
    words = lambda n: "word " * n  # noqa: E731
    assert length_options(words(20), words(30), 1.5) == [("concise", "model_a"), ("detailed", "model_b")]
    assert length_options(words(30), words(20), 1.5) == [("concise", "model_b"), ("detailed", "model_a")]
    assert length_options(words(20), words(29), 1.5) == []  # 1.45x: not clear enough
    assert length_options(words(20), words(30), 2.0) == []
    assert length_options(words(10), words(90), 1.5) == []  # a 10-word answer is too short to judge by length


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from conftest import shared_data_dir

    shared = shared_data_dir()
    if not (shared / "preferences").is_dir():
        pytest.skip(f"real data folder {shared} is absent")
    out = tmp_path_factory.mktemp("crm") / "data"
    manifest = build(shared, out, seed=0, caps={"dsp": 500}, length_ratio=1.5)
    alpaca = {
        json.loads(line)["instruction"].strip() for line in (shared / "usl/alpaca_eval/instructions.jsonl").open()
    }
    return out, manifest, alpaca


def test_every_file_is_valid_pairs_with_provenance(built):
    out, manifest, _ = built
    for name, count in manifest["files"].items():
        frame = load_pairs(out / f"{name}.jsonl")
        assert frame.height == count > 0, name
        assert frame["label_source"].null_count() == 0 and frame["criteria_source"].null_count() == 0
    assert manifest["rows"]["dsp"]["train"] == 500  # the cap


def test_no_alpaca_eval_instruction_in_training_data(built):
    out, manifest, alpaca = built
    for name in ("train", "validation"):
        for record in map(json.loads, (out / f"{name}.jsonl").open()):
            assert record["prompt"].strip() not in alpaca
            assert record["model_a"][0]["content"].strip() not in alpaca
    assert manifest["alpaca_eval_dropped"]["hh_rlhf"] == 134  # the data README's count


def test_splits_share_no_prompt(built):
    out, manifest, _ = built
    prompts = defaultdict(set)
    for name in manifest["files"]:
        if name == "pandalm_test":
            continue
        split = "test" if name.startswith("test_") else name
        prompts[split] |= {json.loads(line)["prompt"] for line in (out / f"{name}.jsonl").open()}
    assert not prompts["train"] & prompts["validation"]
    assert not prompts["train"] & prompts["test"] and not prompts["validation"] & prompts["test"]


def test_dsp_test_pairs_flip_with_the_criterion(built):
    out, _, _ = built
    groups = defaultdict(list)
    for record in map(json.loads, (out / "test_dsp.jsonl").open()):
        if "normal" not in record["id"]:
            groups[record["flip_group"]].append(record)
    assert groups and all(len(rows) == 2 for rows in groups.values())
    for first, second in groups.values():
        winner = lambda r: r[r["preference"]][-1]["content"]  # noqa: E731
        assert winner(first) != winner(second) and first["criteria"] != second["criteria"]
        assert first["loser_criteria"] and second["loser_criteria"]


def test_style_rows_are_labelled_from_the_text(built):
    out, _, _ = built
    checked = 0
    for record in map(json.loads, (out / "train.jsonl").open()):
        if record["source"] != "style" or "concise" not in record["id"]:
            continue
        words = [len(record[side][-1]["content"].split()) for side in ("model_a", "model_b")]
        assert (words[0] < words[1]) == (record["preference"] == "model_a")
        checked += 1
    assert checked > 20


def test_length_rows_are_labelled_by_word_counts_on_human_prompts(built):
    out, manifest, _ = built
    concise, detailed = set(STYLE_CRITERIA["concise"]), set(STYLE_CRITERIA["detailed"])
    origins = set()
    for record in map(json.loads, (out / "train.jsonl").open()):
        if record["source"] != "length":
            continue
        words = [len(record[side][-1]["content"].split()) for side in ("model_a", "model_b")]
        assert max(words) >= 1.5 * min(words) and min(words) >= 15
        winner_is_shorter = words[0 if record["preference"] == "model_a" else 1] == min(words)
        (criterion,), (opposite,) = record["criteria"], record["loser_criteria"]
        wanted, other = (concise, detailed) if winner_is_shorter else (detailed, concise)
        assert criterion in wanted and opposite in other
        origins.add(record["id"].split(":")[1])
    assert origins == {"auto_j", "hh_rlhf", "webgpt"}
    assert manifest["rows"]["length"]["test"] > 0 and manifest["length_ratio"] == 1.5


def test_the_length_source_leaves_every_other_source_unchanged(built, tmp_path):
    from conftest import shared_data_dir

    out, _, _ = built
    plain = tmp_path / "plain"
    build(shared_data_dir(), plain, seed=0, caps={"dsp": 500})
    for name in ("test_auto_j", "test_hh_rlhf", "test_webgpt", "test_dsp", "test_style", "pandalm_test"):
        assert (plain / f"{name}.jsonl").read_bytes() == (out / f"{name}.jsonl").read_bytes(), name
    assert not (plain / "test_length.jsonl").exists()
