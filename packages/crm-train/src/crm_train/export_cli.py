"""crm-export: a CRM checkpoint to ONNX (optionally int8), refused unless it matches torch on sample pairs.

uv run crm-export --model DIR --output DIR [--quantize int8] [--samples PAIRS.jsonl --n-samples 64]

A cross-encoder CRM becomes model.onnx. A compositional CRM (crm.json kind) is copied whole with its encoders added
under onnx/ (crm_core.compositional.export: fp32 the response encoder and the criteria readers, int8 the response
encoder only); its sample pairs are also read under a fixed list of criteria, and its fp32 check is on score
margins (default tolerance 0.01: both backends round vectors to float16).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from crm_core.compositional.export import export_compositional
from crm_core.cross_encoder.onnx import export_crm
from crm_core.data import load_pairs
from crm_core.guard import check_output, fail
from crm_core.hub import resolve_checkpoint
from crm_core.loader import refuse_pickled_only
from crm_core.spec import CRMSpec, Pair, pairs_from_frame


def pairs_from_file(path: str, limit: int) -> list[Pair]:
    """The first `limit` valid rows of a pairs file as scoring inputs (context: the conversation before the
    answer). Invalid rows are skipped, and counted on stderr; a file with no valid row is an error."""
    if limit < 1:
        raise ValueError(f"--n-samples: expected at least 1, got {limit}")
    frame, rejected = load_pairs(path, on_error="collect")
    if not frame.height:  # parity on no pair at all would pass whatever the export does
        first = rejected.row(0, named=True) if rejected.height else None
        why = f": line {first['line']}: {first['field'] or 'row'}: {first['reason']}" if first else ": it is empty"
        raise ValueError(f"{path}: no valid pair to check parity on{why}")
    if rejected.height:
        print(f"crm-export: skipped {rejected.height} invalid row(s) of {path}, e.g. {rejected.row(0)[:4]}",
              file=sys.stderr)  # fmt: skip
    return pairs_from_frame(frame.head(limit))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="crm-export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--model", required=True, metavar="DIR", help="the CRM checkpoint folder (with crm.json)")
    parser.add_argument(
        "--output",
        required=True,
        metavar="DIR",
        help="folder for model.onnx + tokenizer + crm.json + card; replaced whole, only on success",
    )
    parser.add_argument("--quantize", choices=["int8"], help="dynamic int8 weights (about 4x smaller, faster on CPU)")
    parser.add_argument(
        "--samples", metavar="PAIRS.jsonl", help="real pairs to check parity on (default: a few built-in pairs)"
    )
    parser.add_argument(
        "--n-samples", type=int, default=64, help="how many pairs of --samples to use (default: %(default)s)"
    )
    parser.add_argument(
        "--fp32-max-diff",
        type=float,
        help="largest |logit difference| allowed for an fp32 export (default: 1e-4; 1e-2 on score margins for a "
        "compositional CRM)",
    )
    parser.add_argument(
        "--int8-min-agreement",
        type=float,
        default=0.95,
        help="smallest argmax agreement with torch allowed for int8 (default: %(default)s)",
    )
    parser.add_argument("--opset", type=int, help="ONNX opset (default: optimum's choice)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        samples = pairs_from_file(args.samples, args.n_samples) if args.samples else None
        folder = resolve_checkpoint(args.model)
        refuse_pickled_only(folder)
        check_output(args.output, {"--model": folder, "--samples": args.samples}, folder=True)
        compositional = CRMSpec.load(folder).kind == "compositional"
        export = export_compositional if compositional else export_crm
        max_diff = args.fp32_max_diff if args.fp32_max_diff is not None else 1e-2 if compositional else 1e-4
        report = export(folder, args.output, quantize=args.quantize, samples=samples, fp32_max_diff=max_diff,
                        int8_min_agreement=args.int8_min_agreement, opset=args.opset)  # fmt: skip
    except RuntimeError as error:  # a parity gate that refused the export
        print(f"crm-export: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # an expected error becomes one line; a bug stays a traceback
        return fail("crm-export", error, 1)
    print(report.summary(), file=sys.stderr)
    print(json.dumps({**asdict(report), "output": args.output}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
