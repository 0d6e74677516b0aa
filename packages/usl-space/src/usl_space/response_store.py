"""A response store keyed by content: each response's criteria-free side (scaled properties, quality, projected
embedding), stored under a digest of what it depends on, so that any bench reuses every row it shares with another.

A row's key is SHA-256 over the CRM's response-side id (heads, encoder, reference panel), the query, the response
and the reference panel's answers to that query (the quality term reads them). Adding one model to a bench encodes
only its answers; a bench that differs by one model reuses the rest; a store built by a maintainer (`usl-data
sides`) and published is read by the Space at its start ($USL_RESPONSE_STORE, read-only folders separated by
':'), which then builds only what is missing. Rows live in float32 shards `part-<n>.npz`, each written atomically;
the embedding vectors of the panel's answers in `vectors-<n>.npz`, so that a new model's rows need only its own
answers encoded.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from crm_core.atomic import atomic_file
from crm_core.compositional.heads import ResponseSide
from crm_core.compositional.scorer import CompositionalScorer

from usl_space.instant import panels_of
from usl_space.progress import Progress


def row_key(side_id: str, query: str, response: str, panel: Sequence[str] | None) -> bytes:
    digest = hashlib.sha256()
    for part in (side_id, query, response, *(panel or ())):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.digest()[:16]


class ResponseStore:
    """Rows by key in `folder` (written) and `readonly` folders (read first; a published store)."""

    def __init__(self, folder: str | os.PathLike, readonly: Sequence[str | os.PathLike] = ()):
        self.folder = Path(folder)
        self.index: dict[bytes, tuple[int, int]] = {}
        self.shards: list[dict[str, np.ndarray]] = []
        self.vectors: dict[bytes, np.ndarray] = {}  # the reference panel's answers, by text: a new model needs them
        for root in [*map(Path, readonly), self.folder]:
            for path in sorted(root.glob("vectors-*.npz")):
                try:
                    with np.load(path, allow_pickle=False) as data:
                        self.vectors.update(zip(map(bytes, data["keys"]), data["vectors"], strict=True))
                except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
                    print(f"usl: response store shard {path} is unreadable ({error}); skipped", file=sys.stderr)
            for path in sorted(root.glob("part-*.npz")):
                try:
                    with np.load(path, allow_pickle=False) as data:
                        self._add({k: data[k] for k in ("keys", "z", "quality", "voice")}, path)
                except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:  # torn or foreign: rebuilt
                    print(f"usl: response store shard {path} is unreadable ({error}); skipped", file=sys.stderr)

    def _add(self, shard: dict[str, np.ndarray], where: Path | None = None) -> None:
        """Index a shard's rows; a row with a NaN or an infinite value (a damaged or doctored published store) is
        left out, so it is computed again rather than trusted, and the shard is named on stderr."""
        number = len(self.shards)
        self.shards.append(shard)
        finite = np.ones(len(shard["keys"]), bool)
        for name in ("z", "quality", "voice"):
            values = np.asarray(shard[name], np.float64)
            finite &= np.isfinite(values.reshape(len(values), -1)).all(axis=1)
        if not finite.all():
            print(f"usl: response store shard {where or 'new'}: {int((~finite).sum())} row(s) with a NaN or infinite "
                  "value left out (they are computed again)", file=sys.stderr)  # fmt: skip
        for row, key in enumerate(shard["keys"]):
            if finite[row]:
                self.index[bytes(key)] = (number, row)

    def _panel_vectors(self, scorer: CompositionalScorer, panel_texts: list[str]) -> dict[str, np.ndarray]:
        """The panel's answers' vectors by text, from the store (float16); the missing ones encoded once, saved, and
        given as encoded."""
        identity = scorer.encoder.identity
        known = self._stored_vectors(scorer, panel_texts)
        new = [t for t in panel_texts if t not in known]
        if new:
            encode = scorer.store.get if scorer.store is not None else scorer.encoder.encode
            encoded = np.asarray(encode(new), np.float32)
            known.update(zip(new, encoded, strict=True))
            vectors = encoded.astype(np.float16)
            keys = [_vector_key(identity, t) for t in new]
            self.folder.mkdir(parents=True, exist_ok=True)
            with atomic_file(self.folder / f"vectors-{_stamp()}.npz", "wb") as handle:
                np.savez(handle, keys=np.array([np.frombuffer(k, np.uint8) for k in keys]), vectors=vectors)
            self.vectors.update(zip(keys, vectors, strict=True))
        return known

    def _stored_vectors(self, scorer: CompositionalScorer, texts: list[str]) -> dict[str, np.ndarray]:
        """The vectors of those texts the store holds, by text (none encoded)."""
        identity = scorer.encoder.identity
        return {t: self.vectors[k].astype(np.float32) for t in texts if (k := _vector_key(identity, t)) in self.vectors}

    def __len__(self) -> int:
        return len(self.index)

    def side(self, scorer: CompositionalScorer, query: dict[int, str], outputs: dict[tuple[int, str], str],
             reference_outputs: dict[tuple[int, str], str], progress: bool = False,
             report: Progress | None = None, chunk: int = 2048,
             own: Sequence[str] | None = None) -> tuple[ResponseSide, int]:  # fmt: skip
        """The response side of `outputs` in sorted (idx, model) order, and how many rows had to be computed; new
        rows are computed and saved a shard of `chunk` rows at a time (a build cut short keeps its finished shards),
        `report` set to the rows to compute and advanced after each shard; `own`: the bench's own panel (panels_of)."""
        keys = sorted(outputs)
        panels, scale = panels_of(scorer, keys, reference_outputs, own)
        side_id = scorer.response_side_id if scale == 1.0 else f"{scorer.response_side_id}-consensus{scale:g}"
        digests = [row_key(side_id, query[i], outputs[(i, m)], panels[n] if panels else None)
                   for n, (i, m) in enumerate(keys)]  # fmt: skip
        missing = [n for n, d in enumerate(digests) if d not in self.index]
        if report is not None:
            report.total = len(missing)
        for start in range(0, len(missing), chunk):
            rows = missing[start : start + chunk]
            todo = [keys[n] for n in rows]
            panel_texts = sorted({t for n in rows for t in panels[n]}) if panels else []
            texts = [outputs[k] for k in todo]  # their own vectors too where the store has them (an earlier build)
            known = self._stored_vectors(scorer, texts) | self._panel_vectors(scorer, panel_texts)
            compared = [panels[n] for n in rows] if panels else None
            new = scorer.response_side([query[i] for i, _ in todo], texts, compared, progress, known, scale)
            shard = {"keys": np.array([np.frombuffer(digests[n], np.uint8) for n in rows]),
                     "z": new.z.astype(np.float32), "quality": new.quality.astype(np.float32),
                     "voice": new.voice.astype(np.float32)}  # fmt: skip
            self.folder.mkdir(parents=True, exist_ok=True)
            with atomic_file(self.folder / f"part-{_stamp()}.npz", "wb") as handle:
                np.savez(handle, keys=shard["keys"], z=shard["z"], quality=shard["quality"], voice=shard["voice"])
            self._add(shard)
            if report is not None:
                report.advance(start + len(rows))
        where = [self.index[d] for d in digests]
        parts = {name: np.stack([self.shards[s][name][r] for s, r in where]) for name in ("z", "quality", "voice")}
        side = ResponseSide(parts["z"], parts["quality"].astype(np.float64), parts["voice"])
        return side, len(missing)


def _stamp() -> str:
    """A shard name no other writer takes: time in nanoseconds and process id (a reused pid later has a later time)."""
    return f"{time.time_ns():020d}-{os.getpid()}"


def _vector_key(identity: str, text: str) -> bytes:
    return hashlib.sha256(f"{identity}\x00{text}".encode("utf-8", "surrogatepass")).digest()[:16]


def default_store(home: Path) -> ResponseStore:
    """The store under the cache folder, with $USL_RESPONSE_STORE's published folders read first."""
    readonly = [resolve_store(p) for p in os.environ.get("USL_RESPONSE_STORE", "").split(os.pathsep) if p]
    return ResponseStore(home / "response-store", readonly)


STORE_CARD = """---
license: cc-by-nc-4.0
tags: [usl, leaderboard]
---
# USL response store

The criteria-free response side of a USL bench, computed by the CRM named in `crm.json` (crm_core.compositional.scorer):
per response a 16-byte key (SHA-256 over the CRM's response-side id, the query, the response and the reference
panel's answers), its scaled properties `z`, its quality and its projected embedding `voice`, in `part-*.npz`;
the reference panel's answers' embedding vectors in `vectors-*.npz`.
It is derived from AlpacaEval's model outputs (tatsu-lab/alpaca_eval, CC BY-NC 4.0): non-commercial use only.
The Space reads it through $USL_RESPONSE_STORE (this repo id or a local copy) and computes only what is missing.
"""


def publish(folder: str | os.PathLike, repo_id: str, api=None, private: bool = False) -> str:
    """Upload a store folder to a Hub dataset repo with its card (licence: CC BY-NC, as its source)."""
    import shutil
    import tempfile

    from crm_core.hub import REPO_ID

    folder = Path(folder)
    if not REPO_ID.fullmatch(repo_id):
        raise ValueError(f"{repo_id!r} is not a Hub repo id (ORG/NAME)")
    parts = sorted(folder.glob("part-*.npz")) + sorted(folder.glob("vectors-*.npz"))
    if not any(p.name.startswith("part-") for p in parts):
        raise FileNotFoundError(f"{folder}: no part-*.npz shards to publish (build them with usl-data sides)")
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi()
    with tempfile.TemporaryDirectory() as staging:
        stage = Path(staging) / "store"
        stage.mkdir()
        for part in parts:
            shutil.copy2(part, stage / part.name)
        (stage / "README.md").write_text(STORE_CARD, encoding="utf-8")
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(folder_path=str(stage), repo_id=repo_id, repo_type="dataset",
                          commit_message=f"USL response store ({len(parts)} shards)")  # fmt: skip
    return f"https://huggingface.co/datasets/{repo_id}"


def resolve_store(name: str) -> Path:
    """A local store folder for `name`: the folder itself, or a snapshot of the Hub dataset repo (from the local
    Hub cache when offline)."""
    from crm_core.hub import REPO_ID

    path = Path(name).expanduser()
    if path.is_dir() or not REPO_ID.fullmatch(name):
        return path
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(name, repo_type="dataset", allow_patterns=["part-*.npz", "vectors-*.npz"]))
