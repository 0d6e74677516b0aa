"""Instant personal leaderboards: new, never-seen criteria over the whole default bench, in one warm process.

Measures, on this machine, side by side in one run:
- building (or loading) the bench's response side for the compositional CRM: seconds and file size;
- the full leaderboard (every query x every model, bootstrap CIs, Rank (UB), topics, LC win rate) for N new
  criteria sets, each never seen by the process (its criteria are encoded inside the timing): median and p90;
- a one-topic subset, and the Compare tab's two sets;
- the cross-encoder path on the same request (a fresh in-memory cache), when --cross-encoder is given;
- the process's RSS (current and peak).

    uv run python benchmarks/instant_leaderboard.py --data ../shared/data/usl/alpaca_eval \\
        --cross-encoder DIR --output benchmarks/results/instant_leaderboard_cpu.json
"""

from __future__ import annotations

import argparse
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CRITERIA = ["I dislike emojis.", "Use headings and bullet points.", "Keep it short.", "No code, explain in words.",
            "I want lots of numbers and statistics.", "Write for a business audience.", "Be playful and funny.",
            "Don't ask me questions back.", "Avoid apologies and AI disclaimers.", "Give me thorough detail.",
            "Plain simple words please.", "Include links to sources.", "Tables are great.", "Short sentences.",
            "Make it read like literature.", "Answer like a researcher would.", "No bold text.",
            "Numbered steps, please.", "I hate exclamation marks!", "Summarise at the end."]  # fmt: skip


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="the bench (AlpacaEval folder or usl-data bench)")
    parser.add_argument("--model", help="compositional CRM folder (default: the shipped one)")
    parser.add_argument("--cross-encoder", help="a cross-encoder CRM folder, timed on the same full request")
    parser.add_argument("--cache-dir", help="where the response side is kept (default: a fresh temporary folder, so "
                        "the build is timed)")  # fmt: skip
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    from crm_core.agreement import kendall_tau
    from emit import emit
    from usl_space.loading import load_engine

    cache_dir = Path(args.cache_dir or tempfile.mkdtemp(prefix="usl-instant-"))
    started = time.perf_counter()
    engine = load_engine(args.data, args.model, cache=cache_dir / "scores.sqlite")
    load_seconds = time.perf_counter() - started
    table = engine.response_table(progress=True)
    saved = sorted((cache_dir / "response-sides").glob("*.npz"))
    result = {
        "machine": f"{platform.machine()}, {_cores()} cores", "queries": len(engine.query),
        "models": len(engine.models), "answers": engine.bench.responses.height,
        "engine_load_seconds": round(load_seconds, 2),
        "response_side_build_seconds": round(table.seconds, 1),
        "response_side_bytes": saved[0].stat().st_size if saved else None, "rss_mb_after_build": round(rss_mb()),
    }  # fmt: skip
    full = []
    for i, criteria in enumerate(CRITERIA):
        t = time.perf_counter()
        board = engine.rank([f"{criteria} (visitor {i})"])  # never seen: the criteria encoding is timed too
        full.append(time.perf_counter() - t)
        assert board.done and board.n_queries == len(engine.query)
    result["full_leaderboard_seconds"] = {"median": round(statistics.median(full), 3),
                                          "p90": round(sorted(full)[int(0.9 * len(full)) - 1], 3),
                                          "max": round(max(full), 3), "n": len(full)}  # fmt: skip
    topic = max(engine.topics.sizes(), key=engine.topics.sizes().get) if engine.topics else None
    if topic:
        ids = engine.topics.select([topic], "").tolist()
        t = time.perf_counter()
        engine.rank(["Topic run: keep it short."], query_ids=ids)
        result["topic"] = {"name": topic, "queries": len(ids), "seconds": round(time.perf_counter() - t, 3)}
    t = time.perf_counter()
    boards = [
        engine.rank([f"Compare {side}: prefer {how} answers."]) for side, how in (("A", "detailed"), ("B", "concise"))
    ]
    tau = kendall_tau([_rate(boards[0], m) for m in engine.models], [_rate(boards[1], m) for m in engine.models])
    result["compare_seconds"] = round(time.perf_counter() - t, 3)
    result["compare_tau"] = round(tau, 3)
    result["rss_mb_after_requests"], result["peak_rss_mb"] = round(rss_mb()), round(_peak_mb())
    if args.cross_encoder:
        from usl_space.cache import ScoreCache
        from usl_space.loading import make_engine, open_scorer

        slow = make_engine(engine.bench, open_scorer(args.cross_encoder), ScoreCache(":memory:"), engine.topics)
        t = time.perf_counter()
        slow.rank(["Prefer short, concise answers. (cross-encoder run)"])
        seconds = time.perf_counter() - t
        result["cross_encoder_full_seconds"] = round(seconds, 1)
        result["speedup_median"] = round(seconds / result["full_leaderboard_seconds"]["median"], 1)
    emit(result, args.output)
    return 0


def _rate(board, model: str) -> float:
    return next(r["win_rate"] for r in board.rows if r["model"] == model)


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0))


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    sys.exit(main())
