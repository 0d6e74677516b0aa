"""Would a larger frozen encoder make a better response side? A linear probe, before any refit.

The quality term reads each answer through a frozen sentence encoder (MiniLM, 384 dimensions). This probe asks
how much general preference each candidate encoder's frozen vectors carry: a logistic regression on
[e(A) - e(B), e(query) * (e(A) - e(B))] fitted on training-split pairs of the quality term's own data
(GPT-4-turbo verdicts on the training half of AlpacaEval for non-default models, and the human train splits) and
scored on their validation split (development data; no test split, no evaluation-half instruction). Beside it:
longer-wins, and each encoder with the length difference added. Encoders are read with transformers (mean pooling,
unit length, the first `--max-tokens` tokens, as the CRM reads answers), so any BERT-style folder can be tried.

    uv run python training/experiments/encoder_probe.py --encoder mpnet=PATH/all-mpnet-base-v2 \\
        --output training/experiments/results/encoder_probe.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from emit import emit


def encode(folder: Path, texts: list[str], max_tokens: int, batch_size: int = 16) -> tuple[np.ndarray, float]:
    """Unit mean-pooled vectors of `texts` (distinct texts once) and texts per second."""
    import torch
    from tqdm.auto import tqdm
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder).eval()
    distinct = list(dict.fromkeys(texts))
    order = sorted(range(len(distinct)), key=lambda i: len(distinct[i]))
    out = np.zeros((len(distinct), model.config.hidden_size), np.float32)
    started = time.perf_counter()
    with torch.inference_mode():
        for start in tqdm(range(0, len(order), batch_size), desc=folder.name, unit="batch"):
            rows = order[start : start + batch_size]
            batch = tokenizer([distinct[i] for i in rows], truncation=True, max_length=max_tokens, padding=True,
                              return_tensors="pt")  # fmt: skip
            states = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).float()
            pooled = (states * mask).sum(1) / mask.sum(1)
            out[rows] = torch.nn.functional.normalize(pooled, dim=-1).numpy()
    rate = len(distinct) / (time.perf_counter() - started)
    where = {t: i for i, t in enumerate(distinct)}
    return out[[where[t] for t in texts]], rate


def probe_accuracy(train: tuple[np.ndarray, np.ndarray], held_out: tuple[np.ndarray, np.ndarray]) -> dict:
    """Held-out accuracy (and its standard error) of a logistic regression, C chosen by 5-fold CV on train."""
    from sklearn.linear_model import LogisticRegressionCV
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(train[0])
    model = LogisticRegressionCV(Cs=[0.001, 0.01, 0.1, 1.0], cv=5, max_iter=2000).fit(scaler.transform(train[0]),
                                                                                      train[1])  # fmt: skip
    right = model.predict(scaler.transform(held_out[0])) == held_out[1]
    return {"accuracy": round(float(right.mean()), 4), "se": round(float(right.std() / np.sqrt(len(right))), 4),
            "C": float(model.C_[0])}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", action="append", default=[], metavar="NAME=DIR",
                        help="a BERT-style encoder folder to probe beside MiniLM (repeatable)")  # fmt: skip
    parser.add_argument("--shared", type=Path, default=Path("../shared/data"), help="the shared data folder")
    parser.add_argument("--train-pairs", type=int, default=2000, help="training-split pairs sampled")
    parser.add_argument("--held-out-pairs", type=int, default=800, help="validation-split pairs sampled")
    parser.add_argument("--max-tokens", type=int, default=128, help="tokens of each text read (the CRM reads 128)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the samples")
    parser.add_argument("--output", type=Path, help="write the results here (JSON)")
    args = parser.parse_args(argv)
    from crm_core.encoder import minilm_source
    from crm_train.compositional.sources import annotation_pairs, human_pairs, split

    rng = np.random.default_rng(args.seed)
    pairs = [p for p in annotation_pairs(args.shared) + human_pairs(args.shared, "train") if p.p_a != 0.5]
    held = [p for p in annotation_pairs(args.shared) + human_pairs(args.shared, "validation") if p.p_a != 0.5]
    train = [pairs[i] for i in rng.permutation(len(pairs)) if split(pairs[i].prompt) == "train"][: args.train_pairs]
    held = [held[i] for i in rng.permutation(len(held)) if split(held[i].prompt) == "validation"][: args.held_out_pairs]
    labels = [np.array([p.p_a > 0.5 for p in rows]) for rows in (train, held)]

    def length_gap(rows: list) -> np.ndarray:
        return np.array([[np.log2(1 + len(p.a.split())) - np.log2(1 + len(p.b.split()))] for p in rows])

    longer = float(np.mean((length_gap(held)[:, 0] > 0) == labels[1]))
    result: dict = {"train_pairs": len(train), "held_out_pairs": len(held), "max_tokens": args.max_tokens,
                    "longer_wins": round(longer, 4), "encoders": {}}  # fmt: skip
    encoders = [("all-MiniLM-L6-v2", minilm_source()), *(tuple(e.split("=", 1)) for e in args.encoder)]
    for name, folder in encoders:
        features = []
        rate = 0.0
        for rows in (train, held):
            texts = [t for p in rows for t in (p.prompt, p.a, p.b)]
            vectors, rate = encode(Path(folder), texts, args.max_tokens)
            q, a, b = vectors[0::3], vectors[1::3], vectors[2::3]
            features.append(np.concatenate([a - b, q * (a - b)], axis=1))
        with_length = [
            np.concatenate([f, length_gap(rows)], axis=1) for f, rows in zip(features, (train, held), strict=True)
        ]
        result["encoders"][name] = {
            "dimensions": int(features[0].shape[1] // 2),
            "texts_per_second": round(rate, 1),
            "embeddings": probe_accuracy((features[0], labels[0]), (features[1], labels[1])),
            "embeddings_and_length": probe_accuracy((with_length[0], labels[0]), (with_length[1], labels[1])),
        }
        print(name, result["encoders"][name], file=sys.stderr)
    emit(result, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
