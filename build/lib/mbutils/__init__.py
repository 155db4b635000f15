"""mbutils: how reliable are language-model micro-benchmarks?

The flow is data -> protocol -> selector -> estimates -> metrics -> figures.
"""

__version__ = "0.1.0"

from .benchmark import Benchmark  # noqa: E402

__all__ = ["Benchmark", "__version__"]
