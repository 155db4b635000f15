"""Run one chapter of the book on any data: papermill into a folder, then HTML with nbconvert.

Chapters are MyST Markdown notebooks (``chapters/<name>.md``, a jupytext header and
``{code-cell}`` blocks): the text files are the only source. ``run_chapter("bench_gpqa",
{"data": "mybundle", "runs": 10}, "out/")`` reads ``chapters/bench_gpqa.md``, executes it
with papermill and writes ``out/bench_gpqa.ipynb`` and ``out/bench_gpqa.html``. Nothing is
written unless the whole notebook ran: a failing cell becomes one :class:`ChapterError`
naming the cell and the error. :func:`to_notebook` gives plain-papermill and Jupyter users
the ``.ipynb`` form of a chapter.
"""

from __future__ import annotations

import ast
import io
import logging
import os
import re
import shutil
import sys
import tempfile
import tokenize
from contextlib import contextmanager
from pathlib import Path

from mbutils.data.datapath import data_environment
from mbutils.base.errors import ChapterError, ChapterParameterError
from mbutils.base.folders import clear_stale
from mbutils.book.escaping import literal
from mbutils.book.profiles import PROFILES
from mbutils.base.validation import check_choice
from mbutils.publish import kernel_guard
from mbutils.publish.book_index import book_index
from mbutils.publish.preflight import check_values, run_chapter_wording
from mbutils.publish.publish import launch_notebook
from mbutils.publish.standalone import plain_notebook

SOURCE_CHAPTERS = Path(__file__).resolve().parents[2] / "chapters"  # present in a source checkout
CHAPTERS_ENV = "MBUTILS_CHAPTERS"


def chapter_dirs() -> list[Path]:
    """Where chapters are looked up by name: ``$MBUTILS_CHAPTERS``, the book's own, then ``./chapters``.

    The book's own chapters come before the current folder's, so a file that happens to sit in
    ``./chapters`` under a book chapter's name never runs in its place; a chapter of your own
    runs by its path, or by name from a folder named in ``$MBUTILS_CHAPTERS``.
    """
    dirs = [Path(p) for p in os.environ.get(CHAPTERS_ENV, "").split(os.pathsep) if p.strip()]
    dirs += [SOURCE_CHAPTERS, Path.cwd() / "chapters"]
    seen, found = set(), []
    for d in dirs:
        resolved = d.expanduser().resolve()
        if resolved.is_dir() and resolved not in seen:
            seen.add(resolved)
            found.append(resolved)
    return found


def is_notebook_source(path: Path) -> bool:
    """A MyST Markdown notebook: a ``.md`` file whose front matter names a kernel."""
    if path.suffix != ".md" or not path.is_file():
        return False
    head = path.read_text(encoding="utf-8", errors="replace")[:2000]
    return head.startswith("---") and "kernelspec:" in head.split("\n---", 1)[0]


def chapter_names() -> list[str]:
    """Chapters that can be run (MyST notebooks on the chapter path)."""
    names = set()
    for d in chapter_dirs():
        names.update(p.stem for p in d.glob("*.md") if is_notebook_source(p))
    return sorted(names)


def chapter_path(chapter: str | Path) -> Path:
    """The source of a chapter given by name (``bench_gpqa``), file name or path."""
    path = Path(chapter).expanduser()
    if path.suffix in (".md", ".ipynb") and path.is_file():
        if path.suffix == ".md" and not is_notebook_source(path):
            raise ChapterError(f"{path} is a plain Markdown page, not a chapter notebook "
                               "(its front matter has no kernelspec)")
        return path.resolve()
    if path.name == str(chapter) or path.suffix == "":
        for d in chapter_dirs():
            candidate = d / f"{path.stem}.md"
            if is_notebook_source(candidate):
                return candidate
    known = ", ".join(chapter_names()) or "none found (run from the book's folder or set MBUTILS_CHAPTERS)"
    raise ChapterError(f"no chapter {str(chapter)!r}; chapters: {known}")


def read_chapter(chapter: str | Path):
    """A chapter as an nbformat notebook (from its MyST text, or an ``.ipynb`` given by path)."""
    import jupytext
    import nbformat

    path = chapter_path(chapter)
    try:
        if path.suffix == ".ipynb":
            return nbformat.read(path, as_version=4)
        return jupytext.read(path, fmt="md:myst")
    except Exception as err:  # a broken file is the user's input, not a bug
        raise ChapterError(f"{path}: cannot be read as a notebook ({type(err).__name__}: {err})") from None


def data_names(given) -> str:
    """How a title names the bundles of a ``data`` value: each name (a folder by its last part), comma-separated."""
    names = [n.strip() for n in str(given).split(",") if n.strip()]
    return ", ".join(Path(n).name or n for n in names) or str(given)


def retitle_for_data(nb, chapter: str | Path, values: dict):
    """A chapter run on data other than its own says so in its title: '# GPQA' run with ``data`` set to a
    reader's bundle becomes '# GPQA, run on mybundle', so the page never looks like GPQA's own. The names
    are the reader's text, shown as written (:func:`~mbutils.book.escaping.literal`): never markup."""
    given = values.get("data")
    default = chapter_parameters(chapter).get("data", {}).get("default")
    try:
        default = ast.literal_eval(default) if default is not None else None
    except (ValueError, SyntaxError):
        default = None
    if given is None or str(given) == str(default):
        return nb
    name = literal(data_names(given), markdown=True)
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        lines = cell.source.split("\n")
        heading = next((i for i, line in enumerate(lines) if line.startswith("# ")), None)
        if heading is not None:
            lines[heading] = f"{lines[heading].rstrip()}, run on {name}"
            cell.source = "\n".join(lines)
            break
    return nb


def to_notebook(chapter: str | Path, out: str | Path, *, launch: bool = False, values: dict | None = None) -> Path:
    """Write a chapter as ``.ipynb`` (no outputs) for papermill or Jupyter; returns the path.

    ``launch``: open with the install cell of :func:`mbutils.publish.publish.launch_cell` (for the
    notebooks the book's Colab and Binder buttons open)."""
    import nbformat

    nb = read_chapter(chapter)
    if values:
        nb = retitle_for_data(nb, chapter, values)
    if launch:
        nb = launch_notebook(nb)
    out = Path(out)
    if out.is_dir():
        out = out / f"{chapter_path(chapter).stem}.ipynb"
    if out.suffix != ".ipynb":
        raise ChapterError(f"{out}: the notebook file name must end in .ipynb")
    tmp = out.with_name(f".{out.name}.tmp")
    nbformat.write(nb, tmp)
    os.replace(tmp, out)
    return out


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


def parameters_cell(nb):
    """The code cell tagged ``parameters`` (papermill's convention), or None."""
    return next((c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])),
                None)


def chapter_parameters(chapter: str | Path) -> dict[str, dict]:
    """Names, defaults and help (the trailing comment) of a chapter's ``parameters`` cell."""
    cell = parameters_cell(read_chapter(chapter))
    if cell is None:
        return {}
    source = cell.source
    comments = {tok.start[0]: tok.string.lstrip("# ").strip()
                for tok in tokenize.generate_tokens(io.StringIO(source).readline) if tok.type == tokenize.COMMENT}
    lines = source.splitlines()
    params = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            params[name] = {"name": name, "default": ast.get_source_segment(source, node.value),
                            "help": comments.get(node.lineno) or _comment_above(lines, node.lineno, comments, name)}
    return params


def _comment_above(lines: list[str], lineno: int, comments: dict, name: str) -> str:
    """The help of a parameter whose comment stands on the lines right above it, wrapped so the cell fits the
    page: the contiguous comment lines before ``lineno`` (1-based) from the one that starts ``# <name>:``."""
    block = []
    i = lineno - 1
    while i >= 1 and lines[i - 1].lstrip().startswith("#") and i in comments:
        block.insert(0, comments[i])
        i -= 1
    start = next((j for j in range(len(block) - 1, -1, -1) if block[j].startswith(f"{name}:")), None)
    if start is None:
        return ""
    return " ".join([block[start][len(name) + 1:].strip(), *block[start + 1:]]).strip()


#: Counts a chapter parameter may take, checked before anything runs (the command line's limits).
PARAMETER_BOUNDS = {"runs": (1, 100_000), "source_runs": (1, 100_000), "sources": (1, 10**6),
                    "targets": (2, 10**6), "seed": (0, 2**63 - 1), "jobs": (-1, 1024)}


def _check_params(chapter: Path, params: dict) -> dict:
    """The typed values of ``params``: parameters the chapter has, counts within :data:`PARAMETER_BOUNDS`
    (else a :class:`~mbutils.base.errors.ChapterParameterError`)."""
    known = chapter_parameters(chapter)
    unknown = [name for name in params if name not in known]
    if unknown:
        raise ChapterParameterError(
            f"chapter {chapter.stem!r} has no parameter {', '.join(map(repr, unknown))}; "
            f"its parameters: {', '.join(known)}"
        )
    values = {name: parse_value(value) for name, value in params.items()}
    for name, (low, high) in PARAMETER_BOUNDS.items():
        value = values.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ChapterParameterError(f"chapter {chapter.stem!r}: parameter {name} must be a whole number from "
                                        f"{low:,} to {high:,}, not {str(value)[:40]!r}")
    return values


@contextmanager
def temporary_environment(changes: dict[str, str | None]):
    """Set (a value) or unset (None) environment variables for the block, and put them back after it."""
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


def _keep_failed(executed: Path, out: Path) -> Path | None:
    """Move the notebook papermill wrote up to the failing cell to ``out/<name>.failed.ipynb``, so the
    reader can open it at the error (None when papermill wrote none)."""
    if not executed.is_file():
        return None
    kept = out / f"{executed.stem}.failed.ipynb"
    shutil.move(str(executed), kept)
    return kept


def _failure(err, parameters=()) -> str:
    """The failing cell and error of a papermill run, in one paragraph; advice naming an option of the
    experiment command is worded with the chapter's ``-p`` names (``parameters``)."""
    name = getattr(err, "ename", type(err).__name__)
    value = run_chapter_wording(str(getattr(err, "evalue", str(err))).rstrip().rstrip("."), parameters)
    cell = getattr(err, "exec_count", None)
    where = f"cell [{cell}]" if cell else "a cell"
    return f"{where} raised {name}: {value}"


def _running_cell(executed: Path) -> str:
    """The code cell papermill started last in the notebook it was writing: the one running when the
    kernel died ("a cell" when it cannot tell)."""
    import nbformat

    try:
        code = [c for c in nbformat.read(executed, as_version=4).cells  # numbered as in the chapter
                if c.cell_type == "code" and "injected-parameters" not in c.metadata.get("tags", [])]
    except Exception:  # noqa: BLE001 -- no notebook, or one cut off mid-write: the message says less
        return "a cell"
    started = [n for n, c in enumerate(code, 1) if c.metadata.get("papermill", {}).get("start_time")]
    if not started:
        return "a cell"
    first = code[started[-1] - 1].source.strip().split("\n")[0]
    return f"code cell {started[-1]} of {len(code)} ({first[:60]!r})"


#: Lines of the kernel's own log that say nothing about why it stopped.
_KERNEL_NOISE = re.compile(r"^\[IPKernelApp\]|^\s*$|KeyboardInterrupt caught in kernel")


def _last_words(log: Path | None, lines: int = 3) -> str:
    """The last lines the kernel wrote to its log (its standard streams), noise left out, on one line."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace") if log is not None else ""
    except OSError:
        return ""
    kept = [line.strip() for line in text.splitlines() if not _KERNEL_NOISE.search(line)]
    return " | ".join(kept[-lines:])[-400:]


@contextmanager
def _quiet(logger_name: str):
    """Nothing that ``logger_name`` logs reaches the terminal: papermill logs each failure it raises (a
    timeout, a dead kernel), and :func:`run_chapter` reports each in one message of its own."""
    logger = logging.getLogger(logger_name)
    handler, propagate = logging.NullHandler(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _timed_out(err, notebook: Path) -> str:
    """Which code cell a timeout stopped, found from the source the error quotes (it holds no index)."""
    import nbformat

    quoted = str(err).split("-------------------\n")[1:2]
    code = [c for c in nbformat.read(notebook, as_version=4).cells if c.cell_type == "code"]
    for number, cell in enumerate(code, 1):
        first = cell.source.strip().split("\n")[0]
        if quoted and (quoted[0].strip() == cell.source.strip() or (first and quoted[0].startswith(repr([first])[:-1]))):
            return f"code cell {number} of {len(code)} ({first[:60]!r})"
    return "a cell"


def render_html(notebook: Path, html_path: Path) -> Path:
    """The executed notebook as one self-contained HTML page (figures embedded).

    The page is rendered from a copy whose Markdown cells are plain Markdown
    (:mod:`mbutils.publish.standalone`: glued values pasted, roles and directives resolved); the
    notebook file is not changed.
    """
    import nbformat
    from nbconvert import HTMLExporter

    notebook = Path(notebook)
    page = plain_notebook(nbformat.read(notebook, as_version=4), page=notebook.stem, book=book_index(chapter_dirs()))
    for cell in page.cells:  # glue records (myst-nb) have no HTML form: their values are pasted already
        if "outputs" in cell:
            cell.outputs = [o for o in cell.outputs if not o.get("metadata", {}).get("scrapbook")]
    resources = {"metadata": {"name": notebook.stem, "path": str(notebook.parent)}}  # as from_filename sets
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(page, resources=resources)
    html_path.write_text(body, encoding="utf-8")
    return html_path


def kernel_manager_class(socket_dir: str, log: Path | None = None):
    """A kernel manager that talks to the kernel over Unix sockets (IPC) where the system has them,
    and starts it under a guard that ends it, workers included, if this process is killed; the
    kernel's standard output and error (and its workers') go to the file ``log``.

    The kernel's own log is noise on a terminal: the manager interrupts a kernel before it shuts it
    down, and ipykernel then logs "KeyboardInterrupt caught in kernel", or a traceback when a timed-out
    cell's reply finds its socket closed. The error of a failing cell comes from the cell's output;
    the log's last lines are quoted only when the kernel itself dies.

    A local kernel on TCP ports logs "running over TCP without encryption" on every start;
    over IPC nothing listens on a port, so there is nothing to warn about (and nothing is
    filtered from the kernel's own messages). The sockets live in ``socket_dir``, one folder
    per run: kernels started side by side must never find each other's sockets.
    """
    if os.name == "nt":
        return None
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import CaselessStrEnum, default

    class IPCKernelManager(AsyncKernelManager):
        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

        @default("ip")
        def _private_socket_prefix(self):
            return os.path.join(socket_dir, "kernel")

        def format_kernel_cmd(self, extra_arguments=None):
            """The kernel under :mod:`mbutils.publish.kernel_guard`: it and its workers end with this process."""
            command = super().format_kernel_cmd(extra_arguments)
            # run as a file in isolated mode: the standard library only, not the package's imports
            return [sys.executable, "-I", kernel_guard.__file__, str(os.getpid()), *command]

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            if log is None:
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            with open(log, "ab") as stream:  # the kernel holds its own copy of the file once started
                kw.setdefault("stdout", stream)
                kw.setdefault("stderr", stream)
                return await super()._async_launch_kernel(kernel_cmd, **kw)

    return IPCKernelManager


def run_chapter(chapter: str | Path, params: dict | None, out_dir: str | Path, *, profile: str | None = None,
                timeout: int | None = None, kernel: str = "python3", progress: bool = False,
                html: bool = True, preflight: bool = False) -> Path:
    """Execute a chapter with ``params`` into ``out_dir``; returns the path of the HTML page
    (of the executed notebook with ``html=False``, which skips the page: about two seconds).

    ``params`` values may be strings as typed on a command line (``"10"`` -> 10,
    ``"None"`` -> None, ``"10,25"`` stays a string the chapter parses). ``profile`` sets
    ``MBUTILS_PROFILE`` for the run. Writes ``<chapter>.ipynb`` and ``<chapter>.html``.

    ``preflight`` (run-chapter's): also check the values against the data before the kernel starts
    (:mod:`mbutils.publish.preflight`: bundles that exist, sizes and pools that fit), so a value the chapter
    would fail on or quietly change is refused with a
    :class:`~mbutils.base.errors.ChapterParameterError`. Without it a name that reaches no bundle
    fails in the cell that loads it, and sizes past the seen half are dropped, as the page's banner says.
    """
    import papermill
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from papermill.exceptions import PapermillExecutionError

    source = chapter_path(chapter)
    if profile is not None:
        check_choice(profile, PROFILES, "profile", ChapterError)
    values = _check_params(source, dict(params or {}))
    if preflight:
        check_values(source.stem, chapter_parameters(source), values, profile=profile)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ChapterError(f"{out} exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    # sockets in a short private folder (Unix socket paths are limited to about 100 bytes)
    clear_stale(out, f".{source.stem}-")  # a run killed before its clean-up left its work folder
    with tempfile.TemporaryDirectory(prefix="mbutils-kernel-") as sockets, \
            tempfile.TemporaryDirectory(dir=out, prefix=f".{source.stem}-{os.getpid()}-") as tmp:
        log = Path(sockets) / "kernel.log"
        manager = {"kernel_manager_class": cls} if (cls := kernel_manager_class(sockets, log)) else {}
        executed = Path(tmp) / f"{source.stem}.ipynb"
        unexecuted = to_notebook(source, Path(tmp) / f"{source.stem}.source.ipynb", values=values)
        try:
            # the kernel's working directory is chapters/, not the caller's: it gets MBUTILS_DATA's folders absolute
            with temporary_environment({**data_environment(), **({"MBUTILS_PROFILE": profile} if profile else {})}), \
                    _quiet("papermill"):
                papermill.execute_notebook(
                    str(unexecuted), str(executed), parameters=values, kernel_name=kernel,
                    cwd=str(source.parent), progress_bar=progress, log_output=False,
                    execution_timeout=timeout, **manager,
                )
        except PapermillExecutionError as err:
            kept = _keep_failed(executed, out)
            raise ChapterError(f"chapter {source.stem!r} failed: {_failure(err, chapter_parameters(source))}"
                               + (f"; the notebook executed up to the failing cell is {kept}" if kept else "")) from None
        except DeadKernelError:
            cell, said = _running_cell(executed), _last_words(log)
            kept = _keep_failed(executed, out)
            raise ChapterError(f"chapter {source.stem!r}: its kernel died while {cell} ran (out of memory, or a crash "
                               "in compiled code)" + (f"; its last output: {said}" if said else "")
                               + (f"; the notebook executed up to that cell is {kept}" if kept else "")) from None
        except CellTimeoutError as err:
            raise ChapterError(f"chapter {source.stem!r}: {_timed_out(err, unexecuted)} ran past the time "
                               f"allowed per cell (--timeout {timeout} seconds); raise --timeout, or leave it "
                               "out for no limit") from None
        unexecuted.unlink()
        page = render_html(executed, Path(tmp) / f"{source.stem}.html") if html else None
        shutil.move(str(executed), out / executed.name)
        if page is not None:
            shutil.move(str(page), out / page.name)
    return out / (page or executed).name
