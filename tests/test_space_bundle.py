"""The Space as people will meet it: usl-space-bundle assembles a folder that installs into a fresh virtual
environment (offline, from uv's cache), finds its model beside app.py, and serves a custom board over HTTP."""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import REPO
from test_app import free_port
from usl_space.topics import TOPICS

pytestmark = pytest.mark.slow  # builds and installs the Space bundle: `pytest -m "not slow"` leaves them out

UV = shutil.which("uv")


def load_space_app(path: Path):
    spec = importlib.util.spec_from_file_location("space_app", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_space_app_finds_the_model_beside_itself_or_at_usl_model(tmp_path):
    space = tmp_path / "space"
    (space / "models" / "crm-compositional").mkdir(parents=True)
    shutil.copy2(REPO / "space" / "app.py", space / "app.py")
    app = load_space_app(space / "app.py")
    args = app.arguments({"PORT": "9000"})
    assert args[args.index("--model") + 1] == str(space / "models" / "crm-compositional")
    assert args[args.index("--port") + 1] == "9000" and "--data" not in args
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert app.arguments({"USL_MODEL": str(other), "USL_DATA": "d"})[-4:] == ["--model", str(other), "--data", "d"]
    shutil.rmtree(space / "models")
    assert "--model" not in app.arguments({})  # then usl-space's own search (and its message) decides


def tiny_alpaca_eval(folder: Path) -> Path:
    """An AlpacaEval-style folder: 8 instructions, the baseline and two models (one terse, one wordy)."""
    folder.mkdir(parents=True)
    questions = [f"How do I look after a {thing}?" for thing in
                 ("cat", "bike", "garden", "laptop", "violin", "car", "tent", "kettle")]  # fmt: skip
    (folder / "instructions.jsonl").write_text(
        "".join(json.dumps({"idx": i, "instruction": q}) + "\n" for i, q in enumerate(questions)), encoding="utf-8"
    )
    answers = {"gpt4_1106_preview": "Here is how: clean it, check it weekly and keep it dry. Store it safely.",
               "terse": "Keep it clean.", "wordy": "There are many considerations. " * 12}  # fmt: skip
    rows = [{"model": m, "idx": i, "output": f"{text} ({q})"} for m, text in answers.items()
            for i, q in enumerate(questions)]  # fmt: skip
    with gzip.open(folder / "model_outputs.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in rows))
    return folder


@pytest.mark.skipif(UV is None, reason="uv is not on PATH")
def test_the_bundled_space_installs_offline_starts_and_serves_a_custom_board(tmp_path):
    from gradio_client import Client
    from usl_space.bundle import main as bundle

    space = tmp_path / "space"
    assert bundle(["--output", str(space)]) == 0
    assert (space / "models" / "crm-compositional" / "crm.json").is_file()
    requirements = (space / "requirements.txt").read_text()
    assert "./wheels/usl_space-" in requirements and "./wheels/crm_core-" in requirements
    assert "suggested_hardware: cpu-basic" in (space / "README.md").read_text()
    venv = tmp_path / "venv"
    env = {**os.environ, "VIRTUAL_ENV": str(venv)}
    subprocess.run([UV, "venv", "-q", str(venv), "--python", sys.executable], check=True, env=env)
    install = [UV, "pip", "install", "-q", "--offline"]
    subprocess.run([*install, "-r", str(space / "pylock.toml")], check=True, env=env, timeout=600)
    subprocess.run([*install, "--no-deps", *map(str, (space / "wheels").glob("*.whl"))], check=True, env=env)
    port = free_port()
    run_env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "USL_MODEL", "PYTHONPATH")}
    run_env |= {"PORT": str(port), "USL_HOST": "127.0.0.1", "USL_DATA": str(tiny_alpaca_eval(tmp_path / "data")),
                "USL_CACHE_DIR": str(tmp_path / "cache"), "USL_SCORE_CACHE": str(tmp_path / "cache" / "s.sqlite"),
                "HF_HUB_OFFLINE": "1"}  # fmt: skip
    log = (tmp_path / "space.log").open("w")
    elsewhere = tmp_path / "cwd"  # started from another folder: app.py must find its model by its own place
    elsewhere.mkdir()
    server = subprocess.Popen([str(venv / "bin" / "python"), str(space / "app.py")], cwd=elsewhere,
                              env=run_env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        url, page, deadline = f"http://127.0.0.1:{port}/", "", time.time() + 300
        while time.time() < deadline and server.poll() is None:
            try:
                page = urllib.request.urlopen(url, timeout=5).read().decode()
                break
            except OSError:
                time.sleep(1)
        assert server.poll() is None, (tmp_path / "space.log").read_text()[-3000:]
        assert "USL" in page
        client = Client(url, verbose=False)
        table, *_, status, _files = client.predict(list(TOPICS), "", "Keep it short.", "", "gpt4_1106_preview",
                                                   ["terse", "wordy"], 8, api_name="/customize")  # fmt: skip
        models = [row[1] for row in table["data"]]  # Rank, Model, ...
        assert len(models) == 3 and any("terse" in m for m in models), status
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


@pytest.mark.skipif(UV is None, reason="uv is not on PATH")
def test_space_requirements_follow_uv_lock():
    """space/requirements.txt is what usl-space-bundle writes: regenerate it when uv.lock changes."""
    from usl_space.bundle import requirements_text

    wheels = ["crm_core-0.1.0-py3-none-any.whl", "usl_space-0.1.0-py3-none-any.whl"]
    assert (REPO / "space" / "requirements.txt").read_text() == requirements_text(REPO, wheels)
