"""How people ask for (or against) each measured property: a training bank and a separate validation bank.

Each steerable property has nouns for MORE of it and nouns for LESS of it ("long, detailed answers" / "short
answers"). A liking template over a MORE noun, or a disliking template over a LESS noun, asks for more; the other
two combinations ask for less, so negation and dislikes are learned from the same nouns, not from keyword rules.
Informal variants and typos are drawn from the training bank. The validation bank has its own templates and
nouns, written separately, and is never trained on: every reported number uses it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# property: (MORE nouns, LESS nouns) for training; VALIDATION_NOUNS below for validation
TRAIN_NOUNS: dict[str, tuple[list[str], list[str]]] = {
    "words": (["long, detailed answers", "thorough explanations", "comprehensive responses", "lots of detail",
               "in-depth answers"], ["short answers", "concise responses", "brief replies", "brevity",
                                     "answers that get to the point quickly"]),
    "bullets": (["bullet points", "bulleted lists", "lists of points"], ["bullet points", "bulleted lists"]),
    "numbered": (["numbered steps", "numbered lists", "step-by-step numbered instructions"],
                 ["numbered lists", "numbered steps"]),
    "headings": (["headings", "section headers", "titled sections"], ["headings", "section headers"]),
    "bold": (["bold text", "bolded key phrases", "highlighted keywords in bold"], ["bold text", "bolding"]),
    "tables": (["tables", "markdown tables", "information laid out in a table"], ["tables", "markdown tables"]),
    "code_blocks": (["code examples", "code snippets", "code blocks"], ["code", "code snippets", "code blocks"]),
    "emoji": (["emojis", "emoji", "emoticons", "smiley faces"], ["emojis", "emoji", "emoticons"]),
    "links": (["links", "URLs to sources", "references with links"], ["links", "URLs"]),
    "question_back": (["follow-up questions at the end", "a question back to me at the end",
                       "answers that end by asking me something"],
                      ["questions back to me", "follow-up questions at the end", "being asked questions back"]),
    "apology": (["apologies", "an apologetic tone"], ["apologies", "needless apologizing", "saying sorry"]),
    "ai_disclaimer": (["reminders that you are an AI", "AI disclaimers"],
                      ["'as an AI' disclaimers", "reminders that you are an AI", "AI disclaimers"]),
    "refusal": (["refusals when in doubt", "declining questionable requests"],
                ["refusals", "refusing to answer", "declining to help"]),
    "caveats": (["safety warnings", "caveats and warnings", "disclaimers about risks"],
                ["caveats", "warnings and disclaimers", "safety lectures"]),
    "exclamations": (["exclamation marks", "an excited tone with exclamation points"],
                     ["exclamation marks", "exclamation points"]),
    "first_person": (["personal first-person answers", "you talking about yourself"],
                     ["talking about yourself", "first-person statements"]),
    "second_person": (["answers that address me directly as 'you'", "direct address"],
                      ["addressing me as 'you'", "direct address"]),
    "numbers": (["numbers and statistics", "concrete figures", "quantitative data"],
                ["numbers and statistics", "figures and data"]),
    "quotes": (["quotations", "quotes from sources", "quoted passages"], ["quotations", "quotes"]),
    "reading_grade": (["sophisticated vocabulary", "advanced, technical language", "complex academic wording"],
                      ["simple words", "plain, easy language", "simple vocabulary a child could follow"]),
    "sentence_length": (["long, elaborate sentences", "complex sentence structure"],
                        ["short sentences", "short, punchy sentences"]),
    "summary": (["a summary at the end", "a concluding recap", "a closing summary"],
                ["closing summaries", "recaps at the end", "an 'in conclusion' paragraph"]),
    "greeting": (["an enthusiastic opener like 'Sure!'", "a friendly 'Certainly!' at the start"],
                 ["filler openers like 'Sure!' or 'Certainly!'", "'Great question!' openers"]),
}  # fmt: skip

LIKE = ["I like {n}.", "Please use {n}.", "Include {n}.", "I love it when answers have {n}.", "More {n}, please.",
        "I prefer answers with {n}.", "use lots of {n}", "add {n} pls", "Answers should contain {n}.",
        "I appreciate {n}.", "Always give me {n}.", "{N} make answers better for me."]  # fmt: skip
DISLIKE = ["I dislike {n}.", "No {n}, please.", "Avoid {n}.", "Don't use {n}.", "I hate {n}.", "without {n} pls",
           "Please never include {n}.", "{N} annoy me.", "I prefer answers without {n}.", "Skip the {n}.",
           "dont give me {n}", "Never use {n}."]  # fmt: skip

VALIDATION_NOUNS: dict[str, tuple[list[str], list[str]]] = {
    "words": (["exhaustive, long-form coverage", "elaborate, expansive write-ups"],
              ["compact replies", "succinct answers of a few lines"]),
    "bullets": (["point-form lists with dashes"], ["bullet lists"]),
    "numbered": (["an ordered 1-2-3 sequence of steps"], ["enumerated steps"]),
    "headings": (["section titles breaking up the text"], ["section titles"]),
    "bold": (["key terms emphasised in bold"], ["bold emphasis"]),
    "tables": (["a comparison grid / table"], ["tabular formatting"]),
    "code_blocks": (["sample programs in code fences"], ["programming code"]),
    "emoji": (["little pictograms like 😀 and 👍"], ["emoji icons"]),
    "links": (["web addresses I can click"], ["hyperlinks"]),
    "question_back": (["closing with a question for me"], ["ending on a question for me"]),
    "apology": (["saying sorry"], ["constant apologising"]),
    "ai_disclaimer": (["mentions that you're a language model"], ["the 'I am just a language model' line"]),
    "refusal": (["turning down requests"], ["turning down requests"]),
    "caveats": (["risk warnings"], ["cautionary notes"]),
    "exclamations": (["lots of !!!"], ["lots of !!!"]),
    "first_person": (["the assistant speaking in the first person"], ["the assistant speaking in the first person"]),
    "second_person": (["speaking to me as you"], ["speaking to me as you"]),
    "numbers": (["hard numbers and percentages"], ["piles of percentages"]),
    "quotes": (["cited quotations"], ["cited quotations"]),
    "reading_grade": (["erudite, jargon-rich prose"], ["wording a ten-year-old gets"]),
    "sentence_length": (["long winding sentences"], ["crisp one-line sentences"]),
    "summary": (["a wrap-up at the end"], ["a wrap-up at the end"]),
    "greeting": (["a cheerful 'Of course!' first"], ["a cheerful 'Of course!' first"]),
}  # fmt: skip
VALIDATION_LIKE = ["It would be great to see {n}.", "Feel free to go with {n}.", "My ideal answer has {n}.",
                   "Go heavy on {n}."]  # fmt: skip
VALIDATION_DISLIKE = ["Please refrain from {n}.", "{N}: a turn-off for me.", "Keep {n} out of it.",
                      "I can't stand {n}."]  # fmt: skip
# The five detailed-vs-concise pairs of the leaderboard check (never trained on)
LENGTH_VALIDATION_PAIRS = [
    ("Give me exhaustive, long-form coverage.", "I want compact replies."),
    ("The more elaborate and expansive, the better.", "Succinct answers of a few lines, please."),
    ("Go deep: I want every detail spelled out.", "Get to the point fast; I'm busy."),
    ("Write me an extensive answer.", "Terse answers only."),
    ("I enjoy long, richly detailed responses.", "Short and sweet is how I like it."),
]


@dataclass(frozen=True)
class Phrasing:
    text: str
    prop: str
    sign: int  # +1: more of the property wins; -1: less of it wins


def _fill(template: str, noun: str) -> str:
    text = template.replace("{n}", noun).replace("{N}", noun[:1].upper() + noun[1:])
    return text


def _bank(nouns: dict, like: list[str], dislike: list[str]) -> list[Phrasing]:
    out = []
    for prop, (more, less) in nouns.items():
        for template in like:
            out += [Phrasing(_fill(template, n), prop, +1) for n in more]
            out += [Phrasing(_fill(template, n), prop, -1) for n in less if n not in more]
        for template in dislike:
            out += [Phrasing(_fill(template, n), prop, -1) for n in more]
            out += [Phrasing(_fill(template, n), prop, +1) for n in less if n not in more]
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


def training_bank(seed: int = 0, typos_per_phrasing: float = 0.3) -> list[Phrasing]:
    """The training phrasings plus typo'd copies of a share of them."""
    bank = _bank(TRAIN_NOUNS, LIKE, DISLIKE)
    rng = random.Random(seed)
    extra = [Phrasing(typo(p.text, rng), p.prop, p.sign) for p in bank if rng.random() < typos_per_phrasing]
    return bank + extra


def validation_bank() -> list[Phrasing]:
    bank = _bank(VALIDATION_NOUNS, VALIDATION_LIKE, VALIDATION_DISLIKE)
    for more, less in LENGTH_VALIDATION_PAIRS:
        bank += [Phrasing(more, "words", +1), Phrasing(less, "words", -1)]
    return bank


def dislike_text(item: str) -> str:
    """How the app's `dislikes` field is read: each item as 'I dislike <item>.'"""
    item = item.strip().rstrip(".")
    return f"I dislike {item}."


def silent_criteria(shared_rubrics: list[str] | None = None) -> list[str]:
    """Criteria that say nothing about any measured property: what the human sets' raters were asked, and (when
    given) real rubric sentences. Under them, property differences must not move the decision."""
    from crm_train.build_data import HH_CRITERIA, WEBGPT_CRITERIA

    general = [c for group in HH_CRITERIA.values() for c in group] + list(WEBGPT_CRITERIA)
    return general + list(shared_rubrics or [])
