"""One loader that knows the CRM kinds: a folder (or Hub id) in, the scorer for its `crm.json` kind out.

Above the kinds (model: cross-encoders in PyTorch; onnx: the same exported; compositional), which never import
it; retiring a kind is deleting its module and its branch here.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from crm_core.cross_encoder.model import TorchScorer
from crm_core.hub import resolve_checkpoint
from crm_core.spec import CRMSpec, Scorer


def load_crm(name_or_path: str | os.PathLike, backend: Literal["torch", "onnx"] = "torch", **kwargs: Any) -> Scorer:
    """A scorer for a local checkpoint folder or a Hub repo id (downloaded, or found in the local cache). A
    compositional CRM (crm.json kind) gets its own scorer, whose 'onnx' backend runs its exported encoders."""
    folder = resolve_checkpoint(name_or_path)
    if CRMSpec.load(folder).kind == "compositional":  # one backend: NumPy heads over its own encoder
        from crm_core.compositional.scorer import CompositionalScorer

        return CompositionalScorer(folder, threads=kwargs.get("threads"), backend=backend)
    if backend == "torch":
        return TorchScorer(folder, **kwargs)
    if backend == "onnx":
        from crm_core.cross_encoder.onnx import OnnxScorer

        return OnnxScorer(folder, **kwargs)
    raise ValueError(f"backend must be 'torch' or 'onnx', got {backend!r}")
