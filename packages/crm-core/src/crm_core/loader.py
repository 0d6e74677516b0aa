"""One loader that knows the CRM kinds: a folder (or Hub id) in, the scorer for its `crm.json` kind out.

Above the kinds (model: cross-encoders in PyTorch; onnx: the same exported; compositional), which never import
it; retiring a kind is deleting its module and its branch here.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from crm_core.cross_encoder.model import TorchScorer
from crm_core.hub import resolve_checkpoint
from crm_core.spec import CRMSpec, Scorer


def load_crm(name_or_path: str | os.PathLike, backend: Literal["torch", "onnx"] = "torch", **kwargs: Any) -> Scorer:
    """A scorer for a local checkpoint folder or a Hub repo id (downloaded, or found in the local cache). A
    compositional CRM (crm.json kind) gets its own scorer, whose 'onnx' backend runs its exported encoders."""
    from safetensors import SafetensorError

    folder = resolve_checkpoint(name_or_path)
    refuse_pickled_only(folder)
    try:
        if CRMSpec.load(folder).kind == "compositional":  # one backend: NumPy heads over its own encoder
            from crm_core.compositional.scorer import CompositionalScorer

            return CompositionalScorer(folder, threads=kwargs.get("threads"), backend=backend)
        if backend == "torch":
            return TorchScorer(folder, **kwargs)
        if backend == "onnx":
            from crm_core.cross_encoder.onnx import OnnxScorer

            return OnnxScorer(folder, **kwargs)
    except SafetensorError as error:  # a truncated or fake weights file: one line, not a traceback
        raise ValueError(f"{folder}: a weights file is not readable safetensors ({error}); copy it again") from None
    raise ValueError(f"backend must be 'torch' or 'onnx', got {backend!r}")


PICKLED = (".bin", ".pt", ".pth", ".pkl", ".ckpt")


def refuse_pickled_only(folder: Path) -> None:
    """ValueError when a checkpoint's only weights are pickles (.bin, .pt, ...): unpickling can run any code, so USL
    loads safetensors and ONNX only; or when it holds something other than files and folders (a device, a pipe);
    one line for every command that loads a CRM."""
    for path in folder.rglob("*"):  # a link to /dev/zero or a pipe would be read without end
        if path.exists() and not (path.is_file() or path.is_dir()):
            target = f" (a link to {path.resolve()})" if path.is_symlink() else ""
            raise ValueError(f"{path}: not a regular file{target}; a checkpoint holds regular files only")
    files = [p for p in folder.rglob("*") if p.is_file()]
    if any(p.suffix in (".safetensors", ".onnx") for p in files):
        return
    pickled = sorted(p.relative_to(folder) for p in files if p.suffix in PICKLED)
    if pickled:
        raise ValueError(
            f"{folder}: its only weights are pickled ({', '.join(map(str, pickled[:3]))}); USL loads "
            "safetensors or ONNX weights only (a pickle can run code): convert them to safetensors"
        )
