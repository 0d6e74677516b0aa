"""usl-data generate: a model's answers to a bench's prompts (or a prompt file) from an OpenAI-compatible endpoint.

Each answer is appended to a JSON-lines file the moment it arrives (whole lines, flushed and synced), with the
AlpacaEval fields (`idx`, `instruction`, `output`, `generator`) and the request's `finish_reason`, token counts
(where the server reports them; `chunks`, the streamed pieces, always) and seconds; a rerun reads the file and
asks only for the prompts it lacks, so a stopped run (Ctrl-C, a crash, a lost connection) loses at most the answers
in flight. Rate limits (429), server errors (5xx), timeouts and dropped
connections are retried with exponential backoff and counted. The API key is read from the environment variable
named by `--api-key-env` and goes only into the request's header: never into the output, a log or a message.

Requests stream (`stream=True`): some servers (`transformers serve`) only stream, and every server that speaks the
API can; the answer is the concatenated deltas. The public app never calls an endpoint: this is a maintainer's
command.
"""

from __future__ import annotations

import io
import json
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from crm_core.data import DataValidationError, Problem
from crm_core.guard import read_text

MAX_PROMPTS_FILE_BYTES = 50_000_000  # your own prompts: far more than any bench's


@dataclass
class GenerateSettings:
    endpoint: str  # the server's base URL, up to /v1
    model: str
    api_key_env: str | None = None  # the environment variable holding the key (None: no key)
    system: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    concurrency: int = 4
    retries: int = 5
    timeout: float = 300.0
    generator: str | None = None  # the name the answers carry (default: model)
    backoff: float = 1.0  # seconds before the first retry; doubled after each


@dataclass
class Report:
    asked: int = 0
    saved: int = 0
    already: int = 0
    retried: int = 0
    failed: dict[int, str] = field(default_factory=dict)
    completion_tokens: int = 0  # the server's count, else streamed chunks (about one token each)
    seconds: float = 0.0
    unreachable: str = ""  # why, when the endpoint refused every connection before any answer (asking stopped)


def saved_answers(path: Path) -> dict[int, dict]:
    """The answers a previous run saved, by prompt idx: whole lines only (a line cut by a crash is ignored and its
    prompt asked again)."""
    out: dict[int, dict] = {}
    if not path.exists():
        return out
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if not line.endswith("\n"):
                break  # the last line of a run that stopped mid-write
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and isinstance(row.get("idx"), int) and isinstance(row.get("output"), str):
                out[row["idx"]] = row
    return out


def read_prompts(path: Path) -> list[tuple[int, str]]:
    """Prompts from a file of your own: JSON lines `{"instruction": ...}` (an `idx` kept where given) or a CSV with
    an `instruction` column; every bad line is named."""
    import csv

    problems: list[Problem] = []
    prompts: list[tuple[int, str]] = []
    content = read_text(path, "a prompts file: JSON lines {instruction} or a CSV", MAX_PROMPTS_FILE_BYTES)
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(content, newline=""))
        if "instruction" not in (reader.fieldnames or []):
            raise DataValidationError([Problem(str(path), 1, "instruction", "expected a column 'instruction'")])
        rows = [(n, row) for n, row in enumerate(reader, 2)]
    else:
        rows = []
        for n, line in enumerate(content.splitlines(), 1):
            if line.strip():
                try:
                    rows.append((n, json.loads(line)))
                except json.JSONDecodeError as error:
                    problems.append(Problem(str(path), n, None, f"not JSON ({error.msg})"))
    for n, row in rows:
        text = row.get("instruction") if isinstance(row, dict) else None
        if not isinstance(text, str) or not text.strip():
            found = "" if text is None or isinstance(text, str) else f", got {type(text).__name__} {text!r:.40}"
            problems.append(Problem(str(path), n, "instruction", f"expected non-empty text{found}"))
            continue
        idx = row.get("idx", len(prompts))
        prompts.append((idx if isinstance(idx, int) and not isinstance(idx, bool) else len(prompts), text))
    if len({i for i, _ in prompts}) != len(prompts):
        problems.append(Problem(str(path), None, "idx", "the same idx on more than one prompt"))
    if problems or not prompts:
        raise DataValidationError(problems or [Problem(str(path), None, None, "no prompts")])
    return prompts


def generate(prompts: Sequence[tuple[int, str]], output: Path, settings: GenerateSettings,
             progress: Callable[[Report, int], None] | None = None,
             stop: threading.Event | None = None) -> Report:  # fmt: skip
    """Ask the endpoint for every prompt `output` lacks and append each answer as it arrives; `progress(report,
    total)` after each; `stop` set (Ctrl-C): no new request, the ones in flight finish and are saved."""
    try:
        from openai import OpenAI
    except ImportError:  # the Space installs usl-space without it
        raise ValueError("usl-data generate needs the OpenAI client: pip install 'usl-space[generate]'") from None

    report = Report()
    done = saved_answers(output)
    todo = [(i, text) for i, text in prompts if i not in done]
    texts = dict(todo)
    report.already = len(prompts) - len(todo)
    key = os.environ.get(settings.api_key_env, "") if settings.api_key_env else ""
    client = OpenAI(base_url=settings.endpoint, api_key=key or "no-key", max_retries=0, timeout=settings.timeout)
    lock, started = threading.Lock(), time.perf_counter()
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "a", encoding="utf-8") as handle, ThreadPoolExecutor(settings.concurrency) as pool:
        pending: dict[Future, int] = {}
        queue = list(todo)
        while queue or pending:
            while queue and len(pending) < settings.concurrency and not (stop and stop.is_set()):
                idx, text = queue.pop(0)
                pending[pool.submit(_ask, client, settings, text, report, lock)] = idx
            if not pending:
                break  # stopped: nothing in flight
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                idx = pending.pop(future)
                try:
                    row = {"idx": idx, "instruction": texts[idx], **future.result(),
                           "generator": settings.generator or settings.model}  # fmt: skip
                except Exception as error:  # reported and left for a rerun; the key is never in the message
                    report.failed[idx] = _safe_message(error, key)
                    if not report.saved and _unreachable(error):  # a wrong URL or a server not up: stop asking
                        report.unreachable = report.failed[idx]
                        queue.clear()
                    continue
                with lock:
                    handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                    handle.flush()
                    os.fsync(handle.fileno())
                    report.saved += 1
                    report.completion_tokens += row.get("completion_tokens") or row["chunks"]
                if progress:
                    report.seconds = time.perf_counter() - started
                    progress(report, len(todo))
    report.seconds = time.perf_counter() - started
    return report


def _ask(client, settings: GenerateSettings, text: str, report: Report, lock: threading.Lock) -> dict:
    """One prompt's answer, streamed; retried with backoff on 429, 5xx, timeouts and dropped connections."""
    import openai

    messages = ([{"role": "system", "content": settings.system}] if settings.system else []) + [
        {"role": "user", "content": text}
    ]
    options = {k: v for k, v in (("temperature", settings.temperature), ("max_tokens", settings.max_tokens))
               if v is not None}  # fmt: skip
    for attempt in range(settings.retries + 1):
        started = time.perf_counter()
        try:
            parts, finish, usage = [], None, None
            stream = client.chat.completions.create(model=settings.model, messages=messages, stream=True,
                                                    stream_options={"include_usage": True}, **options)  # fmt: skip
            for chunk in stream:
                if getattr(chunk, "usage", None):
                    usage = chunk.usage
                for choice in chunk.choices or []:
                    if choice.delta and choice.delta.content:
                        parts.append(choice.delta.content)
                    finish = choice.finish_reason or finish
            return {"output": "".join(parts), "finish_reason": finish,
                    "prompt_tokens": getattr(usage, "prompt_tokens", None),
                    "completion_tokens": getattr(usage, "completion_tokens", None),
                    "chunks": len(parts), "seconds": round(time.perf_counter() - started, 3)}  # fmt: skip
        except (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
                openai.APIConnectionError):  # fmt: skip
            if attempt == settings.retries:
                raise
            with lock:
                report.retried += 1
            time.sleep(settings.backoff * 2**attempt * (0.5 + random.random() / 2))
    raise AssertionError("unreachable")


def _unreachable(error: Exception) -> bool:
    """A connection that never opened (refused, no such host), as opposed to a timeout or a server error."""
    import openai

    return isinstance(error, openai.APIConnectionError) and not isinstance(error, openai.APITimeoutError)


def _safe_message(error: Exception, key: str) -> str:
    text = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    return text.replace(key, "***") if key else text


def print_progress(report: Report, total: int) -> None:
    rate = report.completion_tokens / report.seconds if report.seconds else 0.0
    left = (total - report.saved) * report.seconds / report.saved if report.saved else float("nan")
    print(f"\rusl-data generate: {report.saved} of {total} answers, {rate:,.0f} tokens/s, {report.retried} retried, "
          f"about {left:.0f} s left", end="", file=sys.stderr, flush=True)  # fmt: skip
