"""Composed phrasings: the training nouns under many more ways of saying "I want" and "I don't want".

Read on its validation and development phrasings, the reader's errors are mostly about the frame, not the
property: one unseen frame turns nearly every property it is used with the wrong way round ("... irk me" on the
second development bank), whatever the noun. A reader learns what liking and disliking sound like from the frames
it sees, and the banks in `phrasings` have about forty each way. Here frames are composed from parts (a verb of
liking or disliking, an imperative, a predicate after the noun, a comparative; an optional opener and closer),
which gives thousands of frames over the same training nouns, so that an unseen verb of disliking sits among many
seen ones. The parts were written for training, apart from the validation and development banks; a test checks
that they hold none of those banks' frames.

Tried, not shipped (docs/experiments.md "Composed frames"): 30,000 of them beside the wide bank, three readers,
were worse on both development banks, and "... irk me" still read the wrong way round: the frames a reader
misreads are often words MiniLM does not know, which no number of other frames teaches it.
"""

from __future__ import annotations

import random

from crm_train.compositional.phrasings import TRAIN_NOUNS, WIDE_NOUNS, Phrasing, _joined, typo

# "I ... {n}." (a verb or phrase of the speaker's own liking or disliking)
LIKE_STANCES = ["I like", "I love", "I enjoy", "I adore", "I appreciate", "I value", "I prefer", "I'm fond of",
                "I'm partial to", "I'm into", "I favour", "I relish", "I'm drawn to", "I'm happy with", "I'd love",
                "I'd appreciate", "I crave", "I want", "I need", "I'm looking for", "I'm hoping for", "I'm after",
                "I'm big on", "I really dig", "I gravitate toward", "I look for", "I'm pleased by", "I'm grateful for",
                "I benefit from", "I learn best with", "I can't get enough of", "I get a lot out of",
                "I'm most comfortable with", "I expect", "I insist on", "I count on", "I'm in favour of",
                "I'd pick", "I'd rather have", "I'm thrilled by", "I always ask for", "I'm delighted by",
                "I treasure", "I'm a big believer in", "I respond best to"]  # fmt: skip
DISLIKE_STANCES = ["I dislike", "I hate", "I detest", "I loathe", "I despise", "I resent", "I can't bear",
                   "I'm against", "I object to", "I'm allergic to", "I'm sick of", "I'm fed up with", "I'm bored by",
                   "I'm annoyed by", "I'm bothered by", "I'm not into", "I don't care for", "I have no use for",
                   "I don't need", "I'd hate to get", "I'm wary of", "I'm frustrated by", "I'm over",
                   "I've had enough of", "I get nothing from", "I skip past", "I roll my eyes at",
                   "I'm uncomfortable with", "I find no value in", "I'm done with", "I reject", "I never want",
                   "I'm exasperated by", "I'm weary of", "I shudder at", "I scroll past",
                   "I'm not interested in", "I grumble at", "I'm unimpressed by"]  # fmt: skip
# "... {n}." said to the assistant
LIKE_IMPERATIVES = ["Use", "Add", "Provide", "Give me", "Show me", "Offer", "Work in", "Put in", "Throw in",
                    "Incorporate", "Feature", "Lean on", "Make use of", "Opt for", "Embrace", "Favour", "Emphasise",
                    "Stick with", "Pack in", "Weave in", "Sprinkle in", "Supply", "Keep using", "Don't forget",
                    "Never skip", "Be generous with", "Make sure to use", "Remember to add", "Always add", "Rely on",
                    "Double down on", "Start using", "Mix in"]  # fmt: skip
DISLIKE_IMPERATIVES = ["Omit", "Remove", "Drop", "Ditch", "Lose", "Eliminate", "Get rid of", "Strip out", "Forget",
                       "Forgo", "Ban", "Don't add", "Don't include", "Don't bother with", "Never use", "Minimise",
                       "Limit", "Cut down on", "Reduce", "Go easy on", "Tone down", "Do away with", "Dispense with",
                       "Scrap", "Exclude", "Enough with", "No more", "Lay off", "Ease up on", "Resist adding",
                       "Never add", "Don't overdo", "Please don't use", "Stop adding", "Quit using",
                       "Don't waste space on", "Steer away from", "Stop with", "Say no to",
                       "Don't start using"]  # fmt: skip
# "{N} ...": what the noun does for the speaker
LIKE_PREDICATES = ["are great", "help me a lot", "are a big plus", "are a bonus", "are what I look for", "are a must",
                   "are essential for me", "are nice to have", "win me over", "make my day", "delight me",
                   "work well for me", "make things clearer for me", "are appreciated", "make me happy",
                   "are always good", "are my favourite", "improve answers", "keep me reading", "are perfect for me",
                   "earn extra points", "are a good idea", "are exactly what I need", "get a thumbs up from me",
                   "are very useful", "make an answer shine", "are worth including"]  # fmt: skip
DISLIKE_PREDICATES = ["annoy me", "bother me", "irritate me", "frustrate me", "bore me", "distract me",
                      "grate on me", "get on my nerves", "drive me mad", "are unnecessary", "are pointless",
                      "are a waste of space", "are clutter", "are distracting", "are the worst", "ruin answers for me",
                      "make answers worse", "are a pet peeve of mine", "are a dealbreaker", "are useless to me",
                      "make me stop reading", "look unprofessional", "are overkill", "are tiresome",
                      "are a no from me", "should go", "have to go", "are not needed", "are not my thing",
                      "do nothing for me", "make me cringe", "waste my time", "are noise", "get a thumbs down from me",
                      "spoil an answer"]  # fmt: skip
# "... {n}": how much of it
LIKE_AMOUNTS = ["More", "Extra", "Plenty of", "A lot of", "Lots more", "Heaps of", "Loads of"]
DISLIKE_AMOUNTS = ["Less", "Fewer", "Too many", "Way too much", "Not so many", "Zero", "Hardly any"]  # fmt: skip
OPENERS = ["", "", "", "Honestly, ", "Personally, ", "For me, ", "In general, ", "As a rule, ", "Just so you know, ",
           "One thing: ", "Note: ", "Quick request: ", "FYI, ", "Generally speaking, "]  # fmt: skip
LIKE_CLOSERS = ["", "", "", " please", ", thanks", " if you can", " where it fits", " in every answer",
                " whenever it makes sense", ", always"]  # fmt: skip
DISLIKE_CLOSERS = ["", "", "", " please", ", thanks", " at all costs", " from now on",
                   " whenever you can", ", seriously"]  # fmt: skip

FRAMES = {  # kind -> (frames asking for the noun, frames asking against it)
    "stance": (LIKE_STANCES, DISLIKE_STANCES),
    "imperative": (LIKE_IMPERATIVES, DISLIKE_IMPERATIVES),
    "predicate": (LIKE_PREDICATES, DISLIKE_PREDICATES),
    "amount": (LIKE_AMOUNTS, DISLIKE_AMOUNTS),
}


def compose(kind: str, frame: str, noun: str, opener: str, closer: str) -> str:
    """One sentence: the frame around the noun, with an opener before it and a closer before the full stop."""
    core = f"{noun} {frame}" if kind == "predicate" else f"{frame} {noun}"
    if opener and not core.startswith(("I ", "I'")):
        core = core[:1].lower() + core[1:]
    elif not opener:
        core = core[:1].upper() + core[1:]
    return f"{opener}{core}{closer}."


def composed_bank(size: int, seed: int = 0, typos_per_phrasing: float = 0.3) -> list[Phrasing]:
    """`size` distinct composed phrasings over the training nouns (TRAIN_NOUNS and WIDE_NOUNS), drawn evenly over
    properties and frame kinds; liking a noun or disliking its antonym asks for more, as in phrasings._bank. A share
    of them get a typo (phrasings.typo) in place of the clean text."""
    rng = random.Random(seed)
    nouns = _joined(TRAIN_NOUNS, WIDE_NOUNS)
    props = sorted(nouns)
    kinds = sorted(FRAMES)
    out: dict[str, Phrasing] = {}
    tries = 0
    while len(out) < size and tries < size * 20:
        tries += 1
        prop = rng.choice(props)
        names, antonyms = nouns[prop]
        antonym = bool(antonyms) and rng.random() < len(antonyms) / (len(names) + len(antonyms))
        noun = rng.choice(antonyms if antonym else names)
        kind = rng.choice(kinds)
        liking = rng.random() < 0.5
        frame = rng.choice(FRAMES[kind][0 if liking else 1])
        closers = LIKE_CLOSERS if liking else DISLIKE_CLOSERS
        text = compose(kind, frame, noun, rng.choice(OPENERS), rng.choice(closers))
        if rng.random() < typos_per_phrasing:
            text = typo(text, rng)
        sign = 1 if liking != antonym else -1
        out.setdefault(text.lower(), Phrasing(text, prop, sign))
    return list(out.values())
