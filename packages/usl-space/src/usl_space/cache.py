"""A persistent score cache shared by every visitor, process and restart.

SQLite in WAL mode: each batch of scores is one transaction, so a crash loses at most the batch being written,
never a finished one, and readers never see half a batch. Several processes (sharded scoring under
`accelerate launch`) write into the same file; SQLite serialises their commits.

A score is keyed by (checkpoint, criteria, bench, query, model), as a visitor thinks of it, and also carries a
digest of the texts it judged (query, response, baseline response): a row whose texts have since changed is
treated as missing, so an edited bench can never be served stale scores. Scores of visitors' uploaded models are
kept in a table of their own and expire after a day.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from crm_core.compositional.cues import VERSION as CUES_VERSION
from crm_core.compositional.memory import MEMORY_FILE

COLUMNS = """
    checkpoint TEXT NOT NULL,
    criteria TEXT NOT NULL,
    bench TEXT NOT NULL,
    idx INTEGER NOT NULL,
    model TEXT NOT NULL,
    digest TEXT NOT NULL,
    value REAL NOT NULL,      -- pairwise: P(model preferred), model shown first; pointwise: the response's score
    value2 REAL,              -- pairwise: P(model preferred), model shown second; pointwise: NULL
    tie REAL,                 -- 3-way heads: P(tie), both orders averaged
"""
KEY = "PRIMARY KEY (checkpoint, criteria, bench, idx, model)"
# visitors' uploaded models are kept apart, with the time they were written, and dropped after UPLOAD_SECONDS
SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS scores ({COLUMNS}    {KEY}\n) WITHOUT ROWID;\n"
    f"CREATE TABLE IF NOT EXISTS upload_scores ({COLUMNS}    written REAL NOT NULL, {KEY}\n) WITHOUT ROWID;\n"
)
UPLOAD_SECONDS = 24 * 3600  # an uploaded model's scores are kept a day, never with the shared ones
Score = tuple[float, float | None, float | None]


def criteria_key(criteria: Sequence[str], dislikes: Sequence[str] = ()) -> str:
    """The cache's name for a criteria set, cleaned by crm_core.guard.check_criteria (order kept: the model reads
    the criteria in order)."""
    return json.dumps({"criteria": list(criteria), "dislikes": list(dislikes)}, ensure_ascii=False)


def text_digest(*texts: str) -> str:
    """A short digest of the texts a score judged."""
    return hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()[:16]


def checkpoint_id(folder: str | os.PathLike, weights_file: str = "model.safetensors") -> str:
    """A checkpoint's identity for the cache: crm.json plus the weights file that is actually run (an int8
    export and its fp32 source score differently) and, where there is one, the phrasing memory that reads criteria
    (with the version of the word lists that read them beside it: crm_core.compositional.cues)."""
    folder = Path(folder)
    digest = hashlib.sha256((folder / "crm.json").read_bytes())
    if (folder / MEMORY_FILE).is_file():
        digest.update((folder / MEMORY_FILE).read_bytes())
        digest.update(f"cues{CUES_VERSION}".encode())  # the word lists read criteria beside the memory
    path = folder / weights_file
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the checkpoint's weights are missing")
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:20]


def _looks_like_sqlite(path: Path) -> bool:
    """Whether a file starts as an SQLite database does: only such a file, made by this cache and since damaged, is
    ever set aside; any other file named as the cache is refused, never moved."""
    with open(path, "rb") as handle:
        return handle.read(16) == b"SQLite format 3\x00"


class ScoreCache:
    """Scores on disk (or in memory with path ':memory:'), safe to share between threads and processes."""

    def __init__(self, path: str | os.PathLike):
        self.path = str(path)
        if self.path != ":memory:":
            existing = Path(self.path)
            if existing.exists() and not existing.is_file():
                raise ValueError(f"{self.path}: the score cache must be a file (or a new path), not a folder")
            if existing.is_file() and existing.stat().st_size and not _looks_like_sqlite(existing):
                raise ValueError(f"{self.path}: not a score cache (an SQLite file): give a new path or the cache's own")
            existing.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._memory = sqlite3.connect(":memory:", check_same_thread=False) if self.path == ":memory:" else None
        self._lock = threading.Lock()
        try:
            with self._connection() as db:
                db.executescript(SCHEMA)
        except sqlite3.DatabaseError as error:  # a corrupt file: set aside (never deleted), start an empty cache
            if self._memory is not None:
                raise
            if getattr(self._local, "db", None) is not None:
                self._local.db.close()
                self._local.db = None
            aside = f"{self.path}.corrupt-{int(time.time())}"
            os.replace(self.path, aside)
            print(f"usl: score cache {self.path} is unreadable ({error}); moved it to {aside} and started an empty "
                  "one (scores are recomputed as needed)", file=sys.stderr)  # fmt: skip
            with self._connection() as db:
                db.executescript(SCHEMA)

    def _connection(self) -> sqlite3.Connection:
        if self._memory is not None:
            return self._memory
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=60)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    def get(
        self, checkpoint: str, criteria: str, bench: str, keys: Iterable[tuple[int, str, str]]
    ) -> dict[tuple[int, str], Score]:
        """Cached scores for (idx, model, digest) keys; absent and stale keys are left out."""
        wanted = {(int(idx), model): digest for idx, model, digest in keys}
        if not wanted:
            return {}
        queries = sorted({idx for idx, _ in wanted})  # only the rows asked for, not the whole criteria set
        where = f"checkpoint = ? AND criteria = ? AND bench = ? AND idx IN ({','.join('?' * len(queries))})"
        columns = "idx, model, digest, value, value2, tie"
        sql = (f"SELECT {columns} FROM scores WHERE {where} UNION ALL "
               f"SELECT {columns} FROM upload_scores WHERE {where} AND written > ?")  # fmt: skip
        args = (checkpoint, criteria, bench, *queries)
        with self._lock:
            rows = self._connection().execute(sql, (*args, *args, time.time() - UPLOAD_SECONDS)).fetchall()
        return {(idx, model): (v, v2, t) for idx, model, d, v, v2, t in rows if wanted.get((idx, model)) == d}

    def put(
        self,
        checkpoint: str,
        criteria: str,
        bench: str,
        rows: Iterable[tuple[int, str, str, float, float | None, float | None]],
        uploads: frozenset[str] | set[str] = frozenset(),
    ) -> None:
        """Store (idx, model, digest, value, value2, tie) rows in one transaction. Rows of models in `uploads`
        (visitors' uploaded models) go to their own table, and upload rows older than a day are dropped."""
        data = [(checkpoint, criteria, bench, int(i), m, d, float(v), _opt(v2), _opt(t)) for i, m, d, v, v2, t in rows]
        shared = [row for row in data if row[4] not in uploads]
        now = time.time()
        apart = [(*row, now) for row in data if row[4] in uploads]
        with self._lock:
            db = self._connection()
            with db:
                db.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", shared)
                if apart:
                    db.executemany("INSERT OR REPLACE INTO upload_scores VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", apart)
                    db.execute("DELETE FROM upload_scores WHERE written <= ?", (now - UPLOAD_SECONDS,))

    def count(self, checkpoint: str | None = None, table: str = "scores") -> int:
        """Rows in the shared scores (or `table="upload_scores"`), of one checkpoint when given."""
        if table not in ("scores", "upload_scores"):
            raise ValueError(f"no table {table!r}")
        with self._lock:
            if checkpoint is None:
                return self._connection().execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            query = f"SELECT COUNT(*) FROM {table} WHERE checkpoint = ?"
            return self._connection().execute(query, (checkpoint,)).fetchone()[0]


def _opt(value: float | None) -> float | None:
    return None if value is None else float(value)
