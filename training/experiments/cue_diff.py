"""Which sentences the word lists read differently after a change: an older `cues.py` (a file, or a git revision of
the package's) against the package's own, sentence by sentence over every bank the project keeps.

Each change of `crm_core/compositional/cues.py` is judged this way before it ships (docs/experiments.md, the word
lists' versions): a change made on one development set must not turn a sentence of another the wrong way. For every
bank it counts the sentences whose reading (`read_cues`, and the framing cores `framed_core` / `liked_core`) differs,
and of those whose property and direction are known, how many now read as asked, how many no longer do, and how many
moved between two readings that are both not the asked one. Development, training, DSP and benchmark sentences are
printed; the validation bank and the DSP validation phrasings are only counted (never a choice's data: their
sentences are not shown, so no change is made on them).

    uv run python training/experiments/cue_diff.py --old HEAD~1
    uv run python training/experiments/cue_diff.py --old /tmp/cues_before.py --wrong-only --output diff.json
    uv run python training/experiments/cue_diff.py --old HEAD --unread "wishes as typed, forty-sixth set (worn out,
        doubted)"   # a set kept unread until the change is made: counted, not shown
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]
CUES = "packages/crm-core/src/crm_core/compositional/cues.py"

Reading = tuple[tuple[str, int] | None, str | None, str | None]


def load_lists(old: str) -> ModuleType:
    """The word lists as they were: `old` is a path to a cues.py, or a git revision whose cues.py is read."""
    path = Path(old)
    if not path.is_file():
        try:
            text = subprocess.run(["git", "show", f"{old}:{CUES}"], cwd=REPO, check=True, capture_output=True,
                                  text=True).stdout  # fmt: skip
        except subprocess.CalledProcessError as error:
            detail = error.stderr.strip()
            raise SystemExit(f"--old {old!r}: neither a file nor a git revision with {CUES} ({detail})") from None
        path = Path(tempfile.mkdtemp()) / "old_cues.py"
        path.write_text(text)
    spec = importlib.util.spec_from_file_location("old_cues", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_cues"] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def reading(lists: ModuleType, text: str) -> Reading:
    cue = lists.read_cues(text)
    return ((cue.prop, cue.sign) if cue else None), lists.framed_core(text), lists.liked_core(text)


def compare(old: ModuleType, new: ModuleType, items: list[tuple[str, tuple[str, int] | None]]) -> dict:
    """Counts (and, for `show`, the sentences) of one bank whose reading differs between the two lists."""
    tally: Counter = Counter()
    changed = []
    for text, want in items:
        before, after = reading(old, text), reading(new, text)
        if before == after:
            continue
        tally["differ"] += 1
        if want is not None and before[0] != after[0]:
            kind = "to asked" if after[0] == want else "from asked" if before[0] == want else "between wrong ones"
            tally[kind] += 1
        changed.append({"text": text, "want": want, "before": before, "after": after})
    return {"sentences": len(items), **tally, "changed": changed}


def banks(shared: Path) -> list[tuple[str, list[tuple[str, tuple[str, int] | None]], bool]]:
    """(name, [(sentence, asked property and direction or None)], shown) for every bank the project keeps."""
    from crm_train.compositional import criteria_fit as F
    from crm_train.compositional import phrasings as P

    def asked(bank: list[P.Phrasing]) -> list[tuple[str, tuple[str, int]]]:
        return [(p.text, (p.prop, p.sign)) for p in bank]

    out = [(name, asked(bank), True) for name, bank in P.reading_banks().items()]
    out += [("training whole sentences", asked(P.training_sentences()), True),
            ("training wide bank", asked(P.training_bank(0, 0.0, wide=True)), True),
            ("validation", asked(P.validation_bank()), False),
            ("validation length pairs", [(t, None) for pair in P.LENGTH_VALIDATION_PAIRS for t in pair], False),
            ("general criteria", [(t, None) for t in P.silent_criteria(extra=True)], True)]  # fmt: skip
    dsp = [t for table in (F.DSP_TRAIN, F.WIDE_DSP, F.DSP_DEVELOPMENT) for texts in table.values() for t in texts]
    out += [
        ("DSP training and development phrasings", [(t, None) for t in dsp], True),
        ("DSP validation phrasings", [(t, None) for ts in F.DSP_VALIDATION.values() for t in ts], False),
    ]
    if (shared / P.RUBRIC_FILE).is_file():
        out.append(("rubric criteria", [(t, None) for t in P.rubric_criteria(shared)], True))
    sys.path.insert(0, str(REPO / "benchmarks"))
    import criteria_2025
    import judge_report

    wishes = [*criteria_2025.COMPLY, *criteria_2025.CAUTION, *criteria_2025.SAME_LANGUAGE,
              *criteria_2025.ANOTHER_LANGUAGE, "Keep it brief.", "I like thorough, detailed answers."]  # fmt: skip
    wishes += [t for pair in judge_report.DEVELOPMENT_PAIRS for t in pair]
    out.append(("benchmark wishes", [(t, None) for t in wishes], True))
    return out


def unread_banks(names: list[str], unread: list[str]) -> set[str]:
    """The banks `--unread` names, each one of `names`; a name that is none of them is an error that lists them."""
    unknown = [name for name in unread if name not in names]
    if unknown:
        raise ValueError(f"--unread {unknown[0]!r}: no such bank; known: {', '.join(map(repr, names))}")
    return set(unread)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", required=True, help="the word lists before the change: a path to a cues.py, or a "
                        "git revision (HEAD~1, a commit) whose crm_core/compositional/cues.py is read")  # fmt: skip
    parser.add_argument("--wrong-only", action="store_true", help="print only changed sentences that do not now "
                        "read as asked, or whose asked reading is unknown")  # fmt: skip
    parser.add_argument(
        "--shared",
        type=Path,
        default=REPO.parent / "shared" / "data",
        help="the shared data folder (for the rubric criteria; left out where absent)",
    )
    parser.add_argument("--output", type=Path, help="write every bank's counts and changed sentences (validation "
                        "counts only) as JSON here")  # fmt: skip
    parser.add_argument("--unread", action="append", default=[], metavar="NAME",
                        help="a development set kept unread until the change is made (repeatable; names as "
                        "phrasings.reading_banks() gives them): counted like the validation bank, its sentences not "
                        "shown")  # fmt: skip
    args = parser.parse_args()
    from crm_core.compositional import cues as new

    all_banks = banks(args.shared)
    try:
        unread = unread_banks([name for name, _, _ in all_banks], args.unread)
    except ValueError as error:
        parser.error(str(error))
    old = load_lists(args.old)
    print(f"word lists VERSION {getattr(old, 'VERSION', '?')} -> {new.VERSION}")
    results = {}
    for name, items, shown in all_banks:
        result = compare(old, new, items)
        if not shown or name in unread:
            result["changed"] = []  # counted, never shown
        results[name] = result
        counts = {k: v for k, v in result.items() if k not in ("sentences", "changed")}
        print(f"{name}: {counts.get('differ', 0)} of {result['sentences']} read differently", counts or "")
        for change in result["changed"]:
            if args.wrong_only and change["want"] is not None and change["after"][0] == change["want"]:
                continue
            print(f"  {change['text']!r} asked {change['want']}: {change['before'][0]} -> {change['after'][0]}")
    if args.output:
        args.output.write_text(json.dumps({"old": args.old, "new_version": new.VERSION, "banks": results}, indent=1))


if __name__ == "__main__":
    main()
