"""A second reading of a criterion: by the training phrasings it sounds most like.

The compositional CRM's criteria reader (a re-tuned encoder layer and a small network) misreads some wordings it
never saw, e.g. it reads "Succinct answers" as a greeting. MiniLM's frozen sentence embedding knows which property
a sentence is about better than the re-tuned reader does, though not whether it asks for more or less (probe in
docs/experiments.md). The memory keeps that embedding for every training phrasing, labelled with its property and
direction (general phrasings such as "I'm a nurse." labelled as none), and overrides the reader's reading of a
sentence only when the nearest phrasings agree strongly on the property and the reader's strongest weight is on
another: then the sentence weighs that property, in the direction the reader gives it (or, where the reader gives
it none, the neighbours' majority), as the reader weighs training phrasings of that property (`magnitude`). A
sentence the memory holds itself (a training phrasing typed as written, up to case and a final stop) is read as
labelled, whatever its neighbours vote: "Don't write an essay." has bullets phrasings for neighbours.

The file (`phrasing_memory.npz` in the CRM folder) holds int8 unit vectors, their labels, a key of each text
(`text_key`), the magnitudes, the rule's settings as built (crm.json's serving settings `memory_*` choose the rule
it is served with: `with_rule`) and, where set, the readers' gain (a factor on their raw weight
per property and direction, for properties the fit weighed too weakly; CompositionalHeads applies it);
crm_train.compositional.memory builds it. A folder without one
reads criteria as before; a file without keys reads every sentence by the vote.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

MEMORY_FILE = "phrasing_memory.npz"
GENERAL = -1  # the label of a phrasing about no measured property


def text_key(text: str) -> int:
    """A phrasing's key: its text lower-cased, spaces collapsed and a final stop dropped, hashed to 64 bits."""
    norm = re.sub(r"\s+", " ", text.strip().lower()).rstrip(".!? ")
    return int(np.frombuffer(hashlib.blake2b(norm.encode(), digest_size=8).digest(), np.int64)[0])


def label_of(prop: int, sign: int) -> int:
    """One integer per (property index, direction): 2 x property, + 1 when it asks for more."""
    return 2 * prop + (sign > 0)


@dataclass
class PhrasingMemory:
    vectors: np.ndarray  # (n, d) int8: unit sentence embeddings x 127
    labels: np.ndarray  # (n,) label_of(...) or GENERAL
    magnitude: np.ndarray  # (properties, 2): the weight given on override, [less, more]
    neighbours: int = 10  # how many nearest phrasings vote
    agreement: float = 0.7  # the share of them that must agree on one property (general counts as one)
    similarity: float = 0.6  # the cosine the nearest one must reach
    keys: np.ndarray | None = None  # (n,) int64 text_key of each phrasing (None in files made before keys)
    # (properties, 2) the factor on the readers' raw weights, [less, more] (None: 1); the heads apply it
    # (CompositionalHeads.gain), and `magnitude` was measured with it (crm_train.compositional.memory.gained_memory)
    gain: np.ndarray | None = None
    # how many of the nearest phrasings about the voted property give the direction where the readers give none (0:
    # the vote's own neighbours): MiniLM's embedding tells the direction far less well than the property, so a
    # direction from a few neighbours is a coin toss ("Terse answers only.": 3 of its 5 nearest ask for more)
    direction_neighbours: int = 0
    _held: dict[int, int] | None = field(default=None, init=False, repr=False)
    _unit: np.ndarray | None = field(default=None, init=False, repr=False)

    def read(self, vector: np.ndarray) -> tuple[int, int] | None:
        """(property index, direction) when the nearest phrasings agree on one property, else None (also when they
        agree that the sentence is general); the direction is theirs by majority, or, with `direction_neighbours`, the
        majority of that many nearest phrasings about the property (0 when they split evenly).
        Defaults: chosen on development data (training/experiments/phrasing_memory_grid.py, docs/experiments.md)."""
        if self._unit is None:  # float32 once (30 MB for 20,000 phrasings): int8 would be upcast on every read
            self._unit = self.vectors.astype(np.float32) / 127.0
        cosine = self._unit @ np.asarray(vector, np.float32)
        nearest = np.argpartition(-cosine, self.neighbours - 1)[: self.neighbours]
        if float(cosine[nearest].max()) < self.similarity:
            return None
        labels = self.labels[nearest].astype(np.int64)
        props, counts = np.unique(np.where(labels == GENERAL, GENERAL, labels // 2), return_counts=True)
        best = int(props[np.argmax(counts)])
        if best == GENERAL or counts.max() < self.agreement * self.neighbours - 1e-6:  # 0.7 x 10 is 7.000...1 in floats
            return None
        about = labels[(labels != GENERAL) & (labels // 2 == best)]
        if self.direction_neighbours > 0:  # the nearest phrasings about that property, however many the vote held
            same = np.flatnonzero((self.labels != GENERAL) & (self.labels.astype(np.int64) // 2 == best))
            count = min(self.direction_neighbours, len(same))
            about = self.labels[same[np.argpartition(-cosine[same], count - 1)[:count]]].astype(np.int64)
        return best, int(np.sign(np.sum(np.where(about % 2 == 1, 1, -1))))

    def with_rule(self, neighbours: float = 0, agreement: float = 0.0, similarity: float = 0.0,
                  direction_neighbours: float = 0, magnitude_floor: float = 0.0) -> PhrasingMemory:  # fmt: skip
        """This memory read by another rule (each setting 0: this memory's own), sharing its vectors: the rule is a
        serving choice (crm.json's `memory_*`), made after the memory was built, and a 6 MB file need not change
        for it. `magnitude_floor`: no property's typical weight below it (a property the fit weighed weakly still
        moves a board when a wish is read as it)."""
        rule = (int(neighbours) or self.neighbours, agreement or self.agreement, similarity or self.similarity,
                int(direction_neighbours) or self.direction_neighbours)  # fmt: skip
        floored = magnitude_floor > 0 and bool(np.any(self.magnitude < magnitude_floor))
        if rule == (self.neighbours, self.agreement, self.similarity, self.direction_neighbours) and not floored:
            return self
        other = replace(self, neighbours=rule[0], agreement=rule[1], similarity=rule[2], direction_neighbours=rule[3])
        if floored:
            other.magnitude = np.maximum(self.magnitude, np.float32(magnitude_floor))
        other._unit, other._held = self._unit, self._held
        return other

    def held(self, text: str) -> tuple[int, int] | None:
        """(property index, direction) of the labelled phrasing that is this sentence, if the memory holds one."""
        if self.keys is None:
            return None
        if self._held is None:  # a key that two labels share is no answer
            labels: dict[int, set[int]] = {}
            for key, label in zip(self.keys.tolist(), self.labels.tolist(), strict=True):
                labels.setdefault(key, set()).add(label)
            self._held = {k: next(iter(v)) for k, v in labels.items() if len(v) == 1 and GENERAL not in v}
        label = self._held.get(text_key(text))
        return None if label is None else (label // 2, 1 if label % 2 else -1)

    def override(self, weights: np.ndarray, vector: np.ndarray, text: str | None = None) -> np.ndarray:
        """One criterion's property weights, replaced by the memory's reading where the nearest phrasings agree on
        a property and the reader's strongest weight is on another (or it gives none). The reader tells the
        direction better than the memory (docs/experiments.md): its sign on that property is kept where it has
        one, the neighbours' majority is taken where it has none. A sentence the memory holds (`text` given) is
        read as labelled."""
        held = self.held(text) if text is not None else None
        reading = held or self.read(vector)
        if reading is None:
            return weights
        prop, sign = reading
        strongest = int(np.argmax(np.abs(weights)))
        readers_sign = int(np.sign(weights[prop]))
        if weights[strongest] != 0 and strongest == prop and (held is None or readers_sign == sign):
            return weights
        if held is None:  # a vote's direction only where the readers give the property none
            sign = readers_sign or sign
        if sign == 0:
            return weights
        out = np.zeros_like(weights)
        out[prop] = sign * self.magnitude[prop, int(sign > 0)]
        return out

    def at_strength(self, weights: np.ndarray, strength: float, lift_from: float = 0.0,
                    lift_share: float = 0.0) -> np.ndarray:  # fmt: skip
        """One criterion's property weights, scaled so that the strongest is `strength` x the readers' weight for
        training phrasings of its property and direction (`magnitude`), the others in proportion: how much a soft
        criterion weighs is then one setting, not an accident of wording. An `unsure` reading is left as read."""
        read, target, total = self._measure(weights, strength)
        if read == 0 or _unsure(read, target, total, lift_from, lift_share):
            return weights
        return weights * (target / read)

    def unsure(self, weights: np.ndarray, strength: float, lift_from: float = 0.0, lift_share: float = 0.0) -> bool:
        """A reading that `at_strength` would lift, were it sure of itself: its strongest weight under the strength
        and under `lift_from`, or under `lift_share` of its total weight (a stray weight, or one spread over several
        properties: "A thorough, blow-by-blow treatment" read as refusal 0.65, apology 0.45, summary 0.4 must not
        become refusal 3). No reading at all is not unsure. The same answer for a reading and for what
        `at_strength` makes of it, so the app can tell a visitor which sentences count only as read."""
        return _unsure(*self._measure(weights, strength), lift_from, lift_share)

    def _measure(self, weights: np.ndarray, strength: float) -> tuple[float, float, float]:
        """(strongest |weight|, the weight `strength` gives its property and direction, total |weight|)."""
        magnitudes = np.abs(weights)
        if not magnitudes.any():
            return 0.0, 0.0, 0.0
        k = int(np.argmax(magnitudes))
        return float(magnitudes[k]), strength * float(self.magnitude[k, int(weights[k] > 0)]), float(magnitudes.sum())

    def save(self, folder: str | Path) -> Path:
        """Written whole or not at all (a temporary file, then renamed)."""
        path = Path(folder) / MEMORY_FILE
        partial = path.with_name(path.name + ".partial")
        settings = np.array([self.neighbours, self.agreement, self.similarity], np.float32)
        arrays = {"vectors": self.vectors, "labels": self.labels, "magnitude": self.magnitude, "settings": settings}
        if self.keys is not None:
            arrays["keys"] = self.keys
        if self.gain is not None:
            arrays["gain"] = self.gain
        with open(partial, "wb") as handle:
            np.savez_compressed(handle, allow_pickle=False, **arrays)
        os.replace(partial, path)
        return path

    @classmethod
    def load(cls, folder: str | Path) -> PhrasingMemory | None:
        path = Path(folder) / MEMORY_FILE
        if not path.is_file():
            return None
        with np.load(path, allow_pickle=False) as data:
            neighbours, agreement, similarity = (float(x) for x in data["settings"])
            keys = data["keys"] if "keys" in data.files else None
            gain = data["gain"].astype(np.float32) if "gain" in data.files else None
            return cls(data["vectors"], data["labels"], data["magnitude"].astype(np.float32), int(neighbours),
                       agreement, similarity, keys, gain)  # fmt: skip


def _unsure(read: float, target: float, total: float, lift_from: float, lift_share: float) -> bool:
    if read == 0 or read >= target - 1e-6:  # nothing read, or at (or above) the strength already
        return False
    return read < lift_from or read < lift_share * total


def quantize(unit_vectors: np.ndarray) -> np.ndarray:
    """Unit vectors as int8 (x 127): a quarter of float32's size, cosines within ~1%."""
    return np.clip(np.round(np.asarray(unit_vectors, np.float32) * 127), -127, 127).astype(np.int8)
