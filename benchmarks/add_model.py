"""What adding one model to a stored bench costs: the response side of the default bench plus one more model, read
through a copy of a response store that holds the default bench (`usl-data sides`): only the new model's answers
are computed.

    uv run python benchmarks/add_model.py --data ../shared/data/usl/alpaca_eval --store data/response-store \\
        --add Qwen1.5-14B-Chat --output benchmarks/results/add_model.json
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="an AlpacaEval folder holding the default models and --add")
    parser.add_argument("--store", required=True, help="a response store of the default bench (left unchanged)")
    parser.add_argument("--add", default="Qwen1.5-14B-Chat", help="the model added to the default bench")
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    from crm_core.data import open_bench
    from emit import emit
    from usl_space.catalog import default_models
    from usl_space.loading import open_scorer
    from usl_space.response_store import ResponseStore

    scorer = open_scorer(None, "onnx")
    bench = open_bench(args.data, models=[*default_models(), args.add])
    query, outputs = bench.instructions(), bench.outputs()
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "store"
        shutil.copytree(args.store, copy)
        started = time.perf_counter()
        store = ResponseStore(copy)
        _, computed = store.side(scorer, query, outputs, outputs)
        seconds = time.perf_counter() - started
    added = sum(1 for _, m in outputs if m == args.add)
    emit({"machine": f"{platform.machine()}, {os.cpu_count()} cores", "added_model": args.add,
          "responses": len(outputs), "added_answers": added, "computed": computed,
          "seconds": round(seconds, 1)}, args.output)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
