"""Nothing lost, nothing silently wrong: a corpus of command-line mistakes, each asserting the exit code, the message
and that no input file changed (crm_core.guard holds the rules)."""

from __future__ import annotations

import gzip
import hashlib
import json
import sqlite3
from pathlib import Path

import pytest
from conftest import MODELS, REPO, pair, write_jsonl
from crm_core.atomic import atomic_dir
from crm_core.data import DataValidationError, open_bench
from crm_core.guard import MARKER, check_criteria, check_output
from crm_core.spec import CRMSpec
from crm_train.eval_cli import main as crm_eval
from crm_train.train_cli import main as crm_train
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from usl_space.cache import ScoreCache
from usl_space.data_cli import main as usl_data
from usl_space.rank_cli import main as usl_rank

CRM = REPO / "space" / "models" / "crm-compositional"


def snapshot(*roots: Path) -> dict[str, str]:
    """Every file under `roots` -> its SHA-256: what must not change."""
    files = [p for root in roots for p in ([root] if root.is_file() else root.rglob("*")) if p.is_file()]
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@pytest.mark.parametrize("where", ["same", "parent", "inside"])
def test_usl_data_build_never_writes_over_its_source(combined_dir, where, capsys):
    before = snapshot(combined_dir)
    output = {"same": combined_dir, "parent": combined_dir.parent, "inside": combined_dir / "bench"}[where]
    assert usl_data(["build", "--from", str(combined_dir), "--output", str(output)]) == 2
    err = capsys.readouterr().err
    assert (
        "would destroy the input" in err
        and {"same": " is ", "parent": "contains", "inside": "sits inside"}[where] in err
    )
    assert snapshot(combined_dir) == before


def test_usl_data_build_replaces_only_a_folder_it_made(combined_dir, tmp_path, capsys):
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("precious")
    base = ["--baseline", next(iter(MODELS))]
    assert usl_data(["build", "--from", str(combined_dir), "--output", str(other), *base]) == 2
    assert "holds files this tool did not write" in capsys.readouterr().err
    assert (other / "notes.txt").read_text() == "precious" and len(list(other.iterdir())) == 1
    bench = tmp_path / "bench"
    assert usl_data(["build", "--from", str(combined_dir), "--output", str(bench), *base]) == 0
    assert (bench / MARKER).is_file()
    assert usl_data(["build", "--from", str(combined_dir), "--output", str(bench), *base]) == 0  # its own: replaced


def test_atomic_dir_refuses_a_file_and_a_foreign_folder_and_keeps_both(tmp_path):
    target = tmp_path / "x"
    target.write_text("a file")
    with pytest.raises(FileExistsError, match="is a file"), atomic_dir(target):
        pass
    assert target.read_text() == "a file"


def test_crm_eval_and_usl_rank_refuse_an_output_that_is_an_input(tmp_path, capsys):
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [pair(0), pair(1)])
    before = snapshot(pairs)
    assert crm_eval(["--model", str(CRM), "--data", str(pairs), "--output", str(pairs)]) == 1
    assert "would destroy the input" in capsys.readouterr().err
    ids = tmp_path / "ids.txt"
    ids.write_text("1\n2\n")
    assert usl_rank(["--data", str(tmp_path), "--criteria", "", "--query-ids", str(ids), "--output", str(ids)]) == 2
    assert "--output" in capsys.readouterr().err and ids.read_text() == "1\n2\n"
    assert snapshot(pairs) == before
    (tmp_path / "results").mkdir()
    assert usl_rank(["--data", str(pairs), "--criteria", "", "--output", str(tmp_path / "results")]) == 2
    assert "is a folder" in capsys.readouterr().err


NONSENSE = [("--queries", "-5", ">= 1"), ("--queries", "0", ">= 1"), ("--bootstrap", "0", "from 100 to 100000"),
            ("--queries", "x", "integer")]  # fmt: skip


@pytest.mark.parametrize(("flag", "value", "expected"), NONSENSE)
def test_usl_rank_refuses_nonsense_counts_in_the_parser(flag, value, expected, capsys):
    with pytest.raises(SystemExit) as stop:
        usl_rank(["--data", ".", "--criteria", "", flag, value])
    assert stop.value.code == 2 and expected in capsys.readouterr().err


def test_mistyped_fields_are_named_however_the_json_spells_them(tmp_path):
    (tmp_path / "instructions.jsonl").write_text('{"idx": 0, "instruction": "Hi"}\n{"idx": 1, "instruction": "Yo"}\n')
    base = "gpt4_1106_preview"
    rows = [{"model": base, "idx": 0, "output": "a"}, {"model": base, "idx": 1, "output": "b"},
            {"model": "m", "idx": 0, "output": 12345}, {"model": 7, "idx": 1, "output": "c"}]  # fmt: skip
    with gzip.open(tmp_path / "model_outputs.jsonl.gz", "wt") as handle:
        handle.write("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(DataValidationError) as caught:
        open_bench(tmp_path)
    text = str(caught.value)
    assert "model_outputs.jsonl.gz:3: output: expected str, got int" in text
    assert "model_outputs.jsonl.gz:4: model: expected str, got int" in text
    spellings = ['{"model": "m", "idx": 0, "output" : 12345}', '{"model": "m", "idx": 1, "\\u006futput": ["a", "b"]}',
                 '{"model" : 7, "idx": 0, "output": "c"}']  # fmt: skip
    with gzip.open(tmp_path / "model_outputs.jsonl.gz", "wt") as handle:  # the same types, spelled otherwise
        handle.write("\n".join([json.dumps(r) for r in rows[:2]] + spellings) + "\n")
    with pytest.raises(DataValidationError) as caught:
        open_bench(tmp_path)
    text = str(caught.value)
    for line, field, got in ((3, "output", "int"), (4, "output", "list"), (5, "model", "int")):
        assert f"model_outputs.jsonl.gz:{line}: {field}: expected str, got {got}" in text


def test_an_empty_model_file_is_an_error_not_a_vanished_model(per_model_dir):
    (per_model_dir / "beta" / "model_outputs.json").write_text("[]")
    with pytest.raises(DataValidationError, match="model 'beta' has no answers"):
        open_bench(per_model_dir, baseline="base")


def test_a_corrupt_score_cache_is_set_aside_and_rebuilt_and_a_foreign_path_refused(tmp_path, capsys):
    folder, text = tmp_path / "my-notes", tmp_path / "notes.txt"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    text.write_text("not a database, and not the tool's to move")
    for foreign in (folder, text):  # never renamed, replaced or deleted
        with pytest.raises(ValueError, match="score cache"):
            ScoreCache(foreign)
    assert (folder / "keep.txt").read_text() == "mine" and text.read_text().startswith("not a database")
    path = tmp_path / "scores.sqlite"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)  # a cache this tool made, since damaged
    cache = ScoreCache(path)
    assert cache.get("c", "x", "b", [(0, "m", "d")]) == {}
    assert "is unreadable" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name]  # kept, not deleted
    sqlite3.connect(path).execute("SELECT 1")


def test_crm_json_serving_settings_and_panel_are_checked_by_value(tmp_path):
    """A NaN gate or a panel written as one string would change every board silently: refused, the field named."""
    import shutil

    from conftest import random_compositional_crm
    from crm_core.compositional.scorer import CompositionalScorer

    compositional_folder = random_compositional_crm(tmp_path / "made")

    for field, value, message in (("quality_gate", float("nan"), "extra.serving.quality_gate: expected a finite"),
                                  ("weight_scale", "1.5", "extra.serving.weight_scale: expected a finite"),
                                  ("weight_sclae", 1.5, "extra.serving.weight_sclae: not a serving setting"),
                                  ("reference_models", "gpt4_1106_preview",
                                   "extra.reference_models: expected a list")):  # fmt: skip
        folder = tmp_path / field
        shutil.copytree(compositional_folder, folder)
        spec = json.loads((folder / "crm.json").read_text())
        (spec["extra"] if field == "reference_models" else spec["extra"]["serving"])[field] = value
        (folder / "crm.json").write_text(json.dumps(spec))
        with pytest.raises(ValueError, match=message):
            CompositionalScorer(folder)


def test_crm_json_errors_name_the_file_and_the_field(tmp_path):
    folder = tmp_path / "crm"
    folder.mkdir()
    (folder / "crm.json").write_text('{"style": "segments", "max_len')
    with pytest.raises(ValueError, match=r"crm\.json: not valid JSON"):
        CRMSpec.load(folder)
    (folder / "crm.json").write_text('{"objective": "pointwise"}')
    with pytest.raises(ValueError, match=r"crm\.json: missing field\(s\) \['style', 'max_length'\]"):
        CRMSpec.load(folder)


def test_training_yaml_mistakes_are_named(tmp_path, capsys):
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: compositional\nquality_epochs: [1\n")
    assert crm_train(["--config", str(broken), "--print-config"]) == 2
    assert f"{broken}:3: not valid YAML" in capsys.readouterr().err
    mistyped = tmp_path / "mistyped.yaml"
    mistyped.write_text("kind: compositional\nquality_epochs: ten\n")
    assert crm_train(["--config", str(mistyped), "--print-config"]) == 2
    assert "quality_epochs: expected an integer, got 'ten'" in capsys.readouterr().err


def test_one_criteria_rule_for_every_tool(tmp_path, capsys):
    with pytest.raises(ValueError, match="control or binary"):
        check_criteria(["fine", "bad\x07bell"])
    long_pair = pair(0, criteria=["x" * 10_000])
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [long_pair, pair(1)])
    assert crm_eval(["--model", str(CRM), "--data", str(pairs)]) == 1
    assert "criteria: line 1 has 10000 characters" in capsys.readouterr().err


def test_check_output_allows_a_fresh_file_beside_the_inputs(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    assert check_output(tmp_path / "out.json", {"--data": data}) == (tmp_path / "out.json").resolve()


def test_unreadable_inputs_are_one_line_errors_naming_the_file(combined_dir, tmp_path, capsys):
    before = snapshot(combined_dir)
    bench = tmp_path / "bench"
    assert usl_data(["build", "--from", str(combined_dir), "--output", str(bench), "--baseline", "base"]) == 0
    data = (bench / "responses.parquet").read_bytes()
    (bench / "responses.parquet").write_bytes(data[: len(data) // 2])  # an interrupted copy
    assert usl_rank(["--data", str(bench), "--criteria", ""]) == 2
    assert f"{bench / 'responses.parquet'}: unreadable" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "instructions.jsonl").write_text("")
    (empty / "model_outputs.jsonl.gz").write_bytes((combined_dir / "model_outputs.jsonl.gz").read_bytes())
    assert usl_data(["info", str(empty)]) == 2
    assert "instructions.jsonl: no instructions (the file is empty)" in capsys.readouterr().err
    assert snapshot(combined_dir) == before


def test_the_per_model_layout_accepts_a_bom_like_the_combined_one(per_model_dir):
    path = per_model_dir / "beta" / "model_outputs.json"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert "beta" in open_bench(per_model_dir, baseline="base").models


def test_two_pulls_into_one_cache_do_not_trip_over_each_other(per_model_dir, tmp_path):
    """Each model's folder is locked while its file is fetched: the second pull waits, then finds it cached."""
    from concurrent.futures import ThreadPoolExecutor

    from usl_space.pull import pull

    cache = tmp_path / "cache"

    def one(_):
        return pull(["alpha", "beta"], cache, "base", local_source=per_model_dir, expect_queries=6, progress=False)

    with ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(one, range(2)))
    assert not any(r.failed for r in reports)
    assert sum(len(r.downloaded) for r in reports) + sum(len(r.cached) for r in reports) == 6
    assert not list(cache.rglob("*.part"))
    for model in ("base", "alpha", "beta"):  # each file whole: the source's bytes
        assert (cache / model / "model_outputs.json").read_bytes() == (
            per_model_dir / model / "model_outputs.json"
        ).read_bytes()


SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=5,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=JSON_VALUES, output=JSON_VALUES)
def test_the_outputs_reader_keeps_strings_and_names_anything_else(tmp_path_factory, model, output):
    """Whatever JSON value a model_outputs row holds, the reader either keeps a string exactly or names the file,
    line and field; it never turns a number, list or object into text."""
    from crm_core.data.importers import read_combined_outputs

    path = tmp_path_factory.mktemp("outputs") / "model_outputs.jsonl"
    good = {"model": "base", "idx": 0, "output": "fine"}
    path.write_text(json.dumps(good) + "\n" + json.dumps({"model": model, "idx": 1, "output": output}) + "\n")
    if isinstance(model, str) and isinstance(output, str):
        frame = read_combined_outputs(path, None)
        assert frame.rows()[1][0] == model and frame.rows()[1][3] == output
    else:
        with pytest.raises(DataValidationError) as caught:
            read_combined_outputs(path, None)
        field = "model" if not isinstance(model, str) else "output"
        assert f"{path}:2: {field}:" in str(caught.value)


def test_a_truncated_saved_response_side_is_rebuilt(tmp_path, capsys):
    from conftest import random_compositional_crm
    from crm_core.loader import load_crm
    from usl_space.instant import ResponseTable

    scorer = load_crm(random_compositional_crm(tmp_path / "crm"))
    query, output = {0: "Why?"}, {(0, "a"): "Because.", (0, "b"): "No idea, sorry."}
    table = ResponseTable.open(tmp_path / "sides", scorer, query, output, "ckpt", "bench")
    saved = next((tmp_path / "sides").glob("*.npz"))
    saved.write_bytes(saved.read_bytes()[:200])
    again = ResponseTable.open(tmp_path / "sides", scorer, query, output, "ckpt", "bench")
    assert "is unreadable" in capsys.readouterr().err and again.models == table.models
