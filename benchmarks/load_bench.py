"""How long it takes to load every AlpacaEval output (182,723 rows, 227 models) into a validated bench,
and to save and reload it as Parquet. Writes benchmarks/results/load_bench.json.

    uv run python benchmarks/load_bench.py [--data ../shared/data/usl/alpaca_eval] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import polars as pl
from crm_core.data import Bench, load_alpaca_eval_combined

REPO = Path(__file__).resolve().parents[1]


def machine() -> dict:
    return {
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "polars": pl.__version__,
        "polars_threads": pl.thread_pool_size(),
    }


def timed(function, repeats: int) -> tuple[list[float], object]:
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return times, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--data",
        default=str(REPO.parent / "shared/data/usl/alpaca_eval"),
        help="the combined AlpacaEval folder (instructions.jsonl + model_outputs.jsonl.gz)",
    )
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of each step; the median is reported")
    parser.add_argument("--output", default=str(REPO / "benchmarks/results/load_bench.json"), help="result file")
    args = parser.parse_args()

    data = Path(args.data)
    every_model = [m["model"] for m in json.loads((data / "models_index.json").read_text())["models"]]
    load_times, bench = timed(lambda: load_alpaca_eval_combined(data, models=every_model), args.repeats)
    with tempfile.TemporaryDirectory() as tmp:
        save_times, _ = timed(lambda: bench.save(Path(tmp) / "bench"), args.repeats)
        reload_times, reloaded = timed(lambda: Bench.load(Path(tmp) / "bench"), args.repeats)
    assert reloaded.responses.equals(bench.responses)
    result = {
        "what": "load every AlpacaEval output into a validated Bench; save/reload it as Parquet (hash checked)",
        "machine": machine(),
        "rows": bench.responses.height,
        "models": len(bench.models),
        "queries": bench.queries.height,
        "repeats": args.repeats,
        "seconds": {
            name: {"median": round(statistics.median(t), 3), "min": round(min(t), 3), "all": [round(x, 3) for x in t]}
            for name, t in (
                ("load_combined_jsonl_gz", load_times),
                ("save_parquet", save_times),
                ("load_parquet", reload_times),
            )
        },
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result["seconds"], indent=2))


if __name__ == "__main__":
    main()
