"""usl-data end to end: pull from a real HTTP server on 127.0.0.1 (resume, verify, atomic), build, info."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import MODELS, model_items
from crm_core.data import DataValidationError, open_bench
from usl_space.data_cli import default_models, main
from usl_space.pull import pull


class OutputsServer:
    """Serves ``/<model>/model_outputs.json`` from memory; honours Range; can cut one response short."""

    def __init__(self, files: dict[str, bytes], honour_range: bool = True):
        self.files = files
        self.honour_range = honour_range
        self.cut_next: set[str] = set()
        self.requests: list[tuple[str, str | None]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append((self.path, self.headers.get("Range")))
                body = server.files.get(self.path)
                if body is None:
                    self.send_error(404, "Not Found")
                    return
                start, status = 0, 200
                header = self.headers.get("Range")
                if header and server.honour_range:
                    start = int(header.removeprefix("bytes=").rstrip("-"))
                    if start >= len(body):
                        self.send_error(416, "Range Not Satisfiable")
                        return
                    status = 206
                self.send_response(status)
                self.send_header("Content-Length", str(len(body) - start))
                if status == 206:
                    self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                self.end_headers()
                if self.path in server.cut_next:  # announce the whole body, send half, drop the connection
                    server.cut_next.discard(self.path)
                    self.wfile.write(body[start : start + (len(body) - start) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body[start:])

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def outputs_files(**overrides) -> dict[str, bytes]:
    files = {f"/{m}/model_outputs.json": json.dumps(model_items(m), indent=1).encode() for m in MODELS}
    files.update({f"/{m}/model_outputs.json": body for m, body in overrides.items()})
    return files


def gets(server: OutputsServer, model: str) -> list[str | None]:
    return [rng for path, rng in server.requests if path == f"/{model}/model_outputs.json"]


def test_pull_downloads_verifies_and_then_serves_from_cache(tmp_path):
    cache = tmp_path / "cache"
    with OutputsServer(outputs_files()) as server:
        report = pull(["alpha", "beta"], cache, "base", base_url=server.url, expect_queries=6, progress=False)
        assert report.downloaded == ["base", "alpha", "beta"] and not report.failed
        assert server.requests[0][0] == "/base/model_outputs.json"  # the reference comes first
        for model in MODELS:
            assert (cache / model / "model_outputs.json").read_bytes() == server.files[f"/{model}/model_outputs.json"]
        again = pull(["alpha", "beta"], cache, "base", base_url=server.url, expect_queries=6, progress=False)
        assert again.cached == ["base", "alpha", "beta"] and not again.downloaded
        assert len(server.requests) == 3
    assert not list(cache.rglob("*.part")) and not list(cache.rglob("*.tmp"))


def test_interrupted_download_resumes_with_a_range_request(tmp_path):
    cache = tmp_path / "cache"
    with OutputsServer(outputs_files()) as server:
        server.cut_next.add("/alpha/model_outputs.json")
        first = pull(["alpha"], cache, "base", base_url=server.url, expect_queries=6, retries=0, progress=False)
        assert "alpha" in first.failed and "resume" in first.failed["alpha"]
        part = cache / "alpha" / "model_outputs.json.part"
        body = server.files["/alpha/model_outputs.json"]
        assert part.exists() and 0 < part.stat().st_size < len(body)
        assert not (cache / "alpha" / "model_outputs.json").exists()  # nothing half-written under the final name
        kept = part.stat().st_size
        second = pull(["alpha"], cache, "base", base_url=server.url, expect_queries=6, progress=False)
        assert second.downloaded == ["alpha"]
        assert gets(server, "alpha") == [None, f"bytes={kept}-"]
        assert (cache / "alpha" / "model_outputs.json").read_bytes() == body
        assert not part.exists()


def test_retry_within_one_pull_and_a_server_that_ignores_range(tmp_path):
    with OutputsServer(outputs_files(), honour_range=False) as server:
        server.cut_next.add("/beta/model_outputs.json")
        report = pull(["beta"], tmp_path, "base", base_url=server.url, expect_queries=6, retries=1, progress=False)
        assert report.downloaded == ["base", "beta"]
        assert len(gets(server, "beta")) == 2
        assert (tmp_path / "beta" / "model_outputs.json").read_bytes() == server.files["/beta/model_outputs.json"]


def test_corrupt_or_foreign_files_are_rejected_and_not_kept(tmp_path):
    foreign = model_items("alpha")
    foreign[2]["instruction"] = "A different benchmark's question"
    files = outputs_files(alpha=json.dumps(foreign).encode(), beta=b'[{"instruction": "x", "output": ')
    with OutputsServer(files) as server:
        report = pull(
            ["alpha", "beta", "gamma"],
            tmp_path,
            "base",
            base_url=server.url,
            expect_queries=6,
            retries=0,
            progress=False,
        )
    assert report.downloaded == ["base"]
    assert "item:3: instruction: not one of the bench's instructions" in report.failed["alpha"]
    assert "malformed JSON" in report.failed["beta"]
    assert "HTTP 404" in report.failed["gamma"]
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()) == [
        "base/model_outputs.json"
    ]


def test_baseline_with_the_wrong_number_of_queries_stops_the_pull(tmp_path):
    with OutputsServer(outputs_files()) as server:
        report = pull(["alpha"], tmp_path, "base", base_url=server.url, expect_queries=805, progress=False)
    assert "expected 805 instructions, found 6" in report.failed["base"]
    assert report.failed["alpha"] == "not attempted: the baseline 'base' failed"
    assert not report.downloaded


def test_cli_pull_build_info(tmp_path, capsys):
    cache, bench_dir = tmp_path / "cache", tmp_path / "bench"
    with OutputsServer(outputs_files()) as server:
        args = ["pull", "--base-url", server.url, "--cache-dir", str(cache), "--baseline", "base"]
        assert main([*args, "--models", "alpha", "beta", "--expect-queries", "6", "--quiet"]) == 0
        assert json.loads(capsys.readouterr().out)["downloaded"] == ["base", "alpha", "beta"]
        assert main([*args, "--models", "nope", "--expect-queries", "6", "--quiet", "--retries", "0"]) == 1
        assert "nope: " in capsys.readouterr().err
    assert main(["build", "--from", str(cache), "--output", str(bench_dir), "--baseline", "base"]) == 0
    built = json.loads(capsys.readouterr().out)
    assert (built["n_queries"], built["n_responses"], built["models"]) == (6, 18, ["alpha", "base", "beta"])
    assert open_bench(bench_dir).content_hash() == built["content_hash"]
    assert main(["info", str(bench_dir), "--coverage"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["layout"] == "bench" and len(info["coverage"]) == 3


def test_cli_errors_are_one_clear_line(tmp_path, capsys):
    assert main(["build", "--from", str(tmp_path), "--output", str(tmp_path / "out")]) == 2
    assert "usl-data build:" in capsys.readouterr().err and not (tmp_path / "out").exists()


def test_pull_from_local_combined_folder(combined_dir, tmp_path):
    cache = tmp_path / "cache"
    args = ["pull", "--from", str(combined_dir), "--cache-dir", str(cache), "--baseline", "base", "--quiet"]
    assert main([*args, "--models", "alpha", "--expect-queries", "6"]) == 0
    assert json.loads((cache / "alpha" / "model_outputs.json").read_text()) == model_items("alpha")
    pulled = open_bench(cache, baseline="base")
    assert pulled.responses.equals(open_bench(combined_dir, models=["alpha", "base"], baseline="base").responses)


def test_default_models_ship_with_the_package():
    models = default_models()
    assert 50 <= len(models) <= 60 and "gpt4_1106_preview" in models and len(set(models)) == len(models)


@pytest.mark.parametrize("command", [[], ["pull"], ["build"], ["info"]])
def test_every_command_has_help(command):
    script = Path(sys.executable).parent / "usl-data"
    result = subprocess.run([str(script), *command, "--help"], capture_output=True, text=True, check=True)
    assert "usage: usl-data" in result.stdout


@pytest.mark.shared_data
def test_pull_from_shared_copy_matches_the_combined_bench(shared_data, tmp_path):
    source = shared_data / "usl" / "alpaca_eval"
    models = ["gpt4_0314", "claude-2", "llama-2-70b-chat-hf"]
    report = pull(models, tmp_path, "gpt4_1106_preview", local_source=source, progress=False)
    assert report.missing_queries == {"llama-2-70b-chat-hf": 1} and not report.failed
    pulled = open_bench(tmp_path)
    combined = open_bench(source, models=[*models, "gpt4_1106_preview"])
    assert pulled.responses.equals(combined.responses)
    assert pulled.queries["instruction"].equals(combined.queries["instruction"])


def test_pull_without_network_says_so_and_how_to_work_offline(tmp_path):
    import socket

    from usl_space.pull import pull

    with socket.socket() as s:  # a port nobody listens on: what an offline machine sees
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    report = pull(["m1"], tmp_path / "cache", "base", base_url=f"http://127.0.0.1:{port}", retries=0, timeout=2,
                  progress=False)  # fmt: skip
    reason = report.failed["base"]
    assert "could not reach the server (no network" in reason and "--data DIR" in reason
    assert report.failed["m1"].startswith("not attempted")


def test_build_writes_the_description_and_the_models_facts_and_a_bad_manifest_is_named(tmp_path, capsys):
    from usl_space.catalog import catalog, model_facts

    cache, bench_dir = tmp_path / "cache", tmp_path / "bench"
    with OutputsServer(outputs_files()) as server:
        args = ["pull", "--base-url", server.url, "--cache-dir", str(cache), "--baseline", "base", "--quiet"]
        assert main([*args, "--models", "alpha", "--expect-queries", "6"]) == 0
    capsys.readouterr()
    build = ["build", "--from", str(cache), "--output", str(bench_dir), "--baseline", "base", "--name", "speechmap"]
    assert main(build) == 0
    shared = open_bench(bench_dir)  # a shared bench's name: its own description, unknown models' facts blank
    assert shared.description.startswith("requests to criticise governments")
    assert shared.model_info == {m: {"organisation": "", "weights": "", "released": ""} for m in ("alpha", "base")}
    capsys.readouterr()
    assert main([*build[:-2], "--name", "mine", "--description", "my team's prompts"]) == 0
    assert json.loads(capsys.readouterr().out)["description"] == "my team's prompts"
    assert open_bench(bench_dir).description == "my team's prompts"
    listed = next(iter(catalog()))  # a catalogued model gets its facts
    assert catalog()[listed].organisation and model_facts([listed])[listed]["organisation"]
    manifest = json.loads((bench_dir / "manifest.json").read_text())
    manifest["model_info"] = {"alpha": {"released": 2025}}
    (bench_dir / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DataValidationError, match="model_info"):
        open_bench(bench_dir)


def test_build_from_answer_files_alone_or_added_to_a_bench(combined_dir, tmp_path, capsys):
    from conftest import INSTRUCTIONS, write_jsonl

    first = write_jsonl(tmp_path / "a.jsonl", [{"idx": 7 + i, "instruction": t, "output": f"a{i}", "generator": "ma"}
                                               for i, t in enumerate(INSTRUCTIONS[:3])])  # fmt: skip
    second = write_jsonl(tmp_path / "mb.jsonl", [{"instruction": t, "output": f"b{i}"}
                                                 for i, t in enumerate(INSTRUCTIONS[:2])])  # fmt: skip
    own = tmp_path / "own"
    assert main(["build", "--answers", str(first), str(second), "--output", str(own), "--name", "team"]) == 0
    bench = open_bench(own)
    assert (bench.name, bench.models, bench.baseline) == ("team", ["ma", "mb"], "ma")  # the most answers
    assert bench.queries["idx"].to_list() == [7, 8, 9]  # the files' own ids
    added = tmp_path / "added"
    assert main(["build", "--from", str(combined_dir), "--answers", str(first), "--baseline", "base", "--output",
                 str(added)]) == 0  # fmt: skip
    merged = open_bench(added)
    assert "ma" in merged.models and merged.baseline == "base" and merged.queries.height == len(INSTRUCTIONS)
    capsys.readouterr()
    stray = write_jsonl(tmp_path / "stray.jsonl", [{"instruction": "Not on the bench.", "output": "x"}])
    assert main(["build", "--from", str(combined_dir), "--answers", str(stray), "--output", str(tmp_path / "x")]) == 2
    assert "stray.jsonl item:1: instruction: not one of the bench's instructions" in capsys.readouterr().err
    again = write_jsonl(
        tmp_path / "alpha.jsonl", [{"instruction": INSTRUCTIONS[0], "output": "x", "generator": "alpha"}]
    )
    assert main(["build", "--from", str(combined_dir), "--answers", str(again), "--output", str(tmp_path / "y")]) == 2
    assert "already on the bench: ['alpha']" in capsys.readouterr().err
