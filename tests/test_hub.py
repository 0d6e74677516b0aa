"""crm_core.hub: everything up to the network call (the Hub is unreachable here)."""

from __future__ import annotations

import shutil

import pytest
from crm_core.hub import model_card, push_checkpoint, resolve_checkpoint
from crm_core.spec import CRMSpec


class FakeHubApi:
    """Records what would be sent, and what the staged folder held at upload time."""

    def __init__(self):
        self.calls = []

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", repo_id, kwargs))

    def upload_folder(self, folder_path, repo_id, **kwargs):
        from pathlib import Path

        files = {
            p.name: p.read_text() if p.name == "README.md" else p.stat().st_size for p in Path(folder_path).iterdir()
        }
        self.calls.append(("upload_folder", repo_id, files))


def test_local_folder_wins(tiny_qwen_crm):
    assert resolve_checkpoint(tiny_qwen_crm) == tiny_qwen_crm
    assert resolve_checkpoint(str(tiny_qwen_crm)) == tiny_qwen_crm


def test_model_card_says_what_a_user_needs():
    spec = CRMSpec("segments", 512, base_model="sentence-transformers/all-MiniLM-L6-v2",
                   extra={"training_data": ["hh_rlhf", "dsp"], "metrics": {"accuracy/dsp_flip": 0.93}})  # fmt: skip
    card = model_card(spec)
    assert "base_model: sentence-transformers/all-MiniLM-L6-v2" in card
    assert "license: cc-by-nc-4.0" in card and "Non-commercial" in card  # DSP is CC BY-NC
    assert "`hh_rlhf`: MIT" in card and "| accuracy/dsp_flip | 0.93 |" in card
    assert "`segments` v2; max length 512" in card and "Intended use and limits" in card
    assert "license: apache-2.0" in model_card(CRMSpec("chat", 256, extra={"training_data": ["hh_rlhf"]}))


def test_push_uploads_a_staged_copy_with_a_fresh_card(tiny_qwen_crm, tmp_path):
    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_qwen_crm, folder)
    (folder / "optimizer.pt").write_bytes(b"not for the hub")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    api = FakeHubApi()
    url = push_checkpoint(folder, "usl-org/crm-test", api=api)
    assert url == "https://huggingface.co/usl-org/crm-test"
    (create, repo, options), (upload, repo2, files) = api.calls
    assert (create, repo, options["exist_ok"], upload, repo2) == ("create_repo", "usl-org/crm-test", True,
                                                                   "upload_folder", "usl-org/crm-test")  # fmt: skip
    assert "optimizer.pt" not in files and files["model.safetensors"] > 0
    assert "# Customizable Reward Model" in files["README.md"]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # the local folder is untouched


def test_push_refuses_bad_input(tiny_qwen_crm, tmp_path):
    with pytest.raises(ValueError, match="not a Hub repo id"):
        push_checkpoint(tiny_qwen_crm, "no-slash", api=FakeHubApi())
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "crm.json").write_text((tiny_qwen_crm / "crm.json").read_text())
    with pytest.raises(FileNotFoundError, match=r"no \*.safetensors or \*.onnx weights"):
        push_checkpoint(empty, "org/name", api=FakeHubApi())


def test_push_sends_only_checkpoint_files_never_a_dotfile_or_a_link(tiny_qwen_crm, tmp_path, capsys):
    folder = tmp_path / "ckpt"
    shutil.copytree(tiny_qwen_crm, folder)
    (folder / ".env").write_text("HF_TOKEN=hf_secret")
    (folder / ".git").mkdir()
    (folder / ".git" / "config.json").write_text("{}")
    outside = tmp_path / "outside.json"
    outside.write_text('{"private": true}')
    (folder / "linked.json").symlink_to(outside)
    (folder / "weights.bin").write_bytes(b"pickle")
    api = FakeHubApi()
    push_checkpoint(folder, "usl-org/crm-test", api=api)
    files = api.calls[1][2]
    assert not {".env", ".git", "linked.json", "weights.bin"} & set(files) and "model.safetensors" in files
    said = capsys.readouterr().err
    assert "leaving out 4 file(s)" in said and ".env" in said and "linked.json" in said
