"""The offline census planner, in folders by stage: ``read/`` turns the question's words into readings, ``frame/``
builds the typed frame from them, ``followup/`` edits a previous frame, ``compile/`` writes the frame's SQL,
``explain`` says how it was read, ``declines`` says why it cannot be answered.  ``planner`` ties them together."""
