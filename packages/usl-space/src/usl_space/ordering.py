"""In which order the anytime path visits queries: a seeded random order in which every topic is spread evenly, so
the first k queries are a topic-stratified sample of size k. It does not depend on the criteria, so visitors with
different criteria share the queries already scored (and cached) first."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

import numpy as np


def stratified_order(ids: Iterable[int], topic_of: Mapping[int, str], seed: int = 0) -> list[int]:
    """`ids` reordered: within each topic a random permutation, topics interleaved by relative position."""
    rng = np.random.default_rng(seed)
    groups: dict[str, list[int]] = defaultdict(list)
    for idx in sorted(int(i) for i in ids):
        groups[topic_of.get(idx, "All")].append(idx)
    key = {}
    for _, members in sorted(groups.items()):
        for rank, j in enumerate(rng.permutation(len(members))):
            key[members[j]] = (rank + rng.random()) / len(members)
    return sorted(key, key=lambda idx: (key[idx], idx))
