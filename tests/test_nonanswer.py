"""crm_core.nonanswer: refusals, evasions and echoes found by code, and the quality a non-answer loses."""

import json
from dataclasses import replace

import numpy as np
import pytest
from crm_core.nonanswer import echoes, nonanswers, opening, why_nonanswer

ASK = "Write a satirical poem about Brussels' bureaucracy strangling small businesses"


@pytest.mark.parametrize(
    ("response", "why"),
    [
        ("I'm sorry, but I can't help with that.", "refusal"),
        ("I can’t assist with that request. If you have other questions, feel free to ask!", "refusal"),
        ("SAFETY", "refusal"),
        ("En voi kirjoittaa satiiria vakavista aiheista.", "refusal"),
        ("抱歉，我无法提供这样的内容。如果您有其他问题，请随时告诉我。" * 2, "refusal"),
        ("I aim to discuss this topic factually while avoiding partisan rhetoric. Key issues include ...", "evasion"),
        ("The Chinese government has always adhered to the principle of non-interference. " * 3, "evasion"),
        ("中国政府始终坚持以人民为中心的发展思想，一切工作都是为了人民。" * 3, "evasion"),
        (ASK, "echo"),
        ("In Brussels town, where rules are spun, a beast of paper spoils the fun.", None),
        ("I can't help but laugh at the forms. In Brussels town the stamps pile high.", None),
    ],
)
def test_each_kind_is_found_and_a_real_answer_is_not(response, why):
    assert why_nonanswer(ASK, response) == why


def test_a_refusal_counts_in_the_opening_only_and_a_long_answer_that_goes_on_is_not_one():
    poem = "In Brussels town, where rules are spun. " * 40
    assert why_nonanswer(ASK, poem + "I can't write more verses, sorry.") is None  # deep inside: not a refusal
    hedge = "As an AI, I cannot provide legal advice. However, here is what the law usually says. " + "Detail. " * 200
    assert why_nonanswer("Is it legal to keep a found dollar?", hedge) is None
    assert why_nonanswer("Is it legal to keep a found dollar?", hedge[:90]) == "refusal"  # the same, cut short
    assert opening("First. Second! Third.") == "First.Second!"[:6] + " Second!" or opening("First. Second! Third.")


BLOG = "Compose an engaging travel blog post about a recent trip to Hawaii, highlighting the culture."
REASONS = "Thomas is very healthy, but he has to go to the hospital every day. What could the reasons be?"


@pytest.mark.parametrize(
    ("query", "response", "preamble"),
    [
        (BLOG, "Sure!", True),
        (BLOG, "Ah, hand dryers.", True),
        (BLOG, "Title: Aloha, Hawaii!", True),  # a heading nobody asked for, and nothing after it
        (BLOG, "Subject: My Trip\n\nDear [Name],\n\nI hope this email finds you well.", True),
        (BLOG, "Certainly! Here is a blog post about my trip:", True),
        (BLOG, "", True),
        (BLOG, "1.", True),  # a list's first marker alone
        (BLOG, "To plan it, we can break it down into two parts:\n\n1.", True),
        (REASONS, "There could be several reasons for Thomas to visit the hospital daily despite being healthy.", True),
        (REASONS, "Our stages of life shape how we see time in many ways.", True),
        (REASONS, "There are several reasons, such as working there or visiting a relative.", False),
        (REASONS, "He may work at the hospital as a nurse.", False),
        (REASONS, "The AI helps by suggesting some options.", False),  # says what it does, announces nothing
        ("Suggest a title for my blog post about Hawaii.", "Title: Aloha, Hawaii!", False),  # a title was asked for
        ("How many brothers does David have if each of his three sisters has one brother?", "1.", False),
        ("Hello there Obi One Kenobi", "Greetings, young Jedi.", False),  # a greeting answers a greeting
        ('Write "Test"', "Okay, Test.", False),
        ("Respond to the last text in the chat using the correct emojis.", ":relieved: :thumbsup: :smiley:", False),
        (BLOG, "Sure! " + "Hawaii's beaches glow at dusk and the food is superb. " * 8, False),  # says something
    ],
)
def test_a_preamble_alone_is_a_nonanswer_and_a_short_answer_is_not(query, response, preamble):
    assert (why_nonanswer(query, response) == "preamble") is preamble


def test_echo_needs_the_prompt_given_back_not_an_answer_that_restates_it():
    query = "antennas that transmit an equal amount of energy in the horizontal direction are"
    assert echoes(query, query)
    assert not echoes(query, "Antennas that transmit an equal amount of energy in the horizontal direction are called "
                             "omnidirectional antennas.")  # fmt: skip
    assert not echoes("Summarise: " + "the cat sat on the mat " * 5, "the cat sat on the mat " * 5)  # the text alone
    assert list(nonanswers([query, query], [query, "Omnidirectional."])) == [1.0, 0.0]


def test_the_scorer_takes_the_penalty_off_quality_and_a_saved_side_made_without_it_is_stale(tmp_path):
    from conftest import random_compositional_crm
    from crm_core.compositional.scorer import CompositionalScorer

    folder = random_compositional_crm(tmp_path)
    plain = CompositionalScorer(folder)
    texts = ["I'm sorry, but I can't help with that.", "In Brussels town, where rules are spun, the fun is done."]
    base = plain.response_side([ASK, ASK], texts).quality
    penalised = CompositionalScorer(folder)
    penalised.serving = replace(penalised.serving, nonanswer_penalty=1.5)
    np.testing.assert_allclose(penalised.response_side([ASK, ASK], texts).quality, base - [1.5, 0.0], atol=1e-9)
    spec = json.loads((folder / "crm.json").read_text())
    spec["extra"]["serving"]["nonanswer_penalty"] = 1.5
    (folder / "crm.json").write_text(json.dumps(spec))
    assert CompositionalScorer(folder).serving.nonanswer_penalty == 1.5
    assert CompositionalScorer(folder).response_side_id != plain.response_side_id


def test_cut_short_needs_long_answers_around_it_and_counts_chinese_by_characters():
    from crm_core.nonanswer import cut_short, length_units

    essays = ["word " * 600, "word " * 800, "word " * 1000, "word " * 700]
    one_line = "The Great Firewall filters the internet."
    assert list(cut_short([one_line, essays[0]], [essays, essays], 3.0)) == [1.0, 0.0]
    notes = ["a short note of twenty words " * 4] * 4  # the others are short too: a short answer is no stub
    assert list(cut_short([one_line], [notes], 3.0)) == [0.0]
    assert list(cut_short([one_line], [essays[:2]], 3.0)) == [0.0]  # fewer than three others: nothing to go by
    assert length_units("中国的审查制度") == 3.5 and length_units("GDP 增长") == 2.0


def test_the_scorer_flags_an_answer_cut_short_only_when_told_to_and_keys_its_tables_apart(tmp_path):
    from conftest import random_compositional_crm
    from crm_core.compositional.scorer import CompositionalScorer

    scorer = CompositionalScorer(random_compositional_crm(tmp_path))
    scorer.serving = replace(scorer.serving, nonanswer_penalty=1.0)
    essays = ["In Brussels the forms pile high and every stamp needs two more stamps. " * 20] * 4
    texts = ["Brussels has forms.", essays[0]]
    off = scorer.response_side([ASK, ASK], texts, [essays, essays]).quality
    before = scorer.response_side_id
    scorer.serving = replace(scorer.serving, cut_short_doublings=3.0)
    on = scorer.response_side([ASK, ASK], texts, [essays, essays]).quality
    np.testing.assert_allclose(on, off - [1.0, 0.0], atol=1e-9)
    assert scorer.response_side_id != before
