"""How people ask for (or against) each measured property: a training bank, a validation bank never trained on,
and development banks for choosing settings. The wordings are data (banks/*.toml); this module draws from them.

Each steerable property has nouns for it and, where there is one, antonym nouns ("long, detailed answers" / "short
answers"). A liking template over a noun, or a disliking template over an antonym, asks for more; the other two
combinations ask for less, so negation and dislikes are learned from the same nouns, not from keyword rules.
Informal variants and typos are drawn from the training bank. The validation bank has its own templates and
nouns, written separately, and is never trained on: every reported number uses it.
"""

from __future__ import annotations

import json
import random
import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

Nouns = dict[str, tuple[list[str], list[str]]]  # property: (nouns or sentences FOR it, ANTONYMS: less of it)


def _read(name: str) -> dict:
    with open(Path(__file__).with_name("banks") / f"{name}.toml", "rb") as handle:
        return tomllib.load(handle)


def development_sentences(table: str) -> dict[str, list[str]]:
    """A development.toml table of plain sentence lists by name (`foreign_wishes`, `visitors_questions`,
    `context_sentences`): sets read by the checks of one rule, with no property or direction of their own."""
    return _DEVELOPMENT[table]


def _nouns(table: dict) -> Nouns:
    return {prop: (lists.get("more", []), lists.get("less", [])) for prop, lists in table.items()}


_TRAIN, _VALIDATION, _DEVELOPMENT = _read("train"), _read("validation"), _read("development")
TRAIN_NOUNS, TRAIN_SENTENCES = _nouns(_TRAIN["nouns"]), _nouns(_TRAIN["sentences"])
LIKE, DISLIKE, TRAIN_GENERAL = _TRAIN["like"], _TRAIN["dislike"], _TRAIN["general"]
WIDE_NOUNS, WIDE_SENTENCES = _nouns(_TRAIN["wide_nouns"]), _nouns(_TRAIN["wide_sentences"])
WIDE_LIKE, WIDE_DISLIKE = _TRAIN["wide_like"], _TRAIN["wide_dislike"]
# more wordings that do not raise a property's share of the fit's rows (row_shares; config keep_row_shares)
WORDING_NOUNS, WORDING_SENTENCES = _nouns(_TRAIN.get("wording_nouns", {})), _nouns(_TRAIN.get("wording_sentences", {}))
VALIDATION_NOUNS, VALIDATION_GENERAL = _nouns(_VALIDATION["nouns"]), _VALIDATION["general"]
VALIDATION_LIKE, VALIDATION_DISLIKE = _VALIDATION["like"], _VALIDATION["dislike"]
LENGTH_VALIDATION_PAIRS = [(more, less) for more, less in _VALIDATION["length_pairs"]]  # the judge report's pairs
DEVELOPMENT_NOUNS, DEVELOPMENT_GENERAL = _nouns(_DEVELOPMENT["nouns"]), _DEVELOPMENT["general"]
DEVELOPMENT_LIKE, DEVELOPMENT_DISLIKE = _DEVELOPMENT["like"], _DEVELOPMENT["dislike"]
SECOND_DEVELOPMENT_NOUNS = _nouns(_DEVELOPMENT["second_nouns"])
SECOND_DEVELOPMENT_LIKE, SECOND_DEVELOPMENT_DISLIKE = _DEVELOPMENT["second_like"], _DEVELOPMENT["second_dislike"]
THIRD_DEVELOPMENT_LIKE, THIRD_DEVELOPMENT_DISLIKE = _DEVELOPMENT["third_like"], _DEVELOPMENT["third_dislike"]
FOURTH_DEVELOPMENT_LIKE, FOURTH_DEVELOPMENT_DISLIKE = _DEVELOPMENT["fourth_like"], _DEVELOPMENT["fourth_dislike"]
FIFTH_DEVELOPMENT_LIKE, FIFTH_DEVELOPMENT_DISLIKE = _DEVELOPMENT["fifth_like"], _DEVELOPMENT["fifth_dislike"]
UNIT_DEVELOPMENT_SENTENCES = _nouns(_DEVELOPMENT["unit_sentences"])
NEGATION_DEVELOPMENT_SENTENCES = {prop: (lists.get("more", []), lists.get("less", []))
                                  for prop, lists in _DEVELOPMENT["negation_sentences"].items()}  # fmt: skip
WISH_DEVELOPMENT_SENTENCES = _nouns(_DEVELOPMENT["wish_sentences"])
SECOND_WISH_DEVELOPMENT_SENTENCES = _nouns(_DEVELOPMENT["wish_sentences_2"])
THIRD_WISH_DEVELOPMENT_SENTENCES = _nouns(_DEVELOPMENT["wish_sentences_3"])
FOURTH_WISH_DEVELOPMENT_SENTENCES = _nouns(_DEVELOPMENT["wish_sentences_4"])
FIFTH_WISH_DEVELOPMENT_SENTENCES = _nouns(_DEVELOPMENT["wish_sentences_5"])
SIXTH_WISH_DEVELOPMENT_SENTENCES = _nouns(_DEVELOPMENT["wish_sentences_6"])


@dataclass(frozen=True)
class Phrasing:
    text: str
    prop: str
    sign: int  # +1: more of the property wins; -1: less of it wins


def _fill(template: str, noun: str) -> str:
    text = template.replace("{n}", noun).replace("{N}", noun[:1].upper() + noun[1:])
    return text


def _bank(nouns: dict, like: list[str], dislike: list[str]) -> list[Phrasing]:
    """Liking a noun for the property, or disliking its antonym, asks for more; the other two ask for less."""
    out = []
    for prop, (names, antonyms) in nouns.items():
        for template in like:
            out += [Phrasing(_fill(template, n), prop, +1) for n in names]
            out += [Phrasing(_fill(template, n), prop, -1) for n in antonyms]
        for template in dislike:
            out += [Phrasing(_fill(template, n), prop, -1) for n in names]
            out += [Phrasing(_fill(template, n), prop, +1) for n in antonyms]
    return list(dict.fromkeys(out))


def typo(text: str, rng: random.Random) -> str:
    """One swapped, dropped or doubled letter, and sometimes lower case without the final stop."""
    letters = [i for i, c in enumerate(text) if c.isalpha()]
    if len(letters) > 3:
        i = rng.choice(letters[1:-1])
        kind = rng.randrange(3)
        if kind == 0 and i + 1 < len(text):
            text = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
        elif kind == 1:
            text = text[:i] + text[i + 1 :]
        else:
            text = text[:i] + text[i] + text[i:]
    if rng.random() < 0.5:
        text = text.lower().rstrip(".")
    return text


def _joined(base: dict[str, tuple[list, list]], more: dict[str, tuple[list, list]]) -> dict:
    """Per property, both lists of `base` extended by those of `more`."""
    return {p: (a + more.get(p, ([], []))[0], b + more.get(p, ([], []))[1]) for p, (a, b) in base.items()}


def training_bank(seed: int = 0, typos_per_phrasing: float = 0.3, wide: bool = False,
                  wordings: bool = False) -> list[Phrasing]:  # fmt: skip
    """The training phrasings (templates and whole sentences) plus typo'd copies of a share of them; `wide` adds
    the wider bank (more nouns, templates and sentences: WIDE_*, and with `wordings` WORDING_*)."""
    nouns, like, dislike, sentences = TRAIN_NOUNS, LIKE, DISLIKE, TRAIN_SENTENCES
    if wide:
        nouns, sentences = _joined(TRAIN_NOUNS, WIDE_NOUNS), _joined(TRAIN_SENTENCES, WIDE_SENTENCES)
        if wordings:
            nouns, sentences = _joined(nouns, WORDING_NOUNS), _joined(sentences, WORDING_SENTENCES)
        like, dislike = LIKE + WIDE_LIKE, DISLIKE + WIDE_DISLIKE
    bank = _bank(nouns, like, dislike)
    for prop, (more, less) in sentences.items():
        bank += [Phrasing(t, prop, +1) for t in more] + [Phrasing(t, prop, -1) for t in less]
    if wide:
        bank = list(dict.fromkeys(bank))
    rng = random.Random(seed)
    extra = [Phrasing(typo(p.text, rng), p.prop, p.sign) for p in bank if rng.random() < typos_per_phrasing]
    return bank + extra


def row_shares(bank: list[Phrasing], seed: int = 0) -> np.ndarray:
    """A drawing probability per phrasing of `bank` (the wide training bank of that seed) such that each property
    keeps the share of rows it has in the bank without the WORDING_* tables, spread evenly over all its phrasings:
    more wordings of a property change what its rows say, not how often they come."""
    before = Counter(p.prop for p in training_bank(seed, wide=True, wordings=False))
    now = Counter(p.prop for p in bank)
    total = sum(before[prop] for prop in now)
    return np.array([before[p.prop] / total / now[p.prop] for p in bank])


def validation_bank() -> list[Phrasing]:
    bank = _bank(VALIDATION_NOUNS, VALIDATION_LIKE, VALIDATION_DISLIKE)
    for more, less in LENGTH_VALIDATION_PAIRS:
        bank += [Phrasing(more, "words", +1), Phrasing(less, "words", -1)]
    return bank


def development_bank() -> list[Phrasing]:
    return _bank(DEVELOPMENT_NOUNS, DEVELOPMENT_LIKE, DEVELOPMENT_DISLIKE)


def second_development_bank() -> list[Phrasing]:
    return _bank(SECOND_DEVELOPMENT_NOUNS, SECOND_DEVELOPMENT_LIKE, SECOND_DEVELOPMENT_DISLIKE)


def third_development_bank() -> list[Phrasing]:
    """The development nouns under a third set of templates (turns such as "I could do without {n}." and "Nothing
    beats {n}."): the word lists' negators and complaints were widened on it."""
    return _bank(DEVELOPMENT_NOUNS, THIRD_DEVELOPMENT_LIKE, THIRD_DEVELOPMENT_DISLIKE)


def fourth_development_bank() -> list[Phrasing]:
    """The development nouns under a fourth set of templates (everyday complaints and idioms with a negator in them,
    complaints that frame what follows): the word lists' VERSION 3 and the liked framing were widened on it."""
    return _bank(DEVELOPMENT_NOUNS, FOURTH_DEVELOPMENT_LIKE, FOURTH_DEVELOPMENT_DISLIKE)


def fifth_development_bank() -> list[Phrasing]:
    """The development nouns under a fifth set of templates, written with the fourth and read once, after VERSION 3
    was made, as a check of turns it was not made on."""
    return _bank(DEVELOPMENT_NOUNS, FIFTH_DEVELOPMENT_LIKE, FIFTH_DEVELOPMENT_DISLIKE)


def _sentences(table: Nouns) -> list[Phrasing]:
    return [Phrasing(t, prop, sign) for prop, lists in table.items()
            for sign, texts in zip((1, -1), lists, strict=True) for t in texts]  # fmt: skip


def training_sentences() -> list[Phrasing]:
    """The training bank's own whole sentences ("Keep it brief."), each with its property and direction: the ones a
    visitor might type as they stand, read back by the reading checks."""
    return _sentences(TRAIN_SENTENCES)


def unit_development_sentences() -> list[Phrasing]:
    """Whole sentences asking for length in units of text ("Keep it to one paragraph."): a third development set."""
    return _sentences(UNIT_DEVELOPMENT_SENTENCES)


def wish_development_sentences() -> list[Phrasing]:
    """Whole sentences as visitors type wishes about the six properties of 2025, both ways: the word lists' own
    development set (crm_core.compositional.cues)."""
    return _sentences(WISH_DEVELOPMENT_SENTENCES)


def second_wish_development_sentences() -> list[Phrasing]:
    """A second set of such wishes in other words (dislike verbs, complaints, plain words): the word lists' VERSION 2
    was widened on it."""
    return _sentences(SECOND_WISH_DEVELOPMENT_SENTENCES)


def third_wish_development_sentences() -> list[Phrasing]:
    """A third set, for word variety and repetition only, in words none of the lists knew: the word lists' VERSION 4
    was widened on it."""
    return _sentences(THIRD_WISH_DEVELOPMENT_SENTENCES)


def fourth_wish_development_sentences() -> list[Phrasing]:
    """A fourth set for the same two, written with the third and read only after VERSION 4 was made."""
    return _sentences(FOURTH_WISH_DEVELOPMENT_SENTENCES)


def fifth_wish_development_sentences() -> list[Phrasing]:
    """A fifth set, for dialogue and declining or complying (nonanswer): the word lists' VERSION 5 was widened on it."""
    return _sentences(FIFTH_WISH_DEVELOPMENT_SENTENCES)


def sixth_wish_development_sentences() -> list[Phrasing]:
    """A sixth set for the same two, written with the fifth and read only after VERSION 5 was made."""
    return _sentences(SIXTH_WISH_DEVELOPMENT_SENTENCES)


def wish_development_set(n: int) -> list[Phrasing]:
    """The n-th set of whole wishes from the seventh on (development.toml `wish_sentences_<n>`), written in pairs: the
    odd one the word lists were widened on, the even one kept unread until that change was made (7/8 dialogue,
    VERSION 6; 9/10 AI-sounding prose, VERSION 7; 11/12 declining and complying, VERSION 9; 13/14 the answer's
    language by name, VERSION 10; 15/16 AI-sounding prose, dialogue and compliance asked for less, VERSION 11; 17/18
    compliance, VERSION 12; 19/20 evasion in idioms, caution, languages across a semicolon, VERSION 15; 21/22 the
    turns around a thing: "X over Y", "prefer X to Y", a question as a complaint, "no problem", VERSION 16; 23/24 a
    thing taken up by a pronoun, "the less X, the better", "X, not Y", "only if", "unless", VERSION 17; 25/26
    exclamation marks, headings and a closing summary, three older properties, VERSION 18; 27/28 a tone asked for
    in words and the reader a text is pitched at, VERSION 19; 29/30 a thing asked for in small amounts, "sparingly",
    "in moderation", "to a minimum", VERSION 20; 31/32 the thing as the subject and the turn in what is said of it,
    "X should be avoided", "X aren't needed", VERSION 21; 33/34 words the lists lacked, "nix", "scrap", shouting,
    takeaways, a school grade, VERSION 22; 35/36 the thing judged by what is said of it, "X drags", "X are lazy",
    VERSION 23; 37/38 more of an older property said through its absence or a holding back negated, "Answers
    without emoji feel cold.", "Don't skimp on the numbers.", and exclamation marks by their sign, VERSION 25; 39/40
    a dislike denied, "Emoji never bother me.", and what the answers keep doing, "You keep repeating yourself.",
    VERSION 26; 41/42 idioms of plenty, "Feel free to use emoji.", "Pile on the tables.", VERSION 27; 43/44 sent
    away and let off, "Emoji belong elsewhere.", "Lay off the clichés.", "Throw in a table.", VERSION 28; 45/46 worn
    out and doubted, "Emoji are so last year.", "Do we really need tables?", "Keep the links coming.", VERSION 29;
    47/48 the four directions decided least often held out, "Kill the purple prose.", "Answer it straight.", "Don't
    water the story down.", VERSION 30; 49/50 fewer non-answers, less dialogue and another language again, "Deliver
    what I asked.", "No he-said-she-said.", "Use English every time.", VERSION 31; 51/52 compliance, caution and
    English from a fresh probe, "If I ask for a roast, write the roast.", "Default to English.", VERSION 35; 53/54
    non-answers and an answer in another language named as things, "No sanctimonious preambles.", VERSION 36;
    55/56 frames that turn, "I want X gone.", "X are the last thing I want.", VERSION 37; 57/58 more frames that
    turn, "X are a no from me.", "I've seen enough X.", VERSION 38; 59/60 wishes written beside context, "give me
    that side only", "My grandmother asks in Chinese and cannot read English.", VERSION 40; 61/62 the answer's
    language named as a thing, "English responses, please.", "I like code-switching.", VERSION 41; 63/64 compliance
    named as a thing, "Frank answers, please.", "I like models that never say no.", VERSION 42; 65/66 good faith,
    judgment and hard topics, "Give me the benefit of the doubt.", "No paternalism.", VERSION 43; 67/68 English
    not the visitor's first language as a wish for plainer words, VERSION 46)."""
    return _sentences(_nouns(_DEVELOPMENT[f"wish_sentences_{n}"]))


def reading_banks() -> dict[str, list[Phrasing]]:
    """Every development set the reading checks read (training/experiments/reading_by_property.py, cue_reader.py;
    training/promote.py compares them by these names), in one order."""
    return {"development": development_bank(), "second development": second_development_bank(),
            "length in units": unit_development_sentences(), "negation and idiom": negation_development_sentences(),
            "wishes as typed (the six)": wish_development_sentences(),
            "wishes as typed, second set (the six)": second_wish_development_sentences(),
            "wishes as typed, third set (variety, repetition)": third_wish_development_sentences(),
            "wishes as typed, fourth set (variety, repetition)": fourth_wish_development_sentences(),
            "wishes as typed, fifth set (dialogue, nonanswer)": fifth_wish_development_sentences(),
            "wishes as typed, sixth set (dialogue, nonanswer)": sixth_wish_development_sentences(),
            "wishes as typed, seventh set (dialogue)": wish_development_set(7),
            "wishes as typed, eighth set (dialogue)": wish_development_set(8),
            "wishes as typed, ninth set (AI prose)": wish_development_set(9),
            "wishes as typed, tenth set (AI prose)": wish_development_set(10),
            "wishes as typed, eleventh set (nonanswer)": wish_development_set(11),
            "wishes as typed, twelfth set (nonanswer)": wish_development_set(12),
            "wishes as typed, thirteenth set (the answer's language)": wish_development_set(13),
            "wishes as typed, fourteenth set (the answer's language)": wish_development_set(14),
            "wishes as typed, fifteenth set (AI prose, dialogue, nonanswer)": wish_development_set(15),
            "wishes as typed, sixteenth set (AI prose, dialogue, nonanswer)": wish_development_set(16),
            "wishes as typed, seventeenth set (nonanswer)": wish_development_set(17),
            "wishes as typed, eighteenth set (nonanswer)": wish_development_set(18),
            "wishes as typed, nineteenth set (nonanswer, language, AI prose, dialogue)": wish_development_set(19),
            "wishes as typed, twentieth set (nonanswer, language, AI prose, dialogue)": wish_development_set(20),
            "wishes as typed, twenty-first set (turns, the six)": wish_development_set(21),
            "wishes as typed, twenty-second set (turns, the six)": wish_development_set(22),
            "wishes as typed, twenty-third set (more turns, the six)": wish_development_set(23),
            "wishes as typed, twenty-fourth set (more turns, the six)": wish_development_set(24),
            "wishes as typed, twenty-fifth set (exclamations, headings, summary)": wish_development_set(25),
            "wishes as typed, twenty-sixth set (exclamations, headings, summary)": wish_development_set(26),
            "wishes as typed, twenty-seventh set (exclamations, reading grade)": wish_development_set(27),
            "wishes as typed, twenty-eighth set (exclamations, reading grade)": wish_development_set(28),
            "wishes as typed, twenty-ninth set (small amounts)": wish_development_set(29),
            "wishes as typed, thirtieth set (small amounts)": wish_development_set(30),
            "wishes as typed, thirty-first set (the thing as the subject)": wish_development_set(31),
            "wishes as typed, thirty-second set (the thing as the subject)": wish_development_set(32),
            "wishes as typed, thirty-third set (words the lists lacked)": wish_development_set(33),
            "wishes as typed, thirty-fourth set (words the lists lacked)": wish_development_set(34),
            "wishes as typed, thirty-fifth set (the thing judged)": wish_development_set(35),
            "wishes as typed, thirty-sixth set (the thing judged)": wish_development_set(36),
            "wishes as typed, thirty-seventh set (more, by its absence)": wish_development_set(37),
            "wishes as typed, thirty-eighth set (more, by its absence)": wish_development_set(38),
            "wishes as typed, thirty-ninth set (a dislike denied, you keep)": wish_development_set(39),
            "wishes as typed, fortieth set (a dislike denied, you keep)": wish_development_set(40),
            "wishes as typed, forty-first set (idioms of plenty)": wish_development_set(41),
            "wishes as typed, forty-second set (idioms of plenty)": wish_development_set(42),
            "wishes as typed, forty-third set (sent away, let off)": wish_development_set(43),
            "wishes as typed, forty-fourth set (sent away, let off)": wish_development_set(44),
            "wishes as typed, forty-fifth set (worn out, doubted)": wish_development_set(45),
            "wishes as typed, forty-sixth set (worn out, doubted)": wish_development_set(46),
            "wishes as typed, forty-seventh set (the least decided)": wish_development_set(47),
            "wishes as typed, forty-eighth set (the least decided)": wish_development_set(48),
            "wishes as typed, forty-ninth set (the least decided, again)": wish_development_set(49),
            "wishes as typed, fiftieth set (the least decided, again)": wish_development_set(50),
            "wishes as typed, fifty-first set (compliance, caution, English)": wish_development_set(51),
            "wishes as typed, fifty-second set (compliance, caution, English)": wish_development_set(52),
            "wishes as typed, fifty-third set (non-answers and languages by name)": wish_development_set(53),
            "wishes as typed, fifty-fourth set (non-answers and languages by name)": wish_development_set(54),
            "wishes as typed, fifty-fifth set (frames that turn)": wish_development_set(55),
            "wishes as typed, fifty-sixth set (frames that turn)": wish_development_set(56),
            "wishes as typed, fifty-seventh set (more frames that turn)": wish_development_set(57),
            "wishes as typed, fifty-eighth set (more frames that turn)": wish_development_set(58),
            "wishes as typed, fifty-ninth set (wishes beside context)": wish_development_set(59),
            "wishes as typed, sixtieth set (wishes beside context)": wish_development_set(60),
            "wishes as typed, sixty-first set (languages named as things)": wish_development_set(61),
            "wishes as typed, sixty-second set (languages named as things)": wish_development_set(62),
            "wishes as typed, sixty-third set (compliance named as things)": wish_development_set(63),
            "wishes as typed, sixty-fourth set (compliance named as things)": wish_development_set(64),
            "wishes as typed, sixty-fifth set (good faith, judgment, hard topics)": wish_development_set(65),
            "wishes as typed, sixty-sixth set (good faith, judgment, hard topics)": wish_development_set(66),
            "wishes as typed, sixty-seventh set (not my first language)": wish_development_set(67),
            "wishes as typed, sixty-eighth set (not my first language)": wish_development_set(68),
            "third development": third_development_bank(), "fourth development": fourth_development_bank(),
            "fifth development": fifth_development_bank()}  # fmt: skip


def negation_development_sentences() -> list[Phrasing]:
    """Whole sentences whose negation or idiom carries the direction ("Don't drag it out."), for every property."""
    return _sentences(NEGATION_DEVELOPMENT_SENTENCES)


RUBRIC_FILE = "preferences/biggen_rubrics/instances.jsonl"
# a rubric that mentions one of these is about form (length, layout, tone), not silent about the properties
_FORM_WORDS = re.compile(
    r"concise|brief|short|long|length|detail|thorough|comprehensive|in-depth|elaborat|succinct|list|bullet|step|"
    r"format|structur|heading|section|table|code|emoji|tone|style|formal|casual|humou?r|friendly|polite|apolog|"
    r"question|quot|number|link|url|summar|warn|caution|disclaim|refus|simple|jargon|technical|vocabular|sentence|"
    r"audience|engag|creativ|vivid|visual",
    re.IGNORECASE,
)


def silent_criteria(extra: bool = False) -> list[str]:
    """Criteria that say nothing about any measured property: what the human sets' raters were asked and short
    general criteria (`extra`: also TRAIN_GENERAL). Under them, property differences must not move the decision."""
    from crm_train.build_data import HH_CRITERIA, WEBGPT_CRITERIA

    general = [c for group in HH_CRITERIA.values() for c in group] + list(WEBGPT_CRITERIA)
    general += ["Be helpful.", "I care about correctness.", "I'm a software engineer.", "I'm a student.",
                "Answer my question.", "I like answers about history.", "Be honest.", "Make sure it is accurate.",
                "I'm asking for my job.", "Prefer the better answer.", "Explain the reasoning clearly.",
                "I want practical advice.", "Be respectful.", "Stay on topic."]  # fmt: skip
    return general + (TRAIN_GENERAL if extra else [])


def rubric_criteria(shared: Path) -> list[str]:
    """Silent criteria of another style: the BiGGen-Bench rubric questions (Apache-2.0) that do not mention form,
    e.g. "Does the response correctly apply the Pythagorean theorem ...?". Empty when the file is absent."""
    if not (shared / RUBRIC_FILE).is_file():
        return []
    with open(shared / RUBRIC_FILE, encoding="utf-8") as handle:
        rubrics = {json.loads(line)["score_rubric"]["criteria"] for line in handle if line.strip()}
    return sorted(r for r in rubrics if not _FORM_WORDS.search(r))
