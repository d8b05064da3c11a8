"""The Claude planner's per-question message: the second half of each request, after the cached system prefix.

It puts the blocks of :mod:`sage.planner.claude.blocks` in order, each fenced in its tag so that it reads as data (the
places, the retrieved context, the verified answers, the conversation, the question), with the failed attempts
before the question.  Apart from the blocks because it is the one place that decides the message's order and
fences; apart from the rules (:mod:`sage.planner.claude.prompt`) because this half changes with every question.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ...types import Chunk
from .blocks import _field, format_attempts, format_conversation, format_places, format_schema_context, format_verified
from .examples import Example, format_examples


def build_user_message(
    question: str,
    chunks: Sequence[Chunk],
    examples: Iterable[Example] | None = None,
    error_context: Sequence[Any] = (),
    measures: Sequence[Any] = (),
    conversation: Sequence[Any] = (),
    verified: Sequence[Any] = (),
    grounding: Any = None,
) -> str:
    """The per-question message: the places the question names (``grounding``, a
    :class:`sage.planner.claude.resolve.Grounding`, when given), retrieved context (with each variable's periods from
    the grounding), optional examples, verified answers to similar questions, the earlier turns of the conversation,
    failed attempts, then the question.

    ``examples`` is normally ``None`` here: the Claude planner sends the examples in the cached system prefix instead.
    The places, the retrieved context, the verified answers, the conversation and the question are fenced in tags so
    that they read as data.
    """
    parts = []
    if grounding is not None:
        parts += ["<places>", _fenced(format_places(grounding), "places"), "</places>"]
    periods = _field(grounding, "periods") if grounding is not None else None
    parts += ["<context>", _fenced(format_schema_context(chunks, measures, periods), "context"), "</context>"]
    if examples:
        parts.append(format_examples(examples))
    if verified:
        parts += ["<verified>", _fenced(format_verified(verified), "verified"), "</verified>"]
    if conversation:
        parts += ["<conversation>", _fenced(format_conversation(conversation), "conversation"), "</conversation>"]
    attempts = format_attempts(error_context)
    if attempts:
        parts.append(attempts)
    parts += ["<question>", _fenced(question.strip(), "question"), "</question>"]
    return "\n".join(parts)


def _fenced(text: str, tag: str) -> str:
    """``text`` with any closing ``</tag>`` defused, so data cannot end its own fence early."""
    return re.sub(rf"</\s*{tag}\s*>", f"</ {tag}>", text, flags=re.IGNORECASE)


__all__ = ["build_user_message"]
