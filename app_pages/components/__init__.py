"""What the pages share: where Streamlit meets ``sage``.

* :mod:`.text` — escaping model and data text for Markdown;
* :mod:`.resources` — settings, first-run setup and the planner, cached per process;
* :mod:`.errors` — a :class:`~sage.errors.SageError` as a user should see it;
* :mod:`.turns` — one question and its answer in the conversation (:class:`~.turns.Turn`, kept in session state);
* :mod:`.card` — the answer card (with its link and thumbs up / down);
* :mod:`.fetching` — loading an ACS table from the app (a decline card's button, the Explore page's);
* :mod:`.session` — who this browser session is: its id, its role (visitor or curator), the curator sign-in and
  the per-session question rate.

``sage`` never imports streamlit (docs/design.md), and pages stay thin: a page reads its widgets, calls one ``sage``
function per step and draws what comes back with these helpers.
"""

from .card import answer_card, app_url
from .errors import show_error
from .fetching import fetch_action, fetch_notice
from .resources import ensure_ready, get_planner, get_settings, settings_or_stop
from .session import may, question_allowed, role, session_id, take_question
from .text import SOURCE, bullets, md, plain
from .turns import Turn, ask_later, conversation, new_conversation, new_turn, run_with_status

__all__ = ["SOURCE", "Turn", "answer_card", "app_url", "ask_later", "bullets", "conversation", "ensure_ready",
           "fetch_action", "fetch_notice", "get_planner", "get_settings", "md", "new_conversation", "new_turn",
           "may", "plain", "question_allowed", "role", "run_with_status", "session_id", "settings_or_stop",
           "show_error", "take_question"]
