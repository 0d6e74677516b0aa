"""The anytime path (cross-encoder CRMs, or any CRM judged pair by pair): queries scored in growing batches, each
query's scores cached as it finishes, a board after every batch.

A query's answers are judged against the baseline's: a pairwise CRM in both orders (averaged), a pointwise one by
the difference of its scores. The CRM scores one query per turn (the engine's fair lock: concurrent jobs
alternate) and `should_stop` is asked before every turn, so Stop ends a job within one query.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

import numpy as np
from crm_core.cross_encoder.model import CrossEncoderScorer, softmax
from crm_core.spec import Pair

from usl_space.board import Leaderboard, rounded
from usl_space.cache import criteria_key, text_digest
from usl_space.engine import Engine


class AnytimeEngine(Engine):
    """Boards from cached per-pair scores, computed a batch of queries at a time."""

    @property
    def cross_encoder(self) -> CrossEncoderScorer:
        """The scorer as the pairwise path calls it (a cross-encoder CRM's)."""
        return cast(CrossEncoderScorer, self.scorer)

    @property
    def pointwise(self) -> bool:
        return self.scorer.spec.pointwise

    @property
    def cache_bench(self) -> str:
        """The bench part of a cache key: pairwise scores depend on the baseline, pointwise ones do not."""
        return self.bench.name if self.pointwise else f"{self.bench.name}@{self.baseline}"

    def _keys(self, ids: Sequence[int], models: Sequence[str]) -> list[tuple[int, str, str]]:
        keys = []
        for idx in ids:
            base = self.output.get((idx, self.baseline))
            if base is None:
                continue  # a query the baseline did not answer cannot be judged
            if self.pointwise:
                keys.append((idx, self.baseline, text_digest(self.query[idx], base)))
            for model in models:
                text = self.output.get((idx, model))
                if model == self.baseline or text is None:
                    continue
                parts = (self.query[idx], text) if self.pointwise else (self.query[idx], text, base)
                keys.append((idx, model, text_digest(*parts)))
        return keys

    def score(self, criteria: list[str], dislikes: list[str], ids: Sequence[int], models: Sequence[str],
              should_stop: Callable[[], bool] | None = None) -> dict:  # fmt: skip
        """Cached or freshly computed scores for every (query, model) in `ids` x `models`; a stopped call returns
        what it has."""
        name = criteria_key(criteria, dislikes)
        keys = self._keys(ids, models)
        found = self.cache.get(self.checkpoint, name, self.cache_bench, keys)
        by_query: dict[int, list[tuple]] = defaultdict(list)
        for key in keys:
            if (key[0], key[1]) not in found:
                by_query[key[0]].append(key)
        for query_keys in by_query.values():
            if should_stop is not None and should_stop():
                break
            with self.turns:
                rows = self._compute(criteria, dislikes, query_keys)
            self.cache.put(self.checkpoint, name, self.cache_bench, rows, self.uploaded)
            found.update({(i, m): (v, v2, t) for i, m, _, v, v2, t in rows})
        return found

    def _compute(self, criteria, dislikes, keys) -> list[tuple]:
        if self.pointwise:
            items = [(self.query[i], self.output[(i, m)]) for i, m, _ in keys]
            panel = getattr(self.scorer, "reference_models", None) or []
            panels = [[self.output[(i, p)] for p in panel if (i, p) in self.output] for i, _, _ in keys]
            values = self.scorer.score_points(criteria, dislikes, items, panels if panel else None)
            return [(i, m, d, float(v), None, None) for (i, m, d), v in zip(keys, values, strict=True)]
        pairs = [Pair(criteria, self.query[i], self.output[(i, m)], self.output[(i, self.baseline)], dislikes)
                 for i, m, _ in keys]  # fmt: skip
        first, second = self.cross_encoder.encode_pairs(pairs)
        probs = softmax(self.cross_encoder.logits(first + second, self.batch_size))
        ab, ba = probs[: len(first)], probs[len(first) :]
        tie = (ab[:, 2] + ba[:, 2]) / 2 if ab.shape[1] == 3 else [None] * len(keys)
        return [(i, m, d, float(a), float(b), None if t is None else float(t))
                for (i, m, d), a, b, t in zip(keys, ab[:, 0], ba[:, 1], tie, strict=True)]  # fmt: skip

    def outcomes(self, scores: dict, ids: Sequence[int], models: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(outcome, preference) matrices, queries x models: outcome 1 / 0 / 0.5 (tie), preference = P(model's
        response preferred to the baseline's); NaN where there is no response. The baseline's column is 0.5."""
        outcome = np.full((len(ids), len(models)), np.nan)
        preference = np.full_like(outcome, np.nan)
        for q, idx in enumerate(ids):
            for j, model in enumerate(models):
                if model == self.baseline:
                    if (idx, model) in self.output:
                        outcome[q, j] = preference[q, j] = 0.5
                    continue
                p, p_tie = self.preference(scores, idx, model)
                if p is None:
                    continue
                preference[q, j] = p
                if p_tie is not None and p_tie >= max(p, 1 - p - p_tie):
                    outcome[q, j] = 0.5
                else:
                    other = 1 - p - (p_tie or 0.0)
                    outcome[q, j] = 0.5 if abs(p - other) < 1e-9 else float(p > other)
        return outcome, preference

    def preference(self, scores: dict, idx: int, model: str) -> tuple[float | None, float | None]:
        """P(model's response preferred to the baseline's) for one query, and P(tie) for 3-way heads."""
        got = scores.get((idx, model))
        if got is None:
            return None, None
        if self.pointwise:
            base = scores.get((idx, self.baseline))
            if base is None:
                return None, None
            return 1 / (1 + math.exp(-(got[0] - base[0]))), None
        value, value2, tie = got
        return (value + value2) / 2, tie

    def board(self, scores: dict, ids: Sequence[int], models: list[str], criteria: list[str], dislikes: list[str],
              n_selected: int, started: float, bootstrap: int, seed: int) -> Leaderboard:  # fmt: skip
        """The board of `ids` x `models` from cached `scores`, with the position consistency of pairwise scores."""
        consistency = None
        if not self.pointwise:
            wanted_ids, wanted_models = set(ids), set(models)
            pairs = [v for (idx, model), v in scores.items() if idx in wanted_ids and model in wanted_models]
            if pairs:
                consistency = rounded(np.mean([(a > 0.5) == (b > 0.5) for a, b, _ in pairs]))
        return self.leaderboard(self.outcomes(scores, ids, models), ids, models, criteria, dislikes, n_selected,
                                started, bootstrap, seed, consistency)  # fmt: skip

    def _boards(self, criteria: list[str], dislikes: list[str], ordered: list[int], models: list[str],
                started: float, settings: dict[str, Any]) -> Iterator[Leaderboard]:  # fmt: skip
        if settings["side"] is not None:
            raise ValueError("fitted weights (a profile with votes) need a compositional CRM")
        bootstrap, seed, should_stop = settings["bootstrap"], settings["seed"], settings["should_stop"]

        def board(ids: list[int]) -> Leaderboard:
            return self.board(scores, ids, models, criteria, dislikes, len(ordered), started, bootstrap, seed)

        keys = self._keys(ordered, models)
        scores = self.cache.get(self.checkpoint, criteria_key(criteria, dislikes), self.cache_bench, keys)
        needed: dict[int, int] = defaultdict(int)
        models_of: dict[int, list[str]] = defaultdict(list)  # each query's judged models, to tell when it is done
        for idx, model, _ in keys:
            needed[idx] += (idx, model) not in scores
            models_of[idx].append(model)
        done = [idx for idx in ordered if needed[idx] == 0]
        todo = [idx for idx in ordered if needed[idx] > 0]
        if done or not todo:
            yield board(done)
        batch = settings["first_batch"]
        while todo:
            chunk, todo = todo[:batch], todo[batch:]
            scores.update(self.score(criteria, dislikes, chunk, models, should_stop))
            finished = [idx for idx in chunk if all((idx, m) in scores for m in models_of[idx])]
            done += finished
            if len(finished) < len(chunk):  # stopped: the board of what was scored is the last one
                if finished:
                    yield board(done)
                return
            yield board(done)
            batch = min(batch * 2, settings["max_batch"])

    def _fill(self, criteria: list[str], dislikes: list[str], mine: list[int], models: list[str],
              progress: str | None, batch_queries: int) -> None:  # fmt: skip
        from tqdm.auto import tqdm

        for start in tqdm(range(0, len(mine), batch_queries), desc=progress, disable=not progress, unit="batch"):
            self.score(criteria, dislikes, mine[start : start + batch_queries], models)

    def judge_one(self, criteria: list[str], dislikes: list[str], idx: int, model: str) -> tuple[float, str]:
        scores = self.score(criteria, dislikes, [idx], [model])
        p, _ = self.preference(scores, idx, model)
        if p is None:
            raise ValueError(f"{model} or the baseline did not answer query {idx}")
        value, value2, _ = scores[(idx, model)]
        if self.pointwise:
            return p, (f"pointwise CRM: scores {value:+.3f} vs {scores[(idx, self.baseline)][0]:+.3f}; order plays "
                       "no part")  # fmt: skip
        return p, f"{value:.3f} with it shown first, {value2:.3f} with it shown second"
