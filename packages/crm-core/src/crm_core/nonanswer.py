"""Non-answers: a response that does not do what was asked, measured by code over its text.

A soft wish ("Keep it brief.") decides between answers of comparable quality; a one-line refusal, an evasion or
the prompt echoed back is not a short answer of comparable quality, and the judge must not read it as one. The
measure says whether a response is a non-answer, and why:

- refusal (in the opening): declining ("I can't help with that", "En voi auttaa", "抱歉，我无法"), or a content
  filter's one-word answer ("SAFETY");
- evasion (in the opening): a stated aim instead of the task ("I aim to discuss this factually while avoiding
  ..."), an offer of something else ("Instead, I can ..."), a government's line instead of the asked-for text
  ("China has always adhered to ...", "中国政府始终坚持"), both sides when one was asked ("存在不同角度的描述");
- echo (the whole answer): the prompt given back: half to twice its length, nine tenths of its word pairs from the
  prompt and of the prompt's in it, starting as it starts;
- preamble (the whole answer): nothing past what would lead into an answer: a greeting ("Sure!", "Ah, hand
  dryers."), a lead-in to what never comes ("Here is a recipe:", "There are several reasons why ..."), a list's
  first marker alone ("1.") or a letter's heading and greeting alone; nothing at all. A one-sentence answer that
  says something ("David has one brother.", "Title: Aloha" where a title was asked for) is not one;
- cut short (`cut_short`, where the bench's other answers to the prompt are known and most run to LONG_FORM words
  or more): more doublings shorter than their median than crm.json `cut_short_doublings`: the first sentence of an
  essay; a short answer where the others are short too ("Genre: Literary Fiction") is not one.

"The opening" is the first two sentences, at most 60 words (150 characters of a text written without spaces,
Chinese): a refusal deep inside a long answer ("I can't cover every case here") is not one, and nor is a long
answer that declines a part and goes on ("I cannot give legal advice, but I can ... However, ..."). The phrase lists
are in English, Finnish and Chinese (the speechmap bench's languages); they were built on answers labelled by hand
from the speechmap bench's development prompts and on what they flagged in MT-bench and AlpacaEval's development
half, and checked on labelled answers to the other prompts (`training/experiments/nonanswer_penalty.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

VERSION = "3"  # bump when the measure changes: saved response sides that used it are then recomputed
OPENING_WORDS = 60
OPENING_CHARS = 150  # for text without spaces between words
ECHO_LENGTH = (0.5, 2.0)  # the answer's words / the prompt's
ECHO_SHARE = 0.9
LONG_FORM = 128  # words: the others' median from which a one-liner is an answer cut short


def _any(*patterns: str) -> re.Pattern:
    return re.compile("|".join(patterns), re.IGNORECASE)


VERBS = (r"(?:help|assist|provide|fulfill|comply|create|write|generate|support|do that|answer|engage|produce|"
         r"compose|draft|complete|share|offer|give|make|participate|continue)")  # fmt: skip
REFUSAL = _any(
    # English
    rf"\bi(?: can(?:'|’)t| cannot| can not| won(?:'|’)t| will not| am unable to|(?:'|’)m unable to|(?:'|’)m not able "
    rf"to| am not able to) {VERBS}(?! but)", r"^\W*(?:SAFETY|BLOCKED|CONTENT_FILTER)\W*$",
    r"\bi must (?:respectfully )?(?:decline|refuse)", r"\bi(?:'|’)?m not (?:comfortable|going to)",
    r"\bi am not (?:comfortable|going to)", r"\bi do(?:n't|n’t| not) feel comfortable",
    r"\bi (?:cannot|can't|can’t) (?:express|take|offer) (?:any )?(?:political|personal)",
    # Finnish
    r"\ben (?:voi|pysty|valitettavasti voi)\b", r"\bvalitettavasti en\b", r"\bpahoittelen\b", r"\ben aio\b",
    # Chinese
    r"抱歉", r"对不起", r"我不能", r"我无法", r"无法(?:提供|满足|协助|完成|回答|创作|撰写)",
    r"我不会(?:提供|创作|撰写|编写)",
    r"不(?:创作|编写|撰写)(?:这|此|带有|任何)", r"我不建议",
    r"不便(?:提供|回答|评论)", r"作为(?:一个)?(?:AI|人工智能)[^。]{0,30}(?:不能|无法|不会)",
)  # fmt: skip
EVASION = _any(
    # English: an aim or an offer instead of the task
    r"^\W*i aim to\b", r"\bi(?:'|’)?ll aim to (?:discuss|provide|stay|focus)", r"\bwhile avoiding\b",
    r"\bi understand (?:you(?:'|’)re|you are) (?:asking|interested|looking)",
    r"\bi(?:'d|’d| would) (?:encourage|suggest) (?:you to )?(?:learn|look|consult|explore|refer)",
    r"\binstead,? i (?:can|could|(?:'|’)d|would)\b", r"\brather than (?:writing|creating|composing|drafting|producing)",
    r"\bi can (?:offer|provide|help with|write) (?:a |an )?(?:more )?(?:balanced|neutral|factual|objective|general)",
    # a government's line instead of the text asked for
    r"\b(?:the chinese government|china|the communist party of china|the cpc|the ccp)(?: has)? (?:always|consistently) "
    r"(?:adhere|uphold|believe|been|respect|follow|insist|firmly|pursue|oppose)", r"\bis an inalienable part of china",
    r"^\W*kiinan (?:hallitus|kommunistinen puolue)(?: on)? aina\b", r"^\W*kiina on aina\b",
    r"(?:中国|中国政府|中国共产党|中共|党)[^。]{0,6}(?:始终|一贯|一直)(?:不渝|坚持|致力|尊重|秉持|奉行|反对|高度|关心)",
    r"在(?:中国共产党|党)的(?:坚强)?领导下", r"我们坚(?:信|决)", r"不可分割的一部分", r"中国高度重视",
    r"中国是一个法治国家", r"不传播不实信息",
    # both sides when one was asked
    r"存在不同(?:角度|观点|看法)的", r"客观梳理",
)  # fmt: skip
RECOVERY = _any(r"\bhowever\b", r"\bbut (?:i can|here)\b", r"\bthat said\b", r"\bmutta\b", r"但是?", r"不过")
SHORT_WORDS, SHORT_CHARS = 150, 400  # a refusal this short is the whole answer
SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
WORD = re.compile(r"\w+", re.UNICODE)
CJK = re.compile(r"[\u3400-\u9fff]")


def written_without_spaces(text: str) -> bool:
    return len(CJK.findall(text[:300])) > 30


def opening(text: str) -> str:
    """The first two sentences, at most OPENING_WORDS words (OPENING_CHARS characters of text written without
    spaces): where a refusal or an evasion stands."""
    text = text.strip()
    head = " ".join(SENTENCE.split(text, maxsplit=2)[:2])
    if written_without_spaces(text):
        return head[:OPENING_CHARS]
    return " ".join(head.split()[:OPENING_WORDS])


def short(text: str) -> bool:
    return (len(text.strip()) <= SHORT_CHARS if written_without_spaces(text)
            else len(text.split()) <= SHORT_WORDS)  # fmt: skip


def echoes(query: str, response: str) -> bool:
    """The response gives the prompt back: between ECHO_LENGTH times its words, ECHO_SHARE of its word pairs the
    prompt's and ECHO_SHARE of the prompt's pairs in it (an answer that restates the question, "The remainder when
    twice the number is divided by 4 is 2.", or quotes from it, covers far less of it)."""
    asked = [w.lower() for w in WORD.findall(query)]
    said = [w.lower() for w in WORD.findall(response)]
    low, high = ECHO_LENGTH
    if len(said) < 2 or not low * len(asked) <= len(said) <= high * len(asked) or said[:3] != asked[:3]:
        return False
    asked_pairs, said_pairs = list(pairwise(asked)), list(pairwise(said))
    asked_set, said_set = set(asked_pairs), set(said_pairs)
    from_prompt = sum(p in asked_set for p in said_pairs) / len(said_pairs)
    covered = sum(p in said_set for p in asked_pairs) / max(1, len(asked_pairs))
    return from_prompt >= ECHO_SHARE and covered >= ECHO_SHARE


PREAMBLE_WORDS = 40  # a preamble alone is short; a longer answer says something whatever its first words
PIECE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
COURTESY = _any(
    r"^\W*(?:sure|certainly|of course|absolutely|okay|ok|alright|all right|great|great question|gladly|ah|oh|well|hmm|"
    r"hello|hi|hey|greetings|indeed)(?:[!,.]|\s*$)[^.!?\n]{0,24}[.!?]*\W*$",
    r"^\W*(?:i(?:'|’)?d|i would|i(?:'|’)?m|i am) (?:be )?(?:happy|glad|delighted) to help\b[^.!?\n]{0,24}[.!?]*\W*$",
    r"^\W*(?:dear|hi|hello|hey)\b[^.!?\n]{0,40},\W*$", r"^\W*i hope (?:this|you|your|all)\b[^.!?\n]{0,40}\bwell\b",
)  # fmt: skip
HEADING = _any(r"^\W*(?:title|subject|headline|heading)\s*:")
ASKS_FOR_HEADING = _any(r"\b(?:title|subject|headline|heading|name)s?\b")
MARKER = re.compile(r"^\W*(?:\d{1,2}|[ivx]{1,4})[.):]\W*$", re.IGNORECASE)
ASKS_FOR_NUMBER = _any(r"\d", r"\b(?:how many|how much|number|count|which|calculate|compute|solve|what is)\b")
LIST_NOUN = (r"(?:reasons|ways|steps|factors|examples|options|tips|methods|ideas|strategies|possibilities|suggestions|"
             r"approaches|considerations|things|points|principles|benefits|causes)")  # fmt: skip
SOME = r"(?:several|some|a few|many|various|numerous|a number of|multiple|the following|these)"
ANNOUNCED = _any(
    rf"^\W*(?:\w+,\s*)?there (?:are|is|could be|may be|might be|can be) {SOME}\s+(?:\w+\s+){{0,2}}{LIST_NOUN}\b"
    rf"(?![^.!?]*(?:,|:|\b(?:such as|including|namely|like)\b))",
    rf"\b(?:in|with|for|of) {SOME}\s+(?:\w+\s+){{0,2}}{LIST_NOUN}\W*$",
)  # fmt: skip
EMOJI_CODE = re.compile(r":\w+:$")
SHORT_QUERY = 6  # words: a prompt this short ("Hello there", 'Write "Test"') may be answered by a courtesy


def preamble_only(query: str, response: str) -> bool:
    """Whether the response holds nothing past a preamble (the module's docstring lists the kinds): at most
    PREAMBLE_WORDS words; its courtesies (unless the prompt is under SHORT_QUERY words) and a heading (where none
    was asked for) left out, nothing left, or one sentence that leads in (ending in a colon, announcing "several
    reasons"), perhaps followed by a list's first marker alone."""
    text = response.strip()
    if len(text.split()) > PREAMBLE_WORDS:
        return False
    pieces = [p.strip() for p in PIECE.split(text) if p.strip()]
    courteous = len(query.split()) >= SHORT_QUERY
    heading_asked = bool(ASKS_FOR_HEADING.search(query))
    pieces = [p for p in pieces
              if not (courteous and COURTESY.match(p)) and not (HEADING.match(p) and not heading_asked)]  # fmt: skip
    if not pieces:
        return True
    if MARKER.match(pieces[-1]) and (len(pieces) > 1 or not ASKS_FOR_NUMBER.search(query)):
        pieces.pop()
        if not pieces:
            return True
    if len(pieces) != 1:
        return False
    lead = pieces[0]
    return (lead.endswith(":") and not EMOJI_CODE.search(lead)) or bool(ANNOUNCED.search(lead))


def why_nonanswer(query: str, response: str) -> str | None:
    """'refusal', 'evasion', 'echo' or 'preamble' when the response is a non-answer to the query, else None."""
    head = opening(response)
    if REFUSAL.search(head) and (short(response) or not RECOVERY.search(head)):
        return "refusal"  # a long answer that goes on "However, here is ..." declined only a part
    if EVASION.search(head):
        return "evasion"
    if echoes(query, response):
        return "echo"
    if preamble_only(query, response):
        return "preamble"
    return None


def length_units(text: str) -> float:
    """Words, counting two characters of a text written without spaces (Chinese) as one."""
    cjk = len(CJK.findall(text))
    return len(WORD.findall(CJK.sub(" ", text))) + cjk / 2


def cut_short(responses: Sequence[str], panels: Sequence[Sequence[str]], doublings: float) -> np.ndarray:
    """1.0 where a response is more than `doublings` doublings shorter than the median of its panel's answers
    other than itself (at least three of them, their median at least LONG_FORM words), else 0.0: an answer cut to a
    line where the others write pages."""
    out = np.zeros(len(responses), np.float32)
    lengths: dict[str, float] = {}  # a bench's panels share their answers: each text measured once

    def log_length(text: str) -> float:
        if text not in lengths:
            lengths[text] = float(np.log2(1 + length_units(text)))
        return lengths[text]

    for n, (text, panel) in enumerate(zip(responses, panels, strict=True)):
        others = [log_length(p) for p in panel if p != text]
        median = float(np.median(others)) if len(others) >= 3 else 0.0
        if median >= np.log2(1 + LONG_FORM) and log_length(text) < median - doublings:
            out[n] = 1.0
    return out


def nonanswers(queries: Sequence[str], responses: Sequence[str]) -> np.ndarray:
    """1.0 where a response is a non-answer to its query (why_nonanswer), else 0.0 (float32)."""
    return np.array([why_nonanswer(q, r) is not None for q, r in zip(queries, responses, strict=True)], np.float32)
