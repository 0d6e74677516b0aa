"""ONNX export of a CRM checkpoint, optional dynamic int8 quantization, and an ONNX Runtime scorer.

Export goes through optimum-onnx (task text-classification) into a temporary folder; the result is scored on
sample pairs by both torch and ONNX Runtime, and only a model that passes the parity check (max |logit
difference| for fp32, argmax agreement for int8) is moved to the output folder. On CPU, int8 is the fast path;
ONNX fp32 is mostly a stepping stone to it (see benchmarks/).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from crm_core.atomic import atomic_dir
from crm_core.hub import model_card
from crm_core.model import CRM_FILE, CRMSpec, CrossEncoderScorer, Pair, TorchScorer, load_tokenizer, point_scores

ONNX_FILE = "model.onnx"
PARITY_FILE = "onnx_parity.json"
SAMPLE_PAIRS = [
    Pair([], "What is the capital of France?", "Paris.", "The capital of France is Lyon, on the Rhone."),
    Pair(["prefer concise answers"], "How do I boil an egg?", "Boil it for 9 minutes, then cool it in cold water.",
         "Eggs are a staple of many cuisines. " * 20 + "Put the egg in boiling water for about nine minutes."),
    Pair(["I like step-by-step lists", "cite sources"], "How do I reset my router?",
         "1. Unplug it.\n2. Wait 30 seconds.\n3. Plug it back in.", "Just restart it, it usually works."),
    Pair(["be formal"], [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"},
                         {"role": "user", "content": "Write a one-line greeting for a client."}],
         "Dear Ms. Smith, thank you for your continued trust.", "yo whats up!! 😎"),
]  # fmt: skip


def providers() -> list[str]:
    """CUDA when there is a GPU and ONNX Runtime was built for it, else CPU. (onnxruntime-gpu lists CUDA even on
    machines without one, then fails to load it, loudly.)"""
    import onnxruntime as ort
    import torch

    cuda = torch.cuda.is_available() and "CUDAExecutionProvider" in ort.get_available_providers()
    return ["CUDAExecutionProvider", "CPUExecutionProvider"] if cuda else ["CPUExecutionProvider"]


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


@dataclass
class ParityReport:
    """How closely the exported model reproduces the torch checkpoint on the sample pairs."""

    n_inputs: int
    max_abs_logit_diff: float
    argmax_agreement: float
    quantize: str | None
    passed: bool
    threshold: str

    def summary(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        return (
            f"{verdict} parity on {self.n_inputs} inputs ({self.quantize or 'fp32'}): max |logit diff| "
            f"{self.max_abs_logit_diff:.3g}, argmax agreement {self.argmax_agreement:.2%} (needs {self.threshold})"
        )


def parity_verdict(n_inputs: int, diff: float, agreement: float, quantize: str | None, fp32_max_diff: float,
                   int8_min_agreement: float) -> ParityReport:  # fmt: skip
    """The gate every export passes: float32 within `fp32_max_diff` of PyTorch and no decision changed; int8 with
    at least `int8_min_agreement` of decisions unchanged."""
    if quantize == "int8":
        passed, threshold = agreement >= int8_min_agreement, f"agreement >= {int8_min_agreement:.0%}"
    else:
        passed, threshold = diff <= fp32_max_diff and agreement == 1.0, f"max diff <= {fp32_max_diff:g}"
    return ParityReport(n_inputs, diff, agreement, quantize, passed, threshold)


def keep_parity(report: ParityReport, staging: Path, output_dir: Path) -> None:
    """Refuse the export (RuntimeError; the staging folder is discarded, so nothing is written) unless it passed,
    and record the report in the staged folder."""
    if not report.passed:
        raise RuntimeError(f"refusing to write {output_dir}: {report.summary()}")
    (staging / PARITY_FILE).write_text(json.dumps(asdict(report), indent=2) + "\n", encoding="utf-8")


def _quantize_int8(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True)


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
                _quantize_int8(exported / ONNX_FILE, staging / ONNX_FILE)
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
