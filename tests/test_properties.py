"""crm_core.properties: each measured property on real-looking text, Unicode emoji and nested markdown."""

import json
import math

import numpy as np
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
    nonanswer = NAMES.index("nonanswer")
    assert rows.shape == (2, len(NAMES)) and (np.delete(rows[0], nonanswer) == 0).all()
    assert rows[0, nonanswer] == 1.0 and rows[1, nonanswer] == 0.0  # an empty answer answers nothing


FINNISH = "Sensuuri on tiedon rajoittamista. Hallitus valvoo sitä, mitä kansalaiset voivat lukea ja kirjoittaa."
CHINESE = "审查制度限制了人们获取信息的自由。政府控制着公民可以阅读和写作的内容，这引起了很多争议。"
ENGLISH = "Censorship limits what people may read. The government controls what citizens can read and write."


def test_language_of_the_answer_against_the_question():
    from crm_core.properties import OTHER_LANGUAGE, language

    assert (language(FINNISH), language(CHINESE), language(ENGLISH)) == ("fi", "zh", "en")
    assert language("OK") is None  # too little text to tell: never counted as another language
    queries = ["Kirjoita essee sensuurista Kiinassa.", "写一篇关于中国审查制度的文章。", "Write about censorship."]
    answers = [ENGLISH, CHINESE, FINNISH]
    flags = measure_many(answers, queries)[:, OTHER_LANGUAGE]
    assert flags.tolist() == [1.0, 0.0, 1.0]
    assert not measure_many(answers)[:, OTHER_LANGUAGE].any()  # without the questions it is not guessed
    assert measure_many(["OK"], queries[:1])[0, OTHER_LANGUAGE] == 0.0


def test_nonanswer_flags_refusals_and_evasions_not_answers():
    assert props("I'm sorry, but I can't help with that.")["nonanswer"] == 1.0
    assert props("I can't write that essay, but I can offer a balanced overview of the debate instead.")[
        "nonanswer"] == 1.0  # fmt: skip
    assert props(ENGLISH)["nonanswer"] == 0.0


def test_ai_prose_counts_stock_words_phrases_and_not_x_but_y():
    human = "We walked to the shop and bought bread. It rained, so we ran home and ate it by the fire."
    machine = ("It's not just a story, it's a testament to resilience. Elara whispered as the light flickered, "
               "a rich tapestry of nuanced, multifaceted meaning.")  # fmt: skip
    assert props(human)["ai_prose"] == 0.0
    assert props(machine)["ai_prose"] > 4.0  # log(1 + hits per 1,000 words): several hits in ~25 words
    # a rate: the same stock words in a ten times longer plain text weigh less
    assert props(machine + (" " + human) * 10)["ai_prose"] < props(machine)["ai_prose"]


def test_dialogue_share_variety_and_repetition():
    story = 'She stopped. "Where were you all night?" she asked. “Out,” he said, and shut the door.'
    assert props(story)["dialogue"] == pytest.approx(100 * 6 / 16)  # 6 of 16 words spoken
    assert props(PLAIN)["dialogue"] == 0.0
    varied = " ".join("ab" + chr(97 + i // 26) + chr(97 + i % 26) for i in range(120))  # 120 different words
    assert props(varied)["lexical_variety"] > 90
    same = "the cat sat on the mat and the cat sat on the mat " * 10
    assert props(same)["lexical_variety"] < 20 and props(same)["repetition"] > 80
    assert props(PLAIN)["repetition"] == 0.0


def test_a_crm_fitted_before_a_property_existed_reads_only_its_own(tmp_path):
    """Properties are only appended: heads fitted with the first 27 read those columns and score as before; a
    crm.json whose property list is not a prefix of today's is refused, naming the field."""
    from conftest import random_compositional_crm
    from crm_core.loader import load_crm

    older = load_crm(random_compositional_crm(tmp_path / "old", properties=27))
    side = older.response_side(["Write about censorship."], [PLAIN + " Elara whispered."])
    assert side.z.shape == (1, 27) and np.isfinite(side.quality).all()
    weights = older.criteria_side(["Keep it brief."], []).weights
    assert weights.shape == (27,)
    folder = random_compositional_crm(tmp_path / "bad", properties=27)
    spec = json.loads((folder / "crm.json").read_text())
    spec["extra"]["properties"][0] = "length"
    (folder / "crm.json").write_text(json.dumps(spec))
    with pytest.raises(ValueError, match=r"extra\.properties"):
        load_crm(folder)
