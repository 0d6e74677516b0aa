"""Per-text features for training and evaluating the compositional CRM: embeddings from the store, properties
computed once per distinct text, and answer groups turned into arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from crm_core.encoder import EmbeddingStore
from crm_core.properties import NAMES, OTHER_LANGUAGE, measure, other_languages
from tqdm.auto import tqdm


class Features:
    """Embedding and properties of any text, memoised."""

    def __init__(self, store: EmbeddingStore):
        self.store = store
        self._phi: dict[str, np.ndarray] = {}

    def embed(self, texts: list[str], progress: bool = False) -> np.ndarray:
        return self.store.get(texts, progress=progress)

    def phi(self, texts: list[str], progress: bool = False, queries: list[str] | None = None) -> np.ndarray:
        """Properties of each text; with `queries` (one per text) also those that depend on the question."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._phi]
        for text in tqdm(todo, desc="properties", unit="text", disable=not progress or len(todo) < 1000):
            self._phi[text] = measure(text)
        if not texts:
            return np.zeros((0, len(NAMES)), np.float32)
        out = np.stack([self._phi[t] for t in texts]).astype(np.float32)
        if queries is not None:
            out[:, OTHER_LANGUAGE] = other_languages(queries, texts)
        return out


@dataclass
class Groups:
    """Answer groups flattened: row r belongs to group `group[r]`; `phi` raw, `z` centred per group and scaled."""

    prompts: list[str]
    names: list[str]  # the answer's model or source name
    texts: list[str]
    group: np.ndarray
    query_vec: np.ndarray
    vec: np.ndarray
    phi: np.ndarray

    def centred(self, spread: np.ndarray) -> np.ndarray:
        z = self.phi / spread
        means = np.zeros((len(self.prompts), z.shape[1]))
        np.add.at(means, self.group, z)
        means /= np.bincount(self.group, minlength=len(self.prompts))[:, None]
        return (z - means[self.group]).astype(np.float32)

    def members(self) -> list[np.ndarray]:
        order = np.argsort(self.group, kind="stable")
        bounds = np.searchsorted(self.group[order], np.arange(len(self.prompts) + 1))
        return [order[bounds[g] : bounds[g + 1]] for g in range(len(self.prompts))]


def make_groups(groups: list[tuple[str, dict[str, str]]], features: Features, progress: bool = False) -> Groups:
    prompts, names, texts, owner = [], [], [], []
    for g, (prompt, answers) in enumerate(groups):
        prompts.append(prompt)
        for name, text in answers.items():
            names.append(name)
            texts.append(text)
            owner.append(g)
    group = np.array(owner, dtype=np.int64)
    qvec = features.embed(prompts, progress)
    return Groups(prompts, names, texts, group, qvec[group], features.embed(texts, progress),
                  features.phi(texts, progress, [prompts[g] for g in owner]))  # fmt: skip
