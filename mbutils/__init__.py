"""mbutils: how reliable are language-model micro-benchmarks?

The flow is data -> protocol -> selector -> estimates -> metrics -> figures.
"""

__version__ = "0.1.0"

from .datapath import pin_environment as _pin_data_path  # noqa: E402

_pin_data_path()  # relative MBUTILS_DATA entries mean the folder they were typed in, for every child process

from .benchmark import Benchmark  # noqa: E402

__all__ = ["Benchmark", "__version__"]
