"""usl-rank: rank a bench's models under your criteria with a CRM; prints one JSON object.

  uv run usl-rank --data ../shared/data/usl/alpaca_eval --criteria "Prefer short, concise answers." --queries 100

The object's `rows` are the board; `own_panel` names the models whose answers each answer's quality was compared
with on a bench without the CRM's reference panel (the top half of a first, criteria-free board; null where the
bench holds the named panel or the CRM compares with none).

Scores are cached (see --cache), so a repeated or overlapping request costs nothing. Under
`accelerate launch --num_processes N` the queries are split across the processes, which score into the same
cache; the main process then writes the leaderboard.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from crm_core.atomic import write_result
from crm_core.data import skipping_invalid, without_nan
from crm_core.guard import at_least, check_output, fail, positive_int, read_text

from usl_space.board import fewer_answers
from usl_space.request import RankRequest
from usl_space.topics import FREE_TEXT_THRESHOLD, TOPICS

if TYPE_CHECKING:  # imported when ranking, not for --help
    from usl_space.board import Leaderboard
    from usl_space.engine import Engine

MIN_BOOTSTRAP = 100  # fewer resamples give intervals and Rank (UB) that move with the seed
MAX_ID_FILE_BYTES = 10_000_000  # a million ids, far more than any bench's queries
MAX_BOOTSTRAP = 100_000  # more changes no digit shown and takes minutes and gigabytes


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="usl-rank", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--data", required=True, metavar="DIR",
                        help="a bench folder (usl-data build) or an AlpacaEval-style folder (instructions.jsonl + "
                             "model_outputs.jsonl.gz, optional default_models.txt)")  # fmt: skip
    parser.add_argument("--baseline", metavar="NAME", help="the model every other is judged against (default: "
                        "the bench's own; gpt4_1106_preview for AlpacaEval folders)")  # fmt: skip
    parser.add_argument("--model", metavar="DIR", help="CRM checkpoint folder (default: the CRM in space/models/)")
    parser.add_argument("--backend", choices=["auto", "onnx", "torch"], default="auto",
                        help="auto: ONNX Runtime when the folder has model.onnx, else PyTorch")  # fmt: skip
    parser.add_argument("--criteria", action="append", default=None, metavar="TEXT",
                        help="one criterion; repeat for several. --criteria \"\" means general preference")  # fmt: skip
    parser.add_argument("--dislike", action="append", default=[], metavar="TEXT",
                        help="something you dislike in a response (repeatable)")  # fmt: skip
    parser.add_argument("--profile", metavar="FILE.json", help="rank with a saved profile (the app's download: "
                        "criteria, dislikes, topics, votes and the weights fitted from them), as the app ranks it; "
                        "instead of --criteria / --dislike / --topic")  # fmt: skip
    parser.add_argument("--queries", type=positive_int, metavar="N",
                        help="a seeded topic-stratified sample of N queries (N >= 1)")  # fmt: skip
    parser.add_argument("--query-ids", metavar="FILE", help="rank only on these query ids: a file of one id per line "
                        "(blank lines and # comments ignored), e.g. a held-out half")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seed of the query order and the bootstrap")
    parser.add_argument("--topic", action="append", default=[], choices=list(TOPICS), metavar="TOPIC",
                        help=f"keep queries of this topic (repeatable); one of: {', '.join(TOPICS)}")  # fmt: skip
    parser.add_argument("--topic-text", default="", metavar="TEXT",
                        help="a free-text topic ('cooking'): keep queries similar to it (adds to --topic)")  # fmt: skip
    parser.add_argument("--topic-threshold", type=float, default=FREE_TEXT_THRESHOLD, metavar="COSINE",
                        help="similarity a query needs to match --topic-text (default: %(default)s)")  # fmt: skip
    parser.add_argument("--models", nargs="+", metavar="NAME", help="rank only these models (and the baseline)")
    parser.add_argument("--bootstrap", type=at_least(MIN_BOOTSTRAP, MAX_BOOTSTRAP), default=1000, metavar="N",
                        help=f"bootstrap resamples for the 95%% CIs, {MIN_BOOTSTRAP} to {MAX_BOOTSTRAP:,} "
                             "(default: %(default)s)")  # fmt: skip
    parser.add_argument("--cache", metavar="FILE", help="score cache (default: $USL_SCORE_CACHE or "
                        "~/.cache/usl/scores.sqlite)")  # fmt: skip
    parser.add_argument("--output", metavar="FILE.json", help="also write the JSON here (atomically)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--skip-invalid", action="store_true", help="rank without bench rows that fail "
                        "validation (each is still reported on stderr as file:line: field: ...); by default any "
                        "stops the run")  # fmt: skip
    return parser


def main(argv: list[str] | None = None) -> int:  # noqa: C901 (one flag, one branch: the CLI contract)
    args = build_parser().parse_args(argv)
    side = None
    if args.output:  # checked before the work: a ranking is never computed only to be lost, nor written over input
        from usl_space.loading import default_cache_path

        try:
            check_output(args.output, {"--data": args.data, "--query-ids": args.query_ids, "--profile": args.profile,
                                       "--model": args.model or default_model_path(),
                                       "--cache": args.cache or default_cache_path()})  # fmt: skip
        except ValueError as error:
            print(f"usl-rank: {error}", file=sys.stderr)
            return 2
    if args.profile:
        if args.criteria is not None or args.dislike or args.topic:
            print("usl-rank: --profile brings its own criteria, dislikes and topics; drop --criteria, --dislike and "
                  "--topic", file=sys.stderr)  # fmt: skip
            return 2
        from usl_space.taste import Profile

        try:
            profile = Profile.load(args.profile)
        except (OSError, ValueError) as error:
            print(f"usl-rank: {error}", file=sys.stderr)
            return 2
        args.criteria, args.dislike, args.topic = profile.criteria, profile.dislikes, profile.topics
    if args.criteria is None:
        print('usl-rank: give --criteria TEXT (or --criteria "" for general preference)', file=sys.stderr)
        return 2
    try:  # what can be checked without the bench and the CRM is checked before loading them (~20 s)
        RankRequest.checked(args.criteria, args.dislike, None, args.models, None, args.queries, args.seed)
        if args.query_ids:
            read_query_ids(args.query_ids, None)
    except ValueError as error:
        print(f"usl-rank: {error}", file=sys.stderr)
        return 2
    from tqdm.auto import tqdm

    from usl_space.loading import load_engine

    try:
        needs_topics = bool(args.topic or args.topic_text or args.queries)
        with skipping_invalid("usl-rank", args.skip_invalid):
            engine = load_engine(args.data, args.model, args.backend, args.cache, needs_topics, args.baseline)
        selected = None
        if (args.topic or args.topic_text) and engine.topics is not None:  # built whenever a topic is asked
            selected = engine.topics.select(args.topic, args.topic_text, args.topic_threshold).tolist()
            if not selected:
                raise ValueError("no query matches the topic selection; lower --topic-threshold or change topics")
        if args.query_ids:
            listed = read_query_ids(args.query_ids, set(engine.query))
            selected = listed if selected is None else [i for i in selected if i in set(listed)]
        rank_request = RankRequest.checked(args.criteria, args.dislike, selected, args.models, None, args.queries,
                                           args.seed)  # fmt: skip
        if args.profile:
            from usl_space.taste import profile_side

            side = profile_side(engine, profile)
        engine.warm(progress=not args.quiet)  # the instant path's response side: built once (minutes) if need be
        world = int(os.environ.get("WORLD_SIZE", "1"))
        if world > 1:
            sharded = _sharded(engine, rank_request, args.bootstrap, not args.quiet)
            if sharded is None:
                return 0  # not the main process: its share is in the cache
            board = sharded
        else:
            bar = tqdm(total=len(engine.request_ids(rank_request)), desc="queries scored", unit="query",
                       disable=args.quiet)  # fmt: skip
            for board in engine.stream_request(rank_request, bootstrap=args.bootstrap, side=side):
                bar.update(board.n_queries - bar.n)
            bar.close()  # stream_request yields at least one board, the last one final
    except Exception as error:  # an expected error becomes one line; a bug stays a traceback
        return fail("usl-rank", error, 2)
    result = board.to_json()
    result["models_ranked"] = len(result["rows"])
    result["own_panel"] = engine.own_panel
    for model, n in engine.bench.empty_answers().items():
        print(f"usl-rank: warning: {model} gave {n} empty answer(s); they are ranked as given (judged like any "
              "other answer)", file=sys.stderr)  # fmt: skip
    for model, n, most in fewer_answers(board.rows):
        print(f"usl-rank: warning: {model} was judged on {n} of {most} queries (missing answers); its win rate "
              "covers fewer queries than the others'", file=sys.stderr)  # fmt: skip
    text = json.dumps(without_nan(result), indent=2, allow_nan=False)
    written = write_result("usl-rank", args.output, text) if args.output else True
    print(text)
    return 0 if written else 1


def read_query_ids(path: str, known: set[int] | None) -> list[int]:
    """Query ids from a file, one per line; every bad line is named (file:line: what was found). `known` None: the
    bench is not loaded yet, only the file's form is checked."""
    ids, problems = [], []
    text = read_text(path, "a text file of query ids, one per line", MAX_ID_FILE_BYTES)  # never /dev/zero
    for number, line in enumerate(text.splitlines(), 1):
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        if not entry.lstrip("-").isdigit():
            problems.append(f"{path}:{number}: expected a query id (an integer), found {entry[:40]!r}")
        elif known is not None and int(entry) not in known:
            problems.append(f"{path}:{number}: query id {entry} is not on the bench")
        else:
            ids.append(int(entry))
    if problems:
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise ValueError("\n".join(problems[:20]) + more)
    if not ids:
        raise ValueError(f"{path}: no query ids")
    return sorted(set(ids))


def default_model_path() -> Path | None:
    """The CRM folder read without --model ($USL_MODEL, else the shipped one), so --output can never be written over
    it; None where there is none (a Hub id in $USL_MODEL is no local path: nothing to protect)."""
    if os.environ.get("USL_MODEL"):
        return Path(os.environ["USL_MODEL"])
    from usl_space.loading import default_crm

    try:
        return default_crm()
    except FileNotFoundError:
        return None


def _sharded(engine: Engine, rank_request: RankRequest, bootstrap: int, progress: bool) -> Leaderboard | None:
    """Every process scores its share into the cache; the main process then ranks from the cache alone."""
    from accelerate import PartialState

    cpu = os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true", "yes")  # PartialState ignores the flag
    state = PartialState(cpu=cpu)
    covered = engine.fill(rank_request.criteria, rank_request.dislikes, engine.request_ids(rank_request),
                          state.process_index, state.num_processes, rank_request.models, progress)  # fmt: skip
    print(f"usl-rank: process {state.process_index}/{state.num_processes} scored {covered} queries", file=sys.stderr)
    state.wait_for_everyone()
    if not state.is_main_process:
        return None
    *_, board = engine.stream_request(rank_request, bootstrap=bootstrap)
    return board


if __name__ == "__main__":
    sys.exit(main())
