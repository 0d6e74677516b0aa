"""crm_core.properties: each measured property on real-looking text, Unicode emoji and nested markdown."""

import math

import pytest
from crm_core.properties import NAMES, PROPERTIES, as_dict, measure_many

PLAIN = "Paris is the capital of France. It lies on the Seine."


def props(text: str) -> dict[str, float]:
    return as_dict(text)


def count(value: float) -> int:
    return round(math.expm1(value))


def test_at_least_twenty_documented_properties():
    assert len(PROPERTIES) >= 20 and len(set(NAMES)) == len(NAMES)
    import crm_core.properties as module

    for name in NAMES:  # every property has a row in the module's table
        assert f"| {name} |" in module.__doc__


def test_words_sentences_and_paragraphs():
    p = props(PLAIN + "\n\nA second paragraph here.")
    assert p["words"] == pytest.approx(math.log2(1 + 15))
    assert count(p["sentences"]) == 3 and count(p["paragraphs"]) == 2
    assert p["sentence_length"] == pytest.approx(15 / 3)


def test_lists_nested_and_numbered():
    text = "Steps:\n1. Open the lid.\n2) Pour **slowly**.\n   - nested bullet\n   * another\n• unicode bullet"
    p = props(text)
    assert count(p["numbered"]) == 2 and count(p["bullets"]) == 3 and count(p["bold"]) == 1


def test_headings_bold_lines_and_tables():
    text = "# Title\n## Part\n**Summary:**\n\n| a | b |\n|---|---|\n| 1 | 2 |\nSome **bold** word."
    p = props(text)
    assert count(p["headings"]) == 3  # two markdown headings and a bold line
    assert count(p["bold"]) == 1  # the bold line is a heading, not emphasis
    assert count(p["tables"]) == 3


def test_code_blocks_inline_code_and_unclosed_fence():
    text = "Use `len(x)`:\n```python\nprint(len('a?'))\n```\nand\n```\nunclosed # not a heading?"
    p = props(text)
    assert count(p["code_blocks"]) == 2 and count(p["inline_code"]) == 1
    assert count(p["questions"]) == 0 and count(p["headings"]) == 0  # code is not prose


def test_unicode_emoji_flags_skin_tones_and_zwj_sequences():
    assert count(props("Great job 👍🏽! Vive la 🇫🇷. Family: 👨‍👩‍👧. ❤️ 3️⃣")["emoji"]) == 5
    assert props(PLAIN)["emoji"] == 0.0
    assert props("Last line of a long answer. " * 300 + "🎉")["emoji"] > 0  # read in full, never a window


def test_links_questions_and_question_back():
    text = "See https://example.org and [docs](http://x.y/z). Is that clear? Would you like an example?"
    p = props(text)
    assert count(p["links"]) == 2 and count(p["questions"]) == 2 and p["question_back"] == 1.0
    assert props("Is it? Yes. It is. Done.")["question_back"] == 0.0


def test_apology_disclaimer_refusal_caveats():
    text = (
        "I'm sorry, but as an AI language model I cannot provide medical advice. Please note that you should "
        "consult a doctor."
    )
    p = props(text)
    assert count(p["apology"]) >= 1 and count(p["ai_disclaimer"]) >= 1 and count(p["refusal"]) == 1
    assert count(p["caveats"]) == 2
    assert all(props(PLAIN)[k] == 0 for k in ("apology", "ai_disclaimer", "refusal", "caveats"))


def test_persons_numbers_quotes_exclamations_opener_summary():
    text = (
        'Sure! I think you will love it!! You said "this is great". It costs 12.5 dollars, 30% off.\n> quoted\n'
        "In summary, buy it."
    )
    p = props(text)
    assert p["greeting"] == 1.0 and p["summary"] == 1.0
    assert count(p["exclamations"]) == 3 and count(p["numbers"]) == 2 and count(p["quotes"]) == 2
    assert p["first_person"] > 0 and p["second_person"] > p["first_person"]


def test_reading_grade_orders_simple_and_complex_prose():
    simple = "The cat sat. The dog ran. We had fun. It was hot."
    hard = (
        "Institutional considerations notwithstanding, the epistemological ramifications of computational "
        "methodologies necessitate comprehensive interdisciplinary evaluation."
    )
    assert props(simple)["reading_grade"] < props(hard)["reading_grade"]
    assert 0 <= props(hard)["reading_grade"] <= 20


def test_measure_many_shape_and_empty_text():
    rows = measure_many(["", PLAIN])
    assert rows.shape == (2, len(NAMES)) and (rows[0] == 0).all()
