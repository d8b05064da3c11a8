"""Follow-ups: a turn read as an edit of the previous turn's frame (``followup``; a period or change asked of it,
``followup_time``)."""
