"""A fresh machine's first command is often `python -m sage eval FILE` or `ask`, not `setup`: the commands that read
the census data set a database that was never set up up first, as the app does on its first start.  (Before, every
question of an eval failed on the missing tables and the report said 0/45 — as if the planner were wrong.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sage import cli
from sage.errors import NotSetUpError
from sage.evaluate import evaluate_file, read_questions

DEV = Path(__file__).parent / "data" / "questions" / "dev.jsonl"


def test_eval_on_a_database_never_set_up_sets_it_up_and_scores(tmp_path, monkeypatch, capsys):
    data_dir = tmp_path / "pgdata"
    rows = [r for r in read_questions(DEV) if r["kind"] in ("lookup", "rank", "decline")][:6]
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for name in ("DATABASE_URL", "SAGE_READER_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SAGE_DATA_DIR", str(data_dir))
    monkeypatch.setenv("SAGE_CATALOG_INDEX", "off")

    # the scorer itself never reports "0 right" for a database it cannot use: it says what is wrong
    with pytest.raises(NotSetUpError):
        evaluate_file(cli._settings(cli.build_parser().parse_args(["eval", str(questions)])), questions,
                      planner="offline")

    assert cli.main(["eval", str(questions), "--planner", "offline", "--json", "--quiet"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["n"] == len(rows) and report["correct"] == len(rows), report
    assert "not set up yet: setting it up first" in captured.err

    # the next command finds it ready and says nothing about setup
    assert cli.main(["ask", "population of Ohio", "--planner", "offline", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["rows"] and "setting it up" not in captured.err
