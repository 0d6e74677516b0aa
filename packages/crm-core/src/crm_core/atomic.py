"""Write files and folders so that readers see the old version or the new one, never half of one."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator:
    """Open a temporary sibling of `path`; on success fsync and rename it over `path`, on error delete it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        with open(tmp, mode, encoding=None if "b" in mode else encoding) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary sibling folder to fill; on success it replaces `path` whole, on error it is removed. Only a
    missing or empty folder, or one made here before, is replaced (crm_core.guard): never a folder of other files."""
    from crm_core.guard import MARKER, check_replaceable

    path = Path(path)
    check_replaceable(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        (tmp / MARKER).write_text("written whole by a USL tool; it may replace this folder\n", encoding="utf-8")
        check_replaceable(path)  # again: the folder may have been filled meanwhile
        old = None
        if path.exists():
            old = path.with_name(f".{path.name}.old-{os.getpid()}")
            os.replace(path, old)
        os.replace(tmp, path)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_result(prog: str, path: str | os.PathLike, text: str) -> bool:
    """Write a command's result to `path` whole (crm_core.atomic.atomic_file); on an OS error (a full disk, a
    read-only folder) say so in one line and return False: the caller still prints the result, so the work is not
    lost, and a file at `path` before is as it was."""
    try:
        with atomic_file(path) as handle:
            handle.write(text + "\n")
    except OSError as error:
        reason = (error.strerror or str(error)).lower()
        print(f"{prog}: could not write {path} ({reason}); a file there before is unchanged; the result is printed "
              "on stdout", file=sys.stderr)  # fmt: skip
        return False
    return True
