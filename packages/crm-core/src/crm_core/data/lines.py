"""Reading data files line by line so that every failure names the file and the line, and reporting the rows a
command rejected the same way in every CLI.

- A UTF-8 byte-order mark at the start of a file is accepted (editors on Windows write one).
- A line that is not UTF-8 is a problem of that line ("undecodable byte 0x91 at column 1"), not a traceback.
- A truncated or corrupt gzip file stops with a problem that names the file and the last complete line.
"""

from __future__ import annotations

import codecs
import contextlib
import contextvars
import gzip
import math
import os
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from crm_core.data.errors import DataValidationError, Problem
from crm_core.guard import not_there

SHOWN = 20  # rejected rows printed in full before the rest are counted
# the command (its name) that asked the readers to skip invalid rows (--skip-invalid), for the current context
_SKIPPING: contextvars.ContextVar[str | None] = contextvars.ContextVar("skipping_invalid", default=None)


@contextlib.contextmanager
def skipping_invalid(prog: str, enabled: bool = True) -> Iterator[None]:
    """Within this block the bench readers (instructions, model outputs) report each invalid row on stderr as
    `prog: file:line: field: ...` and go on without it, as `--skip-invalid` asks; outside it they stop."""
    token = _SKIPPING.set(prog if enabled else None)
    try:
        yield
    finally:
        _SKIPPING.reset(token)


def invalid_rows(problems: list[Problem]) -> None:
    """What a reader does with the problems it found: raise them, or, inside `skipping_invalid`, report them and
    return so that the reader goes on with the valid rows."""
    if not problems:
        return
    prog = _SKIPPING.get()
    if prog is None:
        raise DataValidationError(problems)
    report_rejected(problems, prog, skip_invalid=True)


def skipping() -> bool:
    """Whether invalid rows are being skipped (readers then scan every row instead of stopping early)."""
    return _SKIPPING.get() is not None


def text_lines(path: str | os.PathLike) -> Iterator[tuple[int, str | None, Problem | None]]:
    """(line number, text without its newline, None) per line, or (line, None, problem) where a line cannot be
    read; a gzip file (by suffix) is decompressed as it is read."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: {not_there(path, 'file')}")
    opener = gzip.open if path.suffix == ".gz" else open
    line = 0
    with opener(path, "rb") as handle:
        try:
            for line, raw in enumerate(handle, start=1):
                if line == 1 and raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8) :]
                try:
                    yield line, raw.decode("utf-8").rstrip("\r\n"), None
                except UnicodeDecodeError as error:
                    byte = raw[error.start]
                    yield line, None, Problem(str(path), line, None, f"not UTF-8 text: undecodable byte 0x{byte:02x} "
                                              f"at column {error.start + 1}")  # fmt: skip
        except (EOFError, gzip.BadGzipFile, zlib.error) as error:
            truncated = isinstance(error, EOFError)
            reason = "ends before the end of its gzip stream" if truncated else f"corrupt gzip ({error})"
            yield line + 1, None, Problem(str(path), line + 1, None, f"{reason}; the last complete line is {line}: "
                                          "the file is truncated or damaged, download or copy it again")  # fmt: skip


class RejectedRowsError(DataValidationError):
    """Rows were rejected and the command was not told to skip them."""


def report_rejected(problems: list[Problem], prog: str, skip_invalid: bool, shown: int = SHOWN) -> None:
    """Print every rejected row's problem on stderr as file:line: field: message (the first `shown`, then a count).
    Raise RejectedRowsError unless `skip_invalid`; with it, say how many were skipped and go on."""
    if not problems:
        return
    for problem in problems[:shown]:
        print(f"{prog}: {problem}", file=sys.stderr)
    if len(problems) > shown:
        print(f"{prog}: ... and {len(problems) - shown} more rejected row(s)", file=sys.stderr)
    rows = len({(p.file, p.line) for p in problems})
    if not skip_invalid:
        raise RejectedRowsError([Problem(problems[0].file, None, None, f"{rows} row(s) rejected (above); fix them "
                                         "or pass --skip-invalid to go on without them")])  # fmt: skip
    print(f"{prog}: skipped {rows} invalid row(s) (--skip-invalid)", file=sys.stderr)


def without_nan(value: Any) -> Any:
    """`value` with every NaN or infinite float replaced by None, so json.dumps writes valid JSON (null)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: without_nan(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [without_nan(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", None) == 0:
        return without_nan(value.item())  # NumPy scalars
    return value
