"""training/experiments/quality_smollm2.py: SmolLM2 reads each text once, ever (its vectors are kept on disk and a
new run finds them), and the stand-in store gives each text its own standardised vector."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "training" / "experiments"))

from quality_smollm2 import LAYERS, SmolVectors, StandardisedStore  # noqa: E402


class CountingReader:
    """A stand-in for SmolLM2: a vector per text that depends on the text, and a count of texts read."""

    def __init__(self):
        self.read = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.read += texts
        codes = np.array([[sum(map(ord, t)) % 97, len(t), t.count(" ")] for t in texts], dtype=np.float32)
        return np.stack([codes * (j + 1) for j in range(len(LAYERS))], axis=1).astype(np.float16)


def test_each_text_is_read_once_and_a_new_run_resumes_from_disk(tmp_path):
    texts = [f"answer number {i} " * (i % 5 + 1) for i in range(7)]
    first = CountingReader()
    vectors = SmolVectors(first, tmp_path / "cache", chunk=3)
    got = vectors.raw(texts[:5] + texts[:2], LAYERS[0])
    assert sorted(first.read) == sorted(texts[:5])  # duplicates read once
    assert len(list((tmp_path / "cache").glob("part-*.npz"))) == 2  # chunks of 3: 3 + 2
    np.testing.assert_array_equal(got[5:], got[:2])

    second = CountingReader()
    again = SmolVectors(second, tmp_path / "cache", chunk=3)
    np.testing.assert_array_equal(again.raw(texts[:5], LAYERS[0]), got[:5])
    assert second.read == []  # nothing read again
    again.raw(texts, LAYERS[-1])
    assert sorted(second.read) == sorted(texts[5:])
    assert not list((tmp_path / "cache").glob("writing-*"))


def test_the_store_standardises_with_the_fitting_texts_statistics(tmp_path):
    texts = [f"text {i} " + "word " * i for i in range(20)]
    vectors = SmolVectors(CountingReader(), tmp_path / "cache")
    store = StandardisedStore(vectors, LAYERS[-1], texts)
    x = store.get(texts) * np.sqrt(3)
    np.testing.assert_allclose(x.mean(0), 0.0, atol=1e-4)
    np.testing.assert_allclose(x.std(0), 1.0, atol=1e-3)
    assert store.get([]).shape == (0, 3)
    np.testing.assert_array_equal(store.get([texts[3]])[0], store.get(texts)[3])
