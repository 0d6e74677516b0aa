"""Pack what `training/gpu/quality_encoder.py` needs on a GPU machine without the project's environment.

Writes `--output` (default gpu_pack/, git-ignored by the caller and carried to the device):
- `minilm/`: the encoder the shipped CRM reads (crm_core.encoder.write_encoder: MiniLM, float16 weights);
- `pack.npz`: every text's token ids (MiniLM's tokenizer, the encoder's first `max_tokens`) as one flat array with
  offsets; the quality pairs exactly as crm_train.compositional.train builds them (GPT-4-turbo verdicts on
  non-default models and the training half only, human votes of the train split; validation: the held tenth of
  verdict prompts and the human validation split), with their scaled properties z = phi / spread (the shipped
  heads' spread), log-length gap, soft label, source and split (the device script weighs sources as train.py);
  and `export`, the text rows whose tuned vectors come back: every training text and every answer and prompt of
  the shared benches and human test sets; `export_rows.npy`, the rows a call can bring back beside a whole
  encoder's weights (all but AlpacaEval's training-half answers);
- `pack.json`: source names and counts; and, not in the pack (it stays here), `--texts`, the texts in row order,
  which `training/gpu/import_quality.py` reads to put the returned vectors into the embedding store.

No MT-bench score and no AlpacaEval instruction beyond the training half's verdicts enter a training row (the bench
answers are exported, never trained on).

    uv run python training/gpu/pack_quality.py --output gpu_pack
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def bench_texts(shared: Path) -> tuple[list[str], set[str]]:
    """Prompts and answers of every bench in the shared data (AlpacaEval: the app's default models, the judge
    report's twins and NullModel, the reference panel) and of the human test sets; and the AlpacaEval answers to
    training-half instructions among them (development boards: left out of `export_rows.npy`)."""
    from crm_train.compositional import sources as S
    from usl_space.catalog import default_models

    texts: list[str] = []
    sys.path.insert(0, str(REPO / "benchmarks"))
    from judge_report import JUNK, TWINS  # the judge report's bench: its twins and NullModel

    models = {*default_models(), *S.REFERENCE_PANEL, JUNK, *(f"{t}_{k}" for t in TWINS
                                                             for k in ("concise", "verbose"))}  # fmt: skip
    instructions = S.alpaca_instructions(shared)
    texts += list(instructions.values())
    outputs = list(S.read_outputs(shared, models).items())
    texts += [text for _, text in outputs]
    for name in ("creative", "speechmap"):
        folder = shared / "usl" / name
        if not folder.is_dir():
            continue
        texts += [json.loads(line)["instruction"] for line in (folder / "instructions.jsonl").open(encoding="utf-8")]
        with gzip.open(folder / "model_outputs.jsonl.gz", "rt", encoding="utf-8") as handle:
            texts += [json.loads(line)["output"] for line in handle]
    mt = shared / "usl/mt_bench"
    if mt.is_dir():
        texts += [json.loads(line)["turns"][0] for line in (mt / "question.jsonl").open(encoding="utf-8")]
        for path in sorted((mt / "model_answer").glob("*.jsonl")):
            texts += [json.loads(line)["choices"][0]["turns"][0] for line in path.open(encoding="utf-8")]
    for pair in S.human_pairs(shared, "test") + S.human_pairs(shared, "pandalm"):
        texts += [pair.prompt, pair.a, pair.b]
    training_half = {text for (idx, _), text in outputs if S.alpaca_train_half(instructions[idx])}
    return [t for t in texts if isinstance(t, str) and t.strip()], training_half


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument("--model", type=Path, default=REPO / "space/models/crm-compositional",
                        help="the compositional CRM whose spread and encoder the pack uses")  # fmt: skip
    parser.add_argument("--output", type=Path, default=REPO / "gpu_pack", help="the pack folder to write")
    parser.add_argument("--texts", type=Path, default=REPO / "runs/gpu-quality/texts.json",
                        help="where the texts in row order are written (kept here, not carried)")  # fmt: skip
    parser.add_argument("--no-benches", action="store_true", help="export the training texts only (tests)")
    parser.add_argument("--limit", type=int, default=0, help="keep only the first N pairs of each split (tests)")
    args = parser.parse_args(argv)
    from crm_core.compositional.scorer import HEADS_FILE
    from crm_core.encoder import ENCODER_DIR, write_encoder
    from crm_core.properties import measure_many
    from crm_train.compositional import sources as S
    from safetensors.numpy import load_file
    from transformers import AutoTokenizer

    spread = load_file(args.model / HEADS_FILE)["spread"]
    meta = json.loads((args.model / ENCODER_DIR / "encoder.json").read_text(encoding="utf-8"))
    annotations = S.annotation_pairs(args.shared)
    held = [S.annotation_validation(p.prompt) for p in annotations]
    train = [p for p, h in zip(annotations, held, strict=True) if not h] + S.human_pairs(args.shared, "train")
    val = [p for p, h in zip(annotations, held, strict=True) if h] + S.human_pairs(args.shared, "validation")
    if args.limit:
        train, val = train[: args.limit], val[: args.limit]
    pairs = train + val
    rows: dict[str, int] = {}

    def row(text: str | None) -> int:
        return -1 if text is None else rows.setdefault(text, len(rows))

    sources = sorted({p.source for p in pairs})
    columns = {"prompt": [], "a": [], "b": [], "ref": [], "y": [], "source": [], "val": [], "dlen": []}
    for k, p in enumerate(pairs):
        for key, text in (("prompt", p.prompt), ("a", p.a), ("b", p.b), ("ref", p.reference)):
            columns[key].append(row(text))
        columns["y"].append(p.p_a)
        columns["source"].append(sources.index(p.source))
        columns["val"].append(int(k >= len(train)))
        words_a, words_b = len(p.a.split()) + 1, len(p.b.split()) + 1
        columns["dlen"].append(float(np.tanh(np.log2(words_a / words_b))))
    training_rows = len(rows)
    training_half: set[str] = set()
    if not args.no_benches:
        texts_of_benches, training_half = bench_texts(args.shared)
        for text in texts_of_benches:
            row(text)
    texts = list(rows)
    print(f"{len(pairs)} pairs ({len(val)} validation), {training_rows} training texts, {len(texts)} texts in all",
          flush=True)  # fmt: skip
    za = measure_many([p.a for p in pairs]) / spread
    zb = measure_many([p.b for p in pairs]) / spread
    args.output.mkdir(parents=True, exist_ok=True)
    encoder_dir = write_encoder(args.output / "minilm", int(meta["max_tokens"]))
    tokenizer = AutoTokenizer.from_pretrained(encoder_dir)
    ids: list[list[int]] = []
    for start in range(0, len(texts), 2048):
        ids += tokenizer(texts[start : start + 2048], truncation=True, max_length=int(meta["max_tokens"]))["input_ids"]
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in ids])]).astype(np.int64)
    np.savez_compressed(
        args.output / "pack.npz",
        flat=np.concatenate([np.asarray(x, dtype=np.uint16) for x in ids]),
        offsets=offsets,
        export=np.arange(len(texts), dtype=np.int32),
        pair_za=za.astype(np.float16),
        pair_zb=zb.astype(np.float16),
        **{
            f"pair_{k}": np.asarray(v, dtype=np.float32 if k in ("y", "dlen") else np.int32) for k, v in columns.items()
        },
    )
    (args.output / "pack.json").write_text(json.dumps({"sources": sources, "pairs": len(pairs), "validation": len(val),
                                                       "texts": len(texts), "training_texts": training_rows,
                                                       "encoder": meta["identity"]}, indent=2) + "\n",
                                           encoding="utf-8")  # fmt: skip
    # what a device call can bring back beside a whole encoder's weights (64 MiB): every training text, every bench
    # text but AlpacaEval's training-half answers (quality_encoder.py --export-rows)
    keep = [r for r, t in enumerate(texts) if r < training_rows or t not in training_half]
    np.save(args.output / "export_rows.npy", np.array(keep, dtype=np.int32))
    args.texts.parent.mkdir(parents=True, exist_ok=True)
    args.texts.write_text(json.dumps(texts), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
