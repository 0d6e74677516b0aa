"""A bench: queries, many models' responses to them, and the baseline every model is judged against.

Frames:
- queries: ``idx`` (Int64, unique), ``instruction`` (String), then any extra columns (source dataset,
  category, and the topic columns the leaderboard adds).
- responses: ``idx``, ``model``, ``output``, ``generator`` (String); one row per (model, query).

A bench saves to a folder: ``queries.parquet``, ``responses.parquet`` and ``manifest.json`` (models,
baseline, source, a content hash that `load` checks).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from crm_core.atomic import atomic_dir
from crm_core.data.errors import DataValidationError, Problem

BENCH_FORMAT_VERSION = 1
QUERY_SCHEMA: dict[str, pl.DataType] = {"idx": pl.Int64(), "instruction": pl.String()}
RESPONSE_SCHEMA: dict[str, pl.DataType] = {
    "idx": pl.Int64(),
    "model": pl.String(),
    "output": pl.String(),
    "generator": pl.String(),
}


@dataclass
class Bench:
    """Queries x models' responses, with the baseline model named. Build with `make_bench` to validate."""

    name: str
    source: str
    baseline: str
    queries: pl.DataFrame
    responses: pl.DataFrame
    # what the bench's prompts are, and its models' public facts (organisation, weights, released: blank where
    # unknown), as `usl-data build` writes them into the manifest; neither is part of the content hash
    description: str = ""
    model_info: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def models(self) -> list[str]:
        """Model names, sorted."""
        return sorted(self.responses["model"].unique().to_list())

    def instructions(self) -> dict[int, str]:
        """Query idx -> instruction."""
        return dict(zip(self.queries["idx"].to_list(), self.queries["instruction"].to_list(), strict=True))

    def outputs(self) -> dict[tuple[int, str], str]:
        """(query idx, model) -> response text."""
        keys = zip(self.responses["idx"].to_list(), self.responses["model"].to_list(), strict=True)
        return dict(zip(keys, self.responses["output"].to_list(), strict=True))

    def coverage(self) -> pl.DataFrame:
        """Per model: queries answered, missing, and empty outputs. Missing answers are reported, not hidden."""
        n = self.queries.height
        return (
            self.responses.group_by("model")
            .agg(
                pl.len().alias("answered"),
                (pl.col("output").str.strip_chars() == "").sum().alias("empty"),
            )
            .with_columns((n - pl.col("answered")).alias("missing"))
            .sort("model")
        )

    def empty_answers(self) -> dict[str, int]:
        """Models with empty or whitespace-only answers -> how many: ranked as given (they lose), and said."""
        cov = self.coverage().filter(pl.col("empty") > 0)
        return dict(zip(cov["model"].to_list(), cov["empty"].to_list(), strict=True))

    def incomplete_models(self) -> dict[str, int]:
        """Models that miss some queries -> how many they miss."""
        cov = self.coverage().filter(pl.col("missing") > 0)
        return dict(zip(cov["model"].to_list(), cov["missing"].to_list(), strict=True))

    def content_hash(self) -> str:
        """SHA-256 over the sorted queries and responses: the same data always gives the same hash."""
        digest = hashlib.sha256()
        for frame, keys in ((self.queries, ["idx"]), (self.responses, ["model", "idx"])):
            frame = frame.sort(keys)
            for name in sorted(frame.columns):
                digest.update(f"\x1e{name}:{frame[name].dtype}\x1e".encode())
                for value in frame[name].cast(pl.String).to_list():
                    digest.update(b"\x00" if value is None else value.encode("utf-8") + b"\x1f")
        return digest.hexdigest()

    def manifest(self) -> dict:
        return {
            "format_version": BENCH_FORMAT_VERSION,
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "baseline": self.baseline,
            "models": self.models,
            "n_queries": self.queries.height,
            "n_responses": self.responses.height,
            "query_columns": self.queries.columns,
            "incomplete_models": self.incomplete_models(),
            "content_hash": self.content_hash(),
            "model_info": self.model_info,
        }

    def save(self, directory: str | os.PathLike) -> Path:
        """Write the bench folder atomically: a reader sees the old bench or the new one, never a mix."""
        directory = Path(directory)
        with atomic_dir(directory) as tmp:
            self.queries.write_parquet(tmp / "queries.parquet")
            self.responses.write_parquet(tmp / "responses.parquet")
            (tmp / "manifest.json").write_text(json.dumps(self.manifest(), indent=2) + "\n", encoding="utf-8")
        return directory

    @classmethod
    def load(cls, directory: str | os.PathLike) -> Bench:
        """Read a bench folder written by `save`, checking it against its manifest."""
        directory = Path(directory)
        manifest_path = directory / "manifest.json"
        if not manifest_path.is_file():
            raise FileNotFoundError(f"{directory}: not a bench folder (no manifest.json)")
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise DataValidationError([Problem(str(manifest_path), None, None, f"not valid JSON ({error})")]) from None
        if not isinstance(manifest, dict):
            raise DataValidationError([Problem(str(manifest_path), None, None, "expected a JSON object")])
        if manifest.get("format_version") != BENCH_FORMAT_VERSION:
            raise DataValidationError(
                [
                    Problem(
                        str(manifest_path),
                        None,
                        "format_version",
                        f"expected {BENCH_FORMAT_VERSION}, got {manifest.get('format_version')!r}",
                    )
                ]
            )
        wrong = [
            Problem(str(manifest_path), None, key, f"expected a string, got {manifest.get(key)!r:.40}")
            for key in ("name", "source", "baseline", "content_hash")
            if not isinstance(manifest.get(key), str)
        ]
        if wrong:  # fmt: skip
            raise DataValidationError(wrong)
        bench = make_bench(
            manifest["name"],
            manifest["source"],
            manifest["baseline"],
            _read_parquet(directory / "queries.parquet"),
            _read_parquet(directory / "responses.parquet"),
        )
        bench.description, bench.model_info = _metadata(manifest, manifest_path)
        if bench.content_hash() != manifest["content_hash"]:
            raise DataValidationError(
                [
                    Problem(
                        str(directory),
                        None,
                        "content_hash",
                        "the Parquet files do not match the manifest's content hash (modified or corrupt bench)",
                    )
                ]
            )
        return bench


def _metadata(manifest: dict, where: Path) -> tuple[str, dict[str, dict[str, str]]]:
    """The manifest's description and model_info (absent in benches written before them), checked by type: a
    wrong one is named by file and field rather than shown as a broken label."""
    description, info = manifest.get("description", ""), manifest.get("model_info", {})
    if not isinstance(description, str):
        raise DataValidationError([Problem(str(where), None, "description", "expected a string")])
    if not isinstance(info, dict) or not all(
        isinstance(facts, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in facts.items())
        for facts in info.values()
    ):
        raise DataValidationError([Problem(str(where), None, "model_info",
                                           "expected an object of model -> {field: text}")])  # fmt: skip
    return description, info


def _read_parquet(path: Path) -> pl.DataFrame:
    """A bench table; a truncated or corrupt file is named (rebuild the bench with usl-data build)."""
    try:
        return pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as error:
        message = f"unreadable ({str(error).splitlines()[0]}); build the bench again with usl-data build"
        raise DataValidationError([Problem(str(path), None, None, message)]) from None


def make_bench(name: str, source: str, baseline: str, queries: pl.DataFrame, responses: pl.DataFrame) -> Bench:
    """Validate and assemble a bench. Duplicate (model, query) rows, unknown queries and an unknown baseline
    are errors; models that miss queries are allowed and reported by `Bench.coverage`."""
    problems: list[Problem] = []
    for frame, schema, what in ((queries, QUERY_SCHEMA, "queries"), (responses, RESPONSE_SCHEMA, "responses")):
        for column, dtype in schema.items():
            if column not in frame.columns:
                problems.append(Problem(name, None, f"{what}.{column}", "missing column"))
            elif frame[column].dtype != dtype and not (frame[column].dtype == pl.Null and column == "generator"):
                problems.append(Problem(name, None, f"{what}.{column}", f"expected {dtype}, got {frame[column].dtype}"))
    if problems:
        raise DataValidationError(problems)
    responses = responses.select(list(RESPONSE_SCHEMA)).cast(RESPONSE_SCHEMA)  # type: ignore[arg-type]
    dup_queries = queries.filter(pl.col("idx").is_duplicated())["idx"].unique().sort().to_list()
    if dup_queries:
        problems.append(Problem(name, None, "queries.idx", f"duplicate query idx {dup_queries[:10]}"))
    for column in ("idx", "instruction"):
        if queries[column].null_count():
            problems.append(Problem(name, None, f"queries.{column}", f"{queries[column].null_count()} null value(s)"))
    for column in ("idx", "model", "output"):
        if responses[column].null_count():
            problems.append(
                Problem(name, None, f"responses.{column}", f"{responses[column].null_count()} null value(s)")
            )
    dups = responses.filter(pl.struct("model", "idx").is_duplicated()).unique(["model", "idx"]).sort("model", "idx")
    if dups.height:
        shown = ", ".join(f"({m}, {i})" for m, i in dups.select("model", "idx").head(5).iter_rows())
        problems.append(Problem(name, None, "responses", f"{dups.height} duplicate (model, query) pair(s): {shown}"))
    unknown = responses.join(queries.select("idx"), on="idx", how="anti")
    if unknown.height:
        ids = unknown["idx"].unique().sort().head(10).to_list()
        problems.append(Problem(name, None, "responses.idx", f"{unknown.height} response(s) to unknown queries {ids}"))
    models = set(responses["model"].drop_nulls().to_list())
    if baseline not in models:
        close = difflib.get_close_matches(baseline, sorted(models), n=3)
        hint = f"; did you mean {close}?" if close else f"; the bench has {len(models)} models"
        problems.append(Problem(name, None, "baseline", f"unknown baseline model {baseline!r}{hint}"))
    if problems:
        raise DataValidationError(problems)
    return Bench(name, source, baseline, queries.sort("idx"), responses.sort("model", "idx"))
