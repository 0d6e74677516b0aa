"""The scoring engine: a criteria set in, a leaderboard out, at once (instant path) or batch by batch (anytime).

The engine is the conductor; each job lives in its own module:
- the CRM's kind picks the path, in one place (`Engine.__init__`, from crm_core.model.CRMSpec.instant);
- instant path (compositional CRMs): the bench's response side, computed once (usl_space.instant), and every
  response scored by one matrix product;
- anytime path (cross-encoders): queries in topic-stratified order (usl_space.ordering), scored in growing
  batches against the baseline (pairwise in both orders, averaged, or pointwise), one query per turn at the CRM
  (usl_space.scheduling: concurrent jobs alternate, Stop is seen between queries), cached (usl_space.cache);
- both hand (outcome, preference) matrices to usl_space.board, which makes the rows with the statistics of
  usl_space.stats (intervals, Rank (UB), length-controlled win rate).
Over 400 lines because the two paths still share one class, branching on `instant`; splitting them into two
rankers behind one interface is the next step of the codebase work.
"""

from __future__ import annotations

import copy
import gc
import math
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
from crm_core.compositional import CompositionalScorer, CriteriaSide, ResponseSide
from crm_core.data import Bench
from crm_core.guard import check_criteria
from crm_core.model import CrossEncoderScorer, softmax
from crm_core.paths import cache_dir
from crm_core.spec import Pair, Scorer

from usl_space.board import Leaderboard, board_rows, gated_matrices, rounded
from usl_space.cache import ScoreCache, checkpoint_id, normalise_criteria, text_digest
from usl_space.instant import ResponseTable, release_freed_memory, response_side_in_steps, response_side_of
from usl_space.ordering import stratified_order
from usl_space.progress import Progress
from usl_space.response_store import default_store
from usl_space.scheduling import FairLock
from usl_space.topics import TopicIndex


class Engine:
    """Scores one bench with one CRM into one cache. Safe to share between threads (the cache is)."""

    def __init__(
        self,
        bench: Bench,
        scorer: Scorer,
        cache: ScoreCache,
        topics: TopicIndex | None = None,
        checkpoint: str | None = None,
        batch_size: int = 32,
    ):
        self.bench, self.scorer, self.cache, self.batch_size = bench, scorer, cache, batch_size
        self.checkpoint = checkpoint or checkpoint_id(scorer.folder, scorer.weights_file)
        self.baseline = bench.baseline
        self.models = list(bench.models)
        self.query = bench.instructions()
        self.output = bench.outputs()
        self.query_ids = np.array(sorted(self.query), dtype=np.int64)
        self.topics = topics
        topic_names = topics.topic if topics is not None else np.full(len(self.query_ids), "All")
        source_ids = topics.idx if topics is not None else self.query_ids
        self.topic_of = dict(zip(source_ids.tolist(), topic_names.tolist(), strict=True))
        # the CPU's turns, first come first served, shared by the copies: one query of one job at the CRM (anytime
        # path), or one job's whole board (instant path); the app draws a finished board in a turn too, so busy
        # jobs queue here instead of contending for the interpreter with cached views
        self.turns = FairLock()
        self._table_lock = threading.Lock()  # the instant path's response table is built once
        # the one place the CRM's kind picks the path: instant (compositional) or anytime (cross-encoder), and
        # with it the win rate: weighted (mean P(preferred), as AlpacaEval 2.0) or discrete (ties 1/2)
        self.instant = scorer.spec.instant
        self.weighted = self.instant
        self._table: ResponseTable | None = None
        self._uploads: dict[tuple[str, str], ResponseSide] = {}  # shared by the copies with_model makes
        self._build: list[Progress | None] = [None]  # the response side's build under way, shared by the copies
        self._word_counts: dict[str, int] = {}  # by text, shared by the copies

    # -- the instant path (compositional CRMs) ----------------------------------------------------------------
    def response_table(self, progress: bool = False) -> ResponseTable:
        """The bench's response side for the compositional CRM: loaded, or built once and saved. While it is being
        built, `building` says how far it got (for the app to show to whoever waits for it)."""
        with self._table_lock:
            if self._table is None:
                home = Path(self.cache.path).parent if self.cache.path != ":memory:" else cache_dir()
                folder = home / "response-sides"
                models = set(self.bench.models)  # a property that queries the frame: once, not once per answer
                base = {k: v for k, v in self.output.items() if k[1] in models}
                self._build[0] = report = Progress("building the bench's response side (once per CRM and bench)",
                                                   len(base))  # fmt: skip
                try:
                    self._table = ResponseTable.open(folder, self.compositional, self.query, base,
                                                     self.compositional.response_side_id, self.bench.content_hash(),
                                                     progress, lambda: default_store(home), report)  # fmt: skip
                finally:
                    self._build[0] = None
                extra = {k: v for k, v in self.output.items() if k[1] not in models}
                if extra:
                    self._table = self._table.extended(self.compositional, self.query, extra, self.output)
            return self._table

    def instant_matrices(self, criteria: list[str], dislikes: list[str], ids: Sequence[int], models: Sequence[str],
                         side: CriteriaSide | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """(outcome, preference), queries x models, for every response at once (see usl_space.board); `side`
        (weights fitted from a visitor's votes, usl_space.taste) replaces what the criteria text gives."""
        table = self.response_table()
        if side is not None:  # fitted from every sentence (the profile's prior): nothing counted twice as a must
            soft, must = side, CriteriaSide(np.zeros_like(side.weights), np.zeros_like(side.voice))
        else:
            soft, must = self.compositional.criteria_sides(criteria, dislikes)
        rows = table.rows(ids, models)

        def per_response(values: np.ndarray) -> np.ndarray:
            return np.where(rows >= 0, values[rows], np.nan)

        side_parts = (table.side.quality, table.criteria_part(soft), table.criteria_part(must),
                      table.side.log_words(self.compositional.heads.spread))  # fmt: skip
        quality, soft_part, must_part, log_words = (per_response(v) for v in side_parts)
        crm = self.compositional
        return gated_matrices(quality, soft_part, must_part, list(models).index(self.baseline), crm.quality_gate,
                              log_words, crm.gate_length_slope)  # fmt: skip

    @property
    def compositional(self) -> CompositionalScorer:
        """The scorer as the instant path calls it (only an engine whose CRM is instant does)."""
        return cast(CompositionalScorer, self.scorer)

    @property
    def cross_encoder(self) -> CrossEncoderScorer:
        """The scorer as the pairwise anytime path calls it (a cross-encoder CRM's)."""
        return cast(CrossEncoderScorer, self.scorer)

    @property
    def table_ready(self) -> bool:
        """Whether the instant path's response side is in memory (a board is then a matter of a second)."""
        return self._table is not None

    @property
    def building(self) -> Progress | None:
        """The response side's build under way, if any (another thread may be running it)."""
        return self._build[0]

    def prepare_upload(self, name: str, outputs: dict[int, str], report: Progress | None = None,
                       should_stop: Callable[[], bool] | None = None, chunk: int = 128) -> bool:  # fmt: skip
        """Encode an upload's responses now, `chunk` at a time (`report` advanced after each, `should_stop` asked
        before each), so that `with_model` finds them; False when stopped (nothing kept). The anytime path has
        nothing to prepare."""
        if not self.instant:
            return True
        added = {(int(idx), name): text for idx, text in outputs.items()}
        key = (name, _upload_digest(added))
        if key not in self._uploads:
            side = response_side_in_steps(self.compositional, self.query, added, self.output, report, should_stop,
                                          chunk)  # fmt: skip
            if side is None:
                return False
            self._uploads[key] = side
        return True

    def with_baseline(self, baseline: str) -> Engine:
        """The same bench, CRM and cache, judged against another of its models."""
        if baseline not in self.models:
            raise ValueError(f"unknown baseline {baseline!r}; the bench has {len(self.models)} models")
        other = copy.copy(self)
        other.baseline = baseline
        return other

    def with_model(self, name: str, outputs: dict[int, str]) -> Engine:
        """The same engine plus one more model's responses (an upload), for one visitor's session."""
        if name in self.models:
            raise ValueError(f"a model named {name!r} is already on the bench; rename the upload")
        unknown = sorted(set(outputs) - set(self.query))
        if unknown:
            raise ValueError(f"responses to unknown queries {unknown[:5]}")
        other = copy.copy(self)
        added = {(int(idx), name): text for idx, text in outputs.items()}
        other.output = {**self.output, **added}
        other.models = [*self.models, name]
        if self.instant:  # an upload's responses are encoded once per engine; then it ranks like the others
            key = (name, _upload_digest(added))
            if key not in self._uploads:
                self._uploads[key] = response_side_of(self.compositional, self.query, added, self.output)
            other._table_lock = threading.Lock()
            other._table = self.response_table().extended(self.compositional, self.query, added, self.output,
                                                          self._uploads[key])  # fmt: skip
        return other

    @property
    def uploaded(self) -> frozenset[str]:
        """Models added by visitors (not on the bench): their scores are cached apart and expire."""
        return frozenset(self.models) - frozenset(self.bench.models)

    def forget_uploads(self, uploads: dict[str, dict[int, str]] | None) -> None:
        """Free the encoded responses of these uploads ({name: {idx: text}}, as the app keeps them per visitor)."""
        for name, outputs in (uploads or {}).items():
            added = {(int(idx), name): text for idx, text in outputs.items()}
            self._uploads.pop((name, _upload_digest(added)), None)
        gc.collect()  # the visitor's engine copies and tables hold reference cycles
        release_freed_memory()

    # -- which queries, in which order ------------------------------------------------------------------------
    def order(self, query_ids: Sequence[int] | None = None, seed: int = 0) -> list[int]:
        """The selected queries (all by default) in topic-stratified random order (usl_space.ordering)."""
        return stratified_order(self.query_ids.tolist() if query_ids is None else query_ids, self.topic_of, seed)

    def sample(self, n: int | None, seed: int = 0, query_ids: Sequence[int] | None = None) -> list[int]:
        """A topic-stratified random sample of `n` queries (all of them when n is None)."""
        ordered = self.order(query_ids, seed)
        return ordered if n is None else ordered[:n]

    # -- scoring ----------------------------------------------------------------------------------------------
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
        """Cached or freshly computed scores for every (query, model) in `ids` x `models`. The CRM scores one
        query per turn (a fair lock: concurrent jobs alternate), each query's scores are cached as it finishes, and
        `should_stop` is asked before every turn: a stopped call returns what it has."""
        name = normalise_criteria(criteria, dislikes)
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

    # -- from scores to a leaderboard ---------------------------------------------------------------------------
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

    def leaderboard(
        self,
        scores: dict,
        ids: Sequence[int],
        models: Sequence[str],
        criteria: list[str],
        dislikes: list[str],
        n_selected: int,
        started: float,
        bootstrap: int = 1000,
        seed: int = 0,
        matrices: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> Leaderboard:
        """The leaderboard of `ids` x `models` from cached `scores`, or from ready (outcome, preference)
        `matrices` (the instant path)."""
        outcome, preference = matrices if matrices is not None else self.outcomes(scores, ids, models)
        topic_of = np.array([self.topic_of.get(i, "All") for i in ids], dtype=object)
        rows = board_rows(outcome, preference, self.words(ids, models), topic_of, list(models), self.baseline,
                          self.weighted, bootstrap, seed)  # fmt: skip
        consistency = None
        if not self.pointwise:
            wanted_ids, wanted_models = set(ids), set(models)
            pairs = [v for (idx, model), v in scores.items() if idx in wanted_ids and model in wanted_models]
            if pairs:
                consistency = rounded(np.mean([(a > 0.5) == (b > 0.5) for a, b, _ in pairs]))
        return Leaderboard(rows, criteria, dislikes, self.bench.name, self.baseline, self.checkpoint, len(ids),
                           n_selected, time.perf_counter() - started, sorted(set(topic_of.tolist())), consistency,
                           "weighted" if self.weighted else "discrete")  # fmt: skip

    def words(self, ids: Sequence[int], models: Sequence[str]) -> np.ndarray:
        """Word counts of the responses, queries x models (0 where there is none); counted once per text."""
        counts = self._word_counts
        for key in ((i, m) for i in ids for m in models):
            text = self.output.get(key)
            if text is not None and text not in counts:
                counts[text] = len(text.split())
        return np.array([[counts.get(self.output.get((i, m), ""), 0) for m in models] for i in ids], dtype=float)

    def _request(self, criteria, dislikes, models) -> tuple[list[str], list[str], list[str]]:
        """Checked criteria and dislikes, and the models to rank (the baseline always among them)."""
        criteria, dislikes = check_criteria(criteria), check_criteria(dislikes, "dislikes")
        models = list(models) if models is not None else self.models
        unknown = sorted(set(models) - set(self.models))
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; the bench has {len(self.models)} models")
        return criteria, dislikes, models if self.baseline in models else [self.baseline, *models]

    def stream(
        self,
        criteria: Sequence[str] = (),
        dislikes: Sequence[str] = (),
        query_ids: Sequence[int] | None = None,
        models: Sequence[str] | None = None,
        seed: int = 0,
        first_batch: int = 1,
        max_batch: int = 16,
        bootstrap: int = 1000,
        should_stop: Callable[[], bool] | None = None,
        side: CriteriaSide | None = None,
    ) -> Iterator[Leaderboard]:
        """Anytime leaderboards: first from whatever the cache holds, then after every batch of queries
        (batches double from `first_batch` to `max_batch`), until every selected query is scored."""
        started = time.perf_counter()
        criteria, dislikes, models = self._request(criteria, dislikes, models)
        ordered = self.order(query_ids, seed)
        if self.instant:
            self.response_table()  # a first build takes minutes: not inside a turn
            with self.turns:  # never yield holding a turn
                matrices = self.instant_matrices(criteria, dislikes, ordered, models, side)
                board = self.leaderboard({}, ordered, models, criteria, dislikes, len(ordered), started, bootstrap,
                                         seed, matrices)  # fmt: skip
            yield board
            return
        if side is not None:
            raise ValueError("fitted weights (a profile with votes) need a compositional CRM")
        name = normalise_criteria(criteria, dislikes)
        keys = self._keys(ordered, models)
        scores = self.cache.get(self.checkpoint, name, self.cache_bench, keys)
        needed: dict[int, int] = defaultdict(int)
        models_of: dict[int, list[str]] = defaultdict(list)  # each query's judged models, to tell when it is done
        for idx, model, _ in keys:
            needed[idx] += (idx, model) not in scores
            models_of[idx].append(model)
        done = [idx for idx in ordered if needed[idx] == 0]
        todo = [idx for idx in ordered if needed[idx] > 0]
        if done or not todo:
            yield self.leaderboard(scores, done, models, criteria, dislikes, len(ordered), started, bootstrap, seed)
        batch = first_batch
        while todo:
            chunk, todo = todo[:batch], todo[batch:]
            scores.update(self.score(criteria, dislikes, chunk, models, should_stop))
            finished = [idx for idx in chunk if all((idx, m) in scores for m in models_of[idx])]
            done += finished
            if len(finished) < len(chunk):  # stopped: the board of what was scored is the last one
                if finished:
                    yield self.leaderboard(scores, done, models, criteria, dislikes, len(ordered), started, bootstrap,
                                           seed)  # fmt: skip
                return
            yield self.leaderboard(scores, done, models, criteria, dislikes, len(ordered), started, bootstrap, seed)
            batch = min(batch * 2, max_batch)

    def rank(self, criteria: Sequence[str] = (), dislikes: Sequence[str] = (), **kwargs: Any) -> Leaderboard:
        """The final leaderboard (every selected query scored)."""
        boards = list(self.stream(criteria, dislikes, **kwargs))
        return boards[-1]

    def fill(self, criteria: Sequence[str], dislikes: Sequence[str], query_ids: Sequence[int], shard: int = 0,
             shards: int = 1, models: Sequence[str] | None = None, progress: bool = False,
             batch_queries: int = 16) -> int:  # fmt: skip
        """Score this shard's share of the queries (every `shards`-th of the ordered ids) into the cache; the
        sharded counterpart of `stream`, for `accelerate launch`. Returns how many queries it covered."""
        from tqdm.auto import tqdm

        criteria, dislikes, models = self._request(criteria, dislikes, models)
        mine = sorted(int(i) for i in query_ids)[shard::shards]
        if self.instant:  # nothing to fill: every score is computed when asked; build the response side once
            self.response_table(progress=progress)
            return len(mine)
        for start in tqdm(range(0, len(mine), batch_queries), desc=f"shard {shard}", disable=not progress,
                          unit="batch"):  # fmt: skip
            self.score(criteria, dislikes, mine[start : start + batch_queries], models)
        return len(mine)


def _upload_digest(added: dict[tuple[int, str], str]) -> str:
    return text_digest(*(f"{i}\x00{t}" for (i, _), t in sorted(added.items())))
