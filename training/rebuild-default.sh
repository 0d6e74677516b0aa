#!/usr/bin/env bash
# Refit the shipped CRM (space/models/crm-compositional) from ../shared/data in one command, on a CPU, and ship it
# only if it is better:
#   1. crm-train fits the compositional CRM into runs/ (embeds every training text once into data/embeddings,
#      resumable); runs/ is ignored by git: a refit stays there until step 3 moves it;
#   2. crm-export adds the int8 response encoder under onnx/ (refused unless its decisions agree with PyTorch's);
#   3. training/promote.py judges it and the shipped CRM on development data (the judge report on AlpacaEval's
#      training half, the development phrasing banks) and replaces the shipped folder only when no check is worse
#      and one is better (otherwise it stops here, exit 1, nothing touched);
#   4. the report cards on held-out data are taken again -> benchmarks/results/ (then: uv run python
#      benchmarks/tables.py, and commit the folder, the results and README in one step).
# Usage: bash training/rebuild-default.sh [SHARED_DATA_DIR]   (default ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/.."
shared="${1:-../shared/data}"
started=$SECONDS
uv run crm-train --config training/configs/crm-compositional.yaml --shared "$shared"
rm -rf runs/crm-compositional/served
uv run crm-export --model runs/crm-compositional/best --output runs/crm-compositional/served --quantize int8
uv run python training/promote.py --candidate runs/crm-compositional/served --shared "$shared" --replace \
    --output runs/crm-compositional/promote.json
uv run python -m crm_train.compositional.evaluate --model runs/crm-compositional/best --shared "$shared" \
    --output benchmarks/results/compositional_report.json > /dev/null
uv run python -m crm_train.compositional.evaluate --model space/models/crm-compositional --backend onnx \
    --shared "$shared" --output benchmarks/results/compositional_report_onnx_int8.json > /dev/null
echo "rebuild-default: promoted in $((SECONDS - started)) s; report cards in benchmarks/results/"
