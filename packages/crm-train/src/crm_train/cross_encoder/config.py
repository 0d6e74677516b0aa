"""One dataclass configures a CRM training run: loaded from YAML, overridden by `--key value`, saved with
every checkpoint. Every field carries its help text, which `crm-train --help` prints."""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from crm_core.guard import read_text


def _f(default: Any, help: str, **kwargs: Any) -> Any:
    if isinstance(default, (list, dict)):
        return field(default_factory=lambda: type(default)(default), metadata={"help": help}, **kwargs)
    return field(default=default, metadata={"help": help}, **kwargs)


@dataclass
class TrainConfig:
    """A CRM training run. Paths are relative to the working directory."""

    # model
    base_model: str = _f(
        "minilm",
        "base model: a local folder, a Hub id, 'minilm' (the packaged all-MiniLM-L6-v2) "
        "or 'tiny-qwen3' (a tiny random Qwen3 with the real Qwen vocabulary, for tests)",
    )
    style: Literal["auto", "chat", "segments"] = _f(
        "auto", "prompt style; auto: segments for encoders, chat for decoders"
    )
    max_length: int = _f(512, "tokens per input; longer inputs are cut by the prompt budget, never dropped")
    objective: Literal["pairwise", "pointwise"] = _f(
        "pairwise", "pairwise classification (the CRM) or pointwise Bradley-Terry ranking"
    )
    ties: bool = _f(False, "pairwise only: a 3-way head (A / B / tie) that learns from ties; else ties are dropped")
    length_slope: bool = _f(
        False,
        "pointwise only: a second head output, a slope read from criteria and response, times the response's "
        "log2 word count, is added to the score (length counts as much as the criteria say, at any gap); "
        "continuing from a one-output CRM keeps its score and starts the slope at 0",
    )
    attention_dropout: float | None = _f(
        0.0,
        "attention-probability dropout (BERT-like models); 0 makes CPU "
        "training ~2.6x faster; null keeps the model's own value",
    )
    gradient_checkpointing: bool = _f(False, "recompute activations in the backward pass to save memory")

    # data
    train_files: list[str] = _f([], "preference pairs (JSON lines, the paper's format) to train on")
    validation_files: list[str] = _f(
        [], "pairs to validate on; empty: hold out validation_fraction of the training prompts"
    )
    skip_invalid: bool = _f(
        False,
        "go on without pairs that fail validation (each is still printed on stderr); "
        "without it any rejected row stops the run",
    )
    validation_fraction: float = _f(0.1, "share of training prompts held out when no validation_files are given")
    sources: list[str] = _f(
        [],
        "train and validate only on pairs whose `source` is one of these (e.g. [dsp, style] for a stage that "
        "must read its criteria); empty: all",
    )
    source_weights: dict[str, float] = _f(
        {},
        "training pairs of a source are used this many times per epoch, each copy with its own direction and "
        "noise draws (e.g. {auto_j: 2}; 1.5: every pair once and a re-drawn half of them again); unnamed: 1",
    )
    max_train_samples: int | None = _f(None, "use at most this many training pairs (after the split)")
    max_validation_samples: int | None = _f(None, "use at most this many validation pairs")
    direction: Literal["original", "reverse", "random"] = _f(
        "original",
        "reverse: the losing side's criteria "
        "(field loser_criteria) with the label flipped, where a pair has them; random: either, per sample and epoch",
    )
    noise: Literal["none", "remove", "add", "replace", "random"] = _f(
        "none",
        "criteria noise, re-sampled every "
        "epoch: remove (keep ~remove_keep of them), add (criteria of unrelated pairs), replace (swap some for the "
        "loser's or unrelated ones), random (one of those per sample)",
    )
    noise_probability: float = _f(0.5, "share of training samples that get criteria noise")
    remove_keep: float = _f(0.5, "remove noise: the chance each criterion is kept")
    noise_pool_files: list[str] = _f(
        [],
        "extra criteria for add/replace noise (JSON lines with a 'criteria' or "
        "'rubric' field); the training pairs' own criteria are always in the pool",
    )
    position_swap: bool = _f(True, "also train on every pair as (B, A) with the label flipped")

    # optimisation
    epochs: int = _f(1, "passes over the training data")
    max_steps: int | None = _f(None, "stop after this many optimizer steps (overrides epochs when reached first)")
    per_device_batch_size: int = _f(8, "pairs per device per forward pass")
    gradient_accumulation_steps: int = _f(1, "forward passes per optimizer step")
    learning_rate: float = _f(3e-5, "peak learning rate (MiniLM learned a criteria task at 3e-5, not at 1e-4)")
    head_learning_rate: float | None = _f(
        None,
        "peak learning rate of the classification head alone (e.g. a new length-slope output that starts at "
        "0); null: learning_rate",
    )
    weight_decay: float = _f(0.01, "AdamW weight decay")
    warmup_ratio: float = _f(0.06, "share of steps spent warming the learning rate up, then cosine decay")
    max_grad_norm: float = _f(1.0, "gradient clipping norm")
    mixed_precision: Literal["no", "fp16", "bf16"] = _f("no", "mixed precision (GPU: bf16)")
    seed: int = _f(0, "seed for the split, noise, shuffling and initialisation")

    # evaluation, checkpoints, logging
    output_dir: str = _f("runs/crm", "where checkpoints, metrics.jsonl and the resolved config go")
    eval_steps: int = _f(100, "validate every this many optimizer steps (and at the end)")
    save_steps: int = _f(100, "save resumable training state every this many optimizer steps")
    early_stopping_patience: int | None = _f(
        None, "stop after this many validations without a lower validation loss; null: never"
    )
    resume: bool = _f(True, "continue from output_dir/state if a previous run left one")
    logging_steps: int = _f(10, "log training loss every this many optimizer steps")
    crash_after_step: int | None = _f(None, "testing aid: exit abruptly after this optimizer step, as a crash would")

    def __post_init__(self) -> None:
        if self.objective == "pointwise" and self.ties:
            raise ValueError("ties need the pairwise objective (a 3-way head)")
        if self.objective == "pairwise" and self.length_slope:
            raise ValueError("length_slope needs the pointwise objective")
        bad = {k: v for k, v in self.source_weights.items()
               if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0}  # fmt: skip
        if bad:
            raise ValueError(f"source_weights must be finite numbers >= 0, got {bad}")
        for name, value in vars(self).items():  # NaN or inf means nothing a fit could do
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value}")
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError(f"max_steps must be at least 1 (or left out), got {self.max_steps}")
        for name in ("validation_fraction", "noise_probability", "remove_keep", "warmup_ratio"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be between 0 and 1, got {getattr(self, name)}")
        for name in ("max_length", "epochs", "per_device_batch_size", "gradient_accumulation_steps", "eval_steps",
                     "save_steps", "logging_steps"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")

    def to_yaml(self) -> str:
        return yaml.safe_dump(dataclasses.asdict(self), sort_keys=False)

    def save(self, path: str | os.PathLike) -> None:
        Path(path).write_text(self.to_yaml(), encoding="utf-8")


def _parse_value(name: str, text: str, config_cls: type = TrainConfig) -> Any:
    """Turn a command-line string into the field's type (YAML syntax: 1e-4, true, null, [a, b])."""
    value = yaml.safe_load(text)
    kind = typing.get_type_hints(config_cls)[name]
    origin = typing.get_origin(kind)
    allowed = typing.get_args(kind) if origin in (typing.Union, types.UnionType) else (kind,)
    if value is None and type(None) in allowed:
        return None
    for option in allowed:
        base = typing.get_origin(option) or option
        if base is list:
            return value if isinstance(value, list) else [value]
        if base is Literal:
            if value in typing.get_args(option):
                return value
            continue
        if base is float:
            try:
                return float(text)  # YAML 1.1 reads 1e-3 (no dot) as a string
            except ValueError:
                continue
        if base is str:
            return text
        if isinstance(value, base):
            return value
    raise ValueError(f"--{name.replace('_', '-')}: cannot read {text!r} as {kind}")


def config_kind(path: str | os.PathLike | None) -> str:
    """The `kind` a YAML config names: 'cross-encoder' (TrainConfig, the default) or 'compositional'."""
    if path is None or not Path(path).is_file():
        return "cross-encoder"
    loaded = read_yaml(path)
    return loaded.get("kind", "cross-encoder") if isinstance(loaded, dict) else "cross-encoder"


class NoAliasLoader(yaml.SafeLoader):
    """yaml.SafeLoader without anchors and aliases: a config has no use for them, and a 1 KB file of nested aliases
    (a "billion laughs") would expand without end."""

    def compose_node(self, parent, index):  # type: ignore[no-untyped-def]
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed in a config",
                                              event.start_mark)  # fmt: skip
        return super().compose_node(parent, index)


MAX_CONFIG_BYTES = 1_000_000  # a config is a few KB


def read_yaml(path: str | os.PathLike) -> Any:
    """A YAML file's content; ValueError naming the file and line where it is not YAML."""
    text = read_text(path, "a YAML config file", MAX_CONFIG_BYTES)
    try:
        return yaml.load(text, Loader=NoAliasLoader) or {}
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = " ".join(str(getattr(error, "problem", None) or error).split())  # one line
        raise ValueError(f"{path}{line}: not valid YAML ({problem})") from None


def load_config(path: str | os.PathLike | None, overrides: dict[str, str] | None = None,
                config_cls: type = TrainConfig) -> Any:  # fmt: skip
    """A config from a YAML file (or the defaults), then command-line overrides. Unknown keys are errors."""
    data: dict[str, Any] = {}
    if path is not None:
        loaded = read_yaml(path)
        if not isinstance(loaded, dict):
            raise ValueError(f"{path}: expected a mapping of config fields")
        data.update(loaded)
    known = {f.name for f in dataclasses.fields(config_cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{path}: unknown config field(s) {unknown}; see crm-train --help")
    hints = typing.get_type_hints(config_cls)
    for name, value in data.items():
        _check_type(path, name, value, hints[name])
    for key, text in (overrides or {}).items():
        name = key.replace("-", "_")
        if name not in known:
            raise ValueError(f"unknown option --{key}; see crm-train --help")
        data[name] = _parse_value(name, text, config_cls)
    for name, value in data.items():  # YAML reads .nan and .inf as numbers: a NaN learning rate trains nothing
        if isinstance(value, float) and not math.isfinite(value):
            given = f"--{name.replace('_', '-')}" if name in (k.replace("-", "_") for k in overrides or {}) else path
            raise ValueError(f"{given}: {name}: expected a finite number, got {value!r}")
    return config_cls(**data)


def _check_type(path, name: str, value: Any, hint: Any) -> None:
    """A YAML value of the field's plain type (int, float, bool, str, or an optional one), or ValueError naming file
    and field; list[str], Literal[...] and other shapes are checked where they are used."""
    kinds = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}
    origin = typing.get_origin(hint)
    if origin is not None and origin not in (typing.Union, types.UnionType):
        return
    options = [h for h in (typing.get_args(hint) or (hint,)) if h is not type(None)]
    if any(h not in kinds for h in options) or (value is None and type(None) in typing.get_args(hint)):
        return
    ok = any(isinstance(value, h) and not (h in (int, float) and isinstance(value, bool)) for h in options)
    ok = ok or (float in options and isinstance(value, int) and not isinstance(value, bool))
    if not ok:
        raise ValueError(f"{path}: {name}: expected {' or '.join(kinds[h] for h in options)}, got {value!r}")


HIDDEN_FIELDS = ("crash_after_step",)  # test aids: settable, not shown in --help


def add_config_arguments(parser: argparse.ArgumentParser, config_cls: type = TrainConfig) -> None:
    """One --option per field, with its help text and default, for --help and overrides."""
    group = parser.add_argument_group(f"config fields of {config_cls.__name__} (override the YAML file)")
    hints = typing.get_type_hints(config_cls)
    for f in dataclasses.fields(config_cls):
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        choices = typing.get_args(hints[f.name]) if typing.get_origin(hints[f.name]) is typing.Literal else ()
        metavar = "{" + ",".join(map(str, choices)) + "}" if choices else "VALUE"
        shown = argparse.SUPPRESS if f.name in HIDDEN_FIELDS else f"{f.metadata['help']} (default: {default})"
        group.add_argument(f"--{f.name.replace('_', '-')}", dest=f"override_{f.name}", metavar=metavar,
                           help=shown)  # fmt: skip
