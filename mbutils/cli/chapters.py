"""Chapters and the book: the run-chapter, notebook, book and book-pdf commands."""

from __future__ import annotations

import json
import sys
from importlib.util import find_spec
from pathlib import Path

from mbutils.base.errors import ChapterParameterError, MbutilsError
from mbutils.cli.common import Formatter, count, refuse_existing


def chapter_parsers(sub, common) -> None:
    """The book's commands: run-chapter, notebook, book and book-pdf."""
    p = sub.add_parser("run-chapter", parents=[common], formatter_class=Formatter,
                       help="execute a chapter of the book on other data or settings")
    p.add_argument("chapter", nargs="?", help="chapter name (e.g. bench_gpqa) or path of its .md (or .ipynb)")
    p.add_argument("--list", action="store_true",
                   help="list the chapters that can be run, each with its parameters, and exit")
    p.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
                   help="set a parameter of the chapter (repeatable), e.g. -p data mybundle -p runs 10")
    p.add_argument("--out", default="chapter-output", help="folder for the executed notebook and its HTML")
    p.add_argument("--force", action="store_true", help="replace the chapter's page and notebook in --out")
    p.add_argument("--profile", choices=["quick", "default", "paper"], default=None,
                   help="settings profile (default: $MBUTILS_PROFILE or 'default')")
    p.add_argument("--timeout", type=count("timeout (seconds)", high=10**7), default=None,
                   help="seconds allowed per cell (default: no limit)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_run_chapter)

    p = sub.add_parser("notebook", parents=[common], formatter_class=Formatter,
                       help="write a chapter as an .ipynb notebook (for papermill or Jupyter)")
    p.add_argument("chapter", help="chapter name (e.g. bench_gpqa) or path of its .md, or 'all' (every chapter)")
    p.add_argument("--out", default=None, help="notebook file or folder (default: ./CHAPTER.ipynb; all: .)")
    p.add_argument("--force", action="store_true", help="replace existing notebooks")
    p.add_argument("--launch", action="store_true",
                   help="open with the cell that installs mbutils where it is missing (Colab)")
    p.set_defaults(func=cmd_notebook)

    p = sub.add_parser("book", parents=[common], formatter_class=Formatter,
                       help="build the book strictly: the default, students' or instructors' copy",
                       description="Build the book with jupyter-book build -W -n --keep-going. The students' "
                       "copy has no solutions (nor any source download holding them); the instructors' shows "
                       "every solution open; the default folds each under its exercise. The students' and "
                       "instructors' copies also write every computing chapter as a notebook, with a zip, into "
                       "_build/html/notebooks/ (the students' with a stub in place of each solution), and link "
                       "each page's notebook.")
    p.add_argument("--copy", choices=["default", "students", "instructors"], default="default",
                   help="which copy to build")
    p.add_argument("--out", default=None, help="folder to hold _build/ (default: the book's folder)")
    p.add_argument("--execution-cache", default=None, metavar="BUILD",
                   help="reuse the executed notebooks of another build (its _build folder; default: this build's own)")
    p.add_argument("--notebooks-only", action="store_true",
                   help="write only the copy's notebooks and their zip (seconds; no HTML build)")
    p.add_argument("--grade", default=None, metavar="SUBMISSIONS",
                   help="grade a folder of submitted students' notebooks (any depth) instead of building: run each, "
                   "then every exercise's checks from the instructors' copy (hidden ones too), and print a table "
                   "of each exercise's state (passed, failed, not done, error, missing) and the score")
    p.add_argument("--table", default=None, metavar="CSV",
                   help="with --grade: also write the table to this CSV file, and each check's message beside it "
                   "(NAME-checks.csv)")
    p.add_argument("-p", "--param", nargs=2, action="append", default=[], metavar=("KEY", "VALUE"),
                   help="with --grade: a parameter of the chapters the submissions answer (repeatable)")
    p.add_argument("--profile", choices=["quick", "default", "paper"], default=None,
                   help="with --grade: the settings profile the submissions run with (default: $MBUTILS_PROFILE)")
    p.set_defaults(func=cmd_book)

    p = sub.add_parser("book-pdf", parents=[common], formatter_class=Formatter,
                       help="print the built book into one PDF (Chromium), chapters in toc order",
                       description="Print the built book into one PDF (Chromium), chapters in toc order, and say "
                       "in one line how many pages it has, its size and where it is. Written beside the front page "
                       "(the default --out), it is linked from the front page.")
    p.add_argument("--html", default="_build/html", help="the built book's HTML folder")
    p.add_argument("--out", default="_build/html/book.pdf", help="PDF file to write")
    p.add_argument("--force", action="store_true", help="replace an existing --out")
    p.add_argument("--verbose", action="store_true",
                   help="also print, per document, its pages, figures, narrowest figure (share of the text "
                   "width) and equations, as JSON")
    p.set_defaults(func=cmd_book_pdf)


#: What the chapter commands need beyond the library (the ``book`` extra).
BOOK_MODULES = ("nbformat", "jupytext", "papermill", "nbconvert", "ipykernel", "matplotlib", "myst_nb")


def _need_book_packages(command: str) -> None:
    absent = [m for m in BOOK_MODULES if find_spec(m) is None]
    if absent:
        raise MbutilsError(f"{command} needs the book's packages ({', '.join(absent)} missing): "
                           "pip install 'mbutils[book]', or pip install -r requirements.txt in the repository")


def _list_chapters() -> str:
    """One line per chapter that can be run: its name and its parameters' names."""
    from mbutils.publish.chapters import chapter_names, chapter_parameters

    names = chapter_names()
    width = max(map(len, names))
    lines = [f"{name:<{width}}  {', '.join(chapter_parameters(name)) or '(no parameters)'}" for name in names]
    return "\n".join([f"{len(names)} chapters can be run (name, then its parameters; "
                      "-p KEY VALUE sets one):", *lines]) + "\n"


def cmd_run_chapter(args) -> int:
    """Run a chapter; a parameter value it cannot use is refused before its kernel starts, with exit status 2
    (as a malformed command line is), any other refusal with 1."""
    _need_book_packages("run-chapter")
    from mbutils.publish.chapters import chapter_path, run_chapter

    if args.list:
        if args.chapter or args.param:
            raise MbutilsError("run-chapter --list takes no chapter and no -p; give one or the other")
        sys.stdout.write(_list_chapters())
        return 0
    if args.chapter is None:
        raise MbutilsError("run-chapter: give a chapter name (run-chapter --list shows them) or the path of a .md")
    stem = chapter_path(args.chapter).stem
    pages = [Path(args.out) / f"{stem}{suffix}" for suffix in (".html", ".ipynb")]
    existed = [page for page in pages if page.exists()]
    for page in existed:
        refuse_existing(page, args.force, "--out folder")
    try:
        html = run_chapter(args.chapter, dict(args.param), args.out, profile=args.profile, timeout=args.timeout,
                           progress=not args.quiet, preflight=True)
    except ChapterParameterError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {html} and {html.with_suffix('.ipynb')}", file=sys.stderr)
    if existed:
        print(f"note: replaced the existing {' and '.join(p.name for p in existed)} in {args.out}", file=sys.stderr)
    return 0


def cmd_notebook(args) -> int:
    _need_book_packages("notebook")
    from mbutils.publish.chapters import chapter_names, chapter_path, to_notebook

    if args.chapter == "all":
        out = Path(args.out or ".")
        if out.suffix == ".ipynb":
            raise MbutilsError("notebook all: --out must be a folder")
        for name in chapter_names():
            refuse_existing(out / f"{name}.ipynb", args.force, "--out folder")
        out.mkdir(parents=True, exist_ok=True)
        for name in chapter_names():
            to_notebook(name, out / f"{name}.ipynb", launch=args.launch)
        print(f"wrote {len(chapter_names())} notebooks into {out}", file=sys.stderr)
        return 0
    out = Path(args.out) if args.out else Path(f"{chapter_path(args.chapter).stem}.ipynb")
    replacing = out.exists()
    refuse_existing(out, args.force)
    print(f"wrote {to_notebook(args.chapter, out, launch=args.launch)}", file=sys.stderr)
    if replacing:
        print(f"note: replaced the existing {out}", file=sys.stderr)
    return 0


def cmd_book(args) -> int:
    _need_book_packages("book")
    from mbutils.publish.publish import build_book, book_root

    if args.grade is not None:
        return cmd_grade(args)
    if args.table or args.param or args.profile:
        raise MbutilsError("book: --table, -p and --profile go with --grade")
    where = Path(args.out) if args.out else book_root()
    folder = where / "_build" / "html" / "notebooks"
    if args.notebooks_only:
        if args.copy == "default":
            raise MbutilsError("book --notebooks-only: give --copy students or --copy instructors")
        from mbutils.publish.student_notebooks import write_notebooks

        written, archive = write_notebooks(args.copy, folder)
        print(f"wrote {len(written)} {args.copy}' notebooks and {archive}", file=sys.stderr)
        return 0
    proc = build_book(args.copy, args.out, execution_cache=args.execution_cache)
    if proc.returncode == 0:
        print(f"built the {args.copy} copy: {where / '_build' / 'html' / 'index.html'}", file=sys.stderr)
        if args.copy != "default":
            print(f"its notebooks, and their zip to hand out: {folder}", file=sys.stderr)
    return proc.returncode


def cmd_grade(args) -> int:
    """book --grade: grade a folder of submissions into a table (stdout), and the CSVs with --table."""
    from mbutils.publish.grading import grade_folder

    table, details = grade_folder(args.grade, params=dict(args.param), profile=args.profile,
                                  progress=lambda line: print(line, file=sys.stderr))
    if not len(table):
        raise MbutilsError(f"--grade {args.grade}: no notebook (.ipynb) in that folder")
    print(table.fillna("").to_string(index=False))
    if args.table:
        out = Path(args.table)
        table.to_csv(out, index=False)
        checks = out.with_name(f"{out.stem}-checks.csv")
        details.to_csv(checks, index=False)
        print(f"wrote {out} and {checks}", file=sys.stderr)
    return 0


def cmd_book_pdf(args) -> int:
    _need_book_packages("book-pdf")
    from mbutils.publish.publish import book_pdf

    refuse_existing(Path(args.out), args.force)
    report = book_pdf(args.html, args.out)
    if args.verbose:
        print(json.dumps(report, indent=1))  # per document: pages, figures, narrowest figure / text column, equations
    print(pdf_summary(report, Path(args.out)))
    return 0


def pdf_summary(report: dict, out: Path) -> str:
    """book-pdf's one line: pages, documents, figures, size and where the PDF is."""
    pages = sum(r["pages"] for r in report.values())
    figures = sum(r["figures"] for r in report.values())
    text = [r["smallest_figure_text_pt"] for r in report.values() if r.get("smallest_figure_text_pt") is not None]
    smallest = f", smallest figure text {min(text):.1f} pt" if text else ""
    return (f"wrote {out}: {pages} pages ({len(report)} documents, {figures} figures{smallest}), "
            f"{out.stat().st_size / 1e6:.1f} MB")
