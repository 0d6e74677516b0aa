"""training/gpu/quality_encoder.py, the device script, on the CPU with a tiny random BERT and a synthetic pack: it
trains, keeps the frozen layers frozen, and writes what the CPU side reads back."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import load_script


def tiny_pack(folder: Path, n_texts: int = 40, n_pairs: int = 48) -> None:
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=200, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)  # fmt: skip
    BertModel(config).save_pretrained(folder / "minilm", safe_serialization=True)
    rng = np.random.default_rng(0)
    lengths = rng.integers(3, 20, n_texts)
    flat = rng.integers(5, 200, lengths.sum()).astype(np.uint16)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    k = 27
    np.savez_compressed(
        folder / "pack.npz",
        flat=flat,
        offsets=offsets,
        export=np.arange(n_texts, dtype=np.int32),
        pair_prompt=rng.integers(0, 5, n_pairs).astype(np.int32),
        pair_a=rng.integers(5, n_texts, n_pairs).astype(np.int32),
        pair_b=rng.integers(5, n_texts, n_pairs).astype(np.int32),
        pair_ref=np.where(rng.random(n_pairs) < 0.5, rng.integers(5, n_texts, n_pairs), -1).astype(np.int32),
        pair_za=rng.normal(size=(n_pairs, k)).astype(np.float16),
        pair_zb=rng.normal(size=(n_pairs, k)).astype(np.float16),
        pair_y=rng.choice([0.0, 0.3, 0.5, 1.0], n_pairs).astype(np.float32),
        pair_source=rng.integers(0, 2, n_pairs).astype(np.int32),
        pair_val=(np.arange(n_pairs) >= n_pairs - 12).astype(np.int32),
        pair_dlen=rng.normal(size=n_pairs).astype(np.float32),
    )
    (folder / "pack.json").write_text(json.dumps({"sources": ["auto_j", "gpt4_turbo"]}), encoding="utf-8")


def test_device_script_trains_top_layers_and_writes_vectors(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from safetensors.numpy import load_file
    from transformers import AutoModel

    script = load_script("training/gpu/quality_encoder.py")
    tiny_pack(tmp_path / "pack")
    out = tmp_path / "out"
    args = ["--pack", str(tmp_path / "pack"), "--out", str(out), "--variants", "frozen,top1", "--export", "top1",
            "--epochs", "2", "--batch", "8", "--head-epochs", "2", "--hidden", "16",
            "--encoder-lr", "1e-3"]  # fmt: skip
    assert script.main(args) == 0
    report = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert set(report["variants"]) == {"frozen", "top1"}
    assert report["train_pairs"] == 36 and report["val_pairs"] == 12
    assert np.isfinite(report["variants"]["top1"]["best"]["loss"])
    assert report["variants"]["top1"]["steps"] == 10  # 36 pairs in batches of 8, twice

    tuned = {k: v for name in report["export"]["weight_files"] for k, v in load_file(str(out / name)).items()}
    base = AutoModel.from_pretrained(tmp_path / "pack/minilm").state_dict()
    layer_keys = [k for k in tuned if k.startswith("quality_layers.")]
    assert layer_keys and all(k.startswith("quality_layers.1.") for k in layer_keys)  # the top layer only
    moved = max(float(np.abs(tuned[k].astype(np.float32) - base["encoder.layer.1." + k.split(".", 2)[2]].numpy()).max())
                for k in layer_keys)  # fmt: skip
    assert moved > 1e-4  # fine-tuning changed it (or the best state was the start, which a lr of 1e-3 rules out)
    assert {"quality.0.weight", "quality.1.bias", "refsim_weight"} <= set(tuned)
    assert tuned["quality.0.weight"].shape == (16, 2 * 32 + 27)

    parts = [np.load(out / name) for name in report["export"]["vector_files"]]
    rows = np.concatenate([p["rows"] for p in parts])
    vectors = np.concatenate([p["q"].astype(np.float32) * p["scale"].astype(np.float32)[:, None] for p in parts])
    assert sorted(rows.tolist()) == list(range(40))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=0.03)  # unit vectors, int8-rounded
