"""The compositional CRM's small networks, in NumPy: the quality term, the criteria readers' heads and the voice
(`CompositionalHeads`), and the two sides a score is made of: `ResponseSide` (criteria-free, computed once per
response) and `CriteriaSide` (what a criteria set contributes). crm_core.compositional.scorer reads a CRM folder into
them; crm_train.compositional fits them.

The heads may hold several criteria fits ("members"): the first at the top level, the others under `member<m>.`
(`member_prefix`), each with its own head, gate, voice projection and re-tuned encoder layer (`criteria_layers.*`,
which the criteria encoder reads, not these heads).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from crm_core.compositional.cues import family, questions_are_the_visitors, read_cues
from crm_core.compositional.memory import PhrasingMemory
from crm_core.compositional.serving import ServingConfig
from crm_core.properties import NAMES

CRITERIA_LAYERS = "criteria_layers."
QUALITY_LAYERS = "quality_layers."  # encoder layers fine-tuned for the quality term (training/gpu), when present
MEMBER_KEYS = ("criteria.", "voice_proj", "form_gate.", CRITERIA_LAYERS)  # what each criteria fit has of its own
REFERENCE_WEIGHTS = ("refsim_weight", "lexsim_weight", "length_weight")


def member_prefix(member: int) -> str:
    """Where criteria fit `member` keeps its parameters in the heads: the first at the top level (as a CRM with one
    fit), the others under `member<m>.`."""
    return f"member{member}." if member else ""


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))


def mlp(params: dict[str, np.ndarray], prefix: str, x: np.ndarray) -> np.ndarray:
    """Linear layers `prefix.0`, `prefix.1`, ... with GELU between them (weights (out, in), as torch stores them)."""
    layer = 0
    while f"{prefix}.{layer}.weight" in params:
        if layer:
            x = _gelu(x)
        x = x @ params[f"{prefix}.{layer}.weight"].T + params[f"{prefix}.{layer}.bias"]
        layer += 1
    return x


def quality_input(query_vec: np.ndarray, response_vec: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The quality network's input rows: response embedding, its product with the query's, scaled properties.
    Training (crm_train.compositional.train) builds them with this same function."""
    return np.concatenate([response_vec, query_vec * response_vec, z], axis=1).astype(np.float32)


@dataclass
class ResponseSide:
    """Everything the score needs from a set of responses, criteria-free: computed once per bench."""

    z: np.ndarray  # (n, K) properties / spread (not centred)
    quality: np.ndarray  # (n,)
    voice: np.ndarray  # (n, R) projected embeddings

    def log_words(self, spread: np.ndarray) -> np.ndarray:
        """log2(1 + words) of each response (the words property, unscaled): what judged_logit's length gap reads."""
        words = NAMES.index("words")
        return self.z[:, words] * float(spread[words])


@dataclass
class CriteriaSide:
    """What a criteria set contributes: weights per property and the voice vector."""

    weights: np.ndarray  # (K,)
    voice: np.ndarray  # (R,)

    def explain(self, top: int = 5, threshold: float = 0.25) -> list[tuple[str, float]]:
        """The largest property weights, e.g. [("emoji", -2.1), ("headings", 0.4)]."""
        order = np.argsort(-np.abs(self.weights))[:top]
        return [(NAMES[k], round(float(self.weights[k]), 2)) for k in order if abs(self.weights[k]) >= threshold]


class CompositionalHeads:
    """The small networks of the CRM, in NumPy: quality, criteria weights and voice.

    The serving settings (`serving`, crm_core.compositional.serving) say how criteria are read. Two of them
    (`weight_threshold` and `voice_threshold`) keep a criterion from
    moving what it does not speak about: each criterion's property weights are soft-thresholded (|w| - threshold,
    0 below it: the small weights a sentence gives properties it never mentions go), and so is the length of its
    voice vector (a domain or tone criterion has a voice ten times longer than a general one such as "I'm a nurse").
    Heads fitted with a form gate (`form_gate.*`) also drop all property weights of a criterion whose gate logit is
    below `form_gate_cut`: one the gate reads as general (who the user is, what it is for, "be accurate").
    `weight_scale` multiplies the property weights that survive: how far a typed criterion may outweigh quality.

    Heads may hold several criteria fits (`member_prefix`), each with its own head, gate, voice projection and
    re-tuned layer: their raw weights and gate logits are averaged before the cut, so a weight that one fit gives
    by chance and the others do not falls under it; their voices stand side by side (`rank` is the sum), each
    counted 1 / members.

    With a `memory` (crm_core.compositional.memory), a criterion whose sentence embedding sits among training
    phrasings that agree on one property weighs that property, where the readers weigh another one most; a memory
    with a `gain` multiplies the readers' raw weight for the property a sentence is most about first (a property
    the fit weighed too weakly to move a board).

    `soft_strength` (with a memory, which knows how the readers weigh training phrasings of each property) sets
    how much a soft criterion weighs: the reader says what a sentence asks for and which way, and its strongest
    weight becomes soft_strength x the readers' weight for training phrasings of that property and direction, so
    "Terse answers only." and "I want compact replies." count the same. A reading weaker than `lift_from`, or whose
    strongest weight holds less than `lift_share` of its total, is not lifted (a stray or diffuse weight is not made
    strong). 0: as read.
    """

    def __init__(self, params: dict[str, np.ndarray], serving: ServingConfig, memory: PhrasingMemory | None = None):
        self.params = {k: np.asarray(v, dtype=np.float32) for k, v in params.items()
                       if CRITERIA_LAYERS not in k and not k.startswith(QUALITY_LAYERS)}  # fmt: skip
        self.members = [member_params(self.params, m) for m in range(count_members(self.params))]
        self.spread = self.params["spread"]
        self.rank = sum(m["voice_proj"].shape[0] for m in self.members)
        self.serving = serving
        self.memory = memory
        self._ruled: tuple | None = None  # (memory, rule, that memory under the rule), made once per pair
        # each property's factor on the readers' raw weights, [less, more] (the memory file's `gain`; None: 1): kept
        # when the memory is set aside, since it is part of how the readers read (crm_train's gained_memory measures
        # the readers' weights with it and without the memory)
        self.gain = memory.gain[: len(self.spread)] if memory is not None and memory.gain is not None else None
        # the reference signals' weights: fitted ones from the heads, unless crm.json gives others
        self.reference_weights = {k: float(self.params[k][0]) for k in REFERENCE_WEIGHTS if k in self.params}

    def response_side(self, query_vec: np.ndarray, response_vec: np.ndarray, phi: np.ndarray,
                      refsim: np.ndarray | None = None, lexsim: np.ndarray | None = None,
                      rel_length: np.ndarray | None = None,
                      quality_vecs: tuple[np.ndarray, np.ndarray] | None = None) -> ResponseSide:  # fmt: skip
        """`refsim`, `lexsim`, `rel_length`: the reference-guided signals (0 where a response has no reference);
        each weighs in with the heads' weight for it (`reference_weights` replaces those). `quality_vecs`: (query,
        response) vectors of the encoder tuned for quality, which the quality term reads instead of the frozen
        ones (heads with `quality_layers.*`; the voice always reads the frozen response vectors). `phi` may hold
        properties added after these heads were fitted: they read the first K (properties are only ever appended)."""
        z = (phi[:, : len(self.spread)] / self.spread).astype(np.float32)
        q_vec, r_vec = quality_vecs if quality_vecs is not None else (query_vec, response_vec)
        quality = mlp(self.params, "quality", quality_input(q_vec, r_vec, z))[:, 0]
        for signal, name in ((refsim, "refsim_weight"), (lexsim, "lexsim_weight"), (rel_length, "length_weight")):
            weight = self.reference_weights.get(name)
            if signal is not None and weight is not None:
                quality = quality + weight * signal
        voice = np.concatenate([response_vec @ m["voice_proj"].T for m in self.members], axis=1)
        return ResponseSide(z, quality.astype(np.float64), voice)

    @property
    def ruled_memory(self) -> PhrasingMemory | None:
        """The phrasing memory under the serving settings' rule (`memory_*`; 0: the file's own), shared until the
        memory or the rule changes (an experiment may replace either)."""
        memory, serving = self.memory, self.serving
        if memory is None:
            return None
        rule = (serving.memory_neighbours, serving.memory_agreement, serving.memory_similarity,
                serving.memory_direction_neighbours, serving.memory_magnitude_floor)  # fmt: skip
        ruled = self._ruled
        if ruled is None or ruled[0] is not memory or ruled[1] != rule:
            ruled = self._ruled = (memory, rule, memory.with_rule(*rule))
        return ruled[2]

    def criteria_side(self, criteria_vecs: np.ndarray | Sequence[np.ndarray], sentence_vecs: np.ndarray | None = None,
                      soft: bool = False, texts: Sequence[str] | None = None) -> CriteriaSide:  # fmt: skip
        """`criteria_vecs`: (criteria, 384) embeddings, one array per member (one array alone for one member), each
        from that member's criteria encoder; `sentence_vecs`: (criteria, 384) the response encoder's embeddings of
        the same sentences, which the memory reads (ignored without one); `soft`: the sentences are soft criteria,
        weighed at `soft_strength`; `texts`: the sentences themselves, so the memory reads one it holds as labelled."""
        per_member = [criteria_vecs] if isinstance(criteria_vecs, np.ndarray) else list(criteria_vecs)
        if len(per_member) != len(self.members):
            raise ValueError(f"the heads hold {len(self.members)} criteria fits; got embeddings for {len(per_member)}")
        k = len(self.spread)
        if not len(per_member[0]):
            return CriteriaSide(np.zeros(k, np.float32), np.zeros(self.rank, np.float32))
        outs = [mlp(m, "criteria", vecs) for m, vecs in zip(self.members, per_member, strict=True)]
        raw = np.mean([out[:, :k] for out in outs], axis=0)  # one row per criterion
        if self.gain is not None:  # before the threshold: a weak property's reading must survive it
            gained = raw * self.gain[np.arange(k), (raw > 0).astype(np.int64)]
            top = np.argmax(np.abs(gained), axis=1)  # only what the sentence is most about: strays stay as read
            rows = np.arange(len(raw))
            raw = raw.copy()
            raw[rows, top] = gained[rows, top]
        serving = self.serving
        weights = np.sign(raw) * np.maximum(np.abs(raw) - serving.weight_threshold, 0.0) * serving.weight_scale
        if "form_gate.0.weight" in self.members[0]:  # a criterion the gate reads as general moves no property
            logit = np.mean([mlp(m, "form_gate", v) for m, v in zip(self.members, per_member, strict=True)], axis=0)
            weights = weights * (logit >= serving.form_gate_cut)
        memory = self.ruled_memory
        if memory is not None and sentence_vecs is not None:
            said = texts if texts is not None else [None] * len(weights)
            weights = np.stack([memory.override(w, v, t)
                                for w, v, t in zip(weights, sentence_vecs, said, strict=True)])  # fmt: skip
        if memory is not None and texts is not None and serving.cue_reader > 0:
            weights = np.stack([self._cue_read(_not_questions_back(w, t), t, memory, soft)
                                for w, t in zip(weights, texts, strict=True)])  # fmt: skip
        if soft and memory is not None and serving.soft_strength > 0:
            weights = np.stack([memory.at_strength(w, serving.soft_strength, serving.lift_from,
                                                   serving.lift_share) for w in weights])  # fmt: skip
        voices = []
        for out in outs:
            length = np.linalg.norm(out[:, k:], axis=1, keepdims=True)
            voices.append(out[:, k:] * np.maximum(length - serving.voice_threshold, 0.0) / np.maximum(length, 1e-12))
        voice = np.concatenate(voices, axis=1).sum(axis=0) / len(self.members)
        return CriteriaSide(weights.sum(axis=0), voice)

    def _cue_read(self, weights: np.ndarray, text: str, memory: PhrasingMemory, soft: bool) -> np.ndarray:
        """One criterion's weights, replaced by what its words ask for (cues.read_cues) where the readers and the
        memory read nothing, are unsure (a soft sentence), or (cue_reader 2) read a sure property outside the cue's
        family or the cue's property the other way; at the memory's typical weight, as its own override gives."""
        cue = read_cues(text)
        if cue is None or NAMES.index(cue.prop) >= len(weights):
            return weights
        k = NAMES.index(cue.prop)
        strongest = int(np.argmax(np.abs(weights)))
        read = weights[strongest] != 0
        unsure = soft and self.unsure(weights)
        agrees = NAMES[strongest] in family(cue.prop) and np.sign(weights[strongest]) == cue.sign
        if read and not unsure and (agrees or self.serving.cue_reader < 2):
            return weights
        if agrees:  # unsure, but within the family and the cue's way: the readers' own choice, made sure
            k = strongest
        out = np.zeros_like(weights)
        out[k] = cue.sign * memory.magnitude[k, int(cue.sign > 0)]
        return out

    def unsure(self, soft_weights: np.ndarray) -> bool:
        """A soft sentence's served weights that were left as read because the reading was weak or spread over
        several properties (PhrasingMemory.unsure): it counts only weakly; False when no strength is set."""
        serving, memory = self.serving, self.ruled_memory  # the memory as served: its floor sets the strength's target
        if memory is None or serving.soft_strength <= 0:
            return False
        return memory.unsure(soft_weights, serving.soft_strength, serving.lift_from, serving.lift_share)

    @staticmethod
    def scores(side: ResponseSide, crit: CriteriaSide, with_quality: bool = True) -> np.ndarray:
        score = side.z @ crit.weights + side.voice @ crit.voice
        return score + side.quality if with_quality else score.astype(np.float64)


def _not_questions_back(weights: np.ndarray, text: str) -> np.ndarray:
    """One criterion's weights without questions back where it speaks only of the visitor's own questions
    (cues.questions_are_the_visitors): read as its strongest property, the word "questions" misled the readers, and
    what else they read of it goes too; read as a stray, that weight alone goes."""
    k = NAMES.index("question_back")
    if k >= len(weights) or not weights[k] or not questions_are_the_visitors(text):
        return weights
    out = np.zeros_like(weights)
    if int(np.argmax(np.abs(weights))) != k:
        out[:] = weights
        out[k] = 0.0
    return out


def count_members(params: dict[str, np.ndarray]) -> int:
    """How many criteria fits the heads hold (1 for heads made before there could be more)."""
    n = 1
    while f"{member_prefix(n)}voice_proj" in params:
        n += 1
    return n


def member_params(params: dict[str, np.ndarray], member: int) -> dict[str, np.ndarray]:
    """Criteria fit `member`'s own parameters, named as in a CRM with one fit."""
    prefix = member_prefix(member)
    return {k.removeprefix(prefix): v for k, v in params.items()
            if k.startswith(prefix) and k.removeprefix(prefix).startswith(MEMBER_KEYS)}  # fmt: skip
