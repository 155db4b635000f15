"""Chapter parameters as papermill passes them (text, numbers or None) turned into values."""

from __future__ import annotations

import ast

from mbutils.base.errors import BookError


def _whole(value, what: str) -> int:
    """An integer from papermill's text or number; 2.0 is 2, but 2.9, inf, nan and 'abc' are refused."""
    if isinstance(value, bool):
        raise BookError(f"parameter {what!r}: expected a whole number, got {value!r}")
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            try:
                value = float(text)
            except ValueError:
                raise BookError(f"parameter {what!r}: expected a whole number, got {value!r}") from None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")) or not value.is_integer():
            raise BookError(f"parameter {what!r}: expected a whole number, got {value!r}")
        return int(value)
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise BookError(f"parameter {what!r}: expected a whole number, got {value!r}") from None


def int_list(value, what: str = "sizes") -> list[int] | None:
    """``None``, ``"10,25"``, ``10`` or ``[10, 25]`` -> ``None`` or a list of ints (papermill-friendly)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "profile")):
        return None
    if isinstance(value, str):
        parts = [p for p in value.replace(" ", ",").split(",") if p]
    elif isinstance(value, (int, float)):
        parts = [value]
    else:
        parts = list(value)
    try:
        out = [_whole(p, what) for p in parts]
    except BookError:
        raise BookError(f"parameter {what!r}: expected whole numbers such as '10,25,50', got {value!r}") from None
    if not out or min(out) < 1:
        raise BookError(f"parameter {what!r}: expected positive whole numbers, got {value!r}")
    return out


def name_list(value, what: str = "selectors") -> list[str] | None:
    """``None``, ``"a,b"`` or ``["a", "b"]`` -> ``None`` or a list of names."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "profile")):
        return None
    parts = value.split(",") if isinstance(value, str) else list(value)
    out = [str(p).strip() for p in parts if str(p).strip()]
    if not out:
        raise BookError(f"{what}: expected a comma-separated list, got {value!r}")
    return out


def optional_int(value, what: str) -> int | None:
    """A whole-number parameter, or ``None`` when it is unset (``None``, ``""``, ``"none"``, ``"profile"``)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "profile")):
        return None
    return _whole(value, what)


def parse_cases(cases) -> list[tuple[str, str]]:
    """'gpqa:7b_instruct,bbh:70b_instruct' -> [(benchmark, target set), ...]."""
    out = []
    for item in name_list(cases, "cases") or []:
        if ":" not in item:
            raise BookError(f"cases: expected BENCHMARK:TARGET_SET, got {item!r}")
        data, name = item.split(":", 1)
        out.append((data.strip(), name.strip()))
    return out


#: The first line of the cell papermill injects with the parameters a run was given.
INJECTED_HEADER = "# Parameters"


def reader_parameters() -> dict | None:
    """The parameters the reader gave this run, as papermill injected them (name -> value), or
    ``None`` outside an IPython kernel (a script calling the library: its arguments are its own).

    Read from the kernel's input history: the last cell whose first line is papermill's
    ``# Parameters`` and whose other lines assign literals. A chapter run without injected
    parameters (the book, or a notebook opened in Jupyter) gives ``{}``: every value is the
    page's own, so none is the reader's change.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    if shell is None:
        return None
    for source in reversed(list(shell.user_ns.get("In", []) or [])):
        lines = str(source).splitlines()
        if not lines or lines[0].strip() != INJECTED_HEADER:
            continue
        try:
            tree = ast.parse(str(source))
        except SyntaxError:
            continue
        out = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    out[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    continue
        return out
    return {}
