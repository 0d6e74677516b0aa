"""Does memory come back after visitors' uploads? 20 cycles of what a visitor does in "Add a model": upload a
model's answers (encoded once: properties, embedding, quality), rank it in Customize, leave (the app's State
delete callback calls `Engine.forget_uploads`, which frees the upload's encoded answers, collects and trims the
heap). The process's RSS is recorded before, after every cycle, and at
the end; the target is the end within 10% of before.

    uv run python benchmarks/upload_memory.py --data ../shared/data/usl/alpaca_eval --cache-dir data/instant-cache \\
        --output benchmarks/results/upload_memory.json
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="the bench (AlpacaEval folder or usl-data bench)")
    parser.add_argument("--model", help="CRM folder (default: the shipped compositional one)")
    parser.add_argument("--cache-dir", help="cache folder holding the saved response side (default: a new one)")
    parser.add_argument("--cycles", type=int, default=20, help="upload / rank / leave cycles")
    parser.add_argument("--answers", type=int, default=805, help="answers per uploaded model (at most the bench's)")
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    from emit import emit
    from instant_leaderboard import rss_mb
    from usl_space.loading import load_engine

    cache_dir = Path(args.cache_dir or tempfile.mkdtemp(prefix="usl-uploads-"))
    engine = load_engine(args.data, args.model, cache=cache_dir / "scores.sqlite")
    engine.response_table(progress=True)
    engine.rank(["No emojis, please."])  # warm every code path once before the baseline reading
    engine.forget_uploads({})  # collects and trims, as after every visitor who leaves
    before = rss_mb()
    donors = [m for m in engine.models if m != engine.baseline]
    cycles = []
    for cycle in range(args.cycles):
        started = time.perf_counter()
        donor = donors[cycle % len(donors)]
        ids = sorted(engine.query)[: args.answers]
        # a new model each time: another model's answers, changed so that nothing is reused from a cache
        outputs = {i: f"{engine.output[(i, donor)]}\n\n(upload {cycle})" for i in ids if (i, donor) in engine.output}
        uploads = {f"upload:{cycle}": outputs}
        visitor = engine.with_model(f"upload:{cycle}", outputs)
        board = visitor.rank(["Prefer short, concise answers."], models=[donor, f"upload:{cycle}"])
        peak = rss_mb()
        del visitor, board
        del uploads[f"upload:{cycle}"]  # what the app's State held goes with the visitor
        engine.forget_uploads({f"upload:{cycle}": outputs})  # the visitor left: the State's delete callback
        del outputs
        cycles.append({"cycle": cycle, "seconds": round(time.perf_counter() - started, 1), "rss_mb_with_upload":
                       round(peak), "rss_mb_after_leaving": round(rss_mb())})  # fmt: skip
        print(cycles[-1], file=sys.stderr)
    after = rss_mb()
    result = {"machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores", "cycles": args.cycles,
              "answers_per_upload": args.answers, "rss_mb_before": round(before), "rss_mb_after": round(after),
              "growth": round(after / before - 1, 4), "within_10_percent": after <= 1.1 * before,
              "per_cycle": cycles}  # fmt: skip
    emit(result, args.output, drop=("per_cycle",))
    return 0


if __name__ == "__main__":
    sys.exit(main())
