"""The bundle folder format: its file names and the policies for empty cells (see data/README.md)."""

RESPONSES = "responses.csv"
ITEMS = "items.csv"
CONFIDENCE = "confidence.csv"
MODELS = "models.csv"
TARGET_SETS = "target_sets.json"
#: Optional, never compressed: where the data come from, and what the files do not say (answer options,
#: harness documents); read by :mod:`mbutils.data.bundle.record`.
PROVENANCE = "provenance.json"

#: How a loader may resolve empty cells: refuse, drop incomplete models, or drop incomplete items.
MISSING_POLICIES = ("error", "drop_models", "drop_items")
