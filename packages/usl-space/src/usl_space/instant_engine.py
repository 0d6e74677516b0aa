"""The instant path (compositional CRMs): a whole board at once.

The bench's response side (usl_space.instant.ResponseTable) is loaded, or built once and saved; a criteria set is
then one encoding per criterion sentence and a matrix product over every stored answer, gated as
crm_core.compositional.judging says (criteria tune quality, they do not replace it). An upload's answers are
encoded once (at Add, `prepare_upload`) and join the table for that visitor's session.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar, cast

import numpy as np
from crm_core.compositional.heads import CriteriaSide, ResponseSide
from crm_core.compositional.judging import board_logits
from crm_core.compositional.scorer import CompositionalScorer
from crm_core.paths import cache_dir

from usl_space.board import Leaderboard, pointwise_matrices
from usl_space.engine import Engine, added_outputs, upload_digest
from usl_space.instant import PANEL_ROUNDS, ResponseTable, release_freed_memory, response_side_in_steps
from usl_space.progress import Progress
from usl_space.response_store import default_store


class InstantEngine(Engine):
    """Boards from the bench's response side, computed once per CRM and bench."""

    instant: ClassVar[bool] = True

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._table_lock = threading.Lock()  # the response table is built once
        self._table: ResponseTable | None = None
        self._uploads: dict[tuple[str, str], ResponseSide] = {}  # shared by the copies with_model makes
        self._build: list[Progress | None] = [None]  # the response side's build under way, shared by the copies

    @property
    def compositional(self) -> CompositionalScorer:
        return cast(CompositionalScorer, self.scorer)

    def side_checkpoint(self) -> str:
        """What the saved response side depends on: the CRM's response side, the consensus weight and the own
        panel's share (a bench without the reference panel's answers compares each answer with those of its own top
        models at that weight: usl_space.instant.own_panel)."""
        serving = self.compositional.serving
        consensus, share = serving.consensus_scale, serving.panel_share
        scale = f"-consensus{consensus:g}" if consensus else ""
        panel = f"-panel{share:g}x{PANEL_ROUNDS}" if consensus and share else ""
        return self.compositional.response_side_id + scale + panel

    def response_table(self, progress: bool = False) -> ResponseTable:
        """The bench's response side: loaded, or built once and saved. While it is being built, `building` says
        how far it got (for the app to show to whoever waits for it)."""
        with self._table_lock:
            if self._table is None:
                home = Path(self.cache.path).parent if self.cache.path != ":memory:" else cache_dir()
                models = set(self.bench.models)  # a property that queries the frame: once, not once per answer
                base = {k: v for k, v in self.output.items() if k[1] in models}
                self._build[0] = report = Progress("building the bench's response side (once per CRM and bench)",
                                                   len(base))  # fmt: skip
                try:
                    self._table = ResponseTable.open(home / "response-sides", self.compositional, self.query, base,
                                                     self.side_checkpoint(), self.bench.content_hash(),
                                                     progress, lambda: default_store(home), report)  # fmt: skip
                finally:
                    self._build[0] = None
                extra = {k: v for k, v in self.output.items() if k[1] not in models}
                if extra:
                    self._table = self._table.extended(self.compositional, self.query, extra, self.output)
            return self._table

    def warm(self, progress: bool = False) -> None:
        """The response side, its row index for the whole bench and the word counts every board's LC and length
        columns read (all criteria-free: 0.65 s of a first board on 2 cores otherwise)."""
        ids = self.order(None, 0)
        self.response_table(progress).rows(ids, self.models)
        self.words(ids, self.models)

    @property
    def table_ready(self) -> bool:
        return self._table is not None

    @property
    def own_panel(self) -> list[str] | None:
        """The bench's own panel its response side was built with (None: the named panel, or none)."""
        return self.response_table().panel

    @property
    def building(self) -> Progress | None:
        return self._build[0]

    def parts(self, criteria: list[str], dislikes: list[str], ids: list[int], models: list[str],
              side: CriteriaSide | None = None) -> tuple[np.ndarray, ...]:  # fmt: skip
        """(quality, soft criteria, must criteria, log2 words), queries x models, NaN where there is no answer;
        `side` (weights fitted from a visitor's votes, usl_space.taste) replaces what the criteria text gives."""
        table = self.response_table()
        if side is not None:  # fitted from every sentence (the profile's prior): nothing counted twice as a must
            soft, must = side, CriteriaSide(np.zeros_like(side.weights), np.zeros_like(side.voice))
        else:
            soft, must = self.compositional.criteria_sides(criteria, dislikes)
        rows = table.rows(ids, models)
        values = (table.side.quality, table.criteria_part(soft), table.criteria_part(must),
                  table.side.log_words(self.compositional.heads.spread))  # fmt: skip
        return tuple(np.where(rows >= 0, v[rows], np.nan) for v in values)

    def instant_matrices(self, criteria: list[str], dislikes: list[str], ids: list[int], models: list[str],
                         side: CriteriaSide | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """(outcome, preference), queries x models, for every answer at once (see usl_space.board)."""
        return self._gated(self.parts(criteria, dislikes, ids, models, side), models)

    def _gated(self, parts: tuple[np.ndarray, ...], models: list[str]) -> tuple[np.ndarray, np.ndarray]:
        quality, soft, must, log_words = parts
        base, scorer = models.index(self.baseline), self.compositional
        scaled = scorer.serving.gate_spread_reference or scorer.serving.gate_slope_reference
        spread = self.response_table().quality_spread(scorer.heads.spread) if scaled else None
        return pointwise_matrices(board_logits(quality, soft, must, log_words, base, scorer.serving, spread), base)

    def _boards(self, criteria: list[str], dislikes: list[str], ordered: list[int], models: list[str],
                started: float, settings: dict[str, Any]) -> Iterator[Leaderboard]:  # fmt: skip
        self.response_table()  # a first build takes minutes: not inside a turn
        with self.turns:  # never yield holding a turn
            matrices = self.instant_matrices(criteria, dislikes, ordered, models, settings["side"])
            board = self.leaderboard(matrices, ordered, models, criteria, dislikes, len(ordered), started,
                                     settings["bootstrap"], settings["seed"])  # fmt: skip
            if criteria or dislikes:  # the status line shows how they were read: read here, once, with the board
                board.reading = self.compositional.reading(criteria, dislikes)
        yield board

    def _fill(self, criteria: list[str], dislikes: list[str], mine: list[int], models: list[str],
              progress: str | None, batch_queries: int) -> None:  # fmt: skip
        self.warm(progress is not None)  # every score is computed when asked: only the response side ahead

    def judge_one(self, criteria: list[str], dislikes: list[str], idx: int, model: str) -> tuple[float, str]:
        models = [self.baseline, model]
        parts = self.parts(criteria, dislikes, [idx], models)  # once: the probability and its parts come from it
        _, preference = self._gated(parts, models)
        quality, soft, must, _ = (part[0, 1] - part[0, 0] for part in parts)
        if np.isnan(preference[0, 1]):
            raise ValueError(f"{model} or the baseline did not answer query {idx}")
        return float(preference[0, 1]), (f"compositional CRM, as the board counts it: quality {quality:+.2f}, "
                                         f"criteria {soft:+.2f}, musts {must:+.2f} (log-odds over the baseline's "
                                         "answer; a criterion fades where it would make a clearly worse answer "
                                         "win)")  # fmt: skip

    # -- uploads ----------------------------------------------------------------------------------------------
    def prepare_upload(self, name: str, outputs: dict[int, str], report: Progress | None = None,
                       should_stop: Callable[[], bool] | None = None, chunk: int = 128) -> bool:  # fmt: skip
        """Encode an upload's answers now, `chunk` at a time (`report` advanced after each, `should_stop` asked
        before each), so that `with_model` finds them; False when stopped (nothing kept)."""
        added = added_outputs(name, outputs)
        key = (name, upload_digest(added))
        if key not in self._uploads:
            side = response_side_in_steps(self.compositional, self.query, added, self.output, report, should_stop,
                                          chunk, own=self.response_table().panel)  # fmt: skip
            if side is None:
                return False
            self._uploads[key] = side
        return True

    def with_model(self, name: str, outputs: dict[int, str]) -> InstantEngine:
        """An upload's answers are encoded once per engine (`prepare_upload`); then it ranks like the others."""
        other = cast(InstantEngine, super().with_model(name, outputs))
        self.prepare_upload(name, outputs)
        added = added_outputs(name, outputs)
        other._table_lock = threading.Lock()
        other._table = self.response_table().extended(self.compositional, self.query, added, self.output,
                                                      self._uploads[(name, upload_digest(added))])  # fmt: skip
        return other

    def forget_uploads(self, uploads: dict[str, dict[int, str]] | None) -> None:
        for name, outputs in (uploads or {}).items():
            self._uploads.pop((name, upload_digest(added_outputs(name, outputs))), None)
        gc.collect()  # the visitor's engine copies and tables hold reference cycles
        release_freed_memory()
