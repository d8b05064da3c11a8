"""Who this browser session is: its id (kept in the query log, so History shows a visitor their own questions), its
role (:mod:`sage.roles` decides; this module only asks), the sidebar's curator sign-in, and the per-session question
rate (:mod:`sage.limits`).

A session is a visitor until it signs in: with ``SAGE_CURATOR_PASSWORD`` set, by the sidebar's "Curator sign-in"
(a password field in a form that is cleared on submit, so the password is never echoed back; tries are bounded by
:class:`sage.roles.SignInGate`); where Streamlit's own authentication is configured (``[auth]`` in
``.streamlit/secrets.toml``), by ``st.login``, a curator when the user's email is in ``SAGE_CURATORS``.  The role is
kept under a session-state key that no widget has, so no widget value a browser sends can set it.
"""

from __future__ import annotations

import logging
import secrets

import streamlit as st

from sage import limits, roles
from sage.errors import SageError
from sage.roles import Action, Role
from sage.settings import Settings

from .errors import show_error
from .text import md

log = logging.getLogger(__name__)

_ID = "_sage_session_id"
_ROLE = "_sage_signed_in_role"
_GATE = "_sage_sign_in_gate"
_RATE = "_sage_question_rate"
_SIGN_IN_MESSAGE = "_sage_sign_in_message"


def session_id() -> str:
    """This browser session's id: random, made on its first run (never the Streamlit-internal id)."""
    if _ID not in st.session_state:
        st.session_state[_ID] = secrets.token_urlsafe(12)
    return str(st.session_state[_ID])


def auth_configured() -> bool:
    """Whether Streamlit's own authentication is set up (an ``[auth]`` table in the secrets)."""
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all
        return False


def role(settings: Settings) -> Role:
    """The session's role: a Streamlit-authenticated curator, a session signed in with the password, else a
    visitor."""
    if auth_configured():
        try:
            user_role = roles.role_of_user(settings, str(st.user.get("email") or ""), bool(st.user.is_logged_in))
        except Exception:  # st.user unavailable: nobody is signed in that way
            user_role = Role.VISITOR
        if user_role is Role.CURATOR:
            return user_role
    if st.session_state.get(_ROLE) == Role.CURATOR and settings.curator_password:
        return Role.CURATOR
    return Role.VISITOR


def may(settings: Settings, action: Action) -> bool:
    return roles.may(role(settings), action)


def take_question(settings: Settings) -> SageError | None:
    """Count one question (or edited SQL run) against the session's rate: None, or the refusal past
    ``SAGE_MAX_QUESTIONS_PER_MINUTE`` (for a callback, which cannot draw)."""
    rate = st.session_state.get(_RATE)
    if not isinstance(rate, limits.QuestionRate) or rate.per_minute != settings.max_questions_per_minute:
        rate = st.session_state[_RATE] = limits.QuestionRate(settings.max_questions_per_minute)
    try:
        rate.take()
    except SageError as exc:
        return exc
    return None


def question_allowed(settings: Settings) -> bool:
    """:func:`take_question`, with the refusal shown."""
    refused = take_question(settings)
    if refused is not None:
        show_error(refused)
    return refused is None


def _sign_in(settings: Settings) -> None:
    """Form callback: try the password (it is never logged, echoed or kept: the form clears the field)."""
    given = st.session_state.get("curator-password", "")
    st.session_state["curator-password"] = ""  # not kept in the session, never sent back to the browser
    gate = st.session_state.get(_GATE)
    if not isinstance(gate, roles.SignInGate):
        gate = st.session_state[_GATE] = roles.SignInGate()
    result = gate.attempt(settings, given)
    if result.ok:
        st.session_state[_ROLE] = Role.CURATOR
        st.session_state[_SIGN_IN_MESSAGE] = None
        log.info("a session signed in as a curator")
    else:
        st.session_state[_SIGN_IN_MESSAGE] = result.message
        log.info("a curator sign-in failed")


def _sign_out() -> None:
    st.session_state.pop(_ROLE, None)


def sidebar(settings: Settings) -> None:
    """The session's role in the sidebar and the way to become a curator (or stop being one)."""
    current = role(settings)
    authenticated = auth_configured()
    st.markdown("**Role**")
    if current is Role.CURATOR:
        st.success("Curator", icon=":material/verified_user:")
        st.caption("You review proposals, verify answers, load tables and see everyone's questions.")
        if st.session_state.get(_ROLE) == Role.CURATOR:
            st.button("Sign out", key="curator-sign-out", on_click=_sign_out, icon=":material/logout:")
        elif authenticated:
            st.button("Log out", key="auth-log-out", on_click=st.logout, icon=":material/logout:")
        return
    st.caption("Visitor: you ask, rate answers (a thumbs up proposes an answer for review) and see your own "
               "questions.")
    if authenticated:
        try:
            logged_in = bool(st.user.is_logged_in)
        except Exception:
            logged_in = False
        if not logged_in:
            st.button("Log in", key="auth-log-in", on_click=st.login, icon=":material/login:")
        else:
            st.caption(md(f"Signed in as {st.user.get('email') or 'a user'}, who is not a curator (SAGE_CURATORS)."))
    if settings.curator_password:
        with st.expander("Curator sign-in", icon=":material/key:"):
            with st.form("curator-sign-in", clear_on_submit=True, border=False):
                st.text_input("Curator password", type="password", key="curator-password", max_chars=200)
                st.form_submit_button("Sign in", on_click=_sign_in, args=(settings,))
            message = st.session_state.get(_SIGN_IN_MESSAGE)
            if message:
                st.warning(md(message), icon=":material/lock:")


__all__ = ["auth_configured", "may", "question_allowed", "role", "session_id", "sidebar", "take_question"]
