"""The compositional CRM's report card, on held-out data and validation phrasings only.

- property pairs: held-out prompts (validation + test splits), pairs that differ clearly in one property, judged
  under a validation phrasing asking for more and one asking for less: both must go the way the property says;
- combined: the same pairs with one or two more validation criteria about properties the pair does not differ in;
- silent: criteria about other properties, or general criteria: the decision must equal the no-criteria one;
- DSP: held-out groups, the flip (each domain's answer wins under its own criterion, both ways);
- human sets (test splits, PandaLM): accuracy of the criteria-free decision, longer-wins, standard errors;
- general leaderboard on AlpacaEval's evaluation half: Kendall tau with the published length-controlled win rates,
  per-verdict agreement with GPT-4-turbo for the default models it judged; length alone beside it.

    uv run python -m crm_train.compositional.evaluate --model runs/crm-compositional/best --shared ../shared/data
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from crm_core.agreement import kendall_tau
from crm_core.compositional.heads import CompositionalHeads, CriteriaSide, ResponseSide
from crm_core.compositional.scorer import CompositionalScorer
from crm_core.encoder import EmbeddingStore
from crm_core.properties import NAMES

from crm_train.compositional import phrasings as P
from crm_train.compositional import sources as S
from crm_train.compositional.criteria_fit import DSP_DOMAINS, DSP_VALIDATION
from crm_train.compositional.features import Features, Groups, make_groups

LC_LEADERBOARD = "usl/alpaca_eval/leaderboards/data_AlpacaEval_2__weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"


class Judge:
    """The shipped scorer (crm_core.compositional.scorer.CompositionalScorer) reading response vectors from the
    embedding store, plus memoised features for answer groups."""

    def __init__(self, folder: Path, embeddings: str, backend: str = "torch"):
        self.scorer = CompositionalScorer(folder, backend=backend)
        self.scorer.store = EmbeddingStore(embeddings, self.scorer.encoder)
        if self.scorer.quality_encoder is not None:  # heads with a tuned quality encoder: its vectors stored too
            self.scorer.quality_store = EmbeddingStore(embeddings, self.scorer.quality_encoder)
        self.features = Features(self.scorer.store)

    @property
    def heads(self) -> CompositionalHeads:
        return self.scorer.heads

    @heads.setter
    def heads(self, heads: CompositionalHeads) -> None:  # experiments/quality_variants.py swaps the quality term
        self.scorer.heads = heads

    def side(self, prompts: list[str], texts: list[str], panels: list[list[str]] | None = None) -> ResponseSide:
        return self.scorer.response_side(prompts, texts, panels)

    def criteria(self, criteria: Sequence[str], dislikes: Sequence[str] = ()) -> CriteriaSide:
        return self.scorer.criteria_side(criteria, dislikes)


def _rate(hits: list[bool]) -> dict:
    n = len(hits)
    p = float(np.mean(hits)) if n else float("nan")
    return {"n": n, "accuracy": round(p, 4), "se": round(math.sqrt(p * (1 - p) / n), 4) if n else None}


def property_report(judge: Judge, groups: Groups, gap: float, silent_gap: float, seed: int = 0,
                    per_property: int = 300, bank: list[P.Phrasing] | None = None,
                    general: list[str] | None = None) -> dict:  # fmt: skip
    """Property pairs, combined and silent criteria (the module's docstring) under `bank` and `general` (default:
    the validation bank and its general criteria; an experiment passes development ones)."""
    rng = np.random.default_rng(seed)
    side = judge.side([groups.prompts[g] for g in groups.group], groups.texts)
    z = groups.centred(judge.heads.spread)
    base = side.quality
    bank = P.validation_bank() if bank is None else bank
    by_prop: dict[str, dict[int, list[str]]] = {}
    for p in bank:
        by_prop.setdefault(p.prop, {}).setdefault(p.sign, []).append(p.text)
    crit_cache: dict[tuple, CriteriaSide] = {}

    def crit(texts: tuple[str, ...]) -> CriteriaSide:
        if texts not in crit_cache:
            crit_cache[texts] = judge.criteria(list(texts))
        return crit_cache[texts]

    def decide(c: CriteriaSide, i: int, j: int) -> bool:
        s = base[[i, j]] + z[[i, j]] @ c.weights + side.voice[[i, j]] @ c.voice
        return bool(s[0] > s[1])

    every: list[tuple[int, int]] = []  # every pair of answers to one prompt
    for rows in groups.members():
        a, b = np.triu_indices(len(rows), 1)
        every += [(int(i), int(j)) for i, j in zip(rows[a], rows[b], strict=True)]
    allpairs = np.array(every)
    per_prop, combined, silent = {}, [], []
    general = P.VALIDATION_GENERAL if general is None else general
    for prop in by_prop:
        k = NAMES.index(prop)
        diff = z[allpairs[:, 0], k] - z[allpairs[:, 1], k]
        clear = allpairs[np.abs(diff) >= gap]
        if len(clear) > per_property:
            clear = clear[rng.choice(len(clear), per_property, replace=False)]
        results: dict[int, list[bool]] = {+1: [], -1: []}
        for i, j in clear:
            more, less = (i, j) if z[i, k] > z[j, k] else (j, i)
            for sign in (+1, -1):
                text = by_prop[prop][sign][rng.integers(len(by_prop[prop][sign]))]
                winner = more if sign > 0 else less
                results[sign].append(decide(crit((text,)), winner, more + less - winner))
            # combined: add 1-2 criteria about properties this pair does not differ in
            quiet = [p for p in by_prop if p != prop and abs(z[i, NAMES.index(p)] - z[j, NAMES.index(p)]) < silent_gap]
            if quiet:
                sign = int(rng.choice([1, -1]))
                others = [by_prop[q][s][rng.integers(len(by_prop[q][s]))]
                          for q in rng.choice(quiet, min(len(quiet), int(rng.integers(1, 3))), replace=False)
                          for s in [int(rng.choice([1, -1]))]]  # fmt: skip
                texts = [by_prop[prop][sign][rng.integers(len(by_prop[prop][sign]))], *others]
                rng.shuffle(texts)
                winner = more if sign > 0 else less
                combined.append(decide(crit(tuple(texts)), winner, more + less - winner))
            # silent: a criterion about a property the pair does not differ in, or a general one
            if quiet and rng.random() < 0.5:
                q = str(rng.choice(quiet))
                text = by_prop[q][int(rng.choice([1, -1]))][0]
            else:
                text = general[rng.integers(len(general))]
            silent.append(decide(crit((text,)), i, j) == decide(crit(()), i, j))
        per_prop[prop] = {"pairs": len(clear), "more": _rate(results[+1])["accuracy"],
                          "less": _rate(results[-1])["accuracy"]}  # fmt: skip
        per_prop[prop]["both"] = min(per_prop[prop]["more"], per_prop[prop]["less"])
    return {"properties": per_prop, "combined": _rate(combined), "silent_agreement": _rate(silent),
            "worst_property": min(per_prop.items(), key=lambda kv: kv[1]["both"])[0]}  # fmt: skip


def dsp_report(judge: Judge, groups: Groups, phrasings: dict[str, list[str]] | None = None) -> dict:
    """The flip on held-out DSP groups under each domain's phrasings (default: the validation ones), all at once."""
    side = judge.side([groups.prompts[g] for g in groups.group], groups.texts)
    z = groups.centred(judge.heads.spread)
    phrasings = DSP_VALIDATION if phrasings is None else phrasings
    crit = {d: judge.criteria(phrasings[d]) for d in DSP_DOMAINS}
    flips, direction = [], []
    for rows in groups.members():
        dom = {groups.names[r].removeprefix("dsp:"): r for r in rows if groups.names[r].startswith("dsp:")}
        score = {d: {x: side.quality[r] + z[r] @ crit[d].weights + side.voice[r] @ crit[d].voice
                     for x, r in dom.items()} for d in DSP_DOMAINS if d in dom}  # fmt: skip
        for a_i, a in enumerate(DSP_DOMAINS):
            for b in DSP_DOMAINS[a_i + 1 :]:
                if a in score and b in score:
                    right_a, right_b = score[a][a] > score[a][b], score[b][b] > score[b][a]
                    flips.append(right_a and right_b)
                    direction += [right_a, right_b]
    return {"groups": len(groups.prompts), "flip": _rate(flips), "direction_accuracy": _rate(direction)}


def human_report(judge: Judge, shared: Path) -> dict:
    out = {}
    for name in (*S.HUMAN_SOURCES, "pandalm"):
        pairs = S.human_pairs(shared, "pandalm" if name == "pandalm" else "test", (name,))
        pairs = [p for p in pairs if p.p_a != 0.5]
        qa = judge.side([p.prompt for p in pairs], [p.a for p in pairs]).quality
        qb = judge.side([p.prompt for p in pairs], [p.b for p in pairs]).quality
        truth = np.array([p.p_a > 0.5 for p in pairs])
        longer = np.array([len(p.a.split()) > len(p.b.split()) for p in pairs])
        out[name] = {"crm": _rate(list((qa > qb) == truth)), "longer_wins": _rate(list(longer == truth))}
        out[name]["margin"] = round(out[name]["crm"]["accuracy"] - out[name]["longer_wins"]["accuracy"], 4)
    return out


def published_lc(shared: Path, column: str = "length_controlled_winrate") -> dict[str, float]:
    """AlpacaEval 2.0's published leaderboard: model -> length-controlled win rate (or another column)."""
    with open(shared / LC_LEADERBOARD, encoding="utf-8") as handle:
        return {row[""]: float(row[column]) for row in csv.DictReader(handle)}


def leaderboard_report(judge: Judge, shared: Path, half: str = "evaluation") -> dict:
    """General leaderboard of the default models on one half of AlpacaEval, against AlpacaEval 2.0's published
    length-controlled win rates and GPT-4-turbo's verdicts. The win rate is weighted (mean P(preferred to the
    baseline)), as the engine computes it for this kind; the discrete one (share of wins) is beside it."""
    from crm_core.data.importers import read_models_file

    models = read_models_file(shared / "usl/alpaca_eval/default_models.txt")
    instructions = S.alpaca_instructions(shared)
    ids = [i for i, t in instructions.items() if S.alpaca_train_half(t) == (half == "training")]
    panel = judge.scorer.reference_models
    outputs = S.read_outputs(shared, set(models) | set(panel))
    base = S.REFERENCE_MODEL
    keys = [(i, m) for i in ids for m in models if outputs.get((i, m)) and outputs.get((i, base))]
    side = judge.side([instructions[i] for i, _ in keys], [outputs[k] for k in keys],
                      [[outputs[(i, p)] for p in panel if (i, p) in outputs] for i, _ in keys])  # fmt: skip
    score = dict(zip(keys, side.quality, strict=True))
    words = {k: len(outputs[k].split()) for k in keys}
    win, length_win, mean_pref = {}, {}, {}
    for m in models:
        if m == base:
            continue
        mine = [i for i in ids if (i, m) in score and (i, base) in score]
        win[m] = float(np.mean([score[(i, m)] > score[(i, base)] for i in mine]))
        mean_pref[m] = float(np.mean([1 / (1 + math.exp(score[(i, base)] - score[(i, m)])) for i in mine]))
        length_win[m] = float(np.mean([words[(i, m)] > words[(i, base)] for i in mine]))
    lc, raw = published_lc(shared), published_lc(shared, "win_rate")
    ranked = [m for m in win if m in lc]
    truth = np.array([lc[m] for m in ranked])
    verdicts, reference_wins, judged = [], [], set()
    with gzip.open(shared / S.ANNOTATIONS, "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            key = (int(row["idx"]), row["model"])
            if row["model"] in win and key in score and row["preference"] is not None and row["preference"] != 1.5:
                verdicts.append((score[key] > score[(key[0], base)]) == (row["preference"] > 1.5))
                reference_wins.append(row["preference"] < 1.5)
                judged.add(row["model"])
    model_won = [v for v, r in zip(verdicts, reference_wins, strict=True) if not r]
    rng = np.random.default_rng(0)
    random_taus = [kendall_tau(rng.permutation(truth), truth) for _ in range(200)]
    return {"half": half, "queries": len(ids), "models": len(ranked),
            "tau_vs_lc": round(kendall_tau(np.array([mean_pref[m] for m in ranked]), truth), 4),
            "tau_discrete_vs_lc": round(kendall_tau(np.array([win[m] for m in ranked]), truth), 4),
            "tau_vs_raw_win_rate": round(kendall_tau(np.array([mean_pref[m] for m in ranked]),
                                                     np.array([raw[m] for m in ranked])), 4),
            "tau_length_alone": round(kendall_tau(np.array([length_win[m] for m in ranked]), truth), 4),
            "tau_random_mean": round(float(np.mean(random_taus)), 4),
            "gpt4_turbo_agreement": _rate(verdicts),
            "gpt4_turbo_agreement_if_the_reference_always_wins": _rate(reference_wins),
            "gpt4_turbo_agreement_when_the_model_won": _rate(model_won),
            "gpt4_turbo_models": sorted(judged),
            "weighted_win_rates": {m: round(mean_pref[m], 4) for m in sorted(mean_pref, key=lambda m: -mean_pref[m])},
            "lc_published": {m: lc[m] for m in ranked}}  # fmt: skip


def report(
    model: Path, shared: Path, embeddings: str, gap: float = 1.5, silent_gap: float = 0.3, backend: str = "torch"
) -> dict:
    judge = Judge(model, embeddings, backend)
    groups = S.answer_groups(shared)
    held = [g for g in groups if S.split(g[0]) != "train"]
    held_groups = make_groups(held, judge.features)
    dsp_held = [(q, {f"dsp:{d}": t for d, t in a.items()}) for q, a in S.dsp_groups(shared) if S.split(q) != "train"]
    return {"model": str(model), "backend": backend, "properties": property_report(judge, held_groups, gap, silent_gap),
            "dsp": dsp_report(judge, make_groups(dsp_held, judge.features)), "human": human_report(judge, shared),
            "leaderboard": leaderboard_report(judge, shared)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, type=Path, help="a compositional CRM folder")
    parser.add_argument("--shared", default="../shared/data", type=Path, help="the shared data folder")
    parser.add_argument("--embeddings", default="data/embeddings", help="the embedding store (built on demand)")
    parser.add_argument("--output", type=Path, help="also write the report JSON here")
    parser.add_argument("--backend", choices=["torch", "onnx"], default="torch",
                        help="run the encoders in PyTorch, or through the folder's ONNX export")  # fmt: skip
    args = parser.parse_args(argv)
    result = report(args.model, args.shared, args.embeddings, backend=args.backend)
    text = json.dumps(result, indent=2)
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
