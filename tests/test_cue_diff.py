"""training/experiments/cue_diff.py: an older copy of the word lists is read from a file or a git revision, and a
sentence the change turns is counted by whether it now reads as asked; a sentence it does not touch is not counted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "training" / "experiments"))

from crm_core.compositional import cues  # noqa: E402
from cue_diff import CUES, compare, load_lists, unread_banks  # noqa: E402


def test_a_turn_taken_out_of_an_older_copy_counts_as_a_change_to_the_asked_reading(tmp_path):
    source = (REPO / CUES).read_text()
    assert "had it with|" in source  # the older copy lacks this one turn
    old_file = tmp_path / "cues_before.py"
    old_file.write_text(source.replace("had it with|", ""))
    old = load_lists(str(old_file))
    items = [("I've had it with machine-sounding prose.", ("ai_prose", -1)),  # turned by the change
             ("Keep it brief.", ("words", -1))]  # untouched  # fmt: skip
    result = compare(old, cues, items)
    assert result["sentences"] == 2 and result["differ"] == 1 and result["to asked"] == 1
    [change] = result["changed"]
    assert change["before"][0] == ("ai_prose", 1) and change["after"][0] == ("ai_prose", -1)
    assert "from asked" not in result


def test_a_reading_lost_by_the_change_counts_against_it(tmp_path):
    source = (REPO / CUES).read_text()
    (tmp_path / "before.py").write_text(source)
    (tmp_path / "after.py").write_text(source.replace("had it with|", ""))
    before, after = load_lists(str(tmp_path / "before.py")), load_lists(str(tmp_path / "after.py"))
    result = compare(before, after, [("I've had it with machine-sounding prose.", ("ai_prose", -1))])
    assert result["differ"] == 1 and result["from asked"] == 1 and "to asked" not in result


def test_the_older_lists_come_from_a_git_revision_or_the_command_says_what_is_wrong():
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    head = load_lists("HEAD")
    assert hasattr(head, "read_cues") and head.VERSION
    with pytest.raises(SystemExit, match="neither a file nor a git revision"):
        load_lists("no-such-revision-anywhere")


def test_a_set_kept_unread_is_named_among_the_banks_or_the_command_says_which_exist():
    names = ["development", "wishes as typed, forty-sixth set (worn out, doubted)"]
    assert unread_banks(names, ["wishes as typed, forty-sixth set (worn out, doubted)"]) == {names[1]}
    assert unread_banks(names, []) == set()
    with pytest.raises(ValueError, match="no such bank; known: 'development'"):
        unread_banks(names, ["forty-sixth set"])
