"""The benches one server offers: each bench's page (its name, what its prompts are, how recent its models are, and
where it lives in the app), and the address that opens another bench with the criteria typed so far.

A bench's description comes from its manifest's `description` when it has one (`usl-data build --description`),
else from the shared benches' own (usl_space.catalog.KNOWN_BENCHES), else it is its number of prompts; the years
come from the release months in the manifest's `model_info` and the model catalog (usl_space.catalog: written by
hand from public facts), left out where most models have none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from usl_space.catalog import KNOWN_BENCHES, catalog
from usl_space.engine import Engine
from usl_space.taste import Profile
from usl_space.topics import TOPICS


@dataclass(frozen=True)
class BenchPage:
    label: str  # what the picker shows
    path: str  # where the page lives: "" for the first bench (the root), else its slug
    api_prefix: str  # before each API name of the page ("" on the first)


def description(engine: Engine) -> str:
    """What the bench's prompts are: its manifest's description, a known shared bench's, or their number."""
    bench = engine.bench
    said = bench.description or KNOWN_BENCHES.get(bench.name, "")
    return f"{len(engine.query)} {said}" if said else f"{len(engine.query)} prompts"


def model_years(models: Sequence[str], bench_facts: dict[str, dict[str, str]] | None = None) -> str:
    """'of 2024-2026' from the release months (the bench manifest's, else the catalog's), or '' when fewer than half
    the models have one."""
    known = {m: info.released for m, info in catalog().items()}
    known.update({m: facts.get("released", "") for m, facts in (bench_facts or {}).items() if facts.get("released")})
    years = sorted(known[m][:4] for m in models if known.get(m))
    if len(years) * 2 < len(models) or not years:
        return ""
    return f" of {years[0]}" if years[0] == years[-1] else f" of {years[0]}-{years[-1]}"


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_") or "bench"


def bench_pages(engines: Sequence[Engine]) -> list[BenchPage]:
    """One page per engine: the first at the root, the others at their bench's slug (numbered where two collide)."""
    pages: list[BenchPage] = []
    seen: set[str] = set()
    for index, engine in enumerate(engines):
        name = slug(engine.bench.name)
        while name in seen:
            name = f"{name}_{index}"
        seen.add(name)
        label = f"{engine.bench.name}: {description(engine)} · {len(engine.models)} models"
        label += model_years(engine.models, engine.bench.model_info)
        pages.append(BenchPage(label, "" if index == 0 else name, "" if index == 0 else f"{name}_"))
    return pages


def switch_address(pages: Sequence[BenchPage], label: str, criteria: str, dislikes: str,
                   topics: Sequence[str] | None) -> str:  # fmt: skip
    """The address, relative to the app's root, of the bench page labelled `label` with the criteria, dislikes and
    topics typed so far as a share token (votes stay with the bench they were cast on); "" for an unknown label."""
    page = next((p for p in pages if p.label == label), None)
    if page is None:
        return ""
    profile = Profile(criteria=[line.strip() for line in (criteria or "").splitlines() if line.strip()],
                      dislikes=[line.strip() for line in (dislikes or "").splitlines() if line.strip()],
                      topics=[t for t in topics or [] if t in TOPICS])  # fmt: skip
    return f"./{page.path}?profile={profile.link_token(list(TOPICS))}"
