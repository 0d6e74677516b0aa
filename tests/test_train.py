"""crm-train end to end on the CPU: it learns, it resumes exactly, it runs as real 2-process DDP; crm-eval and
crm-push on its output."""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_jsonl
from crm_train.eval_cli import evaluate_file
from crm_train.eval_cli import main as crm_eval
from crm_train.push_cli import main as crm_push
from safetensors.numpy import load_file

pytestmark = pytest.mark.slow  # real training runs (DDP, crash and resume): `pytest -m "not slow"` leaves them out


def criteria_toy(path: Path, n: int, seed: int) -> Path:
    """The winner depends on the criterion alone: two fixed answers (cats, dogs) in random order, and a
    criterion asking for one of them. Without reading the criterion no model can beat 50%."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        a, b = "Here is an answer about cats.", "Here is an answer about dogs."
        if rng.random() < 0.5:
            a, b = b, a
        want = rng.choice(["cats", "dogs"])
        rows.append({
            "id": f"toy-{seed}-{i}", "prompt": "Tell me something.", "source": "toy",
            "model_a": [{"role": "user", "content": "Tell me something."}, {"role": "assistant", "content": a}],
            "model_b": [{"role": "user", "content": "Tell me something."}, {"role": "assistant", "content": b}],
            "criteria": [f"I want an answer about {want}"], "preference": "model_a" if want in a else "model_b",
        })  # fmt: skip
    return write_jsonl(path, rows)


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("toy")
    return criteria_toy(folder / "train.jsonl", 600, 1), criteria_toy(folder / "val.jsonl", 120, 2)


@pytest.fixture(scope="module")
def env(request):
    """Subprocess environment: offline, and one shared cache for the converted Qwen tokenizer."""
    return {**os.environ, "HF_HUB_OFFLINE": "1", "USL_CACHE_DIR": str(request.config.cache.mkdir("usl-cache"))}


def args_for(toy, out: Path, steps: int, **extra) -> list[str]:
    train, val = toy
    options = {"base-model": "tiny-qwen3", "max-length": "192", "train-files": str(train),
               "validation-files": str(val), "learning-rate": "1e-3", "per-device-batch-size": "16",
               "epochs": "20", "max-steps": str(steps), "eval-steps": "50", "save-steps": "50", "logging-steps": "10",
               "output-dir": str(out), **extra}  # fmt: skip
    return [x for key, value in options.items() for x in (f"--{key}", value)]


def run_cli(args: list[str], env: dict, check: bool = True) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "crm_train.train_cli", *args]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    if check and result.returncode != 0:
        raise AssertionError(f"crm-train failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result


@pytest.fixture(scope="module")
def trained(toy, env, tmp_path_factory):
    """MiniLM (pretrained, 22.7M parameters) for 60 steps: it passes chance by step 20-40 for every seed tried
    (0, 1, 2). The tiny random Qwen3 learns this task only for some seeds and schedules, so it serves the
    mechanics tests below instead."""
    out = tmp_path_factory.mktemp("run") / "toy"
    options = {"base-model": "minilm", "max-length": "128", "learning-rate": "5e-5", "eval-steps": "20"}
    run_cli(args_for(toy, out, 60, **options), env)
    return out


def test_the_loop_learns_a_criteria_dependent_task(trained, toy):
    validations = [e for e in map(json.loads, (trained / "metrics.jsonl").read_text().splitlines()) if "val/loss" in e]
    assert validations[-1]["val/accuracy"] >= 0.9
    result = evaluate_file(str(trained / "best"), str(toy[1]), criteria_ablation=True)
    assert result["accuracy"] >= 0.9 and result["position_consistency"] >= 0.9
    assert 0.3 <= result["criteria_ablation"]["accuracy"] <= 0.7  # without criteria: chance, by construction
    assert result["n"] == 120


def test_output_folder(trained):
    assert {"best", "state", "metrics.jsonl", "train_config.yaml", "process-0.json"} <= {
        p.name for p in trained.iterdir()
    }
    assert "max_steps: 60" in (trained / "best" / "train_config.yaml").read_text()
    crm = json.loads((trained / "best" / "crm.json").read_text())
    assert crm["extra"]["metrics"]["val/accuracy"] >= 0.9 and crm["style"] == "segments"


def test_crash_and_resume_end_where_an_uninterrupted_run_ends(toy, env, tmp_path):
    common = {"save-steps": "4", "eval-steps": "6", "position-swap": "true", "noise": "random"}
    run_cli(args_for(toy, tmp_path / "straight", 12, **common), env)
    crashed = run_cli(args_for(toy, tmp_path / "resumed", 12, **common, **{"crash-after-step": "6"}), env, check=False)
    assert crashed.returncode == 3
    assert json.loads((tmp_path / "resumed" / "state" / "trainer_state.json").read_text())["step"] == 4
    resumed = run_cli(args_for(toy, tmp_path / "resumed", 12, **common), env)
    assert "resumed from" in resumed.stdout + resumed.stderr
    finals = [json.loads(p.read_text()) for p in (tmp_path / "straight" / "state" / "trainer_state.json",
                                                  tmp_path / "resumed" / "state" / "trainer_state.json")]  # fmt: skip
    assert finals[0]["step"] == finals[1]["step"] == 12
    straight = load_file(tmp_path / "straight" / "state" / "model.safetensors")
    again = load_file(tmp_path / "resumed" / "state" / "model.safetensors")
    assert straight.keys() == again.keys()
    assert all((straight[k] == again[k]).all() for k in straight)


def test_sources_filter_a_stage_and_the_card_names_every_source_trained_on(toy, env, tmp_path):
    """Stage 1 trains on one source of a mixed file; stage 2, continued from it, on all. The checkpoint lists the
    sources of both stages, so the model card can state their licences."""
    other = [{**row, "id": f"other-{row['id']}", "source": "other"} for row in map(json.loads, toy[0].open())]
    mixed = write_jsonl(tmp_path / "mixed.jsonl", [*map(json.loads, toy[0].open()), *other])
    stage1 = run_cli(args_for((mixed, toy[1]), tmp_path / "stage1", 2, sources="toy"), env)
    assert "pairs: 600 train, 120 validation" in stage1.stdout + stage1.stderr
    assert json.loads((tmp_path / "stage1/best/crm.json").read_text())["extra"]["training_data"] == ["toy"]
    stage2 = run_cli(args_for((mixed, toy[1]), tmp_path / "stage2", 2, **{"base-model": str(tmp_path / "stage1/best")}),
                     env)  # fmt: skip
    assert "pairs: 1200 train" in stage2.stdout + stage2.stderr
    assert json.loads((tmp_path / "stage2/best/crm.json").read_text())["extra"]["training_data"] == ["other", "toy"]


def test_a_pointwise_stage_grows_a_length_slope_and_trains_it(toy, env, tmp_path):
    """Continued from a one-output pointwise CRM with length_slope: the checkpoint has both outputs, and the
    slope, which starts at 0, has moved (the length feature reached the loss)."""
    base = ["--objective", "pointwise", "--learning-rate", "1e-3"]
    run_cli(args_for(toy, tmp_path / "point", 2) + base, env)
    run_cli(args_for(toy, tmp_path / "slope", 4, **{"base-model": str(tmp_path / "point/best")}) + base
            + ["--length-slope", "true", "--head-learning-rate", "1e-2"], env)  # fmt: skip
    assert json.loads((tmp_path / "slope/best/crm.json").read_text())["labels"] == ["score", "length_slope"]
    weights = load_file(str(tmp_path / "slope/best/model.safetensors"))
    assert weights["score.weight"].shape[0] == 2 and abs(weights["score.weight"][1]).max() > 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_process_ddp_on_cpu_trains_different_shards_to_identical_weights(toy, env, tmp_path):
    out = tmp_path / "ddp"
    launcher = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
                "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
                "--main_process_port", str(free_port()), "-m", "crm_train.train_cli"]  # fmt: skip
    ddp_env = {**env, "ACCELERATE_USE_CPU": "1"}
    command = [*launcher, *args_for(toy, out, 10, **{"eval-steps": "5"})]
    result = subprocess.run(command, env=ddp_env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    ranks = [json.loads((out / f"process-{i}.json").read_text()) for i in range(2)]
    assert [r["num_processes"] for r in ranks] == [2, 2] and [r["rank"] for r in ranks] == [0, 1]
    assert ranks[0]["fingerprint"] != ranks[1]["fingerprint"]  # each process saw its own shard
    assert ranks[0]["samples"] == ranks[1]["samples"] == 10 * 16
    assert ranks[0]["weights_sha256"] == ranks[1]["weights_sha256"]  # and they ended identical
    assert result.stdout.count('"output_dir"') == 1  # the summary is printed once, by the main process


def test_crm_eval_command_prints_the_contract(trained, toy, tmp_path, capsys):
    assert (
        crm_eval(["--model", str(trained / "best"), "--data", str(toy[1]), "--output", str(tmp_path / "e.json")]) == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert {"n", "accuracy", "position_consistency", "ece", "baselines", "accuracy_by_source"} <= set(printed)
    assert printed == json.loads((tmp_path / "e.json").read_text())
    assert printed["accuracy_by_source"] == {"toy": printed["accuracy"]}
    assert crm_eval(["--model", str(tmp_path / "nothing"), "--data", str(toy[1])]) == 1


def test_crm_push_dry_run(trained, capsys):
    assert crm_push(["--model", str(trained / "best"), "--repo-id", "usl/crm-toy", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would upload model.safetensors" in out and "# Customizable Reward Model" in out
    assert "dry run: nothing sent to https://huggingface.co/usl/crm-toy" in out
