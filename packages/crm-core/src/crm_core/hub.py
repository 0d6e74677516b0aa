"""Hugging Face Hub I/O for CRM checkpoints: download with a local-folder fallback, upload with a model card.

A name is first tried as a local folder; otherwise it is a Hub repo id, taken from the local Hub cache when
offline (HF_HUB_OFFLINE=1) and downloaded when online. Only the files a checkpoint needs are fetched (no
pickled weights, no remote code).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from crm_core.guard import not_there

# what a checkpoint is made of, both ways (download and crm-push): no pickled weights, no dotfiles
CHECKPOINT_FILES = [
    "*.json",
    "*.safetensors",
    "*.txt",
    "*.model",
    "*.onnx",
    "*.onnx_data",
    "*.npz",
    "*.jinja",
    "README.md",
]
REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")

# Licences of the training sources we use, for model cards (see ../shared/data/README.md).
SOURCE_LICENCES = {
    "auto_j": "none stated (GAIR-NLP/auto-j)",
    "hh_rlhf": "MIT (anthropics/hh-rlhf)",
    "webgpt": "see source (openai/webgpt_comparisons via Linear95/DSP)",
    "dsp": "CC BY-NC 4.0 (Linear95/DSP): non-commercial",
    "biggen_rubrics": "Apache-2.0 (prometheus-eval)",
    "pandalm": "Apache-2.0 (WeOpenML/PandaLM), evaluation only",
    "style": "Apache-2.0 (MT-bench answers via ku-nlp/ja-vicuna-qa-benchmark; lmarena/arena-hard-auto)",
    "length": "the responses of auto_j, hh_rlhf and webgpt (their licences above), labelled by word count",
}


def resolve_checkpoint(name_or_path: str | os.PathLike, revision: str | None = None) -> Path:
    """A local checkpoint folder for `name_or_path`: the folder itself, or a snapshot of the Hub repo."""
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    name = str(name_or_path)
    if not REPO_ID.fullmatch(name):
        raise FileNotFoundError(f"{name}: {not_there(path, 'checkpoint folder')}, and not a Hub repo id (ORG/NAME)")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(snapshot_download(name, revision=revision, allow_patterns=CHECKPOINT_FILES))
    except LocalEntryNotFoundError as error:
        raise FileNotFoundError(
            f"{name}: not in the local Hugging Face cache and the Hub cannot be reached "
            f"(offline, or HF_HUB_OFFLINE=1); pass a local checkpoint folder instead"
        ) from error


def model_card(spec: Any, metrics: dict | None = None, training_data: list[str] | None = None) -> str:
    """A model card from a checkpoint's crm.json contents: base model, data and licences, metrics, format."""
    training_data = training_data or list(spec.extra.get("training_data", []))
    metrics = metrics or dict(spec.extra.get("metrics", {}))
    licences = [f"- `{s}`: {SOURCE_LICENCES.get(s, 'see source')}" for s in training_data] or ["- not recorded"]
    metric_lines = [f"| {k} | {v} |" for k, v in metrics.items()] or ["| (none recorded) | |"]
    labels = ", ".join(spec.labels)
    noncommercial = any("NC" in SOURCE_LICENCES.get(s, "") for s in training_data)
    return "\n".join([
        "---",
        "library_name: transformers",
        "pipeline_tag: text-classification",
        "tags: [reward-model, customizable-reward-model, usl]",
        f"license: {'cc-by-nc-4.0' if noncommercial else 'apache-2.0'}",
        *([f"base_model: {spec.base_model}"] if spec.base_model else []),
        "---",
        "",
        "# Customizable Reward Model (CRM)",
        "",
        "Reads a user's preference criteria, a query and two responses in one sequence and predicts which response",
        "that user prefers (after arXiv 2508.09463). Made for the User-centric Subjective Leaderboard (USL).",
        "",
        "## Format",
        f"- objective: {spec.objective}; labels: {labels}",
        f"- prompt format: `{spec.style}` v{spec.prompt_format_version}; max length {spec.max_length} tokens",
        f"- base model: {spec.base_model or 'not recorded'}",
        *(["- length_slope: the score is the first output plus the second times log2((words + 1) / 256) of the",
           "  response (`crm_core.cross_encoder.model.point_scores`); reading the logits alone scores it wrongly."]
          if "length_slope" in spec.labels else []),
        "- score it with `crm_core.loader.load_crm(...)`, which builds inputs with the matching prompt format and",
        "  judges every pair in both orders (position bias removed).",
        "",
        "## Training data and licences",
        *licences,
        "",
        "## Metrics (held-out)",
        "| metric | value |",
        "|---|---|",
        *metric_lines,
        "",
        "## Intended use and limits",
        "- Intended: ranking LLM responses for one user's stated preferences (a personal leaderboard).",
        "- Criteria are user-written; the model has seen the kinds of criteria in its training data only and may",
        "  ignore criteria unlike them. It judges text, not facts: it is no substitute for checking correctness.",
        "- Inputs longer than the max length are cut in the middle of each response, which can hide content.",
        *(["- Non-commercial: trained on CC BY-NC data."] if noncommercial else []),
        "",
    ])  # fmt: skip


def push_checkpoint(
    folder: str | os.PathLike, repo_id: str, token: str | None = None, private: bool = False, api: Any = None
) -> str:
    """Upload a checkpoint folder to a Hub model repo with a freshly generated model card; return its URL.

    The card is written into a staging copy, so the local folder is not modified.
    """
    from crm_core.spec import CRMSpec

    folder = Path(folder)
    if not REPO_ID.fullmatch(repo_id):
        raise ValueError(f"{repo_id!r} is not a Hub repo id (ORG/NAME)")
    spec = CRMSpec.load(folder)
    weights = list(folder.glob("*.safetensors")) + list(folder.glob("*.onnx"))
    if not weights:
        raise FileNotFoundError(f"{folder}: no *.safetensors or *.onnx weights to upload")
    if api is None:
        from huggingface_hub import HfApi

        api = HfApi(token=token)
    files, left_out = upload_files(folder)
    if left_out:
        print(f"crm-push: leaving out {len(left_out)} file(s) that are no part of a checkpoint, hidden, or links: "
              f"{', '.join(str(p) for p in left_out[:10])}", file=sys.stderr)  # fmt: skip
    with tempfile.TemporaryDirectory() as staging:
        stage = Path(staging) / folder.name
        for relative in files:
            (stage / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / relative, stage / relative)
        (stage / "README.md").write_text(model_card(spec), encoding="utf-8")
        api.create_repo(repo_id, repo_type="model", private=private, exist_ok=True)
        api.upload_folder(folder_path=str(stage), repo_id=repo_id, repo_type="model",
                          commit_message=f"Upload CRM ({spec.style} v{spec.prompt_format_version})")  # fmt: skip
    return f"https://huggingface.co/{repo_id}"


def upload_files(folder: Path) -> tuple[list[Path], list[Path]]:
    """(sent, left out), relative to `folder`: only files of the kinds a checkpoint holds (CHECKPOINT_FILES), never a
    dotfile or anything in a dot folder (a `.env` with a token), never a link (it may lead outside the folder)."""
    root = folder.resolve()
    sent, left_out = [], []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_dir() and not path.is_symlink():
            continue
        hidden = any(part.startswith(".") for part in relative.parts)
        inside = root in path.resolve().parents  # false for anything reached through a link that leaves the folder
        if hidden or path.is_symlink() or not inside or not any(fnmatch(path.name, p) for p in CHECKPOINT_FILES):
            left_out.append(relative)
        else:
            sent.append(relative)
    return sent, left_out


class DryRunApi:
    """Stands in for HfApi: prints what would be created and uploaded (crm-push and usl-data publish-sides)."""

    def create_repo(self, repo_id: str, **kwargs) -> None:
        kind = kwargs.get("repo_type") or "model"
        print(f"would create (or reuse) {kind} repo {repo_id} (private={kwargs.get('private')})")

    def upload_folder(self, folder_path: str, repo_id: str, **kwargs) -> None:
        for path in sorted(Path(folder_path).rglob("*")):
            if path.is_file():
                print(f"would upload {path.relative_to(folder_path)} ({path.stat().st_size:,} bytes)")
        print("--- card ---\n" + (Path(folder_path) / "README.md").read_text(encoding="utf-8"))
