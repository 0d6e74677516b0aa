"""crm_core.compositional.onnx: a compositional CRM with two criteria fits, each with its own re-tuned top layer,
exported to ONNX; scores as in PyTorch (fp32 tightly, int8 by decisions), served when present, refused when the
gate fails."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import random_compositional_crm
from crm_core.compositional.export import CHECK_CRITERIA, export_compositional, parity
from crm_core.compositional.onnx import OnnxPartsEncoder, has_parts
from crm_core.compositional.scorer import CompositionalScorer
from crm_core.loader import load_crm
from crm_core.onnx_common import SAMPLE_PAIRS
from crm_core.spec import Pair
from crm_train.export_cli import main as crm_export
from usl_space.loading import open_scorer


@pytest.fixture(scope="module")
def two_fit_crm(tmp_path_factory) -> Path:
    """Real MiniLM, random heads (seeded), two criteria fits whose top layers are MiniLM's plus noise."""
    return random_compositional_crm(tmp_path_factory.mktemp("compositional-onnx"), fits=2, retuned_top=True)


@pytest.fixture(scope="module")
def exported(two_fit_crm, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("exported")
    assert export_compositional(two_fit_crm, out / "fp32").passed
    assert export_compositional(two_fit_crm, out / "int8", "int8").passed
    return {"fp32": out / "fp32", "int8": out / "int8"}


def test_fp32_parts_read_criteria_and_responses_as_pytorch_does(two_fit_crm, exported):
    torch_crm = CompositionalScorer(two_fit_crm)
    onnx_crm = load_crm(exported["fp32"], backend="onnx")
    assert isinstance(onnx_crm.encoder, OnnxPartsEncoder) and onnx_crm.backend == "onnx"
    assert onnx_crm.criteria_encoders == [] and onnx_crm.encoder.reads_criteria
    text = "No emojis, please."
    vecs = onnx_crm._criteria_cache(text)
    assert vecs.shape == (2, 384) and not np.allclose(vecs[0], vecs[1], atol=1e-2)  # each fit its own layer
    assert np.allclose(vecs, torch_crm._criteria_cache(text), atol=2e-3)
    responses = ["Sure! 😀\n\n- one\n- two", "The answer is two.", "# Two\n\nOne plus one is **two**."]
    assert np.allclose(onnx_crm.encoder.encode(responses), torch_crm.encoder.encode(responses), atol=2e-3)
    pairs = [Pair(["No emojis.", "Use headings."], "Count to two", responses[0], responses[2]),
             Pair([], "Count to two", responses[1], responses[0], ["lists"])]  # fmt: skip
    assert np.allclose(onnx_crm.score_pairs(pairs).p_a, torch_crm.score_pairs(pairs).p_a, atol=2e-3)
    n, diff, agreement = parity(torch_crm, onnx_crm, SAMPLE_PAIRS)
    assert n == len(SAMPLE_PAIRS) * (len(CHECK_CRITERIA) + 1) and diff < 1e-2 and agreement == 1.0
    # a saved bench side made by one backend is not taken for the other's; 'auto' prefers the export
    assert onnx_crm.response_side_id != torch_crm.response_side_id
    assert CompositionalScorer(exported["fp32"], backend="torch").response_side_id == torch_crm.response_side_id
    assert open_scorer(exported["fp32"]).backend == "onnx" and open_scorer(two_fit_crm).backend == "torch"


def test_int8_quantizes_the_response_encoder_and_leaves_criteria_to_pytorch(two_fit_crm, exported):
    sizes = {k: (v / "onnx" / "encoder.onnx").stat().st_size for k, v in exported.items()}
    assert sizes["int8"] < sizes["fp32"] / 3 and not (exported["int8"] / "onnx" / "readers.onnx").exists()
    parts = json.loads((exported["int8"] / "onnx" / "parts.json").read_text())
    assert parts["quantize"] == "int8" and parts["criteria"] == "pytorch" and parts["fits"] == 2
    report = json.loads((exported["int8"] / "onnx_parity.json").read_text())
    assert report["passed"] and report["argmax_agreement"] >= 0.95
    int8 = load_crm(exported["int8"], backend="onnx")
    assert int8.encoder.identity.endswith(f"int8-{parts['digest']}") and len(int8.criteria_encoders) == 2
    text = "Use headings, and no emojis."
    assert np.array_equal(int8._criteria_cache(text), CompositionalScorer(two_fit_crm)._criteria_cache(text))
    responses = ["Sure! 😀\n\n- one\n- two", "The answer is two, because one plus one is two."]
    cosine = (int8.encoder.encode(responses) * CompositionalScorer(two_fit_crm).encoder.encode(responses)).sum(1)
    assert (cosine > 0.95).all() and (cosine < 0.99999).any()  # close, and not the float graph


def test_a_failed_gate_writes_nothing_and_the_cli_exports(two_fit_crm, tmp_path, capsys):
    with pytest.raises(RuntimeError, match="refusing to write"):
        export_compositional(two_fit_crm, tmp_path / "never", fp32_max_diff=-1.0)
    assert not (tmp_path / "never").exists() and not list(tmp_path.iterdir())
    with pytest.raises(FileNotFoundError, match="crm-export"):
        CompositionalScorer(two_fit_crm, backend="onnx")
    assert crm_export(["--model", str(two_fit_crm), "--output", str(tmp_path / "cli")]) == 0
    assert json.loads(capsys.readouterr().out)["passed"] and has_parts(tmp_path / "cli")
    assert (tmp_path / "cli" / "heads.safetensors").read_bytes() == (two_fit_crm / "heads.safetensors").read_bytes()
