"""The offline planner's regression suite: every question set the project has ever measured it on, through the
real path (retrieve -> plan -> guard -> execute as the read-only role), scored by :func:`sage.evaluate.score`.

A question that passed may not start failing.  The sets are the development questions (``dev.jsonl``) and every
probe set written blind by people who had not read the planner (``offline_*.jsonl`` and the later ones); see the
README for what each set is and how it scored before the fixes it prompted.  Gold results come from each row's
gold SQL run on the same database, never from hard-coded values.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sage.evaluate import read_questions, score

QUESTIONS = Path(__file__).parent / "data" / "questions"


def _rows():
    for path in sorted(QUESTIONS.glob("*.jsonl")):
        if path.name.startswith("retrieval_"):
            continue  # topic sets with acceptable tables, not gold SQL: benchmarks/bench_catalog.py scores them
        for row in read_questions(path):
            if "turns" in row:
                continue  # conversations are scored by tests/test_conversations.py
            yield pytest.param(row, id=f"{path.stem}:{row['id']}")


@pytest.mark.parametrize("row", list(_rows()))
def test_question(settings, row):
    item = score(settings, row, planner="offline")
    assert item["correct"], (
        f"{row['question']!r}: {item['error']}\n  sql: {item['sql']}\n  assumptions: {item['assumptions']}\n"
        f"  rows: {str(item['rows'])[:300]}\n  gold: {str(item['gold_rows'])[:300]}"
    )
