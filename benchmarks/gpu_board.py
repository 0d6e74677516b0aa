"""The paper's judge at size on a GPU: a pairwise Qwen3 cross-encoder scoring a full AlpacaEval board.

Two steps, so the device needs nothing of this project's environment:

1. `--make-lengths FILE` (on the CPU, in the uv environment): the token length of every input of a full board as
   the cross-encoder kind builds it (crm_core.cross_encoder.prompts, chat style, max_length 2048, the real Qwen3
   vocabulary): 805 queries x each default model vs the baseline gpt4_1106_preview, both orders, under one typical
   criterion. Only lengths are written (a few hundred kB), never text.
2. `--lengths FILE` (on the device: PyTorch and transformers 4.57 or 5.x only): for each size (a Qwen3-0.6B- and a
   Qwen3-4B-shaped config, random weights, bf16, SDPA), scores random token ids of those lengths with length-
   bucketed batching (inputs sorted by length, batches cut at a token budget) for `--seconds` on a random sample of
   the board, after a warm-up, timed with a device synchronisation; writes pairs/s, inputs/s, tokens/s, the seconds
   a full board takes at that rate, peak memory, and model FLOPs utilisation (2 x non-embedding parameters per token
   plus attention, over the bf16 peak: the datasheet's and an 8192^3 matrix product measured in the same run).

    uv run python benchmarks/gpu_board.py --make-lengths benchmarks/results/gpu_board_lengths.npz
    python3 benchmarks/gpu_board.py --lengths benchmarks/results/gpu_board_lengths.npz --output $OUT/gpu_board.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SIZES = {  # Qwen3's published configs (0.6B and 4B); the classification head has 2 labels (A / B preferred)
    "qwen3-0.6b": dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=28, num_attention_heads=16,
                       num_key_value_heads=8, head_dim=128, tie_word_embeddings=True),
    "qwen3-4b": dict(hidden_size=2560, intermediate_size=9728, num_hidden_layers=36, num_attention_heads=32,
                     num_key_value_heads=8, head_dim=128, tie_word_embeddings=True),
    "tiny": dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, head_dim=16, tie_word_embeddings=True),
}  # fmt: skip
DATASHEET_BF16_TFLOPS = {"H100": 989.0, "H200": 989.0}  # dense, SXM


def make_lengths(output: Path, shared: Path, criterion: str) -> dict:
    """Token lengths of every input of the general-size board (both orders), as the cross-encoder builds them."""
    from crm_core.cross_encoder.prompts import PromptBuilder
    from crm_core.cross_encoder.qwen import build_qwen_tokenizer
    from crm_core.data.importers import read_instructions
    from crm_core.spec import PromptFormat
    from usl_space.catalog import default_models

    tokenizer = build_qwen_tokenizer()
    builder = PromptBuilder(tokenizer, PromptFormat(style="chat", max_length=2048))
    folder = shared / "usl/alpaca_eval"
    instructions = dict(zip(*read_instructions(folder / "instructions.jsonl")[["idx", "instruction"]]
                            .to_dict(as_series=False).values(), strict=True))  # fmt: skip
    import gzip

    baseline = "gpt4_1106_preview"
    models = [m for m in default_models() if m != baseline]
    outputs: dict[tuple[int, str], str] = {}
    with gzip.open(folder / "model_outputs.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if row["model"] in (*models, baseline) and str(row["output"]).strip():
                outputs[(int(row["idx"]), row["model"])] = row["output"]
    lengths = []
    for idx, query in instructions.items():
        base = outputs.get((idx, baseline))
        for model in models:
            answer = outputs.get((idx, model))
            if base is None or answer is None:
                continue
            for a, b in ((answer, base), (base, answer)):
                lengths.append(len(builder.encode([criterion], query, [a, b]).input_ids))
    lengths_arr = np.array(lengths, dtype=np.int16)
    output.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(output, lengths=lengths_arr, queries=len(instructions), models=len(models))
    return {"inputs": len(lengths_arr), "mean": float(lengths_arr.mean()), "max": int(lengths_arr.max())}


def batches(lengths: np.ndarray, token_budget: int, max_batch: int) -> list[np.ndarray]:
    """Length-bucketed batches: inputs sorted by length, each batch as many as fit `token_budget` padded tokens."""
    order = np.argsort(lengths, kind="stable")
    out, start = [], 0
    while start < len(order):
        end = start + 1
        while end < len(order) and end - start < max_batch and (end + 1 - start) * lengths[order[end]] <= token_budget:
            end += 1
        out.append(order[start:end])
        start = end
    return out


def flops_per_token(config, length: float) -> float:
    """Forward FLOPs per token: 2 x non-embedding parameters, plus attention's QK^T and AV over `length` tokens."""
    h, layers = config.hidden_size, config.num_hidden_layers
    q, kv = config.num_attention_heads * config.head_dim, config.num_key_value_heads * config.head_dim
    per_layer = h * q + 2 * h * kv + q * h + 3 * h * config.intermediate_size
    return 2 * layers * per_layer + 2 * 2 * layers * q * length


def measure_matmul(torch, device) -> float:
    """TFLOP/s of an 8192^3 bf16 matrix product on random data (the device's practical ceiling)."""
    n = 8192
    a, b = (
        torch.randn(n, n, device=device, dtype=torch.bfloat16),
        torch.randn(n, n, device=device, dtype=torch.bfloat16),
    )
    for _ in range(3):
        a @ b
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(10):
        a @ b
    torch.cuda.synchronize()
    return 2 * n**3 * 10 / (time.perf_counter() - start) / 1e12


def run_size(name: str, lengths: np.ndarray, args, torch, device) -> dict:
    from transformers import Qwen3Config, Qwen3ForSequenceClassification

    config = Qwen3Config(vocab_size=151936, num_labels=2, pad_token_id=151643, max_position_embeddings=4096,
                         **SIZES[name])  # fmt: skip
    dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
    torch.manual_seed(0)
    with torch.device(device):
        model = Qwen3ForSequenceClassification._from_config(config, attn_implementation="sdpa", dtype=dtype)
    model.eval()
    rng = np.random.default_rng(0)
    sample = lengths[rng.permutation(len(lengths))]
    if args.max_inputs:
        sample = sample[: args.max_inputs]
    plan = batches(sample, args.token_budget, args.max_batch)
    rng.shuffle(plan)  # a random mix of short and long batches, as a sample of the whole board

    def run(batch_lengths: np.ndarray, model=model) -> None:
        width = int(batch_lengths.max())
        ids = torch.randint(0, 151000, (len(batch_lengths), width), device=device)
        mask = torch.arange(width, device=device)[None, :] < torch.as_tensor(batch_lengths, device=device)[:, None]
        ids[~mask] = config.pad_token_id
        with torch.inference_mode():
            model(input_ids=ids, attention_mask=mask.long()).logits.float().cpu()

    for rows in plan[: args.warmup]:
        run(sample[rows])
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    done_inputs, done_tokens, padded, start = 0, 0, 0, time.perf_counter()
    for rows in plan[args.warmup :]:
        run(sample[rows])  # .cpu() in run synchronises
        done_inputs += len(rows)
        done_tokens += int(sample[rows].sum())
        padded += len(rows) * int(sample[rows].max())
        if time.perf_counter() - start > args.seconds:
            break
    seconds = time.perf_counter() - start
    inputs_per_s = done_inputs / seconds
    tokens_per_s = done_tokens / seconds
    achieved = tokens_per_s * flops_per_token(config, float(np.mean(sample))) / 1e12
    params = sum(p.numel() for p in model.parameters())
    result = {
        "size": name, "parameters": params, "measured_inputs": done_inputs, "measured_seconds": round(seconds, 2),
        "inputs_per_s": round(inputs_per_s, 1), "pairs_per_s": round(inputs_per_s / 2, 1),
        "tokens_per_s": round(tokens_per_s), "padding_share": round(1 - done_tokens / max(padded, 1), 4),
        "full_board_inputs": len(lengths), "full_board_seconds": round(len(lengths) / inputs_per_s, 1),
        "achieved_tflops": round(achieved, 1),
        "peak_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2) if device.type == "cuda" else None,
    }  # fmt: skip
    del run, model
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--make-lengths", type=Path, help="write the full board's input lengths here and stop (CPU)")
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument("--criterion", default="Prefer short, concise answers.", help="the board's one criterion")
    parser.add_argument("--lengths", type=Path, help="the lengths file to time a board on")
    parser.add_argument("--sizes", default="qwen3-0.6b,qwen3-4b", help=f"comma-separated, of {', '.join(SIZES)}")
    parser.add_argument("--seconds", type=float, default=60.0, help="timed seconds per size (after the warm-up)")
    parser.add_argument("--warmup", type=int, default=5, help="batches run before timing")
    parser.add_argument("--token-budget", type=int, default=65536, help="padded tokens per batch at most")
    parser.add_argument("--max-batch", type=int, default=256, help="inputs per batch at most")
    parser.add_argument("--max-inputs", type=int, default=0, help="sample at most this many inputs (0: all; tests)")
    parser.add_argument("--output", type=Path, help="write the results here (JSON)")
    args = parser.parse_args(argv)
    if args.make_lengths:
        print(json.dumps(make_lengths(args.make_lengths, args.shared, args.criterion)))
        return 0
    if not args.lengths:
        parser.error("give --lengths (or --make-lengths on the CPU first)")
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with np.load(args.lengths) as data:
        lengths = data["lengths"].astype(np.int64)
    report: dict = {"device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu",
                    "torch": torch.__version__, "board_inputs": len(lengths),
                    "mean_length": round(float(lengths.mean()), 1), "sizes": []}  # fmt: skip
    if device.type == "cuda":
        report["matmul_bf16_tflops"] = round(measure_matmul(torch, device), 1)
        sheet = next((v for k, v in DATASHEET_BF16_TFLOPS.items() if k in report["device"]), None)
        report["datasheet_bf16_tflops"] = sheet
    for name in args.sizes.split(","):
        result = run_size(name, lengths, args, torch, device)
        if device.type == "cuda":
            result["mfu_vs_measured_matmul"] = round(result["achieved_tflops"] / report["matmul_bf16_tflops"], 3)
            if report.get("datasheet_bf16_tflops"):
                result["mfu_vs_datasheet"] = round(result["achieved_tflops"] / report["datasheet_bf16_tflops"], 3)
        report["sizes"].append(result)
        print(json.dumps(result), flush=True)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
