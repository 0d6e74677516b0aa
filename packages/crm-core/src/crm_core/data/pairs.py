"""Preference pairs in the paper's JSON-lines format, validated into a typed Polars frame.

A row: ``{id|idx, prompt, model_a: [messages], model_b: [messages], criteria: [str],
preference: "model_a"|"model_b"|"tie"}``. The provenance fields of ../shared/data (``source``,
``label_source``, ``criteria_source``) get typed columns; every other extra field (``meta``, ...) is kept
losslessly as JSON text in the ``extra`` column and written back as it came.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, overload

import polars as pl

from crm_core.atomic import atomic_file
from crm_core.data.errors import DataValidationError, Problem
from crm_core.data.lines import text_lines
from crm_core.guard import FILE_CRITERIA_LINES, FILE_CRITERION_CHARS, check_criteria, not_there

PREFERENCES = ("model_a", "model_b", "tie")
ROLES = ("system", "user", "assistant")
PROVENANCE_FIELDS = ("source", "label_source", "criteria_source")
REQUIRED_FIELDS = ("prompt", "model_a", "model_b", "criteria", "preference")
MAX_MESSAGE_CHARS = 200_000  # one message; the longest in the shared preference sets is far shorter

MESSAGE = pl.Struct({"role": pl.String, "content": pl.String})
PAIR_SCHEMA: dict[str, pl.DataType] = {
    "id": pl.String(),
    "prompt": pl.String(),
    "model_a": pl.List(MESSAGE),
    "model_b": pl.List(MESSAGE),
    "criteria": pl.List(pl.String),
    "preference": pl.Enum(PREFERENCES),
    "source": pl.String(),
    "label_source": pl.String(),
    "criteria_source": pl.String(),
    "extra": pl.String(),
}
REJECTED_SCHEMA: dict[str, pl.DataType] = {
    "file": pl.String(),
    "line": pl.Int64(),
    "field": pl.String(),
    "reason": pl.String(),
    "raw": pl.String(),
}


def _check_conversation(value: Any, field: str) -> list[str]:
    """Reasons why `value` is not a conversation that ends with a non-empty assistant turn."""
    if not isinstance(value, list) or not value:
        return [f"expected a non-empty list of messages {{role, content}}, got {_describe(value)}"]
    for i, message in enumerate(value):
        if not isinstance(message, dict):
            return [f"message {i}: expected an object {{role, content}}, got {_describe(message)}"]
        unknown = sorted(set(message) - {"role", "content"})
        if unknown:
            return [f"message {i}: unexpected key(s) {unknown}; a message has only role and content"]
        if message.get("role") not in ROLES:
            return [f"message {i}: role must be one of {list(ROLES)}, got {message.get('role')!r}"]
        if not isinstance(message.get("content"), str):
            return [f"message {i}: content must be a string, got {_describe(message.get('content'))}"]
    if value[-1]["role"] != "assistant":
        return [f"conversation must end with the assistant's response, but its last role is {value[-1]['role']!r}"]
    if not value[-1]["content"].strip():
        return ["empty response: the last assistant message has no text"]
    too_long = [i for i, m in enumerate(value) if len(m["content"]) > MAX_MESSAGE_CHARS]
    if too_long:
        return [f"message {too_long[0]} has {len(value[too_long[0]]['content'])} characters; at most "
                f"{MAX_MESSAGE_CHARS} (a judge reads far less; a longer text is a mistake, not an answer)"]  # fmt: skip
    return []


def _describe(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    kind = type(value).__name__ if value is not None else "null"
    return f"{kind} {text[:60]}{'...' if len(text) > 60 else ''}"


def validate_pair(record: Any, file: str, line: int) -> tuple[dict[str, Any] | None, list[Problem]]:  # noqa: C901
    """Check one decoded record; return it as a frame row, or the problems that stop it being one."""
    if not isinstance(record, dict):
        return None, [Problem(file, line, None, f"expected a JSON object, got {_describe(record)}")]
    problems: list[Problem] = []

    def bad(field: str, message: str) -> None:
        problems.append(Problem(file, line, field, message))

    id_key = "id" if "id" in record else "idx" if "idx" in record else None
    if id_key is None:
        bad("id", "missing field: every pair needs an 'id' (or 'idx')")
    elif isinstance(record[id_key], bool) or not isinstance(record[id_key], (str, int)) or record[id_key] == "":
        bad(id_key, f"expected a non-empty string or an integer, got {_describe(record[id_key])}")
    for field in REQUIRED_FIELDS:
        if field not in record:
            bad(field, "missing field")
    if "prompt" in record and (not isinstance(record["prompt"], str) or not record["prompt"].strip()):
        bad("prompt", f"expected a non-empty string, got {_describe(record['prompt'])}")
    for side in ("model_a", "model_b"):
        if side in record:
            for reason in _check_conversation(record[side], side):
                bad(side, reason)
    criteria = record.get("criteria")
    if "criteria" in record:
        if not isinstance(criteria, list) or not all(isinstance(c, str) for c in criteria):
            bad("criteria", f"expected a list of strings (empty for general preference), got {_describe(criteria)}")
        elif any(not c.strip() for c in criteria):
            bad("criteria", "a criterion is an empty string")
        else:
            try:
                check_criteria(criteria, "criteria", FILE_CRITERIA_LINES, FILE_CRITERION_CHARS)
            except ValueError as error:
                bad("criteria", str(error).removeprefix("criteria").strip(": "))
    if "preference" in record and record["preference"] not in PREFERENCES:
        bad("preference", f"expected one of {list(PREFERENCES)}, got {_describe(record['preference'])}")
    for field in PROVENANCE_FIELDS:
        if record.get(field) is not None and not isinstance(record[field], str):
            bad(field, f"expected a string, got {_describe(record[field])}")
    if problems:
        return None, problems
    known = {"id", "idx", *REQUIRED_FIELDS, *PROVENANCE_FIELDS}
    extra = {k: v for k, v in record.items() if k not in known}
    if id_key == "id" and "idx" in record:
        extra["idx"] = record["idx"]
    row = {
        "id": str(record[id_key]),
        "prompt": record["prompt"],
        "model_a": record["model_a"],
        "model_b": record["model_b"],
        "criteria": criteria,
        "preference": record["preference"],
        **{field: record.get(field) for field in PROVENANCE_FIELDS},
        "extra": json.dumps(extra, ensure_ascii=False, sort_keys=True) if extra else None,
    }
    return row, []


def _validate_records(
    records: Iterable[tuple[int, str, Any]], file: str
) -> tuple[list[dict[str, Any]], list[tuple[Problem, str]]]:
    """Validate (line, raw text, decoded or exception) triples; duplicate ids are rejected after the first."""
    rows: list[dict[str, Any]] = []
    rejected: list[tuple[Problem, str]] = []
    first_line_of: dict[str, int] = {}
    for line, raw, decoded in records:
        if isinstance(decoded, Problem):
            rejected.append((decoded, raw))
            continue
        if isinstance(decoded, json.JSONDecodeError):
            problem = Problem(file, line, None, f"malformed JSON: {decoded.msg} at column {decoded.colno}")
            rejected.append((problem, raw))
            continue
        row, problems = validate_pair(decoded, file, line)
        if row is not None and row["id"] in first_line_of:
            problems = [
                Problem(file, line, "id", f"duplicate id {row['id']!r}, first seen on line {first_line_of[row['id']]}")
            ]
            row = None
        if row is None:
            rejected.extend((p, raw) for p in problems)
            continue
        first_line_of[row["id"]] = line
        rows.append(row)
    return rows, rejected


def _read_lines(path: Path) -> Iterable[tuple[int, str, Any]]:  # the raw text is "" where a line is unreadable
    """(line, raw text, decoded JSON or the error) per non-blank line; unreadable lines carry their Problem."""
    for line_number, raw, problem in text_lines(path):
        if problem is not None:
            yield line_number, "", problem
            continue
        if raw is None or not raw.strip():
            continue
        try:
            decoded: Any = json.loads(raw)
        except json.JSONDecodeError as error:
            decoded = error
        yield line_number, raw, decoded


def _finish(
    rows: list[dict[str, Any]], rejected: list[tuple[Problem, str]], on_error: str
) -> pl.DataFrame | tuple[pl.DataFrame, pl.DataFrame]:
    if on_error not in ("raise", "collect"):
        raise ValueError(f"on_error must be 'raise' or 'collect', got {on_error!r}")
    if rejected and on_error == "raise":
        raise DataValidationError([problem for problem, _ in rejected])
    frame = pl.DataFrame(rows, schema=PAIR_SCHEMA)
    if on_error == "raise":
        return frame
    rejected_frame = pl.DataFrame(
        [{"file": p.file, "line": p.line, "field": p.field, "reason": p.message, "raw": raw} for p, raw in rejected],
        schema=REJECTED_SCHEMA,
    )
    return frame, rejected_frame


@overload
def load_pairs(path: str | os.PathLike, on_error: Literal["raise"] = "raise") -> pl.DataFrame: ...
@overload
def load_pairs(path: str | os.PathLike, on_error: Literal["collect"]) -> tuple[pl.DataFrame, pl.DataFrame]: ...
def load_pairs(path, on_error="raise"):
    """Read and validate a pairs JSON-lines file.

    on_error="raise" raises DataValidationError listing every bad line; "collect" returns
    (valid rows, rejected rows with file, line, field, reason and the raw line) so nothing is dropped silently.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: {not_there(path, 'pairs file')}")
    rows, rejected = _validate_records(_read_lines(path), str(path))
    return _finish(rows, rejected, on_error)


def rejected_problems(rejected: pl.DataFrame) -> list[Problem]:
    """The rejected rows of `load_pairs(..., on_error="collect")` as Problems (file:line: field: reason)."""
    return [Problem(r["file"], r["line"], r["field"], r["reason"]) for r in rejected.iter_rows(named=True)]


def pair_records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """The frame's rows back in the file format, extra fields restored."""
    records = []
    for row in frame.iter_rows(named=True):
        extra = json.loads(row["extra"]) if row["extra"] else {}
        record = {
            "id": row["id"],
            **{field: row[field] for field in ("prompt", "model_a", "model_b", "criteria", "preference")},
        }
        record.update({field: row[field] for field in PROVENANCE_FIELDS if row[field] is not None})
        record.update(extra)
        records.append(record)
    return records


def write_pairs(frame: pl.DataFrame, path: str | os.PathLike) -> None:
    """Write pairs as JSON lines, atomically (a reader never sees half a file)."""
    with atomic_file(path) as handle:
        for record in pair_records(frame):
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def pairs_to_dataset(frame: pl.DataFrame):
    """A `datasets.Dataset` with the file format's fields (preference as a plain string)."""
    import datasets

    return datasets.Dataset(frame.with_columns(pl.col("preference").cast(pl.String)).to_arrow())


@overload
def pairs_from_dataset(dataset, on_error: Literal["raise"] = "raise") -> pl.DataFrame: ...
@overload
def pairs_from_dataset(dataset, on_error: Literal["collect"]) -> tuple[pl.DataFrame, pl.DataFrame]: ...
def pairs_from_dataset(dataset, on_error="raise"):
    """Validate a `datasets.Dataset` (rows in the file format, or made by `pairs_to_dataset`) into a frame."""
    records = []
    for i, record in enumerate(dataset, start=1):
        record = dict(record)
        extra = record.pop("extra", None)
        if extra:
            record.update(json.loads(extra))
        record = {k: v for k, v in record.items() if not (k in PROVENANCE_FIELDS and v is None)}
        records.append((i, json.dumps(record, ensure_ascii=False, default=str), record))
    rows, rejected = _validate_records(records, "<datasets.Dataset>")
    return _finish(rows, rejected, on_error)
