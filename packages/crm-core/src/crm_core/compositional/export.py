"""Export a compositional CRM's encoders to ONNX (crm_core.compositional.onnx serves them), written only when its
decisions agree with the PyTorch CRM's (`ParityReport`) on sample pairs under a fixed list of criteria."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from crm_core.atomic import atomic_dir
from crm_core.compositional.onnx import (
    ENCODER_GRAPH,
    PARTS_DIR,
    PARTS_FILE,
    READERS_GRAPH,
)
from crm_core.compositional.scorer import CompositionalScorer
from crm_core.onnx_common import PARITY_FILE, SAMPLE_PAIRS, ParityReport, keep_parity, parity_verdict, quantize_int8
from crm_core.spec import Pair

# criteria the parity gate reads every sample pair under: silence, each kind of property, voice, several at once
CHECK_CRITERIA: list[list[str]] = [
    [], ["I dislike emojis."], ["Use headings and bullet lists."], ["Prefer short, concise answers."],
    ["Give a detailed, thorough answer."], ["Write for a business audience."], ["Be formal and polite."],
    ["Explain it like I'm five."], ["Include a code example.", "No disclaimers about being an AI."],
]  # fmt: skip


def _graph_modules(scorer) -> tuple:
    """torch modules for the two graphs, made from a PyTorch CompositionalScorer's encoders."""
    import torch

    model = scorer.encoder.model
    layers = model.encoder.layer
    tuned = [i for i in range(len(layers)) if any(e.model.encoder.layer[i] is not layers[i]
                                                  for e in scorer.criteria_encoders)]  # fmt: skip
    after = min(tuned, default=len(layers))

    class EncoderGraph(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            out = self.model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
            return mean_pool(out.last_hidden_state, attention_mask.to(torch.float32)), out.hidden_states[after]

    stacks = torch.nn.ModuleList(torch.nn.ModuleList(e.model.encoder.layer[after:]) for e in scorer.criteria_encoders)

    class ReadersGraph(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stacks = stacks

        def forward(self, states, attention_mask):
            additive = (1.0 - attention_mask[:, None, None, :]) * torch.finfo(states.dtype).min
            vectors = []
            for stack in self.stacks:
                h = states
                for layer in stack:
                    h = layer(h, attention_mask=additive)[0]
                vectors.append(mean_pool(h, attention_mask))
            return torch.stack(vectors, dim=1)

    def mean_pool(h, mask):
        m = mask[..., None]
        return torch.nn.functional.normalize((h * m).sum(1) / m.sum(1).clamp(min=1), dim=-1)

    return EncoderGraph().eval(), ReadersGraph().eval(), after


def _export_graphs(scorer, folder: Path, opset: int, readers: bool) -> int:
    """Write encoder.onnx and (`readers`) readers.onnx, float32, into `folder`; returns the first re-tuned layer's
    index."""
    import torch

    encoder_graph, readers_graph, after = _graph_modules(scorer)
    ids = scorer.encoder.tokenizer(["A first example.", "A second, longer example sentence."], padding=True,
                                   return_tensors="pt")  # fmt: skip
    tokens = {0: "texts", 1: "tokens"}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation and tracer notes
        torch.onnx.export(encoder_graph, (ids["input_ids"], ids["attention_mask"]), str(folder / ENCODER_GRAPH),
                          input_names=["input_ids", "attention_mask"], output_names=["embedding", "states"],
                          dynamic_axes={"input_ids": tokens, "attention_mask": tokens, "embedding": {0: "texts"},
                                        "states": tokens}, opset_version=opset, dynamo=False)  # fmt: skip
        if not readers:
            return after
        states = encoder_graph(ids["input_ids"], ids["attention_mask"])[1]
        torch.onnx.export(readers_graph, (states, ids["attention_mask"].float()), str(folder / READERS_GRAPH),
                          input_names=["states", "attention_mask"], output_names=["vectors"],
                          dynamic_axes={"states": tokens, "attention_mask": tokens, "vectors": {0: "texts"}},
                          opset_version=opset, dynamo=False)  # fmt: skip
    return after


def _quantize(path: Path) -> None:
    quantized = path.with_suffix(".int8.onnx")
    quantize_int8(path, quantized)
    os.replace(quantized, path)


def parity(torch_scorer, onnx_scorer, pairs: Sequence[Pair]) -> tuple[int, float, float]:
    """(decisions, max |difference of score margins|, share of decisions that agree): every pair under its own
    criteria and under each of CHECK_CRITERIA."""
    rows = [Pair(c, p.context, p.response_a, p.response_b, p.dislikes) for p in pairs for c in CHECK_CRITERIA]
    rows += list(pairs)
    margins = []
    for scorer in (torch_scorer, onnx_scorer):
        p = np.clip(scorer.score_pairs(rows, symmetric=False).p_a, 1e-12, 1 - 1e-12)
        margins.append(np.log(p) - np.log1p(-p))  # score A - score B
    agree = float(((margins[0] > 0) == (margins[1] > 0)).mean())
    return len(rows), float(np.abs(margins[0] - margins[1]).max()), agree


def export_compositional(
    model_dir: str | os.PathLike,
    output_dir: str | os.PathLike,
    quantize: Literal["int8"] | None = None,
    samples: list[Pair] | None = None,
    fp32_max_diff: float = 1e-2,
    int8_min_agreement: float = 0.95,
    opset: int | None = None,
) -> ParityReport:
    """Copy the CRM folder `model_dir` to `output_dir` with its networks exported to `onnx/`, checking parity
    first; raises RuntimeError, writing nothing, when the export fails it. fp32 is held to a score tolerance, not
    bit parity: both backends round vectors to float16, and one rounding step apart moves a score by ~1e-3."""
    if quantize not in (None, "int8"):
        raise ValueError(f"quantize must be None or 'int8', got {quantize!r}")
    model_dir, output_dir = Path(model_dir), Path(output_dir)
    torch_scorer = CompositionalScorer(model_dir, backend="torch")
    with tempfile.TemporaryDirectory() as tmp, atomic_dir(output_dir) as staging:
        for item in model_dir.iterdir():
            if item.name != PARTS_DIR:  # an earlier export is replaced, never mixed in
                (shutil.copytree if item.is_dir() else shutil.copy2)(item, staging / item.name)
        parts = staging / PARTS_DIR
        parts.mkdir()
        after = _export_graphs(torch_scorer, Path(tmp), opset or 17, readers=quantize is None)
        if quantize == "int8":
            _quantize(Path(tmp) / ENCODER_GRAPH)
        for name in (ENCODER_GRAPH, READERS_GRAPH) if quantize is None else (ENCODER_GRAPH,):
            shutil.copy2(Path(tmp) / name, parts / name)
        digest = hashlib.sha256((parts / ENCODER_GRAPH).read_bytes()).hexdigest()[:12]  # what response vectors are
        meta = {"quantize": quantize, "criteria": "onnx" if quantize is None else "pytorch", "after_layer": after,
                "fits": len(torch_scorer.criteria_encoders), "opset": opset or 17, "digest": digest}  # fmt: skip
        (parts / PARTS_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        card = staging / "README.md"
        if card.is_file():  # the model card says what the export holds (once, however often it is re-exported)
            lines = [line for line in card.read_text(encoding="utf-8").splitlines() if not line.startswith("- onnx/")]
            held = ("the int8 response encoder; criteria are read by PyTorch" if quantize else
                    "the float32 response encoder and criteria readers")  # fmt: skip
            card.write_text("\n".join([*lines, f"- onnx/: {held} (crm-export; parity in {PARITY_FILE})"]) + "\n",
                            encoding="utf-8")  # fmt: skip
        n, diff, agreement = parity(torch_scorer, CompositionalScorer(staging, backend="onnx"), samples or SAMPLE_PAIRS)
        report = parity_verdict(n, diff, agreement, quantize, fp32_max_diff, int8_min_agreement)
        keep_parity(report, staging, output_dir)
    return report
