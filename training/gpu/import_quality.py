"""Bring a device fine-tune of the quality encoder (training/gpu/quality_encoder.py) back into a CRM folder.

Reads what the device wrote (`quality_layers-N.safetensors`: the tuned encoder layers and the quality head;
`vectors-N.npz`: int8 vectors of the packed texts; `metrics.json`) and the pack's texts (`pack_quality.py
--texts`), then:

1. puts the returned vectors into the embedding store (`EmbeddingStore.put`) under the tuned encoder's identity
   (crm_core's `quality_encoder`), so the texts the device encoded are not encoded again on the CPU;
2. adds the reference boost as the shipped fit does (crm_train.compositional.train.boost_reference, the config's
   `refsim_boost`), then scales the whole quality term so that its spread among answers to one prompt equals the
   shipped term's on the same training answers (a sample of `--spread-prompts` prompts with reference answers): the
   criteria readers and the serving gate were fitted against that spread, so only the quality term changes;
3. writes a copy of `--model` with the quality head and reference weight replaced and the tuned layers added
   (`quality_layers.<index>.*` in heads.safetensors), and records what was done in crm.json (`quality_encoder`).

    USL_EMBEDDINGS=data/embeddings uv run python training/gpu/import_quality.py --device runs/gpu-quality/top6 \\
        --output runs/crm-quality-top6
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import shutil
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def read_device(folder: Path) -> tuple[dict[str, np.ndarray], dict, list[tuple[np.ndarray, np.ndarray]]]:
    """The tuned tensors (float32), the device's metrics and the (rows, vectors) of each vector file."""
    from safetensors.numpy import load_file

    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    tensors: dict[str, np.ndarray] = {}
    for name in metrics["export"]["weight_files"]:
        tensors.update({k: v.astype(np.float32) for k, v in load_file(str(folder / name)).items()})
    parts = []
    for name in metrics["export"]["vector_files"]:
        with np.load(folder / name) as data:
            vectors = data["q"].astype(np.float32) * data["scale"].astype(np.float32)[:, None]
            parts.append((data["rows"].astype(np.int64), vectors / np.linalg.norm(vectors, axis=1, keepdims=True)))
    return tensors, metrics, parts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", type=Path, required=True, help="the folder of files the device call wrote")
    parser.add_argument("--texts", type=Path, default=REPO / "runs/gpu-quality/texts.json",
                        help="the pack's texts in row order (pack_quality.py --texts)")  # fmt: skip
    parser.add_argument("--model", type=Path, default=REPO / "space/models/crm-compositional",
                        help="the compositional CRM whose quality term is replaced")  # fmt: skip
    parser.add_argument("--output", type=Path, required=True, help="the new CRM folder (a copy of --model)")
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument("--embeddings", type=Path, default=REPO / "data/embeddings", help="the embedding store")
    parser.add_argument(
        "--spread-prompts",
        type=int,
        default=100,
        help="prompts whose training answers measure both terms' spread (0: keep the tuned spread)",
    )
    args = parser.parse_args(argv)  # fmt: skip
    import torch
    from crm_core.compositional.heads import QUALITY_LAYERS
    from crm_core.compositional.scorer import HEADS_FILE, quality_encoder
    from crm_core.encoder import EmbeddingStore, TextEncoder
    from crm_core.spec import CRMSpec
    from crm_train.compositional import sources as S
    from crm_train.compositional.config import CompositionalConfig
    from crm_train.compositional.features import Features
    from crm_train.compositional.train import QualityNet, boost_reference, centred_std, pair_tensors
    from safetensors.numpy import load_file, save_file

    tuned, metrics, parts = read_device(args.device)
    texts = json.loads(args.texts.read_text(encoding="utf-8"))
    shipped = load_file(str(args.model / HEADS_FILE))
    spec = CRMSpec.load(args.model)
    fields = {f.name for f in dataclasses.fields(CompositionalConfig)}
    config = CompositionalConfig(**{k: v for k, v in spec.extra["config"].items() if k in fields})
    layers = {k: v for k, v in tuned.items() if k.startswith(QUALITY_LAYERS)}
    encoder = quality_encoder(args.model, layers)
    assert encoder is not None
    store = EmbeddingStore(args.embeddings, encoder)
    added = sum(store.put([texts[r] for r in rows[start : start + 4096]], vecs[start : start + 4096])
                for rows, vecs in parts for start in range(0, len(rows), 4096))  # fmt: skip
    print(f"{added} vectors added to the store under {encoder.identity}", flush=True)

    # 2: the reference boost, then the shipped term's spread
    features = Features(store)
    annotations = S.annotation_pairs(args.shared)
    train = [p for p in annotations if not S.annotation_validation(p.prompt)] + S.human_pairs(args.shared, "train")
    train_t = pair_tensors(train, features, shipped["spread"], config)
    net = QualityNet(train_t["xa"].shape[1], config.quality_hidden)
    with torch.no_grad():
        for i, linear in enumerate(m for m in net.quality if isinstance(m, torch.nn.Linear)):
            linear.weight.copy_(torch.from_numpy(tuned[f"quality.{i}.weight"]))
            linear.bias.copy_(torch.from_numpy(tuned[f"quality.{i}.bias"]))
        net.refsim_weight.copy_(torch.from_numpy(tuned["refsim_weight"]))
    rows = [i for i, p in enumerate(train) if p.reference is not None]
    boost = boost_reference(net, train_t, [train[i].prompt for i in rows], rows,
                            config.refsim_boost if config.use_refsim else 0.0)  # fmt: skip
    match = {"scale": 1.0}
    if args.spread_prompts:
        prompts = sorted({train[i].prompt for i in rows})
        chosen = set(random.Random(0).sample(prompts, min(args.spread_prompts, len(prompts))))
        sample = [i for i in rows if train[i].prompt in chosen]
        frozen = Features(EmbeddingStore(args.embeddings, TextEncoder(args.model / "encoder")))
        frozen_t = pair_tensors([train[i] for i in sample], frozen, shipped["spread"], config)
        old = QualityNet(frozen_t["xa"].shape[1], config.quality_hidden)
        old.load_state_dict({"quality.0.weight": torch.from_numpy(shipped["quality.0.weight"]),
                             "quality.0.bias": torch.from_numpy(shipped["quality.0.bias"]),
                             "quality.2.weight": torch.from_numpy(shipped["quality.1.weight"]),
                             "quality.2.bias": torch.from_numpy(shipped["quality.1.bias"]),
                             "refsim_weight": torch.from_numpy(shipped["refsim_weight"]),
                             "length_bias": torch.zeros(1)})  # fmt: skip
        groups = [train[i].prompt for i in sample]
        with torch.no_grad():
            before = centred_std(old(frozen_t["xa"], frozen_t["sa"]).numpy(), groups)
            after = centred_std(net(train_t["xa"][sample], train_t["sa"][sample]).numpy(), groups)
            scale = before / after
            last = [m for m in net.quality if isinstance(m, torch.nn.Linear)][-1]
            last.weight.mul_(scale)
            last.bias.mul_(scale)
            net.refsim_weight.mul_(scale)
        match = {"scale": round(scale, 4), "shipped_spread": round(before, 4), "tuned_spread": round(after, 4),
                 "prompts": len(chosen), "answers": len(sample)}  # fmt: skip
    print("boost", boost, "spread match", match, flush=True)

    # 3: the folder
    if args.output.exists():
        shutil.rmtree(args.output)
    shutil.copytree(args.model, args.output)
    heads = dict(shipped)
    linears = [m for m in net.quality if isinstance(m, torch.nn.Linear)]
    for i, linear in enumerate(linears):
        heads[f"quality.{i}.weight"] = linear.weight.detach().numpy()
        heads[f"quality.{i}.bias"] = linear.bias.detach().numpy()
    heads["refsim_weight"] = net.refsim_weight.detach().numpy().reshape(1)
    heads = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in heads.items()}
    heads.update({k: np.ascontiguousarray(v, dtype=np.float16) for k, v in layers.items()})  # as the device sent them
    save_file(heads, str(args.output / HEADS_FILE))
    spec.extra["quality_encoder"] = {
        "made_by": "training/gpu/quality_encoder.py on " + metrics["device"],
        "layers": metrics["export"]["layers"],
        "validation": {name: v["best"] for name, v in metrics["variants"].items()},
        "reference_boost": boost,
        "spread_match": match,
    }
    spec.save(args.output)
    print(args.output, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
