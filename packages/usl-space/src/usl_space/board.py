"""From judged responses to a leaderboard: the one place where a (queries x models) matrix of preferences becomes
rows (win rate, interval, Rank (UB), wins / ties / losses, length-controlled win rate, per-topic columns).

Both scoring paths of the engine (instant and anytime) hand over the same two matrices, so both give the same
Leaderboard:
- preference[q, j]: P(model j's response to query q is preferred to the baseline's), NaN where there is none;
- outcome[q, j]: 1 / 0 / 0.5 (tie), the discrete verdict. The baseline's own column is 0.5 in both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from crm_core.compositional.scorer import CriteriaReading

from usl_space.stats import MIN_QUERIES_FOR_RANKS, intervals, length_controlled_win_rates


@dataclass
class Leaderboard:
    """One state of a ranking: rows best first, and how far scoring has got."""

    rows: list[dict[str, Any]]
    criteria: list[str]
    dislikes: list[str]
    bench: str
    baseline: str
    checkpoint: str
    n_queries: int  # queries scored so far
    n_selected: int  # queries the ranking will cover when done
    seconds: float
    topics: list[str] = field(default_factory=list)
    position_consistency: float | None = None
    win_rate_kind: str = "discrete"  # "weighted": mean P(preferred to the baseline), as AlpacaEval 2.0
    reading: CriteriaReading | None = None  # how a compositional CRM read the criteria (None: none given, or a kind
    # that does not read them into properties)

    @property
    def done(self) -> bool:
        return self.n_queries >= self.n_selected

    def to_json(self) -> dict[str, Any]:
        return {
            "criteria": self.criteria, "dislikes": self.dislikes, "bench": self.bench, "baseline": self.baseline,
            "checkpoint": self.checkpoint, "n_queries": self.n_queries, "n_selected": self.n_selected,
            "done": self.done, "seconds": round(self.seconds, 3), "topics": self.topics,
            "position_consistency": self.position_consistency, "win_rate_kind": self.win_rate_kind,
            **({"reading": self.reading.to_json()} if self.reading is not None else {}), "rows": self.rows,
        }  # fmt: skip


def pointwise_matrices(scores: np.ndarray, baseline_column: int) -> tuple[np.ndarray, np.ndarray]:
    """(outcome, preference) from one score per response (NaN where none): P = sigmoid(score - baseline's)."""
    with np.errstate(over="ignore", invalid="ignore"):
        preference = 1 / (1 + np.exp(-(scores - scores[:, [baseline_column]])))
    preference[:, baseline_column] = np.where(np.isnan(scores[:, baseline_column]), np.nan, 0.5)
    outcome = np.where(np.abs(preference - 0.5) < 5e-10, 0.5, (preference > 0.5).astype(float))
    outcome[np.isnan(preference)] = np.nan
    return outcome, preference


def board_rows(
    outcome: np.ndarray,
    preference: np.ndarray,
    words: np.ndarray,
    topic_of: np.ndarray,
    models: list[str],
    baseline: str,
    weighted: bool,
    bootstrap: int = 1000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Leaderboard rows, best first. `words` is the (queries x models) word count of each response; a compositional
    CRM's win rate is weighted (mean P(preferred over the baseline)), a cross-encoder's discrete (ties 1/2)."""
    basis = preference if weighted else outcome
    stats = intervals(basis, bootstrap, seed)
    ranked = len(outcome) >= MIN_QUERIES_FOR_RANKS  # too few queries: no Rank (UB) (the app says why)
    answered = ~np.isnan(outcome)
    j_base = models.index(baseline)
    lc = length_controlled_win_rates(preference, words - words[:, [j_base]], answered)
    lc[j_base] = 0.5
    topics = sorted(set(topic_of.tolist()))
    filled = np.where(answered, basis, 0.0)
    per_topic = {}
    for topic in topics:
        mask = (topic_of == topic)[:, None] & answered
        count = mask.sum(axis=0)
        with np.errstate(invalid="ignore"):
            per_topic[topic] = np.where(count > 0, (filled * mask).sum(axis=0) / np.maximum(count, 1), np.nan)
    with np.errstate(invalid="ignore"):
        mean_pref = np.nanmean(np.where(answered, preference, np.nan), axis=0) if len(outcome) else lc * np.nan
        avg_words = np.where(answered, words, 0.0).sum(axis=0) / np.maximum(answered.sum(axis=0), 1)
    wins, ties, losses = ((outcome == v).sum(axis=0) for v in (1.0, 0.5, 0.0))
    rows: list[dict[str, Any]] = [{
        "model": model, "win_rate": rounded(stats.win_rate[j]), "ci_low": rounded(stats.ci_low[j]),
        "ci_high": rounded(stats.ci_high[j]), "rank_ub": int(stats.rank_ub[j]) if ranked else None,
        "n": int(stats.n[j]), "wins": int(wins[j]), "ties": int(ties[j]), "losses": int(losses[j]),
        "mean_preference": rounded(mean_pref[j]),
        "lc_win_rate": rounded(lc[j]), "avg_words": rounded(avg_words[j], 1),
        "topics": {t: rounded(per_topic[t][j]) for t in topics}, "baseline": model == baseline,
    } for j, model in enumerate(models)]  # fmt: skip
    most = int(stats.n.max()) if len(models) else 0
    for row in rows:
        row["fewer_answers"] = row["n"] < most  # flagged: judged on fewer queries than the best-covered model
    rows.sort(key=lambda row: (-(row["win_rate"] if row["win_rate"] is not None else -1), row["model"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


def fewer_answers(rows: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    """(model, queries judged, the most any model was judged on) for every model judged on fewer queries than
    the best-covered one: its win rate rests on less evidence (and on other queries) than the rest."""
    most = max((row["n"] for row in rows), default=0)
    return [(row["model"], row["n"], most) for row in rows if row["n"] < most]


def rounded(value: float | None, digits: int = 4) -> float | None:
    """A number for the JSON rows: rounded, None for a missing or NaN value."""
    return None if value is None or np.isnan(value) else round(float(value), digits)
