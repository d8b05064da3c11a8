"""Text for Markdown: model and data text never reaches ``st.markdown`` unescaped.

An assumption such as ``![x](https://example.com/?leak)`` must print as text, not fetch an image.
``unsafe_allow_html`` is never used.
"""

from __future__ import annotations

import re
from typing import Any

SOURCE = "U.S. Census Bureau, American Community Survey (ACS) 5-year estimates"

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$:&=\"'])")


def md(text: Any) -> str:
    """Markdown-escape ``text`` so Streamlit shows it literally (no links, images, emphasis, LaTeX, directives)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


#: what GitHub-flavoured Markdown turns into a link by itself, after escapes are resolved (so escaping cannot stop
#: it): ``http://``, ``https://``, ``www.`` and e-mail addresses
_AUTOLINK = re.compile(r"(?i)(?:https?|www)(?=\\?[:.])|@")
#: an invisible WORD JOINER after the scheme, ``www`` or ``@`` breaks an autolink without changing what is shown
_JOINER = "\u2060"


def plain(text: Any) -> str:
    """:func:`md` for what users typed (a question, a feedback reason): no autolinked URL or e-mail either, so a
    visitor's text is shown to curators as the very text, never as a link."""
    return _AUTOLINK.sub(lambda m: m.group(0) + _JOINER, md(text))


def bullets(items: list[str]) -> str:
    return "\n".join(f"- {md(item)}" for item in items)


__all__ = ["SOURCE", "bullets", "md", "plain"]
