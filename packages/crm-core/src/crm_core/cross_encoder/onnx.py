"""ONNX export of a CRM checkpoint, optional dynamic int8 quantization, and an ONNX Runtime scorer.

Export goes through optimum-onnx (task text-classification) into a temporary folder; the result is scored on
sample pairs by both torch and ONNX Runtime, and only a model that passes the parity check (max |logit
difference| for fp32, argmax agreement for int8) is moved to the output folder. On CPU, int8 is the fast path;
ONNX fp32 is mostly a stepping stone to it (see benchmarks/).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Literal

import numpy as np

from crm_core.atomic import atomic_dir
from crm_core.cross_encoder.model import CrossEncoderScorer, TorchScorer, load_tokenizer, point_scores
from crm_core.hub import model_card
from crm_core.onnx_common import SAMPLE_PAIRS, ParityReport, keep_parity, parity_verdict, providers, quantize_int8
from crm_core.spec import CRM_FILE, CRMSpec, Pair

ONNX_FILE = "model.onnx"


class OnnxScorer(CrossEncoderScorer):
    """ONNX Runtime backend with the same interface as TorchScorer."""

    def __init__(self, folder: Path, onnx_file: str = ONNX_FILE, threads: int | None = None):
        import onnxruntime as ort

        folder = Path(folder)
        if not (folder / onnx_file).is_file():
            raise FileNotFoundError(f"{folder}: no {onnx_file}; export the checkpoint with crm-export first")
        super().__init__(folder, load_tokenizer(folder), CRMSpec.load(folder))
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(str(folder / onnx_file), options, providers=providers())
        self.input_names = {i.name for i in self.session.get_inputs()}
        self.weights_file = onnx_file  # what the score cache's checkpoint id hashes

    def _forward(self, input_ids, attention_mask, token_type_ids):
        feed = {"input_ids": input_ids, "attention_mask": attention_mask}
        if "token_type_ids" in self.input_names:
            feed["token_type_ids"] = token_type_ids if token_type_ids is not None else np.zeros_like(input_ids)
        if "position_ids" in self.input_names:
            feed["position_ids"] = np.maximum(np.cumsum(attention_mask, axis=1) - 1, 0)
        return self.session.run(["logits"], feed)[0].astype(np.float32)


def _parity_inputs(scorer: CrossEncoderScorer, pairs: list[Pair]) -> list:
    """Pairwise: every pair in both orders. Pointwise: each pair's two responses, A then B, alternating."""
    if scorer.spec.pointwise:
        return scorer.encode_points(pairs)
    first, second = scorer.encode_pairs(pairs)
    return first + second


def _decisions(logits: np.ndarray, spec: CRMSpec, encoded: list) -> np.ndarray:
    """The choice each parity input leads to: the argmax label, or for a pointwise model whether response A
    outscores response B."""
    if spec.pointwise:
        scores = point_scores(logits, [e.words[0] for e in encoded])
        return scores[0::2] > scores[1::2]
    return logits.argmax(-1)


def export_crm(
    model_dir: str | os.PathLike,
    output_dir: str | os.PathLike,
    quantize: Literal["int8"] | None = None,
    samples: list[Pair] | None = None,
    fp32_max_diff: float = 1e-4,
    int8_min_agreement: float = 0.95,
    opset: int | None = None,
) -> ParityReport:
    """Export `model_dir` to `output_dir` (model.onnx + tokenizer + crm.json + card), checking parity first.

    Raises RuntimeError, writing nothing, when the exported model fails its parity check.
    """
    from optimum.exporters.onnx import main_export
    from transformers.utils import logging as transformers_logging

    model_dir, output_dir = Path(model_dir), Path(output_dir)
    torch_scorer = TorchScorer(model_dir, device="cpu")
    encoded = _parity_inputs(torch_scorer, samples or SAMPLE_PAIRS)
    reference = torch_scorer.logits(encoded, batch_size=8)
    with tempfile.TemporaryDirectory() as tmp:
        exported = Path(tmp) / "export"
        verbosity = transformers_logging.get_verbosity()
        transformers_logging.set_verbosity_error()  # optimum's tokenizer load repeats the Mistral-regex false alarm
        try:
            main_export(str(model_dir), output=exported, task="text-classification", local_files_only=True,
                        do_validation=False, opset=opset)  # fmt: skip
        finally:
            transformers_logging.set_verbosity(verbosity)
        with atomic_dir(output_dir) as staging:
            for item in exported.iterdir():
                if item.suffix != ".onnx" and item.is_file():
                    shutil.copy2(item, staging / item.name)
            shutil.copy2(model_dir / CRM_FILE, staging / CRM_FILE)
            # the card is written from crm.json, so it names the data and licences of the checkpoint it ships
            (staging / "README.md").write_text(model_card(CRMSpec.load(model_dir)), encoding="utf-8")
            if quantize == "int8":
                quantize_int8(exported / ONNX_FILE, staging / ONNX_FILE)
            elif quantize is None:
                shutil.copy2(exported / ONNX_FILE, staging / ONNX_FILE)
                if (exported / (ONNX_FILE + "_data")).exists():
                    shutil.copy2(exported / (ONNX_FILE + "_data"), staging / (ONNX_FILE + "_data"))
            else:
                raise ValueError(f"quantize must be None or 'int8', got {quantize!r}")
            onnx_logits = OnnxScorer(staging).logits(encoded, batch_size=8)
            diff = float(np.abs(onnx_logits - reference).max())
            spec = torch_scorer.spec
            agreement = float((_decisions(onnx_logits, spec, encoded) == _decisions(reference, spec, encoded)).mean())
            report = parity_verdict(len(encoded), diff, agreement, quantize, fp32_max_diff, int8_min_agreement)
            keep_parity(report, staging, output_dir)
    return report
