#!/usr/bin/env bash
# Rebuild the shipped CRM (space/models/crm-compositional) from ../shared/data in one command, on a CPU:
#   1. crm-train fits the compositional CRM (embeds every training text once into data/embeddings, resumable);
#   2. its report card on held-out data and validation phrasings -> benchmarks/results/compositional_report.json;
#   3. crm-export adds the int8 response encoder under onnx/ (refused unless its decisions agree with PyTorch's),
#      and the report card is taken again as the Space serves it -> compositional_report_onnx_int8.json;
#   4. the folder replaces space/models/crm-compositional whole (crm.json records config, seed and data hash).
# Usage: bash training/rebuild-default.sh [SHARED_DATA_DIR]   (default ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/.."
shared="${1:-../shared/data}"
started=$SECONDS
uv run crm-train --config training/configs/crm-compositional.yaml --shared "$shared"
uv run python -m crm_train.compositional.evaluate --model runs/crm-compositional/best --shared "$shared" \
    --output benchmarks/results/compositional_report.json > /dev/null
rm -rf space/models/.crm-compositional.new
uv run crm-export --model runs/crm-compositional/best --output space/models/.crm-compositional.new --quantize int8
uv run python -m crm_train.compositional.evaluate --model space/models/.crm-compositional.new --backend onnx \
    --shared "$shared" --output benchmarks/results/compositional_report_onnx_int8.json > /dev/null
rm -rf space/models/crm-compositional
mv space/models/.crm-compositional.new space/models/crm-compositional
echo "rebuild-default: done in $((SECONDS - started)) s; report card in benchmarks/results/compositional_report.json"
