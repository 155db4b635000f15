"""Checks for your own extensions of mbutils: run the selector contract on a selector before an experiment.

>>> from mbutils import make_selector
>>> from mbutils.testing import check_selector
>>> check_selector(make_selector("random"))  # passes silently; a broken rule raises SelectorContractError
"""

from mbutils.methods.selectors.contract import SelectorContractError, check_selector

__all__ = ["SelectorContractError", "check_selector"]
