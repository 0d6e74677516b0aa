"""crm-train: train a Customizable Reward Model from one YAML config, on one device or many.

    uv run crm-train --config training/configs/crm-minilm.yaml [--key value ...]
    uv run accelerate launch --config_file training/accelerate/multi_gpu.yaml -m crm_train.train_cli --config ...

Every config field can be overridden on the command line; the resolved config is saved with the checkpoint.
"""

from __future__ import annotations

import argparse
import json
import sys

from crm_core.data import DataValidationError

from crm_train.config import TrainConfig, add_config_arguments, load_config


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="crm-train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--config", metavar="FILE.yaml", help="the run's config (training/configs/*.yaml)")
    parser.add_argument("--print-config", action="store_true", help="print the resolved config and exit")
    add_config_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    overrides = {
        key.removeprefix("override_"): value
        for key, value in vars(args).items()
        if key.startswith("override_") and value is not None
    }
    try:
        config: TrainConfig = load_config(args.config, overrides)
    except (ValueError, FileNotFoundError) as error:
        print(f"crm-train: {error}", file=sys.stderr)
        return 2
    if args.print_config:
        print(config.to_yaml(), end="")
        return 0
    from crm_train.trainer import train  # heavy imports only when training

    try:
        state = train(config)
    except (DataValidationError, FileNotFoundError, ValueError) as error:
        print(f"crm-train: {error}", file=sys.stderr)
        return 1
    from accelerate import PartialState

    if PartialState().is_main_process:
        print(json.dumps({"output_dir": config.output_dir, **state}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
