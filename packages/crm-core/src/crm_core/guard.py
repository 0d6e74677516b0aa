"""Guards every command-line tool runs before it writes: nothing a tool reads is overwritten, no folder it did not
make is replaced, and nonsense counts are refused by the parser, so a typo costs an error message, never data.

- `check_output(output, inputs)`: the output may not be, contain or sit inside any input (a pairs file written over
  by its own evaluation, a bench built into its source folder), and must be writable; checked before the work.
- `check_replaceable(folder)`: crm_core.atomic.atomic_dir replaces a folder whole, so it only replaces a folder that
  is missing, empty, or one it made itself (it leaves the marker file MARKER in every folder it writes).
- `positive_int`, `at_least(n)`: argparse types with a message that says what was expected.
- `check_criteria`: the one rule for criteria text in every tool (typed in the app or usl-rank, or read from a
  pairs file by crm-eval / crm-train): printable text, bounded length and count.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

MARKER = ".usl-folder"  # written by crm_core.atomic.atomic_dir into every folder it makes
MAX_CRITERIA_LINES, MAX_CRITERION_CHARS = 12, 300  # what a visitor may type (app, usl-rank)
FILE_CRITERIA_LINES, FILE_CRITERION_CHARS = 32, 1000  # pairs files (Auto-J's rubrics run to 17 lines, 582 characters)


def check_criteria(lines: str | Sequence[str] | None, what: str = "criteria", max_lines: int = MAX_CRITERIA_LINES,
                   max_chars: int = MAX_CRITERION_CHARS) -> list[str]:  # fmt: skip
    """Criteria, cleaned (a text split into its lines, blank lines dropped, runs of white space made one space);
    ValueError when there are more than `max_lines`, one is longer than `max_chars`, or one holds control or
    binary characters. Every tool cleans criteria here and only here."""
    if lines is None or isinstance(lines, str):
        lines = (lines or "").splitlines()
    for n, line in enumerate(lines, 1):
        if not isinstance(line, str):
            raise ValueError(f"{what} item {n}: expected text, got {type(line).__name__} {line!r:.40}")
    cleaned = [" ".join(line.split()) for line in lines if line and line.strip()]
    if len(cleaned) > max_lines:
        raise ValueError(f"{what}: at most {max_lines} lines, got {len(cleaned)}")
    for n, line in enumerate(cleaned, 1):
        if len(line) > max_chars:
            raise ValueError(f"{what} line {n} has {len(line)} characters; at most {max_chars} characters")
        if any(not ch.isprintable() for ch in line):
            raise ValueError(f"{what} line {n}: contains control or binary characters")
    return cleaned


def _within(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def check_output(output: str | os.PathLike, inputs: dict[str, str | os.PathLike | None], flag: str = "--output",
                 folder: bool = False) -> Path:  # fmt: skip
    """The resolved output path, or ValueError naming the clash: `inputs` maps each input's flag to its path (None
    for an input not given). `folder`: the output is a folder that will be replaced whole (else a file)."""
    out = Path(output).expanduser().resolve()
    for name, given in inputs.items():
        if given is None:
            continue
        source = Path(given).expanduser().resolve()
        if _within(out, source) or _within(source, out):
            where = "is" if out == source else ("sits inside" if _within(out, source) else "contains")
            raise ValueError(f"{flag} {output} {where} {name} {given}: writing there would destroy the input; "
                             f"choose another {flag}")  # fmt: skip
    if not folder and out.is_dir():
        raise ValueError(f"{flag} {output} is a folder; give a file name")
    if folder and out.exists() and not out.is_dir():
        raise ValueError(f"{flag} {output} is a file; give a folder")
    parent = out if folder and out.exists() else out.parent
    while not parent.exists():
        parent = parent.parent
    if not os.access(parent, os.W_OK):
        raise ValueError(f"{flag} {output}: {parent} is not writable")
    return out


def check_replaceable(folder: str | os.PathLike) -> None:
    """FileExistsError unless `folder` is missing, empty, or was written by atomic_dir (holds MARKER)."""
    path = Path(folder)
    if not path.exists():
        return
    if not path.is_dir():
        raise FileExistsError(f"{path} is a file, not a folder; choose a folder to write")
    if (path / MARKER).is_file() or not any(path.iterdir()):
        return
    raise FileExistsError(f"{path} holds files this tool did not write and would be replaced whole; choose a new or "
                          "empty folder (or move those files away yourself)")  # fmt: skip


def at_least(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer >= minimum (and <= maximum, when given: a count that would take hours or all
    memory is a typo)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            bound = f">= {minimum}" if maximum is None else f"from {minimum} to {maximum}"
            raise argparse.ArgumentTypeError(f"expected an integer {bound}, got {value}")
        return value

    return parse


positive_int = at_least(1)


def expected_error(prog: str, error: BaseException) -> str | None:
    """The one-line message for an error a user can cause (bad file, bad path, bad value), or None for a bug
    (which should stay a traceback). Every CLI's main turns the former into `prog: message` and exit status 2."""
    import polars as pl

    if isinstance(error, UnicodeDecodeError):  # a binary file where text was expected, its name not known here
        return f"{prog}: not UTF-8 text (byte {error.object[error.start]:#04x} at offset {error.start})"
    if isinstance(error, FileExistsError | FileNotFoundError) and error.filename:  # not "[Errno 17] File exists: ..."
        hint = " (a file is where a folder must be)" if isinstance(error, FileExistsError) else ""
        return f"{prog}: {error.filename}: {(error.strerror or str(error)).lower()}{hint}"
    if isinstance(error, ValueError | FileExistsError | FileNotFoundError):  # crm_core.data's errors are ValueErrors
        return f"{prog}: {error}"
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):  # a full disk
        where = f"{error.filename}: " if error.filename else ""
        return f"{prog}: {where}{(error.strerror or str(error)).lower()}; files written whole before are unchanged"
    if isinstance(error, IsADirectoryError | NotADirectoryError | PermissionError):
        return f"{prog}: {error.filename}: {error.strerror.lower() if error.strerror else error}"
    if isinstance(error, pl.exceptions.PolarsError):
        return f"{prog}: a data file could not be read ({str(error).splitlines()[0]}); is it complete?"
    return None


def not_there(path: str | os.PathLike, wanted: str) -> str:
    """What is at a path that is not the `wanted` thing ("pairs file", "checkpoint folder"): "no such pairs file"
    only when nothing is there; else "a folder, not a pairs file", "a file, not a checkpoint folder"."""
    where = Path(path)
    if not where.exists():
        return f"no such {wanted}"
    kind = "a folder" if where.is_dir() else "a file" if where.is_file() else "a device, pipe or socket"
    return f"{kind}, not a {wanted}"


def read_text(path: str | os.PathLike, expected: str, max_bytes: int | None = None) -> str:
    """A small text file a user names (a profile, a list of ids), or ValueError naming the file and what was
    expected: missing, a folder, a device or pipe (read without end), too large, or not UTF-8 text."""
    file = Path(path)
    if not file.exists():
        raise ValueError(f"{path}: no such file (expected {expected})")
    if not file.is_file():
        kind = "a folder" if file.is_dir() else "not a regular file"
        raise ValueError(f"{path}: {kind} (expected {expected})")
    size = file.stat().st_size
    if max_bytes is not None and size > max_bytes:
        raise ValueError(f"{path}: {size:,} bytes, more than the {max_bytes:,} allowed (expected {expected})")
    raw = file.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{path}: not UTF-8 text (byte {raw[error.start]:#04x} at offset {error.start}); expected {expected}"
        ) from None


def fail(prog: str, error: Exception, code: int = 2) -> int:
    """For a CLI's `except Exception`: print an expected error's one line to stderr and return `code`; a bug is
    raised again, traceback and all."""
    message = expected_error(prog, error)
    if message is None:
        raise error
    print(message, file=sys.stderr)
    return code
