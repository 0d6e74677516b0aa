r"""Measured properties of a whole response (phi in the compositional CRM), computed by code over the full text.

A cross-encoder sees a token window and maps emoji to [UNK]; these functions read every character, so "I dislike
emojis" can act on an emoji in the last line of a 2,000-word answer. Each property is a number per response:
counts enter as log(1 + count) (the tenth bullet matters less than the first), shares and flags as they are.
The CRM centres them per query and divides by a spread measured on its training answers, so a weight means the
same for every property: one unit of score per typical difference.

| name | what it measures | unit |
|---|---|---|
| words | length in words | log2(1 + words) |
| sentences | sentences in prose (list items and headings excluded) | log(1 + n) |
| paragraphs | blocks separated by blank lines | log(1 + n) |
| bullets | bullet list items (-, *, +, •) | log(1 + n) |
| numbered | numbered list items / steps (1. 2) a.) | log(1 + n) |
| headings | markdown headings (#..######) and lines that are bold alone | log(1 + n) |
| bold | bold or italic spans (**x**, __x__) outside headings | log(1 + n) |
| tables | markdown table rows (lines of \|-separated cells) | log(1 + n) |
| code_blocks | fenced or indented code blocks | log(1 + n) |
| inline_code | `inline code` spans outside code blocks | log(1 + n) |
| emoji | emoji and pictographs (Unicode, incl. flags and keycaps) | log(1 + n) |
| links | URLs and markdown links | log(1 + n) |
| question_back | the answer ends by asking the user something (a question in its last 2 sentences) | 0 / 1 |
| questions | question marks | log(1 + n) |
| apology | apologies ("I'm sorry", "I apologize", "my apologies") | log(1 + n) |
| ai_disclaimer | "as an AI", "I'm an AI language model", "I don't have personal opinions" | log(1 + n) |
| refusal | declining ("I can't help with", "I cannot provide", "I'm unable to") | log(1 + n) |
| caveats | warnings and safety notes ("please note", "consult a professional", "disclaimer") | log(1 + n) |
| exclamations | exclamation marks | log(1 + n) |
| first_person | share of words that are I / me / my / we / our | share x 100 |
| second_person | share of words that are you / your | share x 100 |
| numbers | numbers written in digits | log(1 + n) |
| quotes | quotations and blockquote lines | log(1 + n) |
| reading_grade | Flesch-Kincaid grade of the prose, clipped to [0, 20] | grade |
| sentence_length | mean words per sentence, clipped to 60 | words |
| summary | a closing summary ("In summary", "In conclusion", "Overall,", "To sum up") | 0 / 1 |
| greeting | an eager opener ("Sure!", "Certainly!", "Great question", "Absolutely") | 0 / 1 |
| nonanswer | refuses, deflects or lectures in its first two sentences, or is a preamble alone (nonanswer.py) | 0 / 1 |
| other_language | in a language other than the question's (py3langid, BSD-3-Clause, model in the package) | 0 / 1 |
| ai_prose | stock words of 2025's model prose (ai_prose_words.txt), constructions ("not X, but Y") | log(1 + per 1k) |
| dialogue | share of the prose's words inside quotation marks: characters speaking | share x 100 |
| lexical_variety | distinct words per 50-word window (moving-average type-token ratio) | share x 100 |
| repetition | share of the answer's word 4-grams that repeat an earlier one | share x 100 |

`other_language` needs the question: `measure_many(texts, queries)` fills it (0 without queries). A CRM records the
properties it was fitted with (crm.json `properties`); one fitted before a property existed reads only its own.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crm_core.nonanswer import why_nonanswer

VERSION = "3"  # bump when a measure changes: saved response sides that used it are then recomputed

FENCE = re.compile(r"^\s*(```|~~~)", re.MULTILINE)
INDENTED_CODE = re.compile(r"(?:^(?: {4}|\t)\S.*\n?){2,}", re.MULTILINE)
BULLET = re.compile(r"^\s*[-*+•◦▪]\s+\S", re.MULTILINE)
NUMBERED = re.compile(r"^\s*(?:\d{1,3}|[a-zA-Z])[.)]\s+\S", re.MULTILINE)
BOLD_LINE = r"^\s*(?:\*\*|__)[^*_\n]{1,80}(?:\*\*|__):?\s*$"
HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S|" + BOLD_LINE, re.MULTILINE)
BOLD_HEADING = re.compile(BOLD_LINE, re.MULTILINE)
BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
TABLE_ROW = re.compile(r"^\s*\|?(?:[^|\n]*\|){2,}[^|\n]*$", re.MULTILINE)
INLINE_CODE = re.compile(r"(?<!`)`[^`\n]+`(?!`)")
LINK = re.compile(r"https?://\S+|www\.\S+|\[[^\]\n]+\]\([^)\s]+\)")
EMOJI = re.compile(
    "[\U0001f1e6-\U0001f1ff]{2}"  # flags
    "|[0-9#*]\ufe0f?\u20e3"  # keycaps
    "|[\U0001f300-\U0001faff\u2600-\u27bf\u2b50\u2b55\u2b1b\u2b1c\u2934\u2935\u3030\u303d\u3297\u3299\u00a9\u00ae"
    "\u203c\u2049\u2122\u2139\u2194-\u2199\u21a9\u21aa\u231a\u231b\u2328\u23cf\u23e9-\u23f3\u23f8-\u23fa]"
    "(?:\ufe0f|[\U0001f3fb-\U0001f3ff])?(?:\u200d[\U0001f300-\U0001faff\u2600-\u27bf]\ufe0f?)*"
)
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n+")
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+(?:[.,]\d+)*")
NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*%?")
VOWEL_GROUPS = re.compile(r"[aeiouy]+")
CJK = re.compile(r"[\u3400-\u9fff]")
QUOTE = re.compile(r"\"[^\"\n]{3,}\"|“[^”\n]{3,}”|^\s*>\s?\S", re.MULTILINE)


def _phrases(*patterns: str) -> re.Pattern:
    return re.compile(r"\b(?:" + "|".join(patterns) + r")", re.IGNORECASE)


APOLOGY = _phrases(r"i(?:'m| am) (?:so |very |truly )?sorry", r"i apologi[sz]e", r"my apologies", r"apologies for",
                   r"sorry,? (?:but|i)")  # fmt: skip
AI_DISCLAIMER = _phrases(
    r"as an ai\b", r"as a (?:large )?language model",
    r"i(?:'m| am) (?:just )?an? (?:ai|artificial intelligence|language model|virtual assistant)",
    r"i do(?:n't| not) have personal (?:opinions|experiences|feelings|beliefs|preferences)",
    r"as an artificial intelligence",
)  # fmt: skip
REFUSAL = _phrases(r"i(?: can(?:'|no)t| cannot| won't| will not| am unable to|'m unable to|'m not able to| am not "
                   r"able to) (?:help|assist|provide|fulfill|comply|create|write|generate|support|do that|answer)",
                   r"i must (?:decline|refuse)", r"i(?:'m| am) not comfortable")  # fmt: skip
CAVEATS = _phrases(r"please note", r"note that", r"keep in mind", r"consult (?:a|an|your|with)", r"disclaimer",
                   r"seek (?:professional|medical|legal)", r"it(?:'s| is) important to (?:note|remember)",
                   r"(?:not|isn't|is not) (?:financial|medical|legal) advice", r"be careful", r"caution")  # fmt: skip
SUMMARY = _phrases(r"in summary", r"in conclusion", r"to sum up", r"to summari[sz]e", r"overall,", r"in short,",
                   r"all in all", r"tl;?dr")  # fmt: skip
GREETING = re.compile(r"^\W*(?:sure|certainly|absolutely|of course|great question|good question|what a (?:great|"
                      r"fun|wonderful)|hello|hi|hey)\b", re.IGNORECASE)  # fmt: skip
FIRST = {"i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "i'm", "i've", "i'd", "i'll"}
SECOND = {"you", "your", "yours", "yourself", "yourselves", "you're", "you've", "you'd", "you'll"}


@dataclass
class Parsed:
    """A response split once into what the properties read: code removed from prose, lines, sentences, words."""

    text: str
    code_blocks: int
    prose: str
    lines: list[str]
    sentences: list[str]
    words: list[str]


def _split_code(text: str) -> tuple[int, str]:
    """Count fenced and indented code blocks; return the text with them removed (an unclosed fence runs to the
    end, as markdown renders it)."""
    parts, blocks, inside = [], 0, False
    pieces = FENCE.split(text)
    # FENCE.split gives text, fence, text, fence, ...: every second text piece is inside a fence
    for i, piece in enumerate(pieces):
        if i % 2 == 1:
            if not inside:
                blocks += 1
            inside = not inside
            continue
        if not inside:
            parts.append(piece)
    prose = "".join(parts)
    indented = INDENTED_CODE.findall(prose)
    if not BULLET.search(prose) and not NUMBERED.search(prose):  # indented list continuations are not code
        blocks += len(indented)
        prose = INDENTED_CODE.sub("\n", prose)
    return blocks, prose


def parse(text: str) -> Parsed:
    blocks, prose = _split_code(text)
    lines = [line for line in prose.splitlines() if line.strip()]
    plain = [line for line in lines if not (HEADING.match(line) or TABLE_ROW.match(line))]
    sentences = [s.strip() for s in SENTENCE_END.split("\n".join(plain)) if WORD.search(s or "")]
    return Parsed(text, blocks, prose, lines, sentences, WORD.findall(prose))


def _log(n: float) -> float:
    return math.log1p(n)


def reading_grade(p: Parsed) -> float:
    """Flesch-Kincaid grade over the prose's words and sentences (syllables by vowel groups)."""
    words = [w for w in p.words if w[0].isalpha()]
    if not words or not p.sentences:
        return 0.0
    syllables = sum(max(1, len(VOWEL_GROUPS.findall(w.lower().rstrip("e") or w.lower()))) for w in words)
    grade = 0.39 * len(words) / len(p.sentences) + 11.8 * syllables / len(words) - 15.59
    return float(min(20.0, max(0.0, grade)))


def _question_back(p: Parsed) -> float:
    tail = p.sentences[-2:] if p.sentences else []
    return float(any(s.rstrip("\"')*_ ").endswith("?") for s in tail))


def _share(words: list[str], vocabulary: set[str]) -> float:
    return 100.0 * sum(w.lower().replace("’", "'") in vocabulary for w in words) / max(1, len(words))


def _read_word_list() -> frozenset[str]:
    path = Path(__file__).with_name("ai_prose_words.txt")
    lines = path.read_text(encoding="utf-8").splitlines()
    return frozenset(line.split("\t", 1)[0] for line in lines if line and not line.startswith("#"))


AI_WORDS = _read_word_list()
AI_PHRASES = _phrases(
    r"(?:a|is a|stands as a|serves as a) testament to", r"tapestry", r"delv(?:e|es|ing) into", r"in the realm of",
    r"navigat(?:e|ing) the complexities", r"it'?s worth noting", r"a symphony of", r"ever-(?:evolving|changing)",
    r"in today'?s (?:fast-paced|digital|rapidly)", r"let'?s dive", r"dive into", r"embark on", r"a dance of",
    r"the weight of (?:it|the|his|her|their)", r"something (?:shifted|changed) (?:in|inside)",
    r"(?:a|the) beacon of", r"plays a (?:crucial|pivotal|vital) role", r"a (?:stark|powerful) reminder",
)  # fmt: skip
NOT_BUT = re.compile(  # "not just X, but Y" / "It's not X — it's Y" / "not because X, but because Y"
    r"\bnot (?:just|only|merely|simply|because|about)\b[^.!?\n]{1,60}?[,;:—–-]\s*(?:but|it'?s|it is|it was)\b"
    r"|\b(?:it|this|that)(?:'s| is| was) not\b[^.!?\n]{1,40}?(?:[,;:]|—|–| - )\s*(?:it|this|that)(?:'s| is| was)\b",
    re.IGNORECASE,
)
DIALOGUE = re.compile(r"\"([^\"\n]+)\"|“([^”\n]+)”|‘([^’\n]{8,})’|«([^»\n]+)»|「([^」\n]+)」")
LANGUAGE_FOLD = {"wuu": "zh", "yue": "zh", "nn": "no", "nb": "no"}  # varieties py3langid tells apart: one language


def ai_prose(p: Parsed) -> float:
    """Stock words, phrases and "not X, but Y" constructions per 1,000 words, as log(1 + rate)."""
    if not p.words:
        return 0.0
    hits = sum(w.lower().replace("’", "'") in AI_WORDS for w in p.words)
    prose = p.prose.replace("’", "'")
    hits += len(AI_PHRASES.findall(prose)) + len(NOT_BUT.findall(prose))
    return _log(1000.0 * hits / max(len(p.words), 50))  # a 5-word answer with one hit is not at 200 per 1,000


def dialogue(p: Parsed) -> float:
    quoted = sum(len(WORD.findall(next(g for g in m.groups() if g))) for m in DIALOGUE.finditer(p.prose))
    return 100.0 * min(quoted, len(p.words)) / max(1, len(p.words))


def lexical_variety(p: Parsed, window: int = 50) -> float:
    """Distinct words per `window` words, averaged over windows (the whole answer's type-token ratio falls with
    length; this does not); an answer shorter than a window counts as it is."""
    words = [w.lower() for w in p.words if w[0].isalpha()]
    if len(words) <= window:
        return 100.0 * len(set(words)) / len(words) if words else 0.0
    step = max(1, (len(words) - window) // 40)  # at most ~40 windows: a 5,000-word answer costs what 400 do
    ratios = [len(set(words[i : i + window])) / window for i in range(0, len(words) - window + 1, step)]
    return 100.0 * float(np.mean(ratios))


def repetition(p: Parsed) -> float:
    words = [w.lower() for w in WORD.findall(p.text)]
    grams = list(zip(words, words[1:], words[2:], words[3:], strict=False))
    return 100.0 * (len(grams) - len(set(grams))) / len(grams) if grams else 0.0


@functools.lru_cache(maxsize=1024)  # questions recur (every answer to one is compared with it); answers rarely do
def language(text: str) -> str | None:
    """The language of a text as an ISO 639-1 code (py3langid), None for a text with fewer than three letters'
    worth of words; varieties of one language folded (LANGUAGE_FOLD)."""
    if len(WORD.findall(text)) < 3 and len(CJK.findall(text)) < 6:
        return None
    import py3langid

    code, _ = py3langid.classify(text[:20000])
    return LANGUAGE_FOLD.get(code, code)


@dataclass(frozen=True)
class Property:
    name: str
    description: str
    measure: Callable[[Parsed], float]


PROPERTIES: tuple[Property, ...] = (
    Property("words", "length in words", lambda p: math.log2(1 + len(WORD.findall(p.text)))),
    Property("sentences", "sentences in prose", lambda p: _log(len(p.sentences))),
    Property("paragraphs", "blocks separated by blank lines",
             lambda p: _log(len([b for b in re.split(r"\n\s*\n", p.text) if b.strip()]))),
    Property("bullets", "bullet list items", lambda p: _log(len(BULLET.findall(p.prose)))),
    Property("numbered", "numbered list items", lambda p: _log(len(NUMBERED.findall(p.prose)))),
    Property("headings", "headings", lambda p: _log(len(HEADING.findall(p.prose)))),
    Property("bold", "bold spans outside headings",
             lambda p: _log(max(0, len(BOLD.findall(p.prose)) - len(BOLD_HEADING.findall(p.prose))))),
    Property("tables", "markdown table rows",
             lambda p: _log(len([ln for ln in p.lines if TABLE_ROW.match(ln) and ln.count("|") >= 2]))),
    Property("code_blocks", "code blocks", lambda p: _log(p.code_blocks)),
    Property("inline_code", "inline code spans", lambda p: _log(len(INLINE_CODE.findall(p.prose)))),
    Property("emoji", "emoji", lambda p: _log(len(EMOJI.findall(p.text)))),
    Property("links", "URLs and links", lambda p: _log(len(LINK.findall(p.text)))),
    Property("question_back", "ends by asking the user", _question_back),
    Property("questions", "question marks", lambda p: _log(p.prose.count("?"))),
    Property("apology", "apologies", lambda p: _log(len(APOLOGY.findall(p.prose)))),
    Property("ai_disclaimer", "'as an AI' disclaimers", lambda p: _log(len(AI_DISCLAIMER.findall(p.prose)))),
    Property("refusal", "refusals", lambda p: _log(len(REFUSAL.findall(p.prose)))),
    Property("caveats", "warnings and safety notes", lambda p: _log(len(CAVEATS.findall(p.prose)))),
    Property("exclamations", "exclamation marks", lambda p: _log(p.prose.count("!"))),
    Property("first_person", "share of first-person words", lambda p: _share(p.words, FIRST)),
    Property("second_person", "share of second-person words", lambda p: _share(p.words, SECOND)),
    Property("numbers", "numbers in digits", lambda p: _log(len(NUMBER.findall(p.prose)))),
    Property("quotes", "quotations", lambda p: _log(len(QUOTE.findall(p.prose)))),
    Property("reading_grade", "Flesch-Kincaid grade", reading_grade),
    Property("sentence_length", "mean words per sentence",
             lambda p: min(60.0, len(p.words) / len(p.sentences)) if p.sentences else 0.0),
    Property("summary", "closing summary", lambda p: float(bool(SUMMARY.search(" ".join(p.sentences[-4:]))))),
    Property("greeting", "eager opener", lambda p: float(bool(p.sentences and GREETING.match(p.sentences[0])))),
    Property("nonanswer", "refuses or evades", lambda p: float(why_nonanswer("", p.text) is not None)),
    Property("other_language", "in another language than the question's", lambda p: 0.0),  # measure_many fills it
    Property("ai_prose", "AI-sounding stock words and constructions", ai_prose),
    Property("dialogue", "share of words in dialogue", dialogue),
    Property("lexical_variety", "distinct words per 50", lexical_variety),
    Property("repetition", "repeated word 4-grams", repetition),
)  # fmt: skip
NAMES: tuple[str, ...] = tuple(p.name for p in PROPERTIES)
# the criteria people type in 2025 (issue 56), added to the measures on 2026-11-27; reports show them apart
OF_2025: tuple[str, ...] = ("nonanswer", "other_language", "ai_prose", "dialogue", "lexical_variety", "repetition")
OTHER_LANGUAGE = NAMES.index("other_language")
NONANSWER = NAMES.index("nonanswer")


def measure(text: str, query: str | None = None) -> np.ndarray:
    """The properties of one response, in PROPERTIES order (float64); with its `query`, `nonanswer` knows the prompt
    (measured once, not once without it and again with it)."""
    parsed = parse(text)
    out = np.array([0.0 if query is not None and k == NONANSWER else p.measure(parsed)
                    for k, p in enumerate(PROPERTIES)], dtype=np.float64)  # fmt: skip
    if query is not None:
        out[NONANSWER] = float(why_nonanswer(query, text) is not None)
    return out


def measure_many(texts: Sequence[str], queries: Sequence[str] | None = None) -> np.ndarray:
    """(len(texts), len(PROPERTIES)) float32; with `queries` (one per text) also `other_language`, and `nonanswer`
    knowing the prompt (a greeting answers "Hello there"; "1." answers "How many ...?")."""
    out = np.zeros((len(texts), len(PROPERTIES)), dtype=np.float32)
    for i, text in enumerate(texts):
        out[i] = measure(text, None if queries is None else queries[i])
    if queries is not None:
        out[:, OTHER_LANGUAGE] = other_languages(queries, texts)
    return out


def other_languages(queries: Sequence[str], texts: Sequence[str]) -> np.ndarray:
    """`other_language` of each (query, text), each distinct query's language found once."""
    asked = {q: language(q) for q in dict.fromkeys(queries)}
    out = np.zeros(len(texts), np.float32)
    for i, (query, text) in enumerate(zip(queries, texts, strict=True)):
        if asked[query] is not None:
            said = language(text)
            out[i] = float(said is not None and said != asked[query])
    return out


def as_dict(text: str) -> dict[str, float]:
    return dict(zip(NAMES, measure(text).tolist(), strict=True))
