"""Fine-tune MiniLM for the compositional CRM's quality term on a GPU (self-contained: runs in the device image).

Needs only PyTorch, transformers (4.57 or 5.x), safetensors and numpy; no project package. It reads a pack made on
the CPU by `training/gpu/pack_quality.py` (token ids of every text, the quality pairs with their measured
properties, soft labels, sources and splits, and MiniLM's float16 weights) and trains, for each variant, the
quality term of crm_train.compositional.train (QualityNet: an MLP over [e(r), e(q) * e(r), z] plus a weight on
cos(e(r), e(reference)) and, in training only, a length-bias term) with the encoder:

- `frozen`: the encoder frozen, the head alone (the shipped recipe, here as the baseline on the same split);
- `topK`: the top K transformer layers fine-tuned with the head (warm-started from the frozen head);
- `full`: every layer fine-tuned with the head.

Each variant keeps its state of least validation loss (checked every half epoch). The variant named by
`--export` (a topK one) then writes, under --out: its tuned layers and head (`quality_layers-N.safetensors`, the
keys crm_core's heads read), the vectors of every export text through the tuned encoder as int8 with a float16
scale per row (`vectors-N.npz`, at most 16 MiB a file), and `metrics.json` (per variant: validation loss and
accuracy overall and per source, seconds, the device). Runs on the CPU too (tests use a tiny pack).

    python3 training/gpu/quality_encoder.py --pack gpu_pack --out $OUT --variants frozen,top2,full --export top2
    # what the 2026-11-26 run brought back:
    python3 training/gpu/quality_encoder.py --pack gpu_pack --out $OUT --variants frozen,top6 --export top6 \
        --epochs 2 --export-rows gpu_pack/export_rows.npy --variant-seconds 120
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

MAX_FILE_BYTES = 15 * 2**20  # files back from the device: at most 16 MiB each


# -- data -------------------------------------------------------------------------------------------------------------
class Texts:
    """Every text's token ids, padded into one (n, T) tensor on the device, with lengths."""

    def __init__(self, flat: np.ndarray, offsets: np.ndarray, device: torch.device):
        n = len(offsets) - 1
        lengths = np.diff(offsets)
        ids = np.zeros((n, int(lengths.max())), dtype=np.int64)
        for i in range(n):
            ids[i, : lengths[i]] = flat[offsets[i] : offsets[i + 1]]
        self.ids = torch.from_numpy(ids).to(device)
        self.lengths = torch.from_numpy(lengths.astype(np.int64)).to(device)

    def batch(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Token ids and attention mask of `rows`, cut to the longest of them."""
        lengths = self.lengths[rows]
        width = int(lengths.max())
        mask = torch.arange(width, device=rows.device)[None, :] < lengths[:, None]
        return self.ids[rows, :width], mask.long()


def load_pack(pack: Path, device: torch.device) -> tuple[Texts, dict, dict]:
    data = np.load(pack / "pack.npz")
    texts = Texts(data["flat"], data["offsets"], device)
    pairs = {k.removeprefix("pair_"): torch.from_numpy(np.asarray(data[k])).to(device) for k in data.files
             if k.startswith("pair_")}  # fmt: skip
    for k in ("za", "zb", "dlen", "y"):
        pairs[k] = pairs[k].float()
    pairs["w"] = source_weights(pairs["source"], pairs["val"])
    meta = json.loads((pack / "pack.json").read_text(encoding="utf-8"))
    meta["export"] = np.asarray(data["export"])
    return texts, pairs, meta


def source_weights(source: torch.Tensor, split: torch.Tensor) -> torch.Tensor:
    """Each source counts the same in a split's loss, whatever its size (crm_train's pair_tensors, per split)."""
    w = torch.ones(len(source), device=source.device)
    for part in split.unique():
        in_part = split == part
        names = source[in_part].unique()
        for name in names:
            mask = in_part & (source == name)
            w[mask] = float(in_part.sum()) / (len(names) * float(mask.sum()))
    return w


# -- model ------------------------------------------------------------------------------------------------------------
class Encoder(torch.nn.Module):
    """MiniLM: mean-pooled, L2-normalised token states (crm_core.encoder.TextEncoder's vectors)."""

    def __init__(self, folder: Path):
        super().__init__()
        from transformers import AutoModel

        self.model = AutoModel.from_pretrained(folder, attn_implementation="sdpa").float()  # transformers 5 keeps fp16

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        states = self.model(input_ids=ids, attention_mask=mask)[0].float()
        m = mask.unsqueeze(-1).float()
        return F.normalize((states * m).sum(1) / m.sum(1).clamp(min=1), dim=-1)

    def train_only_top(self, k: int | None) -> list[torch.nn.Parameter]:
        """Freeze all but the top `k` transformer layers (None: train everything); the parameters left to train."""
        layers = self.model.encoder.layer
        for p in self.model.parameters():
            p.requires_grad_(k is None)
        if k is not None:
            for layer in layers[len(layers) - k :]:
                for p in layer.parameters():
                    p.requires_grad_(True)
        return [p for p in self.model.parameters() if p.requires_grad]


class QualityHead(torch.nn.Module):
    """crm_train.compositional.train.QualityNet: quality(x) + w * refsim; length_bias for training only."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.quality = torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, 1))
        self.refsim_weight = torch.nn.Parameter(torch.zeros(1))
        self.length_bias = torch.nn.Parameter(torch.zeros(1))

    def score(self, q: torch.Tensor, r: torch.Tensor, z: torch.Tensor, ref: torch.Tensor | None,
              has_ref: torch.Tensor) -> torch.Tensor:  # fmt: skip
        x = torch.cat([r, q * r, z], dim=1)
        sim = (r * ref).sum(1) * has_ref if ref is not None else torch.zeros(len(r), device=r.device)
        return self.quality(x)[:, 0] + self.refsim_weight[0] * sim


def pair_logits(encoder: Encoder, head: QualityHead, texts: Texts, pairs: dict, rows: torch.Tensor,
                vectors: torch.Tensor | None = None) -> torch.Tensor:  # fmt: skip
    """Logit that A beats B for pairs `rows`; the texts are encoded once each (or read from `vectors`)."""
    parts = [pairs["prompt"][rows], pairs["a"][rows], pairs["b"][rows], pairs["ref"][rows].clamp(min=0)]
    needed, inverse = torch.unique(torch.cat(parts), return_inverse=True)
    if vectors is None:
        with torch.autocast(device_type=needed.device.type, dtype=torch.bfloat16, enabled=needed.is_cuda):
            vecs = encoder(*texts.batch(needed))
    else:
        vecs = vectors[needed]
    q, a, b, ref = vecs[inverse].float().split(len(rows))
    has_ref = (pairs["ref"][rows] >= 0).float()
    logit = head.score(q, a, pairs["za"][rows], ref, has_ref) - head.score(q, b, pairs["zb"][rows], ref, has_ref)
    return logit + head.length_bias[0] * pairs["dlen"][rows]


@torch.no_grad()
def encode_all(encoder: Encoder, texts: Texts, rows: torch.Tensor, batch: int = 512) -> torch.Tensor:
    """Vectors of `rows` in float32, in batches sorted by length (little padding)."""
    encoder.eval()
    order = rows[torch.argsort(texts.lengths[rows])]
    out = torch.zeros(len(texts.lengths), encoder.model.config.hidden_size, device=rows.device)
    for start in range(0, len(order), batch):
        part = order[start : start + batch]
        out[part] = encoder(*texts.batch(part)).float()
    return out


@torch.no_grad()
def validate(encoder, head, texts, pairs, rows, sources: list[str], vectors=None) -> dict:
    encoder.eval()
    head.eval()
    logits = torch.cat([pair_logits(encoder, head, texts, pairs, part, vectors) for part in rows.split(512)])
    y, w, src = pairs["y"][rows], pairs["w"][rows], pairs["source"][rows]
    loss = float((F.binary_cross_entropy_with_logits(logits, y, reduction="none") * w).mean())
    decided = y != 0.5
    right = ((logits > 0) == (y > 0.5)) & decided
    out = {"loss": round(loss, 4), "accuracy": round(float(right.sum() / decided.sum()), 4)}
    for s, name in enumerate(sources):
        mask = decided & (src == s)
        if mask.any():
            out[f"accuracy_{name}"] = round(float(right[mask].sum() / mask.sum()), 4)
    return out


# -- training ---------------------------------------------------------------------------------------------------------
def fit_head(encoder, texts, pairs, train_rows, val_rows, sources, args, device) -> tuple[QualityHead, dict]:
    """The shipped recipe on this split: frozen vectors, the head alone (AdamW, lr 1e-3, batch 256), best epoch."""
    all_rows = torch.unique(torch.cat([pairs[k][torch.cat([train_rows, val_rows])] for k in ("prompt", "a", "b")]
                                      + [pairs["ref"][pairs["ref"] >= 0]]))  # fmt: skip
    vectors = encode_all(encoder, texts, all_rows)
    torch.manual_seed(args.seed)
    head = QualityHead(2 * encoder.model.config.hidden_size + pairs["za"].shape[1], args.hidden).to(device)
    opt = torch.optim.AdamW(head.parameters(), lr=1e-3, weight_decay=0.01)
    best, best_state, history = math.inf, None, []
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    for epoch in range(args.head_epochs):
        head.train()
        for part in train_rows[torch.randperm(len(train_rows), generator=gen).to(device)].split(256):
            loss = weighted_bce(pair_logits(encoder, head, texts, pairs, part, vectors), pairs, part)
            opt.zero_grad()
            loss.backward()
            opt.step()
        metrics = validate(encoder, head, texts, pairs, val_rows, sources, vectors)
        history.append({"epoch": epoch, **metrics})
        if metrics["loss"] < best:
            best, best_state = metrics["loss"], {k: v.clone() for k, v in head.state_dict().items()}
    head.load_state_dict(best_state)
    return head, {"history": history, "best": min(history, key=lambda h: h["loss"])}


def weighted_bce(logits: torch.Tensor, pairs: dict, rows: torch.Tensor) -> torch.Tensor:
    return (F.binary_cross_entropy_with_logits(logits, pairs["y"][rows], reduction="none") * pairs["w"][rows]).mean()


def fine_tune(encoder, head, top: int | None, texts, pairs, train_rows, val_rows, sources, args, device) -> dict:
    """Encoder layers (all, or the top `top`) and the head together; keep the state of least validation loss."""
    params = encoder.train_only_top(top)
    opt = torch.optim.AdamW([{"params": params, "lr": args.encoder_lr}, {"params": head.parameters(),
                             "lr": args.head_lr}], weight_decay=0.01)  # fmt: skip
    steps_per_epoch = math.ceil(len(train_rows) / args.batch)
    total = steps_per_epoch * args.epochs
    warmup = max(1, total // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / total)))
    best = validate(encoder, head, texts, pairs, val_rows, sources)
    history = [{"step": 0, **best}]
    best_state = snapshot(encoder, head)
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    step, started = 0, time.time()
    check_every = max(1, steps_per_epoch // 2)
    for _ in range(args.epochs):
        for part in train_rows[torch.randperm(len(train_rows), generator=gen).to(device)].split(args.batch):
            encoder.train()
            head.train()
            loss = weighted_bce(pair_logits(encoder, head, texts, pairs, part), pairs, part)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params + list(head.parameters()), 1.0)
            opt.step()
            sched.step()
            step += 1
            if step % check_every == 0 or step == total:
                metrics = validate(encoder, head, texts, pairs, val_rows, sources)
                history.append({"step": step, "seconds": round(time.time() - started, 1), **metrics})
                print(json.dumps(history[-1]), flush=True)
                if metrics["loss"] < best["loss"]:
                    best, best_state = metrics, snapshot(encoder, head)
            if stop(step, started, args):
                break
        if stop(step, started, args):
            break
    encoder.load_state_dict(best_state[0])
    head.load_state_dict(best_state[1])
    return {"history": history, "best": best, "steps": step, "seconds": round(time.time() - started, 1)}


def stop(step: int, started: float, args) -> bool:
    """A fine-tune ends early at --max-steps or after --variant-seconds (the device call has a hard limit)."""
    return bool(args.max_steps and step >= args.max_steps) or bool(
        args.variant_seconds and time.time() - started > args.variant_seconds
    )


def snapshot(encoder, head) -> tuple[dict, dict]:
    return ({k: v.detach().clone() for k, v in encoder.state_dict().items()},
            {k: v.detach().clone() for k, v in head.state_dict().items()})  # fmt: skip


# -- export -----------------------------------------------------------------------------------------------------------
def export(encoder: Encoder, head: QualityHead, top: int, texts: Texts, rows: np.ndarray, out: Path) -> dict:
    """The tuned top layers and head (crm_core key names) and the export texts' vectors, int8 per row."""
    from safetensors.torch import save_file

    layers = encoder.model.encoder.layer
    first = len(layers) - top
    tensors = {f"quality_layers.{first + j}.{k}": v.detach().float().cpu().contiguous()
               for j, layer in enumerate(layers[first:]) for k, v in layer.state_dict().items()}  # fmt: skip
    linears = [m for m in head.quality if isinstance(m, torch.nn.Linear)]
    for i, m in enumerate(linears):
        tensors[f"quality.{i}.weight"] = m.weight.detach().float().cpu().contiguous()
        tensors[f"quality.{i}.bias"] = m.bias.detach().float().cpu().contiguous()
    tensors["refsim_weight"] = head.refsim_weight.detach().float().cpu().reshape(1)
    tensors["length_bias"] = head.length_bias.detach().float().cpu().reshape(1)
    tensors = {k: v.half() if k.startswith("quality_layers.") else v for k, v in tensors.items()}
    weight_files, part, size = [], {}, 0
    for key, value in tensors.items():  # in files under the size limit on what comes back
        if part and size + value.numel() * value.element_size() > MAX_FILE_BYTES:
            weight_files.append(part)
            part, size = {}, 0
        part[key], size = value, size + value.numel() * value.element_size()
    weight_files.append(part)
    for k, part in enumerate(weight_files):
        save_file(part, str(out / f"quality_layers-{k}.safetensors"))
    vectors = encode_all(encoder, texts, torch.from_numpy(rows).to(texts.ids.device))[torch.from_numpy(rows)]
    vectors = vectors.cpu().numpy()
    scale = np.maximum(np.abs(vectors).max(axis=1), 1e-8) / 127.0
    q = np.clip(np.round(vectors / scale[:, None]), -127, 127).astype(np.int8)
    per_file = MAX_FILE_BYTES // (vectors.shape[1] + 2)
    files = []
    for k, start in enumerate(range(0, len(rows), per_file)):
        path = out / f"vectors-{k}.npz"
        np.savez(path, rows=rows[start : start + per_file].astype(np.int32), q=q[start : start + per_file],
                 scale=scale[start : start + per_file].astype(np.float16))  # fmt: skip
        files.append(path.name)
    return {
        "layers": list(range(first, len(layers))),
        "vector_files": files,
        "vectors": len(rows),
        "weight_files": [f"quality_layers-{k}.safetensors" for k in range(len(weight_files))],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pack", type=Path, required=True, help="the folder pack_quality.py wrote")
    parser.add_argument("--out", type=Path, required=True, help="where weights, vectors and metrics.json go")
    parser.add_argument("--variants", default="frozen,top2,full", help="comma-separated: frozen, topK, full")
    parser.add_argument("--export", default="top2", help="the topK variant whose weights and vectors are written")
    parser.add_argument("--export-rows", type=Path, help="a .npy of the text rows whose vectors are written "
                        "(default: the pack's `export`, every text)")  # fmt: skip
    parser.add_argument("--epochs", type=int, default=4, help="fine-tuning epochs over the training pairs")
    parser.add_argument("--batch", type=int, default=64, help="pairs per fine-tuning step")
    parser.add_argument("--encoder-lr", type=float, default=3e-5, help="peak learning rate of the tuned layers")
    parser.add_argument("--head-lr", type=float, default=3e-4, help="learning rate of the head while fine-tuning")
    parser.add_argument("--head-epochs", type=int, default=12, help="epochs of the frozen head fit (shipped: 12)")
    parser.add_argument("--hidden", type=int, default=256, help="hidden width of the quality head (shipped: 256)")
    parser.add_argument("--max-steps", type=int, default=0, help="stop each fine-tune after this many steps (tests)")
    parser.add_argument("--variant-seconds", type=float, default=0, help="stop each fine-tune after this long (0: no)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the head's initialisation and the batch order")
    args = parser.parse_args(argv)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.backends.cuda.matmul.allow_tf32 = True
    args.out.mkdir(parents=True, exist_ok=True)
    texts, pairs, meta = load_pack(args.pack, device)
    if args.export_rows:
        meta["export"] = np.load(args.export_rows).astype(np.int64)
    sources = meta["sources"]
    train_rows = torch.nonzero(pairs["val"] == 0)[:, 0]
    val_rows = torch.nonzero(pairs["val"] == 1)[:, 0]
    report = {"device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu", "torch": torch.__version__,
              "train_pairs": len(train_rows), "val_pairs": len(val_rows), "variants": {}}  # fmt: skip
    started = time.time()
    encoder = Encoder(args.pack / "minilm").to(device)
    base_state = {k: v.detach().clone() for k, v in encoder.state_dict().items()}
    head, log = fit_head(encoder, texts, pairs, train_rows, val_rows, sources, args, device)
    head_state = {k: v.detach().clone() for k, v in head.state_dict().items()}
    report["variants"]["frozen"] = {**log, "seconds": round(time.time() - started, 1)}
    print("frozen", json.dumps(log["best"]), flush=True)
    for name in [v for v in args.variants.split(",") if v != "frozen"]:
        top = None if name == "full" else int(name.removeprefix("top"))
        encoder.load_state_dict(base_state)
        head.load_state_dict(head_state)
        report["variants"][name] = fine_tune(encoder, head, top, texts, pairs, train_rows, val_rows, sources, args,
                                             device)  # fmt: skip
        print(name, json.dumps(report["variants"][name]["best"]), flush=True)
        if name == args.export:
            report["export"] = export(encoder, head, top, texts, meta["export"], args.out)
        if device.type == "cuda":
            report["variants"][name]["peak_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    report["seconds"] = round(time.time() - started, 1)
    (args.out / "metrics.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
