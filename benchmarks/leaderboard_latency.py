"""How fast a leaderboard appears and completes on this machine, with the shipped CRM and a fresh cache.

For the default bench (all its queries, or --queries N of them) and for one topic, each with its own fresh cache:
seconds to the first anytime leaderboard (all models, with CIs), to the full one, and for the same request again
(answered from the cache). The engine is loaded before the clock starts, as in the running Space.

  uv run python benchmarks/leaderboard_latency.py --data ../shared/data/usl/alpaca_eval \
      --output benchmarks/results/leaderboard_latency_cpu.json
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from usl_space.cache import ScoreCache
from usl_space.loading import load_engine


def timed_run(engine, criteria: list[str], ids: list[int] | None) -> dict:
    started = time.perf_counter()
    first = last = None
    boards = 0
    for board in engine.stream(criteria, query_ids=ids):
        boards += 1
        if first is None:
            first = time.perf_counter() - started
            first_queries = board.n_queries
        last = board
    total = time.perf_counter() - started
    return {"first_leaderboard_s": round(first, 3), "first_leaderboard_queries": first_queries,
            "full_leaderboard_s": round(total, 3), "updates": boards, "queries": last.n_queries,
            "models": len(last.rows), "pairs_judged": sum(r["n"] for r in last.rows if not r["baseline"])}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="bench or AlpacaEval-style folder")
    parser.add_argument("--model", help="CRM folder (default: the shipped one)")
    parser.add_argument("--queries", type=int, help="score only this many queries of the default bench (default: all)")
    parser.add_argument("--topic", default="Puzzles & Logic", help="the topic of the one-topic run")
    parser.add_argument("--criteria", default="Prefer short, concise answers.", help="the criteria scored")
    parser.add_argument("--output", help="write the results JSON here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        engine = load_engine(args.data, args.model, cache=Path(tmp) / "scores.sqlite")
        all_ids = engine.sample(args.queries)
        topic_ids = engine.topics.select([args.topic]).tolist()
        results = {
            "machine": {"platform": platform.platform(), "processor": platform.processor() or platform.machine(),
                        "cpus": os.cpu_count()},
            "crm": {"folder": str(engine.scorer.folder.name), "objective": engine.scorer.spec.objective,
                    "max_length": engine.scorer.spec.max_length, "backend": type(engine.scorer).__name__,
                    "weights": engine.scorer.weights_file},
            "bench": engine.bench.name, "models": len(engine.models), "criteria": args.criteria,
        }  # fmt: skip
        results["default_bench"] = {"fresh": timed_run(engine, [args.criteria], all_ids),
                                    "cached": timed_run(engine, [args.criteria], all_ids)}  # fmt: skip
        print(json.dumps(results["default_bench"], indent=2), flush=True)
        topic_engine = copy.copy(engine)  # same CRM and bench, its own empty cache: nothing carried over
        topic_engine.cache = ScoreCache(Path(tmp) / "topic.sqlite")
        results["topic"] = {"name": args.topic, "queries": len(topic_ids),
                            "fresh": timed_run(topic_engine, [args.criteria], topic_ids),
                            "cached": timed_run(topic_engine, [args.criteria], topic_ids)}  # fmt: skip
        print(json.dumps(results["topic"], indent=2), flush=True)
    if args.output:
        Path(args.output).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
