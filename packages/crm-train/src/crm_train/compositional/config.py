"""Every setting of a compositional CRM fit, one dataclass with help text per field (crm-train reads it from YAML
when `kind: compositional`, and `--help` prints the help). Its defaults are the shipped CRM's recipe."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


def _f(default, help: str):
    return field(default=default, metadata={"help": help})


@dataclass
class CompositionalConfig:
    """Every setting of a compositional CRM fit (crm-train reads it from YAML when `kind: compositional`). The
    defaults are the shipped CRM's recipe (space/models/crm-compositional, crm.json `config`); a test keeps them so.
    How the fitted CRM is served (thresholds, gate, non-answer penalty) is not a fitting setting: that is
    crm_core.compositional.serving.ServingConfig, written into every folder as crm.json `serving`."""

    kind: str = _f("compositional", "which trainer reads this config")
    shared: str = _f("../shared/data", "the shared data folder (../shared/data/README.md)")
    output_dir: str = _f("runs/crm-compositional", "where the CRM folder is written (output_dir/best)")
    embeddings: str = _f("data/embeddings", "the embedding store (vectors by text, reused across runs)")
    max_tokens: int = _f(128, "tokens of each text the frozen encoder reads (speed: ~36 texts/s at 128 on 2 cores)")
    seed: int = _f(0, "seed of every draw")
    use_annotations: bool = _f(True, "train quality on GPT-4-turbo annotations (non-default models, training half)")
    use_human: bool = _f(True, "train quality on human votes (Auto-J, HH-RLHF, WebGPT train splits)")
    soft_labels: bool = _f(True, "annotation labels as the judge's probability (False: thresholded at 0.5)")
    use_refsim: bool = _f(True, "quality uses the similarity of a response to the reference model's answer")
    length_control: bool = _f(True, "fit the judges' length bias as a separate term, left out of the served score")
    refsim_boost: float = _f(
        30.0,
        "added to the learned weight of reference similarity after the pairwise fit: per "
        "pair it barely helps, across a leaderboard it orders models better (chosen on "
        "development models by training/experiments/quality_variants.py; 0: the learned weight alone)",
    )
    lexsim_weight: float = _f(
        3.0,
        "weight of the lexical (TF-IDF) similarity to the reference answer in the quality term, added after the "
        "fit like the boost (chosen on development data by training/experiments/reference_signals.py; 0: left out)",
    )
    length_weight: float = _f(
        -0.25,
        "weight of the length relative to the reference answer, tanh(log2 ratio), in the quality term (negative: "
        "the judges' taste for length taken back out; chosen with lexsim_weight)",
    )
    quality_hidden: int = _f(256, "hidden width of the quality network")
    quality_epochs: int = _f(12, "epochs of the quality fit (the best by validation loss is kept)")
    quality_lr: float = _f(1e-3, "learning rate of the quality fit")
    criteria_hidden: int = _f(512, "hidden width of the criteria head")
    criteria_layers: int = _f(1, "top transformer layers of the encoder re-tuned to read criteria (0: frozen)")
    voice_rank: int = _f(16, "rank of the voice bilinear form")
    criteria_steps: int = _f(2000, "steps of the criteria and voice fit")
    criteria_phrasings: int = _f(64, "phrasings drawn per step (property rows; a quarter as many general ones)")
    rows_per_phrasing: int = _f(4, "pairs judged under each drawn phrasing per step")
    keep_row_shares: bool = _f(False, "the WORDING_* tables join the training bank and the phrasing memory, and "
                               "property rows draw each property with its share of the bank without them "
                               "(crm_train.compositional.phrasings.row_shares): more wordings of a property widen "
                               "what its rows say, not how often they come (False: the bank without them, every "
                               "phrasing equally likely, the shipped recipe; a refit that added phrasings for the six "
                               "properties of 2025 doubled nonanswer's share of the rows and cut the length wishes' "
                               "by a sixth)")  # fmt: skip
    reader_gain: float = _f(2.0, "after the fit, the phrasing memory's readers' gain: where the readers weigh a "
                            "property less than this x what a clear difference in it needs against quality (0.85 "
                            "of the training split's pairs), their raw weight for it is lifted so "
                            "(memory.gained_memory; 0: none; chosen on development data: "
                            "training/experiments/reader_gain.py: the six properties of 2025 came out of the fit "
                            "ten times weaker than the others)")  # fmt: skip
    criteria_lr: float = _f(2e-3, "learning rate of the criteria head and the voice projection")
    criteria_layer_lr: float = _f(1e-4, "learning rate of the re-tuned encoder layer(s)")
    weight_penalty: float = _f(0.02, "L2 penalty on the property weights a criterion gives (mean over properties)")
    clear_gap: float = _f(1.2, "a property pair differs clearly when its scaled property differs by this much")
    spread_floor: float = _f(0.5, "least spread of a property (one occurrence of a rare one is then ~1.4 units)")
    silent_gap: float = _f(0.3, "a criterion is silent on a pair whose scaled property differs by less than this")
    silent_weight: float = _f(1.0, "weight of the silent rows' loss (their decision must stay the criteria-free one)")
    silent_scale: float = _f(
        1.0,
        "silent rows compare logits multiplied by this (0: 1 / the within-prompt spread of "
        "the reference-free quality, the strictest)",
    )
    stray_penalty: float = _f(
        1.0,
        "L2 penalty (mean square) on the weights a phrasing gives to properties it is not about, and on every "
        "weight of a general criterion: a direct target for what the silent rows only reach through pairs",
    )
    form_gate_weight: float = _f(
        1.0,
        "weight of the form gate's loss: a classifier on the criteria embedding that tells a sentence about a "
        "measured property (the phrasing bank, and the domain phrasings: a register is form too) from a general "
        "criterion (persona, purpose, accuracy); when serving, a criterion the "
        "gate calls general gives no property weights at all (ServingConfig.form_gate_cut; 0: no gate)",
    )
    criteria_members: int = _f(
        3,
        "criteria fits made (seeds seed, seed + 1, ...; one quality term), each with its own re-tuned layer, head, "
        "gate and voice; serving averages their readings before the cut, so a weight one fit gives by chance and "
        "the others do not falls under it (docs/experiments.md 'Criteria fits')",
    )
    weight_decay: float = _f(1e-2, "AdamW weight decay of both fits")

    def __post_init__(self) -> None:
        """Values a fit could not mean: NaN or inf anywhere, and counts below one, refused before any work."""
        for name, value in vars(self).items():
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{name}: expected a finite number, got {value}")
        for name in ("max_tokens", "quality_hidden", "quality_epochs", "criteria_hidden", "voice_rank",
                     "criteria_steps", "criteria_phrasings", "rows_per_phrasing", "criteria_members"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected at least 1, got {getattr(self, name)}")
        for name in ("quality_lr", "criteria_lr", "criteria_layer_lr", "spread_floor"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name}: expected a number above 0, got {getattr(self, name)}")
        if self.criteria_layers < 0:
            raise ValueError(f"criteria_layers: expected 0 or more, got {self.criteria_layers}")
