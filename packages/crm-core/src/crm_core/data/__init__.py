"""The validated Polars data layer: preference pairs and benches (queries x models' responses)."""

from crm_core.data.bench import Bench, make_bench
from crm_core.data.errors import DataValidationError, Problem
from crm_core.data.importers import (
    ALPACA_EVAL_BASELINE,
    MT_BENCH_BASELINE,
    detect_layout,
    load_alpaca_eval_combined,
    load_alpaca_eval_per_model,
    load_mt_bench,
    open_bench,
    read_answers,
    read_model_outputs_json,
    read_models_file,
    responses_by_instruction,
    with_answers,
)
from crm_core.data.lines import RejectedRowsError, report_rejected, skipping_invalid, text_lines, without_nan
from crm_core.data.pairs import (
    PAIR_SCHEMA,
    PREFERENCES,
    load_pairs,
    pair_records,
    pairs_from_dataset,
    pairs_to_dataset,
    rejected_problems,
    validate_pair,
    write_pairs,
)

__all__ = [
    "ALPACA_EVAL_BASELINE",
    "MT_BENCH_BASELINE",
    "PAIR_SCHEMA",
    "PREFERENCES",
    "Bench",
    "DataValidationError",
    "Problem",
    "RejectedRowsError",
    "detect_layout",
    "load_alpaca_eval_combined",
    "load_alpaca_eval_per_model",
    "load_mt_bench",
    "load_pairs",
    "make_bench",
    "open_bench",
    "pair_records",
    "pairs_from_dataset",
    "pairs_to_dataset",
    "read_answers",
    "read_model_outputs_json",
    "read_models_file",
    "rejected_problems",
    "report_rejected",
    "responses_by_instruction",
    "skipping_invalid",
    "text_lines",
    "validate_pair",
    "with_answers",
    "without_nan",
    "write_pairs",
]
