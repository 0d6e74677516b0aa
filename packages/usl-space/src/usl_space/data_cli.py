"""usl-data: get public LLM responses and build benches from them.

usl-data pull   download AlpacaEval model outputs (or copy them from a local folder) into a cache
usl-data build  turn pulled or local outputs into a bench folder (Parquet + manifest)
usl-data info   summarise any bench-like folder: queries, models, coverage, baseline
usl-data sides  precompute a bench's response side into a content-keyed store (the Space loads it at start)
usl-data publish-sides  upload such a store to a Hub dataset repo (dry-run available)
usl-data generate  a model's answers to a bench's prompts (or your own) from an OpenAI-compatible endpoint
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import cast
from urllib.parse import urlparse

from crm_core.compositional.scorer import CompositionalScorer
from crm_core.data import (
    ALPACA_EVAL_BASELINE,
    detect_layout,
    open_bench,
    read_models_file,
    skipping_invalid,
    with_answers,
)
from crm_core.guard import at_least, check_output, fail, positive_int
from crm_core.paths import cache_dir

from usl_space.catalog import KNOWN_BENCHES, default_models, model_facts
from usl_space.pull import ALPACA_EVAL_N_QUERIES, ALPACA_EVAL_RESULTS_URL, pull


def _models_from_args(args: argparse.Namespace) -> list[str] | None:
    if args.models and args.models_file:
        raise SystemExit("usl-data: give --models or --models-file, not both")
    if args.models_file:
        return read_models_file(args.models_file)
    return args.models


def _cmd_pull(args: argparse.Namespace) -> int:
    models = _models_from_args(args) or default_models()
    cache = Path(args.cache_dir) if args.cache_dir else cache_dir() / "alpaca_eval"
    source = Path(args.source) if args.source else None
    # the cache is written into (partial files replaced): never the source, a folder inside it or one holding it
    check_output(cache, {"--from": source}, flag="--cache-dir", folder=True)
    started = time.perf_counter()
    report = pull(
        models,
        cache,
        args.baseline,
        base_url=args.base_url,
        local_source=source,
        expect_queries=args.expect_queries or None,
        retries=args.retries,
        timeout=args.timeout,
        progress=not args.quiet,
    )
    summary = {
        "cache_dir": str(cache),
        "downloaded": report.downloaded,
        "cached": report.cached,
        "failed": report.failed,
        "missing_queries": report.missing_queries,
        "seconds": round(time.perf_counter() - started, 2),
    }
    print(json.dumps(summary, indent=2))
    for model, reason in report.failed.items():
        print(f"usl-data pull: {model}: {reason}", file=sys.stderr)
    return 1 if report.failed else 0


def _cmd_build(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    answers = args.answers or []
    source = Path(args.source) if args.source else (None if answers else cache_dir() / "alpaca_eval")
    models = _models_from_args(args)
    inputs = {"--from": source, **{f"--answers {n}": a for n, a in enumerate(answers, 1)}}
    check_output(args.output, inputs, folder=True)  # before reading: no input is ever replaced
    with skipping_invalid("usl-data build", args.skip_invalid):
        bench = open_bench(source, models=models, baseline=None if answers else args.baseline) if source else None
        if answers:  # the models of `usl-data generate` files join the bench (or make one from your own prompts)
            bench = with_answers(bench, answers, args.baseline, args.name or "my_prompts")
    assert bench is not None
    if args.name:
        bench.name = args.name
    bench.description = args.description if args.description is not None else KNOWN_BENCHES.get(bench.name, "")
    bench.model_info = model_facts(bench.models)
    bench.save(args.output)
    summary = {**_summary(bench), "output": str(args.output), "seconds": round(time.perf_counter() - started, 2)}
    print(json.dumps(summary, indent=2))
    return 0


def _cmd_sides(args: argparse.Namespace) -> int:
    """The response side of a bench's every response, into a content-keyed store (usl_space.response_store), built
    as the app builds it (usl_space.instant.bench_side: with the bench's own panel where it lacks the CRM's)."""
    from usl_space.instant import bench_side
    from usl_space.loading import open_data, open_scorer
    from usl_space.response_store import ResponseStore

    started = time.perf_counter()
    check_output(args.output, {"--data": args.data, "--model": args.model}, folder=True)
    scorer = open_scorer(args.model, "auto")
    if not getattr(scorer.spec, "instant", False):
        raise ValueError("usl-data sides needs a compositional CRM (its response side does not depend on criteria)")
    bench = open_data(args.data, args.baseline)
    query, outputs = bench.instructions(), bench.outputs()
    store = ResponseStore(args.output)
    _, panel, computed = bench_side(cast(CompositionalScorer, scorer), query, outputs, not args.quiet, store)
    print(json.dumps({"output": str(args.output), "responses": len(outputs), "computed": computed,
                      "stored": len(store), "own_panel": panel,
                      "seconds": round(time.perf_counter() - started, 1)}, indent=2))  # fmt: skip
    return 0


def _cmd_publish_sides(args: argparse.Namespace) -> int:
    from crm_core.hub import DryRunApi

    from usl_space.response_store import publish

    url = publish(args.store, args.repo_id, DryRunApi() if args.dry_run else None, args.private)
    print(url if not args.dry_run else f"dry run: nothing sent to {url}")
    return 0


def _cmd_generate(args: argparse.Namespace) -> int:
    """usl_space.generate; Ctrl-C once stops asking (the answers in flight are saved), twice stops at once."""
    import signal
    import threading

    from usl_space.generate import GenerateSettings, generate, print_progress, read_prompts
    from usl_space.loading import open_data

    if args.temperature is not None and not 0 <= args.temperature <= 2:
        raise ValueError(f"--temperature: expected a number from 0 to 2, got {args.temperature}")
    if args.timeout <= 0 or args.timeout != args.timeout:
        raise ValueError(f"--timeout: expected a positive number of seconds, got {args.timeout}")
    endpoint = urlparse(args.endpoint)
    if endpoint.scheme not in ("http", "https") or not endpoint.netloc:  # else every request fails after retries
        raise ValueError(f"--endpoint: expected an http(s) URL such as http://127.0.0.1:8000/v1, got {args.endpoint!r}")
    if args.api_key_env and not os.environ.get(args.api_key_env):
        raise ValueError(f"--api-key-env {args.api_key_env}: that environment variable is not set")
    output = check_output(args.output, {"--data": args.data, "--prompts": args.prompts})
    prompts = read_prompts(Path(args.prompts)) if args.prompts else sorted(open_data(args.data).instructions().items())
    settings = GenerateSettings(args.endpoint, args.model, args.api_key_env, args.system, args.temperature,
                                args.max_tokens, args.concurrency, args.retries, args.timeout, args.name)  # fmt: skip
    stop = threading.Event()

    def interrupted(_signum, _frame):
        if stop.is_set():
            raise KeyboardInterrupt
        print("\nusl-data generate: stopping: no new requests; the answers in flight are saved (Ctrl-C again: now)",
              file=sys.stderr)  # fmt: skip
        stop.set()

    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        report = generate(prompts, output, settings, None if args.quiet else print_progress, stop)
    finally:
        signal.signal(signal.SIGINT, previous)
    if not args.quiet:
        print(file=sys.stderr)
    summary = {"output": str(output), "prompts": len(prompts), "already_saved": report.already,
               "saved_now": report.saved, "retried": report.retried, "failed": len(report.failed),
               "stopped": stop.is_set(), "unreachable": bool(report.unreachable),
               "seconds": round(report.seconds, 1)}  # fmt: skip
    print(json.dumps(summary, indent=2))
    for idx, reason in list(report.failed.items())[:10]:
        print(f"usl-data generate: prompt {idx}: {reason} (a rerun asks again)", file=sys.stderr)
    if report.unreachable:
        print(f"usl-data generate: {args.endpoint} could not be reached ({report.unreachable}) and nothing was "
              "answered, so no further prompt was asked; a rerun continues once it is up", file=sys.stderr)  # fmt: skip
    return 130 if stop.is_set() else (1 if report.failed else 0)


def _summary(bench) -> dict:
    manifest = bench.manifest()
    manifest.pop("format_version")
    return manifest


def _cmd_info(args: argparse.Namespace) -> int:
    bench = open_bench(args.source)
    summary = {"layout": detect_layout(args.source), **_summary(bench)}
    if args.coverage:
        summary["coverage"] = bench.coverage().to_dicts()
    print(json.dumps(summary, indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="usl-data", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def add_models(p: argparse.ArgumentParser, default_help: str) -> None:
        p.add_argument("--models", nargs="+", metavar="MODEL", help=f"model names to include; {default_help}")
        p.add_argument("--models-file", metavar="FILE", help="a file with one model name per line ('#' comments)")

    p = sub.add_parser(
        "pull",
        help="download public AlpacaEval model outputs into a cache (resumable, verified)",
        description="Download each model's AlpacaEval model_outputs.json into CACHE/<model>/, "
        "resuming partial downloads and verifying every file (it parses; its instructions are the "
        "baseline's) before it gets its final name. Exit status 1 if any model failed.",
    )
    add_models(p, "default: the leaderboard's default models (usl_space/models.csv)")
    p.add_argument(
        "--baseline",
        default=ALPACA_EVAL_BASELINE,
        help="pulled first; its instructions are the reference the others must match (default: %(default)s)",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where outputs go (default: $USL_CACHE_DIR, else ~/.cache/usl, plus /alpaca_eval)",
    )
    p.add_argument(
        "--from",
        dest="source",
        metavar="DIR",
        help="copy from a local AlpacaEval folder (combined instructions.jsonl + model_outputs.jsonl.gz, "
        "or <model>/model_outputs.json folders) instead of downloading",
    )
    p.add_argument(
        "--base-url",
        default=ALPACA_EVAL_RESULTS_URL,
        help="URL whose <model>/model_outputs.json files are fetched (default: AlpacaEval's results on GitHub)",
    )
    p.add_argument(
        "--expect-queries",
        type=int,
        default=ALPACA_EVAL_N_QUERIES,
        help="distinct instructions the baseline must have; 0 to skip the check (default: %(default)s)",
    )
    p.add_argument("--retries", type=int, default=3, help="retries per file on network errors (default: %(default)s)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds before a stalled connection is retried")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd_pull)

    p = sub.add_parser(
        "build",
        help="write a bench folder (Parquet + manifest) from pulled or local outputs",
        description="Read an AlpacaEval folder (either layout) or an MT-bench folder and save it as a "
        "bench: queries.parquet, responses.parquet, manifest.json, written atomically.",
    )
    p.add_argument(
        "--from",
        dest="source",
        metavar="DIR",
        help="the outputs to read (default: the pull cache, ~/.cache/usl/alpaca_eval)",
    )
    p.add_argument("--output", required=True, metavar="DIR", help="the bench folder to write (replaced whole; only "
                   "a new or empty folder, or one usl-data wrote, is replaced)")  # fmt: skip
    add_models(p, "default: default_models.txt in the folder if any, else every model found")
    p.add_argument(
        "--baseline",
        help="the model every other is judged against (default: gpt4_1106_preview for AlpacaEval, gpt-4 for MT-bench)",
    )
    p.add_argument("--answers", nargs="+", metavar="FILE.jsonl", help="answer files written by usl-data generate, "
                   "one model each: added to the --from bench (each answer placed by its instruction), or without "
                   "--from a bench of your own prompts made from them")  # fmt: skip
    p.add_argument(
        "--name", help="the bench's name (default: alpaca_eval or mt_bench; my_prompts from --answers alone)"
    )
    p.add_argument("--description", help="what the bench's prompts are, as the app's bench picker shows it (default: "
                   "the shared benches' own, e.g. 'requests to criticise governments, ...' for speechmap)")  # fmt: skip
    p.add_argument("--skip-invalid", action="store_true", help="go on without rows that fail validation (each is "
                   "still reported on stderr as file:line: field: ...); by default any stops the build")  # fmt: skip
    p.set_defaults(func=_cmd_build)

    p = sub.add_parser(
        "sides",
        help="precompute a bench's response side into a content-keyed store (what the Space loads at start)",
        description="Compute every response's criteria-free side with a compositional CRM into STORE "
        "(part-*.npz shards keyed by content; rows already there are reused). Publish it with publish-sides; "
        "the Space reads it through USL_RESPONSE_STORE.",
    )
    p.add_argument("--data", required=True, metavar="DIR", help="a bench or AlpacaEval-style folder (as usl-rank)")
    p.add_argument("--model", metavar="DIR", help="the compositional CRM (default: the shipped one)")
    p.add_argument("--output", required=True, metavar="STORE", help="the store folder (created or added to)")
    p.add_argument(
        "--baseline", help="the bench's baseline, where it is not gpt4_1106_preview (rows do not depend on it)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd_sides)

    p = sub.add_parser(
        "publish-sides",
        help="upload a response store to a Hub dataset repo (CC BY-NC, as AlpacaEval's outputs)",
        description="Upload STORE's shards with a dataset card to the Hub dataset ORG/NAME. The token comes from "
        "$HF_TOKEN or the saved login; --dry-run lists what would be sent, with no network.",
    )
    p.add_argument("--store", required=True, metavar="STORE", help="the store folder (usl-data sides)")
    p.add_argument("--repo-id", required=True, metavar="ORG/NAME", help="the Hub dataset repo")
    p.add_argument("--private", action="store_true", help="create the repo as private")
    p.add_argument("--dry-run", action="store_true", help="show what would be uploaded; no network")
    p.set_defaults(func=_cmd_publish_sides)

    p = sub.add_parser(
        "info",
        help="summarise a bench-like folder",
        description="Print a JSON summary of a bench folder, AlpacaEval folder or MT-bench folder.",
    )
    p.add_argument("source", metavar="DIR", help="the folder to describe")
    p.add_argument("--coverage", action="store_true", help="also list answered / missing / empty per model")
    p.set_defaults(func=_cmd_info)

    p = sub.add_parser(
        "generate",
        help="answers from an OpenAI-compatible endpoint, saved as they arrive (a rerun continues)",
        description="Ask an OpenAI-compatible /v1/chat/completions endpoint (vLLM, llama.cpp, Ollama, TGI, "
        "transformers serve, a hosted API) for a model's answer to every prompt of a bench or of your own prompt "
        "file, and append each to a JSON-lines file the moment it arrives. A rerun asks only for what is missing; "
        "Ctrl-C stops asking, lets the answers in flight land, and a rerun continues.",
    )
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--data", metavar="DIR", help="a bench or AlpacaEval-style folder whose prompts to answer")
    where.add_argument("--prompts", metavar="FILE", help="your own prompts: JSON lines {instruction} or a CSV with "
                       "an 'instruction' column")  # fmt: skip
    p.add_argument("--endpoint", required=True, metavar="URL", help="the server's base URL, e.g. "
                   "http://127.0.0.1:8000/v1")  # fmt: skip
    p.add_argument("--model", required=True, help="the model name the server knows")
    p.add_argument("--name", help="the name the answers carry on the board (default: --model)")
    p.add_argument("--api-key-env", metavar="VAR", help="the environment variable holding the API key (the key is "
                   "never written anywhere; default: no key)")  # fmt: skip
    p.add_argument("--system", help="a system prompt sent before every prompt")
    p.add_argument("--temperature", type=float, help="sampling temperature (default: the server's)")
    p.add_argument("--max-tokens", type=positive_int, help="the most tokens an answer may have (default: the server's)")
    p.add_argument("--concurrency", type=at_least(1, 64), default=4, help="requests at once (default: %(default)s)")
    p.add_argument("--retries", type=at_least(0, 20), default=5, help="retries of a request after a 429, 5xx, "
                   "timeout or dropped connection, with exponential backoff (default: %(default)s)")  # fmt: skip
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per request (default: %(default)s)")
    p.add_argument("--output", required=True, metavar="FILE.jsonl", help="the answers file (appended to; a rerun "
                   "continues it)")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=_cmd_generate)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except Exception as error:  # an expected error becomes one line; a bug stays a traceback
        return fail(f"usl-data {args.command}", error, 2)


if __name__ == "__main__":
    sys.exit(main())
