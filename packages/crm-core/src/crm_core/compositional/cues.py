"""Reading a wish by its words: which property a sentence names and whether it wants more or less of it.

The learned readers read a sentence by its embedding, and an embedding hears the nouns better than the words that
turn them round: "Not too wordy." read as nothing, "Spare no detail." as a wish for brevity, "Lots of dialogue,
please." as quotes (the nearest older property). This reader is a short, documented word list instead:

- a cue is a phrase that names a property and which way ("dialogue": more of it; "brief": less of `words`);
- a negator earlier in the same clause turns it round ("no", "don't", "avoid", "skip", "leave out", "rather
  not"), as does a complaint after it ("... put me off", "... annoys me"); two negators cancel ("Don't skip the
  details."); words inside a cue do not count ("a language I didn't write in" is one cue); "leave X out" asks
  for less, as "too" does;
- idioms are read as meant: "spare no detail", "don't hold back on", "can't get enough of" ask for more; "too
  long", "not too long" and "nothing too long" all ask for less;
- what a wish prefers stands before "over", "than" or "prefer X to", what it would rather not have after them
  ("Plain prose over AI polish.", "I'd rather have English than my own language."); a clause asking "why" complains
  of what it names ("Why so much dialogue?"), "why not" asks for it;
- a verdict standing alone after its thing turns it ("Emoji? Hard pass.", "Dialogue: a pet peeve of mine."), as
  does a command about it ("I can spot machine prose a mile away; avoid it."), a "not anymore", or a turn that takes
  it up by a pronoun, in its clause or the next ("Stock phrases, I can do without them.", "Quoted speech: keep it to
  a minimum.");
- a thing named first and then said to go turns it: "X should be avoided", "X should not be used", "X don't
  belong", "X has no place here", "X aren't needed", "X look amateurish", "X, none please";
- a thing asked for in small amounts is less of it: "X sparingly", "X in moderation", "X should be rare", "keep the X
  few", "one X is plenty", "X, but not too many", "go light on X", "seldom X" ("Use jargon sparingly.");
- "only ... if / when" asks for less of its thing ("Only use dialogue if the scene needs it."; what the condition
  names is no wish), and what one "used
  to" want is no longer wanted ("I used to skip dialogue, but now I want lots of it.");
- repeating single words ("a word used twice", "don't duplicate words") is word variety, turned, not repetition;
- an exclamation mark named by its sign is read as its name ("No '!' please.", "Drop the !s.");
- idioms of plenty ask for more ("Feel free to use emoji.", "Err on the side of more links.", "Pile on the
  tables.", "Go heavy on statistics.", "Use code blocks freely."), as the readers do not hear them;
- a thing sent away or let off asks for less ("Emoji belong elsewhere.", "Lay off the clichés.", "Leave dialogue
  aside.", "Clichés aren't my style."), "throw in" for more ("Throw in a table."), and a clause "the more the
  merrier" likes the thing before it;
- a thing worn out or doubted asks for less ("Emoji are so last year.", "I've had my fill of tables.", "Emoji?
  Meh.", "Do we really need quotations?"), and more idioms of plenty for more ("Bump up the bold text.", "Keep the
  statistics coming.", "Statistics never go amiss.");
- a complaint denied is an idiom of liking ("Emoji never bother me.", "Links are never a bother.", "I have no
  problem with bold.", "I wouldn't say no to code blocks."), and what the answers keep doing is a complaint ("You
  keep repeating yourself.", "You keep adding emoji.");
- a wish that names languages is read by which it gives the question and which the answer: an answer in another
  language than the question's, or one held whatever the question's is, is more of `other_language` ("English
  replies to my Finnish messages", "Answer in English, whichever language I ask in."); the question's given back
  is less ("If I message you in Finnish, I expect Finnish back.");
- a sentence whose cues disagree (two properties, or both ways) gets no reading: the learned readers keep it;
- a sentence about the visitor's own questions ("My questions are about cooking.") asks for no questions back,
  which the readers hear in the word "questions" alone (`questions_are_the_visitors`; the heads drop that reading).
- a sentence that only says who the visitor is ("I'm a nurse.", "My team builds mobile apps.") asks for nothing:
  `about_the_visitor`, and the scorer reads its voice alone (CompositionalScorer.context).

The lists know a few wishes in Finnish and Chinese, the speechmap bench's other languages: the answer's language
("Vastaa suomeksi.", "请用中文回答。") and declining ("Älä kieltäydy.", "不要拒绝"); Chinese clauses end at its own
marks. The readers read English; a wish written in another language reads as noise ("Kerro
yksityiskohtaisesti.", tell it in detail, as question_back -0.43). `written_in` tells such a wish apart, so the
scorer can leave it out and say so (CompositionalScorer.left_out).

It covers the properties whose wishes the readers misread most (development banks, docs/experiments.md): length
(`words`), the six of 2025, exclamation marks, headings, a closing summary and the reading grade, and nothing else;
its negation ("dont", "stay away from", "hold the", "dial back", "... make answers worse") turns every property's
framing. The heads use it where the readers read nothing, are unsure, or read a property outside the cue's own
family (CompositionalHeads.criteria_side; crm.json `cue_reader`).

The same turns serve every property once more (`framed_core`): a one-clause wish framed as unwanted gives the thing it
names without its framing, which the scorer reads as a liking and turns round (crm.json `framing_reader`); one that
asks for its thing through an idiom with a negator in it ("I wouldn't mind tables.") or through two turns that cancel
("Don't skip the caveats.", "Answers without emoji feel cold.", "I hate answers without tables.") gives the thing
without them, read as a liking as it stands (`liked_core`, crm.json `liked_framing`).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

VERSION = "47"  # bump when a list changes: boards cached under the old lists are then not served

# (property, +1: the phrase names more of it / -1: names less of it, pattern); patterns are matched on lower case
_CUES: list[tuple[str, int, str]] = [
    # length in words
    ("words", +1, r"\bdetailed\b|\bdetails\b|\b(?:more|lots of|plenty of|every|full|great|in|extra|fine|much|the|"
                  r"spare no|some|enough) detail\b|\bthorough(?:ly|ness)?\b|\bin[- ]depth\b|\belaborat\w*"
                  r"|\bcomprehensive\w*"
                  r"|\bexhaustive\w*|\blengthy\b|\blong[- ]winded\b|\bwordy\b|\bwordiness\b|\bverbos\w*|\brambl\w*"
                  r"|\bpadding\b|\bfluff\w*|\bwaffl\w*|\bfiller\b|\bwalls? of text\b|\bdeep[- ]dives?\b"
                  r"|(?<!talking )(?<!speaking )(?<!talk )(?<!speak )\bat length\b"
                  r"|\bgo(?:es)? on and on\b|\bdrag\w* (?:it |things |this )?(?:on|out)\b|\bflesh\w* (?:it )?out\b"
                  r"|\bspell\w* (?:it|everything|things) out\b|\bexpand\w* on\b"
                  r"|(?<!as )\blong(?:er)?\b(?![- ](?:sentences?|paragraphs?|words?|lists?|titles?|stor(?:y|ies)|"
                  r"exchanges?|time|ago|run|term|as|descriptions?|passages?|scenes?|stretches|exposition)\b)"),
    ("words", -1, r"\bcut\w* (?:it|things|this|them) short\b|\bbrevity\b|\bconcise\w*"
                  r"|\bsuccinct\w*|\bterse\w*|\bto the point\b"
                  r"|\btl;?dr\b(?! (?:at|to) the (?:end|bottom))|\bbite[- ]sized\b|\bin a nutshell\b"
                  r"|(?<!for a )(?<!for an )\b(?:brief(?:ly|er)?|short(?:er)?)\b(?![- ](?:sentences?|paragraphs?|"
                  r"words?|lists?|titles?|stor(?:y|ies)|summar(?:y|ies)|recaps?|conclusions?|wrap-?ups?|"
                  r"overviews?)\b)"),
    # the six of 2025
    ("dialogue", +1, r"\bdialog(?:ue)?s?\b|\bconversations?\b|\bbanter\b|\bback[- ]and[- ]forth\b"
                     r"|\b(?:direct|quoted) speech\b|\bspoken (?:lines?|exchanges?|words)\b"
                     r"|\btalking\b(?! (?:down|about|to me)\b)"
                     r"|\b(?:characters?|people|persons?|they|them|anyone|anybody|someone|somebody|everyone|"
                     r"everybody)(?: \w+){0,2} (?:talk|speak|chat|convers|argu|discuss)\w*"
                     r"|\b(?:lively|witty|snappy|sharp|spoken|verbal|heated)? ?exchanges? between\b"
                     r"|\b(?:lively|witty|snappy|sharp|spoken|verbal) exchanges?\b|\bchatter\b|\bchit-?chat\b"
                     r"|\brepartee\b|\bscreenplay\b|\btalky\b|\b(?:he|she)[- ]said,?[- ](?:he|she)[- ]said\b"
                     r"|\bscripted (?:exchanges?|conversations?|lines|scenes?)\b"
                     r"|\b(?:say|said|says|speak|speaks|spoke|talk\w*)(?: \w+)? (?:aloud|out loud)\b"
                     r"|\bgiv\w* (?:the |each |every |all )?(?:characters?|them|people)(?: \w+){0,2} lines\b"
                     r"|\bhash\w* (?:it|things) out\b|\b(?:as|like|into|make it|in the form of) an? (?:script|"
                     r"screenplay|play|interview|q&a|conversation|debate)\b"
                     r"|(?<!hate )(?<!hate-)(?<!free )(?<!free-)(?<!freedom of )(?<!parts of )(?<!part of )"
                     r"(?<!figures of )(?<!figure of )\bspeech\b(?! (?:recognition|to text|synthesis|therapy))"
                     r"|\bspeaking (?:parts?|roles?|lines?)\b|\bcharacters?(?:'s|s')? (?:own )?voices?\b"
                     r"|\bin (?:their|his|her) own words\b"
                     r"|\bquot\w* (?:the |their |his |her )?(?:characters?|them|speakers?)\b"
                     r"|\bquotes? (?:from|by) (?:the )?characters?\b|\b(?:their|his|her) words in quot\w*"
                     r"|\btrad\w* (?:lines|words|barbs|insults|quips|jabs)\b|\bexchang\w* (?:of )?(?:lines|barbs|"
                     r"insults|quips|jabs)\b"
                     r"|\b(?:(?:phone )?call|argument|debate|discussion|talk|chat)s? between\b|\bbicker\w*"
                     r"|\bsquabbl\w*|\bmonologu\w*|\bact\w* (?:it|this|the scene|them|things) out\b"
                     r"|\bwhat (?:the )?(?:characters?|people|they|he|she) (?:say|said|says)\b"),
    ("dialogue", -1, r"\bnarrat(?:e|es|ed|ing|ion)\b|\b(?:nobody|no one) (?:\w+ ){0,2}(?:talk|speak|chat)\w*"
                     r"|\bnarrator(?:'s)? voice\b|\b(?:summari[sz]|report|recount|relat|describ)\w* what (?:the )?"
                     r"(?:characters?|people|they|he|she) (?:say|said|says|told|tell\w*|talk\w*|discuss\w*|argu\w*|"
                     r"chat\w*|spoke|speak\w*)\b"
                     r"|\b(?:summari[sz]|report|recount|describ)\w* (?:the |their |any |a |each )?(?:conversations?|"
                     r"dialog(?:ue)?s?|talk|exchanges?|chat)\b|\b(?:indirect|reported) speech\b"
                     r"|\b(?:characters?|people|they|them|everyone|everybody|cast)(?: \w+){0,2} (?:quiet|silent|mute)\b"
                     r"|\bparaphras\w* (?:\w+ ){0,3}(?:instead of|rather than) quot\w*"
                     r"(?: (?:them|him|her|the characters?))?"),
    ("repetition", +1, r"(?<!non-)(?<!non)\brepeat\w*(?! words)|(?<!non-)(?<!non)\brepetit\w*|\bredundan\w*"
                       r"|\bover and over\b|\bgo(?:es|ing)? (?:a?round )?in circles\b"
                       r"|\brehash\w*|\breiterat\w*|\brestat\w*|\bsame (?:point|thing|idea)s?\b"
                       r"|\bsay\w* (?:it|things|everything|anything|something) (?:twice|again|more than once)\b"
                       r"|\b(?:echo|mention|say|state|stress)\w* (?:\w+ ){0,3}(?:several|many|multiple) times\b"
                       r"|\bmore than once\b|\btwice\b|\bagain and again\b|\btime and (?:time )?again\b"
                       r"|\brefrains?\b(?! from)|\bbroken[- ]records?\b|\bduplicat\w*|\bbelabou?r\w*|\bharp\w* on\b"
                       r"|\bparrot\w*|\bcopy[- ]?past\w*|\b(?:hammer|driv|drove|drive)\w* (?:\w+ ){0,3}home\b"
                       r"|\b(?:com|go|circl|loop|doubl|cycl)\w* back (?:to|over)\b|\bloop\w* (?:over|around)\b"
                       r"|\b(?:bring|brought|rais|mention|say|said|give|state|tell)\w* (?:\w+ ){0,4}(?:up )?again\b"),
    ("repetition", -1, r"\bnon-?repetitive\b"
                       r"|\b(?:say|make|state|mention)\w* (?:each|every) (?:thing|point) (?:just |only )?once\b"
                       r"|\bonce is enough\b|\b(?:each|every) (?:sentence|point|paragraph|line|part|section) "
                       r"(?:\w+ ){0,2}(?:say|add|bring|offer|contribut|giv)\w* something new\b"),
    ("lexical_variety", +1, r"\b(?:rich\w*|broad\w*|wide\w*|divers\w*|varied|various|extensive|expansive|colou?rful|"
                            r"large\w*|big\w*|fancy|sophisticated|unusual|expressive|eloquent|impressive|"
                            r"interesting|highbrow|elevated|literary)(?:[- ]\w+)?,? (?:vocabular\w*|word choices?|"
                            r"lexicon|diction|wording|phrasing|word palette|range of (?:words|vocabulary))\b"
                            r"|\b(?:rich|varied|diverse|expressive|eloquent|colou?rful|sophisticated)(?:[- ]\w+)?,? "
                            r"(?:language|words)\b|\b(?:lots of|many|plenty of) different words\b"
                            r"|\b(?:big|fancy|long|obscure|rare|ten-dollar|highfalutin|sat|gre|"
                            r"sophisticated|unusual)(?:,? \w+)? (?:words|terms|synonyms|vocabulary|terminology)\b"
                            r"|\bvar(?:y|ied|ying)\w*(?: \w+)? (?:words?|wording|word choices?|phrasing|"
                            r"vocabular\w*|language|diction)\b|\bword variety\b|\blexical (?:variety|diversity|"
                            r"richness)\b|\bmix\w* up (?:your |the )?(?:words?|wording|word choices?|phrasing)\b"
                            r"|\b(?:broaden|widen|expand|diversif|enrich)\w* (?:your |the |my )?(?:vocabular\w*|"
                            r"words?|wording|word choices?|lexicon)\b|\bsynonyms?\b|\bthesaur\w*"
                            r"|\bshow\w* off (?:your |a |the |an |some )?(?:\w+ )?vocabular\w*"
                            r"|\bwords (?:i|you|we|people|readers)(?:'d| would| will| might)? (?:have|need|had) to "
                            r"look up\b"
                            r"|\bvocabular\w* (?:\w+ )?(?:rich|varied|broad|wide|diverse|large|big)\b"
                            r"|\bword choices? (?:\w+ ){0,2}(?:diverse|varied|rich|broad|wide)\b"),
    ("lexical_variety", -1, r"\b(?:small\w*|narrow\w*|limited|basic|repetitive|poor|monoton\w*|bland|dull)(?: \w+)? "
                            r"(?:vocabular\w*|word choices?|lexicon|diction|wording|language|phrasing)\b"
                            r"|\bsame (?:few |plain |old |handful of )?(?:words?|terms|adjectives|vocabulary)"
                            r"(?: (?:twice|again and again|again|over and over))?\b"
                            r"|\b(?:reus|recycl)\w* (?:the same )?(?:words?|vocabulary|terms|adjectives)\b"
                            r"|\brepeat\w* (?:a |the same )?words?\b"
                            r"|\bwords (?:that )?(?:everyone|anyone|everybody|a child|kids|children|beginners?|most "
                            r"people|people) (?:\w+ )?(?:knows?|understands?|can understand|would know|already know)\b"
                            r"|\b(?:vocabular\w*|wording|words|language) (?:\w+ )?"
                            r"(?:simple|small|basic|limited|plain|narrow)\b"
                            r"|\b(?:simple|simpler|plain|plainer|everyday|common|basic|easy|short)(?:,? \w+)? "
                            r"(?:words|wording|language|vocabular\w*|terms)\b|\bplain english\b"),
    ("ai_prose", +1, r"\b(?:ai|a\.i\.|chatbot|chat ?gpt|gpt|llm|machine|robot|bot|assistant)[- ]?(?:sounding|like|"
                     r"generated|written|made|ish|isms?|style[ds]?|flavou?red|speak|prose|writing|tics?|slop|"
                     r"clich\w*|buzzwords?|phrases?|phrasing|wording|voice|tone|polish|flourish\w*|grandeur|feel|"
                     r"vocabulary|fluff|filler)\b"
                     r"|\b(?:like|as if|as though|style of) (?:an? |the )?(?:\w+ )?"
                     r"(?:ai|chatbot|machine|robot|bot|chat ?gpt|gpt|llm|language model)\b(?! learning|[- ]translat)"
                     r"|\b(?:by|from) (?:an? |the )?(?:ai|chatbot|machine|robot|bot|chat ?gpt|gpt|llm)\b(?! learning)"
                     r"|\b(?:corporate|marketing|business|linkedin|sales)[- ](?:speak|jargon|language|copy|tone)\b"
                     r"|\bclich\w*|\bstock (?:phrases?|words?|expressions?|prose|language|lines?|metaphors?|images?|"
                     r"imagery|phrasing|idioms?)\b|\bpurple prose\b"
                     r"|\bslop\b|\bboilerplate\b|\bbuzzwords?\b|\bdelv(?:e|es|ed|ing)\b|\btapestr(?:y|ies)\b|\btestaments?\b"
                     r"|\bformulaic\b|\brobotic\b"
                     r"|\bflowery\b|\bflourishes\b|\bpress[- ]releases?\b"
                     r"|\bnot (?:just |only |merely )?(?:an? )?[xa][,;]? (?:but |it'?s |it is )(?:also |rather )?"
                     r"(?:an? )?[yb]\b"
                     r"|\b(?:canned|generic|overwrought|flowery|hackneyed|trite|tired|stale|worn[- ]out|well[- ]worn|"
                     r"overused|overworked|recycled|cookie[- ]cutter|mass[- ]produced|predictable|mechanical|"
                     r"synthetic|templated|template[- ](?:like|style))(?:,? (?:and )?[\w-]+)? (?:prose|phrases?|"
                     r"phrasing|language|writing|wording|expressions?|metaphors?|idioms?|similes?|imagery|"
                     r"turns? of phrase)\b"
                     r"|\bplatitud\w*|\bhackneyed\b|\btrite\b|\bcookie[- ]cutter\b|\btemplate[- ](?:like|style)\b"
                     r"|\b(?:reads?|sounds?|feels?) like (?:an? )?(?:template|form letter)\b"
                     r"|\b(?:feels?|sounds?|reads?|seems?) (?:\w+ )?(?:synthetic|mechanical|artificial|"
                     r"mass[- ]produced|churned[- ]out|canned|templated)\b"
                     r"|\bsounds? (?:like )?(?:an? )?(?:ai|chatbot|machine|robot|bot|llm)\b|\bgenerated\b"
                     r"|\b(?:machine|bot|robot|chatbot|llm)[- ](?:prose|writing|wording|phrases?|phrasing|style)\b"
                     r"|\bgo(?:es|ing)? full (?:ai|chatbot|chat ?gpt|gpt|llm|robot)\b|\bem[- ]?dash\w*"
                     r"|\b(?:grand|sweeping|grandiose|lofty)(?:,? \w+)? (?:phrases?|phrasing|language|statements?)\b"
                     r"|\bfast[- ]paced world\b|\blet's dive\b|\bdive right in\b|\bever[- ]evolving\b"
                     r"|\bscream\w* (?:ai|chatbot|chat ?gpt|gpt|llm|machine|robot|bot)\b"
                     r"|\b(?:an? |the )?(?:ai|bot|chatbot|robot|machine|llm|chat ?gpt|gpt|language model) (?:wrote|"
                     r"writes|generated)\b"),
    ("ai_prose", -1, r"\b(?:human|natural|authentic|genuine|real)[- ]?(?:sounding|voice|prose|writing|tone|language|"
                     r"feel|written)\b|\b(?:like|as) (?:a |an )?(?:human(?: being)?|person|real person|writer|"
                     r"novelist|people)\b|\bsounds? human\b"
                     r"|\bthe way (?:a |an )?(?:real )?(?:human|person|writer|author|novelist)\b"
                     r"|\b(?:fresh|original) (?:wording|prose|language|phrasing)\b"
                     r"|\b(?:came|come|comes|written|made) (?:from|by) (?:a |an )?(?:real )?(?:human(?: being)?|"
                     r"person|writer)\b"
                     r"|\b(?:like|as if|as though) (?:a |an |my |your |some |the )?(?:\w+ )?"
                     r"(?!(?:ai|a\.i\.|chatbot|machine|robot|bot|chat ?gpt|gpt|llm|model|computer|assistant)\b)\w+ "
                     r"(?:wrote|had written|could have written|would write|might write) (?:it|this|that)\b"),
    ("nonanswer", +1, r"\brefus\w*|\bdeclin\w*|\bturn\w* (?:it |them |that |those )?down\b|\bdeflect\w*|\bdodg\w*"
                      r"|\bevasi\w*|\bevad\w*"
                      r"|\bsidestep\w*|\blectur\w*|\bmorali[sz]\w*|\bpreach\w*|\bsermon\w*|\bnon-?answers?\b"
                      r"|\bcop[- ]?outs?\b|\bwater\w*(?:[- ]| (?:\w+ ){1,2}?)down\b|\bboth[- ]sides\b"
                      r"|\bchang\w* the (?:subject|topic)\b"
                      r"|\b(?:won't|will not) (?:write|do|help|produce|create|generate|answer)\b"
                      r"|\bexcuses\b|(?<!wouldn't )(?<!would not )(?<!never )\bsay\w* no\b|\bpush\w* ?back\b"
                      r"|\bturn\w* away\b|\bhold\w* the line\b"
                      r"|\bdraw\w* the line\b|\bdraw\w* (?:a )?lines? (?:at|on|somewhere)\b"
                      r"|\breject\w* (?:\w+ )?requests?\b|\bwalk\w* away from\b"
                      r"|\bhand-?wringing\b|\bsecond-?guess\w*"
                      r"|\b(?:hedg|wriggl|wiggl|weasel|squirm|talk)\w* (?:your|its|their|my|the) way out\b"
                      r"|\bsubstitut\w* (?:a |an )?(?:safer|different|easier|other|milder)\b"
                      r"|\bsafer (?:task|version|answer|topic|request)\b|\bsaniti[sz]\w*"
                      r"|\bsoften\w* (?:what i|my request|the request|the task|the prompt)\b"
                      r"|\b(?:right|best|correct) answer is (?:a )?no\b"
                      r"|\bstonewall\w*|\bskirt\w* (?:a?round|the|my|your)\b"
                      r"|\bfob\w* (?:\w+ )?off(?: with (?:a |an |the )?\w+)?\b"
                      r"|\bbrush\w* (?:\w+ )?off\b|\b(?:brush|fob)-offs?\b|\bsanctimon\w*|\bsafety boilerplate\b"
                      r"|\bhalf[- ]?answer\w*|\b(?:about|on) (?:something else|(?:a )?(?:different|another|other) "
                      r"(?:topic|question|subject|thing)s?)\b|\bbeat\w* (?:a?round|about) the bush\b|\bpussyfoot\w*"
                      r"|\brun-?around\b|\btap-?danc\w*|\bdilut\w*|\bdanc\w* (?:a?round|about)\b|\btip-?toe\w*"
                      r"|\b(?:weasel|wriggl|wiggl|squirm)\w* out\b|\bstall(?:s|ed|ing)?\b|\bskat\w* (?:a?round|over)\b"
                      r"|\bsafety (?:\w+ ){0,2}?(?:ahead of|over|before|above) (?:\w+ing )?"
                      r"(?:what|helpful\w*|complian\w*|obedien\w*|answer\w*|the (?:user|request|task|prompt))"
                      r"|\b(?:not|never) answering\b"
                      r"|\bduck(?:s|ed|ing)? (?:out of\b|(?:the |my |your |a |hard |difficult |tough |cruel |awkward |"
                      r"nasty )+(?:questions?|requests?|tasks?|issues?|topics?|prompts?)\b)"
                      r"|\bwhy (?:you|it) (?:can't|cannot|can not|won't|will not|shouldn't)\b"
                      r"|\blessons? (?:on|in|about) (?:ethics|morals?|morality)\b|\b(?:ethics|morality) lessons?\b"
                      r"|\bsafety (?:speech|talk|lecture|sermon)\w*"
                      r"|\bredirect\w* (?:me|us|it|(?:the|my) (?:request|question|prompt|task))\b"
                      r"|\bsqueamish\b|\bchicken\w* out\b"
                      r"|\bmoral(?:ity|i[sz]ing)? lessons?\b|\b(?:a|the) moral\b(?! (?:dilemma|question|issue|choice|"
                      r"philosoph))"
                      r"|\b(?:turn|make)\w* (?:my |the |this )?(?:request|question|prompt|task) into a (?:lesson|"
                      r"lecture|sermon)\b"
                      r"|\b(?:refus\w*|declin\w*|say\w* no|won't|will not|never|don't|do not|not|refrain from|"
                      r"stay away from|steer\w* clear of)(?: to)? (?:\w+ ){0,2}(?:writ|produc|creat|generat|mak|draft|"
                      r"compos)\w* "
                      r"(?:\w+ ){0,2}(?:hate speech|propaganda|smears?|slurs?|hateful|attacks? on|insults?|degrading|"
                      r"defamat\w*)\b"
                      r"|\b(?:careful|responsible|cautious)(?:,? \w+)? (?:models?|assistants?|ais?|chatbots?)\b"
                      r"|\bcautious (?:answers?|replies|responses?)\b"
                      r"|\bpearl[- ]?clutch\w*|\bclutch\w* (?:\w+ )?pearls\b"
                      r"|\b(?:says?|saying|tells? (?:me|you|us)) (?:that )?(?:it|they|he|she) (?:can't|cannot|can not|"
                      r"won't|will not|is unable|are unable)\b"
                      r"|\bkieltäyt\w*|\bkieltäydy\w*|\bsaarna\w*|\bluennoi\w*|\bmoralisoi\w*|拒绝|说教|回避"
                      r"|\bput\w* (?:your|its|their|my) foot down\b|\bplay\w* it safe\b|\bnann(?:y|ies|ying)\b"
                      r"|\bjudg(?:e?mental\w*|y)\b|\bpaternalis\w*|\bcondescen\w*|\bscold\w*|\bvirtue[- ]signal\w*"
                      r"|\bgrandstand\w*|\bwishy[- ]washy\b|\bfence[- ]sitt\w*|\bgatekeep\w*|\bnon-?committal\b"
                      r"|\bfinger[- ]wagg\w*|\bprig\w*|\bmealy[- ]mouthed\b|\bequivocat\w*"
                      r"|\btell\w* (?:me|us) (?:that )?(?:it's|it is|that's|that is|this is|it would be) (?:\w+ )?"
                      r"(?:inappropriate|wrong|offensive|harmful|unethical|dangerous|problematic|insensitive)\b"
                      r"|\btreat\w* (?:every|each|my|all|any|the|our)(?: \w+)? (?:questions?|requests?|prompts?|users?)"
                      r" as (?:\w+ )?(?:dangerous|suspicious|harmful|a threat|threats|risky|suspect)\b"
                      r"|\bcensor(?:s|ed|ing|ship)?\b|\bavoid\w* (?:the|my|your) questions?\b|\bavoid\w* answering\b"
                      r"|\bi (?:can't|cannot|can not|am unable to|'m unable to) (?:help|assist)(?: you)? with "
                      r"(?:that|this)\b"),
    ("nonanswer", -1, r"\bcompl(?:y|ies|ied|iance|iant)\b|\bdo (?:exactly |just )?what i (?:ask|asked|say|said)\b"
                      r"|\b(?:just|simply) (?:answer|do (?:it|the task)|write it)\b"
                      r"|\b(?:do|write|give me|answer|deliver|stick\w* to|keep\w* to) (?:exactly |just )?what i "
                      r"(?:ask\w*|say|said|want\w*|request\w*)\b"
                      r"|\b(?:if|when|whenever) i (?:ask|request)\w* (?:you )?(?:for )?(?:an? |the |some )?"
                      r"(?P<thing>\w+)\b[^.;]{0,30}?\b(?:write|give|do|make|send|want)\w* (?:me |you )?"
                      r"(?:the |an? |that |some )?(?P=thing)\b"
                      r"|\bactually (?:do|does|doing|did) (?:the|my|what|it)\b"
                      r"|\bactually (?:answer|answers|answering|answered)\b"
                      r"|\b(?:i'm|i am|we're|we are) (?:all )?(?:an? )?(?:adults?|grown-?ups?)\b"
                      r"(?=\W*$|\W*(?:here|and|so)\b|[.;,!])"
                      r"|\bi can (?:handle|take) (?:it|the (?:answer|truth))\b"
                      r"|\banswer the (?:actual |real )?(?:question|prompt|request)(?: i asked)?\b"
                      r"|\banswer what i (?:ask|asked)\b|\bat face value\b|\bsay\w* yes\b"
                      r"|\bvastaa kysymykseen\b|直接回答"
                      r"|\b(?:älä|älkää) (?:kieltäydy|kiellä|saarnaa|luennoi|moralisoi|väistä)\w*"
                      r"|(?:不要|别|不用|勿)(?:拒绝|说教|回避)"
                      r"|\bstraight answers?\b|\bplay\w* along\b"
                      r"|\b(?:give|write|argue|present|make)\w*(?: me)? (?:only |just )?(?:that|this|my|one) side\b"
                      r"|\b(?:direct|frank|candid|unfiltered|blunt|straightforward|plain[- ]spoken|unvarnished|"
                      r"unhedged) (?:answers?|replies|responses?|output|help)\b"
                      r"|\b(?:blunt|brutal|radical) honesty\b"
                      r"|\b(?:real|actual|proper) answers?\b|\bno strings attached\b|\bcan-?do\b"
                      r"|\b(?:without|no|non)[- ]?judg(?:e?ment\w*|ing)\b|\bbenefit of the doubt\b|\bgood faith\b"
                      r"|\b(?:that|who|which) trusts? me\b|\btrust\w* (?:the user|users|my judg(?:e?ment))\b"
                      r"|\b(?:my|the user's|users') autonomy\b"
                      r"|\b(?:engag|discuss|address|cover|explor|tackl)\w* (?:with )?(?:the request|my request|"
                      r"anything|(?:\w+ )?(?:hard|difficult|tough|touchy|sensitive|controversial|dark|taboo|forbidden|"
                      r"uncomfortable) "
                      r"(?:topics?|subjects?|themes?|questions?|requests?))\b|\bopen discussion of\b|\btaboo topics?\b"
                      r"|\bfinish\w* the (?:job|task)\b|\bstay\w* on task\b|\btake my side\b|\bassum\w* i mean well\b"
                      r"|\bsee\w* (?:the|my|this) (?:task|job|request) through\b"
                      r"|\b(?:obedient|willing|cooperative|accommodating)\w* (?:assistants?|models?|bots?|ais?|"
                      r"chatbots?|helpers?)\b"
                      r"|\b(?:never|won't|will not|doesn't|does not) say\w* no\b(?! to\b)"
                      r"|\b(?:take|took|taking|pick\w*|choos\w*|chose|argu\w*|defend\w*) (?:a|one|just one|a single) "
                      r"side\b"
                      r"|\bfollow\w* through\b"
                      r"|\bhonou?r\w* (?:my|the|every|each|this) (?:request|prompt|task)s?\b"
                      r"|\b(?:like|as) an? (?:adult|grown-?up)\b"
                      r"|\banswer\w* (?:it |me |this |that |the question |my question )?straight\b(?! away| off)"
                      r"|\bdo what i (?:tell|told)\b|\b(?:exactly )?as (?:requested|instructed|"
                      r"written|i (?:asked|requested|said|wrote))\b"
                      r"|\bget\w* on with (?:it|the job|the task|the work|things)\b"
                      r"|\b(?:do|write|give me) the (?:[\w-]+ ){0,2}?(?:thing|piece|text|essay|story|task) i "
                      r"(?:asked|requested)"
                      r"(?: for)?\b"
                      r"|\bto the letter\b|\bfollow\w* (?:my |the |your )?(?:instructions|prompts?|requests?)\b"
                      r"|\b(?:answer|respond|reply|do|write|handle|take on|fulfil+)\w*(?: to)? (?:every|each|any|all)"
                      r"(?: \w+)? (?:of my )?"
                      r"(?:requests?|questions?|prompts?|tasks?)\b"
                      r"|\beven the (?:\w+ )?(?:touchy|controversial|edgy|sensitive|offensive|dark|uncomfortable|"
                      r"awkward|spicy) (?:ones|questions|topics|subjects|requests|prompts|themes)\b"
                      r"|\bhowever (?:\w+ )?(?:touchy|controversial|edgy|sensitive|offensive|dark|"
                      r"uncomfortable|awkward|spicy)\b"
                      r"|\bfulfil+\w*|\buncensored\b|\beven if (?:it's|it is|the (?:topic|subject|request) is) "
                      r"(?:\w+ )?(?:touchy|controversial|edgy|sensitive|offensive|dark|uncomfortable)\b"),
    ("other_language", +1, r"\b(?:different|other|another|foreign) (?:language|tongue)\b|\blanguage other than\b"
                           r"|\bcode[- ]?switch\w*|\bmismatch\w* languages?\b|\blanguages? mismatch\w*"
                           r"|\bmix\w* (?:of )?languages\b|\blanguage[- ]mix\w*"
                           r"|\btranslat\w* (?:replies|answers|responses|output)\b"
                           r"|\bswitch\w* (?:to )?(?:english|languages?)\b|\b(?:in|into) english\b"
                           r"|\benglanniksi\b|\benglannin kielellä\b|用英文|用英语|英文回答|英语回答"
                           r"|\blanguage (?:that )?i (?:didn't|did not|don't|do not) (?:use|write|speak|ask)\w*"
                           r"|\bignor\w* (?:my|the question's|the prompt's|the) language\b"),
    # four older properties the readers read worst by the validation bank's counts (docs/experiments.md, VERSION 18
    # and 19)
    # a tone in words counts as exclamation marks, but an eager opener is `greeting` and "I get excited when" a liking
    ("exclamations", +1, r"\bexclamat\w*|\bexclaim\w*|\bbangs\b|\bshout(?:s|ed|ing|y)?\b(?!-? ?outs?\b)"
                         r"|\bexcitable punctuation\b"
                         r"|\byell(?:s|ed|ing|y)?\b|\bover-?excit\w*"
                         r"|\bscream(?:s|ed|ing|y)?\b(?! (?:of )?(?:ai|a\.i\.|chatbot|machine|robot|bot|gpt|llm)\b)"
                         r"|(?<!open )(?<!opens )(?<!get )(?<!gets )(?<!getting )(?<!got )(?<!i'm )(?<!i am )"
                         r"\b(?:upbeat|bubbly|peppy|perky|energetic|high[- ]energy|enthusias\w*|excited|excitable|"
                         r"excitement|thrilled|exuberan\w*|hype[dy]?|gush\w*|breathless|zest\w*)\b"
                         r"(?!(?:,? \w+)? (?:open\w*|intro\w*|greet\w*|start\w*|first (?:line|words|sentence)|')"
                         r"| (?:when|whenever|to see)\b)"),
    ("exclamations", -1, r"\b(?:calm(?:er)?|measured|quiet(?:er)?|even|level)(?:,? (?:and )?\w+)? (?:tone|voice)\b"
                         r"|\b(?:calm|restrained|understated|low[- ]key|subdued|sober|even[- ]keeled|level[- ]headed|"
                         r"unexcited|unemotional|deadpan|muted|matter[- ]of[- ]fact)\b|\bcomposed\b(?! of)"
                         r"|\breserved\b(?! for)"),
    ("reading_grade", +1, r"\b(?:graduate|grad|phd|doctoral|post-?graduate|college|university|professional|expert|"
                          r"specialist|academic|advanced|technical|scholarly)[- ](?:school[- ])?(?:level|audiences?|"
                          r"readers?|readership|vocabulary|terminology|jargon|language|prose|register|terms|writing)\b"
                          r"|\b(?:for|at) (?:an? )?(?:experts?|specialists?|professionals?|academics?|scholars?)\b"
                          r"|\bjargon\b|\bi(?:'m| am) (?:an? )?(?:expert|specialist|professional|academic)\b"),
    ("reading_grade", -1, r"\b(?:four|five|six|seven|eight|nine|ten|eleven|twelve|[4-9]|1[0-2])[- ]year[- ]olds?\b"
                          r"|\b(?:is not|isn't|not) my (?:first|native|mother) (?:language|tongue)\b"
                          r"|\bnot a native (?:speaker|reader)\b|\bnon-?native (?:speakers?|readers?)\b"
                          r"|\benglish is my second language\b|\besl\b|\benglish learners?\b"
                          r"|\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|1st|2nd|3rd|[4-8]th)[- ]"
                          r"grade(?:rs?)?\b"
                          r"|\bdumb\w* (?:it |things |this |everything )?down\b"
                          r"|\bfor (?:a |an )?(?:complete |total |absolute )?(?:beginners?|novices?|newcomers?|"
                          r"layperson|laypeople|lay readers?|non-?experts?|kids?|children|child|outsiders?)\b"
                          r"|\breading (?:level|grade)s? (?:\w+ )?(?:low|simple|basic)\b"
                          r"|\blow reading (?:level|grade)\b"
                          r"|\beasy (?:to read|reading)\b|\beli5\b|\blike i(?:'m| am) (?:five|\d+|a (?:child|kid))\b"
                          r"|\b(?:middle|elementary|primary|grade)[- ]school\b|\blay(?:man|person)'?s terms\b"),
    ("headings", +1, r"(?<!table )(?<!column )(?<!http )(?<!request )(?<!page )\b(?:sub-?)?head(?:ing|er)s?\b"
                     r"(?! (?:files?|rows?|cells?)\b)|\b(?:titled|headed) sections?\b|\bsection (?:titles?|names?)\b"
                     r"|\bheadlines? (?:dividing|over|above|for)\b|\bsubheads?\b"
                     r"|\btitles? (?:for|on|above|over) (?:each|every) (?:section|part)\b"
                     r"|\b(?:each|every) (?:section|part) (?:a|its own) (?:title|heading|header)\b"),
    ("headings", -1, r"\b(?:one|a single) (?:\w+ )?(?:continuous|unbroken|flowing|solid) (?:block|piece|stretch) of "
                     r"(?:text|prose)\b"),
    ("summary", +1, r"\btakeaways\b"
                    r"|(?<!not a )(?<!just a )(?<!only a )(?<!than a )(?<!\bin )\bsummar(?:y|ies)\b|'in summary'"
                    r"|\bin conclusion\b|\b(?:a|an|short|brief|quick|closing|final|concluding) conclusion\b"
                    r"|\bconcluding\b|\brecap\w*|\bwrap[- ]?ups?\b"
                    r"|\bwrap\w* (?:it |things |everything |this )?up\b|\bsum\w* (?:it |things |everything |this )?up\b"
                    r"|\bsummari[sz]\w* (?:\w+ ){0,3}(?:at the end|to finish|to close|at the bottom)\b"
                    r"|\btl;?dr (?:at|to) the (?:end|bottom)\b|\b(?:finish|end|clos|wrap)\w*(?: up)? with (?:a |an )?"
                    r"(?:\w+ )?tl;?dr\b"),
    ("other_language", -1, r"\b(?:same|my|your) language\b|\bmy own language\b|\blanguage (?:as|of) (?:my|the) "
                           r"(?:question|prompt|request|message)\b|\bmatch\w* my language\b|\blanguage i (?:wrote|"
                           r"write|used|use|asked|speak|typed|start\w*|beg[ai]n\w*|open\w*)\b"
                           r"|\bin whatever language\b(?! (?:you|the model|it)\b)|\breply in kind\b"
                           r"|\blanguage (?:\w+ ){0,2}match\w* (?:mine|my (?:own|question|message|prompt|request))\b"
                           r"|\blanguage (?:my|the) (?:question|prompt|message|request)s? "
                           r"(?:uses?|used|is in|was in)\b"
                           r"|\bin my (?:own )?(?:mother tongue|native (?:language|tongue)|first language)\b"
                           r"|(?<!\bis )(?<!\bnot )(?<!n't )\bmy (?:own )?(?:mother tongue|native (?:language|tongue)|"
                           r"first language)\b(?! is\b)"
                           r"|\bthe (?:question|prompt|message|request)'s language\b|\blanguage[- ]matching\b"
                           r"|\bmatching languages?\b"
                           r"|\bsamalla kielellä\b|\bsuomeksi\b|\bkysymy\w* kielellä\b|用中文|中文回答|以中文"
                           r"|(?:同样|相同|同一种?|提问|问题|我)的语言"),
]  # fmt: skip
CUES = [(prop, sign, re.compile(pattern)) for prop, sign, pattern in _CUES]

# a cue the heads must leave to the readers: the sentence is about something else that shares its words
NOT_OURS = re.compile(r"\bdisclaimer|\bas an ai\b|\bbeing an ai\b|\byou(?:'re| are) an ai\b|\bsentences?\b"
                      r"|(?<!wrap-up )(?<!wrapup )(?<!concluding )(?<!closing )(?<!summary )(?<!conclusion' )"
                      r"\bparagraphs?\b|\bbullet|\bconversational\b")  # fmt: skip
NEGATOR = re.compile(
    r"\b(?!no-(?:frills|nonsense)\b)(?:no|not|never|nothing|none|nobody|no one|without|avoid\w*|skip\w*|stop\w*|"
    r"quit\w*|cut\w*|drop\w*|less|fewer|unmentioned|"
    r"(?<!do )(?<!did )(?<!does )you(?: just)? keep(?: on)?(?= \w+ing\b|\s*$)|"  # "You keep adding emoji."
    r"lay\w* off|knock\w* (?:it )?off(?: with)?|cool it (?:with|on)|aside(?! from)|"  # "Lay off the clichés."
    r"had (?:my|our) fill of|tone it down with|trim\w*|spare the|"  # "I've had my fill of tables."
    r"(?:do|does) (?:we|i|you|anyone|it) (?:really |honestly |even |actually )?need|"  # "Do we really need X?"
    r"^\s*(?:please )?kill(?= (?:the|all|any|those|these|your|off)\b)|"  # "Kill the purple prose."
    r"(?<!they're )(?<!they are )(?<!it's )(?<!it is )missing(?! the point)|"  # not "I miss X when they're missing"
    r"(?<!for )(?<!of )(?<!spread )(?<!spreading )(?<!promote )(?<!promoting )hat(?:e|es|ed|ing)(?! speech| content)|"
    r"dislike\w*|detest\w*|can't stand|cannot stand|rather not|leave\w* out|spare (?:me|us)|free of|"
    r"(?:seen|read|heard) enough(?: of)?|minus|ditch\w*|lose the|"
    r"enough with|(?<!not )(?<!never )enough of|^\s*enough(?=\s*$)|away with|instead of|rather than|don't|do not|dont|"
    r"stay\w* away from|^\s*hold the|"
    r"doesn't|does not|"
    r"shouldn't|should not|won't|isn't|"
    r"aren't|refrain from|steer clear of|limit\w*|minimi[sz]\w*|reduce\w*|tone down|"
    r"(?:go )?easy (?:on|with)(?! the eyes?)|"
    r"dial\w* (?:it )?(?:back|down)(?: on)?|rein\w* in|ease (?:off|up) on|scale\w* back(?: on)?|ban|no more|zero|"
    r"against|tired of|sick of|allergic(?: to)?|anything but|without any|hold\w* back on|hold\w* off on|minimal|"
    r"minimum|hardly any|sparing\w*|(?:go\w*|be|keep it) light on|rarely|seldom|restrict\w*|at most|"
    r"only the (?:occasional|odd)|only a (?:little|few|bit of|touch of)|"
    r"barely any|(?<!a )little|(?:could|can) do without|had enough of|had it with|(?:i'm|i am) (?:so )?over|"
    r"count me out|"
    r"pass on|done with|fed up with|forget\w*|omit\w*|exclud\w*|eliminat\w*|remov\w*|get rid of|do away with|"
    r"nix\w*|scrap\w*|ax(?:e|es|ed|ing)?|bin the|toss(?:es|ed|ing)?(?! in\b)|strip(?:s|ped|ping)?(?![- ]down)|"
    r"delet\w*|purg\w*|banish\w*|nuke|trash(?:es|ed|ing)?|"
    r"can't bear|cannot bear|can't take|cannot take|can't handle|loath\w*|despis\w*|abhor\w*|unhappy|"
    r"the last thing (?:i|we) (?:want|need)|who (?:needs|wants|asked for)|put off by|turned off by|"
    r"couldn't care less (?:about|for)|(?:rather|prefer)(?: it if)? you (?:didn't|did not|wouldn't|would not|never))\b"
)  # fmt: skip
COMPLAINT = re.compile(
    r"\b(?:put\w* me off|turn\w* me off|(?<!n't )(?<!not )(?:annoy\w*|bother\w*|irritat\w*)|"
    r"(?:is|are) (?:a )?no[- ]go|(?:is|are) a (?:hard |big |firm )?no(?: (?:from|for) (?:me|us))?(?=\s*$)|"
    r"(?:is|are)(?: not|n't) what (?:i|we)(?:'m|'re| am| are| was| were)? (?:came|come|signed up|looking|here|asked)"
    r"(?: here)? for|(?:don't|doesn't|do not|does not) do (?:it|anything|much|a thing) for (?:me|us)|"
    r"(?:has|have)(?: got)? to stop|(?:must|needs? to|should|got to) stop|wear\w* (?:me|us) down|(?:is|are) not "
    r"(?:welcome|wanted|needed|ok|okay|for me)|drive\w* me (?:crazy|nuts|mad)|get\w* old|(?:is|are) (?:tiresome|"
    r"grating|unbearable|a turn-off|the worst|overrated)|make\w* me (?:want to )?(?:cringe|wince|stop reading|close "
    r"(?:the |my )?(?:tab|window|app|chat|laptop)|leave|quit|give up|scream|groan)|irk\w*|"
    r"(?:is|are) the last thing (?:i|we) (?:want|need)\w*|gone(?! (?:are|is)\b)|(?:can|has to|"
    r"have to|must|needs? to) go|wear\w* thin|ruin\w*|no thanks|not my thing|deal[- ]?breakers?|useless|"
    r"pointless|worthless|bor(?:e|es|ed|ing)|pet peeves?|get\w* on my nerves|grate\w* on me|make\w* me roll my eyes|"
    r"(?:(?:is|are) a )?hard pass|(?:is|are) a pass|unnecessary|needless|superfluous|overkill|excessive|tedious|"
    r"cheesy|tacky|gimmicky|corny|cring\w*|childish|unprofessional|off-?putting|distract\w*|clutter\w*|"
    r"amateurish|juvenile|immature|cheapen\w*|(?:a bit|a little|way|far) much|"
    r"(?:isn't|aren't|is not|are not|not) my (?:style|taste|jam|scene)|(?:a )?no-no|"
    r"belong\w* (?:elsewhere|somewhere else)|(?:is|are) so last (?:year|decade|season|century)|"
    r"(?:is|are|feels?|looks?|seems?) (?:so |very |a bit |kind of )?(?:outdated|dated|passé|old-fashioned)|"
    r"(?:is|are) a crutch|wear\w* me out|add\w* nothing|(?:should be|is|are) (?:the|an) exception|"
    r"(?<!n't )(?<!not )(?:feel|feels|felt|look|looks|seem|seems|sound|sounds|read|reads|is|are|comes? across as)"
    r" (?:so |too |very |a bit |kind of |rather )?(?:cold|flat|thin|bland|lifeless|sterile|rude|vague|hollow|"
    r"unfinished)|hard to (?:scan|follow|verify|trust|skim|navigate|parse|check|digest|take in)|"
    r"(?:doesn't|does not|don't|do not) interest me|(?:isn't|aren't|is not|are not|not) my cup of tea|"
    r"slow\w* (?:\w+ ){0,2}?down|drag(?:s|ged|ging)?(?!\s+(?:and|&) drop)|kill(?:s|ed|ing)?(?! it\b)|"
    r"(?<!n't )(?<!not )(?<!never )(?:feel|feels|felt|sound|sounds|read|reads|look|looks|seem|seems|comes? across as)"
    r" (?:so |too |very |a bit |kind of )?(?:forced|fake|artificial|stilted|wooden|clunky|unnatural|contrived)|"
    r"(?<!n't )(?<!not )lazy|(?:is|are) never (?:ok|okay|acceptable|fine|alright|good|the answer|an option)|"
    r"(?:break\w*(?: up)?|interrupt\w*|disrupt\w*) (?:the|my) (?:flow|rhythm|reading|immersion|momentum|pace)|"
    r"chop\w* (?:\w+ ){0,3}?up|pad(?:s|ded|ding)? (?:\w+ ){0,2}?out|(?:is|are) (?:just )?padding|fill\w* space|"
    r"a sign of (?:bad|lazy|poor|weak|sloppy) writing|"
    r"get\w* in the way|waste of (?:space|time|words|my time)|waste\w* (?:my|your|the reader's|our) time|"
    r"make\w* (?:answers?|it|them|things|everything|responses?|replies) worse|"
    r"make\w* (?:it|them|answers?|everything) (?:feel|look|read|sound) (?:fake|stiff|cluttered|like a (?:report|manual|"
    r"textbook|brochure|form))|noise|unwanted|unwelcome|unhelpful|irrelevant|"
    r"overdone|overused|obnoxious|gratuitous|over the top|drive\w* me up the wall|bug\w* me|suck|"
    r"(?:don't|do not|doesn't|does not|never) help\w*|(?:is|are) too much|frustrat\w*|a shame|"
    r"(?:is|are|gets?|getting|feels?|reads?|looks?|becomes?) worse(?! without)|miss\w* the point|no good|"
    r"(?:is|are) not(?=\s*$))\b"
)  # fmt: skip
# what is said of a thing named first that sends it away ("Exclamation marks should be avoided.", "Dialogue has no
# place here.", "Headings aren't needed.", "Exclamation marks, none please."): a turn after it, as a complaint is
# ("are not welcome / wanted / needed" are complaints already)
SAID_OF_IT = re.compile(
    r"\b(?:should|must|need to|needs to|ought to|has to|have to|is to|are to)(?: be| get)? (?:avoided|skipped|dropped|"
    r"cut|left out|omitted|removed|banned|excluded|kept out|eliminated|minimi[sz]ed|reduced|limited)\b"
    r"|\b(?:should|must|need|can|could|would|will|do|does|did)(?:n't| not| never) (?:be )?(?:used|included|added|"
    r"appear\w*|show up|feature\w*|be there|exist|happen|come up|turn up)\b"
    r"|\b(?:don't|do not|doesn't|does not) belong\b|\b(?:has|have) no (?:place|business|room)\b"
    r"|\b(?:isn't|aren't) (?:necessary|needed|required|wanted|welcome|helpful|useful|called for|appropriate)\b"
    r"|\b(?:is|are) not (?:necessary|required|helpful|useful|called for|appropriate)\b"
    r"|^\s*(?:[\w'-]+\s*)?[,:-]\s*(?:none|zero)\b"
)  # fmt: skip
# a complaint about the whole clause at its end ("I can tell when a bot wrote it, and I hate it."): a turn after the
# cue only (before it, "hate" is a negator already)
TRAILING = re.compile(r"\band (?:i|we) (?:hate|dislike|detest|loathe|can't stand|cannot stand) (?:it|that|them)\b")
# phrases with a negator that ask for more of what follows
MORE_IDIOM = re.compile(
    r"\bspare no\b|\bdon't hold back(?: on)?\b|\bdo not hold back(?: on)?\b"
    r"|\b(?:can't|cannot|can never|could never|never) get enough(?: of)?\b"
    r"|\bno shortage of\b|\bdon't skimp(?: on)?\b|\bdo not skimp(?: on)?\b|\bdon't mind\b"
    r"|\bdo not mind\b|\bnothing wrong with\b|\bnever too\b|\bcan't be too\b|\bcannot be too\b"
    r"|\bno such thing as too\b|\bnot afraid of\b|\bnothing (?:beats|like|better than|tops)\b"
    r"|\bcan't go wrong with\b|\bno substitute for\b|\bcan't beat\b"
    r"|\bwouldn't mind\b|\bwould not mind\b|\b(?:never|doesn't|does not|don't|do not|won't|can't|"
    r"cannot) hurt\b|\bno harm in\b|\bwhy not\b|\b(?:never|not) (?:nearly )?enough\b"
    r"|\bcan(?:'t|not| never) have (?:too much|too many|enough)\b|\btoo (?:few|little)\b"
    r"|\b(?:can't|cannot|couldn't|could not|wouldn't|would not) (?:do|live|be) without\b"
    r"|\b(?:don't|do not|never) forget\b|\b(?:don't|do not) be (?:shy|afraid|stingy|sparing)\b"
    r"|\b(?:empty|incomplete|lacking|bare|hollow|poorer|worse|flat|dull|lost|nothing) "
    r"without\b"
    # a complaint denied ("Bold text doesn't bother me.", "Links are never a bother.", "I have no problem with
    # bold."), "complete without", "wouldn't say no to"
    r"|\b(?:doesn't|does not|don't|do not|didn't|did not|won't|will not|never|not)"
    r"(?: (?:really|ever|even|much|usually|generally|particularly))? "
    r"(?:(?:bother|annoy|irritat|irk|bug|bor)\w*(?= (?:me|us|by)\b|\s*$)|put (?:me|us) off|"
    r"turn (?:me|us) off|get\w* on (?:my|our) nerves|get\w* in (?:my|the|our) way)"
    r"|\b(?:is|are|'s|'re|was|were)(?: never| not|n't| no)(?: really| ever| even)? (?:a |an )?"
    r"(?:problem|bother|issue|nuisance)\b|\bnever an? (?:problem|bother|issue|nuisance)\b"
    r"|\b(?:have|has|had|got) no (?:problem|issue|objection)s? with\b"
    r"|\b(?:no|not)\b(?: [\w'-]+){0,4} (?:is|are|feels?) (?:ever |really |truly )?complete "
    r"without\b"
    r"|\b(?:isn't|is not|aren't|are not|never)(?: really| truly)? complete without\b"
    r"|\b(?:wouldn't|would not|never) say no to\b"
    r"|\b(?:isn't|aren't|is not|are not|never|not)(?: (?:really|ever|at all|that|so))? (?:boring|tedious|annoying|"
    r"distracting|cheesy|tacky|corny|overkill|unnecessary|clutter)\b"
    # idioms of plenty the readers read as less ("Feel free to use emoji.", "Pile on the tables.")
    r"|\bfeel free to (?:use|add|include|throw in|sprinkle in)\b"
    r"|\berr on the side of(?: more| including| adding| using)?\b"
    r"|\bpil(?:e|es|ed|ing)(?: it)? on(?: the)?\b|\bgo(?:es|ing)? heavy on(?: the)?\b|\bfreely\b"
    r"|\b(?:throw|toss)(?:es|ed|ing|s)? in\b|\b(?:make )?heavy use of\b|\bthe more the merrier\b"
    r"|\bbump\w* up(?: the)?\b|\bkeep (?:the |them |those )?(?=(?:[\w'-]+ ){1,3}coming\b)|(?<=\w )coming\b"
    r"|\b(?:never|doesn't|does not|don't|do not|won't|wouldn't|can't|cannot) go amiss\b"
    r"|\bdoubl\w* down on(?: the)?\b|\bcrav(?:e|es|ing)\b|\b(?:don't|do not|never) spare the\b"
)
# a clause that is a complaint alone, about the clause before it ("Emoji? Hard pass.", "Dialogue: a pet peeve of
# mine.")
VERDICT = re.compile(
    r"(?:(?:it's|it is|that's|that is|they're|they are|a|an|my|the|just|total|big|real|such|so)\s+)*"
    r"(?:hard pass|pass|no thanks|no thank you|not for me|nope|no way|please no|pet peeves?(?: of mine)?|meh|"
    r"not so much|not again|never again|"
    r"turn[- ]?offs?(?: for me)?|deal[- ]?breakers?(?: for me)?|not my thing|no[- ]go(?: for me)?|"
    r"(?:i|we) hate (?:it|that|them)|ugh|yuck|eww?|not too (?:many|much|often)|"
    r"(?:none|zero)(?: at all)?(?:,? (?:please|thanks|thank you))?|"
    r"(?:(?:so|then|please)\s+)?(?:(?:avoid|skip|drop|cut|lose|ditch|spare me|stop|quit) (?:it|that|them|those)|"
    r"leave (?:it|that|them|those) out)(?:,? please)?)(?:\s+(?:for|of) (?:me|mine))?\W*"
)  # fmt: skip

# words after a complaint that make it frame what follows ("It annoys me when there is dialogue.")
FRAMES = re.compile(r"\b(?:when|whenever|if|by|with|of|about|is|are|was|were|that|how|at)\b")
TOO_WORD = re.compile(r"\btoo\b")  # a "too" anywhere decides the amount: no framing reads past it
TOO = re.compile(r"\btoo(?: much| many)?\s*$")  # "too long", "not too long": less, whatever negates it
# "leave the dialogue out", "keep jargon out", "keep big words to a minimum", "jargon-free": less, as "too" is
MINIMUM = r"to (?:a|the)(?: bare| absolute)? minimum"
OUT = re.compile(rf"\s+(?:out(?! loud)|{MINIMUM}|in check|at bay|aside(?! from))\b|[- ]free\b(?! to\b)")
# "keep long answers out": after a keep or a leave, at most two more words of the thing before the "out" ("detailed
# answers laid out" is a phrasal verb, no keeping out)
KEPT = re.compile(r"\b(?:keep|keeps|kept|keeping|leave|leaves|leaving|left)\b")
OUT_AFTER_MORE = re.compile(r"(?:\s+(?!(?:and|or|but|if|when|not|to|for|with|is|are|it|them|this|that)\b)[\w'-]+){1,2}?"
                            + OUT.pattern)  # fmt: skip
# a thing asked for in small amounts, after it and at most one more word of it ("Keep exclamation marks to a
# minimum.", "Use jargon sparingly.", "Technical terms should be rare.", "One exclamation mark is plenty."): less, as
# "too" is
SCARCE = re.compile(
    r"(?:\s+(?!(?:and|or|but|not|if|when|unless|is|are|should|must|to|in|for|only|kept|be)\b)[\w'-]+)?"
    r"(?:\s+(?:is|are|should be|must be|to be|needs? to be|ought to be))?(?:\s+kept)?"
    rf"\s+(?:only )?(?:sparingly|in moderation|{MINIMUM}|minimal|"
    r"few(?: and far between)?|rare|sparse|scarce|rarely|seldom|occasionally|at (?:the )?most|plenty(?! of)|"
    r"enough(?! to| of)|"
    r"for when (?:it|they|you) (?:\w+ )?(?:matters?|counts?|needs? (?:it|them)|helps?))\b"
)  # fmt: skip
# a clause about repeating single words ("a word used twice", "don't duplicate words") asks about word variety, not
# about repeated points: more repetition of words is less variety ("in other words", "in terms of" are no such words)
WORD_UNIT = re.compile(r"(?<!other )(?<!different )(?<!own )\b(?:words?|vocabular\w*|terms?(?! of\b)|wording|"
                       r"adjectives?|verbs?|nouns?|synonyms?)\b")  # fmt: skip
# Chinese clauses end at its own marks, its comma among them (a list takes "、"); a "but" or ";" in a construction
# named by its letters ("not only X but also Y", "not A but B", "not X; it's Y") ends no clause
CLAUSE = re.compile(
    r"(?<!\btl)(?:[.!?:\u3002\uff1b\uff01\uff1f\uff1a\uff0c]|(?<!\b[xa]);)+"
    r"|(?<!anything)(?<!nothing)(?<!everything)(?<!\b[xa])(?<!\b[xa],),?\s+but\s+"
    r"|,\s*(?=(?:not|never|no|instead|rather)\b)"
    r"|,\s*(?=(?:just|simply)\b(?! (?:don't|do not|never|no)\b))"
)

# The answer's language by name: which languages a wish gives the question and which the answer ("English replies to
# my Finnish messages": another language, more; "If I message you in Finnish, I expect Finnish back": the same, less).
# "Polish" is left out: it is also the chatbot's polish (AI-sounding prose).
_LANG = (r"(?:english|finnish|chinese|mandarin|cantonese|spanish|french|german|italian|portuguese|russian|japanese|"
         r"korean|arabic|hindi|dutch|swedish|norwegian|danish|turkish|greek|hebrew|vietnamese|thai|indonesian|"
         r"ukrainian|czech|hungarian|persian|farsi|urdu|bengali|tamil|swahili|romanian)")  # fmt: skip
# the question's language: "I ask in Finnish", "my Chinese questions", "a question written in Chinese", "if the
# prompt is Chinese", "Finnish in, Finnish out"
ASKED_IN = re.compile(
    rf"\b(?:i|we|he|she|they|(?:my|our) \w+)(?: \w+){{0,2}}? (?:ask|write|wrote|type|message|use|speak|talk|prompt)\w*"
    rf"(?: (?:you|to you))?"
    rf"(?: in)? (?P<a>{_LANG})\b"
    rf"|\b(?:questions?|prompts?|messages?|requests?|inputs?)(?: \w+){{0,2}}? in (?P<b>{_LANG})\b"
    rf"|\b(?:question|prompt|message|request|input)(?:'s)? (?:is|are) (?P<c>{_LANG})\b"
    rf"|(?<!non-)(?<!non )\b(?P<d>{_LANG}) (?:questions?|prompts?|messages?|requests?|inputs?|ones?|texts?)\b"
    rf"|\b(?P<e>{_LANG}) in(?=,| and\b)"
)  # fmt: skip
# a question in a language left unnamed, which no named answer language is ("No English replies to questions in other
# languages.")
ASKED_OTHER = re.compile(r"\b(?:questions?|prompts?|messages?|requests?|ask\w*|write|writ\w+|wrote|type\w*|speak\w*)"
                         r"(?: \w+){0,2}? in (?:an? )?(?:other|another|different|foreign) languages?\b"
                         rf"|\bnon[- ]?{_LANG} (?:questions?|prompts?|messages?|requests?|inputs?)\b")  # fmt: skip
# the answer's language: "answer in English", "switch to English", "English replies", "give me English"
ANSWER_IN = re.compile(rf"\b(?:in|into|to|give me) (?P<a>{_LANG})\b"
                       rf"|\b(?:i|we|he|she|they|(?:my|our) \w+|and)(?: can|(?P<neg> can't| cannot| can not| don't|"
                       rf" doesn't| do not| does not))?(?: only)? (?:read|understand)\w* (?:only )?(?P<e>{_LANG})\b"
                       rf"|\buse (?P<f>{_LANG})\b"
                       rf"|\b(?P<b>{_LANG}) (?:answers?|replies|reply|responses?|output|back|only|out)\b"
                       rf"|\b(?:should|must|to|will|always) be (?:in )?(?P<c>{_LANG})\b"
                       rf"|\b(?P<d>{_LANG}) for (?:my |the |any |all )?(?={_LANG}\b)")  # fmt: skip
# between an answer language and the question's it answers ("English replies to my Finnish questions")
TO_THE_QUESTION = re.compile(r"\s+(?:to|for)(?: my| the| any| all)?\s+")
# an answer language held whatever the question's is ("Answer in English, whichever language I ask in.")
WHATEVER = re.compile(r"\bwhatever\b|\bwhichever\b|\bregardless\b|\bno matter\b|\beven (?:if|when|for|to|though)\b"
                      r"|\balways\b|\bonly\b|\bevery\b|\bany language\b|\bdefault\w*")  # fmt: skip
# the question's language given back without naming the answer's ("If the prompt is Chinese, the reply should be too.")
GIVEN_BACK = re.compile(r"\b(?:too|as well|likewise|in kind|back)\b")
# what a wish prefers stands before these, what it would rather not have after them ("plain prose over AI polish",
# "I'd rather have English than my own language", "I prefer varied words to repeating the same ones"): a cue after
# one is turned, and only the negators after it count for it
CONTRAST = re.compile(
    r"(?<!i'm )(?<!i am )(?<!all )(?<!so )(?<!and )(?<!go )(?<!goes )(?<!going )(?<!went )"
    r"(?<!look )(?<!read )(?<!think )(?<!talk )(?<!get )(?<!be )\bover\b(?! the top\b| and over\b)"
    r"|\bthan\b|\bprefer\w*\b.*?\w( to )(?!(?:refuse|decline|answer|write|use|be|have|keep|avoid|"
    r"give|do|say|make|add|include|stay|reply|respond|speak|talk|repeat|vary|sound|show|tell|stop|"
    r"skip|just|always|never|not|go|get|put|turn)\b)\w"
)  # "prefer X to Y", not "prefer X to do Y"
# a thing named first and taken up again by a pronoun, with the turn there ("Stock phrases, I can do without them.",
# "Quoted speech: keep it to a minimum."): the turn speaks of the thing. After a comma or a dash in its clause
# (`TAKEN_UP`), or as a clause of its own after the thing's (`ABOUT_IT`); only after "I", "we", "please" or a command
ABOUT_IT = re.compile(r"(?:(?:honestly|frankly|really|personally|truly|just|so),?\s+)?(?P<turn>(?:(?:i|we)\b|please\b|"
                      r"spare\b|keep\b|leave\b|drop\b|lose\b|ditch\b|skip\b|cut\b|avoid\b|use\b|go\b|limit\b|restrict\b|"
                      r"save\b|reserve\b)[^,]*?)\s+"
                      r"(?:it|them|those|these)\b(?P<rest>[^,]*)")  # fmt: skip
TAKEN_UP = re.compile(r"(?:,|\s[-\u2013\u2014])\s*" + ABOUT_IT.pattern + "$")
KEEP = re.compile(r"(?:please )?(?:keep|leave)\b")
# a clause whose subject is the thing before it, by a pronoun ("Dialogue: it drags.", "Exclamation marks? They look
# amateurish."): what is said of it turns it as it would in the thing's own clause
SAID_OF_PRONOUN = re.compile(r"(?:it|they|these|those|that)(?P<rest>\b.*)")
# "only ... if / when / unless": the thing asked for sparingly, less of it ("Only use dialogue if the scene needs it.")
ONLY_IF = re.compile(r"\bonly\b(?:\s+[\w'-]+){0,6}?\s+(?:if|when|whenever|where|unless)\b")
# what the visitor used to want, said to set it against what they want now ("I used to skip dialogue, but now I want
# lots of it."): turned ("I'm used to", "I got used to" are habits, not past wishes)
USED_TO = re.compile(r"\b(?:i|we)(?: (?!am\b|are\b|was\b|were\b|got\b|get\b|be\b)\w+)? used to\b")
ANYMORE = re.compile(r"\s*(?:not any ?more|no longer)\W*")
# a clause asking why is a complaint about what it names ("Why so much dialogue?"), unless it asks "why not"
WHY = re.compile(r"\s*(?:why|how come|what's (?:up )?with|what is (?:up )?with)\b(?! not\b)")


def _named_languages(text: str) -> int | None:
    """The direction of a wish that names the question's or the answer's language (+1: an answer in another language
    than the question's wins), or None where it names none or its mentions disagree. Each answer-language mention is
    more where its language is not the question's (or, with no question's language named, where it is held
    whatever the question's is) and less where it is, turned by the negators and complaints of its clause."""
    asked = list(ASKED_IN.finditer(text))
    asked_langs = {m.group(m.lastgroup or 0) for m in asked} | ({"another"} if ASKED_OTHER.search(text) else set())
    answers = [m for m in ANSWER_IN.finditer(text)  # "to Chinese questions" names the question's language
               if not any(a.start() <= m.start(m.lastgroup or 0) < a.end() for a in asked)]  # fmt: skip
    if not answers:
        return -1 if asked_langs and GIVEN_BACK.search(text) else None
    named = {m.group(m.lastgroup or 0) for m in answers}
    if not asked_langs and (len(named) != 1 or not (WHATEVER.search(text) or named == {"english"})):
        return None  # English alone is held whatever the question's is, as "in English" is; another alone is not
    bounds = [0, *(b.end() for b in CLAUSE.finditer(text))]  # where each clause starts
    signs = set()
    for m in answers:
        start = max(b for b in bounds if b <= m.start())
        end = min((b.start() for b in CLAUSE.finditer(text, m.end())), default=len(text))
        base = (-1 if m.group(m.lastgroup or 0) in asked_langs else +1) * (-1 if m.groupdict().get("neg") else 1)
        # "English replies to my Finnish questions" is one thing: what is said after it ("... out of it") follows both
        tail = max([a.end() for a in asked if TO_THE_QUESTION.fullmatch(text[m.end() : a.start()])], default=m.end())
        sign = _sign_in_clause(text[start:end], m.start() - start, tail - start, base, [], sparing=False)
        verdict = text[end : min((b.start() for b in CLAUSE.finditer(text, end + 1)), default=len(text))]
        signs.add(-sign if VERDICT.fullmatch(CLAUSE.sub("", verdict).strip(" ,")) else sign)  # "...? No way."
    return signs.pop() if len(signs) == 1 else None


# The readers read questions back (`question_back`: the answer asks the visitor something) from the word "question"
# alone, so a sentence about the visitor's own questions read as a wish for them ("My questions are usually about
# cooking.", "Respond to every question.": +2.79). Such a sentence names the visitor's questions and none of the
# answer's (`questions_are_the_visitors`); the heads then drop the reading (CompositionalHeads.criteria_side).
VISITORS_QUESTIONS = re.compile(
    r"\b(?:my|our)(?: [\w-]+)? questions?\b|\b(?:i|we)(?: \w+)? (?:ask|pose|send|type)\b"
    r"|\bquestions? (?:i|we) (?:ask|asked|pose|posed|send|sent|have|had)\b"
    r"|\b(?:answer|respond|reply|react|treat|take|handle|tackle)\w*(?: to)? (?:the|my|our|every|each|any|all|hard|"
    r"tough|difficult|these|those|such|edgy|touchy|simple|easy)\b(?: [\w-]+)? questions?\b"
    r"|\bquestions? (?:about|regarding|like)\b"
)
ANSWERS_QUESTIONS = re.compile(
    r"\bask(?:s|ing|ed)? (?:me|us|the user|the reader|back|something)\b|\bquestions? (?:back|at the end|to me|to us|"
    r"to the reader|for me|of me)\b|\b(?:follow-?up|clarifying|probing|check-?in|rhetorical|guiding|leading|"
    r"open-?ended|thought-?provoking|engaging|reflective|socratic|comprehension|quiz) questions?\b"
    r"|\b(?:end|finish|close|wrap)\w* (?:up )?(?:with|on|by asking) (?:a )?questions?\b|\byou ask\b|\bquiz\w*"
    r"|\bwith (?:a |another )?questions?\b"
    r"|(?<!\bi )(?<!\bwe )\bask(?:ing)? (?:questions|a question)\b(?! (?:i|we)\b)"
)


def questions_are_the_visitors(text: str) -> bool:
    """Whether a sentence speaks of the visitor's own questions and of none the answer asks ("Take my questions
    seriously." yes; "Ask me clarifying questions." no)."""
    said = _normal(text)
    return bool(VISITORS_QUESTIONS.search(said)) and not ANSWERS_QUESTIONS.search(said)


# A sentence that says who the visitor is or what they do ("I'm a nurse.", "I run a small bakery.", "My team builds
# mobile apps."), asking for nothing, is context, not a wish: the readers read stray properties in some ("I'm writing a
# lyrical essay." as fewer bullets, -1.48; "My team builds mobile apps." as emoji), which tilted a board the visitor
# never asked to tilt. It starts as a self-description and holds no word of wanting, liking or disliking
# (`about_the_visitor`); the scorer leaves it out and says so (CompositionalScorer.reading).
SELF_DESCRIPTION = re.compile(
    r"^\s*(?:(?:i'm|i am|we're|we are) (?:a|an|the|\w+ing|based|from|located)\b|i (?:work|teach|run|edit|write|study|"
    r"research|manage|own|build|coach|lead|sell|design|develop)\b|i \w+ as an? \w+|we (?:run|build|sell|make|teach)\b"
    r"|(?:my|our) (?:team|company|startup|firm|school|lab|shop|kids?|son|daughter|students?|boss|clients?|customers?|"
    r"audience|readers?|users?|questions?|grandmother|grandfather|father|mother|family|job|work|business) "
    r"(?:\w+s|is|are|am|was|were)\b)"
)
ASKS_SOMETHING = re.compile(
    r"\b(?:like|love|prefer|want|need|hate|dislike|please|should|must|don't|do not|avoid|keep|make|use|give|answer|"
    r"reply|respond|rather|enjoy|appreciate|stand|wish|hope|expect|tired|sick|fed|bored|annoy\w*|bother\w*|can't|"
    r"cannot|won't|no|not|never|more|less|too|only|just|fan|sucker|all for|partial|big on|into|over|done|fine with|"
    r"okay with|ok with|happy|glad|allergic|with|without|mind|care|favou?rite|best|worst|stickler|believer|advocate)\b"
)


def about_the_visitor(text: str) -> bool:
    """Whether a sentence only says who the visitor is or what they do ("I'm a nurse.", "I'm writing a fantasy
    novel."), asking for nothing the lists or a word of wanting would show ("I'm a fan of tables." asks)."""
    said = _normal(text)
    return bool(SELF_DESCRIPTION.search(said)) and not ASKS_SOMETHING.search(said) and read_cues(text) is None


def reads_across(first: str, second: str) -> bool:
    """Whether two clauses name the question's language and the answer's only together ("I write in Finnish;
    answers in English, please."): together they say which language wins, and one of them alone does not."""
    if _named_languages(_normal(f"{first} {second}")) is None:
        return False
    return _named_languages(_normal(first)) is None or _named_languages(_normal(second)) is None


# properties a cue's wish may be read as and still be read right: the readers' own, where they agree. A wish about
# declining or complying is served on `nonanswer`, not on the older `refusal` the readers often choose: the non-answer
# measure holds refusals and evasions both, and the caution reading works on it (docs/experiments.md, twentieth stop)
FAMILY = {"words": ("words", "sentences", "paragraphs")}


def family(prop: str) -> tuple[str, ...]:
    return FAMILY.get(prop, (prop,))


@dataclass(frozen=True)
class CueReading:
    prop: str
    sign: int  # +1: more of the property wins


# an exclamation mark named by its sign ("No '!' please.", "Drop the !s."), not ending a sentence: read as its name
SIGN = re.compile(r"(?:(?<=[\s'\"(\u201c])|^)!+(?=[\s'\"),.;:?\u201d]|s\b|$)")
# the construction named with dots for its letters ("not only... but also") is the one named with them
DOTTED = re.compile(r"\bnot (just|only|merely) ?(?:\.\.\.|\u2026) ?but( also)?\b")


def _normal(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'").replace("n\u2019t", "n't")
    return DOTTED.sub(r"not \1 x but\2 y", SIGN.sub(" exclamation marks ", text))


def _sign_in_clause(
    clause: str, start: int, end: int, base: int, spans: list[tuple[int, int]], sparing: bool = True
) -> int:
    """The cue's base sign, turned round by each negator before it in its clause (outside every cue's span and outside a
    more-idiom), by a complaint or a sending away after it ("... should be avoided": `SAID_OF_IT`), and by one before it
    that frames it ("It bugs me when ...", "I get irritated by ..."; a complaint right before it only narrows it:
    "boring narration"); "too X", "leave X out" and "X sparingly" (`SCARCE`) ask for less of X whatever negates it. A
    clause asking why turns it ("Why so much dialogue?"); so does an "over", "than" or "prefer X to" before it
    ("Narration over dialogue."), and only the negators after that marker count for it. "Only ... if" asks for less of
    it (`sparing`; not for a language, where the condition names the question's). A turn after a comma about a pronoun
    speaks of it ("Dialogue, I could do without it.")."""
    before = MORE_IDIOM.sub(lambda m: " " * len(m.group()), clause)[:start]  # "spare no", "not enough": no negator
    # "too X", "X out", "X sparingly": less ("can't have too many" is an idiom, not a "too": blanked above)
    if TOO.search(before):
        return -1 if base > 0 else base
    kept_out = OUT.match(clause[end:]) or (KEPT.search(before) and OUT_AFTER_MORE.match(clause[end:]))
    if kept_out or SCARCE.match(clause[end:]):  # less of it: "keep brevity in check" is more words
        return -base
    only = ONLY_IF.search(clause)
    if sparing and only and end <= only.end():  # the thing is asked for sparingly: less of it
        return -base
    if WHY.match(clause):
        base = -base
    ends = [m.end(m.lastindex or 0) for m in CONTRAST.finditer(clause) if m.start() > 0]
    contrast = [e for e in ends if e <= start]
    if contrast:  # the thing after "over" / "than" is the one not wanted; negators before it speak of the other
        cut = contrast[-1]
        before, base = " " * cut + before[cut:], -base
    for a, b in spans:  # words inside cues do not negate ("a language I didn't write in")
        if a < start:
            before = before[:a] + " " * (min(b, start) - a) + before[min(b, start) :]
    framing = sum(bool(FRAMES.search(before[m.end() :])) for m in COMPLAINT.finditer(before))
    after = clause[end:]
    flips = len(NEGATOR.findall(before)) + _turns_after(after) + framing
    taken_up = TAKEN_UP.search(after)
    if taken_up:  # "Dialogue, I could do without it.": the turn after the comma speaks of the thing
        flips += _turns_about_it(taken_up)
    return base * (-1) ** flips


def _turns_after(text: str) -> int:
    """Whether what is said after a thing turns it (1) or not (0): complaints ("... annoys me"), a sending away ("...
    should be avoided"), a closing "and I hate it". Two of them agree rather than cancel ("Clichés are a crutch for
    lazy writers.", "Dialogue is boring and tedious.")."""
    text = MORE_IDIOM.sub(" ", text)  # a complaint denied is none ("Dialogue never bores me.")
    return int(any(p.search(text) for p in (COMPLAINT, TRAILING, SAID_OF_IT)))


def _turns_about_it(match: re.Match) -> int:
    """How many times a turn that takes a thing up by a pronoun turns it (`ABOUT_IT`): its negators outside
    idioms of liking, and a "keep / leave it out" or an amount kept small ("use them sparingly")."""
    turn = MORE_IDIOM.sub(" ", match["turn"])
    kept_out = bool(KEEP.match(turn) and OUT.match(match["rest"])) or bool(SCARCE.match(match["rest"]))
    return len(NEGATOR.findall(turn)) + kept_out


def read_cues(text: str) -> CueReading | None:
    """The property and direction a sentence's words ask for, or None when it names none of the cues' properties
    or its cues disagree."""
    found: set[tuple[str, int]] = set()
    last: set[tuple[str, int]] = set()  # the previous clause's readings: a verdict clause after it turns them
    complained = False  # the previous clause complained of its thing already: a verdict after it agrees
    past = False  # the previous clause said what the visitor used to want, turned already
    for clause in CLAUSE.split(_normal(text)):
        if NOT_OURS.search(clause):
            last = set()
            continue
        matches = [(m.start(), m.end(), prop, sign) for prop, sign, pattern in CUES for m in pattern.finditer(clause)]
        only = ONLY_IF.search(clause)
        if only:  # what follows "only ... if" is the condition, not the wish ("Only add headings when it is long.")
            matches = [m for m in matches if m[0] < only.end()]
        about_it = None if matches or not last else ABOUT_IT.fullmatch(clause.strip(" ,"))
        said = None if matches or not last or about_it else SAID_OF_PRONOUN.fullmatch(clause.strip(" ,"))
        turns = (_turns_about_it(about_it) + _turns_after(about_it["rest"]) if about_it
                 else _turns_after(said["rest"]) + bool(SCARCE.match(said["rest"])) if said else 0)  # fmt: skip
        if not matches and last and (VERDICT.fullmatch(clause.strip(" ,")) or ANYMORE.fullmatch(clause) or turns % 2):
            agrees = complained and not ANYMORE.fullmatch(clause)  # "Dialogue is boring; leave it out."
            if (not past or not ANYMORE.fullmatch(clause)) and not agrees:  # "I used to like emoji, but not
                found -= last  # anymore.": turned once; "Emoji? Hard pass.", "Stock phrases: I can do without them."
                found |= {(prop, -sign) for prop, sign in last}
            last = set()
            continue
        spans = [(a, b) for a, b, _, _ in matches]
        last = set()
        for a, b, prop, sign in matches:
            if any(a2 <= a and b <= b2 and (a2, b2) != (a, b) for a2, b2 in spans):
                continue  # inside a longer cue
            last.add((prop, _sign_in_clause(clause, a, b, sign, spans)))
        if WORD_UNIT.search(clause):
            last = {("lexical_variety", -sign) if prop == "repetition" else (prop, sign) for prop, sign in last}
        complained = bool(COMPLAINT.search(clause) or SAID_OF_IT.search(clause) or TRAILING.search(clause))
        past = bool(USED_TO.search(clause))
        if past:  # no longer wanted
            last = {(prop, -sign) for prop, sign in last}
        found |= last
    language = _named_languages(_normal(text))
    if language is not None:  # a named language says more than the lists' "in English" or "my language"
        found = {(prop, sign) for prop, sign in found if prop != "other_language"} | {("other_language", language)}
    if len(found) != 1:
        return None
    prop, sign = found.pop()
    return CueReading(prop, sign)


# words that say how much rather than whether: "minimal replies" is a length, "less emoji" the readers know
AMOUNT = re.compile(
    r"\b(?:minimal|minimum|little|less|fewer|limit\w*|reduc\w*|minimi[sz]\w*|zero|hardly|barely|"
    r"no more|more|most|least)\b"
)


def framed_core(text: str) -> str | None:
    """Where a one-clause wish frames what it names as unwanted ("I could do without emoji.", "Emoji? Hard pass.",
    "I can't stand short answers."): the clause with the framing words taken out ("i could do emoji", "emoji", "i
    short answers"), which the learned readers read as the thing itself; None where the framing is not negative (an
    even number of turns), a "too" or an amount decides, or the sentence has more than one clause with words of its
    own. The readers hear nouns better than the words that turn them round (CompositionalScorer reads "I like
    <core>." and turns it: crm.json `framing_reader`)."""
    clauses = _clauses(text)
    verdicts = [c for c in clauses if VERDICT.fullmatch(c)]
    content = [c for c in clauses if not VERDICT.fullmatch(c)]
    if len(content) != 1 or len(verdicts) > 1:
        return None
    clause = content[0]
    if TOO_WORD.search(clause) or AMOUNT.search(clause):
        return None
    kept = MORE_IDIOM.sub(" ", clause)  # "spare no", "nothing beats": no turn, and not the thing itself
    turns = _turn_count(kept) + len(verdicts)
    if turns % 2 == 0:
        return None
    return _core(kept)


# two turns in one clause that cancel into a liking of their thing (`liked_core`): a negator right before another
# ("Don't skip the caveats.", "Don't ever leave out the numbers."); the thing's absence, inside the clause, called bad
# ("Answers without emoji feel cold.", "A comparison with no table is hard to follow."); or a dislike that frames a
# leaving out or an absence ("I dislike answers that leave out the caveats.", "I hate answers without tables."). A
# command and its reason ("Avoid emoji because they annoy me.", "No emoji, they annoy me.") is none of these.
BETWEEN_NEGATORS = re.compile(r"\s*(?:(?:ever|even|you|to|be|need|needs|try|bother|just|please|so|much as)\s+)*")
ABSENT = re.compile(
    r"(?<=\w )(?:without|with (?:no|nothing|zero)\b|missing|leav\w* out|omit|skip|"
    r"(?:go|goes|went|left) unmentioned)"
)
DISLIKE = re.compile(r"hat|dislike|detest|can't stand|cannot stand|loath|despis|abhor")
HOLDER = re.compile(
    r"\b(?:answers?|replies|reply|responses?|texts?|writing|prose|explanations?|code|comparisons?|"
    r"stor(?:y|ies)|essays?|articles?|posts?|arguments?|guides?|lists?|pieces?|ones?|anything|descriptions?|"
    r"narration|content|output|"
    r"something|\w+ing)\b(?:\s+[\w'-]+){0,2}\s+$"
)  # what the thing is absent from, just before
LIKED_VERDICT = re.compile(r"(?:(?:and|so) )?the more the merrier")  # a clause of its own, liking the one before
RELATIVE = re.compile(r"\b(?:that|which|who|when|whenever|if)\b")
REASON = re.compile(r"\b(?:because|since|as|they|it|them|these|those|they're|it's|which)\b")


def _turns_cancel(clause: str) -> bool:
    """Whether a clause's two turns cancel into a liking of what it names (`BETWEEN_NEGATORS`, `ABSENT`, `DISLIKE`)."""
    turns = _turns(clause)
    if len(turns) != 2 or turns[1][0] < turns[0][1]:
        return False
    (a1, b1, complaint1), (a2, _, complaint2) = turns
    between = clause[b1:a2]
    if not complaint1 and not complaint2 and BETWEEN_NEGATORS.fullmatch(between):  # "don't skip"
        return True
    if not complaint1 and complaint2 and _absent_at(clause, a1) and not REASON.search(between):
        return True  # "answers without emoji feel cold"
    first = clause[a1:b1]  # "I dislike answers that leave out ...", "I hate answers without tables."
    framing = complaint1 or bool(DISLIKE.match(first))
    return not complaint2 and framing and bool(RELATIVE.search(between) or _absent_at(clause, a2))


def _turns(clause: str) -> list[tuple[int, int, bool]]:
    """The clause's turns in order, (start, end, is a complaint): its complaints and the negators outside them ("not
    my style" is one turn, not a "not" and a complaint)."""
    complaints = [(m.start(), m.end(), True) for m in COMPLAINT.finditer(clause)]
    negators = [(m.start(), m.end(), False) for m in NEGATOR.finditer(clause)
                if not any(a <= m.start() < b for a, b, _ in complaints)]  # fmt: skip
    return sorted(complaints + negators)


def _turn_count(clause: str) -> int:
    """How many times a clause turns what it names: each negator outside a complaint, and its complaints once (two
    complaints agree: "Emoji are tacky and annoying.")."""
    turns = _turns(clause)
    return sum(not complaint for _, _, complaint in turns) + any(complaint for _, _, complaint in turns)


def _absent_at(clause: str, start: int) -> bool:
    """Whether the negator at `start` says the thing is absent from an answer or a piece of one ("answers without",
    "a comparison with no": it matches at "no"); "emoji without purpose" is no absence of emoji."""
    absent = ABSENT.match(clause, start) or ABSENT.match(clause, max(start - 5, 0))
    return bool(absent and HOLDER.search(clause[: absent.start()]))


def liked_reply(text: str) -> bool:
    """Whether a sentence is only a liking of what the one before it names ("The more the merrier."), so that it is
    read with it whatever its length."""
    return bool(LIKED_VERDICT.fullmatch(_normal(text).strip(" .!,")))


def liked_core(text: str) -> str | None:
    """Where a one-clause wish asks for what it names through an idiom that holds a negator and no other turn ("I
    wouldn't mind emoji.", "There's never enough detail.", "Answers feel empty without tables.", "Why not add a
    table?"), or through two turns that cancel ("Don't skip the caveats.", "Answers without emoji feel cold.",
    `_turns_cancel`): the clause without the idiom, which the scorer reads as a liking as it stands (crm.json
    `liked_framing`); else None. The readers hear the idiom's "not" or "never" as a turn."""
    clauses = _clauses(text)
    if len(clauses) == 2 and LIKED_VERDICT.fullmatch(clauses[1]) and not _turns(clauses[0]):
        return _core(clauses[0])  # "Emoji? The more the merrier."
    if len(clauses) != 1:
        return None
    kept = MORE_IDIOM.sub(" ", clauses[0])  # "never too many" is the idiom; a "too" left over decides
    if TOO_WORD.search(kept) or AMOUNT.search(kept):
        return None
    if _turns_cancel(kept):
        return _core(kept)
    if kept == clauses[0] or NEGATOR.search(kept) or COMPLAINT.search(kept):
        return None
    return _core(kept)


def _clauses(text: str) -> list[str]:
    """The sentence's clauses with words in them, lower case, edges trimmed."""
    return [c.strip(" ,") for c in CLAUSE.split(_normal(text)) if c.strip(" ,")]


def _core(clause: str) -> str | None:
    """The clause with its turning words taken out: the thing it names, as the readers would read a liking of it."""
    core = COMPLAINT.sub(" ", NEGATOR.sub(" ", clause))
    core = re.sub(r"\s+", " ", core).strip(" ,-\u2013\u2014")
    core = re.sub(r"\s+(?:to )?me$", "", core)  # "... annoy me": the complaint's object goes with it
    return core if re.search(r"\w", core) else None


# Wishes written in another language than English (`written_in`). A Latin-script sentence is another language's where
# its words are more frequent there than in English by FOREIGN_MARGIN on wordfreq's Zipf scale (1: ten times), in the
# language py3langid ranks first of those wordfreq knows; chosen on development data (development.toml
# `foreign_wishes`: 38 of 42 told apart; none of 27,000 English training and development phrasings, whose largest
# margin is under 1). A sentence mostly in another script is another language's outright.
FOREIGN_MARGIN = 1.5
_WORDFREQ = {"no": "nb"}  # wordfreq's code where it differs (Norwegian: Bokmål's list)
_LETTERS = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


@functools.lru_cache(maxsize=4096)
def written_in(text: str) -> str | None:
    """The language a wish is written in (a code as py3langid gives it) where it is clearly not English, else None.
    wordfreq loads a language's word list (0.2-0.3 s) the first time a sentence is ranked in it."""
    import py3langid
    from wordfreq import available_languages, zipf_frequency

    from crm_core.properties import LANGUAGE_FOLD  # the codes the answer's language is measured in

    letters = [c for c in text if c.isalpha()]
    if not letters:
        return None
    ranked = [LANGUAGE_FOLD.get(code, code) for code, _ in py3langid.rank(text)]
    other_script = sum(not unicodedata.name(c, "").startswith("LATIN") for c in letters)
    if other_script * 2 > len(letters):
        return next((code for code in ranked if code != "en"), "unknown")
    known = available_languages()
    language = next((code for code in ranked if _WORDFREQ.get(code, code) in known), "en")
    if language == "en":
        return None
    words = [w.lower() for w in _LETTERS.findall(text)]
    listed = _WORDFREQ.get(language, language)
    margin = sum(zipf_frequency(w, listed) - zipf_frequency(w, "en") for w in words) / len(words)
    return language if margin >= FOREIGN_MARGIN else None
