"""Fetch public AlpacaEval model outputs into a local cache: resumable, verified, written atomically.

The cache holds the upstream layout, ``<cache>/<model>/model_outputs.json``, which `crm_core.data.open_bench`
reads. A download goes to ``model_outputs.json.part`` first (resumed with an HTTP Range request after an
interruption); only a file that parses and whose instructions match the bench's reaches its final name.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shutil
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
from crm_core.data import DataValidationError, Problem, read_model_outputs_json
from crm_core.data.importers import detect_layout, read_combined_outputs, read_instructions
from tqdm.auto import tqdm

ALPACA_EVAL_RESULTS_URL = "https://raw.githubusercontent.com/tatsu-lab/alpaca_eval/main/results"
ALPACA_EVAL_N_QUERIES = 805
OUTPUTS_NAME = "model_outputs.json"
MODEL_NAME = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9._+-]*")
CHUNK = 1 << 16


@dataclass
class PullReport:
    """What a pull did, model by model."""

    downloaded: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    missing_queries: dict[str, int] = field(default_factory=dict)


def check_model_name(name: str) -> str:
    if not MODEL_NAME.fullmatch(name):
        raise ValueError(f"invalid model name {name!r}: letters, digits, '.', '_', '+' and '-' only")
    return name


def verify_outputs(path: Path, reference: set[str] | None, expect_queries: int | None) -> tuple[set[str], int]:
    """Check one model's outputs file; return its instruction set and how many reference queries it misses.

    Without a reference (the baseline, pulled first) the file must have `expect_queries` distinct instructions.
    """
    items = read_model_outputs_json(path)
    instructions = [item["instruction"] for item in items]
    seen: set[str] = set()
    problems = []
    for number, text in enumerate(instructions, start=1):
        if text in seen:
            problems.append(Problem(f"{path} item", number, "instruction", "duplicate instruction"))
        elif reference is not None and text not in reference:
            problems.append(Problem(f"{path} item", number, "instruction", "not one of the bench's instructions"))
        seen.add(text)
    if reference is None and expect_queries is not None and len(seen) != expect_queries:
        problems.append(Problem(str(path), None, None, f"expected {expect_queries} instructions, found {len(seen)}"))
    if problems:
        raise DataValidationError(problems)
    return seen, (len(reference - seen) if reference is not None else 0)


def _download(url: str, part: Path, timeout: float, progress: bool) -> None:
    """Download `url` into `part`, resuming from its current size when the server honours Range."""
    offset = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={offset}-"} if offset else {})
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        if error.code == 416 and offset:  # nothing left to send: the part file is already whole
            return
        raise
    with response:
        resumed = response.status == 206
        total = int(response.headers["Content-Length"]) if response.headers.get("Content-Length") else None
        mode = "ab" if resumed else "wb"
        with (
            open(part, mode) as handle,
            tqdm(
                total=(total + offset) if (total is not None and resumed) else total,
                initial=offset if resumed else 0,
                unit="B",
                unit_scale=True,
                desc=part.parent.name,
                disable=not progress,
                leave=False,
            ) as bar,
        ):
            received = 0
            while chunk := response.read(CHUNK):
                handle.write(chunk)
                received += len(chunk)
                bar.update(len(chunk))
            handle.flush()
            os.fsync(handle.fileno())
    if total is not None and received < total:  # http.client returns a short body without raising
        raise http.client.IncompleteRead(b"", total - received)


def _fetch_with_retries(url: str, part: Path, retries: int, timeout: float, progress: bool) -> None:
    for attempt in range(retries + 1):
        try:
            _download(url, part, timeout, progress)
            return
        except urllib.error.HTTPError as error:
            if error.code in (404, 410) or attempt == retries:
                raise RuntimeError(f"{url}: HTTP {error.code} {error.reason}") from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
            if attempt == retries:
                cause = "the connection failed"
                if isinstance(error, urllib.error.URLError):
                    cause = "could not reach the server (no network, or the host is down)"
                raise RuntimeError(f"{url}: {cause} ({error}); the partial file is kept, run pull again to resume, "
                                   "or work offline from a local copy (--from DIR / --data DIR)") from None  # fmt: skip
        time.sleep(min(2**attempt, 10))


class _CombinedSource:
    """A combined AlpacaEval folder, read once, that writes single models in the upstream form."""

    def __init__(self, directory: Path, models: list[str]):
        self.queries = read_instructions(directory / "instructions.jsonl")
        self.responses = read_combined_outputs(directory / "model_outputs.jsonl.gz", models)
        self.directory = directory

    def export(self, model: str, part: Path) -> None:
        rows = self.responses.filter(pl.col("model") == model).join(self.queries, on="idx").sort("idx")
        if rows.is_empty():
            raise FileNotFoundError(f"{self.directory}: no outputs of model {model!r}")
        items = rows.select("instruction", "output", "generator").to_dicts()
        part.write_text(json.dumps(items, ensure_ascii=False, indent=1), encoding="utf-8")


def pull(
    models: list[str],
    cache_dir: Path,
    baseline: str,
    base_url: str = ALPACA_EVAL_RESULTS_URL,
    local_source: Path | None = None,
    expect_queries: int | None = ALPACA_EVAL_N_QUERIES,
    retries: int = 3,
    timeout: float = 60.0,
    progress: bool = True,
) -> PullReport:
    """Bring each model's outputs into `cache_dir`, the baseline first (its instructions are the reference).

    Models already cached and valid are not fetched again; a failure of one model does not stop the others.
    """
    order = [baseline, *[m for m in dict.fromkeys(models) if m != baseline]]
    for name in order:
        check_model_name(name)
    layout = detect_layout(local_source) if local_source is not None else None
    combined = _CombinedSource(local_source, order) if layout == "alpaca_eval" and local_source else None
    report = PullReport()
    reference: set[str] | None = None
    for model in tqdm(order, desc="models", unit="model", disable=not progress):
        final = cache_dir / model / OUTPUTS_NAME
        final.parent.mkdir(parents=True, exist_ok=True)
        try:
            with _model_lock(final.parent):  # a second pull into this cache waits, then finds the file cached
                if final.exists():
                    try:
                        found, missing = verify_outputs(final, reference, expect_queries)
                        report.cached.append(model)
                    except DataValidationError:
                        final.unlink()  # a cached file that no longer verifies is fetched again
                if not final.exists():
                    found, missing = _bring(model, final, local_source, combined, base_url, retries, timeout,
                                            progress, reference, expect_queries)  # fmt: skip
                    report.downloaded.append(model)
        except (DataValidationError, RuntimeError, FileNotFoundError, ValueError) as error:
            report.failed[model] = str(error)
            if model == baseline:  # without the baseline there is no reference to verify the others against
                for other in order[1:]:
                    report.failed[other] = f"not attempted: the baseline {baseline!r} failed"
                break
            continue
        if reference is None:
            reference = found
        if missing:
            report.missing_queries[model] = missing
    return report


def _bring(model, final: Path, local_source, combined, base_url, retries, timeout, progress, reference,
           expect_queries) -> tuple:  # fmt: skip
    """Fetch or copy one model's outputs to `final` through a verified .part file (resumed after an interruption)."""
    part = final.with_name(OUTPUTS_NAME + ".part")
    if local_source is None:
        _fetch_with_retries(f"{base_url.rstrip('/')}/{model}/{OUTPUTS_NAME}", part, retries, timeout, progress)
    elif combined is not None:
        combined.export(model, part)
    else:
        shutil.copyfile(local_source / model / OUTPUTS_NAME, part)
    try:
        found, missing = verify_outputs(part, reference, expect_queries)
    except DataValidationError:
        part.unlink()  # corrupt or foreign content: do not resume from it next time
        raise
    os.replace(part, final)  # same folder: the verified file appears whole or not at all
    return found, missing


@contextlib.contextmanager
def _model_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on one model's cache folder itself (POSIX flock on the folder: no lock file is left),
    held while its file is checked, fetched and verified; no lock where fcntl is absent."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
