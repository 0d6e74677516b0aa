"""usl-data generate's throughput against a local OpenAI-compatible server, at several concurrencies side by side.

The server is `transformers serve` on 127.0.0.1 over a tiny random Qwen3 (the real Qwen vocabulary, built into a
temporary folder as the tests build theirs), so the numbers measure the client path (requests, streaming, saving each
answer whole) and how a CPU server answers several requests at once; a real model's answers take as long as it
generates. Each concurrency answers the same prompts into a fresh file.

    uv run python benchmarks/generate_throughput.py --output benchmarks/results/generate_throughput.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def tiny_model(folder: Path) -> Path:
    import torch
    from crm_core.cross_encoder.qwen import cached_qwen_tokenizer
    from transformers import Qwen3Config, Qwen3ForCausalLM

    tokenizer = cached_qwen_tokenizer(folder / "tokenizer")
    torch.manual_seed(0)
    config = Qwen3Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=16, max_position_embeddings=512,
                         tie_word_embeddings=True)  # fmt: skip
    model = folder / "model"
    Qwen3ForCausalLM(config).save_pretrained(model)
    tokenizer.save_pretrained(model)
    settings = json.loads((model / "tokenizer_config.json").read_text())
    settings["model_input_names"] = ["input_ids", "attention_mask"]  # generate() takes no token_type_ids
    (model / "tokenizer_config.json").write_text(json.dumps(settings))
    return model


def warm(url: str) -> None:
    """One request alone first: `transformers serve` loads the model on the first request, and two first requests
    at once both load it and break it ("Cannot copy out of meta tensor")."""
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}).encode()
    request = urllib.request.Request(f"{url}/v1/chat/completions", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=120) as answer:
        answer.read()


def serve(model: Path, port: int) -> subprocess.Popen:
    command = [str(Path(sys.executable).parent / "transformers"), "serve", "--force_model", str(model), "--host",
               "127.0.0.1", "--port", str(port), "--device", "cpu"]  # fmt: skip
    process = subprocess.Popen(command, env={**os.environ, "HF_HUB_OFFLINE": "1"}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    deadline = time.monotonic() + 180
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
            warm(f"http://127.0.0.1:{port}")
            return process
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise SystemExit("transformers serve did not start") from None
            time.sleep(0.5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=48, help="prompts answered at each concurrency")
    parser.add_argument("--max-tokens", type=int, default=32, help="tokens per answer")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8], help="concurrencies to compare")
    parser.add_argument("--port", type=int, default=8791, help="the local server's port")
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    from emit import emit
    from usl_space.generate import GenerateSettings, generate

    prompts = [(i, f"Write one sentence about the number {i}.") for i in range(args.prompts)]
    with tempfile.TemporaryDirectory() as tmp:
        model = tiny_model(Path(tmp))
        server = serve(model, args.port)
        try:
            rows = []
            for concurrency in args.concurrency:
                settings = GenerateSettings(f"http://127.0.0.1:{args.port}/v1", str(model), max_tokens=args.max_tokens,
                                            concurrency=concurrency)  # fmt: skip
                report = generate(prompts, Path(tmp) / f"answers-{concurrency}.jsonl", settings)
                rows.append({"concurrency": concurrency, "answers": report.saved, "seconds": round(report.seconds, 2),
                             "answers_per_second": round(report.saved / report.seconds, 2),
                             "chunks_per_second": round(report.completion_tokens / report.seconds, 1),
                             "retried": report.retried, "failed": len(report.failed)})  # fmt: skip
                print(rows[-1], file=sys.stderr, flush=True)
        finally:
            server.terminate()
            server.wait(timeout=30)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    emit({"machine": f"{platform.machine()}, {cores} cores", "server": "transformers serve, tiny random Qwen3 (CPU)",
          "prompts": args.prompts, "max_tokens": args.max_tokens, "rows": rows}, args.output)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
