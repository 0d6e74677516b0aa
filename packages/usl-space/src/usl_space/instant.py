"""Instant leaderboards for a compositional CRM: the bench's response side, computed once, saved beside the cache.

Everything a compositional score needs from a response (scaled properties, quality, projected embedding) does
not depend on the criteria. `ResponseTable.open` loads it from `<cache dir>/response-sides/`, keyed by the CRM's
response-side id (its heads, encoder and reference model; serving settings in crm.json leave it valid) and the
bench's content hash (a file made for another CRM or another bench is refused with a
message, never used), or builds it with a progress bar and writes it atomically. A criteria set is then one
encoding per criterion and a matrix product over every stored response.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from crm_core.atomic import atomic_file
from crm_core.compositional.heads import CompositionalHeads, CriteriaSide, ResponseSide
from crm_core.compositional.judging import quality_spread
from crm_core.compositional.scorer import CompositionalScorer

from usl_space.progress import Progress

FORMAT = 1
# how many times a bench without the CRM's reference panel chooses its own (own_panel), each time from the board the
# last choice gave: a second choice picked the same panel on AlpacaEval's training half and MT-bench
# (training/experiments/consensus_reference.py), so one
PANEL_ROUNDS = 1


def named_panels(scorer: CompositionalScorer, keys: Sequence[tuple[int, str]],
                 reference_outputs: dict[tuple[int, str], str]) -> tuple[list[list[str]] | None, bool]:  # fmt: skip
    """(per key, the answers of the CRM's named reference panel to its query, or None for a CRM without one;
    whether the bench holds them: for at least half of the keys, as AlpacaEval does)."""
    if not scorer.reference_models:
        return None, False
    panel = scorer.reference_models
    named = [[reference_outputs[(i, p)] for p in panel if (i, p) in reference_outputs] for i, _ in keys]
    return named, 2 * sum(map(bool, named)) >= len(keys)


def panels_of(scorer: CompositionalScorer, keys: Sequence[tuple[int, str]],
              reference_outputs: dict[tuple[int, str], str],
              own: Sequence[str] | None = None) -> tuple[list[list[str]] | None, float]:  # fmt: skip
    """Per (idx, model) key, the answers to query idx its quality term is compared with, and the weight of that
    comparison: the CRM's reference panel where the bench holds the panel's answers (AlpacaEval), else, for a CRM
    with a `consensus_scale`, the answers of the bench to the same query (its own skipped by the scorer), weighed
    at that scale: those of the models in `own` (the bench's own panel, `own_panel`), or, without it, every one (a
    leave-one-out consensus that names no model)."""
    named, held = named_panels(scorer, keys, reference_outputs)
    if held:
        return named, 1.0
    if scorer.serving.consensus_scale > 0:
        chosen = None if own is None else set(own)
        by_query: dict[int, list[str]] = {}
        for (i, m), text in sorted(reference_outputs.items()):
            if chosen is None or m in chosen:
                by_query.setdefault(i, []).append(text)
        return [by_query.get(i, []) for i, _ in keys], scorer.serving.consensus_scale
    return named, 1.0


def wants_own_panel(scorer: CompositionalScorer, keys: Sequence[tuple[int, str]],
                    reference_outputs: dict[tuple[int, str], str]) -> bool:  # fmt: skip
    """Whether this bench's answers are compared with a panel of its own models (`own_panel`): it lacks the CRM's
    reference panel, and the CRM compares with the bench's answers (`consensus_scale`) at a `panel_share`."""
    serving = scorer.serving
    if serving.consensus_scale <= 0 or serving.panel_share <= 0:
        return False
    return not named_panels(scorer, keys, reference_outputs)[1]


def own_panel(quality: np.ndarray, keys: Sequence[tuple[int, str]], share: float) -> list[str]:
    """The bench's own panel: the top `share` of its models (at least two) on a criteria-free board whose score is
    each model's mean quality above the mean of its query's answers (no baseline and no model named: which models
    are in it depends only on the answers). Compared with these rather than with every answer, an answer is not
    pulled toward the bench's weakest entries and its junk (training/experiments/consensus_reference.py, AlpacaEval's
    training half without its reference panel: tau vs LC 0.677 -> 0.697 at a share of 0.5; 0.33: 0.687, 0.67:
    0.681)."""
    idx = np.array([i for i, _ in keys])
    _, query, count = np.unique(idx, return_inverse=True, return_counts=True)
    above = quality - np.bincount(query, weights=quality)[query] / count[query]
    names = sorted({m for _, m in keys})
    where = {m: n for n, m in enumerate(names)}
    model = np.array([where[m] for _, m in keys])
    score = np.bincount(model, weights=above, minlength=len(names)) / np.bincount(model, minlength=len(names))
    ranked = [names[n] for n in np.argsort(-score, kind="stable")]
    return sorted(ranked[: max(2, round(share * len(names)))])


def response_side_of(
    scorer: CompositionalScorer,
    query: dict[int, str],
    outputs: dict[tuple[int, str], str],
    reference_outputs: dict[tuple[int, str], str],
    progress: bool = False,
    own: Sequence[str] | None = None,
) -> ResponseSide:
    """The response side of `outputs`, rows in sorted (idx, model) order; the reference panel's answers come from
    `reference_outputs` (the bench), those of the models in `own` where it has its own panel (`panels_of`)."""
    side = response_side_in_steps(
        scorer, query, outputs, reference_outputs, chunk=max(len(outputs), 1), progress=progress, own=own
    )
    assert side is not None  # nothing asked it to stop
    return side


def response_side_in_steps(scorer: CompositionalScorer, query: dict[int, str],
                           outputs: dict[tuple[int, str], str], reference_outputs: dict[tuple[int, str], str],
                           report: Progress | None = None, should_stop: Callable[[], bool] | None = None,
                           chunk: int = 128, progress: bool = False,
                           own: Sequence[str] | None = None) -> ResponseSide | None:  # fmt: skip
    """`response_side_of`, `chunk` responses at a time: `report` advances after each step, `should_stop` is asked
    before each (None returned when it said stop)."""
    keys = sorted(outputs)
    panels, scale = panels_of(scorer, keys, reference_outputs, own)
    parts = []
    for start in range(0, len(keys), chunk):
        if should_stop is not None and should_stop():
            return None
        part = keys[start : start + chunk]
        parts.append(scorer.response_side([query[i] for i, _ in part], [outputs[k] for k in part],
                                          panels[start : start + chunk] if panels else None, progress,
                                          reference_scale=scale))  # fmt: skip
        if report is not None:
            report.advance(start + len(part))
    return joined(parts)


def passes_of(scorer: CompositionalScorer, output: dict[tuple[int, str], str]) -> int:
    """How many builds a bench's response side takes: PANEL_ROUNDS + 1 where it gets its own panel, else one."""
    return 1 + PANEL_ROUNDS * wants_own_panel(scorer, sorted(output), output)


def bench_side(scorer: CompositionalScorer, query: dict[int, str], output: dict[tuple[int, str], str],
               progress: bool = False, store=None,
               report: Progress | None = None) -> tuple[ResponseSide, list[str] | None, int]:  # fmt: skip
    """A whole bench's response side, rows in sorted (idx, model) order, its own panel (None where it has none)
    and how many rows were computed (through `store`, usl_space.response_store, those it lacked; else all). A
    bench without the CRM's reference panel (`wants_own_panel`) is built PANEL_ROUNDS + 1 times: first each
    answer compared with every other, then, each time, with the panel of its own models that the last build ranks
    highest (`own_panel`); through a store the encodings are made once. The app's table and `usl-data sides` (a
    store to publish) both build so, so a published store holds the rows the app reads."""
    keys = sorted(output)
    passes = passes_of(scorer, output)
    what = report.what if report is not None else ""
    panel: list[str] | None = None
    computed = 0
    for step in range(passes):
        if report is not None and passes > 1:
            report.what = f"{what}, pass {step + 1} of {passes}" + (": compared with its top models" if step else "")
            report.started, report.done = time.perf_counter(), 0
        if store is not None:
            side, new = store.side(scorer, query, output, output, progress, report, own=panel)
            computed += new
        else:
            if report is not None:
                report.total = len(keys)
            stepped = response_side_in_steps(scorer, query, output, output, report, chunk=2048, progress=progress,
                                             own=panel)  # fmt: skip
            assert stepped is not None  # nothing asked it to stop
            side, computed = stepped, computed + len(keys)
        if step + 1 < passes:
            panel = own_panel(side.quality, keys, scorer.serving.panel_share)
    return side, panel, computed


def joined(sides: Sequence[ResponseSide]) -> ResponseSide:
    """Several response sides as one, rows in order."""
    return ResponseSide(*(np.concatenate([getattr(s, name) for s in sides]) for name in ("z", "quality", "voice")))


def release_freed_memory() -> None:
    """Hand the heap pages freed after a big encoding back to the OS (glibc keeps them otherwise, and the app's
    resident memory would stay at the build's peak); a no-op where glibc is absent."""
    import contextlib
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


class StaleTableError(ValueError):
    """A saved response side that belongs to another CRM, bench or format."""


@dataclass
class ResponseTable:
    """Row r is the response of `models[r]` to query `idx[r]`."""

    idx: np.ndarray
    models: list[str]
    side: ResponseSide
    checkpoint: str
    bench_hash: str
    seconds: float = 0.0  # how long building it took (0 when loaded)
    panel: list[str] | None = None  # the bench's own panel (own_panel) its quality was compared with, if any
    _row_of: dict | None = field(default=None, init=False, repr=False)
    _last_rows: tuple | None = field(default=None, init=False, repr=False)
    _spread: tuple[float, float] | None = field(default=None, init=False, repr=False)
    _bench_rows: int | None = field(default=None, init=False, repr=False)  # rows before any upload (None: all)

    def row_of(self) -> dict[tuple[int, str], int]:
        if self._row_of is None:
            self._row_of = {(int(i), m): r for r, (i, m) in enumerate(zip(self.idx, self.models, strict=True))}
        return self._row_of

    def rows(self, ids: Sequence[int], models: Sequence[str]) -> np.ndarray:
        """Row numbers, queries x models, -1 where the table has no such response (the last answer is kept)."""
        key = (tuple(ids), tuple(models))
        last = self._last_rows  # (key, rows), replaced whole: safe to share between threads
        if last is None or last[0] != key:
            row_of = self.row_of()
            last = (key, np.array([[row_of.get((int(i), m), -1) for m in models] for i in ids], dtype=np.int64))
            self._last_rows = last
        return last[1]

    def quality_spread(self, words_spread: np.ndarray) -> tuple[float, float]:
        """The quality term's spread and length slope over the bench's answers (judging.quality_spread: what the
        gate is scaled by), computed once; a table extended by an upload keeps its bench's."""
        if self._spread is None:
            n = self._bench_rows or len(self.idx)
            self._spread = quality_spread(self.idx[:n], self.side.quality[:n], self.side.log_words(words_spread)[:n])
        return self._spread

    def criteria_part(self, crit: CriteriaSide) -> np.ndarray:
        """What a criteria side adds to every stored response's score (quality left out)."""
        return CompositionalHeads.scores(self.side, crit, with_quality=False)

    # -- building, saving, loading ------------------------------------------------------------------------------
    @classmethod
    def build(cls, scorer: CompositionalScorer, query: dict[int, str], output: dict[tuple[int, str], str],
              checkpoint: str, bench_hash: str, progress: bool = False, store=None,
              report: Progress | None = None) -> ResponseTable:  # fmt: skip
        """The bench's response side (`bench_side`: through `store`, usl_space.response_store, where given: rows it
        holds are reused, the rest computed and added to it a shard at a time, so a build cut short keeps what it
        finished). `report` is set to the rows to compute and advanced."""
        started = time.perf_counter()
        keys = sorted(output)
        side, panel, computed = bench_side(scorer, query, output, progress, store, report)
        if store is not None:
            rows = passes_of(scorer, output) * len(keys)
            print(f"usl: response side: {rows - computed} of {rows} rows from the response store, {computed} computed",
                  file=sys.stderr)  # fmt: skip
        release_freed_memory()
        return cls(np.array([i for i, _ in keys], dtype=np.int64), [m for _, m in keys], side, checkpoint,
                   bench_hash, time.perf_counter() - started, panel)  # fmt: skip

    def extended(
        self,
        scorer: CompositionalScorer,
        query: dict[int, str],
        outputs: dict[tuple[int, str], str],
        reference_outputs: dict[tuple[int, str], str],
        more: ResponseSide | None = None,
    ) -> ResponseTable:
        """This table plus more responses (an uploaded model), encoded now unless `more` (their response side, in
        sorted key order, compared with this table's `panel`) is given. The panel stays the one the bench chose:
        a model added joins the board, not the panel its answers are compared with, nor the spread its gate reads."""
        keys = sorted(outputs)
        if more is None:
            more = response_side_of(scorer, query, outputs, reference_outputs, own=self.panel)
        side = joined([self.side, more])
        table = ResponseTable(np.concatenate([self.idx, [i for i, _ in keys]]).astype(np.int64),
                              [*self.models, *(m for _, m in keys)], side, self.checkpoint, self.bench_hash,
                              panel=self.panel)  # fmt: skip
        table._spread, table._bench_rows = self._spread, self._bench_rows or len(self.idx)
        return table

    def save(self, path: str | os.PathLike) -> None:
        meta = {"format": FORMAT, "checkpoint": self.checkpoint, "bench_hash": self.bench_hash,
                "models": self.models, "build_seconds": round(self.seconds, 1), "panel": self.panel}  # fmt: skip
        with atomic_file(path, "wb") as handle:
            np.savez(handle, meta=np.array(json.dumps(meta)), idx=self.idx, z=self.side.z,
                     quality=self.side.quality, voice=self.side.voice)  # fmt: skip

    @classmethod
    def load(cls, path: str | os.PathLike, checkpoint: str, bench_hash: str) -> ResponseTable:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            if meta.get("format") != FORMAT:
                raise StaleTableError(f"{path}: response-side format {meta.get('format')}, this code reads {FORMAT}")
            for what, want in (("checkpoint", checkpoint), ("bench_hash", bench_hash)):
                if meta.get(what) != want:
                    raise StaleTableError(f"{path}: made for {what} {meta.get(what)!r}, not {want!r}; rebuild it")
            side = ResponseSide(data["z"], data["quality"], data["voice"])
            return cls(data["idx"], list(meta["models"]), side, checkpoint, bench_hash, panel=meta.get("panel"))

    @classmethod
    def open(cls, folder: str | os.PathLike, scorer: CompositionalScorer, query: dict[int, str],
             output: dict[tuple[int, str], str], checkpoint: str, bench_hash: str,
             progress: bool = False, store=None, report: Progress | None = None) -> ResponseTable:  # fmt: skip
        """Load the saved table for this CRM and bench, or build and save it. A stale file is replaced. `store`: a
        callable giving the response store to build through, called only when a build is needed (opening a store
        reads all its shards)."""
        # named by the whole checkpoint (CRM, consensus weight, non-answer penalty), so two settings of one CRM keep
        # a table each instead of replacing each other's
        path = Path(folder) / f"{hashlib.sha256(checkpoint.encode()).hexdigest()[:16]}-{bench_hash[:16]}.npz"
        if path.is_file():
            try:
                return cls.load(path, checkpoint, bench_hash)
            except StaleTableError:
                pass  # another CRM or format at the same name prefix: rebuild below
            except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:  # truncated or corrupt: rebuilt
                print(f"usl: saved response side {path} is unreadable ({error}); building it again", file=sys.stderr)
        table = cls.build(scorer, query, output, checkpoint, bench_hash, progress, store() if store else None, report)
        table.save(path)
        return table
