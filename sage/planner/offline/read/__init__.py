"""Reading: each module reads one kind of thing in the question (places, localities, bare names, units by code,
measures, thresholds, ranking, periods, scope) with the shared word lists of ``vocabulary``; ``parser`` runs them
and ``parsed`` holds what they found."""
