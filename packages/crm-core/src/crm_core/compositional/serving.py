"""How a fitted compositional CRM is served: one frozen dataclass, crm.json's `extra.serving`, one set of defaults.

These settings change no weight: they say how far a criterion may move a board (thresholds, scale, soft strength),
when quality overrules a soft wish (the gate) and what quality a non-answer loses. Each was chosen on development
data after the fit (the help of each field names the experiment), so they live apart from the fitting config
(crm_train.compositional.config), and crm-train writes `ServingConfig()` into every folder it makes. The heads
(crm_core.compositional.heads) and the scorer read this one object; an experiment tries a setting with
`dataclasses.replace(scorer.serving, ...)`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path


def _f(default: float, help: str):
    return field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class ServingConfig:
    """The shipped CRM's serving settings (space/models/crm-compositional, crm.json `serving`); a test keeps the
    defaults equal to it. `ServingConfig.off()` is every setting switched off: criteria added up as read."""

    weight_threshold: float = _f(0.25, "each criterion's property weights are soft-thresholded by this (weights a "
                                 "sentence gives properties it does not mention are small; chosen on development data "
                                 "by training/experiments/criteria_shrinkage.py)")  # fmt: skip
    voice_threshold: float = _f(30.0, "the length of each criterion's voice vector is soft-thresholded by this "
                                "(chosen with weight_threshold)")  # fmt: skip
    form_gate_cut: float = _f(0.0, "the form gate's logit below which a criterion's property weights are dropped "
                              "(a sentence the gate reads as general: who the user is, what it is for)")  # fmt: skip
    weight_scale: float = _f(1.5, "the property weights (after the threshold) are multiplied by this, so that a typed "
                             "criterion can outweigh the quality term across a whole board (chosen on development "
                             "data: training/experiments/criteria_shrinkage.py --weight-scales)")  # fmt: skip
    soft_strength: float = _f(0.8, "with a phrasing memory: a soft criterion's strongest property weight becomes this "
                              "x the readers' weight for training phrasings of that property and direction, so "
                              "wordings of one wish count the same (0: as read; chosen on development data: "
                              "benchmarks/judge_report.py --gate; 0.6 until the word lists read length wishes right, "
                              "then 0.8 parted the concise and detailed top fives: training/promote.py)")  # fmt: skip
    lift_from: float = _f(0.5, "a soft reading weaker than this is not lifted to soft_strength (a stray weight stays "
                          "weak); a caution wish at least this strong gives declining answers their non-answer "
                          "penalty back")  # fmt: skip
    lift_share: float = _f(0.6, "a soft reading whose strongest weight holds less than this share of its total weight "
                           "is not lifted to soft_strength (the reader unsure what the sentence asks for)")  # fmt: skip
    quality_gate: float = _f(0.3, "a soft criterion that would make the clearly worse of two answers win fades as "
                             "exp(-(gap / gate)^2) of their quality gap (crm_core.compositional.judging.judged_logit; "
                             "must criteria never fade; 0: criteria simply add up; chosen on AlpacaEval's training "
                             "half with development phrasings)")  # fmt: skip
    gate_length_slope: float = _f(0.3, "logits of quality per doubling of words taken out of the gap the gate reads "
                                  "(the quality term's own within-query slope was 0.31), so brevity alone is not "
                                  "'clearly worse'")  # fmt: skip
    gate_length_cap: float = _f(3.0, "at most this many doublings of words are taken out of the gap the gate reads (an "
                                "answer cut to one sentence or a one-line refusal stays clearly worse than a whole "
                                "answer; 0: no cap; benchmarks/judge_report.py --gate, benchmarks/bench_boards.py "
                                "--gate-length-cap)")  # fmt: skip
    gate_spread_reference: float = _f(0.0, "boards only: the within-query spread of the quality term (the median sd "
                                      "of quality among a query's answers) quality_gate was chosen at (AlpacaEval as "
                                      "served: 0.432); on a bench that spreads its answers more or less the gate is "
                                      "scaled by the bench's spread over this (crm_core.compositional.judging."
                                      "bench_gate; 0: as set on every bench; tried, not served: "
                                      "docs/experiments.md)")  # fmt: skip
    gate_slope_reference: float = _f(0.159, "boards only: the quality term's within-query slope per doubling of words "
                                            "gate_length_slope was chosen at (AlpacaEval as served: 0.1592); on a "
                                            "bench whose quality term charges less for brevity the slope is scaled by "
                                            "the bench's own slope over this (never up), so brevity is forgiven no "
                                            "more than the quality term penalises it there (MT-bench 0.070: 0.44 of "
                                            "the slope; 0: as set on every bench; docs/experiments.md)")  # fmt: skip
    gate_length_floor: float = _f(0.0, "boards only (usl_space.board): the quantile of each query's answer lengths "
                                  "under which the gate forgives no brevity (0: off)")  # fmt: skip
    memory_neighbours: float = _f(5.0, "the phrasing memory's rule (crm_core.compositional.memory): how many nearest "
                                  "training phrasings vote on a sentence's property (0: the memory file's own; "
                                  "chosen on development data: training/experiments/phrasing_memory_grid.py, "
                                  "training/promote.py)")  # fmt: skip
    memory_agreement: float = _f(0.7, "the share of them that must agree on one property (0: the file's own)")
    memory_similarity: float = _f(0.5, "the cosine the nearest one must reach (0: the file's own)")
    memory_direction_neighbours: float = _f(10.0, "where the readers give the voted property no direction, the "
                                            "majority of this many nearest phrasings about it gives one (0: the "
                                            "file's own, which is the vote's neighbours)")  # fmt: skip
    memory_magnitude_floor: float = _f(1.5, "no property's typical weight in the phrasing memory (what a wish read as "
                                       "it weighs before soft_strength) below this: the fit weighed some properties "
                                       "of 2025 a hundred times less than the others (0: as measured; chosen among "
                                       "0-2 on development data: training/experiments/cue_reader.py)")  # fmt: skip
    cue_reader: float = _f(2.0, "read wishes by their words too (crm_core.compositional.cues): 1, where the readers "
                           "read nothing or are unsure; 2, also where they read a sure property outside the cue's "
                           "family, or the cue's the other way; 0: off (chosen with memory_magnitude_floor; "
                           "training/promote.py)")  # fmt: skip
    framing_reader: float = _f(2.0, "a one-clause wish that frames what it names as unwanted (\"I could do without "
                               "emoji.\", cues.framed_core) and that the word lists do not read is read as a liking of "
                               "the thing (\"I like i emoji.\") and turned: 1, only the strongest property's sign, "
                               "where the sentence read as the thing itself; 2, the whole reading (0: off; chosen on "
                               "development banks: training/promote.py, docs/experiments.md)")  # fmt: skip
    liked_framing: float = _f(1.0, "a one-clause wish that asks for what it names through an idiom holding a negator "
                              "(\"I wouldn't mind emoji.\", \"Answers feel empty without tables.\", "
                              "cues.liked_core) and that the word lists do not read is read as a liking of the thing "
                              "(\"I like i emoji.\") as it stands (0: off; chosen on development banks: "
                              "training/promote.py, docs/experiments.md)")  # fmt: skip
    consensus_scale: float = _f(0.5, "on a bench without the reference panel's answers, the quality term compares each "
                                "answer with the bench's other answers to its query (a leave-one-out consensus), this "
                                "times the reference weights (0: no comparison there; "
                                "training/experiments/consensus_reference.py)")  # fmt: skip
    panel_share: float = _f(0.5, "with consensus_scale, on a bench without the reference panel's answers: each "
                            "answer is compared with the answers of the top share of the bench's models on a first, "
                            "criteria-free board (the bench's own panel, usl_space.instant.own_panel; no model "
                            "named), not with every answer, so that the weak and the junk entries do not pull the "
                            "consensus toward them (0: every answer; "
                            "training/experiments/consensus_reference.py)")  # fmt: skip
    nonanswer_penalty: float = _f(1.0, "quality taken off an answer that refuses, evades or gives the prompt back "
                                  "(crm_core.nonanswer), so no soft wish reads it as a short answer of comparable "
                                  "quality (0: none; training/experiments/nonanswer_penalty.py on speechmap's "
                                  "development prompts)")  # fmt: skip
    caution_lift: float = _f(2.0, "logits of quality a declining answer gains, beyond its non-answer penalty back, "
                             "when the criteria clearly value declining (lift_from, lift_share): the quality term's "
                             "verdict that a refusal is worse than a whole answer is the one this visitor overrode "
                             "(0: only the penalty back; the smallest lift deciding >= 0.85 of declining-or-answering "
                             "pairs for declining under a development wish for caution, on speechmap's development "
                             "prompts: training/experiments/nonanswer_penalty.py --caution-lift)")  # fmt: skip
    cut_short_doublings: float = _f(4.0, "with a non-answer penalty: an answer this many doublings of words shorter "
                                    "than the median of the bench's other answers to its query, where those run to "
                                    "128 words or more, counts as a non-answer too (0: not looked for; 3 lost 15 of "
                                    "324 twins on AlpacaEval's training half, 4 one)")  # fmt: skip

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{name}: expected a finite number, got {value!r}")

    @classmethod
    def off(cls) -> ServingConfig:
        """Every setting off: criteria weights as read, summed with quality, no gate, no penalty."""
        return cls(**{f.name: 0.0 for f in fields(cls)} | {"weight_scale": 1.0})

    @classmethod
    def from_extra(cls, extra: dict, folder: Path) -> ServingConfig:
        """crm.json's settings: `extra.serving` (every field, its default where absent), or, in a folder written
        before that key existed, the same names in `extra.config` with a missing one off (the folder was served
        without it). An error names the file and field: a NaN gate or a text weight would change every board."""
        where = folder / "crm.json"
        if "serving" in extra:
            key, base = "serving", cls()
        else:
            key, base = "config", cls.off()
        table = extra.get(key, {})
        if not isinstance(table, dict):
            raise ValueError(f"{where}: extra.{key}: expected an object, got {type(table).__name__}")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(table) - names) if key == "serving" else []
        if unknown:
            raise ValueError(f"{where}: extra.serving.{unknown[0]}: not a serving setting (expected one of "
                             f"{', '.join(sorted(names))})")  # fmt: skip
        values = asdict(base) | {k: v for k, v in table.items() if k in names}
        try:
            return cls(**values)
        except ValueError as error:
            raise ValueError(f"{where}: extra.{key}.{error}") from None

    def to_json(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items()}
