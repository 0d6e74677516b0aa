"""One board asked for, typed: the criteria as the visitor typed them (cleaned once, by crm_core.guard's rule), the
queries, the models, the baseline. The app builds it from its controls and usl-rank from its flags; the app
remembers finished boards by it; `Engine.stream_request` ranks it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crm_core.guard import check_criteria


@dataclass(frozen=True)
class RankRequest:
    """Hashable: two requests are equal when they ask for the same board."""

    criteria: tuple[str, ...] = ()
    dislikes: tuple[str, ...] = ()
    query_ids: tuple[int, ...] | None = None  # the selected queries (topics, a free-text topic, an id file); None: all
    models: tuple[str, ...] | None = None  # None: every model on the bench (the baseline is always ranked)
    baseline: str | None = None  # None: the bench's own
    n_queries: int | None = None  # a topic-stratified sample of this many selected queries; None: all of them
    seed: int = 0  # of the sample's order and the bootstrap

    @classmethod
    def checked(
        cls,
        criteria: str | Sequence[str] | None = (),
        dislikes: str | Sequence[str] | None = (),
        query_ids: Sequence[int] | None = None,
        models: Sequence[str] | None = None,
        baseline: str | None = None,
        n_queries: int | None = None,
        seed: int = 0,
    ) -> RankRequest:
        """A request with its criteria and dislikes (lists or text boxes) cleaned and its models each named once;
        ValueError says what is wrong."""
        if n_queries is not None and n_queries < 1:
            raise ValueError(f"the number of queries must be at least 1, got {n_queries}")
        return cls(
            tuple(check_criteria(criteria)),
            tuple(check_criteria(dislikes, "dislikes")),
            None if query_ids is None else tuple(sorted({int(i) for i in query_ids})),
            None if models is None else tuple(dict.fromkeys(models)),  # a model named twice is ranked once
            baseline or None,
            n_queries,
            seed,
        )
