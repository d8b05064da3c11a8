"""census-sage: plain-English questions about ACS 5-year estimates, answered with SQL you can check.

The pipeline, one module per stage: ``retrieve`` -> ``planner`` -> ``guard`` -> ``execute`` -> ``agent``.
This package never imports streamlit; ``app.py`` and ``app_pages/`` draw what it returns.
"""

__version__ = "0.1.0"
