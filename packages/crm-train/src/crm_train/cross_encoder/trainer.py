"""The CRM training loop: plain Accelerate, top to bottom.

Output folder:
  best/               the best checkpoint by validation loss (a CRM folder: load_crm reads it)
  state/              resumable state (model, optimizer, scheduler, RNGs, trainer_state.json), every save_steps
  metrics.jsonl       one JSON object per log or validation event
  train_config.yaml   the resolved config
  process-N.json      per process: samples trained on, a fingerprint of them, a hash of the final weights
                      (shards must differ across processes, weights must not)
Resuming reproduces the uninterrupted run: the data order and noise are functions of (seed, epoch), the RNG
states come back from state/, and the batches of the interrupted epoch that were already used are skipped.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import shutil
import time
from pathlib import Path
from typing import Any, cast

import polars as pl
import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from crm_core.atomic import atomic_dir
from crm_core.cross_encoder.model import save_crm
from crm_core.cross_encoder.prompts import PromptBuilder
from torch.utils.data import DataLoader
from tqdm.auto import tqdm
from transformers import get_cosine_schedule_with_warmup

from crm_train.cross_encoder.config import TrainConfig
from crm_train.cross_encoder.examples import build_examples, collate, encode_examples, read_pairs, split_by_prompt
from crm_train.cross_encoder.modeling import build_model, classification_head
from crm_train.cross_encoder.noise import read_noise_pool

STATE_FILE = "trainer_state.json"


def batch_loss(model: Any, batch: dict[str, torch.Tensor], objective: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-example losses and correctness. Pairwise: cross-entropy over the head's labels. Pointwise:
    Bradley-Terry, -log sigmoid(score(winner) - score(loser)); winners are the first half of the batch."""
    labels = batch["labels"]
    inputs = {k: v for k, v in batch.items() if k not in ("labels", "length_feature")}
    logits = model(**inputs).logits.float()
    if objective == "pairwise":
        return torch.nn.functional.cross_entropy(logits, labels, reduction="none"), logits.argmax(-1) == labels
    scores = logits[:, 0]
    if logits.shape[1] == 2:  # score + length slope x length feature, as crm_core.cross_encoder.model.point_scores
        scores = scores + logits[:, 1] * batch["length_feature"]
    margin = scores[: len(labels)] - scores[len(labels) :]
    return -torch.nn.functional.logsigmoid(margin), margin > 0


def parameter_groups(model: Any, config: TrainConfig) -> list[dict[str, Any]]:
    """The classification head at head_learning_rate (when set), everything else at learning_rate."""
    if config.head_learning_rate is None:
        return [{"params": list(model.parameters()), "lr": config.learning_rate}]
    head = list(classification_head(model)[1].parameters())
    body = [p for p in model.parameters() if all(p is not h for h in head)]
    return [{"params": body, "lr": config.learning_rate}, {"params": head, "lr": config.head_learning_rate}]


def evaluate(model: Any, loader: DataLoader, accelerator: Accelerator, objective: str) -> dict[str, float]:
    """Validation loss and accuracy, reduced over every process (duplicated padding samples dropped)."""
    model.eval()
    losses, correct = [], []
    with torch.no_grad():
        for batch in loader:
            loss, right = batch_loss(model, batch, objective)
            loss, right = accelerator.gather_for_metrics((loss, right))
            losses.append(loss.cpu())
            correct.append(right.cpu())
    model.train()
    return {"val/loss": torch.cat(losses).mean().item(), "val/accuracy": torch.cat(correct).float().mean().item()}


def train(config: TrainConfig) -> dict[str, Any]:  # noqa: C901 (one loop read top to bottom, open-instruct style)
    """Run (or resume) training as configured; return the final trainer state."""
    accelerator = Accelerator(
        gradient_accumulation_steps=config.gradient_accumulation_steps,
        mixed_precision=config.mixed_precision,
        log_with="tensorboard" if importlib.util.find_spec("tensorboard") else None,
        project_dir=config.output_dir,
    )
    out = Path(config.output_dir)
    main = accelerator.is_main_process
    if main:
        out.mkdir(parents=True, exist_ok=True)
        config.save(out / "train_config.yaml")
    log = accelerator.print
    set_seed(config.seed)

    # --- data -----------------------------------------------------------------------------------------------
    pairs = read_pairs(config.train_files, log, config.skip_invalid)
    if config.validation_files:
        train_pairs, val_pairs = pairs, read_pairs(config.validation_files, log, config.skip_invalid)
    else:
        train_pairs, val_pairs = split_by_prompt(pairs, config.validation_fraction, config.seed)
    if config.sources:
        train_pairs = train_pairs.filter(pl.col("source").is_in(config.sources))
        val_pairs = val_pairs.filter(pl.col("source").is_in(config.sources))
        if not train_pairs.height:
            raise ValueError(f"no training pairs from sources {config.sources}")
    train_pairs = train_pairs.head(config.max_train_samples) if config.max_train_samples else train_pairs
    val_pairs = val_pairs.head(config.max_validation_samples) if config.max_validation_samples else val_pairs
    pool = sorted({c for cs in pairs["criteria"].to_list() for c in cs})
    for path in config.noise_pool_files:
        pool += read_noise_pool(path)
    log(f"pairs: {train_pairs.height} train, {val_pairs.height} validation; noise pool {len(pool)} criteria")

    # --- model, optimiser, schedule ---------------------------------------------------------------------------
    model, tokenizer, spec = build_model(config)
    trained_on = set(train_pairs["source"].drop_nulls().to_list()) if "source" in train_pairs.columns else set()
    spec.extra["training_data"] = sorted(trained_on | set(spec.extra["training_data"]))  # licences in the card
    builder = PromptBuilder(tokenizer, spec.prompt_format)
    pad_id = tokenizer.pad_token_id

    def make_loader(epoch: int, train: bool) -> DataLoader:
        frame = train_pairs if train else val_pairs
        examples, stats = build_examples(frame, config, epoch, pool, train=train)
        encoded, cut = encode_examples(examples, builder, config.objective)
        log(f"{'train' if train else 'validation'} epoch {epoch}: {dict(stats)}, cut to fit: {cut}")
        generator = torch.Generator().manual_seed(config.seed * 100_003 + epoch)
        return DataLoader(cast(Any, encoded), batch_size=config.per_device_batch_size, shuffle=train,
                          generator=generator,
                          collate_fn=lambda batch: collate(batch, pad_id))  # fmt: skip

    val_loader = accelerator.prepare(make_loader(0, train=False)) if val_pairs.height else None
    first_loader = accelerator.prepare(make_loader(0, train=True))
    steps_per_epoch = math.ceil(len(first_loader) / config.gradient_accumulation_steps)
    total_steps = config.epochs * steps_per_epoch
    if config.max_steps:
        total_steps = min(total_steps, config.max_steps)
    optimizer = torch.optim.AdamW(parameter_groups(model, config), weight_decay=config.weight_decay)
    scheduler = get_cosine_schedule_with_warmup(optimizer, round(config.warmup_ratio * total_steps), total_steps)
    model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)

    # --- resume -------------------------------------------------------------------------------------------------
    state: dict[str, Any] = {"step": 0, "best_val_loss": None, "best_step": None, "evals_without_improvement": 0,
                             "done": False}  # fmt: skip
    if config.resume and (out / "state" / STATE_FILE).is_file():
        accelerator.load_state(str(out / "state"))
        state = json.loads((out / "state" / STATE_FILE).read_text())
        log(f"resumed from {out / 'state'} at step {state['step']}")
    if accelerator.trackers == [] and accelerator.log_with:
        accelerator.init_trackers("crm")

    def record(event: dict[str, Any]) -> None:
        if main:
            with open(out / "metrics.jsonl", "a", encoding="utf-8") as handle:
                handle.write(json.dumps(event) + "\n")
        accelerator.log({k: v for k, v in event.items() if isinstance(v, float)}, step=event["step"])

    def save_state() -> None:
        accelerator.save_state(str(out / "state"))
        if main:
            (out / "state" / STATE_FILE).write_text(json.dumps(state))
        accelerator.wait_for_everyone()

    def save_best() -> None:
        weights = accelerator.get_state_dict(model)  # every process takes part (gathers FSDP shards)
        if main:
            with atomic_dir(out / "best") as folder:
                save_crm(accelerator.unwrap_model(model), tokenizer, spec, folder, state_dict=weights)
        accelerator.wait_for_everyone()

    def validate() -> bool:
        """Validate, keep the best checkpoint; return True when early stopping says stop."""
        if val_loader is None:
            return False
        metrics = evaluate(model, val_loader, accelerator, config.objective)
        record({"step": state["step"], **metrics})
        if state["best_val_loss"] is None or metrics["val/loss"] < state["best_val_loss"]:
            state.update(best_val_loss=metrics["val/loss"], best_step=state["step"], evals_without_improvement=0)
            spec.extra["metrics"] = {**metrics, "step": state["step"]}
            save_best()
            return False
        state["evals_without_improvement"] += 1
        patience = config.early_stopping_patience
        return patience is not None and state["evals_without_improvement"] >= patience

    # --- the loop -------------------------------------------------------------------------------------------------
    seen: dict[str, Any] = {"batches": 0, "samples": 0, "fingerprint": hashlib.sha256()}
    model.train()
    bar = tqdm(total=total_steps, initial=state["step"], desc="training", unit="step", disable=not main)
    running, started = [], time.perf_counter()
    stop = state["done"]
    epoch = state["step"] // steps_per_epoch
    while not stop and state["step"] < total_steps:
        loader = first_loader if epoch == 0 else accelerator.prepare(make_loader(epoch, train=True))
        done_in_epoch = state["step"] - epoch * steps_per_epoch
        if done_in_epoch:
            loader = accelerator.skip_first_batches(loader, done_in_epoch * config.gradient_accumulation_steps)
        for batch in loader:
            seen["batches"] += 1
            seen["samples"] += len(batch["labels"])
            seen["fingerprint"].update(batch["input_ids"].numpy().tobytes())
            with accelerator.accumulate(model):
                losses, _ = batch_loss(model, batch, config.objective)
                loss = losses.mean()
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), config.max_grad_norm)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            running.append(loss.detach())
            if not accelerator.sync_gradients:
                continue
            state["step"] += 1
            bar.update(1)
            step = state["step"]
            if step % config.logging_steps == 0 or step == total_steps:
                mean_loss = accelerator.gather(torch.stack(running).mean()).mean().item()
                record({"step": step, "epoch": epoch, "train/loss": mean_loss, "lr": scheduler.get_last_lr()[0],
                        "seconds": round(time.perf_counter() - started, 2)})  # fmt: skip
                bar.set_postfix(loss=f"{mean_loss:.4f}")
                running = []
            if step % config.eval_steps == 0 or step == total_steps:
                stop = validate()
            if step % config.save_steps == 0 or step == total_steps or stop:
                state["done"] = stop or step == total_steps
                save_state()
            if config.crash_after_step == step:
                os._exit(3)  # as a crash would: no cleanup, no final save
            if stop or step >= total_steps:
                break
        epoch += 1
    bar.close()
    if not (out / "best").exists():  # no validation data: the final weights are the result
        save_best()
    weights = hashlib.sha256()
    for name, tensor in sorted(accelerator.unwrap_model(model).state_dict().items()):
        weights.update(name.encode() + tensor.detach().float().cpu().numpy().tobytes())
    summary = {"rank": accelerator.process_index, "num_processes": accelerator.num_processes,
               "batches": seen["batches"], "samples": seen["samples"],
               "fingerprint": seen["fingerprint"].hexdigest(), "weights_sha256": weights.hexdigest()}  # fmt: skip
    (out / f"process-{accelerator.process_index}.json").write_text(json.dumps(summary) + "\n")
    accelerator.wait_for_everyone()
    accelerator.end_training()
    if main and state["done"]:
        shutil.copy2(out / "train_config.yaml", out / "best" / "train_config.yaml")
    return state
