"""The compositional CRM's encoders under ONNX Runtime: the encoder that serves them (the export and its parity
gate are crm_core.compositional.export).

In the CRM folder's `onnx/`: `encoder.onnx` (MiniLM: token ids -> the mean-pooled unit vector, and the token
states entering the first re-tuned layer) and, in a float32 export, `readers.onnx` (those states -> every criteria
fit's own top layer(s) and pooling: (n, fits, 384)); a criterion then runs the shared lower layers once, not once
per fit. The heads (crm_core.compositional.scorer) stay in NumPy.

`int8` quantizes the response encoder only (dynamic int8 weights, per output channel: per-tensor int8 bent
MiniLM's vectors to a mean cosine of 0.958 with the float ones, per-channel to 0.994; 200 AlpacaEval answers) and
leaves criteria to PyTorch: criteria read through int8 lower layers changed the sign of the own-property weight of
6% of 505 bank phrasings (training/experiments/compositional_onnx.py), while a float32 criteria graph needs
MiniLM's whole float base (87 MB). Responses are the bulk of the work (a bench is tens of thousands; a criteria set
a few sentences). An export is written only when its decisions agree with the PyTorch CRM's (`ParityReport`), on
sample pairs under a fixed list of criteria.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from crm_core.encoder import ENCODER_DIR, ENCODER_FILE, PooledEncoder, pad_batch
from crm_core.onnx_common import providers

PARTS_DIR = "onnx"
ENCODER_GRAPH = "encoder.onnx"
READERS_GRAPH = "readers.onnx"
PARTS_FILE = "parts.json"


def has_parts(folder: str | os.PathLike) -> bool:
    """Whether a compositional CRM folder carries its ONNX export."""
    return (Path(folder) / PARTS_DIR / PARTS_FILE).is_file()


class OnnxPartsEncoder(PooledEncoder):
    """The exported graphs with the calls the scorer makes of its PyTorch encoders: `encode` for responses and
    queries, `read_criteria` for criteria sentences (each fit's reading, as float16-rounded unit vectors) where
    the export has a readers graph (`reads_criteria`)."""

    def __init__(self, folder: str | os.PathLike, threads: int | None = None):
        import onnxruntime as ort
        from transformers import AutoTokenizer

        folder = Path(folder)
        parts = folder / PARTS_DIR
        if not has_parts(folder):
            raise FileNotFoundError(f"{folder}: no {PARTS_DIR}/{PARTS_FILE}; export it with crm-export first")
        self.meta = json.loads((parts / PARTS_FILE).read_text(encoding="utf-8"))
        encoder_meta = json.loads((folder / ENCODER_DIR / ENCODER_FILE).read_text(encoding="utf-8"))
        self.max_tokens = int(encoder_meta["max_tokens"])
        self.tokenizer = AutoTokenizer.from_pretrained(folder / ENCODER_DIR)
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(str(parts / ENCODER_GRAPH), options, providers=providers())
        self.reads_criteria = (parts / READERS_GRAPH).is_file()
        if self.reads_criteria:
            self.readers = ort.InferenceSession(str(parts / READERS_GRAPH), options, providers=providers())
        # vectors from a quantized graph are not the PyTorch encoder's: an embedding store keeps them apart
        self.identity = f"{encoder_meta['identity']}-onnx-{self.meta['quantize'] or 'fp32'}-{self.meta['digest']}"

    def pooled(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        return self.session.run(["embedding"], {"input_ids": input_ids, "attention_mask": attention_mask})[0]

    def read_criteria(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), fits, 384): each sentence as every criteria fit reads it."""
        ids = self.tokenizer(list(texts), truncation=True, max_length=self.max_tokens)["input_ids"]
        out = []
        for row in ids:  # one at a time, as the PyTorch path: no padding in the states
            batch, mask = pad_batch([row])
            states = self.session.run(["states"], {"input_ids": batch, "attention_mask": mask})[0]
            out.append(self.readers.run(["vectors"], {"states": states, "attention_mask": mask.astype(np.float32)})[0])
        return np.concatenate(out).astype(np.float16).astype(np.float32)
