"""Several visitors at once: do cached views stay fast while others rank new criteria, and do jobs take turns?

Starts `usl-space` as its own process on 127.0.0.1 (so its memory is measured alone), then for `--seconds`:
- `--visitors` visitors each rank never-seen criteria again and again (Customize, all selected queries);
- one more visitor keeps asking for cached views: the general leaderboard and a criteria set scored before the clock.
Every request's queue wait (submitted -> running) and total time are recorded, with the server's RSS before,
during and after. At the deadline every visitor presses Stop, and the benchmark waits for the server to settle.
Fairness: for a slow (cross-encoder) CRM a job outlives the window; the queries each visitor got scored by the
deadline are compared (round-robin turns give them about equal shares).

    uv run python benchmarks/load_test.py --data ../shared/data/usl/alpaca_eval --cache-dir data/instant-cache \\
        --output benchmarks/results/load_test_compositional.json
    uv run python benchmarks/load_test.py --data ../shared/data/usl/alpaca_eval --model space/models/crm-minilm \\
        --queries 20 --output benchmarks/results/load_test_cross_encoder.json
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import CancelledError
from contextlib import suppress
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PHRASES = [
    "No emojis, please.",
    "Short answers with a table.",
    "Explain like I am twelve.",
    "Formal tone.",
    "Give step by step instructions.",
    "I love a closing summary.",
    "Avoid markdown headings.",
    "Be witty.",
    "Cite sources with links.",
    "Keep sentences short.",
    "Use bullet points.",
    "Write for a manager.",
]
CACHED_CRITERIA = "I like answers with a clear structure."
SCORED = re.compile(r"(\d+) / (\d+) queries scored")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children, MB."""
    import psutil

    process = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [process, *process.children(recursive=True)]) / 2**20


def timed_request(client, args: tuple, log: list, kind: str, visitor: int) -> str:
    """Submit one Customize request; record its queue wait, total seconds and the queries its board holds."""
    from gradio_client.utils import Status

    started = time.perf_counter()
    job = client.submit(*args, api_name="/customize")
    running = None
    while not job.done():
        if running is None and job.status().code in (Status.PROCESSING, Status.ITERATING):
            running = time.perf_counter()
        time.sleep(0.01)
    finished = time.perf_counter()
    outputs = job.outputs()
    text = outputs[-1][3] if outputs else ""
    scored = SCORED.search(text)
    log.append({"kind": kind, "visitor": visitor, "seconds": round(finished - started, 3),
                "queue_wait": round((running or finished) - started, 3), "queries": int(scored[1]) if scored else 0,
                "stopped": "stopped" in text})  # fmt: skip
    return text


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    return {
        "n": len(values),
        "p50": round(statistics.median(ordered), 3),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
        "max": round(ordered[-1], 3),
    }


def main(argv: list[str] | None = None) -> int:  # noqa: C901 (a benchmark script: setup, run, report)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="the bench (AlpacaEval folder or usl-data bench)")
    parser.add_argument("--model", help="CRM folder (default: the shipped compositional one)")
    parser.add_argument("--cache-dir", help="score cache folder; a compositional CRM's saved response side there "
                        "is reused (default: a new temporary one)")  # fmt: skip
    parser.add_argument("--visitors", type=int, default=6, help="visitors ranking new criteria at once")
    parser.add_argument(
        "--seconds",
        type=float,
        default=120,
        help="how long the load lasts (120 s gives ~120 cached requests, so a p95 rests on ~6 of them)",
    )
    parser.add_argument("--queries", type=int, help="queries per Customize request (default: all)")
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    from emit import emit
    from gradio_client import Client

    cache_dir = Path(args.cache_dir or tempfile.mkdtemp(prefix="usl-load-"))
    port = free_port()
    command = [sys.executable, "-m", "usl_space.app", "--data", args.data, "--cache", str(cache_dir / "scores.sqlite"),
               "--port", str(port), "--no-warm"] + (["--model", args.model] if args.model else [])  # fmt: skip
    server_log = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed below; a file, as a full pipe stalls a server
    server = subprocess.Popen(command, stdout=server_log, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.time() + 1800  # building a response side takes minutes the first time
        while True:
            if server.poll() is not None:
                server_log.seek(0)
                raise SystemExit(f"usl-space exited: {server_log.read()[-2000:]}")
            try:
                client = Client(f"http://127.0.0.1:{port}/", verbose=False)
                break
            except Exception:  # not listening yet
                if time.time() > deadline:
                    raise SystemExit("usl-space did not start in 30 minutes") from None
                time.sleep(2)
        params = {p["parameter_name"]: p for p in client.view_api(return_format="dict", print_info=False)[
            "named_endpoints"]["/customize"]["parameters"]}  # fmt: skip
        topics, models = params["topics"]["parameter_default"], params["models"]["parameter_default"]
        baseline, every_query = params["baseline"]["parameter_default"], int(params["n_queries"]["parameter_default"])
        n = min(args.queries or every_query, every_query)

        def request(criteria: str) -> tuple:
            return topics, "", criteria, "", baseline, models, n

        log: list[dict] = []
        print(f"server up; {len(models)} models, {n} queries per request; warming the cached views", file=sys.stderr)
        started = time.perf_counter()
        for criteria in ("", CACHED_CRITERIA):  # what the cached visitor asks for, scored before the clock
            timed_request(client, request(criteria), [], "warm", -1)
        warm_seconds = time.perf_counter() - started
        rss: list[tuple[float, str, float]] = []
        phase = ["before"]
        stop_sampling = threading.Event()

        def sample() -> None:
            t0 = time.perf_counter()
            while not stop_sampling.is_set():
                rss.append((round(time.perf_counter() - t0, 2), phase[0], round(rss_mb(server.pid), 1)))
                time.sleep(0.5)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        time.sleep(5)
        phase[0] = "during"
        print(f"{args.visitors} visitors for {args.seconds:.0f} s", file=sys.stderr)
        end = time.perf_counter() + args.seconds
        clients = [Client(f"http://127.0.0.1:{port}/", verbose=False) for _ in range(args.visitors)]

        def visitor(v: int) -> None:
            k = 0
            while time.perf_counter() < end:
                criteria = f"{PHRASES[(v + k) % len(PHRASES)]}\n(visitor {v}, request {k})"  # never seen before
                timed_request(clients[v], request(criteria), log, "custom", v)
                k += 1

        def cached() -> None:
            k = 0
            while time.perf_counter() < end:
                timed_request(client, request("" if k % 2 == 0 else CACHED_CRITERIA), log, "cached", -1)
                k += 1
                time.sleep(0.5)

        def stop_all() -> None:  # the deadline: everyone presses Stop
            time.sleep(max(0.0, end - time.perf_counter()))
            for c in clients:
                # gradio_client raised CancelledError once for a Stop racing the end of the visitor's job (a
                # KeyError in its event bookkeeping); the other visitors must still get theirs
                with suppress(CancelledError):
                    c.predict(api_name="/stop")

        threads = [threading.Thread(target=visitor, args=(v,)) for v in range(args.visitors)]
        threads += [threading.Thread(target=cached), threading.Thread(target=stop_all)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        phase[0] = "after"
        time.sleep(10)
        stop_sampling.set()
        sampler.join()
    finally:
        server.terminate()
        server.wait(timeout=30)
        server_log.close()
    custom = [r for r in log if r["kind"] == "custom"]
    cached_rows = [r for r in log if r["kind"] == "cached"]
    per_visitor = {v: sum(r["queries"] for r in custom if r["visitor"] == v) for v in range(args.visitors)}
    result = {
        "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores",
        "model": args.model or "space/models/crm-compositional",
        "visitors": args.visitors, "seconds": args.seconds, "queries_per_request": n,
        "warm_seconds": round(warm_seconds, 1),
        "cached": {"seconds": percentiles([r["seconds"] for r in cached_rows]),
                   "queue_wait": percentiles([r["queue_wait"] for r in cached_rows])},
        "custom": {"seconds": percentiles([r["seconds"] for r in custom]),
                   "queue_wait": percentiles([r["queue_wait"] for r in custom]), "requests": len(custom),
                   "stopped": sum(r["stopped"] for r in custom)},
        "queries_scored_per_visitor": per_visitor,
        "fairness_min_over_max": round(min(per_visitor.values()) / max(max(per_visitor.values()), 1), 3),
        "rss_mb": {p: percentiles([m for _, ph, m in rss if ph == p]) for p in ("before", "during", "after")},
        "requests": log, "rss_samples": rss,
    }  # fmt: skip
    emit(result, args.output, drop=("requests", "rss_samples"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
