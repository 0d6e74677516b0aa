"""crm-eval: how well a CRM predicts held-out preferences, next to simple baselines.

    uv run crm-eval --model DIR --data FILE.jsonl [--backend onnx|torch] [--criteria-ablation] [--skip-invalid]
                    [--output FILE.json]

Prints one JSON object: n (non-tie pairs scored), accuracy, position_consistency (both orders agree), ece
(expected calibration error), accuracy_by_source, baselines (random coin, longer-response-wins), and with
--criteria-ablation the same model's accuracy with every criterion removed. Ties are counted, not scored. Each
rejected row is printed on stderr as file:line: field: reason, and any makes the run fail unless --skip-invalid.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Literal

import polars as pl
from crm_core.atomic import write_result
from crm_core.cross_encoder.prompts import PromptBudgetError
from crm_core.data import load_pairs, rejected_problems, report_rejected, without_nan
from crm_core.guard import check_output, fail, positive_int
from crm_core.loader import load_crm
from crm_core.spec import pairs_from_frame

from crm_train.metrics import (
    accuracy,
    expected_calibration_error,
    flip_consistency,
    longer_wins_accuracy,
    random_accuracy,
)


def evaluate_file(model: str, data: str, backend: Literal["torch", "onnx"] = "torch", criteria_ablation: bool = False,
                  batch_size: int = 16, max_rows: int | None = None, seed: int = 0,
                  skip_invalid: bool = False) -> dict:  # fmt: skip
    """All of crm-eval's numbers for one model on one pairs file. Rejected rows are printed on stderr and stop the
    run (RejectedRowsError) unless `skip_invalid`; a file with no valid pair is an error."""
    frame, rejected = load_pairs(data, on_error="collect")
    report_rejected(rejected_problems(rejected), "crm-eval", skip_invalid)
    if frame.height == 0:
        raise ValueError(f"{data}: no valid preference pairs to evaluate")
    frame = frame.head(max_rows) if max_rows else frame
    scored = frame.filter(pl.col("preference") != "tie")
    if scored.height == 0:
        raise ValueError(f"{data}: every pair is a tie; crm-eval scores non-tie pairs only")
    labels = (scored["preference"] == "model_b").cast(pl.Int64).to_numpy()
    crm = load_crm(model, backend=backend)
    scores = crm.score_pairs(pairs_from_frame(scored), batch_size=batch_size, progress=True)
    sources = scored["source"].fill_null("(none)").to_numpy()
    length_a = scored["model_a"].list.last().struct.field("content").str.len_chars().to_numpy()
    length_b = scored["model_b"].list.last().struct.field("content").str.len_chars().to_numpy()
    result = {
        "model": str(model),
        "data": str(data),
        "backend": backend,
        "n": len(labels),
        "n_ties": frame.height - scored.height,
        "n_rejected": rejected.height,
        "accuracy": accuracy(scores.p_a, labels),
        "position_consistency": scores.position_consistency,
        "ece": expected_calibration_error(scores.p_a, labels),
        "accuracy_by_source": {
            str(s): accuracy(scores.p_a[sources == s], labels[sources == s]) for s in sorted(set(sources))
        },
        "baselines": {
            "random": random_accuracy(labels, seed),
            "longer_wins": longer_wins_accuracy(length_a, length_b, labels),
        },
    }
    groups = [json.loads(e).get("flip_group") if e else None for e in scored["extra"].to_list()]
    if any(groups):
        result["flip"] = flip_consistency(scores.p_a, labels, groups)
    if criteria_ablation:
        ablated = crm.score_pairs(pairs_from_frame(scored, with_criteria=False), batch_size=batch_size, progress=True)
        result["criteria_ablation"] = {
            "accuracy": accuracy(ablated.p_a, labels),
            "position_consistency": ablated.position_consistency,
        }
    return result


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="crm-eval", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--model", required=True, metavar="DIR", help="CRM checkpoint folder (or exported folder)")
    parser.add_argument("--data", required=True, metavar="FILE.jsonl", help="held-out preference pairs")
    parser.add_argument("--backend", choices=["torch", "onnx"], default="torch", help="scoring backend")
    parser.add_argument("--criteria-ablation", action="store_true", help="also score with all criteria removed")
    parser.add_argument("--batch-size", type=positive_int, default=16, help="inputs per pass (default: %(default)s)")
    parser.add_argument("--max-rows", type=positive_int, help="evaluate only the first N valid rows")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random baseline (default: %(default)s)")
    parser.add_argument("--skip-invalid", action="store_true", help="go on without rows that fail validation "
                        "(each is still printed on stderr); without it any rejected row is an error")  # fmt: skip
    parser.add_argument("--output", metavar="FILE.json", help="also write the JSON here (atomically)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.output:  # before the work: the pairs file is never replaced by its own evaluation
            check_output(args.output, {"--data": args.data, "--model": args.model})
        result = evaluate_file(args.model, args.data, args.backend, args.criteria_ablation, args.batch_size,
                               args.max_rows, args.seed, args.skip_invalid)  # fmt: skip
    except PromptBudgetError as error:
        print(f"crm-eval: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # an expected error becomes one line; a bug stays a traceback
        return fail("crm-eval", error, 1)
    text = json.dumps(without_nan(result), indent=2, allow_nan=False)  # NaN is not JSON: null instead
    written = write_result("crm-eval", args.output, text) if args.output else True
    print(text)
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
