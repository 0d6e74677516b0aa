"""Bad input is named, never dropped silently: every rejected row as file:line: field: reason on stderr, a non-zero
exit unless --skip-invalid, empty input an error, BOMs accepted, undecodable bytes and truncated gzip named, and
no NaN in output JSON."""

from __future__ import annotations

import gzip
import json
import math

import pytest
from conftest import REPO, pair, write_jsonl
from crm_core.data import DataValidationError, open_bench, text_lines, without_nan
from crm_train.eval_cli import main as crm_eval

CRM = REPO / "space" / "models" / "crm-compositional"


def test_text_lines_accepts_a_bom_and_names_undecodable_bytes(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\n\x91oops\n{"b": 2}\n')
    rows = list(text_lines(path))
    assert rows[0] == (1, '{"a": 1}', None) and rows[2] == (3, '{"b": 2}', None)
    line, text, problem = rows[1]
    assert (line, text) == (2, None) and str(problem) == f"{path}:2: not UTF-8 text: undecodable byte 0x91 at column 1"


def test_a_truncated_gzip_names_the_file_and_the_last_complete_line(combined_dir):
    path = combined_dir / "model_outputs.jsonl.gz"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # an interrupted copy
    last = list(text_lines(path))[-1][2]
    assert last is not None and "ends before the end of its gzip stream" in last.message and last.file == str(path)
    with pytest.raises(DataValidationError, match=r"model_outputs\.jsonl\.gz:\d+: ends before the end"):
        open_bench(combined_dir)


def test_without_nan_turns_every_nan_into_null():
    import numpy as np

    cleaned = without_nan({"a": float("nan"), "b": [1.0, np.float64("inf"), {"c": np.float32(2.5)}], "d": "x"})
    assert json.dumps(cleaned, allow_nan=False) == '{"a": null, "b": [1.0, null, {"c": 2.5}], "d": "x"}'


@pytest.fixture
def bad_pairs(tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", [pair(0), pair(1, preference="model_b"), pair(2, model_b=...),
                                                pair(3, preference=3), pair(4)])  # fmt: skip
    lines = path.read_text().splitlines()
    lines.insert(2, '{"id": "broken", "prompt": ')  # line 3: malformed JSON
    path.write_text("\n".join(lines) + "\n")
    return path


def test_crm_eval_names_each_rejected_row_and_fails_without_skip_invalid(bad_pairs, capsys):
    assert crm_eval(["--model", str(CRM), "--data", str(bad_pairs)]) == 1
    out = capsys.readouterr()
    assert out.out == ""  # no result printed for a run that stopped
    assert f"crm-eval: {bad_pairs}:3: malformed JSON" in out.err
    assert f"crm-eval: {bad_pairs}:4: model_b: missing field" in out.err
    assert f"crm-eval: {bad_pairs}:5: preference:" in out.err and "got int 3" in out.err
    assert "3 row(s) rejected" in out.err and "--skip-invalid" in out.err


def test_crm_eval_skip_invalid_goes_on_and_writes_valid_json(bad_pairs, capsys):
    assert crm_eval(["--model", str(CRM), "--data", str(bad_pairs), "--skip-invalid"]) == 0
    out = capsys.readouterr()
    result = json.loads(out.out)  # strict: NaN would not parse back as a number here
    assert result["n"] == 3 and result["n_rejected"] == 3
    assert "skipped 3 invalid row(s) (--skip-invalid)" in out.err
    assert not any(isinstance(v, float) and math.isnan(v) for v in result.values())
    assert "NaN" not in out.out


def test_crm_eval_empty_bom_and_binary_inputs(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert crm_eval(["--model", str(CRM), "--data", str(empty)]) == 1
    assert "no valid preference pairs" in capsys.readouterr().err
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + (json.dumps(pair(0)) + "\n" + json.dumps(pair(1)) + "\n").encode())
    assert crm_eval(["--model", str(CRM), "--data", str(bom)]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 2  # the first row is not lost to the BOM
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\x91\x92\x93 not text\n")
    assert crm_eval(["--model", str(CRM), "--data", str(binary)]) == 1
    err = capsys.readouterr().err
    assert f"{binary}:1: not UTF-8 text: undecodable byte 0x91" in err


def test_a_gzip_pairs_file_that_is_not_gzip_is_named(tmp_path, capsys):
    path = tmp_path / "pairs.jsonl.gz"
    path.write_bytes(gzip.compress(b"x")[:5] + b"garbage")
    assert crm_eval(["--model", str(CRM), "--data", str(path)]) == 1
    assert str(path) in capsys.readouterr().err


def test_a_model_with_missing_answers_is_flagged_by_usl_rank_and_in_the_rows(per_model_dir, tmp_path, capsys):
    from usl_space.rank_cli import main as usl_rank

    args = ["--data", str(per_model_dir), "--baseline", "base", "--criteria", "", "--model", str(CRM),
            "--cache", str(tmp_path / "scores.sqlite"), "--quiet", "--bootstrap", "100"]  # fmt: skip
    assert usl_rank(args) == 0
    out = capsys.readouterr()
    rows = {row["model"]: row for row in json.loads(out.out)["rows"]}
    assert rows["beta"]["fewer_answers"] and rows["beta"]["n"] == rows["alpha"]["n"] - 1  # beta misses query 5
    assert not rows["alpha"]["fewer_answers"]
    assert f"usl-rank: warning: beta was judged on {rows['beta']['n']} of {rows['alpha']['n']} queries" in out.err


def test_usl_data_build_and_usl_rank_name_bad_bench_rows_and_skip_them_only_when_told(combined_dir, tmp_path,
                                                                                        capsys):  # fmt: skip
    from usl_space.data_cli import main as usl_data
    from usl_space.rank_cli import main as usl_rank

    path = combined_dir / "model_outputs.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    lines[2] = json.dumps({**json.loads(lines[2]), "output": 5})  # line 3: a number where text belongs
    lines[4] = lines[4][:-3]  # line 5: cut short
    lines[5] = json.dumps({**json.loads(lines[5]), "output": "x" * 200_001})  # line 6: no answer is that long
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    build = ["build", "--from", str(combined_dir), "--output", str(tmp_path / "bench"), "--baseline", "base"]
    assert usl_data(build) == 2
    err = capsys.readouterr().err
    assert f"{path}:3: output: expected str, got int" in err and f"{path}:5: malformed JSON" in err
    assert f"{path}:6: output: expected at most 200,000 characters (a judge reads far less), got 200,001" in err
    assert not (tmp_path / "bench").exists()  # nothing half-written
    assert usl_data([*build, "--skip-invalid"]) == 0
    err = capsys.readouterr().err
    assert f"usl-data build: {path}:3: output: expected str, got int" in err and "skipped 3 invalid row(s)" in err
    assert (tmp_path / "bench" / "manifest.json").is_file()
    rank = ["--data", str(combined_dir), "--baseline", "base", "--criteria", "", "--model", str(CRM),
            "--cache", str(tmp_path / "scores.sqlite"), "--quiet", "--bootstrap", "100"]  # fmt: skip
    assert usl_rank(rank) == 2
    assert f"{path}:3: output: expected str, got int" in capsys.readouterr().err
    assert usl_rank([*rank, "--skip-invalid"]) == 0
    out = capsys.readouterr()
    assert "usl-rank: skipped 3 invalid row(s)" in out.err and json.loads(out.out)["models_ranked"] >= 2


HOSTILE = ["$\\undefinedcmd{x}$", "<b>bold</b>", "<script>alert(1)</script>", "**strong** _x_ [l](http://e)"]


def _board(names: list[str]):
    from usl_space.board import Leaderboard

    rates = [0.5 - 0.01 * i for i in range(len(names))]
    rows = [{"model": n, "win_rate": r, "ci_low": r - 0.05, "ci_high": r + 0.05, "rank": i + 1, "baseline": i == 0}
            for i, (n, r) in enumerate(zip(names, rates, strict=True))]  # fmt: skip
    return Leaderboard(rows, [], [], "toy", names[0], "ckpt", 10, 10, 0.1)


def test_hostile_model_names_draw_as_plain_text_in_both_charts():
    from usl_space.charts import bar_chart, slope_chart

    board = _board(["base", *HOSTILE])
    for fig in (bar_chart(board), slope_chart(board, _board(["base", *reversed(HOSTILE)]))):
        fig.canvas.draw()  # mathtext would raise on \undefinedcmd here
        drawn = [t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_parse_math")) if not t.get_parse_math()]
        assert all(name in drawn for name in HOSTILE)
    many = _board([f"m{i}" for i in range(45)])
    assert len(bar_chart(many).axes[0].get_yticklabels()) == 45  # every model, none silently dropped
    assert "top 10 of 45 models shown" in bar_chart(many, top=10).axes[0].get_title()


def test_visitor_text_never_renders_as_markdown_or_html():
    from usl_space.views import as_text

    assert as_text("<b>bold</b>") == "&lt;b&gt;bold&lt;/b&gt;"
    assert as_text("<script>alert(1)</script>") == "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert as_text("$\\undefinedcmd{x}$") == "\\$\\\\undefinedcmd\\{x\\}\\$"
    assert as_text("**strong**") == "\\*\\*strong\\*\\*"


def test_the_own_panel_note_names_the_panel_as_text_and_says_how_many_it_leaves_out():
    from usl_space.views import panel_note

    assert panel_note(None) == "" and panel_note([]) == ""  # the named panel, or none: nothing to say
    note = panel_note(["<b>evil</b>", *(f"m{i}" for i in range(10))], shown=3)
    assert "own top 11 models" in note and "&lt;b&gt;evil&lt;/b&gt;, m0, m1 and 8 more" in note and "m2" not in note


def test_a_free_text_topic_is_checked_before_it_is_embedded():
    from test_engine import toy_bench, toy_topics

    index = toy_topics(toy_bench())
    with pytest.raises(ValueError, match="at most 100"):
        index.select([], "cooking " * 200)
    with pytest.raises(ValueError, match="control or binary"):
        index.select([], "cook\x00ing")
    assert len(index.select([], "")) == 12  # no text, no topics: every query


def test_outputs_never_overwrite_an_input_however_it_was_named(combined_dir, tmp_path, capsys, monkeypatch):
    """usl-rank --output onto the CRM read by default (crm.json from $USL_MODEL) and usl-data pull with its cache in
    its source: refused before any work, every input byte-identical."""
    import shutil

    from usl_space.data_cli import main as usl_data
    from usl_space.rank_cli import main as usl_rank

    crm = tmp_path / "crm"
    shutil.copytree(CRM, crm, ignore=shutil.ignore_patterns("onnx", "encoder"))
    before = (crm / "crm.json").read_bytes()
    monkeypatch.setenv("USL_MODEL", str(crm))
    assert usl_rank(["--data", str(combined_dir), "--criteria", "", "--output", str(crm / "crm.json")]) == 2
    assert "would destroy the input" in capsys.readouterr().err and (crm / "crm.json").read_bytes() == before
    files = {p: p.read_bytes() for p in combined_dir.rglob("*") if p.is_file()}
    args = ["pull", "--from", str(combined_dir), "--baseline", "base", "--models", "alpha", "--quiet"]
    for cache in (combined_dir, combined_dir / "cache"):
        assert usl_data([*args, "--cache-dir", str(cache)]) == 2
        assert "--cache-dir" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in combined_dir.rglob("*") if p.is_file()} == files


def test_a_pickle_only_model_is_refused_by_the_space_bundle_before_any_work(tmp_path, capsys):
    from usl_space.bundle import main as bundle

    model = tmp_path / "pickled"
    model.mkdir()
    (model / "crm.json").write_text((CRM / "crm.json").read_text())
    (model / "pytorch_model.bin").write_bytes(b"\x80\x04pickle")
    assert bundle(["--model", str(model), "--output", str(tmp_path / "space")]) == 2
    assert "no *.safetensors or *.onnx weights" in capsys.readouterr().err and not (tmp_path / "space").exists()


def test_a_full_disk_at_the_output_keeps_the_old_file_prints_the_result_and_says_so(combined_dir, tmp_path, capsys,
                                                                                     monkeypatch):  # fmt: skip
    import errno

    import crm_core.atomic
    from usl_space.rank_cli import main as usl_rank

    output = tmp_path / "board.json"
    output.write_text("the previous board\n")

    def full(_fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setenv("USL_CACHE_DIR", str(tmp_path / "cache"))
    args = ["--data", str(combined_dir), "--model", str(CRM), "--criteria", "", "--bootstrap", "100", "--quiet",
            "--cache", str(tmp_path / "cache" / "scores.sqlite")]  # fmt: skip
    assert usl_rank(args) == 0  # the bench's response side built and saved: the disk fills only at the output
    capsys.readouterr()
    monkeypatch.setattr(crm_core.atomic.os, "fsync", full)
    assert usl_rank([*args, "--output", str(output)]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["rows"] and "could not write" in err and "no space left on device" in err
    assert output.read_text() == "the previous board\n"
    assert not list(tmp_path.glob(".board.json.*"))  # no temporary file left behind
    from crm_core.guard import expected_error  # a full disk during the work: one line, not a traceback

    said = expected_error("usl-rank", OSError(errno.ENOSPC, "No space left on device", "/cache/part.npz"))
    assert said == "usl-rank: /cache/part.npz: no space left on device; files written whole before are unchanged"


def test_malformed_manifests_crm_json_yaml_aliases_and_huge_counts_are_one_line_each(tmp_path, capsys):
    import shutil

    from crm_core.spec import CRMSpec
    from crm_train.cross_encoder.config import load_config
    from usl_space.rank_cli import main as usl_rank

    bench = tmp_path / "bench"
    bench.mkdir()
    for manifest, field in (("[1, 2]", "expected a JSON object"), ('{"format_version": 1}', "name: expected a string"),
                            ("{not json", "not valid JSON")):  # fmt: skip
        (bench / "manifest.json").write_text(manifest)
        with pytest.raises(DataValidationError, match=field):
            open_bench(bench)
    crm = tmp_path / "crm"
    shutil.copytree(CRM, crm, ignore=shutil.ignore_patterns("onnx", "encoder"))
    spec = json.loads((crm / "crm.json").read_text())
    spec["extra"] = ["not", "an", "object"]
    (crm / "crm.json").write_text(json.dumps(spec))
    with pytest.raises(ValueError, match=r"crm\.json: extra: expected an object, got list"):
        CRMSpec.load(crm)
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text('a: &a ["x","x"]\nb: &b [*a,*a]\nc: &c [*b,*b]\nlearning_rate: 1.0e-5\n')
    with pytest.raises(ValueError, match=r"bomb\.yaml:2: not valid YAML \(aliases"):
        load_config(bomb)
    with pytest.raises(SystemExit):
        usl_rank(["--data", str(bench), "--bootstrap", "100000000"])
    assert "expected an integer from 100 to 100000, got 100000000" in capsys.readouterr().err


def test_a_vote_idx_must_be_whole_and_an_id_file_must_be_a_bounded_file(tmp_path):
    from usl_space.rank_cli import read_query_ids
    from usl_space.taste import Profile

    vote = {"idx": 1.9, "model_a": "m1", "model_b": "m2", "outcome": 1}
    with pytest.raises(ValueError, match=r"p\.json: votes: .*idx: expected an integer, got 1\.9"):
        Profile.from_dict({"version": 1, "votes": [vote]}, "p.json")
    assert Profile.from_dict({"version": 1, "votes": [{**vote, "idx": 2}]}, "p.json").votes[0].idx == 2
    with pytest.raises(ValueError, match="/dev/zero: not a regular file"):
        read_query_ids("/dev/zero", {1, 2})
    big = tmp_path / "ids.txt"
    big.write_bytes(b"1\n" * 5_000_001)
    with pytest.raises(ValueError, match="more than the 10,000,000 allowed"):
        read_query_ids(str(big), {1})


def test_named_files_that_are_missing_folders_or_binary_say_so_with_the_path(tmp_path):
    """Not "'utf-8' codec can't decode byte 0x83" or "[Errno 21] Is a directory": the path and what was expected."""
    from crm_core.guard import expected_error
    from usl_space.rank_cli import read_query_ids
    from usl_space.taste import Profile

    binary = tmp_path / "ids.bin"
    binary.write_bytes(b"1\n\x83\xff\n")
    with pytest.raises(ValueError, match=r"ids\.bin: not UTF-8 text \(byte 0x83 at offset 2\); expected a text file"):
        read_query_ids(str(binary), {1})
    with pytest.raises(ValueError, match=r"missing\.txt: no such file \(expected a text file of query ids"):
        read_query_ids(str(tmp_path / "missing.txt"), None)
    with pytest.raises(ValueError, match=r": a folder \(expected a USL profile"):
        Profile.load(tmp_path)
    with pytest.raises(ValueError, match=r"ids\.bin: not UTF-8 text"):
        Profile.load(binary)
    from crm_core.data.importers import read_models_file
    from usl_space.generate import read_prompts

    with pytest.raises(ValueError, match=r"ids\.bin: not UTF-8 text .*a text file of model names"):
        read_models_file(binary)
    with pytest.raises(ValueError, match=r": a folder \(expected a prompts file"):
        read_prompts(tmp_path)
    try:
        binary.mkdir(parents=True, exist_ok=True)  # what `--cache FILE/x` asks for the folder above it
    except OSError as error:  # a file where a folder must be (usl-rank --cache FILE/x)
        said = expected_error("usl-rank", error)
        assert said == f"usl-rank: {binary}: file exists (a file is where a folder must be)"
    else:
        raise AssertionError("mkdir under a file succeeded")


def test_a_pickle_only_checkpoint_is_refused_by_every_loader_with_one_line(tmp_path):
    from crm_core.loader import load_crm

    model = tmp_path / "pickled"
    model.mkdir()
    (model / "crm.json").write_text((CRM / "crm.json").read_text())
    (model / "pytorch_model.bin").write_bytes(b"\x80\x04pickle")
    with pytest.raises(ValueError, match=r"its only weights are pickled \(pytorch_model\.bin\)"):
        load_crm(model)
    (model / "pytorch_model.bin").unlink()
    (model / "heads.safetensors").symlink_to("/dev/zero")  # read whole, it would never end
    with pytest.raises(ValueError, match=r"heads\.safetensors: not a regular file \(a link to /dev/zero\)"):
        load_crm(model)


def test_usl_rank_refuses_bad_criteria_and_id_files_before_loading_the_bench_and_the_crm(tmp_path, capsys):
    import time as clock

    from usl_space.rank_cli import main as usl_rank

    ids = tmp_path / "ids.txt"
    ids.write_text("3\nthree\n")
    for extra, said in ((["--criteria", "x" * 301], "at most 300 characters"),
                        (["--criteria", "", "--query-ids", str(ids)], "ids.txt:2: expected a query id")):  # fmt: skip
        started = clock.perf_counter()
        assert usl_rank(["--data", str(tmp_path / "no-such-bench"), *extra]) == 2  # the bench is never opened
        assert said in capsys.readouterr().err and clock.perf_counter() - started < 5


def test_a_fake_safetensors_file_is_one_line(tmp_path):
    import shutil

    from crm_core.loader import load_crm

    model = tmp_path / "crm"
    shutil.copytree(CRM, model, ignore=shutil.ignore_patterns("onnx"))
    (model / "heads.safetensors").write_bytes(b"not safetensors at all")
    with pytest.raises(ValueError, match=r"a weights file is not readable safetensors"):
        load_crm(model)


def test_nonsense_fit_settings_are_refused_before_any_work(tmp_path):
    """NaN or inf settings, negative step counts and NaN source weights: one line naming the field (both trainers)."""
    from crm_core.compositional.serving import ServingConfig
    from crm_train.compositional.config import CompositionalConfig
    from crm_train.cross_encoder.config import TrainConfig

    cases = [(TrainConfig, {"max_steps": -5}, "max_steps must be at least 1"),
             (TrainConfig, {"learning_rate": float("nan")}, "learning_rate must be a finite number"),
             (TrainConfig, {"source_weights": {"hh_rlhf": float("nan")}}, "source_weights must be finite numbers"),
             (TrainConfig, {"source_weights": {"hh_rlhf": True}}, "source_weights must be finite numbers"),
             (CompositionalConfig, {"criteria_steps": 0}, "criteria_steps: expected at least 1"),
             (CompositionalConfig, {"quality_lr": float("inf")}, "quality_lr: expected a finite number"),
             (ServingConfig, {"nonanswer_penalty": float("nan")}, "nonanswer_penalty: expected a finite"),
             (ServingConfig, {"quality_gate": True}, "quality_gate: expected a finite"),
             (CompositionalConfig, {"criteria_lr": 0.0}, "criteria_lr: expected a number above 0")]  # fmt: skip
    for config, values, message in cases:
        with pytest.raises(ValueError, match=message):
            config(**values)
    assert TrainConfig(max_steps=3).max_steps == 3 and CompositionalConfig().criteria_steps == 2000


def test_crm_export_refuses_a_samples_file_without_one_valid_pair(tmp_path, capsys):
    """Parity checked on no pair would pass whatever the export does: refused before the model is read."""
    from crm_train.export_cli import main as crm_export

    samples = tmp_path / "samples.jsonl"
    samples.write_text('garbage\n{"x": 1}\n')
    before = samples.read_bytes()
    assert crm_export(["--model", str(CRM), "--output", str(tmp_path / "out"), "--samples", str(samples)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"crm-export: {samples}: no valid pair to check parity on: line 1: row: malformed JSON: "
                   "Expecting value at column 1"]  # fmt: skip
    assert not (tmp_path / "out").exists() and samples.read_bytes() == before
    assert crm_export(["--model", str(CRM), "--output", str(tmp_path / "out"), "--samples", str(samples),
                       "--n-samples", "0"]) == 1  # fmt: skip
    assert "--n-samples: expected at least 1, got 0" in capsys.readouterr().err


def test_a_path_that_exists_but_is_the_wrong_kind_is_never_called_missing(tmp_path):
    """ "no such folder" only when nothing is there: a file given as a bench folder, a folder given as a pairs file
    or as a checkpoint file say what they are."""
    from crm_core.data import load_pairs
    from crm_core.data.importers import detect_layout
    from crm_core.hub import resolve_checkpoint

    a_file, a_folder = tmp_path / "pairs.jsonl", tmp_path / "bench"
    a_file.write_text("{}\n")
    a_folder.mkdir()
    with pytest.raises(FileNotFoundError, match=r"pairs\.jsonl: a file, not a folder$"):
        detect_layout(a_file)
    with pytest.raises(FileNotFoundError, match=r"bench: a folder, not a pairs file$"):
        load_pairs(a_folder)
    with pytest.raises(FileNotFoundError, match=r"pairs\.jsonl: a file, not a checkpoint folder, and not a Hub"):
        resolve_checkpoint(a_file)
    with pytest.raises(FileNotFoundError, match=r"missing: no such folder$"):
        detect_layout(tmp_path / "missing")


def test_the_app_and_the_trainer_turn_a_bad_folder_or_config_into_one_line(tmp_path, capsys):
    from crm_train.train_cli import main as crm_train
    from usl_space.app import main as usl_space

    a_file = tmp_path / "bench.txt"
    a_file.write_text("not a bench\n")
    assert usl_space(["--data", str(a_file), "--no-warm"]) == 2  # was a traceback
    assert capsys.readouterr().err.strip().endswith("bench.txt: a file, not a folder")
    assert crm_train(["--config", str(tmp_path / "missing.yaml"), "--output-dir", str(tmp_path / "run")]) == 2
    assert "missing.yaml: no such file (expected a YAML config file)" in capsys.readouterr().err  # not [Errno 2]
    binary = tmp_path / "config.yaml"
    binary.write_bytes(b"\x00\x01")
    assert crm_train(["--config", str(binary), "--output-dir", str(tmp_path / "run")]) == 2
    said = capsys.readouterr().err.strip()
    assert said.startswith("crm-train:") and "not valid YAML" in said and "\n" not in said
    assert not (tmp_path / "run").exists()


def test_generate_refuses_a_non_url_and_stops_when_the_endpoint_cannot_be_reached(tmp_path, capsys):
    """A wrong --endpoint is refused before any work; a server that refuses every connection stops the run after the
    first prompts fail (not 80 prompts x retries with backoff) and says so."""
    import socket

    from usl_space.data_cli import main as usl_data
    from usl_space.generate import GenerateSettings, generate

    prompts = tmp_path / "prompts.jsonl"
    write_jsonl(prompts, [{"instruction": 12345}])
    out = tmp_path / "answers.jsonl"
    assert usl_data(["generate", "--prompts", str(prompts), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m",
                     "--output", str(out)]) == 2  # fmt: skip
    assert "prompts.jsonl:1: instruction: expected non-empty text, got int 12345" in capsys.readouterr().err
    write_jsonl(prompts, [{"instruction": f"Say {n}."} for n in range(40)])
    assert usl_data(["generate", "--prompts", str(prompts), "--endpoint", "notaurl", "--model", "m",
                     "--output", str(out)]) == 2  # fmt: skip
    assert "--endpoint: expected an http(s) URL" in capsys.readouterr().err and not out.exists()
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = GenerateSettings(f"http://127.0.0.1:{port}/v1", "m", concurrency=2, retries=1, backoff=0.01)
    report = generate([(n, f"Say {n}.") for n in range(40)], out, settings)
    assert report.unreachable and report.saved == 0 and len(report.failed) <= 2  # the rest never asked
    assert out.read_text() == ""  # nothing half-written
