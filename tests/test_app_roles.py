"""Roles in the Streamlit app through ``streamlit.testing.v1.AppTest`` (issue 21): the sidebar's curator sign-in
(a wrong password is not echoed, tries are bounded), and a curator's button pressed again by a session that is no
longer a curator — a replayed widget — is refused where its callback runs, with nothing changed."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from app_pages.components import resources, session
from sage import agent, db, feedback, querylog, review, verified
from sage.roles import Role

from .test_app import APP, CURATOR_PASSWORD, TIMEOUT, app_settings, sign_in  # noqa: F401 - app_settings: a fixture


@pytest.fixture
def curator_app(app_settings, monkeypatch):  # noqa: F811 - the fixture imported above
    s = app_settings.replace(curator_password=CURATOR_PASSWORD)
    monkeypatch.setattr(resources, "load_settings", lambda: s)
    st.cache_resource.clear()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    return at, s


@pytest.fixture
def clean(app_settings):  # noqa: F811
    def clear():
        querylog.ensure_tables(app_settings)
        with db.owner(app_settings) as conn:
            conn.execute("DELETE FROM sage.verified_answers")
            conn.execute("DELETE FROM sage.feedback")

    clear()
    yield
    clear()


def _warnings(at: AppTest) -> str:
    return " ".join(w.value for w in at.sidebar.warning).replace("\\", "")


def test_a_wrong_password_is_refused_cleared_and_bounded(curator_app):
    at, _s = curator_app
    assert any("Visitor" in c.value for c in at.sidebar.caption)
    sign_in(at, "not the password <b>x</b>")
    assert "Wrong password (4 tries left" in _warnings(at)
    assert at.sidebar.text_input(key="curator-password").value == "", "the form clears the field"
    assert "not the password" not in " ".join(str(el.value) for el in (*at.sidebar.warning, *at.sidebar.caption))
    for _ in range(4):
        sign_in(at, "still wrong")
    assert "wait 60 s" in _warnings(at)
    sign_in(at, CURATOR_PASSWORD)
    assert "Too many wrong passwords" in _warnings(at) and not at.sidebar.success, "paused: even the right one"


def test_a_curator_signs_in_and_out(curator_app):
    at, _s = curator_app
    sign_in(at, CURATOR_PASSWORD)
    assert any("Curator" in el.value for el in at.sidebar.success)
    next(b for b in at.sidebar.button if b.label == "Sign out").click().run()
    assert not at.sidebar.success and any("Visitor" in c.value for c in at.sidebar.caption)


def test_a_replayed_verify_click_from_a_visitor_is_refused_where_it_runs(curator_app, clean):
    at, s = curator_app
    proposed = agent.ask("median household income in Travis County TX", s, planner="offline", session_id="other")
    feedback.rate(s, proposed.id, "up", role=Role.VISITOR, session_id="other")
    sign_in(at, CURATOR_PASSWORD)
    at.switch_page("app_pages/history.py").run()
    assert not at.exception, at.exception
    verify = at.button(key=f"proposal-accept-{proposed.id}")
    assert verify.label == "Verify"
    at.session_state[session._ROLE] = Role.VISITOR  # the session is a visitor now; the widget is replayed
    verify.click().run()
    assert not at.exception, at.exception
    assert verified.listing(s) == [] and [p.question_id for p in review.proposals(s, role=Role.CURATOR)] == [
        proposed.id]
    assert any("Only a curator verifies answers" in w.value.replace("\\", "") for w in at.warning)
    assert not [b for b in at.button if b.key and b.key.startswith("proposal-accept-")], "a visitor has no list"


def test_a_curator_verifies_a_proposal_with_one_click(curator_app, clean):
    at, s = curator_app
    proposed = agent.ask("median household income in Travis County TX", s, planner="offline", session_id="other")
    feedback.rate(s, proposed.id, "up", role=Role.VISITOR, session_id="other")
    sign_in(at, CURATOR_PASSWORD)
    at.switch_page("app_pages/history.py").run()
    at.button(key=f"proposal-accept-{proposed.id}").click().run()
    assert not at.exception, at.exception
    [entry] = verified.listing(s)
    assert entry.question_id == proposed.id
    assert any("Verified: answer" in el.value.replace("\\", "") for el in at.success)
    assert review.proposals(s, role=Role.CURATOR) == []


def test_a_replayed_remove_click_from_a_visitor_is_refused(curator_app, clean):
    at, s = curator_app
    kept = agent.ask("median household income in Travis County TX", s, planner="offline")
    entry = verified.add(s, kept.id, role=Role.OPERATOR)
    sign_in(at, CURATOR_PASSWORD)
    at.switch_page("app_pages/history.py").run()
    remove = at.button(key=f"verified-remove-{entry.id}")
    at.session_state[session._ROLE] = Role.VISITOR
    remove.click().run()
    assert not at.exception, at.exception
    assert [v.id for v in verified.listing(s)] == [entry.id], "still in the library"
    assert any("Only a curator removes" in w.value.replace("\\", "") for w in at.warning)


def test_what_users_typed_is_shown_as_text_never_as_a_link():
    from app_pages.components.text import plain

    raw = "<b>x</b> [a](http://127.0.0.1:9/x) https://example.org www.example.org eve@example.org"
    shown = plain(raw)
    for link in ("http://", "https://", "www.", "@example"):
        assert link not in shown.replace("\\", "")
    assert shown.replace("\\", "").replace("\u2060", "") == raw, "the very text, with invisible joiners"
