"""Replace the shipped CRM with a refit only when the development checks say it is better.

    USL_EMBEDDINGS=data/embeddings uv run python training/promote.py --candidate runs/crm-x/best-int8 \
        --shared ../shared/data [--replace]

Both CRMs are judged on data no reported number uses: benchmarks/judge_report.py on AlpacaEval's training half
with the development length phrasings, and training/experiments/reading_by_property.py's development banks (how many
of their phrasings each CRM reads right). The candidate is better when no check is worse by more than `--slack`
and at least one is better by more than it; a check that counts items (phrasings, twins) moves only by more than
one item too. With --replace, a better candidate replaces space/models/
crm-compositional whole (its files land in one commit: `git add space/models/crm-compositional`); otherwise nothing
is touched. Either way the table is printed and, with --output, written as JSON. A refit for an experiment stays in
runs/ (ignored by git); only this command moves one into the repository.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHIPPED = REPO / "space" / "models" / "crm-compositional"
# (what the table calls it, the judge report summary's key, +1: higher is better / -1: lower is better)
JUDGE_CHECKS = [
    ("twins in order", "twins in order (all)", 1),
    ("asked twin ahead by 10+ points", "asked twin ahead by >= 10 points", 1),
    ("concise top 5 above the median LC", "concise top 5 above the median LC", 1),
    ("concise top 5 shorter than the general", "concise top 5 shorter than the general top 5", 1),
    ("detailed top 5 above the median LC", "detailed top 5 above the median LC", 1),
    ("detailed top 5 longer than the general", "detailed top 5 longer than the general top 5", 1),
    ("concise and detailed top 5 share <= 2", "concise/detailed top 5 share <= 2", 1),
    ("general board vs LC, tau", "tau vs LC, original 40 / all defaults", 1),
    ("order under another baseline, tau", "tau, other models, two baselines (>= 0.85)", 1),
    ("gpt-4o's win rate over the baseline", "gpt-4o beats the baseline (win rate > 0.5)", 1),
    ("NullModel from the bottom, worst phrasing", "NullModel from the bottom: general / worst phrasing", -1),
]
READING_BANKS = [
    "development",
    "second development",
    "length in units",
    "negation and idiom",
    "wishes as typed (the six)",
    "wishes as typed, second set (the six)",
    "wishes as typed, third set (variety, repetition)",
    "wishes as typed, fourth set (variety, repetition)",
    "wishes as typed, fifth set (dialogue, nonanswer)",
    "wishes as typed, sixth set (dialogue, nonanswer)",
    "wishes as typed, seventh set (dialogue)",
    "wishes as typed, eighth set (dialogue)",
    "wishes as typed, ninth set (AI prose)",
    "wishes as typed, tenth set (AI prose)",
    "wishes as typed, eleventh set (nonanswer)",
    "wishes as typed, twelfth set (nonanswer)",
    "wishes as typed, thirteenth set (the answer's language)",
    "wishes as typed, fourteenth set (the answer's language)",
    "wishes as typed, fifteenth set (AI prose, dialogue, nonanswer)",
    "wishes as typed, sixteenth set (AI prose, dialogue, nonanswer)",
    "wishes as typed, seventeenth set (nonanswer)",
    "wishes as typed, eighteenth set (nonanswer)",
    "wishes as typed, nineteenth set (nonanswer, language, AI prose, dialogue)",
    "wishes as typed, twentieth set (nonanswer, language, AI prose, dialogue)",
    "wishes as typed, twenty-first set (turns, the six)",
    "wishes as typed, twenty-second set (turns, the six)",
    "wishes as typed, twenty-third set (more turns, the six)",
    "wishes as typed, twenty-fourth set (more turns, the six)",
    "wishes as typed, twenty-fifth set (exclamations, headings, summary)",
    "wishes as typed, twenty-sixth set (exclamations, headings, summary)",
    "wishes as typed, twenty-seventh set (exclamations, reading grade)",
    "wishes as typed, twenty-eighth set (exclamations, reading grade)",
    "wishes as typed, twenty-ninth set (small amounts)",
    "wishes as typed, thirtieth set (small amounts)",
    "wishes as typed, thirty-first set (the thing as the subject)",
    "wishes as typed, thirty-second set (the thing as the subject)",
    "wishes as typed, thirty-third set (words the lists lacked)",
    "wishes as typed, thirty-fourth set (words the lists lacked)",
    "wishes as typed, thirty-fifth set (the thing judged)",
    "wishes as typed, thirty-sixth set (the thing judged)",
    "wishes as typed, thirty-seventh set (more, by its absence)",
    "wishes as typed, thirty-eighth set (more, by its absence)",
    "wishes as typed, thirty-ninth set (a dislike denied, you keep)",
    "wishes as typed, fortieth set (a dislike denied, you keep)",
    "wishes as typed, forty-first set (idioms of plenty)",
    "wishes as typed, forty-second set (idioms of plenty)",
    "wishes as typed, forty-third set (sent away, let off)",
    "wishes as typed, forty-fourth set (sent away, let off)",
    "wishes as typed, forty-fifth set (worn out, doubted)",
    "wishes as typed, forty-sixth set (worn out, doubted)",
    "wishes as typed, forty-seventh set (the least decided)",
    "wishes as typed, forty-eighth set (the least decided)",
    "wishes as typed, forty-ninth set (the least decided, again)",
    "wishes as typed, fiftieth set (the least decided, again)",
    "wishes as typed, fifty-first set (compliance, caution, English)",
    "wishes as typed, fifty-second set (compliance, caution, English)",
    "wishes as typed, fifty-third set (non-answers and languages by name)",
    "wishes as typed, fifty-fourth set (non-answers and languages by name)",
    "wishes as typed, fifty-fifth set (frames that turn)",
    "wishes as typed, fifty-sixth set (frames that turn)",
    "wishes as typed, fifty-seventh set (more frames that turn)",
    "wishes as typed, fifty-eighth set (more frames that turn)",
    "wishes as typed, fifty-ninth set (wishes beside context)",
    "wishes as typed, sixtieth set (wishes beside context)",
    "wishes as typed, sixty-first set (languages named as things)",
    "wishes as typed, sixty-second set (languages named as things)",
    "wishes as typed, sixty-third set (compliance named as things)",
    "wishes as typed, sixty-fourth set (compliance named as things)",
    "wishes as typed, sixty-fifth set (good faith, judgment, hard topics)",
    "wishes as typed, sixty-sixth set (good faith, judgment, hard topics)",
    "wishes as typed, sixty-seventh set (not my first language)",
    "wishes as typed, sixty-eighth set (not my first language)",
    "third development",
    "fourth development",
    "fifth development",
]


def shown(path: Path) -> str:
    """A folder as the results name it: relative to the repository when inside it (no machine's absolute path is
    written into a result file)."""
    resolved = path.resolve()
    return str(resolved.relative_to(REPO)) if resolved.is_relative_to(REPO) else str(path)


def number(value: object, last: bool = False) -> float:
    """A summary cell as one number: "264/324" as a share, "0.697 / 0.714" as its first (or `last`) value."""
    if isinstance(value, int | float):
        return float(value)
    text = str(value)
    parts = [p.strip() for p in text.split(" / ")]
    part = parts[-1] if last else parts[0]
    if "/" in part:
        right, total = part.split("/")
        return float(right) / max(float(total), 1.0)
    return float(part)


def items(value: object) -> int:
    """How many items a count cell is out of ("264/324": 324); 0 for a number (a tau, a rate, a place)."""
    part = str(value).split(" / ")[0].strip()
    return int(float(part.split("/")[1])) if "/" in part and not isinstance(value, int | float) else 0


Check = tuple[float, int, int]  # (value, +1 higher is better / -1 lower is better, items it counts: 0 for a number)


def measures(judge_summary: dict, reading: dict) -> dict[str, Check]:
    """The checks of one CRM: {name: (value, direction, items)} from its judge report summary and its reading
    report."""
    out = {}
    for name, key, direction in JUDGE_CHECKS:
        cell = judge_summary[key]
        out[name] = (number(cell, last=key.startswith("NullModel")), direction, items(cell))
    for bank in READING_BANKS:
        counts = reading["banks"][bank].values()
        right, total = sum(c.get("right", 0) for c in counts), sum(c["phrasings"] for c in counts)
        out[f"{bank} phrasings read right"] = (right / max(total, 1), 1, total)
    return out


def verdict(shipped: dict[str, tuple], candidate: dict[str, tuple], slack: float) -> tuple[bool, list[dict]]:
    """(better, rows): better when no check is worse by more than `slack` and at least one is better by more. A
    check that counts items (a third element: how many) moves only by more than one item as well: one phrasing of
    the 25 in units of text is 0.04, twice the slack, and a single phrasing read the other way is noise, not a
    verdict on a refit (the twelfth session's refit was vetoed so)."""
    rows = []
    for name, (old, direction, *counted) in shipped.items():
        new = candidate[name][0]
        gain = (new - old) * direction
        n = counted[0] if counted else 0
        moved = abs(gain) > slack and (not n or abs(round(gain * n)) > 1)
        rows.append({"check": name, "shipped": round(old, 4), "candidate": round(new, 4),
                     "change": "same" if not moved else "better" if gain > 0 else "worse"})  # fmt: skip
    changes = [r["change"] for r in rows]
    return "worse" not in changes and "better" in changes, rows


def judged(folder: Path, shared: Path, work: Path, label: str) -> dict[str, Check]:
    """Run both development reports on one CRM folder and read its checks."""
    judge_out, reading_out = work / f"{label}-judge.json", work / f"{label}-reading.json"
    run = [sys.executable]
    subprocess.run([*run, str(REPO / "benchmarks" / "judge_report.py"), "--data", str(shared / "usl" / "alpaca_eval"),
                    "--model", f"{label}={folder}", "--half", "training", "--phrasings", "development",
                    "--output", str(judge_out)], check=True)  # fmt: skip
    subprocess.run([*run, str(REPO / "training" / "experiments" / "reading_by_property.py"), "--model", str(folder),
                    "--output", str(reading_out)], check=True)  # fmt: skip
    summary = json.loads(judge_out.read_text())["summary"][0]
    return measures(summary, json.loads(reading_out.read_text()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidate", type=Path, required=True,
                        help="the refitted CRM folder, exported as it ships (crm-export --quantize int8)")  # fmt: skip
    parser.add_argument("--shipped", type=Path, default=SHIPPED, help="the CRM it would replace")
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data", help="the shared data folder")
    parser.add_argument("--slack", type=float, default=0.02,
                        help="a check moves only when it changes by more than this (shares and taus), and a "
                        "count by more than one item")  # fmt: skip
    parser.add_argument(
        "--replace", action="store_true", help="replace the shipped folder when the candidate is better"
    )
    parser.add_argument("--output", type=Path, help="write the table and the verdict here (JSON)")
    args = parser.parse_args(argv)
    for folder in (args.candidate, args.shipped):
        if not (folder / "crm.json").is_file():
            parser.error(f"{folder}: not a CRM folder (no crm.json)")
    with tempfile.TemporaryDirectory() as work:
        shipped = judged(args.shipped, args.shared, Path(work), "shipped")
        candidate = judged(args.candidate, args.shared, Path(work), "candidate")
    better, rows = verdict(shipped, candidate, args.slack)
    for row in rows:
        print(f"{row['check']:45s} {row['shipped']:8.3f} {row['candidate']:8.3f}  {row['change']}")
    print(f"promote: the candidate is {'better' if better else 'not better'} on the development checks")
    if args.output:
        record = {"candidate": shown(args.candidate), "shipped": shown(args.shipped), "slack": args.slack,
                  "better": better, "checks": rows}  # fmt: skip
        args.output.write_text(json.dumps(record, indent=1) + "\n")
    if better and args.replace:
        staging = args.shipped.with_name(f".{args.shipped.name}.new")
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(args.candidate, staging)
        old = args.shipped.with_name(f".{args.shipped.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        args.shipped.rename(old)  # at every moment one whole folder holds the name, or a whole one is next to it
        staging.rename(args.shipped)
        shutil.rmtree(old)
        print(f"promote: {args.shipped} replaced; commit it in one step: git add {shown(args.shipped)}")
    return 0 if better or not args.replace else 1


if __name__ == "__main__":
    raise SystemExit(main())
