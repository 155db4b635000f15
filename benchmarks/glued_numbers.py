"""The numbers a build glued into its pages, stored as a reference and compared with a later build.

    python benchmarks/glued_numbers.py save BUILD_DIR REFERENCE.json
    python benchmarks/glued_numbers.py compare BUILD_DIR REFERENCE.json [--rtol 0]

Speed work must leave the book's results alone: a build before the change is saved, a build after
it is compared, and every glued value (the text a page shows: numbers, sentences, tables) must be
the same. ``BUILD_DIR`` is a book's output folder (``_build`` of ``jupyter-book build``, holding
``jupyter_execute/``, where myst-nb keeps each page's glued outputs in ``PAGE.glue.json``). With ``--rtol`` the numbers inside a value may differ by that relative
tolerance (state why in the change that uses it); everything else must be equal. Values whose key
the reference lacks (a new glue) or the build lacks (a removed one) are listed, and count as
differences only with ``--strict-keys``. Exit 1 when anything differs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from mbutils.publish.standalone import glued_values  # noqa: E402

NUMBER = re.compile(r"[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
#: The representation compared: what the page shows as text (HTML tables and figures are noisier).
MIMES = ("text/plain", "text/markdown", "text/html")


def collect(build: Path) -> dict[str, dict[str, str]]:
    """page -> key -> the glued value's text, for every executed notebook of the build."""
    root = Path(build) / "jupyter_execute"
    if not root.is_dir():
        raise SystemExit(f"{build}: no jupyter_execute/ folder; give the output folder of a book build (_build)")
    pages = {}
    for path in sorted(root.rglob("*.ipynb")):
        values = glued_values(nbformat.read(path, as_version=4))
        stored = path.with_suffix(".glue.json")  # myst-nb moves a page's glued outputs here
        if stored.is_file():
            for key, output in json.loads(stored.read_text(encoding="utf-8")).items():
                values[key] = {mime: "".join(v) if isinstance(v, list) else str(v)
                               for mime, v in output.get("data", {}).items()}
        page = path.relative_to(root).with_suffix("").as_posix()
        pages[page] = {key: next((data[m] for m in MIMES if m in data), "") for key, data in sorted(values.items())}
    return pages


def _same(a: str, b: str, rtol: float) -> bool:
    if a == b:
        return True
    if rtol <= 0 or NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
        fx, fy = float(x.replace(",", "")), float(y.replace(",", ""))
        if abs(fx - fy) > rtol * max(abs(fx), abs(fy)):
            return False
    return True


def compare(build: dict, reference: dict, rtol: float = 0.0) -> tuple[list[str], list[str]]:
    """(differences, keys only on one side), each a list of readable lines."""
    differences, one_side = [], []
    for page in sorted(set(build) | set(reference)):
        new, old = build.get(page, {}), reference.get(page, {})
        for key in sorted(set(new) | set(old)):
            if key not in old:
                one_side.append(f"{page}: {key} is new")
            elif key not in new:
                one_side.append(f"{page}: {key} is gone")
            elif not _same(new[key], old[key], rtol):
                differences.append(f"{page}: {key}: {old[key][:120]!r} -> {new[key][:120]!r}")
    return differences, one_side


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    save = sub.add_parser("save", help="store a build's glued values")
    save.add_argument("build", type=Path)
    save.add_argument("reference", type=Path)
    check = sub.add_parser("compare", help="compare a build's glued values with a stored reference")
    check.add_argument("build", type=Path)
    check.add_argument("reference", type=Path)
    check.add_argument("--rtol", type=float, default=0.0, help="relative tolerance of numbers in a value")
    check.add_argument("--strict-keys", action="store_true", help="new or removed keys count as differences")
    args = parser.parse_args(argv)
    values = collect(args.build)
    if args.command == "save":
        args.reference.parent.mkdir(parents=True, exist_ok=True)
        args.reference.write_text(json.dumps(values, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"saved {sum(map(len, values.values()))} glued values of {len(values)} pages to {args.reference}")
        return 0
    differences, one_side = compare(values, json.loads(args.reference.read_text(encoding="utf-8")), args.rtol)
    for line in differences + one_side:
        print(line)
    failed = bool(differences or (args.strict_keys and one_side))
    n = sum(map(len, values.values()))
    print(f"{n} glued values compared: {len(differences)} differ, {len(one_side)} on one side only"
          + (" (FAILED)" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
