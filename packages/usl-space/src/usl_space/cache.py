"""A persistent score cache shared by every visitor, process and restart.

SQLite in WAL mode: each batch of scores is one transaction, so a crash loses at most the batch being written,
never a finished one, and readers never see half a batch. Several processes (sharded scoring under
`accelerate launch`) write into the same file; SQLite serialises their commits.

A score is keyed by (checkpoint, criteria, bench, query, model), as a visitor thinks of it, and also carries a
digest of the texts it judged (query, response, baseline response): a row whose texts have since changed is
treated as missing, so an edited bench can never be served stale scores.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    checkpoint TEXT NOT NULL,
    criteria TEXT NOT NULL,
    bench TEXT NOT NULL,
    idx INTEGER NOT NULL,
    model TEXT NOT NULL,
    digest TEXT NOT NULL,
    value REAL NOT NULL,      -- pairwise: P(model preferred), model shown first; pointwise: the response's score
    value2 REAL,              -- pairwise: P(model preferred), model shown second; pointwise: NULL
    tie REAL,                 -- 3-way heads: P(tie), both orders averaged
    PRIMARY KEY (checkpoint, criteria, bench, idx, model)
) WITHOUT ROWID;
"""
Score = tuple[float, float | None, float | None]


def normalise_criteria(criteria: Sequence[str], dislikes: Sequence[str] = ()) -> str:
    """The cache's name for a criteria set: whitespace collapsed, empty lines dropped, order kept (the model
    reads the criteria in order)."""

    def clean(lines: Sequence[str]) -> list[str]:
        return [text for text in (re.sub(r"\s+", " ", line).strip() for line in lines) if text]

    return json.dumps({"criteria": clean(criteria), "dislikes": clean(dislikes)}, ensure_ascii=False)


def text_digest(*texts: str) -> str:
    """A short digest of the texts a score judged."""
    return hashlib.sha256("\x00".join(texts).encode("utf-8")).hexdigest()[:16]


def checkpoint_id(folder: str | os.PathLike, weights_file: str = "model.safetensors") -> str:
    """A checkpoint's identity for the cache: crm.json plus the weights file that is actually run (an int8
    export and its fp32 source score differently)."""
    folder = Path(folder)
    digest = hashlib.sha256((folder / "crm.json").read_bytes())
    path = folder / weights_file
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the checkpoint's weights are missing")
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:20]


class ScoreCache:
    """Scores on disk (or in memory with path ':memory:'), safe to share between threads and processes."""

    def __init__(self, path: str | os.PathLike):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._memory = sqlite3.connect(":memory:", check_same_thread=False) if self.path == ":memory:" else None
        self._lock = threading.Lock()
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
        sql = (
            "SELECT idx, model, digest, value, value2, tie FROM scores WHERE checkpoint = ? AND criteria = ? "
            f"AND bench = ? AND idx IN ({','.join('?' * len(queries))})"
        )
        with self._lock:
            rows = self._connection().execute(sql, (checkpoint, criteria, bench, *queries)).fetchall()
        return {(idx, model): (v, v2, t) for idx, model, d, v, v2, t in rows if wanted.get((idx, model)) == d}

    def put(
        self,
        checkpoint: str,
        criteria: str,
        bench: str,
        rows: Iterable[tuple[int, str, str, float, float | None, float | None]],
    ) -> None:
        """Store (idx, model, digest, value, value2, tie) rows in one transaction."""
        data = [(checkpoint, criteria, bench, int(i), m, d, float(v), _opt(v2), _opt(t)) for i, m, d, v, v2, t in rows]
        with self._lock:
            db = self._connection()
            with db:
                db.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", data)

    def count(self, checkpoint: str | None = None) -> int:
        with self._lock:
            if checkpoint is None:
                return self._connection().execute("SELECT COUNT(*) FROM scores").fetchone()[0]
            query = "SELECT COUNT(*) FROM scores WHERE checkpoint = ?"
            return self._connection().execute(query, (checkpoint,)).fetchone()[0]


def _opt(value: float | None) -> float | None:
    return None if value is None else float(value)
