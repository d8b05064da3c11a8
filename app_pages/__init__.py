"""The Streamlit side of census-sage: the pages ``app.py`` routes to (``ask``, ``explore``, ``history``,
``status``) and the components they share (:mod:`app_pages.components`).

Not called ``pages/``: with a ``pages/`` folder, Streamlit runs a deep link such as ``/history`` as a stand-alone page
(the old multipage mode) until some session has run ``app.py``, skipping its setup check and its sidebar.
"""
