"""A chapter that fails keeps the notebook executed up to the failing cell, and the message says where."""

from __future__ import annotations

import json

import pytest

from helpers import MYST_FRONT_MATTER
from mbutils.base.errors import ChapterError
from mbutils.publish.chapters import run_chapter

PAGE = MYST_FRONT_MATTER + """
# A page that fails

```{code-cell}
:tags: [parameters]

runs = 3
```

```{code-cell}
first = runs * 2
print("before the failure", first)
```

```{code-cell}
raise ValueError("on purpose")
```
"""


def test_a_failed_chapter_keeps_its_notebook_up_to_the_failing_cell(tmp_path):
    page = tmp_path / "failing.md"
    page.write_text(PAGE)
    with pytest.raises(ChapterError, match="failed") as caught:
        run_chapter(page, {"runs": "4"}, tmp_path / "out", html=False)
    kept = tmp_path / "out" / "failing.failed.ipynb"
    assert str(kept) in str(caught.value) and kept.is_file()
    cells = json.loads(kept.read_text())["cells"]
    outputs = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert any("before the failure 8" in "".join(o.get("text", "")) for o in outputs)
    assert any(o.get("ename") == "ValueError" for o in outputs)
