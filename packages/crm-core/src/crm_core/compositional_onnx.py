"""The compositional CRM's encoders under ONNX Runtime: export, parity gate and the encoder that serves them.

In the CRM folder's `onnx/`: `encoder.onnx` (MiniLM: token ids -> the mean-pooled unit vector, and the token
states entering the first re-tuned layer) and, in a float32 export, `readers.onnx` (those states -> every criteria
fit's own top layer(s) and pooling: (n, fits, 384)); a criterion then runs the shared lower layers once, not once
per fit. The heads (crm_core.compositional) stay in NumPy.

`int8` quantizes the response encoder only (dynamic int8 weights, per output channel: per-tensor int8 bent
MiniLM's vectors to a mean cosine of 0.958 with the float ones, per-channel to 0.994; 200 AlpacaEval answers) and
leaves criteria to PyTorch: criteria read through int8 lower layers changed the sign of the own-property weight of
6% of 505 bank phrasings (training/experiments/compositional_onnx.py), while a float32 criteria graph needs
MiniLM's whole float base (87 MB). Responses are the bulk of the work (a bench is tens of thousands; a criteria set
a few sentences). An export is written only when its decisions agree with the PyTorch CRM's (`ParityReport`), on
sample pairs under a fixed list of criteria.
"""

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
from crm_core.encoder import ENCODER_DIR, ENCODER_FILE, PooledEncoder, pad_batch
from crm_core.model import Pair
from crm_core.onnx import PARITY_FILE, SAMPLE_PAIRS, ParityReport, keep_parity, parity_verdict, providers

PARTS_DIR = "onnx"
ENCODER_GRAPH = "encoder.onnx"
READERS_GRAPH = "readers.onnx"
PARTS_FILE = "parts.json"
# criteria the parity gate reads every sample pair under: silence, each kind of property, voice, several at once
CHECK_CRITERIA: list[list[str]] = [
    [], ["I dislike emojis."], ["Use headings and bullet lists."], ["Prefer short, concise answers."],
    ["Give a detailed, thorough answer."], ["Write for a business audience."], ["Be formal and polite."],
    ["Explain it like I'm five."], ["Include a code example.", "No disclaimers about being an AI."],
]  # fmt: skip


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
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantized = path.with_suffix(".int8.onnx")
    quantize_dynamic(str(path), str(quantized), weight_type=QuantType.QInt8, per_channel=True)
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
    from crm_core.compositional import CompositionalScorer

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
