"""Benchmark bundles on disk: the folder format, reading with a problem report, atomic writing.

A bundle folder holds ``responses.csv`` (models x items, 0/1, empty = missing),
``items.csv`` (``item,subtask`` + optional columns), and optionally ``confidence.csv``,
``models.csv``, ``target_sets.json`` and ``provenance.json`` (see data/README.md). ``format`` names
the files, ``search`` finds a folder, ``read`` validates and loads it (``problems``, ``files``,
``responses``, ``metadata``, ``record`` and ``options`` are its parts; ``harness`` and ``tasknames``
what ``build-micro`` needs of it), ``write`` saves one.
"""

from mbutils.data.benchmark import Benchmark
from mbutils.data.bundle.format import CONFIDENCE, ITEMS, MISSING_POLICIES, MODELS, RESPONSES, TARGET_SETS
from mbutils.data.bundle.problems import Problem
from mbutils.data.bundle.read import load_bundle, validate_bundle
from mbutils.data.bundle.search import find_bundle, list_bundles, search_path
from mbutils.data.bundle.write import save_bundle

__all__ = ["Benchmark", "CONFIDENCE", "ITEMS", "MISSING_POLICIES", "MODELS", "Problem", "RESPONSES", "TARGET_SETS",
           "find_bundle", "list_bundles", "load_bundle", "save_bundle", "search_path", "validate_bundle"]
