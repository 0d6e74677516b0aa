"""training/experiments/quality_variants.py --max-tokens: the quality term judged with another token window reads
a scratch copy of the CRM whose encoder is that window, and whose vectors the store keeps apart from the original's."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from conftest import random_compositional_crm

REPO = Path(__file__).resolve().parents[1]


def test_a_token_window_copy_reads_longer_texts_and_keeps_its_own_store_folder(tmp_path):
    sys.path.insert(0, str(REPO / "training" / "experiments"))
    from crm_core.encoder import EmbeddingStore, TextEncoder
    from quality_variants import with_token_window

    model = random_compositional_crm(tmp_path / "crm")
    (model / "onnx").mkdir()
    before = (model / "encoder" / "encoder.json").read_text(encoding="utf-8")
    wider = with_token_window(model, 256, tmp_path / "scratch")
    assert (model / "encoder" / "encoder.json").read_text(encoding="utf-8") == before  # the original is untouched
    assert not (wider / "onnx").exists()  # the copy is scored in PyTorch with its own window
    meta = json.loads((wider / "encoder" / "encoder.json").read_text(encoding="utf-8"))
    assert meta["max_tokens"] == 256 and meta["identity"].endswith("-t256")

    short = "Use headings."
    long = "Paris is the capital of France. " * 10 + "The last sentence is about volcanoes erupting under ice."
    narrow_store = EmbeddingStore(tmp_path / "store", TextEncoder(model / "encoder"))
    wide_store = EmbeddingStore(tmp_path / "store", TextEncoder(wider / "encoder"))
    assert narrow_store.dir != wide_store.dir
    narrow, wide = narrow_store.get([short, long]), wide_store.get([short, long])
    assert np.allclose(narrow[0], wide[0], atol=1e-3)  # under both windows: the same vector
    assert not np.allclose(narrow[1], wide[1], atol=1e-2)  # past 64 tokens only the wider copy reads the end
