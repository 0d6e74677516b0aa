"""Development boards judged by a quality term that never saw them, and the quality fit's own luck.

The judge report's development data is the training half of AlpacaEval, the very prompts whose GPT-4-turbo
verdicts (on models off the board) trained the quality term; the evaluation half is new to it. Settings chosen on
the training half might then be chosen optimistically. Here the training half is cut into folds
(crm_train.compositional.sources.development_fold) and, for each fold, the quality term is fitted again, as the
shipped one was, on every verdict but that fold's; the result is a copy of the CRM folder with only its quality
term replaced (criteria readers, phrasing memory, reference weights and IDF table as shipped).
`benchmarks/judge_report.py --half training --fold K/N --model foldK=runs/quality-folds/fold-K-of-N` then judges
fold K with a quality term that never saw it. `--folds 0` refits on every verdict (it reproduces the shipped term),
`--first-seed` and `--seeds` refit with other seeds or serve the mean of several fits. Measured: no optimism, but
the board checks move with the fit's seed (docs/experiments.md, "How much of a board check is the quality fit's
luck").

    USL_EMBEDDINGS=data/embeddings uv run python training/experiments/quality_folds.py --folds 2
    USL_EMBEDDINGS=data/embeddings uv run python training/experiments/quality_folds.py --folds 0 --first-seed 3
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--model",
        type=Path,
        default=REPO / "space/models/crm-compositional",
        help="the compositional CRM whose quality term is refitted (its config, spread and encoder)",
    )
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared/data", help="the shared data folder")
    parser.add_argument("--embeddings", default=str(REPO / "data/embeddings"), help="the embedding store")
    parser.add_argument(
        "--folds",
        type=int,
        default=2,
        help="how many folds the training half is cut into (0: none left out, one folder 'all')",
    )
    parser.add_argument(
        "--first-seed",
        type=int,
        help="the seed of the (first) fit; default the CRM's own config seed, which reproduces its quality term",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=1,
        help="fit the quality term this many times (seeds first, first + 1, ...) and serve their mean "
        "(bagging), as one wider network: the same heads format, hidden units side by side",
    )
    parser.add_argument("--output-dir", type=Path, default=REPO / "runs/quality-folds",
                        help="where the folder copies go (fold-K-of-N or all, -seedS for another first seed, "
                        "-bagN for a mean of N fits) with fits.json")  # fmt: skip
    args = parser.parse_args(argv)
    if args.folds == 1 or args.folds < 0 or args.seeds < 1:
        parser.error("--folds is 0 or at least 2, --seeds at least 1")
    from crm_core.compositional.scorer import HEADS_FILE
    from crm_core.spec import CRMSpec
    from crm_train.compositional import sources as S
    from crm_train.compositional.config import CompositionalConfig
    from crm_train.compositional.evaluate import Judge
    from crm_train.compositional.train import boost_reference, fit_quality, pair_tensors
    from safetensors.numpy import load_file, save_file

    fields = {f.name for f in dataclasses.fields(CompositionalConfig)}
    shipped = CRMSpec.load(args.model).extra["config"]
    config = CompositionalConfig(**{k: v for k, v in shipped.items() if k in fields})
    judge = Judge(args.model, args.embeddings)
    spread = judge.heads.spread
    annotations = S.annotation_pairs(args.shared)  # as train.py splits them: a tenth of prompts for validation
    held = [S.annotation_validation(p.prompt) for p in annotations]
    validation = [p for p, h in zip(annotations, held, strict=True) if h] + S.human_pairs(args.shared, "validation")
    human = S.human_pairs(args.shared, "train") if config.use_human else []
    heads = load_file(args.model / HEADS_FILE)
    validation_t = pair_tensors(validation, judge.features, spread, config)
    fits = {}
    for fold in range(args.folds) if args.folds else [None]:
        kept = [p for p, h in zip(annotations, held, strict=True)
                if not h and (fold is None or S.development_fold(p.prompt, args.folds) != fold)]  # fmt: skip
        train = (kept if config.use_annotations else []) + human
        train_t = pair_tensors(train, judge.features, spread, config)
        rows = [i for i, p in enumerate(train) if p.reference is not None]
        nets, logs = [], []
        first = config.seed if args.first_seed is None else args.first_seed
        for seed in range(first, first + args.seeds):
            net, log = fit_quality(train_t, validation_t, dataclasses.replace(config, seed=seed))
            log["reference_boost"] = boost_reference(net, train_t, [train[i].prompt for i in rows], rows,
                                                     config.refsim_boost if config.use_refsim else 0.0)  # fmt: skip
            nets.append(net)
            logs.append(log)
        name = "all" if fold is None else f"fold-{fold}-of-{args.folds}"
        name += (f"-seed{first}" if first != config.seed else "") + (f"-bag{args.seeds}" if args.seeds > 1 else "")
        folder = args.output_dir / name
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(args.model, folder)
        save_file({**heads, **mean_network(nets)}, str(folder / HEADS_FILE))
        fits[folder.name] = {"annotation_pairs": len(kept), "left_out": sum(not h for h in held) - len(kept),
                             "seeds": logs}  # fmt: skip
        print(folder, len(kept), [log["best_val_loss"] for log in logs], flush=True)
    (args.output_dir / "fits.json").write_text(json.dumps(fits, indent=2) + "\n", encoding="utf-8")
    return 0


def mean_network(nets: list) -> dict:
    """The mean of several fitted quality networks (Linear, GELU, Linear) as one: their hidden units side by side,
    the output layer's weights and bias and the reference weight divided by their number (exactly the mean)."""
    import numpy as np
    from crm_train.compositional.train import linear_params

    layers = [{k: v.numpy() for k, v in linear_params(net.quality, "quality").items()} for net in nets]
    k = len(nets)
    return {
        "quality.0.weight": np.concatenate([p["quality.0.weight"] for p in layers]),
        "quality.0.bias": np.concatenate([p["quality.0.bias"] for p in layers]),
        "quality.1.weight": np.concatenate([p["quality.1.weight"] for p in layers], axis=1) / k,
        "quality.1.bias": np.mean([p["quality.1.bias"] for p in layers], axis=0),
        "refsim_weight": np.array([np.mean([net.refsim_weight.item() for net in nets])], np.float32),
    }


if __name__ == "__main__":
    sys.exit(main())
