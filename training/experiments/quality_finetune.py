"""Frozen MiniLM features + a head, or MiniLM's top layers fine-tuned with it? (issue "general quality")

Both variants fit the quality network of the compositional CRM (query, response, measured properties ->
score; crm_train.compositional.train.QualityNet) on the same pairs: a random subset of the shipped quality data
(GPT-4-turbo verdicts on the training half for non-default models, the human votes), the same subset for both.
`frozen` is the shipped recipe: the store's embeddings, the head fitted for `quality_epochs` epochs. `tuned`
starts from that head and fine-tunes it together with MiniLM's top `--layers` transformer layers, reading the
responses (the query stays frozen), pointwise: each answer gets a score, a pair's logit is the difference (the
Bradley-Terry form of the quality stage). Both leave the reference signals out, so the comparison is of what
the network reads from an answer alone, which is all it has on the human sets.

Judged, for each variant, on the validation pairs the quality table uses (held-out annotated instructions; the
human sets' validation split), the human test sets against longer-wins, and the default models' board on the
training half of AlpacaEval (a development set: those models' verdicts were never trained on). On this 2-core CPU
one epoch over 8,000 pairs takes minutes, not hours, because the layers below the tuned ones run once per text.

    uv run python training/experiments/quality_finetune.py --output training/experiments/results/quality_finetune.json
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

REPO = Path(__file__).resolve().parents[2]


class TunedLayers(torch.nn.Module):
    """MiniLM's top layers (copied, float32) over token states from below them; mean-pooled unit vectors."""

    def __init__(self, layers: list[torch.nn.Module]):
        super().__init__()
        self.layers = torch.nn.ModuleList(layers)

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        width = int(mask.sum(1).max())
        h, mask = states[:, :width].float(), mask[:, :width]
        additive = (1.0 - mask[:, None, None, :]) * torch.finfo(h.dtype).min
        for layer in self.layers:
            h = layer(h, attention_mask=additive)[0]
        pooled = (h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        return torch.nn.functional.normalize(pooled, dim=-1)


class TextStates:
    """Token states below the tuned layers, once per distinct text (float16 to halve the memory)."""

    def __init__(self, encoder, texts: list[str], after: int, max_tokens: int, chunk: int = 512):
        self.index = {t: i for i, t in enumerate(dict.fromkeys(texts))}
        distinct = list(self.index)
        states, masks = [], []
        for start in tqdm(range(0, len(distinct), chunk), desc="token states", unit="chunk"):
            s, m = encoder.hidden_states(distinct[start : start + chunk], after, max_tokens=max_tokens)
            pad = max_tokens - s.shape[1]
            states.append(torch.nn.functional.pad(s, (0, 0, 0, pad)).half())
            masks.append(torch.nn.functional.pad(m, (0, pad)))
        self.states, self.mask = torch.cat(states), torch.cat(masks)

    def rows(self, texts: list[str]) -> torch.Tensor:
        return torch.tensor([self.index[t] for t in texts])


@dataclasses.dataclass
class PairRows:
    """A pair set as the tuned variant reads it: state rows of both answers, the frozen inputs beside them."""

    a: torch.Tensor  # (n,) rows into TextStates
    b: torch.Tensor
    qa: torch.Tensor  # (n, 384) query embedding (frozen)
    za: torch.Tensor  # (n, K) scaled properties
    zb: torch.Tensor
    dlen: torch.Tensor
    y: torch.Tensor
    w: torch.Tensor


def pair_rows(pairs, states: TextStates, features, spread: np.ndarray, tensors: dict) -> PairRows:
    q = torch.tensor(features.embed([p.prompt for p in pairs]))
    za = torch.tensor(features.phi([p.a for p in pairs]) / spread, dtype=torch.float32)
    zb = torch.tensor(features.phi([p.b for p in pairs]) / spread, dtype=torch.float32)
    return PairRows(states.rows([p.a for p in pairs]), states.rows([p.b for p in pairs]), q, za, zb,
                    tensors["dlen"], tensors["y"], tensors["w"])  # fmt: skip


def tuned_logit(net, layers: TunedLayers, states: TextStates, t: PairRows, rows, length_control: bool):
    va = layers(states.states[t.a[rows]], states.mask[t.a[rows]])
    vb = layers(states.states[t.b[rows]], states.mask[t.b[rows]])
    q = t.qa[rows]
    sa = net.quality(torch.cat([va, q * va, t.za[rows]], dim=1))[:, 0]
    sb = net.quality(torch.cat([vb, q * vb, t.zb[rows]], dim=1))[:, 0]
    return sa - sb + (net.length_bias[0] * t.dlen[rows] if length_control else 0.0)


def score_pairs(net, layers, states, t: PairRows, length_control: bool, batch: int = 256) -> dict:
    with torch.no_grad():
        logit = torch.cat([tuned_logit(net, layers, states, t, torch.arange(i, min(i + batch, len(t.y))),
                                       length_control) for i in range(0, len(t.y), batch)])  # fmt: skip
    bce = torch.nn.functional.binary_cross_entropy_with_logits(logit, t.y, reduction="none")
    decided = t.y != 0.5
    return {"val_loss": round(float((bce * t.w).mean()), 4),
            "val_accuracy": round(float(((logit > 0) == (t.y > 0.5))[decided].float().mean()), 4)}  # fmt: skip


def fine_tune(net, layers: TunedLayers, states: TextStates, train: PairRows, val: PairRows, config, args) -> dict:
    """The head and the top layers together, the best epoch by validation loss kept."""
    groups = [{"params": layers.parameters(), "lr": args.layer_lr}, {"params": net.parameters(), "lr": args.head_lr}]
    opt = torch.optim.AdamW(groups, weight_decay=config.weight_decay)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    history = [{"epoch": -1, **score_pairs(net, layers, states, val, config.length_control)}]
    best, best_state = history[0]["val_loss"], copy.deepcopy((net.state_dict(), layers.state_dict()))
    for epoch in range(args.epochs):
        net.train(), layers.train()
        order = torch.randperm(len(train.y), generator=torch.Generator().manual_seed(args.seed + epoch))
        started = time.perf_counter()
        for rows in tqdm(order.split(args.batch), desc=f"fine-tune epoch {epoch}", unit="batch"):
            logit = tuned_logit(net, layers, states, train, rows, config.length_control)
            loss = (bce(logit, train.y[rows], reduction="none") * train.w[rows]).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval(), layers.eval()
        history.append({"epoch": epoch, "seconds": round(time.perf_counter() - started, 1),
                        **score_pairs(net, layers, states, val, config.length_control)})  # fmt: skip
        print(json.dumps(history[-1]), flush=True)
        if history[-1]["val_loss"] < best:
            best, best_state = history[-1]["val_loss"], copy.deepcopy((net.state_dict(), layers.state_dict()))
    net.load_state_dict(best_state[0])
    layers.load_state_dict(best_state[1])
    return {"history": history, "best_val_loss": best}


class TunedStore:
    """Stands in for the embedding store when judging the tuned variant: queries (`frozen`) come from the store,
    every other text through the tuned layers."""

    def __init__(self, store, encoder, layers: TunedLayers, after: int, max_tokens: int, frozen: set[str]):
        self.store, self.encoder, self.layers, self.after, self.max_tokens = store, encoder, layers, after, max_tokens
        self.frozen, self.cache = frozen, {}

    def get(self, texts, progress: bool = False, chunk: int = 256) -> np.ndarray:
        texts = list(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self.frozen and t not in self.cache]
        chunks = range(0, len(missing), chunk)
        for start in tqdm(chunks, desc="tuned vectors", unit="chunk", disable=len(missing) < chunk):
            part = missing[start : start + chunk]
            s, m = self.encoder.hidden_states(part, self.after, max_tokens=self.max_tokens)
            with torch.no_grad():
                self.cache.update(zip(part, self.layers(s, m).numpy(), strict=True))
        frozen = [t for t in texts if t in self.frozen]
        known = dict(zip(frozen, self.store.get(frozen), strict=True)) if frozen else {}
        return np.stack([known[t] if t in self.frozen else self.cache[t] for t in texts])


def judge_report(judge, heads, shared: Path, val_pairs, quick: bool = False) -> dict:
    from crm_train.compositional.evaluate import human_report, leaderboard_report

    judge.heads = heads
    out = {}
    for name in ("gpt4_turbo", "human"):
        pairs = [p for p in val_pairs if p.p_a != 0.5 and (p.source == "gpt4_turbo") == (name == "gpt4_turbo")]
        qa = judge.side([p.prompt for p in pairs], [p.a for p in pairs]).quality
        qb = judge.side([p.prompt for p in pairs], [p.b for p in pairs]).quality
        out[f"validation_{name}"] = round(float(np.mean((qa > qb) == np.array([p.p_a > 0.5 for p in pairs]))), 4)
    if quick:
        return out
    out["human_test"] = human_report(judge, shared)
    board = leaderboard_report(judge, shared, "training")
    out["leaderboard_training_half"] = {k: board[k] for k in ("tau_vs_lc", "tau_discrete_vs_lc", "tau_length_alone")}
    return out


def draw_pairs(shared: Path, n: int, seed: int, quick: bool = False) -> tuple[list, list, list]:
    """(pool, drawn training pairs, validation pairs): the shipped quality data (GPT-4-turbo verdicts, training half
    and non-default models only, a tenth of their instructions held out for validation; the human train splits),
    `n` pairs drawn from it with `seed`; `quick` keeps a 20th of the validation pairs."""
    from crm_train.compositional import sources as S

    annotations = S.annotation_pairs(shared)  # training half, non-default models (enforced there)
    held = [S.annotation_validation(p.prompt) for p in annotations]
    pool = [p for p, h in zip(annotations, held, strict=True) if not h] + S.human_pairs(shared, "train")
    val_pairs = [p for p, h in zip(annotations, held, strict=True) if h] + S.human_pairs(shared, "validation")
    if quick:
        val_pairs = val_pairs[::20]
    rng = np.random.default_rng(seed)
    train_pairs = [pool[i] for i in sorted(rng.choice(len(pool), min(n, len(pool)), replace=False))]
    sources = {s: sum(p.source == s for p in train_pairs) for s in sorted({p.source for p in train_pairs})}
    print(f"{len(train_pairs)} training pairs of {len(pool)} ({sources}); {len(val_pairs)} validation", flush=True)
    return pool, train_pairs, val_pairs


def _portable(value) -> str:
    """An argument as the results file records it: paths relative to the repository, never this machine's."""
    if isinstance(value, (str, Path)) and Path(value).is_absolute():
        return os.path.relpath(value, REPO)
    return str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=REPO / "space/models/crm-compositional",
                        help="a compositional CRM folder (its encoder, token window and property spread)")  # fmt: skip
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument("--embeddings", default=str(REPO / "data/embeddings"), help="the embedding store")
    parser.add_argument("--pairs", type=int, default=8000, help="training pairs drawn (the same for both variants)")
    parser.add_argument("--layers", type=int, default=2, help="top MiniLM layers fine-tuned (of 6)")
    parser.add_argument("--epochs", type=int, default=2, help="fine-tuning epochs over the drawn pairs")
    parser.add_argument("--batch", type=int, default=32, help="pairs per fine-tuning step")
    parser.add_argument("--layer-lr", type=float, default=3e-5, help="learning rate of the tuned layers")
    parser.add_argument("--head-lr", type=float, default=1e-4, help="learning rate of the head while tuning")
    parser.add_argument("--seed", type=int, default=0, help="draws the pairs and the batch order")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: a 20th of the validation pairs, no human test sets, no board")  # fmt: skip
    parser.add_argument("--output", type=Path, help="write the raw results here (JSON)")
    args = parser.parse_args(argv)

    from crm_core.compositional.heads import CompositionalHeads
    from crm_core.compositional.serving import ServingConfig
    from crm_train.compositional import sources as S
    from crm_train.compositional.evaluate import Judge
    from crm_train.compositional.train import CompositionalConfig, fit_quality, linear_params, pair_tensors
    from emit import emit

    torch.manual_seed(args.seed)
    judge = Judge(args.model, args.embeddings)
    spread, encoder = judge.heads.spread, judge.scorer.encoder
    max_tokens = int(judge.scorer.spec.max_length)
    config = dataclasses.replace(CompositionalConfig(), use_refsim=False)
    pool, train_pairs, val_pairs = draw_pairs(args.shared, args.pairs, args.seed, args.quick)
    sources = {s: sum(p.source == s for p in train_pairs) for s in sorted({p.source for p in train_pairs})}

    started = time.perf_counter()
    train_t = pair_tensors(train_pairs, judge.features, spread, config)
    val_t = pair_tensors(val_pairs, judge.features, spread, config)
    net, frozen_log = fit_quality(train_t, val_t, config)
    frozen_seconds = time.perf_counter() - started

    def heads_of(quality_net) -> CompositionalHeads:
        params = {k: v.detach().numpy() for k, v in linear_params(quality_net.quality, "quality").items()}
        params.update({"spread": spread, "voice_proj": np.zeros((1, 384), np.float32)})
        return CompositionalHeads(params, ServingConfig.off())

    results = {"args": {k: _portable(v) for k, v in vars(args).items()}, "training_pairs": sources,
               "validation_pairs": len(val_pairs), "max_tokens": max_tokens}  # fmt: skip
    results["frozen"] = {"fit": frozen_log, "seconds": round(frozen_seconds, 1),
                         **judge_report(judge, heads_of(net), args.shared, val_pairs, args.quick)}  # fmt: skip
    print("frozen", json.dumps({k: v for k, v in results["frozen"].items() if k != "fit"}), flush=True)

    n_layers = encoder.model.config.num_hidden_layers
    after = n_layers - args.layers
    layers = TunedLayers([copy.deepcopy(encoder.model.encoder.layer[i]).float() for i in range(after, n_layers)])
    started = time.perf_counter()
    texts = [t for p in train_pairs + val_pairs for t in (p.a, p.b)]
    states = TextStates(encoder, texts, after, max_tokens)
    states_seconds = time.perf_counter() - started
    train_r = pair_rows(train_pairs, states, judge.features, spread, train_t)
    val_r = pair_rows(val_pairs, states, judge.features, spread, val_t)
    tuned_net = copy.deepcopy(net)
    log = fine_tune(tuned_net, layers, states, train_r, val_r, config, args)
    del states
    frozen_texts = {p.prompt for p in pool + val_pairs} | set(S.alpaca_instructions(args.shared).values())
    for name in (*S.HUMAN_SOURCES, "pandalm"):
        test = S.human_pairs(args.shared, "pandalm" if name == "pandalm" else "test", (name,))
        frozen_texts |= {p.prompt for p in test}
    judge.scorer.store = TunedStore(judge.scorer.store, encoder, layers.eval(), after, max_tokens, frozen_texts)
    results["tuned"] = {"fit": log, "token_states_seconds": round(states_seconds, 1),
                        **judge_report(judge, heads_of(tuned_net), args.shared, val_pairs, args.quick)}  # fmt: skip
    print("tuned", json.dumps({k: v for k, v in results["tuned"].items() if k != "fit"}), flush=True)
    emit(results, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
