"""The compositional CRM's encoders in PyTorch and under ONNX Runtime, side by side in one run.

Exports the CRM twice (float32: both graphs; int8: the response encoder), then measures on this machine:
- response encoding: texts/s over the same AlpacaEval answers, backends interleaved for --rounds rounds;
- how far each backend's response vectors are from PyTorch's (cosine; also per-tensor int8, the variant not used);
- criteria readings: over every validation and development bank phrasing and the silent criteria, whether each
  backend gives the phrasing's own property the same sign as PyTorch, and how many phrasings change which weights
  survive the serving cut; also for criteria read through the int8 lower layers (why int8 leaves them to PyTorch);
- the size of each export's graphs and of the whole folder.

    uv run python training/experiments/compositional_onnx.py --data ../shared/data/usl/alpaca_eval \\
        --output training/experiments/results/compositional_onnx.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def folder_mb(folder: Path) -> float:
    return round(sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6, 1)


def criteria_readings(scorer, texts: list[str]) -> np.ndarray:
    return np.stack([scorer.criteria_side([t]).weights for t in texts])


def reading_changes(reference: np.ndarray, other: np.ndarray, own: list[int]) -> dict:
    """How `other`'s readings of the bank phrasings (rows of `own`) and the silent criteria differ from PyTorch's."""
    same_sign = [np.sign(reference[i, k]) == np.sign(other[i, k]) for i, k in enumerate(own)]
    return {"own_property_same_sign": round(float(np.mean(same_sign)), 4),
            "phrasings_with_other_cut_pattern": round(float(np.mean(((reference != 0) != (other != 0)).any(1))), 4),
            "mean_abs_weight_difference": round(float(np.abs(reference - other).mean()), 5),
            "max_abs_weight_difference": round(float(np.abs(reference - other).max()), 4)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, type=Path, help="AlpacaEval folder (model_outputs.jsonl.gz)")
    parser.add_argument("--model", type=Path, default=REPO / "space/models/crm-compositional",
                        help="compositional CRM folder (default: the shipped one)")  # fmt: skip
    parser.add_argument("--n-texts", type=int, default=400, help="answers to encode (drawn with seed 0)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds per backend")
    parser.add_argument("--threads", type=int, default=2, help="threads for PyTorch and ONNX Runtime")
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    from crm_core.compositional.export import export_compositional
    from crm_core.compositional.onnx import ENCODER_GRAPH, PARTS_DIR, READERS_GRAPH
    from crm_core.compositional.scorer import CompositionalScorer
    from crm_core.properties import NAMES
    from crm_train.compositional import phrasings as P
    from emit import emit
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with gzip.open(args.data / "model_outputs.jsonl.gz", "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    pick = np.random.default_rng(0).choice(len(rows), args.n_texts, replace=False)
    texts = [rows[i]["output"] for i in pick]
    bank = P.validation_bank() + P.development_bank()
    criteria = [p.text for p in bank] + P.silent_criteria()
    own = [NAMES.index(p.prop) for p in bank]
    tmp = Path(tempfile.mkdtemp(prefix="usl-onnx-"))
    try:
        reports = {q or "fp32": export_compositional(args.model, tmp / (q or "fp32"), q) for q in (None, "int8")}
        # variants measured, not shipped: per-tensor int8, and criteria read through int8 lower layers
        shutil.copytree(tmp / "fp32", tmp / "int8-criteria")
        for name in (ENCODER_GRAPH, READERS_GRAPH):
            graph = tmp / "int8-criteria" / PARTS_DIR / name
            quantize_dynamic(str(graph), str(graph) + ".q", weight_type=QuantType.QInt8, per_channel=True)
            os.replace(str(graph) + ".q", graph)
        shutil.copytree(tmp / "fp32", tmp / "int8-per-tensor")
        graph = tmp / "int8-per-tensor" / PARTS_DIR / ENCODER_GRAPH
        quantize_dynamic(str(graph), str(graph) + ".q", weight_type=QuantType.QInt8)
        os.replace(str(graph) + ".q", graph)
        scorers = {"pytorch": CompositionalScorer(args.model, threads=args.threads)}
        for name in ("fp32", "int8", "int8-per-tensor", "int8-criteria"):
            scorers[name] = CompositionalScorer(tmp / name, threads=args.threads, backend="onnx")
        timed = ("pytorch", "fp32", "int8")
        seconds: dict[str, list[float]] = {name: [] for name in timed}
        for _ in range(args.rounds):
            for name in timed:
                started = time.perf_counter()
                scorers[name].encoder.encode(texts)
                seconds[name].append(time.perf_counter() - started)
        reference = scorers["pytorch"].encoder.encode(texts)
        vectors = {}
        for name in ("fp32", "int8", "int8-per-tensor"):
            cosine = (scorers[name].encoder.encode(texts) * reference).sum(1)
            vectors[name] = {"mean_cosine": round(float(cosine.mean()), 5), "min_cosine": round(float(cosine.min()), 5)}
        readings = {name: criteria_readings(scorers[name], criteria) for name in ("pytorch", "fp32", "int8",
                                                                                 "int8-criteria")}  # fmt: skip
    finally:
        sizes = {name: {"graphs_mb": folder_mb(tmp / name / PARTS_DIR), "folder_mb": folder_mb(tmp / name)}
                 for name in ("fp32", "int8") if (tmp / name).is_dir()}  # fmt: skip
        shutil.rmtree(tmp, ignore_errors=True)
    median = {name: float(np.median(s)) for name, s in seconds.items()}
    readings_vs_pytorch = {name: reading_changes(readings["pytorch"], readings[name], own)
                           for name in ("fp32", "int8", "int8-criteria")}  # fmt: skip
    gate = {name: {"inputs": r.n_inputs, "agreement": r.argmax_agreement,
                   "max_abs_margin_difference": round(r.max_abs_logit_diff, 5)}
            for name, r in reports.items()}  # fmt: skip
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {args.threads} threads",
        "model": str(args.model.resolve().relative_to(REPO)) if args.model.resolve().is_relative_to(REPO) else "",
        "texts": len(texts),
        "rounds": args.rounds,
        "encode_texts_per_s": {name: round(len(texts) / s, 1) for name, s in median.items()},
        "speedup_vs_pytorch": {name: round(median["pytorch"] / s, 2) for name, s in median.items()},
        "response_vectors_vs_pytorch": vectors,
        "criteria": len(criteria),
        "criteria_readings_vs_pytorch": readings_vs_pytorch,
        "parity_gate": gate,
        "sizes": sizes,
        "raw_seconds": seconds,
    }
    emit(result, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
