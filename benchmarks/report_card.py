"""The CRM's report card: crm-eval on every held-out test set, beside random, longer-response-wins and the
same model without criteria. Writes benchmarks/results/report_card.json and prints a Markdown table.

    uv run python benchmarks/report_card.py --model space/models/crm-minilm --backend onnx --data data/crm

Test sets are the files test_*.jsonl and pandalm_test.jsonl that crm_train.build_data writes (never trained
on: split by prompt, AlpacaEval instructions removed).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from crm_train.eval_cli import evaluate_file
from tables import report_card_table  # benchmarks/tables.py, beside this script

REPO = Path(__file__).resolve().parents[1]


def _shown(path: Path) -> str:
    """`path` relative to the repository when it is inside it: no machine's paths in committed results."""
    resolved = path.resolve()
    return str(resolved.relative_to(REPO)) if resolved.is_relative_to(REPO) else str(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=REPO / "space/models/crm-minilm", help="the CRM folder")
    parser.add_argument("--backend", choices=["torch", "onnx"], default="onnx", help="scoring backend")
    parser.add_argument("--data", type=Path, default=REPO / "data/crm", help="folder written by build_data")
    parser.add_argument("--output", type=Path, default=REPO / "benchmarks/results/report_card.json")
    args = parser.parse_args()

    files = sorted(args.data.glob("test_*.jsonl")) + sorted(args.data.glob("pandalm_test.jsonl"))
    if not files:
        raise SystemExit(f"no test_*.jsonl in {args.data}: run python -m crm_train.build_data first")
    started = time.perf_counter()
    results = {}
    for path in files:
        name = path.stem.removeprefix("test_").removesuffix("_test")
        results[name] = evaluate_file(str(args.model), str(path), args.backend, criteria_ablation=True,
                                      batch_size=32)  # fmt: skip
        results[name].update(model=_shown(args.model), data=_shown(path))
        print(f"{name}: accuracy {results[name]['accuracy']:.3f} (n={results[name]['n']})", flush=True)
    report = {
        "model": _shown(args.model),
        "backend": args.backend,
        "machine": {"processor": platform.processor() or platform.machine(), "python": platform.python_version()},
        "seconds": round(time.perf_counter() - started, 1),
        "results": results,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2) + "\n")
    print(report_card_table(report))


if __name__ == "__main__":
    main()
