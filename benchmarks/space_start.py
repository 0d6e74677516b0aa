"""How long a visitor waits when the Space starts: from `python space/app.py` to the page, and to the first custom
board over HTTP (gradio_client, a criteria set never ranked before), with a fresh cache folder each run.

With `--store` the precomputed response store (`usl-data sides`) is read through $USL_RESPONSE_STORE, as the
Space does with the published one; without it, the Space computes every response's side at its first start.

    uv run usl-data sides --data ../shared/data/usl/alpaca_eval --output data/response-store
    uv run usl-space-bundle --output dist/space
    uv run python benchmarks/space_start.py --data ../shared/data/usl/alpaca_eval --store data/response-store \\
        --app dist/space/app.py --output benchmarks/results/space_start_store.json
"""

from __future__ import annotations

import argparse
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one_start(data: str, store: str | None, criteria: str, timeout: float, app: Path) -> dict:
    """Start the Space once in a fresh cache folder; time the page and the first custom board."""
    from gradio_client import Client
    from usl_space.catalog import default_models
    from usl_space.topics import TOPICS

    with tempfile.TemporaryDirectory() as home:
        port = free_port()
        env = {**os.environ, "PORT": str(port), "USL_HOST": "127.0.0.1", "USL_DATA": str(Path(data).resolve()),
               "USL_CACHE_DIR": home,
               "USL_SCORE_CACHE": str(Path(home) / "scores.sqlite"), "HF_HUB_OFFLINE": "1"}  # fmt: skip
        env.pop("USL_RESPONSE_STORE", None)
        if store:
            env["USL_RESPONSE_STORE"] = str(Path(store).resolve())
        log_path = Path(home) / "space.log"
        started = time.perf_counter()
        with open(log_path, "w") as log:
            server = subprocess.Popen([sys.executable, str(app)], env=env, stdout=log,
                                      stderr=subprocess.STDOUT, cwd=home)  # fmt: skip
            try:
                url = f"http://127.0.0.1:{port}/"
                while True:
                    if server.poll() is not None or time.perf_counter() - started > timeout:
                        raise RuntimeError(f"the Space did not come up:\n{log_path.read_text()[-2000:]}")
                    try:
                        urllib.request.urlopen(url, timeout=5).read()
                        break
                    except OSError:
                        time.sleep(0.5)
                page = time.perf_counter() - started
                models = [m for m in default_models() if m != "gpt4_1106_preview"]
                table, *_, status, _ = Client(url, verbose=False).predict(
                    list(TOPICS), "", criteria, "", "gpt4_1106_preview", models, 805, api_name="/customize"
                )
                board = time.perf_counter() - started
            finally:
                server.terminate()
                server.wait(timeout=60)
        lines = [line for line in log_path.read_text().splitlines() if "response side" in line]
    return {"store": bool(store), "seconds_to_page": round(page, 1), "seconds_to_first_custom_board": round(board, 1),
            "rows": len(table["data"]), "status": status, "log": lines}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="the AlpacaEval folder the Space serves (USL_DATA)")
    parser.add_argument("--store", help="a precomputed response store (usl-data sides); omitted: a cold start")
    parser.add_argument("--criteria", default="Answers with a short summary at the end, please.",
                        help="the first custom board's criteria")  # fmt: skip
    parser.add_argument("--timeout", type=float, default=1800, help="seconds before a start counts as failed")
    parser.add_argument("--app", type=Path, default=REPO / "space" / "app.py",
                        help="the Space's app.py, e.g. one usl-space-bundle wrote (default: space/app.py)")  # fmt: skip
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    from emit import emit

    result = {"machine": f"{platform.machine()}, {os.cpu_count()} cores", "data": args.data,
              "app": os.path.relpath(args.app, REPO), **one_start(args.data, args.store, args.criteria, args.timeout,
                                                                   args.app.resolve())}  # fmt: skip
    emit(result, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
