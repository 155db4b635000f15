"""Chapter parameters as papermill passes them (text, numbers or None) turned into values."""

from __future__ import annotations

from mbutils.base.errors import BookError


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
        out = [int(p) for p in parts]
    except (TypeError, ValueError):
        raise BookError(f"{what}: expected integers such as '10,25,50', got {value!r}") from None
    if not out or min(out) < 1:
        raise BookError(f"{what}: expected positive integers, got {value!r}")
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


def _opt_int(value, what: str) -> int | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "profile")):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise BookError(f"{what}: expected an integer, got {value!r}") from None


def parse_cases(cases) -> list[tuple[str, str]]:
    """'gpqa:7b_instruct,bbh:70b_instruct' -> [(benchmark, target set), ...]."""
    out = []
    for item in name_list(cases, "cases") or []:
        if ":" not in item:
            raise BookError(f"cases: expected BENCHMARK:TARGET_SET, got {item!r}")
        data, name = item.split(":", 1)
        out.append((data.strip(), name.strip()))
    return out
