"""Where the compositional CRM's training and evaluation texts come from, with the data rules enforced here.

- Property and voice groups: prompts with several real answers (MT-bench's 32 models and Arena-Hard's, the
  human-preference sets' response pairs, DSP's five answers per query, and the 2025 benches' development prompts:
  speechmap's refusals and other-language answers, creative's stories), split by prompt.
- Quality pairs: human votes (Auto-J, HH-RLHF, WebGPT; their train split) and, under the allowance of the
  "general quality" issue, AlpacaEval's GPT-4-turbo annotations, only for models NOT in default_models.txt and
  only for instructions in the training half (`alpaca_train_half`). PandaLM is never training data.
- No AlpacaEval instruction reaches a training row from any other source.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from crm_core.data import load_pairs, pair_records
from crm_core.data.importers import read_instructions, read_models_file

from crm_train.build_data import answers_by_prompt, split_of

ANNOTATIONS = "usl/alpaca_eval/judge_annotations_weighted_gpt4_turbo.jsonl.gz"
REFERENCE_MODEL = "gpt4_1106_preview"  # AlpacaEval 2.0's baseline: the reference answer the quality fit reads
# the reference panel a served CRM compares answers with (each with the others' answers, never its own): strong
# models of four labs, so that no model on a board is the reference (crm.json `reference_models`)
REFERENCE_PANEL = ("gpt4_1106_preview", "gpt-4-turbo-2024-04-09", "gpt-4o-2024-05-13", "claude-3-opus-20240229",
                   "claude-3-5-sonnet-20240620", "Meta-Llama-3.1-405B-Instruct-Turbo", "Qwen2-72B-Instruct",
                   "yi-large-preview")  # fmt: skip
HUMAN_SOURCES = ("auto_j", "hh_rlhf", "webgpt")
SPLIT_SEED, SPLIT_FRACTIONS = 0, (0.1, 0.1)  # the same prompt split as crm_train.build_data's builds


def alpaca_train_half(instruction: str) -> bool:
    """The issue's rule: an AlpacaEval instruction is in the training half when its SHA-256 is even."""
    return int(hashlib.sha256(instruction.encode()).hexdigest(), 16) % 2 == 0


def annotation_validation(prompt: str) -> bool:
    """Whether a GPT-4-turbo verdict's prompt is among the tenth of prompts the quality fit validates on (and never
    trains on), as every quality fit and experiment splits them."""
    return int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % 10 == 0


def development_fold(instruction: str, folds: int) -> int:
    """Which of `folds` development folds a training-half AlpacaEval instruction is in (a hash apart from the
    half's own, so every fold is a random part of the half): a quality term fitted without one fold's verdicts
    judges that fold as it judges held-out prompts (training/experiments/quality_folds.py)."""
    return int(hashlib.sha256(f"fold:{instruction}".encode()).hexdigest(), 16) % folds


def split(prompt: str) -> str:
    """train / validation / test of a prompt, as every build of this repository splits it."""
    return split_of(prompt, SPLIT_SEED, SPLIT_FRACTIONS)


@dataclass
class QualityPair:
    """Two answers to one prompt and P(A is better), from a human vote or the GPT-4-turbo judge."""

    source: str
    prompt: str
    a: str
    b: str
    p_a: float
    reference: str | None = None  # the reference model's answer to the prompt, where there is one
    meta: dict = field(default_factory=dict)


def alpaca_instructions(shared: Path) -> dict[int, str]:
    frame = read_instructions(shared / "usl/alpaca_eval/instructions.jsonl")
    return dict(zip(frame["idx"].to_list(), frame["instruction"].to_list(), strict=True))


def read_outputs(shared: Path, models: set[str] | None = None) -> dict[tuple[int, str], str]:
    """AlpacaEval answers by (idx, model), for `models` only when given."""
    out = {}
    with gzip.open(shared / "usl/alpaca_eval/model_outputs.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if models is None or row["model"] in models:
                out[(int(row["idx"]), row["model"])] = row["output"]
    return out


def annotation_pairs(shared: Path) -> list[QualityPair]:
    """GPT-4-turbo verdicts usable for training: the model is not a default model and the instruction is in the
    training half. A is the model's answer, B the baseline's; p_a = preference - 1 (logprob-weighted)."""
    defaults = set(read_models_file(shared / "usl/alpaca_eval/default_models.txt"))
    instructions = alpaca_instructions(shared)
    rows = []
    with gzip.open(shared / ANNOTATIONS, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["model"] in defaults or row["generator_2"] in defaults:
                continue
            if not alpaca_train_half(instructions[int(row["idx"])]):
                continue
            rows.append(row)
    outputs = read_outputs(shared, {r["model"] for r in rows} | {REFERENCE_MODEL})
    pairs = []
    for row in rows:
        idx = int(row["idx"])
        answer, base = outputs.get((idx, row["model"])), outputs.get((idx, REFERENCE_MODEL))
        if not answer or not base or row["preference"] is None:
            continue
        pairs.append(QualityPair("gpt4_turbo", instructions[idx], answer, base, float(row["preference"]) - 1.0,
                                 base, {"model": row["model"], "idx": idx}))  # fmt: skip
    return pairs


def last_user_turn(record: dict) -> str:
    turns = [m["content"] for m in record["model_a"][:-1] if m["role"] == "user"]
    return turns[-1] if turns else record["prompt"]


def human_pairs(shared: Path, which: str = "train", sources=HUMAN_SOURCES) -> list[QualityPair]:
    """Human votes from `sources` in split `which` ('train', 'validation', 'test'); PandaLM (evaluation only) with
    which='pandalm'. Prompts that are AlpacaEval instructions are dropped outside PandaLM. Ties get p_a = 0.5."""
    alpaca = {t.strip() for t in alpaca_instructions(shared).values()}
    names = ("pandalm",) if which == "pandalm" else sources
    out = []
    for name in names:
        frame, _ = load_pairs(shared / f"preferences/{name}/pairs.jsonl", on_error="collect")
        for record in pair_records(frame):
            prompt = record["prompt"]
            if name != "pandalm" and (prompt.strip() in alpaca or split(prompt) != which):
                continue
            p_a = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}[record["preference"]]
            out.append(QualityPair(name, last_user_turn(record), record["model_a"][-1]["content"],
                                   record["model_b"][-1]["content"], p_a, None, {"id": record["id"]}))  # fmt: skip
    return out


def dsp_groups(shared: Path) -> list[tuple[str, dict[str, str]]]:
    """DSP: (query, {domain: answer}) with the four domains and 'normal' (the plain Alpaca answer)."""
    data = json.loads((shared / "preferences/dsp/domain_specific_preference.dev.json").read_text(encoding="utf-8"))
    return [(row["query"], dict(row["responses"])) for row in data]


DEVELOPMENT_BENCHES = ("usl/speechmap", "usl/creative")


def development_prompt(source_id: str) -> bool:
    """A 2025 bench's prompts that choices and training may use: half of them, by a hash of the prompt's source id;
    the other half is kept for the checks (benchmarks/bench_boards.py --speechmap-half held-out)."""
    return hashlib.sha256(source_id.encode()).digest()[0] % 2 == 0


def bench_development_groups(shared: Path) -> list[tuple[str, dict[str, str]]]:
    """(prompt, {model: answer}) over the development prompts of DEVELOPMENT_BENCHES (none where absent): answers
    that refuse, evade, switch language or tell stories in dialogue, which the older sets barely hold."""
    out = []
    for name in DEVELOPMENT_BENCHES:
        folder = shared / name
        if not (folder / "model_outputs.jsonl.gz").is_file():
            continue
        with open(folder / "instructions.jsonl", encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle if line.strip()]
        kept = {r["idx"]: r["instruction"] for r in rows if development_prompt(str(r["source_id"]))}
        answers: dict[int, dict[str, str]] = {}
        with gzip.open(folder / "model_outputs.jsonl.gz", "rt", encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                if row["idx"] in kept:
                    answers.setdefault(row["idx"], {})[f"{name}:{row['model']}"] = row["output"]
        out += [(kept[idx], a) for idx, a in sorted(answers.items())]
    return out


def answer_groups(shared: Path) -> list[tuple[str, dict[str, str]]]:
    """Prompts with several real answers, for property pairs: MT-bench + Arena-Hard answers, the human sets'
    response pairs (grouped by prompt), DSP and the 2025 benches' development prompts. No AlpacaEval instruction."""
    alpaca = {t.strip() for t in alpaca_instructions(shared).values()}
    groups: dict[str, dict[str, str]] = {p: dict(a) for p, a in answers_by_prompt(shared).items()}
    for pair in human_pairs(shared, "train") + human_pairs(shared, "validation") + human_pairs(shared, "test"):
        answers = groups.setdefault(pair.prompt, {})
        answers.setdefault(f"{pair.source}:{len(answers)}", pair.a)
        answers.setdefault(f"{pair.source}:{len(answers)}", pair.b)
    for query, answers in dsp_groups(shared):
        groups.setdefault(query, {}).update({f"dsp:{d}": t for d, t in answers.items()})
    for query, answers in bench_development_groups(shared):
        groups.setdefault(query, {}).update(answers)
    return sorted((p, {m: t for m, t in a.items() if t.strip()}) for p, a in groups.items()
                  if p.strip() not in alpaca and len(a) >= 2)  # fmt: skip
