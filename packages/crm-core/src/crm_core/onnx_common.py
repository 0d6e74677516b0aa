"""What both kinds' ONNX exports share: the execution providers, the sample pairs every export is checked on, the
parity report and its verdict (an export that changes decisions is refused, nothing written), and int8 quantization.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from crm_core.spec import Pair

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


def quantize_int8(source: Path, target: Path) -> None:
    """Dynamic int8 quantization of the weights, per channel: the fast path on CPU."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True)
