"""A :class:`~sage.errors.SageError` as a user should see it: what happened (escaped) and what to do next."""

from __future__ import annotations

import streamlit as st

from sage.errors import DatabaseError, ErrorKind, SageError
from sage.guard_policy import TABLES_TEXT

from .text import md

#: what to do next, by kind of error (ours, static; the error's own message says what happened)
HELP: dict[ErrorKind, str] = {
    ErrorKind.NO_KEY: "Set ANTHROPIC_API_KEY (environment or .streamlit/secrets.toml) and restart, or use the "
    "offline planner with SAGE_PLANNER=offline.",
    ErrorKind.BAD_KEY: "Check ANTHROPIC_API_KEY: the Anthropic API refused it. Or use SAGE_PLANNER=offline.",
    ErrorKind.RATE_LIMITED: "The Anthropic API is busy: wait a minute and ask again, or use SAGE_PLANNER=offline.",
    ErrorKind.NETWORK: "The Anthropic API could not be reached: check the network and ask again.",
    ErrorKind.API: "The Anthropic API failed: ask again in a moment.",
    ErrorKind.BAD_ANSWER: "The planner's answer could not be used: ask again or rephrase the question.",
    ErrorKind.DATABASE_DOWN: "Check that the database is running (DATABASE_URL or SAGE_DATA_DIR), then ask again: "
    "the next question reconnects, no restart needed.",
    ErrorKind.DATABASE: "Check the database (DATABASE_URL or SAGE_DATA_DIR), then ask again.",
    ErrorKind.BUSY: "Many questions are being answered at once; ask again in a moment.",
    ErrorKind.CONNECTION_LOST: "Ask again: the next question gets a new connection.",
    ErrorKind.DATA_DIR: "Set SAGE_DATA_DIR to a writable directory (or DATABASE_URL to your own PostgreSQL) and "
    "restart the app.",
    ErrorKind.NOT_SET_UP: "Run python -m sage setup (or rebuild the index on the Status page), then ask again.",
    ErrorKind.RETRIEVAL: "Rebuild the index on the Status page, or run python -m sage setup.",
    ErrorKind.EMBEDDING: "Check SAGE_EMBEDDING_MODEL, or unset it to use the bundled model.",
    ErrorKind.GUARD: f"Nothing was run. Only one SELECT over {TABLES_TEXT} is allowed.",
    ErrorKind.TIMEOUT: "Ask about fewer places (one state, or the top 10), or raise SAGE_STATEMENT_TIMEOUT_MS.",
    ErrorKind.PERMISSION: f"The read-only role may only read {TABLES_TEXT}.",
    ErrorKind.UNDEFINED: "Check the table and column names on the Explore page, then edit the SQL.",
    ErrorKind.ATTEMPTS_EXHAUSTED: "Rephrase the question, or edit the SQL below and run it again.",
}
#: the heading of an error, when it is not "Something went wrong."
TITLES: dict[ErrorKind, str] = {
    ErrorKind.GUARD: "The SQL guard refused this query.",
    ErrorKind.TIMEOUT: "The query took too long.",
    ErrorKind.ATTEMPTS_EXHAUSTED: "No working query.",
    ErrorKind.BUSY: "The database is busy.",
    ErrorKind.CONNECTION_LOST: "The database connection was lost.",
    ErrorKind.DATA_DIR: "The data directory cannot be written.",
}
#: a question that cannot be asked is the user's to fix: shown as a warning, not an error
QUESTION_KINDS = frozenset({
    ErrorKind.QUESTION, ErrorKind.QUESTION_TYPE, ErrorKind.QUESTION_EMPTY, ErrorKind.QUESTION_TOO_LONG,
    ErrorKind.QUESTION_ABSURD, ErrorKind.QUESTION_CODE, ErrorKind.QUESTION_LEVEL, ErrorKind.TOO_MANY_QUESTIONS,
    ErrorKind.NOT_ALLOWED, ErrorKind.SIGN_IN,
})


def show_error(error: SageError) -> None:
    """An error as a user should see it: what happened (escaped) and what to do next (ours, static).

    The advice is that of the error's kind, else that of its class's own kind (a ``DatabaseError`` of a kind
    without advice gets the database advice).
    """
    if error.kind in QUESTION_KINDS:
        st.warning(md(error.message), icon=":material/edit_note:")
        return
    if error.kind == ErrorKind.BUSY and not isinstance(error, DatabaseError):
        # not the pool: the same long job runs elsewhere (a table load, the catalog index); the message names it
        st.warning(md(error.message), icon=":material/hourglass_top:")
        return
    help_text = HELP.get(error.kind) or HELP.get(type(error).kind)
    body = f"**{TITLES.get(error.kind, 'Something went wrong.')}** {md(error.message)}"
    if help_text:
        body += f"\n\n{md(help_text)}"
    st.error(body, icon=":material/error:")


__all__ = ["HELP", "QUESTION_KINDS", "TITLES", "show_error"]
