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


def bullets(items: list[str]) -> str:
    return "\n".join(f"- {md(item)}" for item in items)


__all__ = ["SOURCE", "bullets", "md"]
