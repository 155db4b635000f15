"""Run one chapter of the book on any data: papermill into a folder, then HTML with nbconvert.

``run_chapter("bench_gpqa", {"data": "mybundle", "runs": 10}, "out/")`` executes
``chapters/bench_gpqa.ipynb`` with those parameters and writes ``out/bench_gpqa.ipynb`` and
``out/bench_gpqa.html``. Nothing is written unless the whole notebook ran: a failing cell
becomes one :class:`ChapterError` naming the cell and the error.
"""

from __future__ import annotations

import ast
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .errors import MbutilsError

CHAPTERS_DIR = Path(__file__).resolve().parents[1] / "chapters"


class ChapterError(MbutilsError, RuntimeError):
    """A chapter that cannot be found, parameterised or executed."""


def chapter_names() -> list[str]:
    """Chapters that can be run (notebooks in ``chapters/``)."""
    return sorted(p.stem for p in CHAPTERS_DIR.glob("*.ipynb"))


def chapter_path(chapter: str | Path) -> Path:
    """The notebook of a chapter given by name (``bench_gpqa``), file name or path."""
    path = Path(chapter)
    if path.suffix == ".ipynb" and path.is_file():
        return path.resolve()
    candidate = CHAPTERS_DIR / f"{path.stem}.ipynb"
    if candidate.is_file():
        return candidate
    raise ChapterError(f"no chapter {str(chapter)!r}; chapters: {', '.join(chapter_names())}")


def parse_value(text):
    """A command-line parameter value as papermill would type it: int, float, bool, None, else str."""
    if not isinstance(text, str):
        return text
    lowered = text.strip().lower()
    if lowered in ("none", "null"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        value = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else text


def chapter_parameters(chapter: str | Path) -> dict[str, dict]:
    """Names, defaults and help of a chapter's ``parameters`` cell."""
    import papermill

    return papermill.inspect_notebook(str(chapter_path(chapter)))


def _check_params(chapter: Path, params: dict) -> dict:
    known = chapter_parameters(chapter)
    unknown = [name for name in params if name not in known]
    if unknown:
        raise ChapterError(
            f"chapter {chapter.stem!r} has no parameter {', '.join(map(repr, unknown))}; "
            f"its parameters: {', '.join(known)}"
        )
    return {name: parse_value(value) for name, value in params.items()}


@contextmanager
def _environment(changes: dict[str, str | None]):
    old = {k: os.environ.get(k) for k in changes}
    try:
        for key, value in changes.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _failure(err) -> str:
    """The failing cell and error of a papermill run, in one paragraph."""
    name = getattr(err, "ename", type(err).__name__)
    value = getattr(err, "evalue", str(err))
    cell = getattr(err, "exec_count", None)
    where = f"cell [{cell}]" if cell else "a cell"
    return f"{where} raised {name}: {value}"


def render_html(notebook: Path, html_path: Path) -> Path:
    """The executed notebook as one self-contained HTML page (figures embedded)."""
    import warnings

    from nbconvert import HTMLExporter

    with warnings.catch_warnings():  # glue records (myst-nb) have no HTML form; nothing is lost
        warnings.filterwarnings("ignore", message=".*papermill.record.*", category=UserWarning)
        body, _ = HTMLExporter(template_name="lab").from_filename(str(notebook))
    html_path.write_text(body, encoding="utf-8")
    return html_path


def run_chapter(chapter: str | Path, params: dict | None, out_dir: str | Path, *, profile: str | None = None,
                timeout: int | None = None, kernel: str = "python3") -> Path:
    """Execute a chapter with ``params`` into ``out_dir``; returns the path of the HTML page.

    ``params`` values may be strings as typed on a command line (``"10"`` -> 10,
    ``"None"`` -> None, ``"10,25"`` stays a string the chapter parses). ``profile`` sets
    ``MBUTILS_PROFILE`` for the run. Writes ``<chapter>.ipynb`` and ``<chapter>.html``.
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

    source = chapter_path(chapter)
    values = _check_params(source, dict(params or {}))
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ChapterError(f"{out} exists and is not a folder")
    if profile is not None:
        from .book import PROFILES

        if profile not in PROFILES:
            raise ChapterError(f"unknown profile {profile!r}; use one of {', '.join(PROFILES)}")
    from .book import absolute_data_path

    absolute_data_path()  # the kernel's working directory is chapters/, not the caller's
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out, prefix=f".{source.stem}-") as tmp:
        executed = Path(tmp) / f"{source.stem}.ipynb"
        try:
            with _environment({"MBUTILS_PROFILE": profile} if profile else {}):
                papermill.execute_notebook(
                    str(source), str(executed), parameters=values, kernel_name=kernel,
                    cwd=str(source.parent), progress_bar=False, log_output=False,
                    execution_timeout=timeout,
                )
        except PapermillExecutionError as err:
            raise ChapterError(f"chapter {source.stem!r} failed: {_failure(err)}") from None
        html = render_html(executed, Path(tmp) / f"{source.stem}.html")
        final_nb, final_html = out / executed.name, out / html.name
        shutil.move(str(executed), final_nb)
        shutil.move(str(html), final_html)
    return final_html
