"""crm-train: train a Customizable Reward Model from one YAML config, on one device or many.

    uv run crm-train --config training/configs/crm-minilm.yaml [--key value ...]
    uv run accelerate launch --config_file training/accelerate/multi_gpu.yaml -m crm_train.train_cli --config ...

Every config field can be overridden on the command line; the resolved config is saved with the checkpoint.
A config with `kind: compositional` fits the compositional CRM instead (crm_train.compositional.train; its
fields are listed by `crm-train --config THAT.yaml --help`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path

import yaml
from crm_core.data import DataValidationError

from crm_train.cross_encoder.config import TrainConfig, add_config_arguments, config_kind, load_config


def config_class(kind: str) -> type:
    if kind == "compositional":
        from crm_train.compositional.config import CompositionalConfig

        return CompositionalConfig
    if kind != "cross-encoder":
        raise ValueError(f"kind must be 'cross-encoder' or 'compositional', got {kind!r}")
    return TrainConfig


def overwrites_own_config(path: Path, config: TrainConfig) -> bool:
    """Whether the cross-encoder run would write its resolved config over `path` with different text (a config
    kept inside the output folder it names; the file the run saved itself, passed back unchanged, is fine)."""
    target = Path(config.output_dir) / "train_config.yaml"
    if not target.exists() or not path.exists() or not path.resolve().samefile(target.resolve()):
        return False
    with tempfile.TemporaryDirectory() as tmp:
        config.save(Path(tmp) / "resolved.yaml")
        return (Path(tmp) / "resolved.yaml").read_bytes() != path.read_bytes()


def build_parser(config_cls: type = TrainConfig) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="crm-train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--config", metavar="FILE.yaml", help="the run's config (training/configs/*.yaml)")
    parser.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    add_config_arguments(parser, config_cls)
    return parser


def main(argv: list[str] | None = None) -> int:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config")
    try:
        config_cls = config_class(config_kind(pre.parse_known_args(argv)[0].config))
    except ValueError as error:
        print(f"crm-train: {error}", file=sys.stderr)
        return 2
    args = build_parser(config_cls).parse_args(argv)
    overrides = {
        key.removeprefix("override_"): value
        for key, value in vars(args).items()
        if key.startswith("override_") and value is not None
    }
    try:
        config = load_config(args.config, overrides, config_cls)
    except (ValueError, FileNotFoundError) as error:
        print(f"crm-train: {error}", file=sys.stderr)
        return 2
    if args.print_config:
        print(yaml.safe_dump(dataclasses.asdict(config), sort_keys=False), end="")
        return 0
    if args.config and config_cls is TrainConfig and overwrites_own_config(Path(args.config), config):
        print(f"crm-train: --config {args.config} is the run's own train_config.yaml in its output_dir, which the run "
              "rewrites with the resolved config (your comments and layout lost); copy it elsewhere and pass that",
              file=sys.stderr)  # fmt: skip
        return 2
    if config_cls is not TrainConfig:
        from crm_train.compositional.train import train as train_compositional

        try:
            folder = train_compositional(config)
        except (DataValidationError, FileNotFoundError, FileExistsError, ValueError) as error:
            print(f"crm-train: {error}", file=sys.stderr)
            return 1
        print(json.dumps({"output_dir": config.output_dir, "best": str(folder)}))
        return 0
    from crm_train.cross_encoder.trainer import train  # heavy imports only when training

    try:
        state = train(config)
    except (DataValidationError, FileNotFoundError, FileExistsError, ValueError) as error:
        print(f"crm-train: {error}", file=sys.stderr)
        return 1
    from accelerate import PartialState

    if PartialState().is_main_process:
        print(json.dumps({"output_dir": config.output_dir, **state}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
