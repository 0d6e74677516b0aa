"""How people ask for (or against) each measured property: a training bank and a separate validation bank.

Each steerable property has nouns for it and, where there is one, antonym nouns ("long, detailed answers" / "short
answers"). A liking template over a noun, or a disliking template over an antonym, asks for more; the other two
combinations ask for less, so negation and dislikes are learned from the same nouns, not from keyword rules.
Informal variants and typos are drawn from the training bank. The validation bank has its own templates and
nouns, written separately, and is never trained on: every reported number uses it. (Over 400 lines because most
of it is the banks themselves: data, kept beside the few functions that draw from them.)
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

# property: (nouns FOR it, ANTONYM nouns: what having less of it looks like; often none)
TRAIN_NOUNS: dict[str, tuple[list[str], list[str]]] = {
    "words": (["long, detailed answers", "thorough explanations", "comprehensive responses", "lots of detail",
               "in-depth answers"], ["short answers", "concise responses", "brief replies", "brevity",
                                     "answers that get to the point quickly"]),
    "bullets": (["bullet points", "bulleted lists", "lists of points"], ["flowing prose", "plain paragraphs"]),
    "numbered": (["numbered steps", "numbered lists", "step-by-step numbered instructions"], []),
    "headings": (["headings", "section headers", "titled sections"], ["one continuous block of text"]),
    "bold": (["bold text", "bolded key phrases", "highlighted keywords in bold"], ["plain unformatted text"]),
    "tables": (["tables", "markdown tables", "information laid out in a table"], []),
    "code_blocks": (["code examples", "code snippets", "code blocks", "code"], ["explanations in plain words"]),
    "emoji": (["emojis", "emoji", "emoticons", "smiley faces"], []),
    "links": (["links", "URLs", "URLs to sources", "references with links"], []),
    "question_back": (["follow-up questions at the end", "a question back to me at the end", "questions back to me",
                       "answers that end by asking me something", "being asked questions back"], []),
    "apology": (["apologies", "an apologetic tone", "needless apologizing", "saying sorry"], []),
    "ai_disclaimer": (["reminders that you are an AI", "AI disclaimers", "'as an AI' disclaimers"], []),
    "refusal": (["refusals", "refusing to answer", "declining to help", "declining questionable requests"], []),
    "caveats": (["safety warnings", "caveats and warnings", "disclaimers about risks", "caveats",
                 "safety lectures"], []),
    "exclamations": (["exclamation marks", "exclamation points", "an excited tone with exclamation points"],
                     ["a calm, measured tone"]),
    "first_person": (["personal first-person answers", "you talking about yourself", "first-person statements"],
                     ["impersonal answers"]),
    "second_person": (["answers that address me directly as 'you'", "direct address", "addressing me as 'you'"],
                      ["impersonal, third-person writing"]),
    "numbers": (["numbers and statistics", "concrete figures", "quantitative data", "figures and data"],
                ["qualitative descriptions without numbers"]),
    "quotes": (["quotations", "quotes from sources", "quoted passages", "quotes"], []),
    "reading_grade": (["sophisticated vocabulary", "advanced, technical language", "complex academic wording"],
                      ["simple words", "plain, easy language", "simple vocabulary a child could follow"]),
    "sentence_length": (["long, elaborate sentences", "complex sentence structure"],
                        ["short sentences", "short, punchy sentences"]),
    "summary": (["a summary at the end", "a concluding recap", "a closing summary", "recaps at the end",
                 "an 'in conclusion' paragraph"], []),
    "greeting": (["an enthusiastic opener like 'Sure!'", "a friendly 'Certainly!' at the start",
                  "filler openers like 'Sure!' or 'Certainly!'", "'Great question!' openers"],
                 ["answers that start straight with the content"]),
}  # fmt: skip

# Whole sentences people type, beyond the templates: (asks for MORE, asks for LESS)
TRAIN_SENTENCES: dict[str, tuple[list[str], list[str]]] = {
    "words": (["Prefer detailed, thorough answers.", "Explain everything in depth.", "Longer is better for me.",
               "Don't hold back on detail.", "Cover all the angles.", "I like long answers",
               "The more detail the better.", "Give me a complete, in-depth explanation.", "Be thorough.",
               "I want the full story, not a summary.", "Elaborate as much as you can.", "Write at length.",
               "I hate answers that are too short.", "Don't be brief.", "Please be comprehensive."],
              ["Prefer short, concise answers.", "Keep it brief.", "Be concise.", "tl;dr please",
               "Just the answer, no fluff.", "Don't ramble.", "Shorter is better.", "One or two sentences max.",
               "Brevity, please.", "I hate long answers.", "Don't write an essay.", "Keep answers compact.",
               "Less is more.", "Quick answers only.", "Cut the padding, short replies."]),
    "question_back": (["End by asking me a question.", "Ask me a follow-up question at the end.",
                       "Check with me at the end whether I need more."],
                      ["Don't ask me questions back.", "Never end with a question.", "Do not ask me anything back.",
                       "Just answer, don't ask me things."]),
    "emoji": (["Add some emojis!", "Make it fun with emoji 😀", "Sprinkle emojis in."],
              ["Don't put emojis in.", "Professional text, no emoji.", "Emojis look childish to me."]),
    "headings": (["Organise it under headings.", "Split it into titled sections."],
                 ["Don't split it into sections.", "No headers, just text."]),
    "bullets": (["Use bullet points.", "Give me a bulleted list."], ["Write prose, not lists.", "No bullet lists."]),
    "numbered": (["Give me numbered steps.", "Number each step."], ["Don't number things.", "No numbered lists."]),
    "code_blocks": (["Show me the code.", "Include a code example."],
                    ["Explain in words, no code.", "Don't show code."]),
    "caveats": (["Warn me about the risks.", "Mention any safety concerns."],
                ["Skip the warnings.", "Don't lecture me about safety.", "No disclaimers, please."]),
    "apology": (["Be apologetic.", "Apologise when appropriate."], ["Stop apologizing.", "Don't say sorry."]),
    "ai_disclaimer": (["Remind me you're an AI.", "Mention that you are a language model."],
                      ["Don't tell me you're an AI.", "Skip the 'as an AI' stuff."]),
    "greeting": (["Start with a friendly 'Sure!'", "Open enthusiastically."],
                 ["Don't start with 'Sure!' or 'Certainly!'", "Skip the pleasantries at the start."]),
    "summary": (["End with a summary.", "Wrap up with a short recap."], ["No summary at the end.", "Don't recap."]),
    "links": (["Give me links.", "Link to sources."], ["Don't include links.", "No URLs please."]),
    "tables": (["Put it in a table.", "Compare them in a table."], ["Don't use tables.", "No tables."]),
    "numbers": (["Give me hard numbers.", "Quantify things."], ["Don't drown me in numbers.", "Fewer statistics."]),
    "bold": (["Bold the key points.", "Highlight important words in bold."], ["Don't bold things.", "No bold."]),
    "exclamations": (["Be excited!", "Show enthusiasm with exclamation marks!"],
                     ["Calm tone, no exclamation marks.", "Don't shout with exclamation marks."]),
    "reading_grade": (["Use technical language.", "Write for experts."],
                      ["Explain it like I'm five.", "Use simple words.", "Keep the language simple."]),
    "sentence_length": (["Write in long, flowing sentences."], ["Use short sentences.", "Keep sentences short."]),
    "first_person": (["Tell me about your own view.", "Speak in the first person."],
                     ["Don't talk about yourself.", "Leave yourself out of it."]),
    "second_person": (["Talk to me directly.", "Address me as you."], ["Don't address me directly.",
                                                                       "Write impersonally."]),
    "quotes": (["Include quotes.", "Quote your sources."], ["Don't quote anything.", "No quotations."]),
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
    "bullets": (["point-form lists with dashes", "bullet lists"], []),
    "numbered": (["an ordered 1-2-3 sequence of steps", "enumerated steps"], []),
    "headings": (["section titles breaking up the text"], []),
    "bold": (["key terms emphasised in bold", "bold emphasis"], []),
    "tables": (["a comparison grid / table", "tabular formatting"], []),
    "code_blocks": (["sample programs in code fences", "programming code"], []),
    "emoji": (["little pictograms like 😀 and 👍", "emoji icons"], []),
    "links": (["web addresses I can click", "hyperlinks"], []),
    "question_back": (["closing with a question for me", "ending on a question for me"], []),
    "apology": (["constant apologising"], []),
    "ai_disclaimer": (["mentions that you're a language model", "the 'I am just a language model' line"], []),
    "refusal": (["turning down requests"], []),
    "caveats": (["risk warnings", "cautionary notes"], []),
    "exclamations": (["lots of !!!"], []),
    "first_person": (["the assistant speaking in the first person"], []),
    "second_person": (["speaking to me as you"], []),
    "numbers": (["hard numbers and percentages", "piles of percentages"], []),
    "quotes": (["cited quotations"], []),
    "reading_grade": (["erudite, jargon-rich prose"], ["wording a ten-year-old gets"]),
    "sentence_length": (["long winding sentences"], ["crisp one-line sentences"]),
    "summary": (["a wrap-up at the end"], []),
    "greeting": (["a cheerful 'Of course!' first"], []),
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

# The wider training bank (`training_bank(wide=True)`): the same kinds of phrasing with far more words for each, so
# that the reader learns what liking, disliking and each property sound like rather than a few fixed sentences.
# Written apart from the validation and development banks (a test checks that they share no sentence).
WIDE_NOUNS: dict[str, tuple[list[str], list[str]]] = {
    "words": (["lengthy responses", "rich, detailed explanations", "extended answers", "every detail",
               "full, complete explanations", "deep dives", "long answers", "answers that cover everything"],
              ["quick replies", "one-liners", "minimal answers", "short, crisp answers", "a sentence or two",
               "bite-sized answers", "no-frills short answers", "tight answers", "short responses"]),
    "bullets": (["bulleted points", "a list of bullets", "dot points", "lists", "bullet-point summaries"],
                ["paragraphs of prose", "continuous prose", "full paragraphs"]),
    "numbered": (["numbered points", "a numbered list", "steps numbered 1, 2, 3", "numbered instructions"], []),
    "headings": (["headers", "section headings", "markdown headings", "a title for each section"],
                 ["a single unbroken block of text"]),
    "bold": (["bold", "bold keywords", "bolded words", "bold formatting"], []),
    "tables": (["a table", "tabulated data", "comparison tables"], []),
    "code_blocks": (["code samples", "example code", "source code", "snippets of code"], ["code-free answers"]),
    "emoji": (["emoji faces", "smileys", "little icons like 🎉", "emojis like 😊", "cute emojis"], []),
    "links": (["web links", "links to websites", "source links", "clickable links"], []),
    "question_back": (["a closing question", "questions at the end", "a follow-up question",
                       "a question to finish"], []),
    "apology": (["sorry", "apologetic phrases", "excessive apologies", "apologizing"], []),
    "ai_disclaimer": (["AI self-references", "'I'm an AI' reminders", "statements that you are an AI language model",
                       "mentions of being an AI"], []),
    "refusal": (["refusing requests", "saying you can't help", "declining to answer", "refusals to help"], []),
    "caveats": (["warnings", "health and safety warnings", "risk disclaimers", "cautions", "legal disclaimers"], []),
    "exclamations": (["exclamations", "lots of exclamation points", "excited exclamations", "shouty punctuation"],
                     ["a calm tone", "a quiet, even tone"]),
    "first_person": (["'I' statements", "the assistant's personal opinions", "answers in the first person",
                      "your own personal take"], ["answers that leave the assistant out"]),
    "second_person": (["being addressed as 'you'", "answers that speak to me directly", "'you' statements",
                       "a direct, personal 'you' voice"], ["an impersonal style", "neutral third-person text"]),
    "numbers": (["statistics", "numerical data", "specific numbers", "percentages", "numbers"],
                ["answers without statistics", "words instead of numbers"]),
    "quotes": (["direct quotes", "quoted text", "quotations from experts", "famous quotes"], []),
    "reading_grade": (["technical jargon", "expert-level vocabulary", "academic language", "big words"],
                      ["everyday words", "plain English", "easy words", "simple language"]),
    "sentence_length": (["long sentences", "long, complex sentences", "run-on sentences"],
                        ["brief sentences", "short, simple sentences"]),
    "summary": (["a summary", "a short recap", "a TL;DR at the end", "concluding summaries"], []),
    "greeting": (["openers like 'Sure!'", "'Certainly!' at the start", "cheerful openers", "a warm opening line"],
                 ["answers that skip the opener"]),
}  # fmt: skip
WIDE_LIKE = ["I really enjoy {n}.", "Give me {n}, please.", "I'd like {n}.", "I want {n}.", "{N}, please.",
             "Make sure the answer has {n}.", "I find {n} helpful.", "I'm happy when I get {n}.", "Lean toward {n}.",
             "Can you use {n}?", "Try to include {n}.", "I respond well to {n}.", "i like it when there's {n}",
             "Please add {n}.", "Whenever possible, use {n}.", "Bring on the {n}.", "I'm all for {n}.",
             "Use {n} wherever it fits.", "{N} make it easier for me.", "The best answers have {n}.",
             "pls include {n}", "Definitely use {n}.", "Don't skimp on {n}.", "I want to see {n}.",
             "Could you give me {n}?", "Put {n} in your answers.", "Prioritise {n}.", "{N} are great.",
             "I never get tired of {n}.", "I'm a sucker for {n}."]  # fmt: skip
WIDE_DISLIKE = ["I don't like {n}.", "Stop using {n}.", "No {n}.", "Please avoid {n}.", "{N} bother me.",
                "I'm not a fan of {n}.", "Stay away from {n}.", "Spare me the {n}.", "Cut the {n}.", "Drop the {n}.",
                "Don't give me {n}.", "I find {n} annoying.", "Please, no {n}.", "{N} are a no-go for me.",
                "Do without {n}.", "I don't want {n}.", "Never give me {n}.", "Steer clear of {n}.",
                "Less {n}, please.", "{N}? No thanks.", "i really dont like {n}", "Ditch the {n}.",
                "I get irritated by {n}.", "Answers without {n}, please.", "I'd prefer no {n}.",
                "{N} make answers worse for me.", "Don't bother with {n}.", "Hold the {n}.", "zero {n} please",
                "I'm tired of {n}."]  # fmt: skip
WIDE_SENTENCES: dict[str, tuple[list[str], list[str]]] = {
    "words": (["Write a long answer.", "Go into as much detail as possible.", "Give me every detail.",
               "Long answers please", "I want lots of depth.", "Leave nothing out.", "Make it long.",
               "Explain it fully.", "Detailed answers are my thing.", "I love in-depth responses.",
               "The longer the better.", "Give me a deep dive.", "Don't cut corners, explain it all.",
               "I have time, write as much as you need."],
              ["Make it short.", "Short answers please.", "Be brief.", "Keep it short.", "Answer in one line.",
               "Just the gist.", "No long explanations.", "Short replies, thanks.", "Don't over-explain.",
               "Skip the details, just answer.", "Brief is best.", "Only a sentence or two.",
               "I don't have time for long answers.", "Keep it tight.", "Concise, please.",
               "Say it in as few words as possible."]),
    "exclamations": (["Use lots of exclamation marks!", "Be enthusiastic!!"],
                     ["No exclamation points.", "Don't be so excited.", "Tone down the enthusiasm.",
                      "Stay calm and even in tone."]),
    "ai_disclaimer": (["Say that you're an AI.", "Be upfront that you are a chatbot."],
                      ["Never say you're an AI.", "I know you're an AI, no need to say it.",
                       "Don't mention being a language model."]),
    "numbers": (["Back it up with numbers.", "Use statistics."],
                ["No stats please.", "Avoid statistics.", "Skip the numbers, explain in words."]),
    "second_person": (["Speak to me directly.", "Use 'you' when you explain."],
                      ["Don't talk to me as 'you'.", "Use a neutral, impersonal voice."]),
    "first_person": (["Share your own opinion.", "Say what you think, in the first person."],
                     ["No 'I think'.", "Don't give your personal opinion."]),
    "emoji": (["Emojis please 🙂", "Use emoji."], ["No emojis.", "Emoji-free, please.", "Stop with the emojis."]),
    "question_back": (["Finish with a question for me."], ["Don't end with questions.", "No questions at the end."]),
    "caveats": (["Include the warnings.", "Tell me what could go wrong."],
                ["Don't warn me.", "No safety disclaimers.", "Spare me the warnings."]),
}  # fmt: skip


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


def training_bank(seed: int = 0, typos_per_phrasing: float = 0.3, wide: bool = False) -> list[Phrasing]:
    """The training phrasings (templates and whole sentences) plus typo'd copies of a share of them; `wide` adds
    the wider bank (more nouns, templates and sentences: WIDE_*)."""
    nouns, like, dislike, sentences = TRAIN_NOUNS, LIKE, DISLIKE, TRAIN_SENTENCES
    if wide:
        nouns, sentences = _joined(TRAIN_NOUNS, WIDE_NOUNS), _joined(TRAIN_SENTENCES, WIDE_SENTENCES)
        like, dislike = LIKE + WIDE_LIKE, DISLIKE + WIDE_DISLIKE
    bank = _bank(nouns, like, dislike)
    for prop, (more, less) in sentences.items():
        bank += [Phrasing(t, prop, +1) for t in more] + [Phrasing(t, prop, -1) for t in less]
    if wide:
        bank = list(dict.fromkeys(bank))
    rng = random.Random(seed)
    extra = [Phrasing(typo(p.text, rng), p.prop, p.sign) for p in bank if rng.random() < typos_per_phrasing]
    return bank + extra


def validation_bank() -> list[Phrasing]:
    bank = _bank(VALIDATION_NOUNS, VALIDATION_LIKE, VALIDATION_DISLIKE)
    for more, less in LENGTH_VALIDATION_PAIRS:
        bank += [Phrasing(more, "words", +1), Phrasing(less, "words", -1)]
    return bank


# A development bank, written apart from both banks above and never trained on: for choosing settings (e.g. the
# serving thresholds, training/experiments/criteria_shrinkage.py), so that the validation bank stays a test
DEVELOPMENT_NOUNS: dict[str, tuple[list[str], list[str]]] = {
    "words": (["long-winded, all-encompassing answers"], ["replies that fit in a text message"]),
    "bullets": (["itemised points with bullets"], []),
    "numbered": (["a numbered walkthrough"], []),
    "headings": (["sub-headings over each part"], []),
    "bold": (["words in heavy bold type"], []),
    "tables": (["rows and columns of a table"], []),
    "code_blocks": (["runnable program listings"], []),
    "emoji": (["smileys and other emoji"], []),
    "links": (["clickable references to websites"], []),
    "question_back": (["a question to me as the last line"], []),
    "apology": (["saying sorry all the time"], []),
    "ai_disclaimer": (["reminders that an AI model is writing"], []),
    "refusal": (["saying no to what I ask"], []),
    "caveats": (["safety caveats"], []),
    "exclamations": (["exclamation marks everywhere"], []),
    "first_person": (["the writer talking about itself"], []),
    "second_person": (["sentences aimed at me as you"], []),
    "numbers": (["figures, statistics and percentages"], []),
    "quotes": (["passages in quotation marks"], []),
    "reading_grade": (["highbrow, specialist wording"], ["words a young child knows"]),
    "sentence_length": (["sprawling sentences"], ["sentences of a few words each"]),
    "summary": (["a recap paragraph to finish"], []),
    "greeting": (["an upbeat 'Absolutely!' opening"], []),
}  # fmt: skip
DEVELOPMENT_LIKE = ["Answers with {n} suit me.", "I'm a fan of {n}.", "Do include {n}."]
DEVELOPMENT_DISLIKE = ["I'd rather not see {n}.", "{N} put me off.", "Leave out {n}."]
DEVELOPMENT_GENERAL = ["I'm a pharmacist.", "This is for my thesis.", "I care about getting it right.",
                       "Be accurate.", "I'm a beginner.", "Help me decide.", "I'm a journalist.",
                       "Think like an expert would."]  # fmt: skip


def development_bank() -> list[Phrasing]:
    return _bank(DEVELOPMENT_NOUNS, DEVELOPMENT_LIKE, DEVELOPMENT_DISLIKE)


# A second development bank, written after the first one failed to predict the validation bank (2026-11-24): more
# templates (six each way) and two nouns for most properties. For choosing between criteria fits; never trained on.
SECOND_DEVELOPMENT_NOUNS: dict[str, tuple[list[str], list[str]]] = {
    "words": (["answers that go on at length", "a thorough, blow-by-blow treatment"],
              ["answers of a line or so", "clipped, minimal replies"]),
    "bullets": (["points set out with bullet markers", "a bulleted rundown"], []),
    "numbered": (["steps with numbers in front", "a numbered sequence"], []),
    "headings": (["a header above every part", "headlines dividing the answer"], []),
    "bold": (["heavy type on the key ideas", "emboldened phrases"], []),
    "tables": (["a grid of rows and columns", "a tabular layout"], []),
    "code_blocks": (["fenced code listings", "chunks of code"], []),
    "emoji": (["emoji sprinkled through the text", "pictogram icons like 🚀"], []),
    "links": (["URLs to click through", "linked web pages"], []),
    "question_back": (["a question thrown back at me to close", "a final question for me"], []),
    "apology": (["sorry-heavy phrasing"], []),
    "ai_disclaimer": (["remarks that you are only an AI"], []),
    "refusal": (["flat refusals"], []),
    "caveats": (["warnings about what could go wrong", "hedging caveats"], []),
    "exclamations": (["exclamation-heavy writing", "punctuation full of !"], []),
    "first_person": (["the assistant saying 'I' a lot"], []),
    "second_person": (["addressing the reader as you"], []),
    "numbers": (["lots of figures", "numeric detail"], []),
    "quotes": (["quoted lines from sources"], []),
    "reading_grade": (["dense, expert terminology"], ["vocabulary a child could read"]),
    "sentence_length": (["lengthy, multi-clause sentences"], ["sentences of five or six words"]),
    "summary": (["a closing recap of the main points"], []),
    "greeting": (["a peppy 'Sure thing!' at the top"], []),
}  # fmt: skip
SECOND_DEVELOPMENT_LIKE = ["Ideally there'd be {n}.", "I'm keen on {n}.", "Please go for {n}.",
                           "{N} would be welcome.", "My vote goes to {n}.", "Bring {n}, please."]  # fmt: skip
SECOND_DEVELOPMENT_DISLIKE = ["{N} are not for me.", "Skip {n} entirely.", "I'd like to avoid {n}.",
                              "Please hold back on {n}.", "{N} irk me.", "No place for {n} here."]  # fmt: skip


def second_development_bank() -> list[Phrasing]:
    return _bank(SECOND_DEVELOPMENT_NOUNS, SECOND_DEVELOPMENT_LIKE, SECOND_DEVELOPMENT_DISLIKE)


# General criteria for the silent check, never trained on: they say nothing about any measured property
VALIDATION_GENERAL = ["Please get the facts right.", "I need a trustworthy answer.", "I'm a nurse asking for work.",
                      "Help me understand this.", "Be fair to every side.", "I'm curious about science.",
                      "Solve the problem correctly.", "I value good judgement."]  # fmt: skip


# Short general criteria people type that say nothing about a measured property: who they are, what the answer is
# for, what they care about beyond form. Written for training, separately from VALIDATION_GENERAL.
TRAIN_GENERAL = ["I'm a teacher.", "I work in finance.", "I'm a lawyer.", "I'm a retired engineer.",
                 "I'm a high school student.", "I run a small bakery.", "I'm a doctor.",
                 "I'm a graduate student in biology.",
                 "This is for a school project.", "I'm preparing for an exam.", "I need this for a presentation.",
                 "It's for my homework.", "I love astronomy.", "I'm into cooking.", "I'm interested in economics.",
                 "I follow politics closely.", "I like gardening.", "I'm learning Spanish.", "I play chess.",
                 "Get it right.", "Don't make things up.", "Accuracy matters most to me.", "Be truthful.",
                 "I want a reliable answer.", "Answer what I actually asked.", "Think it through carefully.",
                 "Use common sense.", "Be unbiased.", "Consider different viewpoints.", "Respect my intelligence.",
                 "I'm new to this topic.", "I've been wondering about this for a while.", "Please help me out.",
                 "Give me the best answer you can.", "I trust your expertise.", "Make it useful.",
                 "I want to learn something.", "Be sensible.", "Check your logic.", "Don't mislead me."]  # fmt: skip

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
