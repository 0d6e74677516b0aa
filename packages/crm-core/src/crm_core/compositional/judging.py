"""How a compositional CRM judges: one answer against another (`judged_logit`) and every answer of a board against
the baseline's (`board_logits`), from the parts of each answer's score (quality, the soft criteria, the musts,
its length) and the serving settings. The one place of the scoring formula: the scorer's pairs, the app's boards and
the benchmarks all come here.
"""

from __future__ import annotations

import warnings

import numpy as np

from crm_core.compositional.serving import ServingConfig


def judged_logit(quality_gap: np.ndarray, criteria_gap: np.ndarray, must_gap: np.ndarray | float = 0.0,
                 gate: float = 0.0, length_gap: np.ndarray | float = 0.0,
                 length_slope: float = 0.0, length_cap: float = 0.0) -> np.ndarray:  # fmt: skip
    """log-odds that answer A is preferred to answer B, from the gaps A - B of quality, of the criteria's soft part
    and of its must part. Criteria tune quality, they do not replace it: a soft criterion counts in full when it
    agrees with quality or when the two answers are of comparable quality, and fades (exp(-(gap / gate)^2)) when it
    would make the clearly worse answer win; a must criterion always counts in full. Comparable is judged on
    quality with length taken out (quality gap - length_slope x the gap in log2 words, `length_gap`), so the same
    model told to be brief is not "clearly worse" for being brief; at most `length_cap` doublings of words are taken
    out that way (0: no cap), so an answer cut to one sentence or a one-line refusal stays clearly worse than a
    whole answer. gate 0: no fading (the plain sum)."""
    if gate <= 0:
        return quality_gap + criteria_gap + must_gap
    if length_cap > 0:
        length_gap = np.clip(length_gap, -length_cap, length_cap)
    comparable = quality_gap - length_slope * length_gap
    fade = np.exp(-np.square(comparable / gate))
    return quality_gap + criteria_gap * np.where(comparable * criteria_gap >= 0, 1.0, fade) + must_gap


def quality_spread(query: np.ndarray, quality: np.ndarray, log_words: np.ndarray) -> tuple[float, float]:
    """(spread, slope) of the quality term over a bench's answers (one entry per answer: its query, quality, log2
    words): the median over queries of the standard deviation of quality among the query's answers, and quality's
    pooled within-query slope per doubling of words. A bench whose answers the quality term tells apart less (2025
    stories against AlpacaEval's), or rewards less for length, has both smaller. Each query's outliers in quality or
    length (`inside_fences`: a junk entry, a broken model, an answer cut to a line) are left out, so a few of them do
    not set the scale for every real answer."""
    ok = ~np.isnan(quality) & ~np.isnan(log_words)
    query, quality, log_words = query[ok], quality[ok].astype(np.float64), log_words[ok].astype(np.float64)
    order = np.argsort(query, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(query[order]) != 0])
    sds, cross, square = [], 0.0, 0.0
    for group in np.split(order, starts[1:]) if len(order) else []:
        q, w = quality[group], log_words[group]
        kept = inside_fences(q) & inside_fences(w)
        if kept.sum() < 2:
            continue
        q, w = q[kept] - q[kept].mean(), w[kept] - w[kept].mean()
        sds.append(float(np.sqrt(np.mean(q * q))))
        cross, square = cross + float(q @ w), square + float(w @ w)
    if not sds:
        return float("nan"), float("nan")
    return float(np.median(sds)), cross / square if square > 0 else 0.0


def inside_fences(x: np.ndarray) -> np.ndarray:
    """Which values lie within Tukey's fences: no further than 1.5 interquartile ranges beyond the quartiles."""
    low, high = np.percentile(x, [25, 75])
    return (x >= low - 1.5 * (high - low)) & (x <= high + 1.5 * (high - low))


def bench_gate(serving: ServingConfig, spread: tuple[float, float] | None) -> tuple[float, float]:
    """(quality gate, gate length slope) on a bench with this `quality_spread`: each served one scaled by the bench's
    spread (slope) over the one it was chosen at (`gate_spread_reference`, `gate_slope_reference`; 0: not scaled), so
    that "clearly worse" is the same share of what separates a bench's answers, and brevity is forgiven as much as
    the quality term penalises it there, never more than as chosen: on a bench whose quality term charges more for
    brevity (speechmap) a steeper slope faded the detailed wish too (docs/experiments.md). Without a spread: as
    served."""
    gate, slope = serving.quality_gate, serving.gate_length_slope
    if spread is None or not np.isfinite(spread).all():
        return gate, slope
    if serving.gate_spread_reference > 0:
        gate *= spread[0] / serving.gate_spread_reference
    if serving.gate_slope_reference > 0:
        slope *= min(max(spread[1], 0.0) / serving.gate_slope_reference, 1.0)
    return gate, slope


def board_logits(quality: np.ndarray, soft: np.ndarray, must: np.ndarray, log_words: np.ndarray | None,
                 baseline_column: int, serving: ServingConfig,
                 spread: tuple[float, float] | None = None) -> np.ndarray:  # fmt: skip
    """log-odds that each answer (queries x models, NaN where none) is preferred to the baseline's answer to the same
    query: judged_logit of the gaps to it, with the serving gate (in units of the bench's `spread`, from
    `quality_spread` over the bench's answers: bench_gate); the baseline's own column is 0. With
    `gate_length_floor` (a quantile, 0: none) the gate forgives brevity only down to that quantile of the lengths
    of the query's answers on the board: an answer far shorter than nearly all others (a first sentence alone, the
    prompt echoed) is not a concise version of an answer."""
    base = baseline_column
    gate, slope = bench_gate(serving, spread)
    length_gap: np.ndarray | float = 0.0
    if log_words is not None:
        forgiven = log_words
        if serving.gate_length_floor > 0 and log_words.shape[1] > 2:
            with np.errstate(invalid="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a query no answer reached: NaN, as its scores
                floor = np.nanquantile(log_words, serving.gate_length_floor, axis=1, keepdims=True)
            forgiven = np.where(np.isnan(floor), log_words, np.fmax(log_words, floor))
        length_gap = forgiven - log_words[:, [base]]
    with np.errstate(invalid="ignore"):
        logit = judged_logit(quality - quality[:, [base]], soft - soft[:, [base]], must - must[:, [base]],
                             gate, length_gap, slope, serving.gate_length_cap)  # fmt: skip
    logit[:, base] = np.where(np.isnan(quality[:, base]), np.nan, 0.0)
    return logit
