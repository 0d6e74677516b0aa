"""What every CRM kind shares: `crm.json` (CRMSpec, with the cross-encoder's PromptFormat it records), a pair to
judge (Pair, and pairs from a pairs frame), the scores of many (PairScores), and the `Scorer` protocol each kind
implements (crm_core.loader.load_crm returns one).

The bottom of crm_core: the kinds (crm_core.compositional, crm_core.cross_encoder), the ONNX helpers, the Hub
helpers and the loader all read these, and this module reads none of them.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

CRM_FILE = "crm.json"
PAIR_LABELS = ("model_a", "model_b")
PAIR_LABELS_WITH_TIE = ("model_a", "model_b", "tie")
LENGTH_SLOPE = "length_slope"
POINT_LABELS = (["score"], ["score", LENGTH_SLOPE])
Objective = Literal["pairwise", "pointwise"]
Kind = Literal["cross-encoder", "compositional"]
PROMPT_FORMAT_VERSION = 2  # v2: each response's label states its length in words (crm_core.cross_encoder.prompts)
Style = Literal["chat", "segments"]


@dataclass(frozen=True)
class PromptFormat:
    """How a checkpoint turns criteria and responses into tokens; stored in its crm.json."""

    style: Style
    max_length: int
    version: int = PROMPT_FORMAT_VERSION
    min_response_tokens: int = 24
    history_fraction: float = 0.25  # at most this share of max_length goes to turns before the final user turn


@dataclass
class CRMSpec:
    """The contents of crm.json: everything needed to score a checkpoint the way it was trained."""

    style: Literal["chat", "segments"]
    max_length: int
    objective: Objective = "pairwise"
    labels: list[str] = field(default_factory=lambda: list(PAIR_LABELS))
    prompt_format_version: int = PROMPT_FORMAT_VERSION
    min_response_tokens: int = 24
    history_fraction: float = 0.25
    base_model: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # training data, metrics, ... for the model card
    kind: Kind = "cross-encoder"  # compositional: crm_core.compositional.scorer (always pointwise)

    def __post_init__(self):
        if self.kind not in ("cross-encoder", "compositional"):
            raise ValueError(f"kind must be 'cross-encoder' or 'compositional', got {self.kind!r}")
        if self.kind == "compositional" and self.objective != "pointwise":
            raise ValueError("a compositional CRM is pointwise: set objective to 'pointwise'")
        allowed = {"pairwise": (list(PAIR_LABELS), list(PAIR_LABELS_WITH_TIE)), "pointwise": POINT_LABELS}
        if self.objective not in allowed:
            raise ValueError(f"objective must be 'pairwise' or 'pointwise', got {self.objective!r}")
        if list(self.labels) not in allowed[self.objective]:
            raise ValueError(
                f"labels {self.labels} do not fit the {self.objective} objective: {allowed[self.objective]}"
            )
        if self.prompt_format_version != PROMPT_FORMAT_VERSION:
            raise ValueError(
                f"checkpoint uses prompt format v{self.prompt_format_version}; this crm_core builds "
                f"v{PROMPT_FORMAT_VERSION} inputs, so it would score the checkpoint wrongly: use a matching crm-core"
            )

    @property
    def pointwise(self) -> bool:
        """One score per response (P(A over B) = sigmoid of the difference), not one verdict per pair."""
        return self.objective == "pointwise"

    @property
    def instant(self) -> bool:
        """The response side is criteria-free, so a bench is encoded once and any criteria set ranks by arithmetic
        (the engine's instant path); the cross-encoder kind reads criteria and response together (anytime path)."""
        return self.kind == "compositional"

    @property
    def prompt_format(self) -> PromptFormat:
        return PromptFormat(self.style, self.max_length, self.prompt_format_version, self.min_response_tokens,
                            self.history_fraction)  # fmt: skip

    def save(self, folder: str | os.PathLike) -> None:
        Path(folder, CRM_FILE).write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, folder: str | os.PathLike) -> CRMSpec:
        path = Path(folder, CRM_FILE)
        if not path.is_file():
            raise FileNotFoundError(f"{folder}: not a CRM checkpoint (no {CRM_FILE})")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"{path}: not valid JSON ({error})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a JSON object of CRM fields")
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"{path}: unknown field(s) {sorted(unknown)}")
        required = [f.name for f in dataclasses.fields(cls)
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]  # fmt: skip
        missing = [name for name in required if name not in data]
        if missing:
            raise ValueError(f"{path}: missing field(s) {missing}")
        if not isinstance(data.get("extra", {}), dict):
            raise ValueError(f"{path}: extra: expected an object, got {type(data['extra']).__name__}")
        return cls(**data)


@dataclass
class Pair:
    """One judgement to make: which of two responses to `context` the user with these criteria prefers."""

    criteria: list[str]
    context: str | list[dict]
    response_a: str
    response_b: str
    dislikes: list[str] = field(default_factory=list)


@dataclass
class PairScores:
    """Per pair: P(A preferred) averaged over both orders, each order's own P(A), and P(tie) for 3-way heads."""

    p_a: np.ndarray
    p_a_first: np.ndarray  # A shown first
    p_a_second: np.ndarray  # A shown second; NaN when only one order was scored
    p_tie: np.ndarray | None = None

    @property
    def consistent(self) -> np.ndarray:
        """Whether both orders pick the same winner."""
        return (self.p_a_first > 0.5) == (self.p_a_second > 0.5)

    @property
    def position_consistency(self) -> float:
        """Share of pairs whose two orders agree; NaN if only one order was scored."""
        if not len(self.p_a) or np.isnan(self.p_a_second).any():
            return float("nan")
        return float(self.consistent.mean())


@runtime_checkable
class Scorer(Protocol):
    """A loaded CRM of any kind, as the engine and the CLIs use it: its crm.json, its folder, the file whose bytes
    identify what it scores, and scores for pairs (P(A preferred)) and for single answers (pointwise kinds)."""

    spec: CRMSpec
    folder: Path
    weights_file: str

    def score_pairs(self, pairs: Sequence[Pair], batch_size: int = ..., symmetric: bool = True,
                    progress: bool = False) -> PairScores: ...  # fmt: skip

    def score_points(self, criteria: Sequence[str], dislikes: Sequence[str], items: Sequence[tuple[str, str]],
                     panels: Sequence[Sequence[str]] | None = None) -> np.ndarray: ...  # fmt: skip


def pair_context(row: dict[str, Any]) -> str | list[dict]:
    """What a pairs-file row's responses answer: side A's conversation before its final answer, or the prompt
    when that conversation does not end with the user."""
    history = row["model_a"][:-1]
    return history if history and history[-1]["role"] == "user" else row["prompt"]


def pairs_from_frame(frame: Any, with_criteria: bool = True) -> list[Pair]:
    """Scoring inputs for the rows of a pairs frame (crm_core.data.load_pairs)."""
    return [
        Pair(
            list(row["criteria"]) if with_criteria else [],
            pair_context(row),
            row["model_a"][-1]["content"],
            row["model_b"][-1]["content"],
        )
        for row in frame.iter_rows(named=True)
    ]
