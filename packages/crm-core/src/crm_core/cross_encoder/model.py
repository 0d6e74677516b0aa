"""Load a CRM checkpoint and score many pairs fast, in both orders.

A checkpoint folder holds Hugging Face files (config, safetensors weights, tokenizer) plus ``crm.json`` (the
prompt format and its version, label order, max length, objective). Scoring is symmetric by default: each pair
is judged as (A, B) and as (B, A) and P(A preferred) is the mean of the two, which removes position bias and
makes swapping A and B give exactly 1 - p. Inputs are length-sorted into batches and padded only to the longest
in each batch; batches are formed from the sorted set of distinct inputs, so the same inputs always meet the
same batch-mates and give bit-identical logits.
"""

from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from crm_core.cross_encoder.prompts import Encoded, PromptBuilder
from crm_core.spec import CRMSpec, Pair, PairScores


def load_tokenizer(folder: str | os.PathLike) -> Any:
    """The checkpoint's tokenizer. transformers 4.57.3+ warns about a Mistral regex for every local folder that
    4.57.x saved; saying explicitly that no Mistral fix applies silences the false alarm, changing nothing."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder, fix_mistral_regex=False)


def length_feature(words: int) -> float:
    """A response's length as a number the score can use: log2 of its word count relative to 256 words, one
    unit per doubling."""
    return math.log2((words + 1) / 256)


def point_scores(logits: np.ndarray, words: Sequence[int]) -> np.ndarray:
    """Pointwise scores from a pointwise head's logits. A one-column head is the score. A two-column head
    (labels score, length_slope) adds its second column times the response's length_feature: the network reads
    from criteria and response how much length should count, and the word count enters as a number, exact at
    any gap, where a 256-token encoder sees at most the start and end of a long response."""
    scores = logits[:, 0].astype(np.float64)
    if logits.shape[1] == 2:
        scores = scores + logits[:, 1].astype(np.float64) * np.array([length_feature(w) for w in words])
    return scores


def pad_batch(encoded: Sequence[Encoded], pad_id: int, width: int | None = None) -> dict[str, np.ndarray]:
    """Right-pad inputs to the longest one (or to `width`): input_ids, attention_mask and, for segment-style
    inputs, token_type_ids, as int64 arrays."""
    width = width or max(len(e.input_ids) for e in encoded)
    ids = np.full((len(encoded), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(encoded), width), dtype=np.int64)
    types = np.zeros((len(encoded), width), dtype=np.int64)
    for row, e in enumerate(encoded):
        ids[row, : len(e.input_ids)] = e.input_ids
        mask[row, : len(e.input_ids)] = 1
        if e.token_type_ids is not None:
            types[row, : len(e.input_ids)] = e.token_type_ids
    batch = {"input_ids": ids, "attention_mask": mask}
    if encoded[0].token_type_ids is not None:
        batch["token_type_ids"] = types
    return batch


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits.astype(np.float64) - logits.max(axis=-1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=-1, keepdims=True)


class CrossEncoderScorer(ABC):
    """Batching, both-order scoring and probabilities, independent of the backend that runs the network."""

    weights_file = "model.safetensors"  # the file whose bytes identify what is scored (ONNX: the .onnx file)

    def __init__(self, folder: Path, tokenizer: Any, spec: CRMSpec):
        self.folder, self.tokenizer, self.spec = folder, tokenizer, spec
        self.builder = PromptBuilder(tokenizer, spec.prompt_format)
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0

    @abstractmethod
    def _forward(
        self, input_ids: np.ndarray, attention_mask: np.ndarray, token_type_ids: np.ndarray | None
    ) -> np.ndarray:
        """Logits (batch, labels) as float32 for one padded batch."""

    def logits(self, encoded: Sequence[Encoded], batch_size: int = 16, progress: bool = False) -> np.ndarray:
        """Logits for many inputs: distinct inputs sorted by (length, ids), padded per batch."""
        keys = [tuple(e.input_ids) for e in encoded]
        by_key = {k: e for k, e in zip(keys, encoded, strict=True)}
        distinct = sorted(by_key, key=lambda k: (len(k), k))
        position = {k: i for i, k in enumerate(distinct)}
        out = np.empty((len(distinct), len(self.spec.labels)), dtype=np.float32)
        starts = range(0, len(distinct), batch_size)
        for start in tqdm(starts, desc="scoring", unit="batch", disable=not progress, leave=False):
            batch = pad_batch([by_key[k] for k in distinct[start : start + batch_size]], self.pad_id)
            out[start : start + len(batch["input_ids"])] = self._forward(
                batch["input_ids"], batch["attention_mask"], batch.get("token_type_ids")
            )
        return out[[position[k] for k in keys]]

    def encode_pairs(self, pairs: Sequence[Pair], both_orders: bool = True) -> tuple[list[Encoded], list[Encoded]]:
        """Inputs with A first, and (if `both_orders`) with B first."""
        build = self.builder.pair
        first = [build(p.criteria, p.context, p.response_a, p.response_b, p.dislikes) for p in pairs]
        second = [build(p.criteria, p.context, p.response_b, p.response_a, p.dislikes) for p in pairs if both_orders]
        return first, second

    def encode_points(self, pairs: Sequence[Pair]) -> list[Encoded]:
        """Pointwise inputs: each pair's response A, then its response B."""
        build = self.builder.point
        return [build(p.criteria, p.context, r, p.dislikes) for p in pairs for r in (p.response_a, p.response_b)]

    def score_pairs(
        self, pairs: Sequence[Pair], batch_size: int = 16, symmetric: bool = True, progress: bool = False
    ) -> PairScores:
        """Judge every pair; with `symmetric` (the default) in both orders, averaged. A pointwise checkpoint
        scores each response alone, P(A) = sigmoid(score A - score B): order plays no part, so both "orders"
        are that same probability."""
        if self.spec.pointwise:
            scores = self.point_scores(self.encode_points(pairs), batch_size, progress)
            p_a = 1 / (1 + np.exp(-(scores[0::2] - scores[1::2])))
            return PairScores(p_a, p_a, p_a.copy() if symmetric else np.full_like(p_a, np.nan))
        first, second = self.encode_pairs(pairs, both_orders=symmetric)
        probs = softmax(self.logits(first + second, batch_size, progress))
        ab, ba = probs[: len(first)], probs[len(first) :]
        p_first = ab[:, 0]
        if not symmetric:
            return PairScores(p_first, p_first, np.full_like(p_first, np.nan), ab[:, 2] if ab.shape[1] == 3 else None)
        p_second = ba[:, 1]
        p_tie = (ab[:, 2] + ba[:, 2]) / 2 if ab.shape[1] == 3 else None
        return PairScores((p_first + p_second) / 2, p_first, p_second, p_tie)

    def score_responses(
        self, criteria: list[str], context: str | list[dict], responses: Sequence[str], dislikes=None, batch_size=16
    ) -> np.ndarray:
        """Pointwise checkpoints: a scalar score per response (higher = preferred)."""
        if not self.spec.pointwise:
            raise ValueError("this checkpoint is pairwise: use score_pairs")
        encoded = [self.builder.point(criteria, context, r, dislikes) for r in responses]
        return self.point_scores(encoded, batch_size)

    def score_points(self, criteria: Sequence[str], dislikes: Sequence[str], items: Sequence[tuple[str, str]],
                     panels: Sequence[Sequence[str]] | None = None, batch_size: int = 16) -> np.ndarray:  # fmt: skip
        """Pointwise checkpoints: a score per (query, response); `panels` (reference answers) is for the
        compositional kind's interface and unused here."""
        build = self.builder.point
        return self.point_scores([build(list(criteria), q, r, list(dislikes)) for q, r in items], batch_size)

    def point_scores(self, encoded: Sequence[Encoded], batch_size: int = 16, progress: bool = False) -> np.ndarray:
        """Pointwise checkpoints: the score of each pointwise input (crm_core.cross_encoder.model.point_scores)."""
        return point_scores(self.logits(encoded, batch_size, progress), [e.words[0] for e in encoded])


class TorchScorer(CrossEncoderScorer):
    """PyTorch backend: inference mode; on a GPU bf16 (or fp16) weights and SDPA attention."""

    def __init__(self, folder: Path, device: str | None = None, dtype: str | None = None):
        import torch
        from transformers import AutoModelForSequenceClassification

        spec = CRMSpec.load(folder)
        device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        if dtype is None:
            dtype = "float32" if device == "cpu" else ("bfloat16" if torch.cuda.is_bf16_supported() else "float16")
        super().__init__(folder, load_tokenizer(folder), spec)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            folder, dtype=getattr(torch, dtype), attn_implementation="sdpa", use_safetensors=True,
            trust_remote_code=False,
        ).to(device).eval()  # fmt: skip
        self.device, self.torch = device, torch

    def _forward(self, input_ids, attention_mask, token_type_ids):
        torch = self.torch
        inputs = {"input_ids": torch.from_numpy(input_ids), "attention_mask": torch.from_numpy(attention_mask)}
        if token_type_ids is not None:
            inputs["token_type_ids"] = torch.from_numpy(token_type_ids)
        with torch.inference_mode():
            logits = self.model(**{k: v.to(self.device) for k, v in inputs.items()}).logits
        return logits.float().cpu().numpy()


def save_crm(
    model: Any,
    tokenizer: Any,
    spec: CRMSpec,
    folder: str | os.PathLike,
    card: str | None = None,
    state_dict: dict | None = None,
) -> Path:
    """Write a checkpoint folder: weights as safetensors, tokenizer, crm.json and a model card. Pass the
    gathered `state_dict` when the model is sharded (FSDP)."""
    from crm_core.hub import model_card

    folder = Path(folder)
    model.config.id2label = dict(enumerate(spec.labels))
    model.config.label2id = {label: i for i, label in enumerate(spec.labels)}
    if getattr(model.config, "pad_token_id", None) is None:
        model.config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder, safe_serialization=True, state_dict=state_dict)
    tokenizer.save_pretrained(folder)
    spec.save(folder)
    (folder / "README.md").write_text(card or model_card(spec), encoding="utf-8")
    return folder
