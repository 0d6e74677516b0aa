"""The CRM's input: criteria + query (or conversation) + response A + response B in ONE sequence.

Two styles share one set of sections:
- ``chat`` (decoders such as Qwen3): the tokenizer's chat template around one user message holding the judging
  instruction, rules against position and length bias, the criteria as bullets, the query, response A, response B;
  the classifier reads the last token.
- ``segments`` (BERT-like encoders): ``[CLS] criteria + query [SEP] response A [SEP] response B [SEP]``.

The token budget is exact because the sequence is assembled from separately tokenised pieces: the criteria are
never cut (too many is an error), the final user turn is kept whole, earlier turns are dropped oldest first, and
the responses share what is left fairly (a short one gives its unused share to the other) and are cut in the
middle, head and tail kept, with a visible marker. The budget depends only on the two lengths, so (A, B) and
(B, A) truncate each response identically. Bump PROMPT_FORMAT_VERSION whenever the produced ids can change.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from crm_core.guard import check_criteria
from crm_core.spec import PromptFormat

INSTRUCTION = (
    "You are judging which of two AI assistant responses a user prefers. The user has stated their own "
    "preference criteria; judge the responses against those criteria first, then against general quality."
)
RULES = (
    "Rules: the order in which the responses appear is not a reason to prefer either; a longer response is not "
    "better for being longer; judge only what the responses say."
)
POINT_INSTRUCTION = (
    "You are judging how well an AI assistant response serves a user who has stated their own preference "
    "criteria. Judge the response against those criteria first, then against general quality. A longer response "
    "is not better for being longer."
)
GENERAL_PREFERENCE = "No specific criteria: judge overall helpfulness, correctness and quality."
CUT_MARKER = "\n[... middle of the response cut to fit ...]\n"
SENTINEL = "\x00CRM-CONTENT\x00"


class PromptBudgetError(ValueError):
    """The parts that are never cut (criteria, instructions) do not fit the model's max_length."""


@dataclass
class Encoded:
    """One model input and what the budget had to cut to make it fit."""

    input_ids: list[int]
    token_type_ids: list[int] | None
    cut: dict[str, Any] = field(default_factory=dict)
    words: list[int] = field(default_factory=list)  # each response's word count, as its label states


def _conversation(context: str | Sequence[dict]) -> tuple[list[dict], str]:
    """(earlier turns, final user message) from a query string or a message list ending with the user."""
    if isinstance(context, str):
        if not context.strip():
            raise ValueError("the query is empty")
        return [], context
    messages = list(context)
    if not messages or messages[-1].get("role") != "user":
        raise ValueError("a conversation to judge must end with the user's message (the responses answer it)")
    return messages[:-1], messages[-1]["content"]


def _check_response(name: str, response: Any) -> str:
    if response is None:
        raise ValueError(f"{name} is missing")
    if not isinstance(response, str):
        raise ValueError(f"{name} must be a string, got {type(response).__name__}")
    return response


def _check_criteria(criteria: Sequence[str] | None, what: str) -> list[str]:
    """crm_core.guard.check_criteria's cleaning, without its limits (the token budget is this builder's limit); a
    prompt takes a list, so one string is refused rather than read as lines."""
    if isinstance(criteria, str):
        raise ValueError(f"{what} must be a list of strings, not one string")
    return check_criteria(criteria, what, max_lines=sys.maxsize, max_chars=sys.maxsize)


class PromptBuilder:
    """Builds CRM inputs for one tokenizer and format. Tokenisations are cached: a baseline response that is
    judged against 40 models is tokenised once."""

    def __init__(self, tokenizer: Any, fmt: PromptFormat):
        self.tokenizer = tokenizer
        self.fmt = fmt
        self._tokens = lru_cache(maxsize=1 << 16)(self._tokenize)
        if fmt.style == "chat":
            rendered = tokenizer.apply_chat_template(
                [{"role": "user", "content": SENTINEL}], tokenize=False, add_generation_prompt=True
            )
            prefix, suffix = rendered.split(SENTINEL)
            self._prefix, self._suffix = self._special(prefix), self._special(suffix)
        elif fmt.style == "segments":
            self._prefix, self._suffix = (tokenizer.cls_token_id,), (tokenizer.sep_token_id,)
        else:
            raise ValueError(f"unknown prompt style {fmt.style!r}; expected 'chat' or 'segments'")
        self._marker = self._tokens(CUT_MARKER)

    def _special(self, text: str) -> tuple[int, ...]:
        """Template text, whose special tokens (<|im_start|>, ...) must stay special."""
        return tuple(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _tokenize(self, text: str) -> tuple[int, ...]:
        """User or model text: special-token strings inside it are split into plain text, never obeyed."""
        ids = self.tokenizer(text, add_special_tokens=False, split_special_tokens=True, verbose=False)["input_ids"]
        return tuple(ids)  # verbose=False: a piece longer than the model is fine, the budget cuts it

    def _cut(self, ids: tuple[int, ...], budget: int) -> tuple[tuple[int, ...], bool]:
        """Keep head and tail of `ids` within `budget` tokens, the marker in between."""
        if len(ids) <= budget:
            return ids, False
        if budget < len(self._marker) + 2:
            return ids[:budget], True
        keep = budget - len(self._marker)
        head = (keep + 1) // 2
        return ids[:head] + self._marker + ids[len(ids) - (keep - head) :], True

    def _criteria_block(self, criteria: list[str], dislikes: list[str]) -> str:
        if self.fmt.style == "segments":
            text = "Criteria: " + ("; ".join(criteria) if criteria else GENERAL_PREFERENCE)
            return text + (" Dislikes: " + "; ".join(dislikes) if dislikes else "")
        lines = ["[The user's criteria]"] + ([f"- {c}" for c in criteria] or [f"- {GENERAL_PREFERENCE}"])
        if dislikes:
            lines += ["[The user dislikes]"] + [f"- {d}" for d in dislikes]
        return "\n".join(lines)

    def _sections(self, words: list[int]) -> tuple[list[str], str]:
        """Labels placed before each response, and the closing text. Each label states the response's length
        in words: a response cut to fit the budget would otherwise hide how long it really is, and criteria
        such as "prefer concise answers" are about exactly that."""
        names = [" A", " B"] if len(words) == 2 else [""]
        if self.fmt.style == "segments":
            return [f"Response{n} ({w} words): " for n, w in zip(names, words, strict=True)], ""
        labels = [f"\n[Response{n}, {w} words]\n" for n, w in zip(names, words, strict=True)]
        if len(words) == 2:
            return labels, "\n\nWhich response does the user prefer, A or B?"
        return labels, "\n\nHow well does this response serve the user?"

    def encode(
        self,
        criteria: Sequence[str] | None,
        context: str | Sequence[dict],
        responses: Sequence[str],
        dislikes: Sequence[str] | None = None,
    ) -> Encoded:
        """One input for one (pairwise: two; pointwise: one) response(s) to `context`.

        `context` is the user query, or a conversation (messages) ending with the user's turn. Empty criteria
        mean general preference.
        """
        criteria, dislikes = _check_criteria(criteria, "criteria"), _check_criteria(dislikes, "dislikes")
        names = ["response A", "response B"] if len(responses) == 2 else ["the response"]
        responses = [_check_response(n, r) for n, r in zip(names, responses, strict=True)]
        history, query = _conversation(context)
        segments = self.fmt.style == "segments"
        instruction = (INSTRUCTION + " " + RULES) if len(responses) == 2 else POINT_INSTRUCTION
        head_text = (f"{instruction}\n\n" if not segments else "") + self._criteria_block(criteria, dislikes)
        head = self._tokens(head_text + ("\n\n[The user's query]\n" if not segments else " Query: "))
        query_ids = self._tokens(query)
        words = word_counts(responses)
        labels, closing = self._sections(words)
        label_ids = [self._tokens(label) for label in labels]
        sep = (self.tokenizer.sep_token_id,) if segments else ()
        closing_ids = self._tokens(closing) if closing else ()
        fixed = len(self._prefix) + len(head) + sum(map(len, label_ids)) + len(closing_ids) + len(self._suffix)
        fixed += len(sep) * len(responses)  # segments: [SEP] after the context and after response A
        reserve = self.fmt.min_response_tokens * len(responses)
        if fixed + reserve > self.fmt.max_length:
            raise PromptBudgetError(
                f"the criteria and instructions take {fixed} tokens; with {reserve} reserved for the response(s) "
                f"that exceeds max_length {self.fmt.max_length}: shorten or remove criteria"
            )
        cut: dict[str, Any] = {}
        room = self.fmt.max_length - fixed - reserve
        if len(query_ids) > room:  # only a query longer than the whole budget is ever cut
            query_ids, cut["query"] = self._cut(query_ids, room)[0], True
        history_ids: tuple[int, ...] = ()
        history_header = self._tokens("[Earlier conversation]\n") if history and not segments else ()
        history_room = min(room - len(query_ids), int(self.fmt.max_length * self.fmt.history_fraction))
        history_room -= len(history_header)  # the header is only there when a turn is, and counts against it
        kept = 0
        for message in reversed(history):
            turn = self._tokens(f"{message['role'].capitalize()}: {message['content']}\n")
            if len(history_ids) + len(turn) > history_room:
                break
            history_ids, kept = turn + history_ids, kept + 1
        if kept < len(history):
            cut["dropped_turns"] = len(history) - kept
        if kept:
            history_ids = history_header + history_ids
        context_ids = history_ids + query_ids
        left = self.fmt.max_length - fixed - len(context_ids)
        response_ids = [self._tokens(r) for r in responses]
        budgets = _fair_budgets([len(r) for r in response_ids], left)
        pieces = []
        for i, (ids, budget) in enumerate(zip(response_ids, budgets, strict=True)):
            ids, was_cut = self._cut(ids, budget)
            if was_cut:
                cut[f"response_{i}"] = True
            pieces.append(ids)
        body = [*self._prefix, *head, *context_ids, *sep]
        types = [0] * len(body)
        for i, (label, ids) in enumerate(zip(label_ids, pieces, strict=True)):
            part = [*label, *ids, *(sep if i < len(pieces) - 1 else ())]
            body += part
            types += [1] * len(part)
        tail = [*closing_ids, *self._suffix]
        body += tail
        types += [1] * len(tail)
        return Encoded(body, types if segments else None, cut, words)

    def pair(self, criteria, context, response_a: str, response_b: str, dislikes=None) -> Encoded:
        """Pairwise input with response A shown first."""
        return self.encode(criteria, context, [response_a, response_b], dislikes)

    def point(self, criteria, context, response: str, dislikes=None) -> Encoded:
        """Pointwise input (criteria + query + one response), for the ranking objective."""
        return self.encode(criteria, context, [response], dislikes)


def word_counts(responses: Sequence[str]) -> list[int]:
    """Whitespace-separated words per response: what the labels state and the length feature uses."""
    return [len(r.split()) for r in responses]


def _fair_budgets(lengths: list[int], total: int) -> list[int]:
    """Split `total` tokens between responses: equal shares, a short response's unused share going to the
    others. Depends only on the lengths, so swapping responses swaps their budgets."""
    budgets = [0] * len(lengths)
    remaining, open_ = total, sorted(range(len(lengths)), key=lambda i: lengths[i])
    while open_:
        share = remaining // len(open_)
        i = open_[0]
        if lengths[i] <= share:
            budgets[i] = lengths[i]
            remaining -= lengths[i]
            open_.pop(0)
        else:
            for j in open_:
                budgets[j] = share
            break
    return budgets
