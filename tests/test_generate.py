"""usl-data generate against a real OpenAI-compatible server (`transformers serve` over a tiny random Qwen3 with the
real Qwen vocabulary, started here on 127.0.0.1), behind a small proxy that counts requests, can fail some with 503
and can slow them down: answers saved once, reruns continue, Ctrl-C stops cleanly, errors retried, no key leaked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import load_script, write_jsonl
from test_app import free_port

pytestmark = pytest.mark.slow  # generation against a local server: `pytest -m "not slow"` leaves them out

KEY = "sk-test-9f3e1d77c0ffee"  # must never reach a file the run writes
PROMPTS = [{"instruction": f"Say something about the number {n}."} for n in range(6)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`transformers serve` on a free port, forced to a tiny model saved into a temporary folder (the benchmark's
    own helpers: benchmarks/generate_throughput.py)."""
    helpers = load_script("benchmarks/generate_throughput.py")
    model = helpers.tiny_model(tmp_path_factory.mktemp("tiny-lm"))
    port = free_port()
    process = helpers.serve(model, port)
    yield f"http://127.0.0.1:{port}", str(model)
    process.terminate()
    process.wait(timeout=30)


class Proxy:
    """Forwards to the server; counts chat requests (and the key they carried), fails every `fail_every`-th with
    503, and holds each answer `delay` seconds."""

    def __init__(self, upstream: str, fail_every: int = 0, delay: float = 0.0):
        self.upstream, self.fail_every, self.delay = upstream, fail_every, delay
        self.requests, self.keys = 0, set()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                proxy.requests += 1
                proxy.keys.add(self.headers.get("Authorization", ""))
                if proxy.fail_every and proxy.requests % proxy.fail_every == 0:
                    self.send_response(503)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(b'{"error": {"message": "overloaded"}}')
                    return
                request = urllib.request.Request(proxy.upstream + self.path, data=body, method="POST",
                                                 headers={"Content-Type": "application/json"})  # fmt: skip
                with urllib.request.urlopen(request, timeout=60) as answer:
                    data, kind = answer.read(), answer.headers.get("Content-Type", "")
                time.sleep(proxy.delay)
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()


def usl_data(*args: str) -> list[str]:
    return [str(Path(sys.executable).parent / "usl-data"), "generate", *args]


def run(proxy: Proxy, model: str, prompts: Path, output: Path, *extra: str) -> subprocess.CompletedProcess:
    command = usl_data("--prompts", str(prompts), "--endpoint", proxy.url, "--model", model, "--name", "tiny",
                       "--api-key-env", "USL_TEST_KEY", "--max-tokens", "6", "--output", str(output),
                       *extra)  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, env={**os.environ, "USL_TEST_KEY": KEY},
                          timeout=300)  # fmt: skip


def test_answers_are_saved_once_errors_retried_and_the_key_never_written(server, tmp_path):
    upstream, model = server
    prompts, output = write_jsonl(tmp_path / "prompts.jsonl", PROMPTS), tmp_path / "answers.jsonl"
    proxy = Proxy(upstream, fail_every=3)  # every third request answered 503
    try:
        first = run(proxy, model, prompts, output, "--concurrency", "2", "--quiet")
        assert first.returncode == 0, first.stderr
        summary = json.loads(first.stdout)
        assert (summary["saved_now"], summary["failed"]) == (6, 0) and summary["retried"] >= 2
        rows = [json.loads(line) for line in output.read_text().splitlines()]
        assert sorted(r["idx"] for r in rows) == list(range(6))
        assert all(r["generator"] == "tiny" and r["output"] and r["finish_reason"] for r in rows)
        asked = proxy.requests
        again = run(proxy, model, prompts, output, "--quiet")  # nothing missing: nothing asked
        assert again.returncode == 0 and json.loads(again.stdout)["already_saved"] == 6 and proxy.requests == asked
    finally:
        proxy.close()
    assert proxy.keys == {f"Bearer {KEY}"}  # the key went to the server, and nowhere else:
    written = output.read_text() + first.stdout + first.stderr + again.stdout + again.stderr
    assert KEY not in written


def test_ctrl_c_stops_cleanly_and_a_rerun_asks_each_prompt_exactly_once(server, tmp_path):
    upstream, model = server
    prompts, output = write_jsonl(tmp_path / "prompts.jsonl", PROMPTS), tmp_path / "answers.jsonl"
    proxy = Proxy(upstream, delay=0.7)
    try:
        command = usl_data("--prompts", str(prompts), "--endpoint", proxy.url, "--model", model, "--max-tokens", "6",
                           "--concurrency", "1", "--output", str(output), "--quiet")  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not (output.exists() and output.read_text().count("\n") >= 2) and time.monotonic() < deadline:
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
        assert process.returncode == 130 and "stopping" in err and json.loads(out)["stopped"]
        partial = output.read_text()
        assert partial.endswith("\n") and 2 <= partial.count("\n") < 6  # whole lines, the rest not asked
        before = proxy.requests
        rerun = run(proxy, model, prompts, output, "--quiet")
        assert rerun.returncode == 0, rerun.stderr
        assert proxy.requests - before == 6 - partial.count("\n")  # only the missing prompts were asked
    finally:
        proxy.close()
    ids = [json.loads(line)["idx"] for line in output.read_text().splitlines()]
    assert sorted(ids) == list(range(6))  # each prompt exactly once


def test_bad_generate_input_is_one_line(tmp_path):
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"instruction": "ok"}\n{"text": "no instruction"}\nnot json\n')
    command = usl_data("--prompts", str(prompts), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--output",
                       str(tmp_path / "a.jsonl"))  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "prompts.jsonl:2: instruction: expected non-empty text" in result.stderr
    assert "prompts.jsonl:3: not JSON" in result.stderr and not (tmp_path / "a.jsonl").exists()
    unset = subprocess.run([*command[:-2], "--output", str(tmp_path / "b.jsonl"), "--api-key-env", "NO_SUCH_VAR_X"],
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    assert unset.returncode == 2 and "NO_SUCH_VAR_X: that environment variable is not set" in unset.stderr
