"""base.jsonfiles: JSON written for files."""

from __future__ import annotations



def test_json_text_writes_null_for_nan_and_infinity_and_plain_numbers_for_numpy_scalars():
    import numpy as np

    from mbutils.base.jsonfiles import json_text

    text = json_text({"b": np.float64("nan"), "a": [np.int64(3), float("inf"), (1.5,)], 1: "x"}, indent=None)
    assert text == '{"1": "x", "a": [3, null, [1.5]], "b": null}\n'
