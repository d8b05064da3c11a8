"""Rewrites of a question for the invariance suite (CheckList-style): meaning-preserving ones, whose reading must be
the same frame or a decline/choice, and meaning-changing ones, whose reading must never be the old frame.

Each rewrite returns the rewritten question, or None where it does not apply.  Used by tests/test_invariance.py
and, for the rates per rewrite, by ``python tests/invariance.py`` (a report, no assertion)."""

from __future__ import annotations

import re
from collections.abc import Callable

NUMBER_WORDS = {"2": "two", "3": "three", "4": "four", "5": "five", "6": "six", "7": "seven", "8": "eight",
                "9": "nine", "10": "ten", "12": "twelve", "20": "twenty"}
#: postal codes and the AP Stylebook's abbreviations of a few states
STATES = {"Texas": ("TX", None), "California": ("CA", "Calif."), "Florida": ("FL", "Fla."), "Ohio": ("OH", None),
          "Georgia": ("GA", "Ga."), "Illinois": ("IL", "Ill."), "Pennsylvania": ("PA", "Pa."),
          "Massachusetts": ("MA", "Mass."), "Michigan": ("MI", "Mich."), "Virginia": ("VA", "Va."),
          "Arizona": ("AZ", "Ariz."), "Colorado": ("CO", "Colo."), "Oregon": ("OR", "Ore."),
          "Tennessee": ("TN", "Tenn."), "Minnesota": ("MN", "Minn."), "Maryland": ("MD", "Md.")}


def lower(q: str) -> str | None:
    return q.lower() if q != q.lower() else None


def no_punctuation(q: str) -> str | None:
    out = re.sub(r"[?!;]+", "", q).strip()
    return out if out != q else None


def please(q: str) -> str | None:
    return q.rstrip() + " please"


def thanks(q: str) -> str | None:
    return q.rstrip() + " Thanks!"


def preamble(q: str) -> str | None:
    return "For a class project: " + q[0].lower() + q[1:] if q else None


def reporter(q: str) -> str | None:
    return "I'm a reporter on deadline. " + q


def digits_to_words(q: str) -> str | None:
    m = re.search(r"\b(top|bottom|which|the)\s+(2|3|4|5|6|7|8|9|10|12|20)\b(?!\s*(%|percent|,\d|\d))", q,
                  re.IGNORECASE)
    if not m:
        return None
    return q[:m.start(2)] + NUMBER_WORDS[m.group(2)] + q[m.end(2):]


def words_to_digits(q: str) -> str | None:
    inverse = {v: k for k, v in NUMBER_WORDS.items()}
    m = re.search(r"\b(top|bottom|which|the)\s+(" + "|".join(inverse) + r")\b", q, re.IGNORECASE)
    if not m or m.group(2).lower() not in inverse:
        return None
    return q[:m.start(2)] + inverse[m.group(2).lower()] + q[m.end(2):]


def postal_code(q: str) -> str | None:
    for name, (code, _ap) in STATES.items():
        m = re.search(rf",\s+{name}\b(?!')", q)
        if m:
            return q[:m.start()] + f", {code}" + q[m.end():]
    return None


def ap_style(q: str) -> str | None:
    for name, (_code, ap) in STATES.items():
        m = re.search(rf",\s+{name}\b(?!')", q)
        if m and ap:
            return q[:m.start()] + f", {ap}" + q[m.end():]
    return None


def possessive(q: str) -> str | None:
    """"population of Texas" <-> "Texas's population"."""
    m = re.match(r"^(what is|what's|whats) the ([a-z ]+?) (?:of|in) ([A-Z][a-z]+(?: [A-Z][a-z]+)?)\??$", q.strip(),
                 re.IGNORECASE)
    if not m:
        return None
    return f"{m.group(1)} {m.group(3)}'s {m.group(2)}?"


def typo(q: str) -> str | None:
    """One letter dropped from the first long capitalised name ("Pennsylvania" -> "Pensylvania")."""
    m = re.search(r"\b([A-Z][a-z]{7,})\b", q)
    if not m:
        return None
    word = m.group(1)
    i = len(word) // 2
    return q[:m.start()] + word[:i] + word[i + 1:] + q[m.end():]


# ---- meaning-changing rewrites: the old frame may never come back

def unknown_name(q: str) -> str | None:
    """An unknown name added to a list of places ("Travis County and Dallas County" -> "..., Zorbaville ..."): a
    capitalised name on both sides of the joiner ("My partner and I" is no list of places)."""
    m = re.search(r"\b[A-Z][A-Za-z.]*\s+(and|vs\.?|versus|or)\s+(?=[A-Z][a-z])", q)
    if not m:
        return None
    return q[:m.start(1)] + ", Zorbaville " + q[m.start(1):]


def other_than(q: str) -> str | None:
    """"other than Wyoming" added to a question about a set of states."""
    if not re.search(r"\bstates\b", q, re.IGNORECASE) or re.search(r"\bWyoming\b", q):
        return None
    return q.rstrip(" ?.") + ", other than Wyoming?"


def percent_change(q: str) -> str | None:
    """"percent" added before a change ("grew the most" -> "grew the most in percent")."""
    # ("grew up in rural Georgia" is no change)
    m = re.search(r"\b(grew|gained|lost|added|increase|decline|change)(d)?\b(?!\s+up\b)", q, re.IGNORECASE)
    if not m or re.search(r"percent|%|pct", q, re.IGNORECASE):
        return None
    return q[:m.start()] + "percent " + q[m.start():]


PRESERVING: dict[str, Callable[[str], str | None]] = {
    "lowercase": lower, "punctuation removed": no_punctuation, "trailing please": please, "trailing thanks": thanks,
    "preamble about the asker": preamble, "a sentence about the asker": reporter, "digits to words": digits_to_words,
    "words to digits": words_to_digits, "state as postal code": postal_code, "state in AP style": ap_style,
    "in X to X's": possessive, "one-letter typo in a name": typo,
}
CHANGING: dict[str, Callable[[str], str | None]] = {
    "unknown name added to a list": unknown_name, "other than X added": other_than,
    "percent added to a change": percent_change,
}


#: what a plan must say when a meaning-changing rewrite leaves its SQL as it was (the change changes nothing there:
#: "other than Wyoming" in a ranking of the New England states; "percent" before a change whose answer already shows
#: the percent change): the reading names it, so the old answer is not given silently
ACKNOWLEDGED: dict[str, Callable[[object], bool]] = {
    "other than X added": lambda plan: any("Wyoming" in a for a in plan.assumptions),  # type: ignore[attr-defined]
    "percent added to a change": lambda plan: "percent" in (plan.standalone or "")  # type: ignore[attr-defined]
    or " AS pct_change" in (plan.sql or ""),  # type: ignore[attr-defined]
}


def same_answer(a: str, b: str) -> bool:
    """Two readings answer alike: their SQL is the same but for white space (the frame also keeps the words as
    typed, which a rewrite changes by design)."""
    def squash(sql: str) -> str:
        return re.sub(r"\s+", " ", sql or "").strip()
    return bool(a) and squash(a) == squash(b)


def measure(planner, questions) -> tuple[dict[str, list[int]], dict[str, list[tuple[str, str]]]]:
    """For every rewrite: [applied, same (or, for a changing one, changed or — see :data:`ACKNOWLEDGED` — the same
    with the reading saying why), declined or asked, violations], and the violations (question, rewrite)."""
    stats: dict[str, list[int]] = {name: [0, 0, 0, 0] for name in (*PRESERVING, *CHANGING)}
    bad: dict[str, list[tuple[str, str]]] = {name: [] for name in stats}
    for q in questions:
        base = planner.plan(q)
        if base.declined:
            continue
        for name, fn in (*PRESERVING.items(), *CHANGING.items()):
            rewritten = fn(q)
            if not rewritten:
                continue
            plan = planner.plan(rewritten)
            s = stats[name]
            s[0] += 1
            alike = same_answer(plan.sql, base.sql)
            if plan.declined:
                s[2] += 1
            elif alike == (name in PRESERVING):
                s[1] += 1
            elif alike and name in ACKNOWLEDGED and ACKNOWLEDGED[name](plan):
                s[1] += 1  # the same answer, and the reading says why
            else:
                s[3] += 1
                bad[name].append((q, rewritten))
    return stats, bad


def regression_questions(folder) -> list[str]:
    """The single questions with an answer (gold SQL) of the regression suite."""
    import json

    out = []
    for path in sorted(folder.glob("*.jsonl")):
        if path.name.startswith("retrieval_"):
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            if row.get("question") and row.get("gold_sql"):
                out.append(row["question"])
    return out


if __name__ == "__main__":  # the rates per rewrite: python tests/invariance.py (on a set-up database)
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

    from sage.planner.offline.planner import OfflinePlanner
    from sage.settings import load_settings

    stats, bad = measure(OfflinePlanner(load_settings()), regression_questions(Path(__file__).parent / "data" /
                                                                               "questions"))
    for name, (n, same, declined, violations) in stats.items():
        kind = "same" if name in PRESERVING else "changed"
        print(f"{name:32s} applied {n:4d}  {kind} {same:4d}  declined or asked {declined:4d}  violations {violations}")
