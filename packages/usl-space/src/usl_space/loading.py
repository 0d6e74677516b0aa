"""Open what usl-rank and the Space need: a bench (with topics), the CRM, and the shared score cache."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from crm_core.compositional.onnx import has_parts
from crm_core.data import Bench, DataValidationError, detect_layout, open_bench, read_models_file
from crm_core.loader import load_crm
from crm_core.paths import cache_dir
from crm_core.spec import Scorer

from usl_space.anytime_engine import AnytimeEngine
from usl_space.cache import ScoreCache
from usl_space.catalog import default_models
from usl_space.engine import Engine
from usl_space.instant_engine import InstantEngine
from usl_space.topics import TopicIndex

SHIPPED_CRM = "crm-compositional"


def default_crm() -> Path:
    """The CRM shipped in the repository's space/models/ (or $USL_MODEL): found beside the code, so a checkout,
    the Space and an editable install all use it with no download."""
    if os.environ.get("USL_MODEL"):  # a folder or a Hub repo id
        from crm_core.hub import resolve_checkpoint

        return resolve_checkpoint(os.environ["USL_MODEL"])
    here = Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "space" / "models" / SHIPPED_CRM
        if (candidate / "crm.json").is_file():
            return candidate
    raise FileNotFoundError(
        f"no shipped CRM found (space/models/{SHIPPED_CRM} beside the code); pass --model DIR or set USL_MODEL"
    )


def open_data(directory: str | os.PathLike, baseline: str | None = None) -> Bench:
    """A bench from --data: a saved bench folder, or an AlpacaEval-style folder restricted to the project's default
    models (usl_space.catalog) when it holds them all, else to its own default_models.txt when it has one, else
    every model in it (baseline: gpt4_1106_preview unless named)."""
    directory = Path(directory)
    if detect_layout(directory) == "bench":
        return open_bench(directory, baseline=baseline)
    try:
        return open_bench(directory, models=default_models(), baseline=baseline)
    except DataValidationError as error:
        if not all(p.field == "models" for p in error.problems):
            raise
    models = None
    if (directory / "default_models.txt").is_file():
        models = read_models_file(directory / "default_models.txt")
    return open_bench(directory, models=models, baseline=baseline)


def open_scorer(model: str | os.PathLike | None = None, backend: str = "auto", threads: int | None = None) -> Scorer:
    """The CRM to score with. backend 'auto' prefers the ONNX model when the folder has one (the fast CPU
    path), else PyTorch."""
    from crm_core.hub import resolve_checkpoint

    folder = resolve_checkpoint(model) if model else default_crm()  # a folder, or a Hub repo id (ORG/NAME)
    if backend == "auto":
        backend = "onnx" if (folder / "model.onnx").is_file() or has_parts(folder) else "torch"
    if backend == "onnx":
        return load_crm(folder, backend="onnx", threads=threads)
    return load_crm(folder, backend="torch")


def default_cache_path() -> Path:
    return Path(os.environ.get("USL_SCORE_CACHE", cache_dir() / "scores.sqlite"))


def load_engine(
    data: str | os.PathLike,
    model: str | os.PathLike | None = None,
    backend: str = "auto",
    cache: str | os.PathLike | None = None,
    topics: bool = True,
    baseline: str | None = None,
) -> Engine:
    """Bench + topics + CRM + cache, ready to rank."""
    bench = open_data(data, baseline)
    index = TopicIndex.build(bench.queries) if topics else None
    return make_engine(bench, open_scorer(model, backend), ScoreCache(cache or default_cache_path()), index)


def load_engines(folders: Sequence[str | os.PathLike], model: str | os.PathLike | None = None, backend: str = "auto",
                 cache: str | os.PathLike | None = None, baseline: str | None = None) -> list[Engine]:  # fmt: skip
    """One engine per bench folder, sharing one CRM and one score cache (`baseline` names the first bench's)."""
    if not folders:
        raise ValueError("no bench folder given")
    scorer, scores = open_scorer(model, backend), ScoreCache(cache or default_cache_path())
    engines = []
    for n, folder in enumerate(folders):
        bench = open_data(folder, baseline if n == 0 else None)
        engines.append(make_engine(bench, scorer, scores, TopicIndex.build(bench.queries)))
    return engines


def make_engine(bench: Bench, scorer: Scorer, cache: ScoreCache, topics: TopicIndex | None = None) -> Engine:
    """The one place the CRM's kind picks the path: instant (compositional) or anytime (cross-encoder)."""
    path = InstantEngine if scorer.spec.instant else AnytimeEngine
    return path(bench, scorer, cache, topics)
