"""The response encoder exported through Optimum (ONNX export + ORTQuantizer, dynamic int8, per channel) beside
the shipped export (torch.onnx.export of the float16 weights + onnxruntime's quantize_dynamic, per channel), side by
side on the same AlpacaEval answers: cosine of each vector to the PyTorch encoder's (the parity the gate guards),
texts per second, and the size of the graph. Both read the first 128 tokens and mean-pool, as the CRM does.

    uv run python training/experiments/optimum_encoder.py --data ../shared/data/usl/alpaca_eval \\
        --output training/experiments/results/optimum_encoder.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
CRM = REPO / "space" / "models" / "crm-compositional"


def answers(data: Path, n: int) -> list[str]:
    """The first `n` distinct answers of the baseline and two other default models (deterministic)."""
    wanted = {"gpt4_1106_preview", "claude-3-opus-20240229", "Mixtral-8x7B-Instruct-v0.1"}
    out: list[str] = []
    with gzip.open(data / "model_outputs.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["model"] in wanted and row["output"].strip():
                out.append(row["output"])
    return list(dict.fromkeys(out))[:n]


def timed(encode, texts: list[str], repeats: int = 2) -> tuple[np.ndarray, float]:
    encode(texts[:8])  # warm-up
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        vectors = encode(texts)
        best = min(best, time.perf_counter() - started)
    return vectors, len(texts) / best


def optimum_encoder(folder: Path, threads: int | None):
    """Optimum's export of MiniLM (feature extraction) quantized by ORTQuantizer; returns an encode function and
    the quantized graph's size."""
    import onnxruntime as ort
    from crm_core.encoder import minilm_source, pad_batch
    from optimum.exporters.onnx import main_export
    from optimum.onnxruntime import ORTQuantizer
    from optimum.onnxruntime.configuration import AutoQuantizationConfig
    from transformers import AutoTokenizer

    source = minilm_source()
    main_export(str(source), output=str(folder / "export"), task="feature-extraction", opset=18, no_post_process=True)
    quantizer = ORTQuantizer.from_pretrained(str(folder / "export"), file_name="model.onnx")
    config = AutoQuantizationConfig.avx2(is_static=False, per_channel=True)
    quantizer.quantize(save_dir=str(folder / "int8"), quantization_config=config)
    graph = next((folder / "int8").glob("*.onnx"))
    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    session = ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
    tokenizer = AutoTokenizer.from_pretrained(str(source))
    names = {i.name for i in session.get_inputs()}

    def encode(texts: list[str], batch: int = 16) -> np.ndarray:  # batched as the shipped encoder: by length
        ids = tokenizer(texts, truncation=True, max_length=128)["input_ids"]
        order = np.argsort([len(x) for x in ids], kind="stable")
        out = np.empty((len(texts), 384), np.float32)
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            input_ids, mask = pad_batch([ids[r] for r in rows])
            feed = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
            states = session.run(None, {k: v for k, v in feed.items() if k in names})[0]
            pooled = (states * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
            out[rows] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out

    return encode, graph.stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, type=Path, help="an AlpacaEval folder (model_outputs.jsonl.gz)")
    parser.add_argument("--n", type=int, default=300, help="answers to encode (default: %(default)s)")
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    from crm_core.compositional.onnx import ENCODER_GRAPH, PARTS_DIR, OnnxPartsEncoder
    from crm_core.encoder import ENCODER_DIR, TextEncoder
    from emit import emit

    texts = answers(args.data, args.n)
    reference, torch_rate = timed(TextEncoder(CRM / ENCODER_DIR, threads=os.cpu_count()).encode, texts, 1)
    shipped, shipped_rate = timed(OnnxPartsEncoder(CRM, threads=os.cpu_count()).encode, texts)
    with tempfile.TemporaryDirectory() as tmp:
        encode, size = optimum_encoder(Path(tmp), os.cpu_count())
        optimum, optimum_rate = timed(encode, texts)

    def parity(vectors: np.ndarray) -> dict:
        cos = (vectors * reference).sum(1)
        return {"mean_cosine": round(float(cos.mean()), 4), "min_cosine": round(float(cos.min()), 4)}

    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores", "texts": len(texts),
        "pytorch_float16": {"texts_per_second": round(torch_rate, 1)},
        "shipped_int8": {**parity(shipped), "texts_per_second": round(shipped_rate, 1),
                         "graph_mb": round((CRM / PARTS_DIR / ENCODER_GRAPH).stat().st_size / 2**20, 1)},
        "optimum_int8": {**parity(optimum), "texts_per_second": round(optimum_rate, 1),
                         "graph_mb": round(size / 2**20, 1)},
    }  # fmt: skip
    emit(result, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
