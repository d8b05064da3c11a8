"""The frame and building it: ``frame`` holds the typed frame (``Query``, ``Op``, ``GeoSet``, ``Rank``, ``Change``);
``intent`` builds it from a parse, with ``named`` (named places), ``sets`` (sets of places) and ``changes``
(change over time)."""
