"""What the app shows, as plain data and text: table rows, frames, status lines, how the criteria were read, the
CRM's label and the download files. Pure functions of a board (no Gradio), so they are tested without a server;
every visitor-typed string reaches Markdown only through `as_text`.
"""

from __future__ import annotations

import csv
import html
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crm_core.properties import NAMES

from usl_space.board import fewer_answers
from usl_space.catalog import catalog
from usl_space.engine import Leaderboard
from usl_space.stats import MIN_QUERIES_FOR_RANKS

# what decides the order first (a phone shows these four), then the rest
TABLE_COLUMNS = [
    "Rank",
    "Model",
    "Win rate %",
    "95% CI %",
    "Rank (UB)",
    "LC win rate %",
    "Queries",
    "Avg words",
    "Made by · weights · released",
]
LEGEND = (
    "**Win rate**: how often the model's answer is preferred to the baseline's (a compositional CRM counts "
    "each verdict by its probability), with its **95% CI** over queries · **Rank (UB)**: 1 + the models "
    "better than it with 95% confidence (from 30 queries on) · **LC**: length-controlled, as if both answers "
    "were equally long · **Queries**: queries it was judged on · the baseline scores 50 by definition."
)
CSV_COLUMNS = ["rank", "rank_ub", "model", "baseline", "win_rate", "ci_low", "ci_high", "lc_win_rate", "n",
               "avg_words"]  # fmt: skip
SEMANTICS = (
    "**What a criterion does:** it decides between answers of comparable quality, as strongly however it is worded; "
    "it does not make a clearly worse answer win by being shorter, longer or emoji-free. Write *must*, *never* or "
    "*always* in a criterion to make it a hard requirement that overrides quality."
)


def pct(value: float | None) -> str:
    """A fraction as a percentage with one decimal, always ("52.0", not "52"); a dash where there is none."""
    return "–" if value is None else f"{100 * value:.1f}"


def table(board: Leaderboard | None, topics: bool = True) -> list[list[Any]]:
    """Rows for the Dataframe: rank, model, win rate with its CI, Rank (UB), LC win rate, queries, average words,
    who made it, then (with `topics`) the per-topic win rates."""
    if board is None:
        return []
    out = []
    for row in board.rows:
        interval = "–" if row["baseline"] else f"{pct(row['ci_low'])} – {pct(row['ci_high'])}"  # none vs itself
        cells = [row["rank"], row["model"] + (" (baseline)" if row["baseline"] else ""), pct(row["win_rate"]),
                 interval, "–" if row["rank_ub"] is None else row["rank_ub"], pct(row["lc_win_rate"]), row["n"],
                 f"{row['avg_words']:.0f}", about(row["model"])]  # fmt: skip
        out.append(cells + ([pct(row["topics"].get(t)) for t in board.topics] if topics else []))
    return out


def about(model: str) -> str:
    """What a person choosing a model wants beside its name (usl_space.catalog); blank for a model not listed."""
    info = catalog().get(model)
    if info is None:
        return ""
    weights = "weights unknown" if info.weights == "unknown" else info.weights
    return " · ".join([info.organisation, weights, info.released or "release month unknown"])


def frame(board: Leaderboard | None) -> dict:
    """The main table: every model, no per-topic columns (those are in `topic_frame`)."""
    return {"headers": TABLE_COLUMNS, "data": table(board, topics=False) or [[None] * len(TABLE_COLUMNS)]}


COMPACT_COLUMNS = 4  # Rank, Model, Win rate %, 95% CI %: what two boards side by side have room for
# px per column of the main table: the first four fit a 390 px phone (long model names wrap at their hyphens)
COLUMN_WIDTHS: list[str | int] = ["52px", "112px", "64px", "96px", "64px", "72px", "80px", "64px", "240px"]


def compact_frame(board: Leaderboard | None) -> dict:
    """Compare's tables: two side by side, so only the columns that decide an order (the rest is in Customize)."""
    rows = [row[:COMPACT_COLUMNS] for row in table(board, topics=False)]
    return {"headers": TABLE_COLUMNS[:COMPACT_COLUMNS], "data": rows or [[None] * COMPACT_COLUMNS]}


def topic_frame(board: Leaderboard | None) -> dict:
    """Win rate (%) per topic, one row per model, in the board's order: the collapsible part of the table."""
    if board is None or not board.topics:
        return {"headers": ["Model"], "data": [[None]]}
    rows = [[row["model"], *(pct(row["topics"].get(t)) for t in board.topics)] for row in board.rows]
    return {"headers": ["Model", *board.topics], "data": rows}


MARKDOWN_SYNTAX = re.compile(r"([\\`*_{}\[\]#|~$])")  # emphasis, code, links, images, headings, tables, LaTeX


def as_text(value: str) -> str:
    """Visitor text (an upload's model or file name) for a Markdown component, shown exactly as typed: Markdown and
    LaTeX syntax backslash-escaped, HTML turned into entities, so `<b>`, `<script>` or `$...$` never render."""
    return html.escape(MARKDOWN_SYNTAX.sub(r"\\\1", value), quote=False)


def status(board: Leaderboard | None, what: str = "", seconds: float | None = None) -> str:
    """The status line under a board; `seconds`: the time since the visitor asked (waits included), else the
    board's own scoring time."""
    if board is None:
        return f"{what}: nothing scored yet"
    state = "done" if board.done else "scoring..."
    took = board.seconds if seconds is None else seconds
    text = (f"{what} {state} {board.n_queries} / {board.n_selected} queries scored, {len(board.rows)} models, "
            f"{took:.1f} s").strip()  # fmt: skip
    if board.n_queries < MIN_QUERIES_FOR_RANKS:
        text += (f" · only {board.n_queries} queries judged: not yet informative (wide intervals; Rank (UB) is "
                 f"shown from {MIN_QUERIES_FOR_RANKS} queries on)")  # fmt: skip
    short = fewer_answers(board.rows)
    if short:  # counts only: model names can be visitor text, which never reaches the Markdown renderer
        text += (f" · {len(short)} model(s) answered fewer queries than the others (column Queries, as few as "
                 f"{min(n for _, n, _ in short)} of {short[0][2]}): their win rates rest on less evidence")  # fmt: skip
    return text


def panel_note(panel: Sequence[str] | None, shown: int = 8) -> str:
    """What the general board's status adds on a bench without the CRM's reference panel: whose answers each
    answer's quality was compared with (the bench's own top models on a first, criteria-free board:
    usl_space.instant.own_panel), so a visitor knows what "quality" means on this bench. Empty where there is none."""
    if not panel:
        return ""
    names = ", ".join(as_text(m) for m in panel[:shown]) + (f" and {len(panel) - shown} more" if len(panel) > shown
                                                             else "")  # fmt: skip
    return (f" · quality here is judged against the answers of this bench's own top {len(panel)} models on a first "
            f"board without criteria: {names}")  # fmt: skip


def criteria_label(criteria: Sequence[str], dislikes: Sequence[str]) -> str:
    """The criteria a board was ranked under, short, as plain text for the status line."""
    typed = [*criteria, *(f"dislikes: {d}" for d in dislikes)]
    if not typed:
        return "no criteria: general preference"
    first = typed[0] if len(typed[0]) <= 60 else typed[0][:57] + "..."
    return as_text(f'"{first}"' + (f" and {len(typed) - 1} more" if len(typed) > 1 else ""))


PLAIN_NAMES = {  # each measured property as the status line names it (crm_core.properties, in its order)
    "words": "length", "sentences": "sentences", "paragraphs": "paragraphs", "bullets": "lists",
    "numbered": "numbered steps", "headings": "headings", "bold": "bold", "tables": "tables", "code_blocks": "code",
    "inline_code": "inline code", "emoji": "emoji", "links": "links", "question_back": "questions back",
    "questions": "questions", "apology": "apologies", "ai_disclaimer": "AI disclaimers", "refusal": "refusals",
    "caveats": "caveats", "exclamations": "exclamations", "first_person": "I voice", "second_person": "you voice",
    "numbers": "numbers", "quotes": "quotes", "reading_grade": "reading level", "sentence_length": "sentence length",
    "summary": "summaries", "greeting": "openers", "nonanswer": "refusing or evading",
    "other_language": "answering in another language than the question's", "ai_prose": "AI-sounding prose",
    "dialogue": "dialogue", "lexical_variety": "word variety", "repetition": "repetition",
}  # fmt: skip


# the languages a visitor's criteria are most likely written in besides English, by code (cues.written_in)
LANGUAGE_NAMES = {"fi": "Finnish", "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "es": "Spanish", "fr": "French",
                  "de": "German", "it": "Italian", "pt": "Portuguese", "nl": "Dutch", "sv": "Swedish", "da": "Danish",
                  "no": "Norwegian", "pl": "Polish", "ru": "Russian", "uk": "Ukrainian", "ar": "Arabic",
                  "tr": "Turkish"}  # fmt: skip


def measured(count: int) -> str:
    """What a CRM fitted with the first `count` properties measures, in words."""
    names = [PLAIN_NAMES.get(name, name) for name in NAMES[:count]]
    return ", ".join(names[:-1]) + " and " + names[-1]


def reading(board: Leaderboard | None) -> str:
    """How a compositional CRM read the board's criteria (Leaderboard.reading): its largest property weights
    ("emoji -2.1 · headings +0.4"), so a visitor can check it understood, and, plainly, each criterion it could not
    read at all (the board ignores those) and each soft one it is unsure of (read weakly or spread over several
    properties: it counts only as read, not at the soft strength), each written in another language (left out) or
    only saying who the visitor is (its tone and domain only); and,
    for a clear wish for caution, that declining now wins (the numbers alone would not say so). Visitor text is shown
    only through `as_text`."""
    read = board.reading if board is not None else None
    if read is None:
        return ""
    weights = " · ".join(f"{name} {weight:+.1f}" for name, weight in read.weights)
    text = "\n\nRead your criteria as: " + (weights or "no measured property (tone and content only)")
    if read.declining_wins:
        text += ("\n\nYou asked for caution: an answer that declines or evades wins over one that complies; between "
                 "two that both comply (or both decline), quality decides.")  # fmt: skip
    what = measured(read.properties)
    for sentence in read.ignored:
        text += (f"\n\nI could not read “{as_text(clipped(sentence))}” as anything I measure, so the board "
                 f"below (nearly) ignores it. I measure {what}; tone and domain count through the answers' "
                 "voice.")  # fmt: skip
    for sentence, code in read.foreign:
        language = LANGUAGE_NAMES.get(code, "another language than English")
        text += (f"\n\n“{as_text(clipped(sentence))}” looks written in {language}. I read criteria in English only, "
                 "so the board leaves it out rather than guess; in English it counts, e.g. “Keep it brief.” or "
                 "“Answer in the language I wrote in.”")  # fmt: skip
    for sentence in read.context:
        text += (f"\n\n“{as_text(clipped(sentence))}” says who you are, not what you want from an answer: the board "
                 "takes its tone and domain from it and no measured property; say what you want, e.g. “Keep it "
                 "brief.” or “Don't refuse.”")  # fmt: skip
    for sentence, guessed in read.unsure:
        guess = " · ".join(f"{name} {weight:+.1f}" for name, weight in guessed)
        text += (f"\n\nI am unsure what “{as_text(clipped(sentence))}” asks for (I read {guess}), so it counts "
                 "only as read, not at full strength. Saying it plainly helps, e.g. “Keep it brief.” or “I like "
                 "tables.”")  # fmt: skip
    return text


def clipped(sentence: str, limit: int = 80) -> str:
    """A visitor's sentence short enough to quote in a line."""
    return sentence if len(sentence) <= limit else sentence[: limit - 3] + "..."


def crm_label(scorer) -> str:
    """The CRM as it is loaded: kind, backend and precision ("compositional, ONNX Runtime int8 response encoder")."""
    spec = scorer.spec
    if spec.kind == "compositional":
        if getattr(scorer, "backend", "torch") == "onnx":
            quantize = getattr(scorer.encoder, "meta", {}).get("quantize") or "fp32"
            return f"compositional, ONNX Runtime {quantize} response encoder, {spec.max_length} tokens"
        return f"compositional, PyTorch float16 encoder, {spec.max_length} tokens"
    runtime = "ONNX Runtime" if type(scorer).__name__.lower().startswith("onnx") else "PyTorch"
    return f"cross-encoder ({spec.objective}), {runtime}, {spec.base_model or Path(scorer.folder).name}"


def downloads(board: Leaderboard, folder: Path) -> list[str]:
    """The leaderboard as CSV and JSON files for the download buttons."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path, csv_path = folder / "leaderboard.json", folder / "leaderboard.csv"
    json_path.write_text(json.dumps(board.to_json(), indent=2), encoding="utf-8")
    with open(csv_path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([*CSV_COLUMNS, *board.topics])
        for row in board.rows:  # numbers as numbers (fractions), blank where there is none (the baseline's CI)
            ci = ("", "") if row["baseline"] else (row["ci_low"], row["ci_high"])
            writer.writerow([row["rank"], row["rank_ub"] if row["rank_ub"] is not None else "", row["model"],
                             row["baseline"], row["win_rate"], *ci, row["lc_win_rate"], row["n"], row["avg_words"],
                             *(row["topics"].get(t, "") for t in board.topics)])  # fmt: skip
    return [str(csv_path), str(json_path)]
