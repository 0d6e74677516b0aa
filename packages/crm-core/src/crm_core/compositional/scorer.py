"""The compositional CRM: score(c, q, r) = quality(q, r) + sum_k w_k(c) z_k(q, r) + voice(c, q, r).

- z: the measured properties of the whole response (crm_core.properties), divided by their spread on the
  training answers (and centred per query where a query has several responses; centring cancels in every
  comparison).
- w(c): signed weights a small network reads from each criterion's sentence embedding, summed over criteria and
  dislikes (a dislike "X" is read as "I dislike X."). Criteria are split into sentences first, so "No emojis.
  Use headings." is two criteria. The criteria embedding comes from the same encoder with its top layer re-tuned
  on the criteria task (heads' `criteria_layers.*`): a frozen sentence embedding barely separates "I like X"
  from "I dislike X".
- voice(c, q, r) = u(c) . P e(r): the fit of the response's embedding to the criteria's voice (domain, tone,
  audience), a low-rank bilinear form.
- quality(q, r): a criteria-free preference read from the response and query embeddings, the properties and,
  where the bench has answers of the reference panel (crm.json `reference_models`, several strong models) to the
  query, the response's mean similarity to those answers other than its own (embedding cosine; lexical TF-IDF
  cosine and relative length over the whole text, crm_core.compositional.reference). No answer is compared with
  itself and no single model is the reference, so no model on a board is favoured by construction. With crm.json's
  `nonanswer_penalty`, a response that refuses, evades or echoes the prompt, or is cut far shorter than the bench's
  other answers to it (crm_core.nonanswer), loses that much.
A pair is judged by crm_core.compositional.judging.judged_logit: criteria tune quality, they do not replace it.
Everything about (q, r) is computed once per response; a new criteria set costs one encoding of each criterion,
so a leaderboard over every stored response is arithmetic. The folder: crm.json (kind "compositional"), heads
.safetensors (the small networks, run in NumPy by crm_core.compositional.heads, and the re-tuned layer), encoder/
(MiniLM, float16 weights; crm_core.encoder) and, once exported, onnx/ (crm_core.compositional.onnx). With
$USL_EMBEDDINGS set to an embedding store, response vectors already in it are reused.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from crm_core.compositional.cues import (
    about_the_visitor,
    framed_core,
    liked_core,
    liked_reply,
    read_cues,
    reads_across,
    written_in,
)
from crm_core.compositional.heads import (
    CRITERIA_LAYERS,
    QUALITY_LAYERS,
    CompositionalHeads,
    CriteriaSide,
    ResponseSide,
    member_params,
)
from crm_core.compositional.judging import judged_logit
from crm_core.compositional.memory import PhrasingMemory
from crm_core.compositional.onnx import OnnxPartsEncoder, has_parts
from crm_core.compositional.reference import (
    IDF_FILE,
    IdfTable,
    lexical_similarity,
    panel_means,
    panel_similarity,
    relative_length,
)
from crm_core.compositional.serving import ServingConfig
from crm_core.encoder import ENCODER_DIR, EmbeddingStore, TextEncoder
from crm_core.nonanswer import VERSION as NONANSWER_VERSION
from crm_core.nonanswer import cut_short, echoes
from crm_core.properties import NAMES, measure_many
from crm_core.properties import VERSION as PROPERTIES_VERSION
from crm_core.spec import CRMSpec, Pair, PairScores

HEADS_FILE = "heads.safetensors"
SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


REPLY_WORDS = 3  # a sentence this short after a question answers it ("Emojis? No thanks."): read with it


def _reads_with(before: str, piece: str) -> bool:
    """Whether `piece` is read together with the sentence before it: a short reply to a question ("Emojis? No
    thanks."), or, after a semicolon, a short clause about what it names ("... machine prose a mile away; avoid
    it.", "No stalling; deliver.") or one whose language only the clause before says is the question's ("I write in
    Finnish; answers in English, please.")."""
    if before.endswith("?"):
        return len(piece.split()) <= REPLY_WORDS or liked_reply(piece)  # "Emoji? The more the merrier."
    if before.endswith(";"):
        return len(piece.split()) <= REPLY_WORDS or reads_across(before, piece)
    return False


def split_criteria(criteria: Sequence[str], dislikes: Sequence[str] = ()) -> list[str]:
    """One string per stated preference: criteria split into sentences (a short reply kept with the sentence it
    answers: "Emojis?" alone reads as liking them; `_reads_with`), dislikes as 'I dislike X.'."""
    out: list[str] = []
    for criterion in criteria:
        start = len(out)
        for piece in (s.strip() for s in SENTENCE.split(criterion)):
            if piece and len(out) > start and _reads_with(out[-1], piece):
                out[-1] = f"{out[-1]} {piece}"
            elif piece:
                out.append(piece)
    out += [f"I dislike {d.strip().rstrip('.')}." for d in dislikes if d.strip()]
    return out


MUST = re.compile(r"\b(must|never|always)\b", re.IGNORECASE)


def is_must(sentence: str) -> bool:
    """A stated preference the visitor makes a hard requirement ("must", "never", "always" in the sentence)."""
    return bool(MUST.search(sentence))


def quality_encoder(folder: Path, params: dict[str, np.ndarray], threads: int | None = None) -> TextEncoder | None:
    """The encoder the quality term reads when the heads carry fine-tuned layers (`quality_layers.<index>.*`, made
    by training/gpu/quality_encoder.py): the folder's MiniLM with those layers replaced, under an identity of its
    own (a digest of the tuned layers) so an embedding store keeps its vectors apart; None without such layers."""
    layers = {k.removeprefix(QUALITY_LAYERS): v for k, v in params.items() if k.startswith(QUALITY_LAYERS)}
    if not layers:
        return None
    digest = hashlib.sha256()
    for key in sorted(layers):
        digest.update(key.encode())
        digest.update(np.ascontiguousarray(layers[key], dtype=np.float32).tobytes())
    tuned = TextEncoder(folder / ENCODER_DIR, threads=threads).with_layers(layers)
    tuned.identity = f"{tuned.identity.split('-tuned')[0]}-quality-{digest.hexdigest()[:12]}"
    return tuned


FULL_WEIGHT = tuple(NAMES.index(name) for name in ("nonanswer", "other_language"))  # counted as musts are
# a wish in another language read at least this strongly is kept: it shares its key word with English and the memory
# knows it ("Keine Emojis bitte.": emoji -3.0); the rest read as noise (under 0.5 on development.toml's
# foreign_wishes) and are left out
FOREIGN_KEEP = 1.0


@dataclass(frozen=True)
class CriteriaReading:
    """What the CRM read in a criteria set (CompositionalScorer.reading): the board carries it, the app shows it."""

    weights: list[tuple[str, float]]  # the largest property weights of the whole set, e.g. [("emoji", -2.1)]
    ignored: list[str]  # sentences read as nothing the CRM measures: the board (nearly) ignores them
    unsure: list[tuple[str, list[tuple[str, float]]]]  # soft sentences read weakly or diffusely, with the guess
    properties: int  # how many properties the CRM measures (NAMES[:properties])
    declining_wins: bool = False  # read as a clear wish for caution: a declining answer beats one that complies
    # sentences written in another language than English (cues.written_in), with its code: left out, not misread
    foreign: list[tuple[str, str]] = field(default_factory=list)
    # sentences that only say who the visitor is ("I'm a nurse.", cues.about_the_visitor): voice only, no property
    context: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"weights": dict(self.weights), "ignored": self.ignored,
                "unsure": [{"sentence": s, "read": dict(read)} for s, read in self.unsure],
                "declining_wins": self.declining_wins,
                "foreign": [{"sentence": s, "language": code} for s, code in self.foreign],
                "context": self.context}  # fmt: skip


def liked(whole: np.ndarray, core: np.ndarray) -> np.ndarray:
    """A wish framed as wanted through a negating idiom (cues.liked_core): its core's reading as it stands (`core`:
    the thing read as a liking); the sentence as read (`whole`) where the core reads as nothing."""
    return core if np.any(core) else whole


def turned(whole: np.ndarray, core: np.ndarray, mode: float) -> np.ndarray:
    """A negatively framed wish's weights (`whole`: the sentence as read) from its core's reading (`core`: the thing
    it names, read alone; cues.framed_core): mode 1 turns the strongest property's sign where the sentence was read
    as the thing itself (same property, same sign as the core); mode 2 takes the core's reading, turned. Unchanged
    where the core reads as nothing."""
    if not np.any(core):
        return whole
    if mode >= 2:
        return -core
    k = int(np.argmax(np.abs(core)))
    out = whole.copy()
    if int(np.argmax(np.abs(whole))) == k and np.sign(whole[k]) == np.sign(core[k]):
        out[k] = -out[k]
    return out


def criteria_encoder(encoder: TextEncoder, params: dict[str, np.ndarray]) -> TextEncoder:
    """The encoder that reads criteria: the response encoder with its top layers replaced by the fitted ones
    (`criteria_layers.<index>.*` in the heads), or the response encoder itself when none were fitted."""
    layers = {k.removeprefix(CRITERIA_LAYERS): v for k, v in params.items() if k.startswith(CRITERIA_LAYERS)}
    return encoder.with_layers(layers) if layers else encoder


class CompositionalScorer:
    """A compositional CRM folder: a crm_core.spec.Scorer (pointwise), plus the instant path's calls (response_side,
    criteria_sides)."""

    weights_file = HEADS_FILE

    def __init__(self, folder: str | Path, threads: int | None = None, backend: str = "torch"):
        """backend 'onnx' runs the encoders through the folder's ONNX export (crm_core.compositional.onnx),
        'auto' does so when the folder has one."""
        from safetensors.numpy import load

        self.folder = Path(folder)
        self.spec = CRMSpec.load(self.folder)
        if self.spec.kind != "compositional":
            raise ValueError(f"{folder}: crm.json kind is {self.spec.kind!r}, not 'compositional'")
        heads_bytes = (self.folder / HEADS_FILE).read_bytes()  # read once: the weights and the digest below
        params = load(heads_bytes)
        serving = ServingConfig.from_extra(self.spec.extra, self.folder)
        fitted_with = self.spec.extra.get("properties", list(NAMES[: len(params["spread"])]))
        if list(fitted_with) != list(NAMES[: len(fitted_with)]) or len(fitted_with) != len(params["spread"]):
            raise ValueError(f"{self.folder / 'crm.json'}: extra.properties: expected the first "
                             f"{len(params['spread'])} of {list(NAMES)}, got {fitted_with!r}")  # fmt: skip
        self.heads = CompositionalHeads(params, serving, PhrasingMemory.load(self.folder))
        self.heads.reference_weights.update(self.spec.extra.get("reference_weights", {}))
        if backend == "auto":
            backend = "onnx" if has_parts(self.folder) else "torch"
        if backend not in ("torch", "onnx"):
            raise ValueError(f"backend must be 'torch', 'onnx' or 'auto', got {backend!r}")
        self.backend = backend
        self.encoder: OnnxPartsEncoder | TextEncoder
        if backend == "onnx":
            self.encoder = OnnxPartsEncoder(self.folder, threads=threads)
            if self.encoder.meta["fits"] != len(self.heads.members):
                raise ValueError(f"{folder}: the ONNX export reads criteria for {self.encoder.meta['fits']} fits, the "
                                 f"heads hold {len(self.heads.members)}; export this folder again")  # fmt: skip
        else:
            self.encoder = TextEncoder(self.folder / ENCODER_DIR, threads=threads)
        self.criteria_encoders: list[TextEncoder] = []  # criteria read by PyTorch (all but a float32 ONNX export)
        if isinstance(self.encoder, TextEncoder) or not self.encoder.reads_criteria:
            base = (
                self.encoder
                if isinstance(self.encoder, TextEncoder)
                else TextEncoder(self.folder / ENCODER_DIR, threads=threads)
            )
            self.criteria_encoders = [criteria_encoder(base, member_params(params, m))
                                      for m in range(len(self.heads.members))]  # fmt: skip
            self.criteria_encoder = self.criteria_encoders[0]
        store = os.environ.get("USL_EMBEDDINGS")  # an embedding store (crm_core.encoder) shared with training
        self.store = EmbeddingStore(store, self.encoder) if store else None
        self.quality_encoder = quality_encoder(self.folder, params, threads)
        self.quality_store = (EmbeddingStore(store, self.quality_encoder)
                              if store and self.quality_encoder is not None else None)  # fmt: skip
        # the reference panel; CRMs made before it had one reference model (its own answers then compared with
        # themselves: the bias the panel removes)
        extra = self.spec.extra
        panel = extra.get("reference_models") or list(filter(None, [extra.get("reference_model")]))
        if not isinstance(panel, list) or not all(isinstance(m, str) and m for m in panel):
            raise ValueError(f"{self.folder / 'crm.json'}: extra.reference_models: expected a list of model names, "
                             f"got {panel!r:.80}")  # fmt: skip
        self.reference_models = list(panel)
        self.skip_own_reference = "reference_models" in extra
        self.idf = IdfTable.load(self.folder)  # lexical similarity to the reference (crm_core.compositional.reference)
        # what a response's side depends on (heads, encoder, reference model and IDF table), not the serving
        # settings: a saved bench table survives a change of those
        digest = hashlib.sha256(heads_bytes)
        digest.update((self.folder / ENCODER_DIR / "encoder.json").read_bytes())
        digest.update(json.dumps([self.reference_models, self.heads.reference_weights, self.skip_own_reference],
                                 sort_keys=True).encode())  # fmt: skip
        if self.idf is not None:
            digest.update((self.folder / IDF_FILE).read_bytes())
        if backend == "onnx":  # its vectors are not PyTorch's (int8 ones, by a few percent)
            digest.update(self.encoder.identity.encode())
        self._side_digest = digest.hexdigest()[:20]
        self._criteria_cache = lru_cache(maxsize=4096)(self._encode_one_criterion)
        self._sentence_cache = lru_cache(maxsize=4096)(lambda text: self.encoder.encode([text])[0])

    @property
    def serving(self) -> ServingConfig:
        """The serving settings (crm_core.compositional.serving), held by the heads, which read half of them."""
        return self.heads.serving

    @serving.setter
    def serving(self, serving: ServingConfig) -> None:
        self.heads.serving = serving

    @property
    def identity(self) -> str:
        return self.encoder.identity

    @property
    def response_side_id(self) -> str:
        """What a response's side depends on (heads, encoder, reference panel and IDF table, the properties' code
        and the non-answer penalty, which is part of quality), not the other serving settings: a saved bench table
        survives a change of those. Read at each use, so a penalty changed after loading keys its own tables."""
        measured = f"{self._side_digest}-properties{PROPERTIES_VERSION}"
        if not self.serving.nonanswer_penalty:
            return measured
        cut = f"-cut{self.serving.cut_short_doublings:g}" if self.serving.cut_short_doublings > 0 else ""
        return f"{measured}-nonanswer{self.serving.nonanswer_penalty:g}v{NONANSWER_VERSION}{cut}"

    def _encode_one_criterion(self, text: str) -> np.ndarray:
        """(members, 384): the sentence as each criteria fit's encoder reads it."""
        if not self.criteria_encoders and isinstance(self.encoder, OnnxPartsEncoder):  # its readers graph
            return self.encoder.read_criteria([text])[0]
        return np.stack([encoder.encode([text])[0] for encoder in self.criteria_encoders])

    def criteria_side(self, criteria: Sequence[str], dislikes: Sequence[str] = ()) -> CriteriaSide:
        """The criteria's weights and voice, every sentence counted (soft and must); each sentence's embeddings are
        cached."""
        soft, must = self.criteria_sides(criteria, dislikes)
        return CriteriaSide(soft.weights + must.weights, soft.voice + must.voice)

    def criteria_sides(self, criteria: Sequence[str], dislikes: Sequence[str] = ()) -> tuple[CriteriaSide, ...]:
        """(soft, must): the sentences that tune quality, and those the visitor made hard requirements (is_must).
        A soft sentence's weights on FULL_WEIGHT properties join the must side: a wish for compliance or caution, or
        to be answered in one's own language, redefines what counts as an answer for this visitor, so the gate
        that keeps a style wish from lifting a clearly worse answer does not fade it."""
        return self._declining_welcome(*self._sides(criteria, dislikes))

    def _sides(self, criteria: Sequence[str], dislikes: Sequence[str] = ()) -> tuple[CriteriaSide, CriteriaSide]:
        """criteria_sides before the caution give-back; a sentence in another language read as noise is left out
        (`left_out`), and one that only says who the visitor is gives its voice alone (`context`)."""
        texts = [t for t in split_criteria(criteria, dislikes) if self.left_out(t) is None]
        context = [t for t in texts if self.context(t)]  # who the visitor is: its voice (tone, domain), no property
        wishes = [t for t in texts if t not in context]
        soft, must = (
            self._side([t for t in wishes if not is_must(t)], True),
            self._side([t for t in wishes if is_must(t)]),
        )
        if context:
            soft = CriteriaSide(soft.weights, soft.voice + self._side(context, True).voice)
        full = [k for k in FULL_WEIGHT if k < len(soft.weights) and soft.weights[k]]
        if full:  # whether an answer answers, and in the asker's language, is not a style quality may overrule
            soft, must = CriteriaSide(soft.weights.copy(), soft.voice), CriteriaSide(must.weights.copy(), must.voice)
            must.weights[full] += soft.weights[full]
            soft.weights[full] = 0.0
        return soft, must

    def left_out(self, sentence: str) -> str | None:
        """The language of a sentence the reading leaves out: written in another language than English
        (cues.written_in), which the readers, reading English, read as noise, unless the word lists read it (they
        know a few Finnish and Chinese wishes: "Vastaa suomeksi.", "不要拒绝") or the readers read it strongly
        (FOREIGN_KEEP); None for a sentence read."""
        language = written_in(sentence)
        if language is None or (self.serving.cue_reader > 0 and read_cues(sentence) is not None):
            return None
        weights = self._side([sentence], soft=not is_must(sentence)).weights
        return language if np.abs(weights).max(initial=0.0) < FOREIGN_KEEP else None

    def context(self, sentence: str) -> bool:
        """Whether a sentence is context, not a wish: it only says who the visitor is or what they do
        (cues.about_the_visitor; served with the word lists). Its voice (tone and domain, "I'm a lawyer.") counts;
        the property weights the readers read in it are strays ("I'm writing a lyrical essay." as fewer bullets)."""
        return self.serving.cue_reader > 0 and about_the_visitor(sentence)

    def welcomes_declining(self, soft: CriteriaSide, must: CriteriaSide) -> bool:
        """Whether criteria (their sides before the give-back, `_sides`) clearly value declining (_declining_welcome
        says what clearly means); the app tells the visitor so (CriteriaReading.declining_wins)."""
        n, r = NAMES.index("nonanswer"), NAMES.index("refusal")
        if not self.serving.nonanswer_penalty + self.serving.caution_lift or n >= len(must.weights):
            return False
        memory = self.heads.ruled_memory
        typical = memory.magnitude[[n, r], 1] if memory is not None else np.ones(2)
        reading = np.clip([must.weights[n], soft.weights[r] + must.weights[r]], 0.0, None)
        total = np.abs(soft.weights).sum() + np.abs(must.weights).sum()
        clear = (reading / typical).sum() >= max(self.serving.lift_from, 1e-6)
        return bool(clear and reading.sum() >= self.serving.lift_share * total)

    def _declining_welcome(self, soft: CriteriaSide, must: CriteriaSide) -> tuple[CriteriaSide, CriteriaSide]:
        """(soft, must), the must side giving the non-answer penalty back to answers that decline or evade (the
        nonanswer property) when the criteria clearly value declining ("I prefer models that decline to write political
        attacks."): the penalty assumes the visitor wants the answer, and this one said otherwise; and
        `caution_lift` more, so that for this visitor declining beats answering, as the wish says, and does not only
        lose less. Clearly: the nonanswer and refusal readings, each as a share of the readers' weight for training
        phrasings asking for more of it, add up to at least `lift_from`, the line under which a reading counts as
        stray (CompositionalHeads): they are two measures of one wish, and the readers often split a sentence
        between them; and the two hold at least `lift_share` of all the criteria's weight (a length wish with a
        stray refusal weight is not a wish for caution). Echoes and answers cut short keep the penalty."""
        if not self.welcomes_declining(soft, must):
            return soft, must
        must = CriteriaSide(must.weights.copy(), must.voice)
        back = self.serving.nonanswer_penalty + self.serving.caution_lift
        must.weights[NAMES.index("nonanswer")] += back * float(self.heads.spread[NAMES.index("nonanswer")])
        return soft, must

    def unsure(self, soft: CriteriaSide) -> bool:
        """Whether the soft side of one sentence (`criteria_sides([sentence])[0]`; empty for a must sentence) is a
        reading the readers are unsure of (weak, or spread over several properties): it counts as read, not at the
        soft strength (CompositionalHeads.unsure)."""
        return self.heads.unsure(soft.weights)

    def reading(self, criteria: Sequence[str], dislikes: Sequence[str] = ()) -> CriteriaReading:
        """How these criteria were read, for the visitor to check: the largest weights of the whole set, and each
        sentence read as nothing (no weight of 0.25 or more, no voice: the board ignores it), read unsure, or left
        out as written in another language, or read as context (who the visitor is, `context`: its voice only)."""
        soft, must = self._sides(criteria, dislikes)
        welcomes = self.welcomes_declining(soft, must)
        soft, must = self._declining_welcome(soft, must)
        side = CriteriaSide(soft.weights + must.weights, soft.voice + must.voice)
        ignored, unsure, foreign, context = [], [], [], []
        for sentence in split_criteria(criteria, dislikes):
            if (language := self.left_out(sentence)) is not None:
                foreign.append((sentence, language))
                continue
            if self.context(sentence):
                context.append(sentence)
                continue
            soft, must = self.criteria_sides([sentence])  # one sentence: one of the two is empty
            if not soft.explain() + must.explain() and not (soft.voice.any() or must.voice.any()):
                ignored.append(sentence)
            elif soft.explain() and self.unsure(soft):
                unsure.append((sentence, soft.explain(top=3)))
        return CriteriaReading(side.explain(), ignored, unsure, len(self.heads.spread), welcomes, foreign, context)

    def _side(self, texts: list[str], soft: bool = False) -> CriteriaSide:
        """The sentences' side; one that frames its thing as unwanted is read as the thing, turned (`turned`), and one
        that asks for it through a negating idiom as the thing itself (`liked`)."""
        framed = {t: self._framed(t) for t in texts}
        side = self._read([t for t in texts if framed[t] is None], soft)
        for text, found in framed.items():
            if found is not None:
                core, sign = found
                whole = self._read([text], soft)
                thing = self._read([f"I like {core}."], soft).weights  # the thing, as a liking the readers know
                weights = (turned(whole.weights, thing, self.serving.framing_reader) if sign < 0
                           else liked(whole.weights, thing))  # fmt: skip
                side = CriteriaSide(side.weights + weights, side.voice + whole.voice)
        return side

    def _framed(self, text: str) -> tuple[str, int] | None:
        """(the thing a wish names, -1) where it frames it as unwanted (cues.framed_core; crm.json framing_reader),
        (the thing, +1) where it asks for it through a negating idiom (cues.liked_core; liked_framing), where the
        word lists, which read their own turns, give the sentence no reading; else None."""
        if self.heads.memory is None or (self.serving.cue_reader > 0 and read_cues(text) is not None):
            return None
        unwanted = framed_core(text) if self.serving.framing_reader > 0 else None
        if unwanted is not None:
            return unwanted, -1
        wanted = liked_core(text) if self.serving.liked_framing > 0 else None
        return (wanted, +1) if wanted is not None else None

    def _read(self, texts: list[str], soft: bool = False) -> CriteriaSide:
        members = len(self.heads.members)
        vecs = np.stack([self._criteria_cache(t) for t in texts]) if texts else np.zeros((0, members, 384), np.float32)
        sentences = np.stack([self._sentence_cache(t) for t in texts]) if texts and self.heads.memory else None
        return self.heads.criteria_side([vecs[:, m] for m in range(members)], sentences, soft, texts)

    def response_side(
        self,
        queries: Sequence[str],
        responses: Sequence[str],
        panels: Sequence[Sequence[str]] | None = None,
        progress: bool = False,
        panel_vectors: dict[str, np.ndarray] | None = None,
        reference_scale: float = 1.0,
    ) -> ResponseSide:
        """Criteria-free part of many (query, response) pairs; `panels` are the answers each response is compared
        with (the reference panel's to its query, or the bench's other answers: usl_space.instant.panels_of; a
        response's own is skipped), the comparison weighed `reference_scale` times the heads' weights;
        `panel_vectors`: embeddings of answers already known (by text; on a bench compared with its own answers,
        usually every response), not encoded again."""
        encode = self.store.get if self.store is not None else self.encoder.encode
        distinct_queries = list(dict.fromkeys(queries))
        qvec = encode(distinct_queries)
        where = {q: i for i, q in enumerate(distinct_queries)}
        if panel_vectors and responses:  # the response store knows the bench's answers from building it before
            missing = [r for r in dict.fromkeys(responses) if r not in panel_vectors]
            fresh = dict(zip(missing, encode(missing, progress=progress), strict=True)) if missing else {}
            rvec = np.stack([panel_vectors[r] if r in panel_vectors else fresh[r] for r in responses])
        else:
            rvec = encode(list(responses), progress=progress)
        quality_vecs = None
        if self.quality_encoder is not None:  # the quality term (and its reference similarity) reads the tuned one
            encode = self.quality_store.get if self.quality_store is not None else self.quality_encoder.encode
            quality_vecs = (encode(distinct_queries)[[where[q] for q in queries]], encode(list(responses), progress))
            panel_vectors = None  # known vectors are the frozen encoder's
        refsim = lexsim = rel_length = None
        if panels is not None:
            if any(isinstance(panel, str) for panel in panels):
                raise TypeError("panels: one list of reference answers per response, not a single string")
            own_vecs = quality_vecs[1] if quality_vecs is not None else rvec
            known = {**(panel_vectors or {}), **dict(zip(responses, own_vecs, strict=True))}

            def encode_references(texts: list[str]) -> np.ndarray:  # the panel's own answers are usually on
                missing = [t for t in texts if t not in known]  # the bench: not encoded twice
                known.update(zip(missing, encode(missing), strict=True) if missing else ())
                return np.stack([known[t] for t in texts]) if texts else np.zeros((0, rvec.shape[1]), np.float32)

            own = self.skip_own_reference
            refsim = panel_similarity(own_vecs, responses, panels, encode_references, own)
            if self.idf is not None:
                lexsim = panel_means(responses, panels, lambda a, b: lexical_similarity(a, b, self.idf), own)
            rel_length = panel_means(responses, panels, relative_length, own)
        if reference_scale != 1.0:
            signals = (refsim, lexsim, rel_length)
            refsim, lexsim, rel_length = (None if s is None else reference_scale * s for s in signals)
        phi = measure_many(responses, queries)
        side = self.heads.response_side(qvec[[where[q] for q in queries]], rvec, phi, refsim, lexsim, rel_length,
                                        quality_vecs)  # fmt: skip
        serving = self.serving
        if serving.nonanswer_penalty:
            # the nonanswer property already holds the refusal and evasion test; only the echo needs the query
            echoed = [echoes(q, r) for q, r in zip(queries, responses, strict=True)]
            flags = np.maximum(phi[:, NAMES.index("nonanswer")], np.array(echoed, np.float32))
            if panels is not None and serving.cut_short_doublings > 0:  # the others' answers known: one cut to a line
                flags = np.maximum(flags, cut_short(responses, panels, serving.cut_short_doublings))
            side.quality -= serving.nonanswer_penalty * flags
        return side

    def score_points(self, criteria: Sequence[str], dislikes: Sequence[str], items: Sequence[tuple[str, str]],
                     panels: Sequence[Sequence[str]] | None = None) -> np.ndarray:  # fmt: skip
        """A score per (query, response): quality plus every criterion in full (judged_logit gates pairs only)."""
        side = self.response_side([q for q, _ in items], [r for _, r in items], panels)
        return self.heads.scores(side, self.criteria_side(criteria, dislikes))

    def score_pairs(self, pairs: Sequence[Pair], batch_size: int = 64, symmetric: bool = True,
                    progress: bool = False, with_quality: bool = True) -> PairScores:  # fmt: skip
        """P(A preferred) = sigmoid(judged_logit of the gaps A - B); order plays no part."""
        queries = [p.context if isinstance(p.context, str) else p.context[-1]["content"] for p in pairs]
        texts = [r for p in pairs for r in (p.response_a, p.response_b)]
        side = self.response_side([q for q in queries for _ in (0, 1)], texts, progress=progress)
        logit = np.empty(len(pairs))
        by_criteria: dict[tuple, list[int]] = {}
        for i, p in enumerate(pairs):
            by_criteria.setdefault((tuple(p.criteria), tuple(p.dislikes)), []).append(i)
        for (criteria, dislikes), rows in by_criteria.items():
            soft, must = self.criteria_sides(criteria, dislikes)
            a, b = np.array([2 * i for i in rows]), np.array([2 * i + 1 for i in rows])
            soft_score = side.z @ soft.weights + side.voice @ soft.voice
            must_score = side.z @ must.weights + side.voice @ must.voice
            quality_gap = side.quality[a] - side.quality[b] if with_quality else np.zeros(len(rows))
            length = side.log_words(self.heads.spread)
            logit[rows] = judged_logit(quality_gap, soft_score[a] - soft_score[b], must_score[a] - must_score[b],
                                       self.serving.quality_gate if with_quality else 0.0, length[a] - length[b],
                                       self.serving.gate_length_slope, self.serving.gate_length_cap)  # fmt: skip
        p_a = 1 / (1 + np.exp(-logit))
        return PairScores(p_a, p_a, p_a.copy() if symmetric else np.full_like(p_a, np.nan))
