"""Reference-guided signals of the quality term, computed by code over the whole text (never a token window).

A bench names a reference model (crm.json `reference_model`, AlpacaEval 2.0's baseline for the default bench);
how close a response comes to the reference's answer to the same query is evidence of quality, as MT-bench's
reference-guided grading uses it. The embedding cosine (reference_similarity below) reads the
first 128 tokens; these two read everything:

- lexical similarity: cosine of the sublinear TF-IDF word vectors of response and reference. Word weights come
  from a fixed IDF table shipped in the CRM folder (`reference_idf.json`), built on training answers, so a
  response's value never depends on which other responses a bench holds;
- relative length: tanh(log2((words + 1) / (reference words + 1))), what AlpacaEval's length control regresses
  on. The quality term may carry a negative weight on it: the judges' taste for length is not quality.

Both are 0 where a response has no reference.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

IDF_FILE = "reference_idf.json"
WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (Unicode letters, digits and underscore)."""
    return WORD.findall(text.lower())


class IdfTable:
    """Inverse document frequencies, log((documents + 1) / (frequency + 1)); unseen words get the largest."""

    def __init__(self, documents: int, idf: dict[str, float]):
        self.documents, self.idf = documents, idf
        self.unseen = math.log(documents + 1)

    @classmethod
    def build(cls, texts: Iterable[str], min_count: int = 2) -> IdfTable:
        """From a corpus; words in fewer than `min_count` texts are left out (they score as unseen)."""
        frequency: Counter[str] = Counter()
        documents = 0
        for text in texts:
            frequency.update(set(words(text)))
            documents += 1
        if not documents:
            raise ValueError("an IDF table needs at least one text")
        idf = {w: round(math.log((documents + 1) / (n + 1)), 4) for w, n in frequency.items() if n >= min_count}
        return cls(documents, idf)

    def save(self, folder: Path) -> Path:
        path = Path(folder) / IDF_FILE
        path.write_text(json.dumps({"documents": self.documents, "idf": self.idf}, sort_keys=True), encoding="utf-8")
        return path

    @classmethod
    def load(cls, folder: Path) -> IdfTable | None:
        """The table in a CRM folder, or None when the folder has none (a CRM fitted before it existed)."""
        path = Path(folder) / IDF_FILE
        if not path.is_file():
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(int(data["documents"]), {str(k): float(v) for k, v in data["idf"].items()})

    def vector(self, text: str) -> dict[str, float]:
        """The unit-length sublinear TF-IDF vector of a text ({} for a text without words)."""
        vec = {w: (1 + math.log(n)) * self.idf.get(w, self.unseen) for w, n in Counter(words(text)).items()}
        norm = math.sqrt(sum(v * v for v in vec.values()))
        return {w: v / norm for w, v in vec.items()} if norm else {}


def lexical_similarity(texts: Sequence[str], references: Sequence[str | None], table: IdfTable) -> np.ndarray:
    """TF-IDF cosine of each text to its reference (0 without one); each distinct text is vectorised once."""
    vectors: dict[str, dict[str, float]] = {}

    def vector(text: str) -> dict[str, float]:
        if text not in vectors:
            vectors[text] = table.vector(text)
        return vectors[text]

    out = np.zeros(len(texts), np.float32)
    for i, (text, ref) in enumerate(zip(texts, references, strict=True)):
        if ref is not None and vector(ref):
            small, large = sorted((vector(text), vector(ref)), key=len)
            out[i] = sum(v * large.get(w, 0.0) for w, v in small.items())
    return out


def relative_length(texts: Sequence[str], references: Sequence[str | None]) -> np.ndarray:
    """tanh(log2((words + 1) / (reference words + 1))) per text (0 without a reference)."""
    ref_words = {r: len(words(r)) for r in dict.fromkeys(references) if r is not None}
    return np.array([math.tanh(math.log2((len(words(t)) + 1) / (ref_words[r] + 1))) if r is not None else 0.0
                     for t, r in zip(texts, references, strict=True)], dtype=np.float32)  # fmt: skip


def panel_means(texts: Sequence[str], panels: Sequence[Sequence[str]], signal, skip_own: bool = True) -> np.ndarray:
    """The mean of `signal(texts, references)` over each text's panel answers other than itself (an answer with the
    same text is the text's own: no answer is judged against itself); 0 where none is left. `signal` maps two
    equal-length lists to an array, as lexical_similarity and relative_length do. skip_own False keeps a text's
    own answer (how CRMs with a single `reference_model` were fitted and are still served)."""
    rows = [(i, ref) for i, (text, panel) in enumerate(zip(texts, panels, strict=True)) for ref in panel
            if ref != text or not skip_own]  # fmt: skip
    if not rows:
        return np.zeros(len(texts), np.float32)
    owner = np.array([i for i, _ in rows])
    values = signal([texts[i] for i in owner], [ref for _, ref in rows])
    total, count = np.zeros(len(texts)), np.zeros(len(texts))
    np.add.at(total, owner, values)
    np.add.at(count, owner, 1)
    return (total / np.maximum(count, 1)).astype(np.float32)


def reference_similarity(vecs: np.ndarray, references: Sequence[str | None], encode) -> np.ndarray:
    """Cosine of each response embedding to its reference answer's (0 where there is none); `encode` turns texts
    into unit vectors."""
    known = [r for r in dict.fromkeys(references) if r is not None]
    ref_vec = dict(zip(known, encode(known), strict=True)) if known else {}
    return np.array([float(v @ ref_vec[r]) if r is not None else 0.0 for v, r in zip(vecs, references, strict=True)],
                    dtype=np.float32)  # fmt: skip


def panel_similarity(vecs: np.ndarray, texts: Sequence[str], panels: Sequence[Sequence[str]], encode,
                     skip_own: bool = True) -> np.ndarray:  # fmt: skip
    """Mean cosine of each response embedding to its panel's answers other than itself (0 where none is left)."""
    known = list(dict.fromkeys(r for panel in panels for r in panel))
    ref_vec = dict(zip(known, encode(known), strict=True)) if known else {}
    vec_of = {t: v for t, v in zip(texts, vecs, strict=True)}

    def cosine(a: list[str], b: list[str]) -> np.ndarray:
        return np.array([float(vec_of[x] @ ref_vec[y]) for x, y in zip(a, b, strict=True)], dtype=np.float32)

    return panel_means(texts, panels, cosine, skip_own)
