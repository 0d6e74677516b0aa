"""Teach it with a few votes: a visitor's judgements refine the weights their criteria gave (compositional CRMs).

A compositional score is quality + z . w + v . u (crm_core.compositional.scorer), so a vote "A's answer beats B's on
query q" is one logistic observation on the criteria side (w, u) with the response-side difference as its input.
`refit` finds the most probable (w, u) given the votes and a Gaussian prior centred on what the criteria text gave
(one vote cannot swing it), by Newton's method on 43 numbers: instant. `next_pair` asks the vote that would teach
the most: among answers of models ranked close together, the one that most reduces the uncertainty of their
order on the board (a Laplace posterior over the weights, updated by one more logistic observation).
A profile (criteria, dislikes, topics, votes, fitted weights) is plain JSON, so the app and `usl-rank --profile`
give the same board.
"""

from __future__ import annotations

import base64
import json
import os
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from crm_core.atomic import atomic_file
from crm_core.compositional.heads import CriteriaSide, ResponseSide
from crm_core.guard import read_text

PROFILE_VERSION = 1
MAX_PROFILE_BYTES = 5_000_000  # a profile file: criteria, votes and weights (a few KB; never a device read to the end)
MAX_LINK_TOKEN = 8000  # characters of a share link's profile (browsers and proxies cut URLs near 8 KB)


def _strings(value: object, where: str) -> list[str]:
    """A profile's list of texts, as written: a lone string ("Be brief.") or a number is an error, not a list of
    its characters or its text."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        got = (
            type(value).__name__
            if not isinstance(value, list)
            else "a list holding " + ", ".join(sorted({type(v).__name__ for v in value if not isinstance(v, str)}))
        )
        raise ValueError(f"{where}: expected a list of strings, got {got}")
    return list(value)


def _numbers(value: object, where: str) -> list[float] | None:
    """A profile's fitted weights: absent (None), or a list of finite numbers (NaN would null every win rate)."""
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        raise ValueError(f"{where}: expected a list of finite numbers")
    numbers = [float(v) for v in value]
    if not np.isfinite(numbers).all():
        raise ValueError(f"{where}: expected a list of finite numbers")
    return numbers


@dataclass
class Vote:
    """The visitor preferred model_a's answer to query idx (outcome 1), model_b's (0), or neither (0.5)."""

    idx: int
    model_a: str
    model_b: str
    outcome: float


def _whole(value: object) -> int:
    """A query idx as given: an integer (1.9 or "3" is an error, not query 1 or 3)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"idx: expected an integer, got {value!r}")
    return value


@dataclass
class Profile:
    """Everything that makes one visitor's board: what they typed, their votes, the weights fitted from both."""

    criteria: list[str] = field(default_factory=list)
    dislikes: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    votes: list[Vote] = field(default_factory=list)
    weights: list[float] | None = None  # fitted property weights (None: read from the criteria alone)
    voice: list[float] | None = None
    version: int = PROFILE_VERSION

    def side(self) -> CriteriaSide | None:
        if self.weights is None or self.voice is None:
            return None
        return CriteriaSide(np.asarray(self.weights, np.float32), np.asarray(self.voice, np.float32))

    def save(self, path: str | os.PathLike) -> None:
        with atomic_file(path) as handle:
            handle.write(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike) -> Profile:
        text = read_text(path, "a USL profile (the app's JSON download)", MAX_PROFILE_BYTES)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{error.lineno}: malformed JSON: {error.msg}") from None
        return cls.from_dict(data, str(path))

    @classmethod
    def from_dict(cls, data: object, where: str) -> Profile:
        """A profile from its JSON object; `where` (a file name, "the link") starts every error message."""
        if not isinstance(data, dict) or data.get("version") != PROFILE_VERSION:
            raise ValueError(f"{where}: not a USL profile (version {PROFILE_VERSION} expected)")
        try:
            votes = [Vote(_whole(v["idx"]), str(v["model_a"]), str(v["model_b"]), float(v["outcome"]))
                     for v in data.get("votes", [])]  # fmt: skip
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{where}: votes: each needs idx, model_a, model_b, outcome ({error})") from None
        if any(v.outcome not in (0.0, 0.5, 1.0) for v in votes):
            raise ValueError(f"{where}: votes: outcome must be 1 (A), 0 (B) or 0.5 (tie)")
        texts = {field: _strings(data.get(field, []), f"{where}: {field}") for field in ("criteria", "dislikes",
                                                                                          "topics")}  # fmt: skip
        fitted = {field: _numbers(data.get(field), f"{where}: {field}") for field in ("weights", "voice")}
        return cls(texts["criteria"], texts["dislikes"], texts["topics"], votes, fitted["weights"],
                   fitted["voice"])  # fmt: skip

    def link_token(self, all_topics: Sequence[str] = ()) -> str:
        """The profile as a URL-safe token for a share link (`?profile=TOKEN`): "2." and the criteria, dislikes,
        topics (none when they are `all_topics`: the link then opens with all ticked) and votes as compact JSON,
        deflated with the frozen word list share_link_words.txt (model and topic names: a link with three votes
        is ~150 characters instead of ~540). Weights are left out: refitted from criteria and votes, they give the
        same board."""
        topics = [] if set(self.topics) == set(all_topics) else self.topics
        data = {"c": self.criteria, "d": self.dislikes, "t": topics,
                "v": [[v.idx, v.model_a, v.model_b, v.outcome] for v in self.votes]}  # fmt: skip
        data = {k: v for k, v in data.items() if v}
        raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        deflate = zlib.compressobj(9, zdict=_link_words())
        return LINK_PREFIX + base64.urlsafe_b64encode(deflate.compress(raw) + deflate.flush()).decode().rstrip("=")

    @classmethod
    def from_link_token(cls, token: str) -> Profile:
        """The profile a share link carries (this version's links, and the longer ones made before them); a clear
        ValueError for a damaged or foreign token."""
        token = token.strip()
        if len(token) > MAX_LINK_TOKEN:
            raise ValueError(f"the link's profile is too long ({len(token)} characters, at most {MAX_LINK_TOKEN})")
        compact = token.startswith(LINK_PREFIX)
        body = token.removeprefix(LINK_PREFIX)
        try:
            inflate = zlib.decompressobj(zdict=_link_words()) if compact else zlib.decompressobj()
            raw = inflate.decompress(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)), MAX_LINK_TOKEN * 8)
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, zlib.error) as error:
            raise ValueError(f"the link's profile could not be read; was the link cut off? ({error})") from None
        if compact:
            if not isinstance(data, dict) or not isinstance(data.get("v", []), list):
                raise ValueError("the link's profile could not be read: not a USL profile")
            try:
                votes = [{"idx": i, "model_a": a, "model_b": b, "outcome": o} for i, a, b, o in data.get("v", [])]
            except (TypeError, ValueError):
                raise ValueError("the link's profile: votes: each needs idx, model_a, model_b, outcome") from None
            data = {"version": PROFILE_VERSION, "criteria": data.get("c", []), "dislikes": data.get("d", []),
                    "topics": data.get("t", []), "votes": votes}  # fmt: skip
        return cls.from_dict(data, "the link's profile")


LINK_PREFIX = "2."  # not in the base64 alphabet: a token made before compact links has no such prefix


@lru_cache(maxsize=1)
def _link_words() -> bytes:
    """The deflate dictionary of compact links. Frozen: links made with it must keep opening, so a new list of
    words would need a new LINK_PREFIX (the old one kept for reading)."""
    return (Path(__file__).with_name("share_link_words.txt")).read_bytes()


def features(side: ResponseSide) -> np.ndarray:
    """Each response's criteria-side inputs: scaled properties, then projected embedding (what w, u multiply)."""
    return np.concatenate([side.z, side.voice], axis=1).astype(np.float64)


def refit(prior: CriteriaSide, x: np.ndarray, rows_a: np.ndarray, rows_b: np.ndarray, outcomes: np.ndarray,
          quality: np.ndarray, prior_strength: float = 4.0,
          iterations: int = 20) -> tuple[CriteriaSide, np.ndarray]:  # fmt: skip
    """MAP weights given votes (rows of `x` voted on, outcome 1 = a preferred) and the prior from the criteria
    text: minimise sum BCE + prior_strength/2 * |theta - theta0|^2. Returns the weights and the posterior
    covariance (the inverse Hessian), which `next_pair` uses."""
    theta0 = np.concatenate([prior.weights, prior.voice]).astype(np.float64)
    theta = theta0.copy()
    d = x[rows_a] - x[rows_b]
    offset = quality[rows_a] - quality[rows_b]
    eye = np.eye(len(theta)) * prior_strength
    hessian = eye
    for _ in range(iterations if len(d) else 0):
        p = 1 / (1 + np.exp(-(offset + d @ theta)))
        gradient = d.T @ (p - outcomes) + prior_strength * (theta - theta0)
        hessian = (d * (p * (1 - p))[:, None]).T @ d + eye
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.abs(step).max() < 1e-8:
            break
    k = len(prior.weights)
    fitted = CriteriaSide(theta[:k].astype(np.float32), theta[k:].astype(np.float32))
    return fitted, np.linalg.inv(hessian)


def model_means(x: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Each model's average criteria-side inputs over the queries it answered (models x features): what moves
    a model up or down the board when the weights change."""
    values = np.where((rows >= 0)[..., None], x[np.maximum(rows, 0)], np.nan)
    return np.nanmean(values, axis=0)


def next_pair(side: CriteriaSide, covariance: np.ndarray, x: np.ndarray, quality: np.ndarray, rows: np.ndarray,
              order: list[int], asked: set[tuple[int, int, int]], rng: np.random.Generator,
              neighbours: int = 3, queries: int = 64,
              means: np.ndarray | None = None) -> tuple[int, int, int]:  # fmt: skip
    """(query row, model column a, model column b) to ask next. `rows` maps (query, model column) to a response
    row of `x` (-1: none); `order` lists model columns best first. Candidates: models within `neighbours` places
    of each other on the current board, on a random sample of queries. The pick is the vote that most reduces the
    uncertainty of the board's order between those two models: with g their difference in average inputs, d the
    voted answers' difference and s = p(1-p) how unsure the vote is, the posterior variance of g.theta falls by
    s (g'Cd)^2 / (1 + s d'Cd) (a rank-one Laplace update)."""
    theta = np.concatenate([side.weights, side.voice]).astype(np.float64)
    means = model_means(x, rows) if means is None else means
    q_sample = rng.choice(rows.shape[0], size=min(queries, rows.shape[0]), replace=False)
    best, best_value = None, -1.0
    for i, a in enumerate(order):
        for b in order[i + 1 : i + 1 + neighbours]:
            ra, rb = rows[q_sample, a], rows[q_sample, b]
            ok = (ra >= 0) & (rb >= 0)
            if not ok.any():
                continue
            d = x[ra[ok]] - x[rb[ok]]
            p = 1 / (1 + np.exp(-(quality[ra[ok]] - quality[rb[ok]] + d @ theta)))
            s = p * (1 - p)
            cg = covariance @ (means[a] - means[b])
            value = s * (d @ cg) ** 2 / (1 + s * np.einsum("ij,jk,ik->i", d, covariance, d))
            for j in np.argsort(-value):
                key = (int(q_sample[ok][j]), a, b)
                if key not in asked:
                    if value[j] > best_value:
                        best, best_value = key, float(value[j])
                    break
    if best is None:
        raise ValueError("no pair left to ask about")
    return best


def profile_side(engine, profile: Profile) -> CriteriaSide | None:
    """The criteria side a profile ranks with: its fitted weights when it has them, else refitted from its votes
    (prior: its criteria), else None (the criteria text alone decides)."""
    if profile.side() is not None:
        return profile.side()
    if not profile.votes:
        return None
    return fit_votes(engine, profile.criteria, profile.dislikes, profile.votes)[0]


def fit_votes(engine, criteria: list[str], dislikes: list[str],
              votes: list[Vote]) -> tuple[CriteriaSide, np.ndarray, CriteriaSide]:  # fmt: skip
    """(fitted side, posterior covariance, prior side) for these votes on this engine's bench (uploads included)."""
    if not engine.instant:
        raise ValueError("votes need a compositional CRM (the engine's instant path)")
    table = engine.response_table()
    row_of = table.row_of()
    missing = [v for v in votes if (v.idx, v.model_a) not in row_of or (v.idx, v.model_b) not in row_of]
    if missing:
        v = missing[0]
        raise ValueError(f"vote on query {v.idx} ({v.model_a} vs {v.model_b}): no such responses on this bench")
    prior = engine.scorer.criteria_side(criteria, dislikes)
    a = np.array([row_of[(v.idx, v.model_a)] for v in votes], dtype=np.int64)
    b = np.array([row_of[(v.idx, v.model_b)] for v in votes], dtype=np.int64)
    side, covariance = refit(prior, features(table.side), a, b, np.array([v.outcome for v in votes], dtype=float),
                             table.side.quality)  # fmt: skip
    return side, covariance, prior


def ask(engine, side: CriteriaSide, covariance: np.ndarray, ranked: list[str], votes: list[Vote],
        seed: int = 0) -> tuple[int, str, str]:  # fmt: skip
    """The next (query id, model A, model B) to vote on, among the models of `ranked` (best first)."""
    table = engine.response_table()
    ids = sorted(engine.query)
    rows = table.rows(ids, ranked)
    position = {idx: q for q, idx in enumerate(ids)}
    asked = {(position[v.idx], ranked.index(v.model_a), ranked.index(v.model_b)) for v in votes
             if v.model_a in ranked and v.model_b in ranked and v.idx in position}  # fmt: skip
    x = features(table.side)
    q, a, b = next_pair(side, covariance, x, table.side.quality, rows, list(range(len(ranked))), asked,
                        np.random.default_rng(seed + len(votes)))  # fmt: skip
    return ids[q], ranked[a], ranked[b]


def moves(before: CriteriaSide, after: CriteriaSide, top: int = 4) -> str:
    """How the votes moved the property weights, largest first: "emoji -2.1 -> -3.0 · bullets +0.2 -> +0.9"."""
    from crm_core.properties import NAMES

    change = np.abs(after.weights - before.weights)
    shown = [k for k in np.argsort(-change)[:top] if change[k] >= 0.05]
    return " · ".join(f"{NAMES[k]} {before.weights[k]:+.1f} -> {after.weights[k]:+.1f}" for k in shown)
