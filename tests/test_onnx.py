"""crm_core.cross_encoder.onnx and crm-export: parity with torch, int8, and refusing to write a model that fails."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import make_tiny_qwen_crm, real_pairs
from crm_core.cross_encoder.onnx import export_crm
from crm_core.guard import MARKER
from crm_core.loader import load_crm
from crm_core.onnx_common import SAMPLE_PAIRS
from crm_train.export_cli import main as crm_export

pytestmark = pytest.mark.slow  # ONNX exports: `pytest -m "not slow"` leaves them out


@pytest.fixture(scope="module")
def minilm_onnx(minilm_crm, tmp_path_factory):
    out = tmp_path_factory.mktemp("onnx")
    return (
        export_crm(minilm_crm, out / "fp32"),
        out / "fp32",
        export_crm(minilm_crm, out / "int8", "int8"),
        out / "int8",
    )


@pytest.mark.parametrize("crm", ["tiny_qwen_crm", "minilm_crm"])
def test_fp32_export_matches_torch_logits(crm, request, tmp_path):
    folder = request.getfixturevalue(crm)
    report = export_crm(folder, tmp_path / "onnx")
    assert report.passed and report.max_abs_logit_diff < 1e-4 and report.argmax_agreement == 1.0
    torch_scorer, onnx_scorer = load_crm(folder), load_crm(tmp_path / "onnx", backend="onnx")
    first, second = torch_scorer.encode_pairs(SAMPLE_PAIRS)
    encoded = first + second
    diff = np.abs(onnx_scorer.logits(encoded, batch_size=3) - torch_scorer.logits(encoded, batch_size=5))
    assert diff.max() < 1e-4  # different batch compositions, same logits
    saved = json.loads((tmp_path / "onnx" / "onnx_parity.json").read_text())
    assert saved["max_abs_logit_diff"] == report.max_abs_logit_diff


def test_a_length_slope_crm_exports_and_scores_alike(qwen_tokenizer, tmp_path):
    folder = make_tiny_qwen_crm(tmp_path / "slope", qwen_tokenizer, labels=("score", "length_slope"),
                                objective="pointwise")  # fmt: skip
    assert export_crm(folder, tmp_path / "onnx").passed
    torch_p = load_crm(folder).score_pairs(SAMPLE_PAIRS).p_a
    np.testing.assert_allclose(load_crm(tmp_path / "onnx", backend="onnx").score_pairs(SAMPLE_PAIRS).p_a, torch_p,
                               atol=1e-4)  # fmt: skip


def test_exported_folder_is_self_contained(minilm_onnx):
    _, fp32_dir, int8_report, int8_dir = minilm_onnx
    for folder in (fp32_dir, int8_dir):
        names = {p.name for p in folder.iterdir()}
        assert {"model.onnx", "crm.json", "tokenizer.json", "config.json", "README.md"} <= names
    assert (int8_dir / "model.onnx").stat().st_size < 0.4 * (fp32_dir / "model.onnx").stat().st_size
    assert int8_report.passed and int8_report.quantize == "int8"


@pytest.mark.shared_data
def test_torch_and_onnx_decide_alike_on_200_real_pairs(minilm_crm, minilm_onnx, shared_data):
    pairs = real_pairs(shared_data, 100, "hh_rlhf") + real_pairs(shared_data, 100, "webgpt")
    torch_scorer = load_crm(minilm_crm)
    first, second = torch_scorer.encode_pairs(pairs)
    reference = torch_scorer.logits(first + second, batch_size=32)
    _, fp32_dir, _, int8_dir = minilm_onnx
    fp32 = load_crm(fp32_dir, backend="onnx").logits(first + second, batch_size=32)
    int8 = load_crm(int8_dir, backend="onnx").logits(first + second, batch_size=32)
    assert np.abs(fp32 - reference).max() < 1e-4
    assert (fp32.argmax(-1) == reference.argmax(-1)).all()
    assert (int8.argmax(-1) == reference.argmax(-1)).mean() >= 0.95
    assert np.corrcoef(int8[:, 0], reference[:, 0])[0, 1] > 0.95  # int8 logits follow torch's, whatever the scale


def test_a_failing_export_writes_nothing(minilm_crm, tmp_path, capsys):
    target = tmp_path / "out"
    target.mkdir()
    (target / "keep.txt").write_text("previous export")
    (target / MARKER).write_text("")  # a folder an export wrote before: one it may replace
    with pytest.raises(RuntimeError, match="refusing to write"):
        export_crm(minilm_crm, target, fp32_max_diff=0.0)
    assert sorted(p.name for p in target.iterdir()) == sorted([MARKER, "keep.txt"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert crm_export(["--model", str(minilm_crm), "--output", str(tmp_path / "new"), "--fp32-max-diff", "0"]) == 1
    assert "refusing to write" in capsys.readouterr().err and not (tmp_path / "new").exists()


def test_crm_export_command_int8(minilm_crm, tmp_path, capsys, shared_data):
    samples = shared_data / "preferences" / "webgpt" / "pairs.jsonl"
    args = ["--model", str(minilm_crm), "--output", str(tmp_path / "int8"), "--quantize", "int8"]
    assert crm_export([*args, "--samples", str(samples), "--n-samples", "16"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["n_inputs"] == 32 and result["passed"] and result["quantize"] == "int8"
    assert load_crm(tmp_path / "int8", backend="onnx").score_pairs(SAMPLE_PAIRS).p_a.shape == (len(SAMPLE_PAIRS),)
