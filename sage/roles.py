"""Who may do what in a shared deployment: visitors, curators and the operator (docs/security.md "Roles").

One app serves many browsers, so what one visitor does must never change what another is told.  Three roles:

* a **visitor** (every browser session at first) asks, follows up, edits and runs SQL through the guard, rates
  answers (a thumbs up *proposes* an answer for the verified-answer library, it never verifies; a thumbs down takes
  a verified answer out of service until a curator looks at it: a visitor can make the app more careful, never
  less) and sees the questions of their own session;
* a **curator** (a session signed in with ``SAGE_CURATOR_PASSWORD``, or a Streamlit-authenticated user listed in
  ``SAGE_CURATORS``) also reviews proposals and thumbs down, verifies and removes verified answers, loads tables
  from the Census Data API and sees everyone's questions;
* the **operator** (the command line and the settings) can do all of that and more.

The decision lives here and nowhere else; the pages only ask it (:func:`may`), and every function that does a
curator's action checks the caller's role itself (:func:`require`), so a button a visitor is not shown cannot be
pressed by replaying its widget key either.  The password check (:func:`password_matches`) compares in constant
time, and :class:`SignInGate` bounds the tries (per session, and for the whole process) with a pause after them.
"""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from .errors import ErrorKind, NotAllowedError, SageError
from .settings import Settings


class Role(StrEnum):
    """Who is asking: the role of a browser session, or the operator at the command line."""

    VISITOR = "visitor"
    CURATOR = "curator"
    OPERATOR = "operator"


class Action(StrEnum):
    """What a role may do (see :data:`ALLOWED`)."""

    #: ask, follow up, edit and run SQL through the guard, rate answers, propose an answer for the library
    ASK = "ask"
    #: the questions of one's own session on the History page
    OWN_HISTORY = "own_history"
    #: everyone's questions on the History page
    ALL_HISTORY = "all_history"
    #: the "To review" list: proposals, thumbs down and flagged verified answers
    REVIEW = "review"
    #: put an answer in the verified-answer library (accept a proposal), or reject a proposal
    VERIFY = "verify"
    #: take an entry out of the verified-answer library
    REMOVE_VERIFIED = "remove_verified"
    #: load ACS tables from the Census Data API (the card's button, the Explore page)
    LOAD_TABLES = "load_tables"
    #: rebuild the retrieval index, index the ACS table catalog (the Status page's buttons)
    REBUILD_INDEX = "rebuild_index"


_VISITOR = frozenset({Action.ASK, Action.OWN_HISTORY})
_CURATOR = _VISITOR | {Action.ALL_HISTORY, Action.REVIEW, Action.VERIFY, Action.REMOVE_VERIFIED,
                       Action.LOAD_TABLES, Action.REBUILD_INDEX}
#: what each role may do
ALLOWED: dict[Role, frozenset[Action]] = {
    Role.VISITOR: _VISITOR,
    Role.CURATOR: _CURATOR,
    Role.OPERATOR: frozenset(Action),
}

#: what a refused visitor is told, per action
_WHY = {
    Action.ALL_HISTORY: "Only a curator sees everyone's questions; you see the questions of this session.",
    Action.REVIEW: "Only a curator reviews proposals and answers marked wrong.",
    Action.VERIFY: "Only a curator verifies answers; your thumbs up proposes the answer for review.",
    Action.REMOVE_VERIFIED: "Only a curator removes verified answers; a thumbs down takes one out of service "
                            "until a curator looks at it.",
    Action.LOAD_TABLES: "Only a curator loads tables into the shared database; ask a curator to load it.",
    Action.REBUILD_INDEX: "Only a curator rebuilds the retrieval index.",
}


def may(role: Role | str, action: Action) -> bool:
    """Whether ``role`` may do ``action`` (an unknown role may do what a visitor may)."""
    try:
        role = Role(role)
    except ValueError:
        role = Role.VISITOR
    return action in ALLOWED[role]


def require(role: Role | str, action: Action) -> None:
    """Raise :class:`~sage.errors.NotAllowedError` unless ``role`` may do ``action``: called by every function that
    does a curator's action, where it runs."""
    if not may(role, action):
        raise NotAllowedError(_WHY.get(action, "This needs a curator."))


def role_of_user(settings: Settings, email: str | None, logged_in: bool) -> Role:
    """The role of a user signed in with Streamlit's own authentication: a curator when their email is one of
    ``SAGE_CURATORS`` (compared case-insensitively), else a visitor."""
    if not logged_in or not email:
        return Role.VISITOR
    return Role.CURATOR if email.strip().lower() in settings.curator_emails else Role.VISITOR


def password_matches(settings: Settings, given: object) -> bool:
    """Whether ``given`` is ``SAGE_CURATOR_PASSWORD``, compared in constant time; never when none is set."""
    expected = settings.curator_password
    if not expected or not isinstance(given, str) or not given:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


# ---------------------------------------------------------------------------------------------------------------
# signing in: bounded tries


#: wrong passwords one session may try before it must wait
MAX_TRIES = 5
#: the first wait after them; each further wrong try doubles it (up to :data:`MAX_PAUSE_S`)
PAUSE_S = 60.0
MAX_PAUSE_S = 3600.0
#: wrong passwords the whole process accepts in :data:`PROCESS_WINDOW_S` before every sign-in waits (a new
#: session per try must not get around the per-session bound)
PROCESS_MAX_TRIES = 30
PROCESS_WINDOW_S = 600.0


@dataclass(frozen=True)
class SignInResult:
    """What a sign-in attempt came to: ``role`` is the session's role afterwards; ``message`` what to say."""

    ok: bool
    role: Role
    message: str
    #: seconds to wait before the next try is accepted (0: try again now)
    wait_s: float = 0.0


class SignInGate:
    """The try counter of one session's curator sign-in (kept in the session), plain logic with an injectable
    clock: at most :data:`MAX_TRIES` wrong passwords, then a pause that doubles with each further wrong one.  While
    paused, a try is refused without looking at the password.  A success resets it."""

    def __init__(self, *, max_tries: int = MAX_TRIES, pause_s: float = PAUSE_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_tries = max_tries
        self.pause_s = pause_s
        self.clock = clock
        self.failures = 0
        self.paused_until = 0.0

    def wait_s(self) -> float:
        return max(0.0, self.paused_until - self.clock())

    def attempt(self, settings: Settings, given: object, shared: ProcessGate | None = None) -> SignInResult:
        """Try ``given`` as the curator password (never logged, never echoed)."""
        if not settings.curator_password:
            return SignInResult(False, Role.VISITOR, "Curator sign-in is off: SAGE_CURATOR_PASSWORD is not set.")
        shared = shared if shared is not None else PROCESS_GATE
        wait = max(self.wait_s(), shared.wait_s())
        if wait > 0:
            return SignInResult(False, Role.VISITOR, f"Too many wrong passwords: wait {_duration(wait)} and try "
                                                     "again.", wait)
        if password_matches(settings, given):
            self.failures, self.paused_until = 0, 0.0
            return SignInResult(True, Role.CURATOR, "Signed in as a curator.")
        self.failures += 1
        shared.failed()
        if self.failures >= self.max_tries:
            pause = min(MAX_PAUSE_S, self.pause_s * 2 ** (self.failures - self.max_tries))
            self.paused_until = self.clock() + pause
            return SignInResult(False, Role.VISITOR, f"Wrong password, {self.failures} times: wait "
                                                     f"{_duration(pause)} before the next try.", pause)
        left = self.max_tries - self.failures
        return SignInResult(False, Role.VISITOR, f"Wrong password ({left} {'try' if left == 1 else 'tries'} left "
                                                 "before a pause).")


class ProcessGate:
    """Wrong passwords across all sessions of the process: past :data:`PROCESS_MAX_TRIES` within
    :data:`PROCESS_WINDOW_S`, every sign-in waits until the window has moved on."""

    def __init__(self, *, max_tries: int = PROCESS_MAX_TRIES, window_s: float = PROCESS_WINDOW_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_tries = max_tries
        self.window_s = window_s
        self.clock = clock
        self._times: list[float] = []
        self._lock = threading.Lock()

    def _recent(self) -> list[float]:
        now = self.clock()
        self._times = [t for t in self._times if now - t < self.window_s]
        return self._times

    def failed(self) -> None:
        with self._lock:
            self._recent().append(self.clock())

    def wait_s(self) -> float:
        with self._lock:
            times = self._recent()
            if len(times) < self.max_tries:
                return 0.0
            return max(0.0, times[-self.max_tries] + self.window_s - self.clock())


#: the process's own gate (every session of an app process shares it)
PROCESS_GATE = ProcessGate()


def _duration(seconds: float) -> str:
    seconds = max(1, round(seconds))
    return f"{seconds} s" if seconds < 120 else f"{round(seconds / 60)} minutes"


def sign_in_error(result: SignInResult) -> SageError:
    """A failed sign-in as an error to show."""
    return SageError(result.message, kind=ErrorKind.SIGN_IN)


__all__ = ["ALLOWED", "MAX_TRIES", "PAUSE_S", "PROCESS_GATE", "Action", "ProcessGate", "Role", "SignInGate",
           "SignInResult", "may", "password_matches", "require", "role_of_user", "sign_in_error"]
