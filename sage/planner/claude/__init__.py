"""The Claude planner: the rules and worked examples it is told (``prompt``, ``examples``), the per-question message
(``blocks``, ``message``, with the places block from ``resolve``), the call and its validated reply (``claude``,
``plan_model``)."""
