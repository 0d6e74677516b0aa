"""The scoring engine: a criteria set in, a leaderboard out. One interface, `Engine`, and two paths behind it:

- `usl_space.instant_engine.InstantEngine` (compositional CRMs): the bench's response side, computed once, and every
  response scored by one matrix product: a whole board at once;
- `usl_space.anytime_engine.AnytimeEngine` (cross-encoders): queries in topic-stratified order (usl_space.ordering),
  scored in growing batches against the baseline (pairwise in both orders, averaged, or pointwise), one query per
  turn at the CRM (usl_space.scheduling: concurrent jobs alternate, Stop is seen between queries), cached
  (usl_space.cache): a board after every batch.
`usl_space.loading.make_engine` picks the path from the CRM's kind (crm_core.spec.CRMSpec.instant). Both hand
(outcome, preference) matrices to usl_space.board, which makes the rows with the statistics of usl_space.stats
(intervals, Rank (UB), length-controlled win rate). What the paths share (the bench, the cache, the CPU's turns,
the query order, baselines and uploads, checking a request, the board itself) lives here.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
from crm_core.compositional.heads import CriteriaSide
from crm_core.data import Bench
from crm_core.spec import Scorer

from usl_space.board import Leaderboard, board_rows
from usl_space.cache import ScoreCache, checkpoint_id, text_digest
from usl_space.ordering import stratified_order
from usl_space.progress import Progress
from usl_space.request import RankRequest
from usl_space.scheduling import FairLock
from usl_space.topics import TopicIndex


class Engine:
    """Scores one bench with one CRM into one cache. Safe to share between threads (the cache is). A subclass is
    one path: it says how a request becomes boards (`_boards`), what `fill` computes ahead (`_fill`) and how one
    answer is judged against the baseline's (`judge_one`)."""

    instant: ClassVar[bool] = False  # whether a whole board comes at once (the app waits for no batches)

    def __init__(self, bench: Bench, scorer: Scorer, cache: ScoreCache, topics: TopicIndex | None = None,
                 checkpoint: str | None = None, batch_size: int = 32):  # fmt: skip
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
        # the win rate follows the CRM's kind: weighted (mean P(preferred), as AlpacaEval 2.0) for a compositional
        # CRM, discrete (ties 1/2) for a cross-encoder, whichever path runs it
        self.weighted = scorer.spec.instant
        self._word_counts: dict[str, int] = {}  # by text, shared by the copies
        self._last_words: tuple[tuple, np.ndarray] | None = None

    # -- what a path provides ---------------------------------------------------------------------------------
    def _boards(self, criteria: list[str], dislikes: list[str], ordered: list[int], models: list[str],
                started: float, settings: dict[str, Any]) -> Iterator[Leaderboard]:  # fmt: skip
        """The boards for a checked request (`stream`'s settings: seed, first_batch, max_batch, bootstrap,
        should_stop, side), the last one final."""
        raise NotImplementedError

    def _fill(self, criteria: list[str], dislikes: list[str], mine: list[int], models: list[str],
              progress: str | None, batch_queries: int) -> None:  # fmt: skip
        """Compute ahead what boards over `mine` need (`progress`: a progress bar's label, None for none)."""
        raise NotImplementedError

    def judge_one(self, criteria: list[str], dislikes: list[str], idx: int, model: str) -> tuple[float, str]:
        """P(model's answer to query idx preferred to the baseline's), as the board counts it, and how it came
        about in words."""
        raise NotImplementedError

    def warm(self, progress: bool = False) -> None:
        """Load, or build, what every board needs before it can come quickly: nothing here."""

    @property
    def table_ready(self) -> bool:
        """Whether a board is a matter of a second (the instant path once its response side is in memory)."""
        return True

    @property
    def own_panel(self) -> list[str] | None:
        """The models whose answers each answer's quality is compared with on a bench without the CRM's reference
        panel (usl_space.instant.own_panel); None where there is none (here: this path compares none)."""
        return None

    @property
    def building(self) -> Progress | None:
        """A long build under way that boards wait for, if any (another thread may be running it)."""
        return None

    def prepare_upload(self, name: str, outputs: dict[int, str], report: Progress | None = None,
                       should_stop: Callable[[], bool] | None = None, chunk: int = 128) -> bool:  # fmt: skip
        """Do ahead what an upload needs before it ranks (False when stopped, nothing kept): nothing here."""
        return True

    def forget_uploads(self, uploads: dict[str, dict[int, str]] | None) -> None:
        """Free what was kept for these uploads ({name: {idx: text}}, as the app keeps them per visitor)."""

    # -- the bench as a visitor changes it ------------------------------------------------------------------
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
        other.output = {**self.output, **added_outputs(name, outputs)}
        other.models = [*self.models, name]
        return other

    @property
    def uploaded(self) -> frozenset[str]:
        """Models added by visitors (not on the bench): their scores are cached apart and expire."""
        return frozenset(self.models) - frozenset(self.bench.models)

    # -- which queries, in which order ------------------------------------------------------------------------
    def order(self, query_ids: Sequence[int] | None = None, seed: int = 0) -> list[int]:
        """The selected queries (all by default) in topic-stratified random order (usl_space.ordering)."""
        return stratified_order(self.query_ids.tolist() if query_ids is None else query_ids, self.topic_of, seed)

    def sample(self, n: int | None, seed: int = 0, query_ids: Sequence[int] | None = None) -> list[int]:
        """A topic-stratified random sample of `n` queries (all of them when n is None)."""
        ordered = self.order(query_ids, seed)
        return ordered if n is None else ordered[:n]

    # -- from matrices to a leaderboard -------------------------------------------------------------------------
    def leaderboard(self, matrices: tuple[np.ndarray, np.ndarray], ids: Sequence[int], models: Sequence[str],
                    criteria: list[str], dislikes: list[str], n_selected: int, started: float, bootstrap: int = 1000,
                    seed: int = 0, consistency: float | None = None) -> Leaderboard:  # fmt: skip
        """The leaderboard of `ids` x `models` from their (outcome, preference) matrices (usl_space.board)."""
        outcome, preference = matrices
        topic_of = np.array([self.topic_of.get(i, "All") for i in ids], dtype=object)
        rows = board_rows(outcome, preference, self.words(ids, models), topic_of, list(models), self.baseline,
                          self.weighted, bootstrap, seed)  # fmt: skip
        return Leaderboard(rows, criteria, dislikes, self.bench.name, self.baseline, self.checkpoint, len(ids),
                           n_selected, time.perf_counter() - started, sorted(set(topic_of.tolist())), consistency,
                           "weighted" if self.weighted else "discrete")  # fmt: skip

    def words(self, ids: Sequence[int], models: Sequence[str]) -> np.ndarray:
        """Word counts of the responses, queries x models (0 where there is none): each text counted once, the
        last matrix kept (a new criteria set over the same queries and models reuses it)."""
        key = (tuple(ids), tuple(models))
        last = self._last_words  # (key, matrix), replaced whole: safe to share between threads
        if last is None or last[0] != key:
            counts, matrix = self._word_counts, np.zeros((len(ids), len(models)))
            for row, i in enumerate(ids):
                for column, m in enumerate(models):
                    text = self.output.get((i, m))
                    if text is not None:
                        if text not in counts:
                            counts[text] = len(text.split())
                        matrix[row, column] = counts[text]
            last = self._last_words = (key, matrix)
        return last[1]

    # -- requests ---------------------------------------------------------------------------------------------
    def _models_for(self, models: Sequence[str] | None) -> list[str]:
        """The models a request ranks (all by default), the baseline always among them; an unknown one is an
        error."""
        chosen = list(models) if models is not None else self.models
        unknown = sorted(set(chosen) - set(self.models))
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; the bench has {len(self.models)} models")
        return chosen if self.baseline in chosen else [self.baseline, *chosen]

    def stream_request(self, request: RankRequest, first_batch: int = 1, max_batch: int = 16, bootstrap: int = 1000,
                       should_stop: Callable[[], bool] | None = None,
                       side: CriteriaSide | None = None) -> Iterator[Leaderboard]:  # fmt: skip
        """Leaderboards for a checked request as they come (the instant path: one; the anytime path: from whatever
        the cache holds, then after every batch of queries, batches doubling from `first_batch` to `max_batch`), the
        last one over every selected query. Its criteria were cleaned when it was made (RankRequest.checked): not
        again here. `side`: weights fitted from a visitor's votes (usl_space.taste) instead of the criteria text's."""
        started = time.perf_counter()
        engine = self.for_request(request)
        models = engine._models_for(request.models)
        settings = {"seed": request.seed, "first_batch": first_batch, "max_batch": max_batch, "bootstrap": bootstrap,
                    "should_stop": should_stop, "side": side}  # fmt: skip
        yield from engine._boards(list(request.criteria), list(request.dislikes), engine.request_ids(request), models,
                                  started, settings)  # fmt: skip

    def stream(self, criteria: Sequence[str] = (), dislikes: Sequence[str] = (),
               query_ids: Sequence[int] | None = None, models: Sequence[str] | None = None, seed: int = 0,
               **settings: Any) -> Iterator[Leaderboard]:  # fmt: skip
        """`stream_request` for loose arguments (scripts, tests): they become one RankRequest first, the one place
        criteria are cleaned."""
        request = RankRequest.checked(criteria, dislikes, query_ids, models, seed=seed)
        yield from self.stream_request(request, **settings)

    def for_request(self, request: RankRequest) -> Engine:
        """This engine, judged against the request's baseline."""
        wanted = request.baseline
        return self.with_baseline(wanted) if wanted and wanted != self.baseline else self

    def request_ids(self, request: RankRequest) -> list[int]:
        """The request's queries in the order they are scored: its sample of its selection."""
        return self.sample(request.n_queries, request.seed, request.query_ids)

    def rank(self, criteria: Sequence[str] = (), dislikes: Sequence[str] = (), **kwargs: Any) -> Leaderboard:
        """The final leaderboard (every selected query scored)."""
        boards = list(self.stream(criteria, dislikes, **kwargs))
        return boards[-1]

    def fill(self, criteria: Sequence[str], dislikes: Sequence[str], query_ids: Sequence[int], shard: int = 0,
             shards: int = 1, models: Sequence[str] | None = None, progress: bool = False,
             batch_queries: int = 16) -> int:  # fmt: skip
        """Compute this shard's share of the queries (every `shards`-th of the ordered ids) ahead, for `accelerate
        launch`; returns how many queries it covered."""
        request = RankRequest.checked(criteria, dislikes, models=models)
        mine = sorted(int(i) for i in query_ids)[shard::shards]
        self._fill(list(request.criteria), list(request.dislikes), mine, self._models_for(request.models),
                   f"shard {shard}" if progress else None, batch_queries)  # fmt: skip
        return len(mine)


def added_outputs(name: str, outputs: dict[int, str]) -> dict[tuple[int, str], str]:
    """An upload's answers keyed as the bench's are, (idx, model)."""
    return {(int(idx), name): text for idx, text in outputs.items()}


def upload_digest(added: dict[tuple[int, str], str]) -> str:
    """What identifies an upload's answers (an upload of the same name and other answers is another)."""
    return text_digest(*(f"{i}\x00{t}" for (i, _), t in sorted(added.items())))
