"""Read public LLM-response collections into a `Bench`.

Layouts understood (see `open_bench`):
- a bench folder written by `Bench.save` (``manifest.json``);
- AlpacaEval, combined: ``instructions.jsonl`` + ``model_outputs.jsonl.gz`` (+ optional ``default_models.txt``),
  as in ../shared/data/usl/alpaca_eval;
- AlpacaEval, per model: ``<model>/model_outputs.json`` folders (the upstream ``results/`` layout, and what
  ``usl-data pull`` writes), with an optional ``instructions.jsonl``;
- FastChat MT-bench: ``question.jsonl`` + ``model_answer/<model>.jsonl`` (first turns become the queries).
"""

from __future__ import annotations

import difflib
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl

from crm_core.data.bench import Bench, make_bench
from crm_core.data.errors import DataValidationError, Problem
from crm_core.data.lines import invalid_rows, skipping, text_lines
from crm_core.guard import not_there, read_text

ALPACA_EVAL_BASELINE = "gpt4_1106_preview"
MT_BENCH_BASELINE = "gpt-4"
MAX_MODELS_FILE_BYTES = 1_000_000  # a list of model names
MAX_PROBLEMS = 50
MAX_TEXT_CHARS = 200_000  # one instruction or answer (the longest in the shared benches: 65,477 characters)


def _type_ok(value: Any, kind: type) -> bool:
    return isinstance(value, kind) and not (kind is int and isinstance(value, bool))


def _check_fields(record: Any, fields: dict[str, type], file: str, line: int) -> list[Problem]:
    if not isinstance(record, dict):
        return [Problem(file, line, None, f"expected a JSON object, got {type(record).__name__}")]
    problems = []
    for field, kind in fields.items():
        if field not in record:
            problems.append(Problem(file, line, field, "missing field"))
        elif not _type_ok(record[field], kind):
            got = "null" if record[field] is None else type(record[field]).__name__
            problems.append(Problem(file, line, field, f"expected {kind.__name__}, got {got}"))
        elif isinstance(record[field], str) and len(record[field]) > MAX_TEXT_CHARS:
            problems.append(Problem(file, line, field, f"expected at most {MAX_TEXT_CHARS:,} characters (a judge "
                                    f"reads far less), got {len(record[field]):,}"))  # fmt: skip
    return problems


def _jsonl_records(lines: Iterable[str], file: str) -> Iterable[tuple[int, Any, Problem | None]]:
    for line_number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            yield line_number, json.loads(raw), None
        except json.JSONDecodeError as error:
            yield (
                line_number,
                None,
                Problem(file, line_number, None, f"malformed JSON: {error.msg} at column {error.colno}"),
            )


def read_jsonl_checked(lines: Iterable[str], file: str, fields: dict[str, type]) -> list[tuple[int, dict]]:
    """Parse JSON lines in Python, checking each record's fields; return (line, record) pairs, or raise
    with file:line:field for every problem (up to MAX_PROBLEMS)."""
    records, problems = [], []
    for line, record, problem in _jsonl_records(lines, file):
        found = [problem] if problem else _check_fields(record, fields, file, line)
        problems.extend(found)
        if not found:
            records.append((line, record))
        if len(problems) >= MAX_PROBLEMS and not skipping():
            break
    invalid_rows(problems)  # raises, unless the command skips invalid rows
    return records


def _read_text_lines(path: Path) -> list[str]:
    """Every line of a (gzip) text file; undecodable bytes or a truncated gzip stream raise with file and line."""
    lines, problems = [], []
    for _, text, problem in text_lines(path):
        if problem is not None:
            problems.append(problem)
        lines.append(text or "")  # kept in place, so later line numbers stay right
    invalid_rows(problems if skipping() else problems[:MAX_PROBLEMS])
    return lines


def read_instructions(path: str | os.PathLike) -> pl.DataFrame:
    """``instructions.jsonl``: ``{idx, instruction, ...}`` -> queries frame (extra fields kept as columns)."""
    path = Path(path)
    records = read_jsonl_checked(_read_text_lines(path), str(path), {"idx": int, "instruction": str})
    if not records:
        raise DataValidationError([Problem(str(path), None, None, "no instructions (the file is empty)")])
    return pl.DataFrame([r for _, r in records], infer_schema_length=None).cast({"idx": pl.Int64})


def read_combined_outputs(path: Path, models: list[str] | None) -> pl.DataFrame:
    """The combined ``model_outputs.jsonl.gz``, every line parsed and its fields checked by value and type: a number
    or a list where text belongs is refused with file:line:field however the JSON spells it (a space before the
    colon, an escaped key); Polars' reader would turn them into text. About 0.7 s more than Polars on AlpacaEval's
    182,723 answers."""
    records = read_jsonl_checked(_read_text_lines(path), str(path), {"model": str, "idx": int, "output": str})
    bad = [Problem(str(path), line, "generator", f"expected str or null, got {type(r['generator']).__name__}")
           for line, r in records if not isinstance(r.get("generator", ""), str | None)]  # fmt: skip
    invalid_rows(bad)  # raises, unless the command skips invalid rows
    dropped = {problem.line for problem in bad}
    wanted = set(models) if models is not None else None
    kept = [r for line, r in records if line not in dropped and (wanted is None or r["model"] in wanted)]
    frame = pl.DataFrame(
        {
            "model": [r["model"] for r in kept],
            "idx": [r["idx"] for r in kept],
            "generator": [r["model"] if r.get("generator") is None else r["generator"] for r in kept],
            "output": [r["output"] for r in kept],
        },
        schema={"model": pl.String, "idx": pl.Int64, "generator": pl.String, "output": pl.String},
    )
    return frame


def _check_models_known(requested: list[str] | None, available: set[str], where: str) -> None:
    unknown = [m for m in requested or [] if m not in available]
    if unknown:
        hints = []
        for m in unknown[:10]:
            close = difflib.get_close_matches(m, sorted(available), n=2)
            hints.append(f"{m!r}" + (f" (did you mean {close}?)" if close else ""))
        raise DataValidationError([Problem(where, None, "models", f"unknown model(s): {', '.join(hints)}")])


def read_models_file(path: str | os.PathLike) -> list[str]:
    """One model name per line; blank lines and '#' comments ignored."""
    lines = read_text(path, "a text file of model names, one per line", MAX_MODELS_FILE_BYTES).splitlines()
    return [s for s in (line.split("#", 1)[0].strip() for line in lines) if s]


def most_complete_model(responses: pl.DataFrame) -> str:
    """The model with the most non-empty answers (ties: the first by name): a bench's baseline when none is named
    and AlpacaEval's is not in it. Which model is the baseline sets where win rates are read from, not the order of
    the others (the judge has no favourites)."""
    answered = responses.filter(pl.col("output").str.strip_chars() != "").group_by("model").len()
    if not answered.height:
        raise DataValidationError([Problem("responses", None, "output", "no model has a non-empty answer")])
    return str(answered.sort(["len", "model"], descending=[True, False])["model"][0])


def load_alpaca_eval_combined(
    directory: str | os.PathLike, models: list[str] | None = None, baseline: str | None = None
) -> Bench:
    """The combined layout (``instructions.jsonl`` + ``model_outputs.jsonl.gz``). `models` None means
    ``default_models.txt`` when the folder has one, else every model. `baseline` None: AlpacaEval's
    (gpt4_1106_preview) when the folder has it, else its model with the most answers (a 2025 bench of other
    models: creative, speechmap), said on stderr."""
    directory = Path(directory)
    if models is None and (directory / "default_models.txt").is_file():
        models = read_models_file(directory / "default_models.txt")
    queries = read_instructions(directory / "instructions.jsonl")
    responses = read_combined_outputs(directory / "model_outputs.jsonl.gz", models)
    if models is not None:
        _check_models_known(models, set(responses["model"].unique().to_list()), str(directory))
    present = set(responses["model"].unique().to_list())
    if baseline is None:
        baseline = ALPACA_EVAL_BASELINE
        if responses.height and baseline not in present:
            baseline = most_complete_model(responses)
            print(f"usl: {directory}: no {ALPACA_EVAL_BASELINE} answers; baseline {baseline} (the model with the most "
                  "answers; --baseline names another)", file=sys.stderr)  # fmt: skip
    # AlpacaEval's own answers are the alpaca_eval bench; another set in its layout is named by its folder (creative)
    name = "alpaca_eval" if ALPACA_EVAL_BASELINE in present or not present else directory.resolve().name
    return make_bench(name, str(directory), baseline, queries, responses)


def read_model_outputs_json(path: str | os.PathLike) -> list[dict]:
    """One model's AlpacaEval ``model_outputs.json``: a JSON array of ``{instruction, output, generator}``."""
    path = Path(path)
    try:
        items = json.loads(path.read_text(encoding="utf-8-sig"))  # a BOM is accepted, as in every other reader
    except json.JSONDecodeError as error:
        raise DataValidationError(
            [Problem(str(path), error.lineno, None, f"malformed JSON: {error.msg} at column {error.colno}")]
        ) from None
    except UnicodeDecodeError as error:
        raise DataValidationError([Problem(str(path), None, None, f"not UTF-8 text ({error.reason})")]) from None
    if not isinstance(items, list):
        raise DataValidationError(
            [Problem(str(path), None, None, f"expected a JSON array, got {type(items).__name__}")]
        )
    problems, valid = [], []
    for number, item in enumerate(items, start=1):
        found = _check_fields(item, {"instruction": str, "output": str}, f"{path} item", number)
        problems.extend(found)
        if not found:
            valid.append(item)
        if len(problems) >= MAX_PROBLEMS and not skipping():
            break
    invalid_rows(problems)  # raises, unless the command skips invalid rows
    return valid


def responses_by_instruction(model: str, items: list[dict], index: dict[str, int], file: str) -> list[dict]:
    rows: list[dict] = []
    problems: list[Problem] = []
    seen: dict[int, int] = {}  # query idx -> the item that answered it
    for number, item in enumerate(items, start=1):
        idx = index.get(item["instruction"])
        if idx is None:
            problems.append(Problem(f"{file} item", number, "instruction", "not one of the bench's instructions"))
        elif idx in seen:
            problems.append(
                Problem(
                    f"{file} item",
                    number,
                    "instruction",
                    f"duplicate (model, query): ({model}, {idx}) also at item {seen[idx]}",
                )
            )
        else:
            seen[idx] = number
            generator = item.get("generator")
            rows.append(
                {
                    "idx": idx,
                    "model": model,
                    "output": item["output"],
                    "generator": generator if isinstance(generator, str) else model,
                }
            )
        if len(problems) >= MAX_PROBLEMS:
            break
    if problems:
        raise DataValidationError(problems)
    return rows


def load_alpaca_eval_per_model(
    directory: str | os.PathLike, models: list[str] | None = None, baseline: str = ALPACA_EVAL_BASELINE
) -> Bench:
    """The per-model layout ``<model>/model_outputs.json``. Queries come from ``instructions.jsonl`` when the
    folder has one, else from the baseline's file in its order (AlpacaEval's own order)."""
    directory = Path(directory)
    available = {p.parent.name: p for p in directory.glob("*/model_outputs.json")}
    _check_models_known(models, set(available), str(directory))
    _check_models_known([baseline], set(available), str(directory))
    chosen = models if models is not None else sorted(available)
    if baseline not in chosen:
        chosen = [*chosen, baseline]
    if (directory / "instructions.jsonl").is_file():
        queries = read_instructions(directory / "instructions.jsonl")
    else:
        baseline_items = read_model_outputs_json(available[baseline])
        queries = pl.DataFrame(
            {"idx": list(range(len(baseline_items))), "instruction": [i["instruction"] for i in baseline_items]},
            schema={"idx": pl.Int64, "instruction": pl.String},
        )
    index = dict(zip(queries["instruction"].to_list(), queries["idx"].to_list(), strict=True))
    rows = []
    for model in chosen:
        items = read_model_outputs_json(available[model])
        if not items:  # a model with no answers would vanish from the board without a word
            invalid_rows(
                [Problem(str(available[model]), None, None, f"model {model!r} has no answers (an empty list)")]
            )
            continue
        rows.extend(responses_by_instruction(model, items, index, str(available[model])))
    responses = pl.DataFrame(
        rows, schema={"idx": pl.Int64, "model": pl.String, "output": pl.String, "generator": pl.String}
    )
    return make_bench("alpaca_eval", str(directory), baseline, queries, responses)


def load_mt_bench(
    directory: str | os.PathLike, models: list[str] | None = None, baseline: str = MT_BENCH_BASELINE
) -> Bench:
    """FastChat MT-bench: ``question.jsonl`` and ``model_answer/<model>.jsonl``; the first turn of each
    question is the query and the first turn of each answer the response. The file name is the model."""
    directory = Path(directory)
    qpath = directory / "question.jsonl"
    questions = [
        q for _, q in read_jsonl_checked(_read_text_lines(qpath), str(qpath), {"question_id": int, "turns": list})
    ]
    problems = [
        Problem(str(qpath), None, "turns", f"question {q['question_id']} has no first turn as text")
        for q in questions
        if not q["turns"] or not isinstance(q["turns"][0], str)
    ]
    if problems:
        raise DataValidationError(problems)
    queries = pl.DataFrame(
        [{"idx": q["question_id"], "instruction": q["turns"][0], "category": q.get("category")} for q in questions],
        schema={"idx": pl.Int64, "instruction": pl.String, "category": pl.String},
    )
    available = {p.stem: p for p in (directory / "model_answer").glob("*.jsonl")}
    _check_models_known(models, set(available), str(directory / "model_answer"))
    _check_models_known([baseline], set(available), str(directory / "model_answer"))
    chosen = models if models is not None else sorted(available)
    if baseline not in chosen:
        chosen = [*chosen, baseline]
    rows: list[dict] = []
    problems = []
    for model in chosen:
        path = available[model]
        before = len(rows)
        for line, answers in read_jsonl_checked(
            _read_text_lines(path), str(path), {"question_id": int, "choices": list}
        ):
            choices = answers["choices"]
            if (
                not choices
                or not isinstance(choices[0], dict)
                or not choices[0].get("turns")
                or not isinstance(choices[0]["turns"][0], str)
            ):
                problems.append(
                    Problem(str(path), line, "choices", "expected choices[0].turns[0] to be the answer text")
                )
                continue
            rows.append(
                {
                    "idx": answers["question_id"],
                    "model": model,
                    "output": choices[0]["turns"][0],
                    "generator": answers.get("model_id") if isinstance(answers.get("model_id"), str) else model,
                }
            )
        if len(rows) == before and not problems:  # an empty answer file: the model would vanish without a word
            invalid_rows([Problem(str(path), None, None, f"model {model!r} has no answers (an empty file)")])
    if problems:
        raise DataValidationError(problems[:MAX_PROBLEMS])
    responses = pl.DataFrame(
        rows, schema={"idx": pl.Int64, "model": pl.String, "output": pl.String, "generator": pl.String}
    )
    return make_bench("mt_bench", str(directory), baseline, queries, responses)


def read_answers(path: str | os.PathLike) -> tuple[str, list[dict]]:
    """A file of one model's answers as `usl-data generate` writes it (JSON lines with `instruction`, `output` and
    `generator`; an `idx` where it has one): (the model's name, the rows). The name is the rows' generator (one
    name per file) or, without one, the file's stem."""
    path = Path(path)
    rows = [r for _, r in read_jsonl_checked(_read_text_lines(path), str(path), {"instruction": str, "output": str})]
    if not rows:
        raise DataValidationError([Problem(str(path), None, None, "no answers (the file is empty)")])
    names = {r["generator"] for r in rows if isinstance(r.get("generator"), str) and r["generator"]}
    if len(names) > 1:
        raise DataValidationError([Problem(str(path), None, "generator", f"one model per file, found {sorted(names)}")])
    return (names.pop() if names else path.stem), rows


def with_answers(bench: Bench | None, files: list[str | os.PathLike], baseline: str | None = None,
                 name: str = "my_prompts") -> Bench:  # fmt: skip
    """`bench` with the models of these answer files added (each answer placed by its instruction, which must be one
    of the bench's); without a bench, a new one whose prompts are the files' instructions (by their idx where the
    files give one, consistently). A model already on the bench, an unknown instruction or two answers of one model
    to a prompt is an error naming file and item."""
    answers = [(Path(f), *read_answers(f)) for f in files]
    models = [m for _, m, _ in answers]
    clash = sorted({m for m in models if models.count(m) > 1 or (bench is not None and m in bench.models)})
    if clash:
        raise DataValidationError([Problem("--answers", None, "generator", f"already on the bench: {clash}")])
    queries = _queries_of_answers(answers) if bench is None else bench.queries
    index = dict(zip(queries["instruction"].to_list(), queries["idx"].to_list(), strict=True))
    rows = [row for path, model, items in answers for row in responses_by_instruction(model, items, index, str(path))]
    added = pl.DataFrame(rows, schema={"idx": pl.Int64, "model": pl.String, "output": pl.String,
                                       "generator": pl.String})  # fmt: skip
    if bench is None:
        return make_bench(name, ", ".join(str(p) for p, _, _ in answers), baseline or most_complete_model(added),
                          queries, added)  # fmt: skip
    responses = pl.concat([bench.responses.select(added.columns).cast(added.schema), added])  # type: ignore[arg-type]
    merged = make_bench(bench.name, bench.source, baseline or bench.baseline, queries, responses)
    merged.description, merged.model_info = bench.description, dict(bench.model_info)
    return merged


def _queries_of_answers(answers: list[tuple[Path, str, list[dict]]]) -> pl.DataFrame:
    """The prompts the answer files answer: each instruction once, at the idx the files give it (never two different
    ones), else numbered in order of first appearance."""
    by_text: dict[str, int | None] = {}
    for path, _, items in answers:
        for number, item in enumerate(items, 1):
            idx = (
                item.get("idx") if isinstance(item.get("idx"), int) and not isinstance(item.get("idx"), bool) else None
            )
            known = by_text.setdefault(item["instruction"], idx)
            if known is None:  # a file without ids takes the one another file gives
                by_text[item["instruction"]] = known = idx
            if idx is not None and known != idx:
                raise DataValidationError([Problem(f"{path} item", number, "idx",
                                                   f"this instruction has idx {known} in another file")])  # fmt: skip
    free = iter(i for i in range(len(by_text) * 2 + 1) if i not in set(by_text.values()))
    pairs = [(idx if idx is not None else next(free), text) for text, idx in by_text.items()]
    if len({i for i, _ in pairs}) != len(pairs):
        raise DataValidationError([Problem("--answers", None, "idx", "two instructions share one idx")])
    return pl.DataFrame({"idx": [i for i, _ in pairs], "instruction": [t for _, t in pairs]},
                        schema={"idx": pl.Int64, "instruction": pl.String}).sort("idx")  # fmt: skip


def detect_layout(directory: str | os.PathLike) -> str:
    """Which of the layouts above `directory` holds: bench, alpaca_eval, alpaca_eval_per_model, mt_bench."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory}: {not_there(directory, 'folder')}")
    if (directory / "manifest.json").is_file():
        return "bench"
    if (directory / "model_outputs.jsonl.gz").is_file() and (directory / "instructions.jsonl").is_file():
        return "alpaca_eval"
    if any(directory.glob("*/model_outputs.json")):
        return "alpaca_eval_per_model"
    if (directory / "question.jsonl").is_file() and (directory / "model_answer").is_dir():
        return "mt_bench"
    raise DataValidationError(
        [
            Problem(
                str(directory),
                None,
                None,
                "not a bench folder (manifest.json), an AlpacaEval folder (instructions.jsonl + "
                "model_outputs.jsonl.gz, or <model>/model_outputs.json) or an MT-bench folder "
                "(question.jsonl + model_answer/)",
            )
        ]
    )


def open_bench(directory: str | os.PathLike, models: list[str] | None = None, baseline: str | None = None) -> Bench:
    """Load whatever bench-like folder `directory` is (see `detect_layout`)."""
    layout = detect_layout(directory)
    if layout == "bench":
        bench = Bench.load(directory)
        if models is not None or baseline is not None:
            raise ValueError("a saved bench has its models and baseline fixed; build a new one to change them")
        return bench
    if layout == "mt_bench":
        return load_mt_bench(directory, models, baseline or MT_BENCH_BASELINE)
    if layout == "alpaca_eval":
        return load_alpaca_eval_combined(directory, models, baseline)
    return load_alpaca_eval_per_model(directory, models, baseline or ALPACA_EVAL_BASELINE)
