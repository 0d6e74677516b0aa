"""Build a compositional CRM folder's phrasing memory (crm_core.compositional.memory): every training phrasing's
sentence embedding with its property and direction, and the general criteria as "none".

Only training phrasings go in (never the development or validation banks). The weight an override gives is the
median weight the folder's own reader gives training phrasings of that property and direction, as served. The
file records the rule it was built with (10 neighbours, 70% agreeing, nearest cosine 0.6: the first choice); the rule
a folder is served with is crm.json's serving settings `memory_*` (crm_core.compositional.serving; 0: the file's),
chosen on development data again when the six properties of 2025 joined the memory (docs/experiments.md).

    uv run python -m crm_train.compositional.memory --model space/models/crm-compositional --extend

(the shipped memory was grown so, when the bank's phrasings asking for length in units of text were added after its
readers were fitted: it keeps the vectors and weights of the readers' own build.)
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
from crm_core.compositional.memory import GENERAL, MEMORY_FILE, PhrasingMemory, label_of, quantize, text_key
from crm_core.compositional.scorer import CompositionalScorer
from crm_core.encoder import DIM
from crm_core.properties import NAMES
from tqdm.auto import tqdm

from crm_train.compositional import phrasings as P
from crm_train.compositional.features import Groups


def memory_phrasings(shared: Path, wordings: bool = False) -> tuple[list[str], np.ndarray]:
    """The training phrasings (the wide bank, with the WORDING_* tables where the readers were fitted with them; no
    typo'd copies) and general criteria, with their labels."""
    bank = list(dict.fromkeys(P.training_bank(wide=True, typos_per_phrasing=0.0, wordings=wordings)))
    general = list(dict.fromkeys(P.silent_criteria(extra=True) + P.rubric_criteria(shared)))
    labels = [label_of(NAMES.index(p.prop), p.sign) for p in bank] + [GENERAL] * len(general)
    return [p.text for p in bank] + general, np.array(labels, np.int16)


def reader_magnitudes(scorer: CompositionalScorer, texts: list[str], labels: np.ndarray, per_label: int,
                      seed: int = 0, progress: bool = True) -> np.ndarray:  # fmt: skip
    """(properties, 2): the median |weight| the reader gives its property over up to `per_label` drawn phrasings of
    each label that it reads the right way (the median over all labels where it reads none so); 0 reads them all.
    40 drawn (the shipped memory's setting) is an estimate that moves with the draw: over 200 draws the shipped
    readers' "more words" median spans 2.78-3.34 (5th-95th percentile; every phrasing: 3.09), and the development
    boards with it (docs/experiments.md), so a memory grown for the same readers keeps its weights (`extend`)."""
    return reader_readings(scorer, texts, labels, per_label, seed, progress)[0]


def reader_readings(scorer: CompositionalScorer, texts: list[str], labels: np.ndarray, per_label: int,
                    seed: int = 0, progress: bool = True) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """(reader_magnitudes, the share of the drawn phrasings of each label that the reader weighs the right way;
    NaN for a label with no phrasing)."""
    rng = np.random.default_rng(seed)
    chosen = {int(label): rng.permutation(np.flatnonzero(labels == label))[: per_label or None]
              for label in np.unique(labels) if label != GENERAL}  # fmt: skip
    found: dict[int, list[float]] = {label: [] for label in chosen}
    rows = [(label, int(i)) for label, idx in chosen.items() for i in idx]
    for label, i in tqdm(rows, desc="reader weights", disable=not progress):
        prop, sign = label // 2, 1 if label % 2 else -1
        weight = float(scorer.criteria_side([texts[i]]).weights[prop])
        if weight * sign > 0:
            found[label].append(abs(weight))
    medians = [float(np.median(v)) for v in found.values() if v]
    fallback = float(np.median(medians)) if medians else 1.0
    out = np.full((len(NAMES), 2), fallback, np.float32)
    share = np.full((len(NAMES), 2), np.nan, np.float32)
    for label, values in found.items():
        share[label // 2, label % 2] = len(values) / len(chosen[label])
        if values:
            out[label // 2, label % 2] = float(np.median(values))
    return out, share


def needed_weights(scorer: CompositionalScorer, groups: Groups, decides: float = 0.85, gap: float = 1.5,
                   least_pairs: int = 20) -> np.ndarray:  # fmt: skip
    """(properties, 2), [less, more]: per property and direction, the least weight under which the side asked for
    wins `decides` of the answer pairs that differ clearly in the property (scaled values `gap` or more apart, as
    the report card's pairs) against the scorer's quality term (non-answer penalty included); NaN where fewer than
    `least_pairs` pairs differ so. A pair (more, less) is decided for more when quality gap + w x gap in z > 0, so
    the need is a quantile of -quality gap / z gap (of +quality gap / z gap for less)."""
    side = scorer.response_side([groups.prompts[g] for g in groups.group], groups.texts)
    z = groups.centred(scorer.heads.spread)
    pairs = []
    for rows in groups.members():
        a, b = np.triu_indices(len(rows), 1)
        pairs.append(np.stack([rows[a], rows[b]], axis=1))
    every = np.concatenate(pairs) if pairs else np.zeros((0, 2), np.int64)
    out = np.full((len(scorer.heads.spread), 2), np.nan, np.float32)
    for k in range(len(scorer.heads.spread)):
        diff = z[every[:, 0], k] - z[every[:, 1], k]
        clear = np.abs(diff) >= gap
        if clear.sum() < least_pairs:
            continue
        i, j = every[clear, 0], every[clear, 1]
        more, less = np.where(diff[clear] > 0, i, j), np.where(diff[clear] > 0, j, i)
        quality_gap = (side.quality[more] - side.quality[less]) / np.abs(diff[clear])
        out[k, 1] = max(0.0, float(np.quantile(-quality_gap, decides, method="higher")))
        out[k, 0] = max(0.0, float(np.quantile(quality_gap, decides, method="higher")))
    return out


def reader_gains(magnitude: np.ndarray, needed: np.ndarray, factor: float, cap: float = 20.0,
                 share: np.ndarray | None = None, least_share: float = 0.5) -> np.ndarray:  # fmt: skip
    """(properties, 2): the factor on the readers' weights per property and direction that lifts their weight for
    training phrasings (`magnitude`) to at least `factor` x the weight a clear difference needs (`needed`), at most
    `cap`; 1 where they reach it already or nothing is known. The readers learned each property's weight only as
    large as the fit's pairs needed, and where a property's differences are wide (a story with a third of its words
    in dialogue is 7 spreads from one without) that came out ten times smaller than the others' (the six
    properties of 2025: docs/experiments.md), so a wish read right still could not move a board."""
    want = factor * np.nan_to_num(needed, nan=0.0)
    gain = np.clip(want / np.maximum(magnitude, 1e-6), 1.0, cap)
    if share is not None:  # where the readers weigh under `least_share` of a label's phrasings the right way, what
        gain[~(share >= least_share)] = 1.0  # a gain lifts is mostly their noise (NaN: no phrasing, nothing known)
    return gain.astype(np.float32)


def gained_memory(scorer: CompositionalScorer, texts: list[str], labels: np.ndarray, groups: Groups, factor: float,
                  least_share: float = 0.5, decides: float = 0.85, per_label: int = 40, progress: bool = True,
                  needed: np.ndarray | None = None) -> PhrasingMemory:  # fmt: skip
    """The scorer's phrasing memory with the readers' gain (PhrasingMemory.gain, reader_gains): the weight a clear
    difference in each property needs, measured on `groups` (the training split's answers), lifted to `factor` x
    it where the readers fall short, and the memory's magnitude measured again with the gain where it lifts (as
    stored elsewhere). No gain where the readers weigh under `least_share` of a label's training phrasings the
    right way (there a gain lifts their noise: 'less dialogue' reads so for 0.2 of them), nor for the properties
    counted at full weight (scorer.FULL_WEIGHT: non-answers, the answer's language), which the gate never fades
    and a caution wish lifts on its own terms (ServingConfig.caution_lift). Chosen on development data:
    training/experiments/reader_gain.py (docs/experiments.md). `needed`: needed_weights(scorer, groups, decides)
    when the caller has it already (an experiment trying several factors)."""
    from crm_core.compositional.scorer import FULL_WEIGHT

    memory = scorer.heads.memory
    if memory is None:
        raise ValueError(f"{scorer.folder}: a gain is set on a phrasing memory; build one first")
    k = len(scorer.heads.spread)
    needed = needed_weights(scorer, groups, decides) if needed is None else needed
    scorer.heads.memory, scorer.heads.gain = None, None
    try:
        _, share = reader_readings(scorer, texts, labels, per_label, progress=progress)
        gain = np.ones((len(memory.magnitude), 2), np.float32)
        gain[:k] = reader_gains(memory.magnitude[:k], needed, factor, share=share[:k], least_share=least_share)
        gain[list(FULL_WEIGHT)] = 1.0
        magnitude = memory.magnitude.copy()
        lifted = gain > 1
        if lifted.any():
            scorer.heads.gain = gain[:k]
            magnitude[lifted] = reader_readings(scorer, texts, labels, per_label, progress=progress)[0][lifted]
    finally:
        scorer.heads.memory, scorer.heads.gain = memory, memory.gain
    return replace(memory, magnitude=magnitude, gain=gain)


def training_groups(shared: Path, scorer: CompositionalScorer, embeddings: str | Path) -> Groups:
    """The training split's answer groups (crm_train.compositional.sources.answer_groups), embedded through the
    store at `embeddings` with the scorer's encoder, which the scorer then reads too."""
    from crm_core.encoder import EmbeddingStore

    from crm_train.compositional import sources as S
    from crm_train.compositional.features import Features, make_groups

    scorer.store = EmbeddingStore(embeddings, scorer.encoder)
    chosen = [g for g in S.answer_groups(shared) if S.split(g[0]) == "train"]
    return make_groups(chosen, Features(scorer.store), progress=True)


def build_memory(folder: Path, texts: list[str], labels: np.ndarray, neighbours: int = 10, agreement: float = 0.7,
                 similarity: float = 0.6, per_label: int = 40, backend: str = "auto", progress: bool = True,
                 extend: bool = False) -> PhrasingMemory:  # fmt: skip
    """Encode the phrasings (memory_phrasings) with the folder's response encoder (the backend it is served with)
    and save the memory in the folder; the reader's weights are measured without any memory. `extend`: grow the
    memory the folder has for the same readers, keeping its vectors (by text key, in order) and its weights and
    encoding only the phrasings it lacks, so that every sentence reads as before unless a new phrasing is among its
    nearest (a text's vector depends a little on the batch it is encoded in, and a vote near a tie with it), and its
    readers' gain."""
    scorer = CompositionalScorer(folder, backend=backend)
    previous = scorer.heads.memory
    scorer.heads.memory = None
    keys = np.array([text_key(t) for t in texts], np.int64)
    if extend and (previous is None or previous.keys is None):
        raise ValueError(f"{folder}: extend needs a {MEMORY_FILE} with text keys in the folder to grow")
    grown = previous if extend else None
    reused = _held_rows(grown, keys) if grown is not None else [None] * len(texts)
    vectors = np.zeros((len(texts), DIM), np.int8)
    new = [i for i, row in enumerate(reused) if row is None]
    if new:
        vectors[new] = quantize(scorer.encoder.encode([texts[i] for i in new], batch_size=64, progress=progress))
    kept = [(i, row) for i, row in enumerate(reused) if row is not None]
    if grown is not None and kept:
        vectors[[i for i, _ in kept]] = grown.vectors[[row for _, row in kept]]
    magnitude = grown.magnitude if grown is not None else reader_magnitudes(scorer, texts, labels, per_label,
                                                                            progress=progress)  # fmt: skip
    gain = grown.gain if grown is not None else None  # the same readers: the same gain
    memory = PhrasingMemory(vectors, labels, magnitude, neighbours, agreement, similarity, keys, gain)
    memory.save(folder)
    return memory


def _held_rows(previous: PhrasingMemory, keys: np.ndarray) -> list[int | None]:
    """For each key, a row of `previous` with that key (the rows of one key taken in order), or None."""
    rows: dict[int, list[int]] = {}
    held = previous.keys.tolist() if previous.keys is not None else []
    for row, key in enumerate(held):
        rows.setdefault(key, []).append(row)
    return [rows[k].pop(0) if rows.get(k) else None for k in keys.tolist()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=f"Write {MEMORY_FILE} into a compositional CRM folder: a second reading of criteria by the "
        "training phrasings they sound most like (crm_core.compositional.memory)."
    )
    parser.add_argument("--model", required=True, type=Path, metavar="DIR", help="the compositional CRM folder")
    parser.add_argument("--shared", type=Path, default=Path("../shared/data"),
                        help="the shared data folder (its BiGGen-Bench rubrics join the general criteria)")  # fmt: skip
    parser.add_argument("--neighbours", type=int, default=10, help="how many nearest phrasings vote")
    parser.add_argument("--agreement", type=float, default=0.7,
                        help="the share of the neighbours that must agree on one property")  # fmt: skip
    parser.add_argument("--similarity", type=float, default=0.6, help="the cosine the nearest phrasing must reach")
    parser.add_argument("--per-label", type=int, default=40,
                        help="phrasings drawn per property and direction to set the weight an override gives (0: "
                        "every one; about 6 minutes on 2 cores)")  # fmt: skip
    parser.add_argument("--extend", action="store_true",
                        help="grow the memory the folder has (same readers, a grown bank): keep its vectors and "
                        "override weights, encode only the phrasings it lacks")  # fmt: skip
    parser.add_argument("--wordings", action="store_true",
                        help="the training bank's WORDING_* tables join the memory too (more wordings of the "
                        "properties of 2025; with --extend the readers' weights stay as the fit left "
                        "them)")  # fmt: skip
    parser.add_argument("--backend", choices=("auto", "torch", "onnx"), default="auto",
                        help="encode with the folder's ONNX export (auto: when it has one) or PyTorch")  # fmt: skip
    parser.add_argument("--gain", type=float, default=0.0, metavar="FACTOR",
                        help="instead of building: set the readers' gain on the memory the folder has, lifting "
                        "each property's weight to FACTOR x what a clear difference needs where the readers fall "
                        "short (gained_memory; the shipped CRM: 2; needs --embeddings)")  # fmt: skip
    parser.add_argument("--least-share", type=float, default=0.5,
                        help="with --gain: no gain for a label whose training phrasings the readers weigh the "
                        "right way less often than this")  # fmt: skip
    parser.add_argument("--embeddings", type=Path, default=Path("data/embeddings"),
                        help="with --gain: the embedding store of the training answers")  # fmt: skip
    args = parser.parse_args(argv)
    if not (args.model / "crm.json").is_file():
        parser.error(f"--model {args.model}: not a CRM folder (no crm.json)")
    if not 0 < args.agreement <= 1 or args.neighbours < 1:
        parser.error("--agreement must be in (0, 1] and --neighbours at least 1")
    texts, labels = memory_phrasings(args.shared, wordings=args.wordings)
    if args.gain:
        scorer = CompositionalScorer(args.model, backend=args.backend)
        if scorer.heads.memory is None:
            parser.error(f"--model {args.model}: no {MEMORY_FILE} to set a gain on; build it first")
        groups = training_groups(args.shared, scorer, args.embeddings)
        memory = gained_memory(scorer, texts, labels, groups, args.gain, args.least_share, per_label=args.per_label)
        memory.save(args.model)
        assert memory.gain is not None
        lifted = {f"{NAMES[k]} {'more' if d else 'less'}": round(float(memory.gain[k, d]), 2)
                  for k, d in zip(*np.nonzero(memory.gain > 1), strict=True)}  # fmt: skip
        print(f"wrote {args.model / MEMORY_FILE}: the readers' gain {lifted}")
        return 0
    memory = build_memory(args.model, texts, labels, args.neighbours, args.agreement, args.similarity,
                          args.per_label, args.backend, extend=args.extend)  # fmt: skip
    general = int((memory.labels == GENERAL).sum())
    print(f"wrote {args.model / MEMORY_FILE}: {len(memory.labels) - general} phrasings, {general} general criteria")
    return 0


if __name__ == "__main__":
    sys.exit(main())
