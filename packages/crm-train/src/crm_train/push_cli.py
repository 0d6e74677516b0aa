"""crm-push: upload a CRM checkpoint folder to a Hugging Face Hub model repo, with a generated model card.

    uv run crm-push --model DIR --repo-id ORG/NAME [--private] [--dry-run]

The token comes from --token, $HF_TOKEN or `huggingface-cli login`. --dry-run stages the upload and lists the
files and the card without contacting the Hub.
"""

from __future__ import annotations

import argparse
import sys

from crm_core.hub import DryRunApi, push_checkpoint


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="crm-push", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--model", required=True, metavar="DIR", help="the checkpoint folder (with crm.json)")
    parser.add_argument("--repo-id", required=True, metavar="ORG/NAME", help="the Hub model repo to upload to")
    parser.add_argument("--private", action="store_true", help="create the repo as private")
    parser.add_argument("--token", help="Hub token (default: $HF_TOKEN or the saved login)")
    parser.add_argument("--dry-run", action="store_true", help="show what would be uploaded; no network")
    args = parser.parse_args(argv)
    try:
        url = push_checkpoint(args.model, args.repo_id, token=args.token, private=args.private,
                              api=DryRunApi() if args.dry_run else None)  # fmt: skip
    except (FileNotFoundError, ValueError) as error:
        print(f"crm-push: {error}", file=sys.stderr)
        return 1
    print(url if not args.dry_run else f"dry run: nothing sent to {url}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
