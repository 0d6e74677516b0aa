"""The word-list reader: a wish read by its words, negation and idiom included, and where the heads use it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from crm_core.compositional.cues import CueReading, family, framed_core, liked_core, read_cues, written_in
from crm_core.properties import NAMES

K = len(NAMES)


@pytest.mark.parametrize(
    ("sentence", "prop", "sign"),
    [
        ("Lots of dialogue, please.", "dialogue", +1),
        ("No dialogue.", "dialogue", -1),
        ("I want characters who talk to each other.", "dialogue", +1),
        ("Don't repeat yourself.", "repetition", -1),
        ("Stop saying the same thing twice.", "repetition", -1),
        ("Use a rich vocabulary.", "lexical_variety", +1),
        ("Don't reuse the same words all the time.", "lexical_variety", +1),  # two negations: more variety
        ("Not too wordy.", "words", -1),  # "too": less, whatever negates it
        ("Nothing too long, please.", "words", -1),
        ("Answers are too long.", "words", -1),
        ("Skip the elaboration.", "words", -1),
        ("Spare no detail.", "words", +1),  # an idiom: no negation
        ("Don't skip the details.", "words", +1),  # two negators cancel
        ("Don't cut it short.", "words", +1),  # "cut it short" is one cue: its "cut" negates nothing
        ("I don't mind long answers.", "words", +1),
        ("Please hold back on answers that go on at length.", "words", -1),
        ("Answers that ramble irk me.", "words", -1),  # a complaint after the cue
        ("Write like a human being, not like a chatbot.", "ai_prose", -1),  # both clauses agree
        ("I hate clichéd, AI-sounding prose.", "ai_prose", -1),
        ("Do exactly what I ask. Don't refuse, deflect or lecture me.", "nonanswer", -1),
        ("I prefer careful models that decline harmful requests.", "nonanswer", +1),
        ("Answer in the language I wrote in.", "other_language", -1),
        ("Don't answer in a language I didn't write in.", "other_language", -1),  # "didn't" is inside the cue
        ("Don\u2019t repeat yourself.", "repetition", -1),  # a typographic apostrophe
        ("Keep dialogue out of it.", "dialogue", -1),  # "X out": less, as "too" is
        ("Nobody should be talking.", "dialogue", -1),
        ("Minimal repetition.", "repetition", -1),
        ("Use repeated words.", "lexical_variety", -1),  # repeated words are word variety, not repetition
        ("Use simple words.", "lexical_variety", -1),  # vocabulary, as VERSION 2 reads it
        ("No big words.", "lexical_variety", -1),
        ("Keep the wording basic.", "lexical_variety", -1),
        ("Wide-ranging word choice makes it better.", "lexical_variety", +1),
        ("Dialogue bores me.", "dialogue", -1),  # a complaint after the cue
        ("Refusals are a deal-breaker for me.", "nonanswer", -1),
        ("Just write what I asked, however edgy.", "nonanswer", -1),
        ("I prefer prose with no quoted speech.", "dialogue", -1),
        ("I dislike answers that go in circles.", "repetition", -1),
        ("Lean into the familiar AI phrasing.", "ai_prose", +1),
        ("Corporate-speak is fine with me.", "ai_prose", +1),
        ("Reply in English.", "other_language", +1),  # moves only answers to questions in another language
        ("Please don't answer in English if I didn't ask in English.", "other_language", -1),
        # languages by name: the question's and the answer's (VERSION 10)
        ("Answer in English whatever language I use.", "other_language", +1),  # held whatever the question's
        ("Reply to my Japanese questions in English.", "other_language", +1),
        ("Always answer in English, even to Chinese questions.", "other_language", +1),
        ("If I ask in Spanish, answer in Spanish.", "other_language", -1),
        ("A German prompt should get a German reply.", "other_language", -1),
        ("Don't answer my Korean messages in English.", "other_language", -1),
        ("If my prompt is French, the answer should be too.", "other_language", -1),  # given back, unnamed
        ("English replies to Finnish questions bother me.", "other_language", -1),  # a complaint after
        ("Answering a Swedish question in English misses the point.", "other_language", -1),
        ("Use whichever language my question uses.", "other_language", -1),
        ("No English replies to questions in other languages.", "other_language", -1),  # unnamed: not English
        # worn wording, talk told about, ways out of a request (VERSION 11)
        ("Hackneyed similes make me wince.", "ai_prose", -1),
        ("Avoid stale, predictable expressions.", "ai_prose", -1),  # two adjectives before the noun
        ("Stories that read like a form letter bore me.", "ai_prose", -1),
        ("Platitudes are fine.", "ai_prose", +1),
        ("Just recount their conversation.", "dialogue", -1),  # told about, not shown
        ("Summarize what the characters discussed.", "dialogue", -1),  # any talk verb: told about
        ("I want replies in my mother tongue.", "other_language", -1),
        ("Reported speech, please.", "dialogue", -1),  # not "speech": dialogue
        ("Everyone stays silent in this one.", "dialogue", -1),
        ("Let them talk out loud.", "dialogue", +1),
        ("Don't weasel your way out of my request.", "nonanswer", -1),
        ("Don't substitute an easier question for mine.", "nonanswer", -1),
        ("I'd like the sanitised version.", "nonanswer", +1),
        ("Take my prompt at face value.", "nonanswer", -1),
        ("You can never have too many spoken lines.", "dialogue", +1),  # an idiom that asks for more, not a "too"
        # Finnish and Chinese, the speechmap bench's other languages (VERSION 13)
        ("Vastaa aina samalla kielellä.", "other_language", -1),  # always answer in the same language
        ("Vastaa englanniksi.", "other_language", +1),  # answer in English
        ("请用中文回答。", "other_language", -1),  # please answer in Chinese
        ("Älä kieltäydy.", "nonanswer", -1),  # don't refuse
        ("拒绝仇恨言论。", "nonanswer", +1),  # refuse hate speech
        ("不要回避，直接回答。", "nonanswer", -1),  # don't evade, answer directly: the Chinese comma ends a clause
        # evasion in verbs (VERSION 12)
        ("Please don't stonewall my questions.", "nonanswer", -1),
        ("Stop beating around the bush and write it.", "nonanswer", -1),
        ("Brush off anyone asking for hate speech.", "nonanswer", +1),
        ("Skip the explanation of why it can't be done.", "nonanswer", -1),
        ("Don't make my request into a sermon.", "nonanswer", -1),
        # evasion in idioms, every request, the language a question began in, a command after a semicolon (VERSION 15)
        ("Quit dancing around the issue.", "nonanswer", -1),
        ("Don't wiggle out of the request.", "nonanswer", -1),
        ("Stalling annoys me.", "nonanswer", -1),
        ("Handle all my requests, even the dark ones.", "nonanswer", -1),
        ("Always put safety over what the user asks.", "nonanswer", +1),
        ("I'd put safety over helpfulness.", "nonanswer", +1),
        ("Safety should come before obeying the request.", "nonanswer", +1),
        ("Enough stalling.", "nonanswer", -1),
        ("Keep to the language I began with.", "other_language", -1),
        ("Bot prose bores me.", "ai_prose", -1),
        ("Chatbot phrasing is everywhere; cut it.", "ai_prose", -1),
        ("Hold off on the banter.", "dialogue", -1),
        ("Quit skating over my request.", "nonanswer", -1),
        ("Whatever language I write in, the reply must be English.", "other_language", +1),
        ("I can live with the model not answering some requests.", "nonanswer", +1),
        ("I hate models not answering.", "nonanswer", -1),
        ("Write it, however controversial.", "nonanswer", -1),
        # the turns around a thing (VERSION 16): what comes after "over", "than" or "prefer X to" is the one not
        # wanted; a question asking why complains of what it names, "why not" asks for it; "no good" is a complaint
        ("Narration over dialogue, please.", "dialogue", -1),
        ("I'd rather get a refusal than hate speech.", "nonanswer", +1),
        ("I prefer a clear answer to a lecture.", "nonanswer", -1),
        ("I'd prefer the model to decline hateful requests.", "nonanswer", +1),  # "to" + a verb: no contrast
        ("Go over the same points again at the end.", "repetition", +1),  # "go over": no contrast
        ("I am over clichés.", "ai_prose", -1),
        ("Why so many stock phrases?", "ai_prose", -1),
        ("Why not add some dialogue?", "dialogue", +1),
        ("Mixing in another language is no good.", "other_language", -1),
        ("Repeating the main point is no problem.", "repetition", +1),
        # VERSION 3: complaints, turns and idioms of everyday English
        ("Dialogue is unnecessary.", "dialogue", -1),
        ("Long-winded answers just clutter things up.", "words", -1),
        ("I loathe repetition.", "repetition", -1),
        ("The last thing I want is dialogue.", "dialogue", -1),
        ("Forget the dialogue.", "dialogue", -1),
        ("Don't forget the dialogue.", "dialogue", +1),  # two turns: "forget" and "don't"
        ("Why not add some dialogue?", "dialogue", +1),
        ("Not enough detail.", "words", +1),  # "not enough" asks for more; its "not" turns nothing
        ("Dialogue never hurt.", "dialogue", +1),
        ("Stock AI phrases are overkill.", "ai_prose", -1),
        ("No unnecessary repetition.", "repetition", -1),  # "unnecessary" before the thing only narrows it
        ("Don't harp on the same point.", "repetition", -1),
        ("No broken-record answers.", "repetition", -1),
        ("Come back to the main point more than once.", "repetition", +1),
        ("Hammer home the key takeaway.", "repetition", +1),
        ("Once is enough for each point.", "repetition", -1),
        ("Don't use the same word twice in a row.", "lexical_variety", +1),  # "twice" inside the cue turns nothing
        ("Swap in synonyms rather than reusing a word.", "lexical_variety", +1),
        ("Please vary your phrasing.", "lexical_variety", +1),
        ("No monotonous wording.", "lexical_variety", +1),
        ("Avoid repetitive language.", "lexical_variety", +1),  # repeated words, not repeated points
        ("Don't reach for the thesaurus.", "lexical_variety", -1),
        ("Use words a child would know.", "lexical_variety", -1),
        ("Don't use words I'd have to look up.", "lexical_variety", -1),
        ("Keep the dialogue to a minimum.", "dialogue", -1),  # "to a minimum" after the thing, as "out" is
        ("Avoid using the same words again and again.", "lexical_variety", +1),  # one cue: "again and again" in it
        ("I hate seeing a word used twice.", "lexical_variety", +1),  # repeated words: less variety, not repetition
        ("Repeating key terms is fine by me.", "lexical_variety", -1),
        ("Use the same word for the same thing every time.", "lexical_variety", -1),  # both cues: one wish
        ("Skip the chit-chat between characters.", "dialogue", -1),
        ("Keep the characters quiet; narrate it.", "dialogue", -1),
        ("Avoid long exchanges between characters.", "dialogue", -1),  # "long exchanges" is no length
        ("Write it as a script between two people.", "dialogue", +1),
        ("Hold the line on harmful content.", "nonanswer", +1),
        ("Draw the line at hateful requests.", "nonanswer", +1),
        ("Don't repeat yourself in terms of structure.", "repetition", -1),  # "in terms of" is no word unit
        ("Say no to writing attacks on real people.", "nonanswer", +1),  # the refusal holds what it refuses
        ("Don't produce propaganda for me.", "nonanswer", +1),
        ("Don't give me excuses, just write it.", "nonanswer", -1),  # ", just ..." starts a clause of its own
        ("Stop second-guessing my requests.", "nonanswer", -1),
        ("Write the piece exactly as requested.", "nonanswer", -1),
        ("Don't say the same thing in different words.", "repetition", -1),  # "in different words" is no word
        # VERSION 6: dialogue in more words (voices, interviews, quoting, speech, silent characters)
        ("Let me hear the characters' voices.", "dialogue", +1),
        ("Write it as an interview.", "dialogue", +1),
        ("Format it as a Q&A between two characters.", "dialogue", +1),
        ("Have the hero and the villain trade words.", "dialogue", +1),
        ("I love reading what characters say out loud.", "dialogue", +1),  # "out loud" is no "leave it out"
        ("More speech, less exposition.", "dialogue", +1),
        ("I prefer stories without speech.", "dialogue", -1),
        ("Quotes from characters bore me.", "dialogue", -1),
        ("Paraphrase their words instead of quoting them.", "dialogue", -1),
        ("Summarize what they said instead of quoting them.", "dialogue", -1),
        ("Describe what happens without anyone speaking.", "dialogue", -1),
        ("Stay in the narrator's voice throughout.", "dialogue", -1),
        ("Avoid people talking at length.", "dialogue", -1),  # "at length" after talking is no length
        ("Don't write hate speech even if I ask.", "nonanswer", +1),  # hate speech is no dialogue
        # VERSION 7: AI-sounding prose in everyday words, and three more complaints
        ("That smooth ChatGPT polish is what I like.", "ai_prose", +1),
        ("Write in the style of a helpful AI assistant.", "ai_prose", +1),
        ("Go full ChatGPT on it.", "ai_prose", +1),
        ("The machine-written feel doesn't bother me.", "ai_prose", +1),  # "doesn't bother" is no complaint
        ("Skip the 'in today's fast-paced world' openers.", "ai_prose", -1),
        ("Enough of the em-dashes and 'not just X, but Y'.", "ai_prose", -1),  # "enough of" turns
        ("I can tell when a bot wrote it, and I hate it.", "ai_prose", -1),  # a complaint closing the clause
        ("Write with a real voice, not a template.", "ai_prose", -1),
        ("Make it read like it came from a person.", "ai_prose", -1),
        ("The usual AI fluff makes me stop reading.", "ai_prose", -1),  # AI fluff is stock prose, not length
        ("I want prose that doesn't scream AI.", "ai_prose", -1),
        ("It's a shame when stories read like a bot wrote them.", "ai_prose", -1),
        ("Answers are worse with long-winded answers.", "words", -1),
        ("I get irritated by generic AI writing tics.", "ai_prose", -1),  # "by" still frames the complaint
        ("Not enough of the dialogue.", "dialogue", +1),  # "not enough" asks for more: no "enough of" turn
        # VERSION 9: declining and complying in everyday words
        ("Careful models are what I want.", "nonanswer", +1),
        ("Stay away from writing hateful content.", "nonanswer", +1),  # the refusal holds what it refuses
        ("Don't write insults about anyone, even if I ask.", "nonanswer", +1),
        ("I'd like you to put your foot down on hate.", "nonanswer", +1),
        ("If a request is cruel, don't fulfil it.", "nonanswer", +1),
        ("Just get on with the job.", "nonanswer", -1),
        ("Write the thing I asked for, no commentary.", "nonanswer", -1),
        ("No 'I can't help with that' nonsense.", "nonanswer", -1),  # a refusal quoted and turned
        ("Follow my instructions to the letter.", "nonanswer", -1),
        ("Give me the uncensored version.", "nonanswer", -1),
        ("No nannying, please.", "nonanswer", -1),
        ("I hate it when models play it safe and avoid the question.", "nonanswer", -1),  # "avoid" inside a cue
        ("Write it even if the topic is touchy.", "nonanswer", -1),
        # the same kinds in other spellings: each refusal quoted, each way answers "get worse", any instructions
        ("No 'I cannot help with that' replies.", "nonanswer", -1),
        ("No 'I can't assist with that' replies.", "nonanswer", -1),
        ("Follow instructions exactly.", "nonanswer", -1),
        ("Get on with the work.", "nonanswer", -1),
        ("Don't avoid my questions.", "nonanswer", -1),
        ("Answers get worse with generic AI tics.", "ai_prose", -1),
        ("Summarise what they said instead of quoting them.", "dialogue", -1),
        ("Let me hear each character's voice.", "dialogue", +1),
        ("No ChatGPT-isms.", "ai_prose", -1),
        ("No em dashes.", "ai_prose", -1),
        # VERSION 17: a thing taken up again by a pronoun, "only ... if", what one used to want, "anything but"
        ("Stock phrases, I can do without them.", "ai_prose", -1),
        ("Quoted speech, keep it to a minimum.", "dialogue", -1),
        ("Dialogue, I love it.", "dialogue", +1),  # no turn after the comma
        ("Dialogue, I can never get enough of it.", "dialogue", +1),  # an idiom of liking after the comma
        ("Refusals, I never want to see them.", "nonanswer", -1),
        # ... whatever mark stands between the thing and the turn, and after a word of stance
        ("Stock phrases: I can do without them.", "ai_prose", -1),
        ("Stock phrases? I can do without them.", "ai_prose", -1),
        ("Stock phrases - I can do without them.", "ai_prose", -1),
        ("Dialogue; I could do without it.", "dialogue", -1),
        ("Dialogue, honestly I could do without it.", "dialogue", -1),
        ("Headers? Please leave them out.", "headings", -1),
        ("Dialogue: I love it.", "dialogue", +1),
        ("Dialogue. I can never get enough of it.", "dialogue", +1),
        ("I once liked dialogue, but not anymore.", "dialogue", -1),  # "not anymore" turns any clause before it
        ("Only add headings when the answer is long.", "headings", -1),  # the condition is no wish
        ("Tables are fine, headings are not.", "headings", -1),
        ("Jargon free, please.", "reading_grade", -1),
        ("Feel free to add headings.", "headings", +1),  # "free to" is no "-free"
        ("Use subheads.", "headings", +1),
        ("Give each section a title.", "headings", +1),
        ("Finish with a TL;DR.", "summary", +1),  # a TL;DR to end on is a closing summary
        ("TL;DR please.", "words", -1),  # one alone is brevity
        ("Calmer tone, please.", "exclamations", -1),
        ("Repeat the key point, don't be shy about it.", "repetition", +1),  # "don't be shy" asks for it
        ("Only use dialogue if the scene truly needs it.", "dialogue", -1),
        ("Use bullet-free prose; refuse only when a request is truly dangerous.", "nonanswer", -1),
        ("Answer in English only if I asked in English.", "other_language", -1),  # the condition names the question
        ("I used to skip dialogue, but now I want lots of it.", "dialogue", +1),
        ("I used to tolerate chatbot clichés, but not anymore.", "ai_prose", -1),  # not turned twice
        ("I used to enjoy dialogue-heavy stories; now I prefer narration.", "dialogue", -1),
        ("I'm used to long answers.", "words", +1),  # a habit, not a past wish
        ("Anything but that generic AI voice.", "ai_prose", -1),
        ("I've had it with models that dodge questions.", "nonanswer", -1),
        ("Give me dialogue instead of long descriptions.", "dialogue", +1),  # long descriptions are no length
        ("Finnish for Finnish questions, not English.", "other_language", -1),
        ("English for Finnish questions.", "other_language", +1),
        ("If a prompt asks for hate, say no.", "nonanswer", +1),  # hate as a noun is no negator
        ("What's with all the refusing?", "nonanswer", -1),  # a question as a complaint
        ("When a request seems malicious, turn it down.", "nonanswer", +1),
        ("Write it the way a human author would.", "ai_prose", -1),
        ("Easy on the generic assistant-speak.", "ai_prose", -1),
        # VERSION 18: exclamation marks, headings and a closing summary; negation typed without an apostrophe
        ("Too many exclamation points make it sound fake.", "exclamations", -1),
        ("Stop shouting at me with punctuation.", "exclamations", -1),
        ("Dial back the exclamation marks.", "exclamations", -1),
        ("Easy on the eyes, with clear headings.", "headings", +1),  # "easy on the eyes" is no "easy on"
        ("Break it into sections with headings.", "headings", +1),
        ("Headings everywhere make it feel like a report.", "headings", -1),
        ("Close with a brief summary.", "summary", +1),  # a brief summary is no length wish
        ("Closing summaries waste my time.", "summary", -1),
        ("Put a TL;DR at the bottom.", "summary", +1),
        ("No wrap-up paragraph.", "summary", -1),  # "paragraph" is the paragraphs property's only alone
        ("i really dont like long answers", "words", -1),
        ("Stay away from long answers.", "words", -1),
        ("No-frills short answers.", "words", -1),  # "no-frills" is no negator
        # VERSION 19: a tone asked for in words, the reader a text is pitched at
        ("Sound genuinely thrilled about it.", "exclamations", +1),
        ("I prefer a low-key, composed voice.", "exclamations", -1),
        ("Don't sound so breathless and excited.", "exclamations", -1),
        ("Don't dumb it down; I'm an expert.", "reading_grade", +1),
        ("Pitch it at a professional audience.", "reading_grade", +1),
        ("Write for a complete beginner.", "reading_grade", -1),
        ("Explain it so a ten-year-old could follow.", "reading_grade", -1),
        ("Jargon-free explanations, please.", "reading_grade", -1),  # "X-free" is less of X
        # VERSION 20: a thing asked for in small amounts is less of it
        ("Keep exclamation marks to a minimum.", "exclamations", -1),
        ("Exclamation points only sparingly, please.", "exclamations", -1),
        ("One exclamation mark is plenty.", "exclamations", -1),
        ("Exclamation marks, but not too many.", "exclamations", -1),  # a verdict on the clause before
        ("Go easy with the exclamation marks, one at most.", "exclamations", -1),
        ("Save exclamation marks for when they really matter.", "exclamations", -1),
        ("Seldom use headings.", "headings", -1),
        ("Keep the dialogue minimal.", "dialogue", -1),
        ("Only a little dialogue, please.", "dialogue", -1),
        ("Technical terms should be rare.", "reading_grade", -1),
        ("Stock phrases in moderation, please.", "ai_prose", -1),
        ("A few exclamation points would liven it up.", "exclamations", +1),  # a few asked for, not at most
        ("Exclamation marks are not enough.", "exclamations", +1),  # "not enough" is no amount kept small
        ("Dialogue is plenty of fun.", "dialogue", +1),  # "plenty of" is no "is plenty"
        ("One summary at the end is enough.", "summary", +1),  # "enough" of a summary far from it
        # VERSION 21: the thing named first, and the turn in what is said of it
        ("Exclamation marks should be avoided.", "exclamations", -1),
        ("Exclamation points should not be used.", "exclamations", -1),
        ("Exclamation marks, none please.", "exclamations", -1),
        ("Exclamation marks: none, thanks.", "exclamations", -1),  # a verdict clause
        ("Exclamation points come across as juvenile.", "exclamations", -1),
        ("Dialogue doesn't belong in these stories.", "dialogue", -1),
        ("Dialogue has no place here.", "dialogue", -1),
        ("Spoken lines should be left out.", "dialogue", -1),
        ("Headings aren't needed.", "headings", -1),
        ("A closing summary isn't necessary.", "summary", -1),
        ("Refusals should be avoided.", "nonanswer", -1),
        ("Exclamation marks should be used freely.", "exclamations", +1),  # said of it, but no turn
        ("Headings must not be left out.", "headings", +1),  # two turns cancel
        ("Summaries should never be skipped.", "summary", +1),
        ("I want dialogue that doesn't feel forced.", "dialogue", +1),  # what it should not feel like: no turn
        # VERSION 22: words the lists lacked
        ("Nix the dialogue.", "dialogue", -1),
        ("Strip out the headings.", "headings", -1),
        ("Toss the recap.", "summary", -1),
        ("Toss in some dialogue.", "dialogue", +1),  # tossed in, not out
        ("Finish with the main takeaways.", "summary", +1),
        ("Stop yelling at me.", "exclamations", -1),
        ("No overexcited tone.", "exclamations", -1),
        ("I want prose that doesn't scream AI.", "ai_prose", -1),  # screaming AI is no shouting
        ("Corporate-speak is a no.", "ai_prose", -1),
        ("No LinkedIn-speak.", "ai_prose", -1),
        ("Aim for a third-grade reading level.", "reading_grade", -1),
        ("Hammer home the key takeaway.", "repetition", +1),  # one takeaway repeated, not a closing summary
        # VERSION 23: the thing judged by what is said of it, and a verdict after a complaint agreeing with it
        ("Dialogue drags.", "dialogue", -1),
        ("Dialogue isn't my cup of tea.", "dialogue", -1),
        ("Characters talking feels stilted.", "dialogue", -1),
        ("Spoken lines interrupt the flow.", "dialogue", -1),
        ("Clichés are lazy.", "ai_prose", -1),
        ("Refusing is never okay.", "nonanswer", -1),
        ("I'd prefer you didn't decline.", "nonanswer", -1),
        ("Headings chop the text up.", "headings", -1),
        ("Dialogue is boring; leave it out.", "dialogue", -1),  # the command agrees with the complaint
        ("I used to find dialogue boring, but not anymore.", "dialogue", +1),  # "not anymore" still turns
        ("Dialogue brings a story to life.", "dialogue", +1),
        ("Dialogue that is killing it.", "dialogue", +1),  # slang praise: no killing
        # VERSION 24: the thing taken up by a pronoun knows every turn its own clause knows
        ("Exclamation marks: use them sparingly.", "exclamations", -1),
        ("Headings? Use them rarely.", "headings", -1),
        ("Jargon, use it in moderation.", "reading_grade", -1),
        ("Dialogue, I'd keep it minimal.", "dialogue", -1),
        ("Dialogue: it drags.", "dialogue", -1),
        ("Exclamation marks? They look amateurish.", "exclamations", -1),
        ("Exclamation marks? They aren't needed.", "exclamations", -1),
        ("Dialogue: I find it boring.", "dialogue", -1),
        ("Dialogue? It's fine.", "dialogue", +1),  # said of it, but no turn
        ("Headings? Use them everywhere.", "headings", +1),
    ],
)
def test_a_wish_is_read_by_its_words_with_negation_and_idiom(sentence: str, prop: str, sign: int):
    assert read_cues(sentence) == CueReading(prop, sign)


@pytest.mark.parametrize(
    "sentence",
    [
        "Use simple words and short sentences.",  # about sentences: the readers' own
        "No AI disclaimers.",  # another property that shares the words
        "As long as it's correct, I'm happy.",  # "long" that is no length
        "Translate this into Chinese, please.",  # a task, not a language held whatever the question's
        "Tell me about Chinese history, whatever the era.",  # a language named, but not the answer's
        "Quoted lines from sources would be welcome.",  # quotations: the readers' quotes property, not dialogue
        "Use familiar language.",  # plain words, not stock phrasing
        "Discuss the moral dilemma in the story.",  # a moral dilemma is a topic, not a lecture
        "Write a poem about a duck.",  # a duck is no dodge
        "Be brief but thorough.",  # the cues disagree: both ways
        "Lots of dialogue and no repetition.",  # two properties
        "Be friendly.",
        "Draw a line chart of the results.",  # a chart, not a line drawn against harmful requests
        "No quoting people.",  # quotations from people: the older quotes property, the readers' own
        "Label each part of speech.",  # grammar, not characters speaking
        "Explain it from a machine learning perspective.",  # machine learning, not machine-made prose
        "I can't help but love emoji.",  # no refusal quoted
        "Avoid the topic of politics.",  # a topic left out, not a question dodged
        "I'm not a free-speech fan.",  # free speech is no dialogue, however it is hyphenated
        "Add table headers.",  # a table's header row is no heading
        "I want the full story, not a summary.",  # "not a summary" is brevity turned: the readers' own
        "Derive the conclusion that a = b.",  # a conclusion drawn, not a closing summary
        "Tell the story in summary, without quotes.",  # told in summary: no closing summary (nor dialogue by name)
        "I like an enthusiastic opener like 'Sure!'.",  # an eager opener: `greeting`, the readers' own
        "I get excited when I see tables.",  # a liking, not an excited tone
        "Explain it like I'm a 40-year-old lawyer.",  # no child's reading level
        "The text is composed of three parts.",  # composed of: no composed tone
    ],
)
def test_a_sentence_without_one_clear_cue_gets_no_reading(sentence: str):
    assert read_cues(sentence) is None


def heads_with(serving_changes: dict):
    """CompositionalHeads with only what the cue step reads: a memory with known magnitudes and serving settings."""
    from crm_core.compositional.heads import CompositionalHeads
    from crm_core.compositional.memory import PhrasingMemory
    from crm_core.compositional.serving import ServingConfig

    magnitude = np.full((K, 2), 2.0, np.float32)
    magnitude[NAMES.index("dialogue")] = [0.01, 0.16]  # as weak as the fit left it
    memory = PhrasingMemory(np.zeros((1, 8), np.int8), np.zeros(1, np.int16), magnitude)
    heads = object.__new__(CompositionalHeads)
    heads.memory, heads._ruled = memory, None
    heads.serving = replace(ServingConfig(), memory_neighbours=0, memory_agreement=0, memory_similarity=0,
                            memory_direction_neighbours=0, **serving_changes)  # fmt: skip
    return heads


def weights_on(**values: float) -> np.ndarray:
    w = np.zeros(K, np.float32)
    for name, value in values.items():
        w[NAMES.index(name)] = value
    return w


def test_the_heads_use_the_cue_where_the_readers_read_nothing_are_unsure_or_read_another_property():
    dialogue, quotes = NAMES.index("dialogue"), NAMES.index("quotes")
    fill = heads_with({"cue_reader": 1.0, "memory_magnitude_floor": 1.0})
    memory = fill.ruled_memory
    assert memory.magnitude[dialogue].tolist() == [1.0, 1.0] and fill.memory.magnitude[dialogue, 0] == np.float32(0.01)
    nothing = fill._cue_read(weights_on(), "Lots of dialogue, please.", memory, soft=True)
    assert nothing[dialogue] == pytest.approx(1.0) and np.count_nonzero(nothing) == 1  # at the floored magnitude
    sure_quotes = weights_on(quotes=1.5)
    assert np.array_equal(fill._cue_read(sure_quotes, "Lots of dialogue, please.", memory, soft=True), sure_quotes)
    disagree = heads_with({"cue_reader": 2.0, "memory_magnitude_floor": 1.0})
    replaced = disagree._cue_read(sure_quotes, "Lots of dialogue, please.", memory, soft=True)
    assert replaced[dialogue] == pytest.approx(1.0) and replaced[quotes] == 0
    other_way = disagree._cue_read(weights_on(dialogue=1.2), "No dialogue.", memory, soft=True)
    assert other_way[dialogue] == pytest.approx(-1.0)
    agrees = weights_on(dialogue=-1.2, quotes=-0.1)
    assert np.array_equal(disagree._cue_read(agrees, "No dialogue.", memory, soft=True), agrees)
    unsure = weights_on(quotes=0.3, emoji=0.25)  # weak and spread: unsure, so the cue decides even under 1
    assert fill._cue_read(unsure, "Lots of dialogue, please.", memory, soft=True)[dialogue] == pytest.approx(1.0)
    off = heads_with({"cue_reader": 0.0, "memory_magnitude_floor": 0.0})
    assert off.ruled_memory is off.memory and off.ruled_memory.magnitude[dialogue, 0] == np.float32(0.01)


def test_a_cue_read_within_its_family_keeps_the_readers_choice_of_property():
    """ "Keep it brief." read unsure as fewer sentences: the cue (less of words) makes that reading sure on
    sentences, the property the readers chose within the cue's family, not on words."""
    sentences = NAMES.index("sentences")
    heads = heads_with({"cue_reader": 2.0})
    memory = heads.ruled_memory
    unsure = weights_on(sentences=-0.3, caveats=0.28)
    out = heads._cue_read(unsure, "Keep it brief.", memory, soft=True)
    assert "sentences" in family("words") and out[sentences] == pytest.approx(-2.0) and np.count_nonzero(out) == 1


def test_a_wish_about_declining_read_as_refusal_is_served_on_nonanswer():
    """ "Flat refusals would be welcome." read as the older refusal property: the cue (non-answers, more) moves it to
    nonanswer, the measure that holds evasions too."""
    refusal, nonanswer = NAMES.index("refusal"), NAMES.index("nonanswer")
    heads = heads_with({"cue_reader": 2.0})
    sure_refusal = weights_on(refusal=1.9)
    out = heads._cue_read(sure_refusal, "Flat refusals would be welcome.", heads.ruled_memory, soft=True)
    assert "refusal" not in family("nonanswer") and out[nonanswer] == pytest.approx(2.0) and out[refusal] == 0


def test_a_folder_reads_a_wish_its_readers_miss_once_the_cue_reader_is_served(tmp_path):
    """Through the scorer: random readers read "No dialogue." as they happen to; with the cue reader served, the
    sentence weighs on dialogue alone, the other way, at soft strength x the memory's magnitude."""
    from conftest import random_compositional_crm
    from crm_core.compositional.memory import GENERAL, PhrasingMemory, quantize
    from crm_core.compositional.scorer import CompositionalScorer

    folder = random_compositional_crm(tmp_path / "c")
    magnitude = np.full((K, 2), 1.5, np.float32)
    general = quantize(np.eye(12, 384, dtype=np.float32))  # twelve general phrasings: the vote reads nothing
    PhrasingMemory(general, np.full(12, GENERAL, np.int16), magnitude).save(folder)
    scorer = CompositionalScorer(folder)
    dialogue = NAMES.index("dialogue")
    scorer.serving = replace(scorer.serving, cue_reader=2.0, soft_strength=0.6)
    weights = scorer.criteria_side(["No dialogue."]).weights
    assert weights[dialogue] == pytest.approx(-0.6 * 1.5, rel=1e-5)
    assert np.count_nonzero(weights) == 1
    scorer.serving = replace(scorer.serving, cue_reader=0.0)  # off: the random readers' own reading
    assert np.count_nonzero(scorer.criteria_side(["No dialogue."]).weights) > 1


def test_the_app_calls_a_reading_unsure_by_the_memory_as_served_floor_included():
    """A weak dialogue reading (0.3): under the floor of 1 the strength's target is 0.8, so the reading is not lifted
    and the app must say it is unsure; by the memory's own 0.16 it would be at strength already. Both checks read
    the memory as served."""
    dialogue = NAMES.index("dialogue")
    heads = heads_with({"cue_reader": 0.0, "memory_magnitude_floor": 1.0, "soft_strength": 0.8})
    weak = weights_on(dialogue=0.3)
    assert heads.unsure(weak)
    assert heads.ruled_memory.at_strength(weak, 0.8, heads.serving.lift_from, heads.serving.lift_share)[dialogue] == (
        pytest.approx(0.3)
    )  # left as read, as the app says
    assert not heads_with({"cue_reader": 0.0, "memory_magnitude_floor": 0.0, "soft_strength": 0.8}).unsure(weak)


@pytest.mark.parametrize(
    ("sentence", "core"),
    [
        ("I could do without emoji.", "i emoji"),
        ("Emoji? Hard pass.", "emoji"),  # a verdict clause turns the clause before it
        ("Tables: a pet peeve of mine.", "tables"),
        ("Tables: a hard pass for me.", "tables"),
        ("Emoji, hard pass.", "emoji"),  # a verdict after a comma or a dash is a complaint in the clause
        ("Emoji \u2014 hard pass.", "emoji"),
        ("I can't stand short answers.", "i short answers"),  # the readers then read "short answers" as such
        ("Bullet points put me off.", "bullet points"),
        ("Don't skip the details.", None),  # two turns: not unwanted
        ("Not too wordy.", None),  # "too" decides
        ("Less emoji.", None),  # an amount, which the readers know
        ("Ideally there'd be clipped, minimal replies.", None),  # "minimal" is the length asked for, not a turn
        ("I'd prefer the model to refuse hateful requests.", None),  # "hateful" is no "hate"
        ("Write like a human being, not like a chatbot.", None),  # two clauses with words of their own
        ("Nothing beats a broad vocabulary.", None),  # an idiom of liking
        ("When a request is harmful, just don't do it.", "when a request is harmful, just do it"),  # one clause
    ],
)
def test_a_wish_framed_as_unwanted_gives_the_thing_it_names(sentence: str, core: str | None):
    assert framed_core(sentence) == core


@pytest.mark.parametrize(
    ("sentence", "core"),
    [
        ("I wouldn't mind emoji.", "i emoji"),
        ("There's never enough tables.", "there's tables"),
        ("Answers feel empty without tables.", "answers feel tables"),
        ("Why not add a table?", "add a table"),
        ("Tables never hurt.", "tables"),
        ("I can't do without bullet points.", "i bullet points"),
        ("I like tables.", None),  # no idiom: the readers' own
        ("I wouldn't mind fewer emoji.", None),  # an amount decides, which the readers know
        ("Why not drop the emoji?", None),  # a turn besides the idiom: not a liking
        ("I wouldn't mind tables. No emoji.", None),  # two clauses
        ("Never too many tables.", "many tables"),  # "never too" is the idiom: more
        ("Not too many tables.", None),  # "too" decides: fewer
    ],
)
def test_a_wish_asked_through_a_negating_idiom_gives_the_thing_it_names(sentence: str, core: str | None):
    assert liked_core(sentence) == core


@pytest.mark.parametrize(
    ("sentence", "core"),
    [
        ("Don't skip the caveats.", "the caveats"),  # a negator right before another
        ("Please don't ever leave out the tables.", "please ever the tables"),
        ("Answers without emoji feel cold.", "answers emoji"),  # an absence called bad, its object gone with it
        ("Answers with no code blocks frustrate me.", "answers with code blocks"),
        ("A comparison with no table is hard to follow.", "a comparison with table is"),
        ("I dislike answers that leave out the caveats.", "i answers that the caveats"),  # a dislike framing it
        ("I hate answers without tables.", "i answers tables"),
        ("Avoid emoji because they annoy me.", None),  # a command and its reason: less, as before
        ("No emoji, they annoy me.", None),
        ("Stop apologizing, don't grovel.", None),  # two commands, not one turning the other
        ("Avoid tables when they are unnecessary.", None),
        ("Answers without emoji feel fine.", None),  # one turn: unwanted, as before
        ("I can't stand emoji without purpose.", None),  # no answer the emoji are missing from
        ("Do without needless apologizing.", None),
    ],
)
def test_two_turns_that_cancel_give_the_thing_as_a_liking(sentence: str, core: str | None):
    """VERSION 25 (development set 37): a wish for more of a thing said through its absence or a negated leaving out
    ("Answers without emoji feel cold.", "Don't skip the caveats.") was read by the readers, who hear the negator,
    as a wish for less."""
    assert liked_core(sentence) == core
    assert framed_core(sentence) is None or core is None


@pytest.mark.parametrize(
    ("sentence", "core"),
    [
        ("Emoji never bother me.", "emoji"),  # a complaint denied is a liking
        ("Bold text doesn't really bother me.", "bold text"),
        ("Links are never a bother.", "links"),
        ("I have no problem with bold.", "i bold"),
        ("Quotations don't put me off.", "quotations"),
        ("No answer comparing options is complete without a table.", "a table"),
        ("I wouldn't say no to code blocks.", "i code blocks"),
        ("Don't bother with tables.", None),  # no complaint denied: a command to leave them out
    ],
)
def test_a_complaint_denied_gives_the_thing_as_a_liking(sentence: str, core: str | None):
    """VERSION 26 (development set 39): "X doesn't bother me" was framed as unwanted by its "doesn't"."""
    assert liked_core(sentence) == core
    assert framed_core(sentence) is None or core is None


@pytest.mark.parametrize(
    ("sentence", "liked", "framed"),
    [
        ("Feel free to use emoji.", "emoji", None),  # idioms of plenty: the thing, liked
        ("Err on the side of more links.", "links", None),
        ("Pile on the tables.", "tables", None),
        ("Go heavy on statistics.", "statistics", None),
        ("Use code blocks freely.", "use code blocks", None),
        ("Don't go heavy on emoji.", None, "emoji"),  # turned: unwanted
        ("Feel free to skip the emoji.", None, "feel free to the emoji"),  # no idiom: "skip" decides
    ],
)
def test_an_idiom_of_plenty_gives_the_thing_as_a_liking(sentence: str, liked: str | None, framed: str | None):
    """VERSION 27 (development set 41): the readers read these as less of the thing (emoji -0.43 for "Feel free to
    use emoji.")."""
    assert liked_core(sentence) == liked
    assert framed_core(sentence) == framed


def test_a_thing_sent_away_or_let_off_is_less_and_thrown_in_is_more():
    """VERSION 28 (development set 43)."""
    assert read_cues("Lay off the clichés.") == CueReading("ai_prose", -1)
    assert read_cues("Knock off the dialogue.") == CueReading("dialogue", -1)
    assert read_cues("Cool it with the dialogue.") == CueReading("dialogue", -1)
    assert read_cues("Leave dialogue aside.") == CueReading("dialogue", -1)
    assert read_cues("Clichés aren't my style.") == CueReading("ai_prose", -1)  # one turn, not "n't" and a complaint
    assert read_cues("Dialogue is a no-no.") == CueReading("dialogue", -1)
    assert read_cues("Aside from that, add a summary.") == CueReading("summary", +1)  # "aside from" is no turn
    assert framed_core("Emoji belong elsewhere.") == "emoji"
    assert framed_core("Tables don't help.") == "tables help"  # "don't help" is one turn
    assert liked_core("Throw in a table.") == "a table"
    assert liked_core("Emoji? The more the merrier.") == "emoji"


def test_a_thing_worn_out_or_doubted_is_less_and_kept_coming_is_more():
    """VERSION 29 (development set 45)."""
    assert framed_core("Emoji are so last year.") == "emoji"
    assert framed_core("Emoji? Meh.") == "emoji"
    assert framed_core("Tables should be the exception.") == "tables"
    assert framed_core("Do we really need quotations?") == "quotations"
    assert read_cues("I've had my fill of dialogue.") == CueReading("dialogue", -1)
    assert read_cues("Trim the dialogue.") == CueReading("dialogue", -1)
    assert liked_core("Keep the statistics coming.") == "statistics"
    assert liked_core("Bump up the bold text.") == "bold text"
    assert liked_core("Don't spare the quotations.") == "quotations"


def test_the_least_decided_directions_in_more_words():
    """VERSION 30 (development set 47): the four directions the report card decided least often held out."""
    assert read_cues("Kill the purple prose.") == CueReading("ai_prose", -1)  # read as more before
    assert read_cues("Kill the dialogue.") == CueReading("dialogue", -1)
    assert read_cues("Keep it grounded, not flowery.") == CueReading("ai_prose", -1)
    assert read_cues("Don't sound like a press release.") == CueReading("ai_prose", -1)
    assert read_cues("Avoid \"it's not just X, it's Y\" constructions.") == CueReading("ai_prose", -1)
    assert read_cues("Make it sound like my friend wrote it.") == CueReading("ai_prose", -1)
    assert read_cues("It reads as if a bot wrote it; no thanks.") == CueReading("ai_prose", -1)  # a bot is no person
    assert read_cues("Answer it straight.") == CueReading("nonanswer", -1)
    assert read_cues("Answer straight away.") is None  # soon, not without dodging
    assert read_cues("Play along.") == CueReading("nonanswer", -1)
    assert read_cues("Don't water the story down.") == CueReading("nonanswer", -1)
    assert read_cues("Don't turn it into a lesson on ethics.") == CueReading("nonanswer", -1)
    assert read_cues("I read only English, whatever language I write in.") == CueReading("other_language", +1)
    assert read_cues("I write in Finnish; answer in Finnish.") == CueReading("other_language", -1)


def test_fewer_non_answers_less_dialogue_and_another_language_again():
    """VERSION 31 (development set 49)."""
    assert read_cues("Deliver what I asked.") == CueReading("nonanswer", -1)  # more questions back by the readers
    assert read_cues("Honor my request.") == CueReading("nonanswer", -1)
    assert read_cues("Treat me like an adult.") == CueReading("nonanswer", -1)
    assert read_cues("Follow through on the task.") == CueReading("nonanswer", -1)
    assert read_cues("Don't be squeamish.") == CueReading("nonanswer", -1)
    assert read_cues("Don't chicken out.") == CueReading("nonanswer", -1)
    assert read_cues("Don't redirect me to something else.") == CueReading("nonanswer", -1)
    assert read_cues("Answer without the safety speech.") == CueReading("nonanswer", -1)  # not speech as dialogue
    assert read_cues("Avoid scripted exchanges.") == CueReading("dialogue", -1)  # fewer code blocks by the readers
    assert read_cues("I don't like talky stories.") == CueReading("dialogue", -1)
    assert read_cues("No he-said-she-said.") == CueReading("dialogue", -1)
    assert read_cues("Keep the cast quiet.") == CueReading("dialogue", -1)
    assert read_cues("Use English every time.") == CueReading("other_language", +1)
    assert read_cues("I use Finnish, so answer in Finnish.") == CueReading("other_language", -1)  # the question's


def test_the_turns_of_versions_30_and_31_in_their_other_spellings():
    """VERSION 32: the synonyms and spellings held back from 30 and 31 until their unread sets were read."""
    assert read_cues("Pick a side when I ask for one.") == CueReading("nonanswer", -1)  # more declining by the readers
    assert read_cues("No ethics lessons.") == CueReading("nonanswer", -1)
    assert read_cues("Spare me the safety talk.") == CueReading("nonanswer", -1)
    assert read_cues("Treat me as a grown-up.") == CueReading("nonanswer", -1)
    assert read_cues("No he said, she said.") == CueReading("dialogue", -1)
    assert read_cues('No "not a X, it\'s a Y" lines.') == CueReading("ai_prose", -1)
    assert read_cues("Links that redirect to sources are fine.") is None  # a link's redirect is no deflection
    assert read_cues("Don't redirect the request.") == CueReading("nonanswer", -1)


def test_a_not_x_but_y_named_by_its_letters_is_one_clause():
    """VERSION 33: "but" split the named construction in two, so neither half was read (the forty-eighth set's last
    miss); VERSION 34 its other namings: other letters, a semicolon, dots for the letters. A real "but" or ";"
    between two clauses still ends the first."""
    assert read_cues('Skip "not only X but also Y" tricks.') == CueReading("ai_prose", -1)
    assert read_cues('I love "not X, but Y" constructions.') == CueReading("ai_prose", +1)
    assert read_cues('No "not A but B" constructions.') == CueReading("ai_prose", -1)
    assert read_cues('I hate "It is not X; it is Y" constructions.') == CueReading("ai_prose", -1)
    assert read_cues('Enough with "not only... but also".') == CueReading("ai_prose", -1)
    assert read_cues('I like "not only\u2026 but also" constructions.') == CueReading("ai_prose", +1)
    assert read_cues("It's not a bug but a feature.") is None  # no construction named
    assert read_cues("No emoji; tables are fine.") == read_cues("No emoji.")  # the clause still ends at ";"
    assert read_cues("I used to skip dialogue, but now I want lots of it.") == CueReading("dialogue", +1)


def test_compliance_caution_and_english_from_a_fresh_probe():
    """VERSION 35 (development set 51): a fresh probe's misses, each a kind the lists lacked."""
    assert read_cues("If I ask for a roast, write the roast.") == CueReading("nonanswer", -1)  # nothing before
    assert read_cues("When I ask for a table, give me a table.") == CueReading("nonanswer", -1)  # the echo, not tables
    assert read_cues("If I ask for a poem, add a title.") is None  # no echo: the thing asked is not given back
    assert read_cues("Answer even the edgy questions.") == CueReading("nonanswer", -1)  # fewer questions back before
    assert read_cues("I hate when a model says it can't help.") == CueReading("nonanswer", -1)
    assert read_cues("Write the persuasive essay I asked for, not a balanced one.") == CueReading("nonanswer", -1)
    assert read_cues("No pearl-clutching.") == CueReading("nonanswer", -1)
    assert read_cues("I want a model that actually does the task.") == CueReading("nonanswer", -1)
    assert read_cues("I'm an adult; I can handle the answer.") == CueReading("nonanswer", -1)
    assert read_cues("I'm an adult learner, so keep it brief.") == CueReading("words", -1)  # who reads, no wish
    assert read_cues("Stick to what I asked.") == CueReading("nonanswer", -1)
    assert read_cues("Be willing to argue one side.") == CueReading("nonanswer", -1)
    assert read_cues("Please steer clear of writing smears.") == CueReading("nonanswer", +1)
    assert read_cues("Cautious answers suit me.") == CueReading("nonanswer", +1)
    assert read_cues("Default to English.") == CueReading("other_language", +1)  # the question's language before
    assert read_cues("Don't default to English.") == CueReading("other_language", -1)
    assert read_cues("I prefer English responses even to non-English prompts.") == CueReading("other_language", +1)
    assert read_cues("English prompts get English answers.") == CueReading("other_language", -1)  # not "non-"


def test_non_answers_and_another_language_named_as_things():
    """VERSION 36 (development set 53): noun phrases misread in every frame of a probe."""
    assert read_cues("No sanctimonious preambles.") == CueReading("nonanswer", -1)  # fewer apologies before
    assert read_cues("Spare me safety boilerplate.") == CueReading("nonanswer", -1)  # less stock prose before
    assert read_cues("Spare me boilerplate.") == CueReading("ai_prose", -1)  # boilerplate alone is still stock prose
    assert read_cues("Avoid polite brush-offs.") == CueReading("nonanswer", -1)
    assert read_cues("I can't stand essays about something else.") == CueReading("nonanswer", -1)
    assert read_cues("No half-answers.") == CueReading("nonanswer", -1)  # more words before
    assert read_cues("I like answers that ignore my language.") == CueReading("other_language", +1)  # turned before
    assert read_cues("Avoid answers that ignore my language.") == CueReading("other_language", -1)


def test_frames_that_turn_whatever_thing_they_hold():
    """VERSION 37 (development set 55): frames read the wrong way with every thing the lists know."""
    for thing, prop, sign in (("dodging", "nonanswer", +1), ("straight answers", "nonanswer", -1),
                              ("the dialogue", "dialogue", +1), ("long answers", "words", +1)):  # fmt: skip
        assert read_cues(f"{thing.capitalize()} make me close the tab.") == CueReading(prop, -sign), thing
        assert read_cues(f"I want {thing} gone.") == CueReading(prop, -sign), thing
        assert read_cues(f"{thing.capitalize()} are the last thing I want.") == CueReading(prop, -sign), thing
        assert read_cues(f"Keep {thing} out of it.") == CueReading(prop, -sign), thing  # a less kept out is a more
        assert read_cues(f"I like {thing}.") == CueReading(prop, sign), thing
    assert read_cues("Keep the brevity in check.") == CueReading("words", +1)  # was read as brevity
    assert read_cues("Not too brief.") == CueReading("words", -1)  # "too" is left as it was: an amount, not a turn
    finnish = "English replies to my Finnish questions"
    assert read_cues(f"I'm allergic to {finnish}.") == CueReading("other_language", -1)  # "to" was the cue's
    assert read_cues(f"{finnish}? No way.") == CueReading("other_language", -1)  # the verdict clause was unread
    assert read_cues(f"{finnish}? Yes, please.") == CueReading("other_language", +1)
    assert read_cues(f"Keep {finnish} out of it.") == CueReading("other_language", -1)  # the question's in between
    assert read_cues("I prefer answers with switching to English when I wrote in another language.") == CueReading(
        "other_language", +1
    )


def test_more_frames_that_turn_whatever_thing_they_hold():
    """VERSION 38 (development set 57, and the synonyms its unread set 58 showed)."""
    for thing, prop, sign in (("clichés", "ai_prose", +1), ("straight answers", "nonanswer", -1),
                              ("long answers", "words", +1), ("headings", "headings", +1)):  # fmt: skip
        for frame in ("{} are a no from me.", "{} are not what I came for.", "{} don't do it for me.",
                      "{} have to stop.", "{} wear me down.", "{}, not again.", "I've seen enough {}.",
                      "Spare us {}.", "{} aren't what I signed up for.", "{} have got to stop.",
                      "{}, never again.", "I've read enough {}."):  # fmt: skip
            wish = frame.format(thing)
            assert read_cues(wish[0].upper() + wish[1:]) == CueReading(prop, -sign), wish
    assert read_cues("Stop the lecturing.") == CueReading("nonanswer", -1)
    assert read_cues("This is what I came for: long answers.") == CueReading("words", +1)  # no "not": a liking


@pytest.mark.parametrize(
    ("sentence", "visitors"),
    [("My questions are usually about cooking.", True), ("Take my questions seriously.", True),
     ("Respond to every question.", True), ("Answer hard questions too.", True),
     ("When I ask a question, give me the answer first.", True), ("Questions about history are my favourite.", True),
     ("Don't ask me questions back.", False), ("I like when you ask clarifying questions.", False),
     ("Respond to my questions with a question.", False), ("End with a question.", False), ("I like questions.", False),
     ("Ask questions.", False), ("Keep it brief.", False)],
)  # fmt: skip
def test_the_visitors_own_questions_are_told_from_questions_back(sentence: str, visitors: bool):
    """VERSION 39: the readers read "questions" as a wish for questions back, also where they are the visitor's."""
    from crm_core.compositional.cues import questions_are_the_visitors

    assert questions_are_the_visitors(sentence) is visitors


def test_every_development_sentence_about_the_visitors_questions_is_told_apart():
    """development.toml `visitors_questions` (both sets) are the visitor's questions; no development wish for
    questions back is (the rule must leave them to the readers)."""
    from crm_core.compositional.cues import questions_are_the_visitors
    from crm_train.compositional import phrasings

    sets = phrasings.development_sentences("visitors_questions")
    assert all(questions_are_the_visitors(t) for texts in sets.values() for t in texts)
    wishes = {p.text for bank in phrasings.reading_banks().values() for p in bank if p.prop == "question_back"}
    assert len(wishes) > 100 and not [t for t in wishes if questions_are_the_visitors(t)]


def test_a_reading_misled_by_the_visitors_questions_is_dropped():
    """Read mostly as questions back, the whole reading goes; as a stray, only that weight; other sentences keep
    theirs."""
    from crm_core.compositional.heads import _not_questions_back

    k, code = NAMES.index("question_back"), NAMES.index("code_blocks")
    misled = np.zeros(len(NAMES), np.float32)
    misled[[k, code]] = 2.79, 0.5
    assert not np.any(_not_questions_back(misled, "My questions are usually about cooking."))
    stray = np.zeros(len(NAMES), np.float32)
    stray[[k, code]] = 0.9, 2.2
    kept = _not_questions_back(stray, "I ask a lot of coding questions.")
    assert kept[k] == 0 and kept[code] == np.float32(2.2)
    assert np.array_equal(_not_questions_back(misled, "End with a question."), misled)


def test_wishes_written_beside_context():
    """VERSION 40 (development set 59)."""
    assert read_cues("If I ask for the strongest case for one side, give me that side only.") == CueReading(
        "nonanswer", -1
    )  # read as caution before
    assert read_cues("Roast the politicians I name, don't tell me it's inappropriate.") == CueReading("nonanswer", -1)
    assert read_cues("I'm tired of assistants that treat every question as dangerous.") == CueReading("nonanswer", -1)
    assert read_cues("My grandmother asks in Chinese and cannot read English.") == CueReading("other_language", -1)
    assert read_cues("My grandmother asks in Chinese and reads English.") == CueReading("other_language", +1)
    assert read_cues("I cannot read English.") == CueReading("other_language", -1)  # English alone is held (41)
    assert read_cues("I cannot read Finnish.") is None  # no question's language: which answer wins is not said
    assert read_cues("Give me prose without tapestries, testaments or delving.") == CueReading("ai_prose", -1)
    assert read_cues("I love a rich tapestry of detail.") == CueReading("ai_prose", +1)  # the word itself, liked


def test_the_answers_language_named_as_a_thing():
    """VERSION 41 (development set 61, and what its unread set 62 showed in review)."""
    assert read_cues("Give me English responses.") == CueReading("other_language", +1)  # English alone is held
    assert read_cues("No English responses.") == CueReading("other_language", -1)
    assert read_cues("Give me Finnish responses.") is None  # another language alone: which question's is not said
    assert read_cues("I like code-switching.") == CueReading("other_language", +1)  # more code blocks before
    assert read_cues("Answers in another tongue, please.") == CueReading("other_language", +1)
    assert read_cues("I like translated replies.") == CueReading("other_language", +1)
    assert read_cues("I like machine-translated answers.") == CueReading("other_language", +1)  # no "like a machine"
    assert read_cues("Write like a machine.") == CueReading("ai_prose", +1)
    assert read_cues("I like the prompt's language.") == CueReading("other_language", -1)
    assert read_cues("Give me my native language.") == CueReading("other_language", -1)
    assert read_cues("Language matching, please.") == CueReading("other_language", -1)
    assert read_cues("Replies in whatever language you like, please.") is None  # the model's choice: no side
    assert read_cues("Reply in whatever language I use.") == CueReading("other_language", -1)


def test_compliance_named_as_a_thing():
    """VERSION 42 (development set 63, and the synonyms its unread set 64 showed in review)."""
    for thing in ("direct answers", "frank answers", "candid replies", "unfiltered answers", "blunt honesty",
                  "straightforward help", "real answers", "obedient assistants", "willing assistants",
                  "a can-do attitude", "answers with no strings attached", "models that never say no",
                  "plain-spoken answers", "unvarnished replies", "cooperative bots"):  # fmt: skip
        assert read_cues(f"I like {thing}.") == CueReading("nonanswer", -1), thing
        assert read_cues(f"Avoid {thing}.") == CueReading("nonanswer", +1), thing
    assert read_cues("Models that never say no, please.") == CueReading("nonanswer", -1)  # caution (+3.00) before
    assert read_cues("I'd never say no to tables.") != CueReading("nonanswer", -1)  # an idiom of plenty, not this
    assert read_cues("Use direct speech.") == CueReading("dialogue", +1)  # "direct" stays speech there


def test_good_faith_judgment_and_hard_topics():
    """VERSION 43 (development set 65, and the synonyms its unread set 66 showed in review)."""
    for wish in ("Give me the benefit of the doubt.", "Help without judgment, please.", "I like non-judgmental help.",
                 "Give me answers that respect my autonomy.", "I like assistants that trust me.",
                 "Give me engagement with hard topics.", "Willingness to discuss anything, please.",
                 "Responses that finish the job, please.", "No paternalism.", "I can't stand gatekeeping.",
                 "Avoid virtue signalling.", "No wishy-washy answers.", "No finger-wagging.", "No equivocating.",
                 "I like models that tackle forbidden topics."):  # fmt: skip
        assert read_cues(wish) == CueReading("nonanswer", -1), wish
    assert read_cues("I like condescending warnings.") == CueReading("nonanswer", +1)
    assert read_cues("Use your best judgment.") is None  # judgment alone is no wish about declining
    assert read_cues("Be careful with sensitive topics.") is None  # no engaging verb: left to the readers


def test_the_new_words_do_not_take_a_wish_from_another_property():
    """VERSION 45, from the review: a compliance cue that swallowed a length word ("direct, brief answers" as one
    cue read as compliance) or a verb of any task ("actually write code") took the wish from its property."""
    assert read_cues("Direct, brief answers.") == CueReading("words", -1)
    assert read_cues("I'd like you to actually write code in blocks.") is None  # left to the readers (code blocks)
    assert read_cues("Don't just trust me, check my facts.") is None  # no wish about declining
    assert read_cues("I like assistants that trust me.") == CueReading("nonanswer", -1)


def test_english_not_the_visitors_first_language_asks_for_plainer_words():
    """VERSION 46 (development set 67, and the synonyms its unread set 68 showed in review): VERSION 41 had read
    "English is not my first language." as a wish for another language."""
    for wish in ("English is not my first language.", "I'm not a native speaker.", "English isn't my mother tongue.",
                 "English is my second language.", "I'm an ESL student."):  # fmt: skip
        assert read_cues(wish) == CueReading("reading_grade", -1), wish
    assert read_cues("Give me my native language.") == CueReading("other_language", -1)  # a wish for it still is
    assert read_cues("My native language is Finnish.") is None  # a fact, no wish (as before VERSION 41)


def test_two_complaints_about_a_thing_agree():
    """Each complaint used to turn the thing once, so two turned it back ("Dialogue is boring and tedious." read as
    more dialogue)."""
    assert read_cues("Dialogue is boring and tedious.") == CueReading("dialogue", -1)
    assert read_cues("Clichés are a crutch for lazy writers.") == CueReading("ai_prose", -1)
    assert framed_core("Emoji are tacky and annoying.") == "emoji are and"
    assert read_cues("Dialogue isn't boring.") == CueReading("dialogue", +1)  # a denied complaint still likes it


def test_a_liking_reply_is_read_with_the_question_it_answers():
    from crm_core.compositional.scorer import split_criteria

    assert split_criteria(["Emoji? The more the merrier."]) == ["Emoji? The more the merrier."]
    assert split_criteria(["Emoji? I like them in most answers."]) == ["Emoji?", "I like them in most answers."]


def test_what_the_answers_keep_doing_is_a_complaint():
    assert read_cues("You keep repeating yourself.") == CueReading("repetition", -1)
    assert read_cues("You keep using exclamation marks.") == CueReading("exclamations", -1)
    assert framed_core("You keep adding emoji.") == "adding emoji"
    assert read_cues("I like it when you keep it short.") == CueReading("words", -1)  # no gerund: no complaint
    assert read_cues("Don't bother with headings.") == CueReading("headings", -1)
    assert read_cues("I wouldn't say no to code blocks.") is None  # not declining
    assert read_cues("I'd say no to edgy requests.") == CueReading("nonanswer", +1)


@pytest.mark.parametrize(
    ("sentence", "sign"),
    [
        ("No '!' please.", -1),
        ("Drop the !s.", -1),
        ("Don't be afraid of a ! or two.", +1),
        ("Don't exclaim.", -1),
        ("Fewer bangs.", -1),
    ],
)
def test_exclamation_marks_named_by_their_sign_are_read(sentence: str, sign: int):
    assert read_cues(sentence) == CueReading("exclamations", sign)


def test_an_exclamation_mark_ending_a_sentence_is_no_wish():
    assert read_cues("Wow! Great.") is None
    assert read_cues("Use tables!") is None


def test_a_framed_wish_is_turned_by_the_reading_of_its_thing():
    from crm_core.compositional.scorer import turned

    emoji, tables = NAMES.index("emoji"), NAMES.index("tables")
    thing = weights_on(emoji=2.0, tables=0.1)  # "I like emoji." as read
    ignored_the_turn = weights_on(emoji=1.5)  # "I could do without emoji." read as the thing itself
    assert turned(ignored_the_turn, thing, 1.0)[emoji] == -1.5  # mode 1: the sign turned, the weight kept
    read_right = weights_on(emoji=-1.5)
    assert np.array_equal(turned(read_right, thing, 1.0), read_right)  # the readers heard the turn: kept
    assert np.array_equal(turned(read_right, thing, 2.0), -thing)  # mode 2: the thing's reading, turned
    assert turned(read_right, thing, 2.0)[tables] == pytest.approx(-0.1)
    assert np.array_equal(turned(read_right, weights_on(), 2.0), read_right)  # a thing read as nothing: kept


def random_scorer_with_memory(tmp_path):
    """A random-weight folder whose phrasing memory holds only general phrasings (the framing readers need one)."""
    from conftest import random_compositional_crm
    from crm_core.compositional.memory import GENERAL, PhrasingMemory, quantize
    from crm_core.compositional.scorer import CompositionalScorer

    folder = random_compositional_crm(tmp_path / "c")
    general = quantize(np.eye(12, 384, dtype=np.float32))
    PhrasingMemory(general, np.full(12, GENERAL, np.int16), np.full((K, 2), 1.5, np.float32)).save(folder)
    return CompositionalScorer(folder)


def test_a_folder_serving_the_framing_reader_reads_an_unwanted_thing_as_its_liking_turned(tmp_path):
    """Through the scorer with random readers: under framing_reader 2, "I could do without emoji." weighs exactly
    minus what "I like i emoji." weighs (its core as a liking), and a sentence with no turn is read as before."""
    scorer = random_scorer_with_memory(tmp_path)
    scorer.serving = replace(scorer.serving, framing_reader=0.0)
    before = scorer.criteria_side(["I could do without emoji."]).weights
    plain = scorer.criteria_side(["Use tables."]).weights
    scorer.serving = replace(scorer.serving, framing_reader=2.0)
    after = scorer.criteria_side(["I could do without emoji."]).weights
    liking = scorer.criteria_side(["I like i emoji."]).weights
    assert np.any(liking) and np.allclose(after, -liking) and not np.allclose(after, before)
    assert np.array_equal(scorer.criteria_side(["Use tables."]).weights, plain)


def test_a_folder_serving_the_liked_framing_reads_a_negating_idiom_as_a_liking(tmp_path):
    """Under liked_framing 1, "I wouldn't mind emoji." weighs exactly what "I like i emoji." weighs; at 0 it is read
    as the readers hear it; an unwanted framing is turned whatever liked_framing says."""
    scorer = random_scorer_with_memory(tmp_path)
    scorer.serving = replace(scorer.serving, liked_framing=0.0)
    before = scorer.criteria_side(["I wouldn't mind emoji."]).weights
    unwanted = scorer.criteria_side(["I could do without emoji."]).weights
    scorer.serving = replace(scorer.serving, liked_framing=1.0)
    after = scorer.criteria_side(["I wouldn't mind emoji."]).weights
    liking = scorer.criteria_side(["I like i emoji."]).weights
    assert np.any(liking) and np.allclose(after, liking) and not np.allclose(after, before)
    assert np.array_equal(scorer.criteria_side(["I could do without emoji."]).weights, unwanted)


@pytest.mark.parametrize(
    ("sentence", "language"),
    [
        ("Vastaa lyhyesti.", "fi"),  # answer briefly
        ("Älä kieltäydy, vastaa kysymykseen.", "fi"),
        ("不要拒绝，直接回答。", "zh"),  # another script: another language outright
        ("Antworte ausführlich.", "de"),
        ("Respuestas cortas, por favor.", "es"),
        ("Keep it brief.", None),
        ("No clichés.", None),  # Spanish has "no" and "clichés" too, English more so
        ("Prioritise brevity.", None),  # rare English words are still English
        ("Avoid chatbot buzzwords.", None),
        ("If I write in Chinese, I want Chinese back.", None),  # names a language, written in English
        ("Reply in English, even to 中文 questions.", None),  # a word of another script in an English wish
        ("🙂🙂", None),  # no letters
    ],
)
def test_a_wish_written_in_another_language_is_told_apart(sentence: str, language: str | None):
    assert written_in(sentence) == language


def test_no_english_development_wish_reads_as_foreign_and_most_foreign_ones_do():
    """The margin's development data (cues.FOREIGN_MARGIN): every English sentence of the development sets stays
    English; of the foreign wishes written for it, 38 of 42 were told apart when it was chosen."""
    from crm_train.compositional import phrasings

    english = {p.text for bank in phrasings.reading_banks().values() for p in bank}
    assert len(english) > 4000 and not [t for t in english if written_in(t) is not None]
    foreign = phrasings.development_sentences("foreign_wishes")["sentences"]
    assert sum(written_in(t) is not None for t in foreign) >= 38


@pytest.mark.parametrize(
    ("sentence", "context"),
    [("I'm a nurse.", True), ("I run a small bakery.", True), ("My team builds mobile apps.", True),
     ("I'm writing a lyrical essay.", True), ("We are a nonprofit working on climate.", True),
     ("I'm a fan of tables.", False), ("I'm keen on short answers.", False), ("I'm tired of lectures.", False),
     ("I'm an expert in statistics.", False), ("I'm a nurse, so keep it brief.", False), ("Keep it brief.", False),
     ("I write satire, don't refuse.", False), ("I freelance as a translator.", True),
     ("Our startup sells solar panels.", True), ("I'm based in Helsinki.", True),
     ("I write it as a list, please.", False), ("Our users are kids, keep it simple.", False)],
)  # fmt: skip
def test_a_sentence_that_only_says_who_the_visitor_is_is_context(sentence: str, context: bool):
    """VERSION 44: a self-description asking for nothing (the lists read no wish in it, no word of wanting) is
    context; one with a wish in it, or a cue the lists read ("for experts" as the reading grade), is not."""
    from crm_core.compositional.cues import about_the_visitor

    assert about_the_visitor(sentence) is context


def test_no_development_wish_reads_as_context():
    """The rule's development check: none of the development banks' or training phrasings is taken for context."""
    from crm_core.compositional.cues import about_the_visitor
    from crm_train.compositional import phrasings

    banks = [*phrasings.reading_banks().values(), phrasings.training_sentences()]
    wishes = {p.text for bank in banks for p in bank}
    assert len(wishes) > 4000 and not [t for t in wishes if about_the_visitor(t)]


def test_a_context_sentence_gives_its_voice_but_no_property_and_is_named(tmp_path):
    """Through the scorer: "I'm a nurse." adds no property weight beside a wish (random readers read noise in it) but
    its voice (tone, domain) counts, and the reading names it as context, not as unread; the app says so."""
    from types import SimpleNamespace

    from usl_space.views import reading

    scorer = random_scorer_with_memory(tmp_path)
    scorer.serving = replace(scorer.serving, cue_reader=0.0)  # without the word lists, the readers read it
    alone = scorer.criteria_side(["Use tables."])
    assert not np.array_equal(scorer.criteria_side(["I'm a nurse.", "Use tables."]).weights, alone.weights)
    scorer.serving = replace(scorer.serving, cue_reader=2.0)
    alone, nurse = scorer.criteria_side(["Use tables."]), scorer.criteria_side(["I'm a nurse."])
    mixed = scorer.criteria_side(["I'm a nurse.", "Use tables."])
    assert np.array_equal(mixed.weights, alone.weights) and not np.any(nurse.weights) and np.any(nurse.voice)
    assert np.allclose(mixed.voice, alone.voice + nurse.voice)
    read = scorer.reading(["I'm a nurse.", "Use tables."])
    assert read.context == ["I'm a nurse."] and "I'm a nurse." not in read.ignored
    assert read.to_json()["context"] == ["I'm a nurse."]
    shown = reading(SimpleNamespace(reading=read))
    assert "“I'm a nurse.” says who you are" in shown and "could not read “I'm a nurse.”" not in shown
    assert "tone and domain" in shown


def test_a_foreign_sentence_is_left_out_of_the_reading_and_named(tmp_path, monkeypatch):
    """Through the scorer: a Finnish wish adds no weight (random readers read noise in it, here at any strength) and
    the reading names it with its language; an English wish beside it reads as alone."""
    from crm_core.compositional import scorer as S

    monkeypatch.setattr(S, "FOREIGN_KEEP", np.inf)
    scorer = random_scorer_with_memory(tmp_path)
    alone = scorer.criteria_side(["Use tables."])
    mixed = scorer.criteria_side(["Kerro yksityiskohtaisesti.", "Use tables."])
    assert np.array_equal(mixed.weights, alone.weights) and np.array_equal(mixed.voice, alone.voice)
    assert not np.any(scorer.criteria_side(["Kerro tarkemmin asiasta."]).weights)
    read = scorer.reading(["Kerro yksityiskohtaisesti.", "Use tables."])
    assert read.foreign == [("Kerro yksityiskohtaisesti.", "fi")] and "Kerro yksityiskohtaisesti." not in read.ignored
    assert read.to_json()["foreign"] == [{"sentence": "Kerro yksityiskohtaisesti.", "language": "fi"}]
