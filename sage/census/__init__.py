"""The census data: schema and comments (:mod:`.schema`), the migration of a previous version's database
(:mod:`.migrate`), the shipped-extract loader (:mod:`.loader`), setup (:mod:`.setup`), the semantic layer
(:mod:`.semantic`) and the Census Data API pipeline (:mod:`.api`, :mod:`.download`, :mod:`.fetch`)."""
