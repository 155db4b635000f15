"""What the book's chapters share: profiles, data resolution, experiment settings, display helpers.

A chapter's ``parameters`` cell holds plain values (``None`` = "the profile decides");
:func:`configure` turns them into a :class:`Setting` — the bundle, the protocol, the sizes —
so that every chapter asking for the same benchmark under the same profile asks for the
*same* experiment and the package's content-addressed cache computes it once per book.

Profiles (environment variable ``MBUTILS_PROFILE``):

``quick``
    few runs and sizes up to 250 (minutes for the whole book);
``default``
    the paper's protocol on GPQA (50 runs), fewer runs on the large benchmarks;
``paper``
    the paper's settings everywhere (50 runs, all sizes, all source counts; hours).

This module is also a tiny Sphinx extension (``extra_extensions: [mbutils.book]`` in
``_config.yml``): it keys Jupyter Book's execution cache and Sphinx's environment by
profile and data path, so switching profile never serves pages computed under another.
"""

from __future__ import annotations

import base64
import hashlib
import html
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

from .datasets import (BENCHMARK_TITLES, BENCHMARKS, CATALOGUE, GPQA_SIZES, PAPER_SIZES,  # noqa: F401
                       DataChoice, benchmark_key, resolve_data)
from .errors import MbutilsError
from .protocol import POOL_RULE, fit_to_pool

PROFILE_ENV = "MBUTILS_PROFILE"

PAPER_SOURCES = (10, 50, 100, 150, 200, 250, 300)

#: The six methods of the paper's figures, in legend order.
PAPER_SELECTORS = ("random", "subtask_equal", "confidence_stratified", "diversity",
                   "anchor_points", "tinybenchmarks")


def _quiet_tqdm() -> None:
    """Import ``tqdm.auto`` once without its 'IProgress not found' warning.

    The experiment engine imports ``tqdm.auto`` even with progress off; inside a kernel
    without ipywidgets that import writes a TqdmWarning to stderr, which the strict book
    build rightly treats as a warning. Chapters never show progress bars, so the
    warning says nothing to a reader.
    """
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        try:
            import tqdm.auto  # noqa: F401
        except ImportError:  # pragma: no cover - tqdm is a dependency
            pass


class BookError(MbutilsError, ValueError):
    """A chapter parameter or profile the book cannot use."""


@dataclass(frozen=True)
class BenchProfile:
    """Experiment sizes for one benchmark under one profile."""

    sizes: tuple[int, ...]
    runs: int
    source_counts: tuple[int, ...]   # MDAD vs number of source models
    source_runs: int
    source_size: int                 # the k at which the sources sweep is run


def _profiles() -> dict[str, dict[str, BenchProfile]]:
    small = (10, 25, 50, 100, 250)
    return {
        "quick": {
            "gpqa": BenchProfile(GPQA_SIZES, 10, (10, 50, 100, 300), 5, 100),
            "bbh": BenchProfile(small, 3, (10, 100, 300), 1, 100),
            "mmlu-pro": BenchProfile(small, 3, (10, 100, 300), 1, 100),
            "mmlu": BenchProfile(small, 3, (10, 100, 300), 1, 100),
            "custom": BenchProfile(small, 3, (10, 100, 300), 1, 100),
        },
        "default": {
            "gpqa": BenchProfile(GPQA_SIZES, 50, PAPER_SOURCES, 20, 100),
            "bbh": BenchProfile(PAPER_SIZES, 10, (10, 50, 100, 200, 300), 5, 100),
            "mmlu-pro": BenchProfile(PAPER_SIZES, 10, (10, 50, 100, 200, 300), 5, 100),
            "mmlu": BenchProfile(PAPER_SIZES, 10, (10, 50, 100, 200, 300), 5, 100),
            "custom": BenchProfile(PAPER_SIZES, 10, (10, 50, 100, 200, 300), 5, 100),
        },
        "paper": {
            "gpqa": BenchProfile(GPQA_SIZES, 50, PAPER_SOURCES, 50, 100),
            **{b: BenchProfile(PAPER_SIZES, 50, PAPER_SOURCES, 50, 100) for b in ("bbh", "mmlu-pro", "mmlu")},
            "custom": BenchProfile(PAPER_SIZES, 50, PAPER_SOURCES, 50, 100),
        },
    }


PROFILES = _profiles()


def profile_name() -> str:
    """The active profile: ``$MBUTILS_PROFILE`` or ``default``."""
    name = os.environ.get(PROFILE_ENV, "").strip() or "default"
    if name not in PROFILES:
        raise BookError(f"{PROFILE_ENV}={name!r} is not a profile; use one of {', '.join(PROFILES)}")
    return name


def default_jobs() -> int:
    """Workers for experiments: ``$MBUTILS_JOBS`` or every core."""
    value = os.environ.get("MBUTILS_JOBS", "").strip()
    return int(value) if value else (os.cpu_count() or 1)


# ----------------------------------------------------------------------- parameters
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


# ---------------------------------------------------------------------- settings
@dataclass
class Setting:
    """One chapter's experiment: bundle, protocol and sizes, plus how to describe them."""

    data: DataChoice
    profile: str
    sizes: list[int]
    protocol: object
    source_counts: list[int]
    source_runs: int
    source_size: int
    jobs: int = 1
    overrides: dict = field(default_factory=dict)
    pool_fitted: bool = False        # sources/targets shrunk to a pool smaller than the paper's
    dropped_sizes: list = field(default_factory=list)   # sizes larger than the seen half

    @property
    def benchmark(self):
        return self.data.benchmark

    @property
    def n_seen(self) -> int:
        from .experiment import n_seen_items

        return n_seen_items(self.benchmark)

    def results(self, selectors: Sequence[str], *, sizes: Sequence[int] | None = None, **protocol_changes):
        """The tidy results of ``selectors`` (cached by content; shared with other chapters)."""
        from .experiment import run_experiment

        protocol = replace(self.protocol, **protocol_changes) if protocol_changes else self.protocol
        return run_experiment(self.benchmark, list(selectors), list(sizes or self.sizes), protocol,
                              jobs=self.jobs, progress=False)

    @property
    def can_sweep_sources(self) -> bool:
        """A sources sweep needs at least two source counts that fit the pool."""
        return len(self.source_counts) >= 2

    def sweep_note(self) -> str:
        """Why there is no sources sweep on this bundle (empty when there is one)."""
        if self.can_sweep_sources:
            return ""
        free = self.benchmark.n_models - self.protocol.n_targets
        return (f"A sweep over the number of source models needs at least two source counts; with "
                f"{self.benchmark.n_models} models and {self.protocol.n_targets} targets only {free} models "
                f"are left for sources ({', '.join(map(str, self.source_counts)) or 'no count'} fits). "
                "A larger pool, or fewer targets (-p targets N), makes it possible.")

    def sources_sweep(self, selectors: Sequence[str]):
        """MDAD inputs for each number of source models: {n_sources: results} at ``source_size``."""
        return {n: self.results(selectors, sizes=[self.source_size], n_sources=n, n_runs=self.source_runs)
                for n in self.source_counts}

    def settings_text(self, runs: int | None = None, target_set: str | None = None,
                      sizes: Sequence[int] | None = None, n_sources: int | None = None) -> str:
        p = self.protocol
        target_set = target_set or p.target_set
        n_set = len(self.benchmark.target_sets.get(target_set, ())) if target_set else 0
        targets = (f"the {n_set} models of target set '{target_set}'" if target_set
                   else f"{p.n_targets} random targets")
        sizes = list(sizes or self.sizes)
        return (f"{self.data.name} ({self.data.kind}); {runs or p.n_runs} runs; "
                f"{n_sources or p.n_sources} sources, {targets}; seed {p.seed}; "
                f"k = {', '.join(map(str, sizes))}; profile '{self.profile}'")

    def caption(self, text: str, **kw) -> str:
        """A figure caption ending in the data, runs, sources, targets, seed and profile."""
        return f"{text.rstrip()} Data and settings: {self.settings_text(**kw)}."

    def banner(self) -> str:
        """HTML note for the top of a chapter: which data, why, and which settings."""
        d = self.data
        kind = "note" if d.kind != "synthetic" else "warning"
        lines = [f"<b>Data:</b> {html.escape(d.describe())}.",
                 f"<b>Why:</b> {html.escape(d.reason)}." if d.reason else "",
                 f"<b>Settings:</b> {html.escape(self.settings_text())}"
                 + (f" (changed by parameters: {html.escape(_fmt_overrides(self.overrides))})"
                    if self.overrides else "") + ".",
                 (f"<b>Pool:</b> {self.benchmark.n_models} models, fewer than the paper's 300 sources + 50 "
                  f"targets, so {html.escape(POOL_RULE)}." if self.pool_fitted else ""),
                 (f"<b>Sizes dropped:</b> k = {', '.join(map(str, self.dropped_sizes))} exceed the "
                  f"{self.n_seen} seen items." if self.dropped_sizes else ""),
                 f"<b>Profile:</b> '{self.profile}' ({html.escape(PROFILE_BLURB[self.profile])}); "
                 f"set <code>{PROFILE_ENV}</code> to <code>quick</code>, <code>default</code> or "
                 "<code>paper</code> to change it."]
        title = "Synthetic data" if d.kind == "synthetic" else "Data and settings"
        return admonition(title, "<br>".join(x for x in lines if x), kind)


PROFILE_BLURB = {
    "quick": "few runs, sizes up to 250: a fast preview, noisy estimates",
    "default": "the paper's protocol on GPQA, fewer runs on the large benchmarks",
    "paper": "the paper's settings everywhere",
}


def _fmt_overrides(overrides: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in overrides.items())


def configure(data: str, *, sizes=None, runs=None, sources=None, targets=None, seed=0,
              source_counts=None, source_runs=None, missing: str = "error", jobs=None,
              profile: str | None = None, target_set: str | None = None) -> Setting:
    """A chapter's :class:`Setting` from its parameters (``None`` = the profile's value).

    A benchmark name takes the real bundle when the data path has one, whatever its pool
    size: a pool smaller than the paper's gets sources and targets by
    :func:`mbutils.protocol.fit_to_pool`, sizes larger than the seen half are dropped, and
    the sources sweep keeps the source counts that fit; the page's banner says all of it.
    """
    from .experiment import n_seen_items
    from .protocol import Protocol

    _quiet_tqdm()
    profile = profile or profile_name()
    if profile not in PROFILES:
        raise BookError(f"unknown profile {profile!r}; use one of {', '.join(PROFILES)}")
    sizes_l, runs_i = int_list(sizes), _opt_int(runs, "runs")
    sources_i, targets_i = _opt_int(sources, "sources"), _opt_int(targets, "targets")
    counts_l, counts_runs = int_list(source_counts, "source_counts"), _opt_int(source_runs, "source_runs")
    target_set = None if target_set in (None, "", "None") else str(target_set)
    choice = resolve_data(data, missing=missing, target_set=target_set)
    bench = choice.benchmark
    spec = PROFILES[profile][choice.key]
    overrides = {k: v for k, v in dict(sizes=sizes_l, runs=runs_i, sources=sources_i, targets=targets_i,
                                        source_counts=counts_l, source_runs=counts_runs).items()
                 if v is not None}
    if target_set is not None:
        if target_set not in bench.target_sets:
            known = ", ".join(bench.target_sets) or "none"
            raise BookError(f"{bench.name} has no target set {target_set!r} (it has: {known})")
        targets_i = len(bench.target_sets[target_set])
    n_sources, n_targets = fit_to_pool(bench.n_models, n_sources=sources_i, n_targets=targets_i)
    fitted = target_set is None and (n_sources, n_targets) != (300, 50) and not (sources_i and targets_i)
    n_seen = n_seen_items(bench)
    wanted = sizes_l or list(spec.sizes)
    chosen = sorted({k for k in wanted if k <= n_seen}) or [n_seen]
    dropped = sorted(k for k in wanted if k > n_seen)
    free = bench.n_models - n_targets
    counts = sorted({n for n in (counts_l or spec.source_counts) if n <= free})
    if not counts_l and n_sources not in counts and (not counts or n_sources > 1.2 * max(counts)):
        counts.append(n_sources)  # the largest pool that fits: the sweep's right end
    source_size = spec.source_size if spec.source_size in chosen else min(spec.source_size, max(chosen))
    return Setting(
        data=choice, profile=profile, sizes=chosen,
        protocol=Protocol(n_sources=n_sources, n_targets=n_targets, n_runs=runs_i or spec.runs, seed=int(seed),
                          target_set=target_set),
        source_counts=sorted(counts), source_runs=counts_runs or min(spec.source_runs, runs_i or spec.source_runs),
        source_size=source_size, jobs=_opt_int(jobs, "jobs") or default_jobs(), overrides=overrides,
        pool_fitted=fitted, dropped_sizes=dropped,
    )


def is_book_data(data) -> bool:
    """True when ``data`` names only the paper's benchmarks (the book's own build, not a reader's bundle)."""
    names = name_list(data, "data") or []
    return bool(names) and all(n in BENCHMARKS or n.startswith("synthetic-") for n in names)


def pick_data(value, data, *, prefer: Sequence[str] = ("subtasks", "confidence"), book_default: str | None = None,
              missing: str = "error") -> str:
    """The bundle of a secondary section (a picture, a figure drawn on one bundle).

    Its own parameter when set; else ``book_default`` when the chapter runs on the book's
    own benchmarks; else the first bundle of ``data`` with the most of ``prefer``
    (``subtasks``: more than one; ``confidence``: confidences present) — so a reader's
    ``-p data mybundle`` moves every section of a chapter onto their bundle.
    """
    if value not in (None, "", "None"):
        return str(value)
    if book_default and is_book_data(data):
        return book_default
    names = name_list(data, "data")
    if not names:
        raise BookError("data: expected at least one bundle name")
    if not prefer or len(names) == 1:
        return names[0]

    def score(name):
        b = resolve_data(name, missing=missing).benchmark
        return (("subtasks" in prefer and len(b.subtask_names) > 1) + ("confidence" in prefer and b.confidence is not None))

    scores = [score(n) for n in names]
    return names[scores.index(max(scores))]


def variant_data(value, data) -> list[str]:
    """Bundles on which a selector chapter compares variants: the parameter, else those of
    ``data`` that the profile runs variants on (costly variants stay on GPQA when quick),
    else the first bundle of ``data``."""
    explicit = name_list(value, "variant_data")
    if explicit:
        return explicit
    names = name_list(data, "data") or []
    chosen = [n for n in names if benchmark_key(n) in variant_benchmarks()]
    return chosen or names[:1]


def paper_selectors(setting: Setting, selectors=None) -> list[str]:
    """The selectors a benchmark chapter compares (parameter value or the paper's six)."""
    return name_list(selectors) or list(PAPER_SELECTORS)


# ----------------------------------------------------------------------- display
def admonition(title: str, body_html: str, kind: str = "note") -> str:
    """HTML with the theme's admonition classes (renders in the book and in nbconvert HTML)."""
    return (f'<div class="admonition {kind}"><p class="admonition-title">{html.escape(title)}</p>'
            f"<p>{body_html}</p></div>")


def note(title: str, body_html: str, kind: str = "note") -> None:
    """Display an admonition box."""
    from IPython.display import HTML, display

    display(HTML(admonition(title, body_html, kind)))


def figure_png(fig, dpi: int = 110) -> bytes:
    """PNG bytes of a Figure (backend independent)."""
    from io import BytesIO

    buf = BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def show(fig, caption: str, dpi: int = 110) -> None:
    """Display a figure as PNG followed by its caption (works in the book and in papermill runs)."""
    from IPython.display import HTML, Image, display

    display(Image(data=figure_png(fig, dpi), format="png"))
    display(HTML(f'<p class="mbutils-caption"><b>Figure.</b> {html.escape(caption)}</p>'))


def pretty(table, digits: int = 2):
    """A copy for display: selector display names, MDAD NaN spelled 'not reached', rounded."""
    import numpy as np

    from .plots import label
    from .tables import MDAD_VALUE_COLUMNS, NOT_REACHED

    out = table.copy()
    if "selector" in out:
        out["selector"] = out["selector"].map(label)
    for col in out.columns:
        if out[col].dtype.kind == "f":
            values = out[col].round(digits)
            if col in MDAD_VALUE_COLUMNS or str(col).lower().startswith(("mdad", "run_ci")) or col in (
                    "method", "random"):
                out[col] = [NOT_REACHED if not np.isfinite(v) else f"{v:g}" for v in values]
            else:
                out[col] = values
    return out


def table(df, digits: int = 2, caption: str | None = None) -> None:
    """Display a table as HTML without the index (readable in the book and nbconvert)."""
    from IPython.display import HTML, display

    body = pretty(df, digits).to_html(index=False, border=0, classes="table mbutils-table",
                                      na_rep="", escape=True)
    cap = f'<p class="mbutils-caption"><b>Table.</b> {html.escape(caption)}</p>' if caption else ""
    display(HTML(f'<div class="mbutils-table-wrap">{body}</div>{cap}'))


def download_link(df, filename: str, text: str | None = None) -> str:
    """HTML link that downloads ``df`` as CSV (a data URI: no file to ship or keep in sync)."""
    from .tables import render

    payload = base64.b64encode(render(df, "csv").encode()).decode()
    text = text or f"Download {filename} ({len(df)} rows, CSV)"
    return (f'<p><a download="{html.escape(filename)}" href="data:text/csv;base64,{payload}">'
            f"{html.escape(text)}</a></p>")


def download(df, filename: str, text: str | None = None) -> None:
    from IPython.display import HTML, display

    display(HTML(download_link(df, filename, text)))


def glue(key: str, value, display: bool = False) -> None:
    """Store a value for other pages (myst-nb ``glue``); a no-op outside a notebook kernel."""
    try:
        from myst_nb import glue as _glue
    except ImportError:  # pragma: no cover - myst-nb ships with the book's requirements
        return
    _glue(key, value, display=display)


def fmt_points(value, digits: int = 1) -> str:
    """'4.5 points' or 'not reached'."""
    import math

    if value is None or not math.isfinite(float(value)):
        return "not reached"
    return f"{float(value):.{digits}f} points"


# ----------------------------------------------------------------- one run, looked at
def run_view(setting: Setting, run: int = 0):
    """What the selectors see in one run: ``(SourceData, target_correct, target_confidence, Run)``."""
    import numpy as np

    from .protocol import draw_run
    from .selectors.base import SourceData

    bench = setting.benchmark
    r = draw_run(bench, setting.protocol, run)
    conf = bench.confidence
    source = SourceData(bench.correct[r.sources][:, r.seen], bench.subtask_codes[r.seen],
                        None if conf is None else conf[r.sources][:, r.seen])
    tgt_conf = None if conf is None else conf[r.targets][:, r.seen]
    return source, np.asarray(bench.correct[r.targets][:, r.seen]), tgt_conf, r


def item_map(source) -> "pd.DataFrame":  # noqa: F821
    """Coordinates to draw seen items: easiness (% of sources correct / mean confidence), the first
    two principal components of the items' source profiles, and the same clipped to the 1-99%
    quantile box of the first four components and rescaled to [-1, 1] (what the DPP sees;
    ``outside_box`` marks the items it trims)."""
    import numpy as np
    import pandas as pd

    proxy = np.asarray(source.proxy, dtype=np.float64)
    centred = proxy - proxy.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    coords = vt[:4].T * s[:4]
    lo, hi = np.quantile(coords, [0.01, 0.99], axis=0)
    outside = ((coords < lo) | (coords > hi)).any(axis=1)
    boxed = 2 * (np.clip(coords, lo, hi) - lo) / np.where(hi > lo, hi - lo, 1.0) - 1
    return pd.DataFrame({"easiness": 100 * proxy.mean(axis=0), "pc1": coords[:, 0], "pc2": coords[:, 1],
                         "box1": boxed[:, 0], "box2": boxed[:, 1], "outside_box": outside,
                         "subtask": source.subtasks})


def pick(selector_name: str, source, k: int, seed: int = 0, run: int = 0):
    """The micro-benchmark a selector builds from ``source`` with the experiment's seeding."""
    from .protocol import rng_for
    from .selectors import make_selector

    selector = make_selector(selector_name)
    stream = selector.shared_key() or selector_name  # as the experiment: siblings share their draws
    prepared = selector.prepare(source, rng_for(seed, run, "prepare", stream))
    return selector, prepared, selector.select(prepared, k, rng_for(seed, run, "select", stream, k))


# ------------------------------------------------------------- tables for chapters
def headline_size(sizes: Sequence[int]) -> int:
    """The size quoted in headlines: 100 when run (every profile runs it), else the middle one."""
    sizes = sorted(sizes)
    return 100 if 100 in sizes else sizes[len(sizes) // 2]


def variant_benchmarks(profile: str | None = None) -> list[str]:
    """Benchmarks on which selector chapters compare variants (costly ones stay on GPQA when quick)."""
    return {"quick": ["gpqa"], "default": ["gpqa", "mmlu-pro"], "paper": list(BENCHMARKS)}[profile or profile_name()]


def target_cases(profile: str | None = None) -> str:
    """Fixed target sets studied under a profile (benchmark:set, comma separated).

    GPQA's real sets everywhere; the paper profile adds the paper's MMLU-Pro and BBH
    instruction-tuned sets (on the stand-ins unless real bundles are on the data path).
    """
    cases = ["gpqa:7b_instruct", "gpqa:70b_instruct"]
    if (profile or profile_name()) == "paper":
        cases += ["mmlu-pro:7b_instruct", "mmlu-pro:70b_instruct", "bbh:7b_instruct", "bbh:70b_instruct"]
    return ",".join(cases)


def pair_gaps(accuracy) -> "np.ndarray":  # noqa: F821
    """|accuracy difference| in points over all unordered pairs."""
    import numpy as np

    acc = 100 * np.asarray(accuracy, dtype=np.float64)
    i, j = np.triu_indices(len(acc), k=1)
    return np.abs(acc[i] - acc[j])


def data_overview(benchmarks: dict) -> "pd.DataFrame":  # noqa: F821
    """Size, accuracy spread (points) and share of close pairs for each bundle."""
    import numpy as np
    import pandas as pd

    rows = []
    for name, b in benchmarks.items():
        acc = 100 * b.accuracy
        gaps = pair_gaps(b.accuracy)
        rows.append({"bundle": name, "models": b.n_models, "items": b.n_items,
                     "subtasks": len(b.subtask_names), "confidences": "yes" if b.confidence is not None else "no",
                     "min acc.": acc.min(), "median acc.": np.median(acc), "max acc.": acc.max(),
                     "pairs < 1 pt": f"{np.mean(gaps < 1):.0%}", "pairs < 2 pts": f"{np.mean(gaps < 2):.0%}",
                     "pairs < 5 pts": f"{np.mean(gaps < 5):.0%}"})
    return pd.DataFrame(rows)


def missing_report(name: str):
    """Validation findings about empty cells of a bundle on disk (None for synthetic or clean bundles)."""
    import pandas as pd

    from .bundle import find_bundle, validate_bundle

    if str(name).startswith("synthetic-"):
        return None
    try:
        find_bundle(name)
    except MbutilsError:
        return None
    problems = validate_bundle(name)
    if not problems:
        return None
    return pd.DataFrame([{"file": p.file, "where": p.location, "finding": p.message, "severity": p.severity}
                         for p in problems])


def _with_ci(row) -> str:
    import math

    from .tables import NOT_REACHED

    if not math.isfinite(row.mdad):
        return NOT_REACHED
    lo = "…" if not math.isfinite(row.ci_low) else f"{row.ci_low:g}"
    hi = "…" if not math.isfinite(row.ci_high) else f"{row.ci_high:g}"
    return f"{row.mdad:g} [{lo}, {hi}]"


def mdad_wide(mdad) -> "pd.DataFrame":  # noqa: F821
    """Selectors as rows, sizes as columns, cells 'MDAD [low, high]' in points."""
    from .plots import label

    table = mdad.assign(cell=[_with_ci(r) for r in mdad.itertuples(index=False)])
    wide = table.pivot(index="selector", columns="size", values="cell")
    wide = wide.reindex(list(dict.fromkeys(mdad["selector"])))
    wide.columns = [f"k = {k}" for k in wide.columns]
    wide.index = [label(s) for s in wide.index]
    return wide.rename_axis("selector").reset_index()


def summary_wide(summary) -> "pd.DataFrame":  # noqa: F821
    """Selectors as rows, sizes as columns, cells 'tau / error'."""
    from .plots import label

    table = summary.assign(cell=[f"{r.tau:.2f} / {r.error:.1f}" for r in summary.itertuples(index=False)])
    wide = table.pivot(index="selector", columns="size", values="cell")
    wide = wide.reindex(list(dict.fromkeys(summary["selector"])))
    wide.columns = [f"k = {k}: tau / error" for k in wide.columns]
    wide.index = [label(s) for s in wide.index]
    return wide.rename_axis("selector").reset_index()


def threshold_table(tables: dict) -> "pd.DataFrame":  # noqa: F821
    """MDAD per selector x size at each threshold, thresholds as columns."""
    import pandas as pd

    parts = [t.assign(threshold=f"MDAD at {th:g}")[["selector", "size", "threshold", "mdad"]]
             for th, t in sorted(tables.items())]
    wide = pd.concat(parts).pivot_table(index=["selector", "size"], columns="threshold", values="mdad",
                                        dropna=False, sort=False)
    return wide.reset_index().rename_axis(None, axis=1)


def sources_table(sweep: dict, threshold: float = 0.8) -> "pd.DataFrame":  # noqa: F821
    """MDAD tables of a sources sweep stacked with an ``n_sources`` column."""
    import pandas as pd

    from .metrics import mdad_table

    return pd.concat([mdad_table(res, threshold=threshold).assign(n_sources=n) for n, res in sweep.items()],
                     ignore_index=True)


def settings_list(settings: dict, title: str) -> str:
    """An admonition listing the data and settings of several experiments."""
    items = []
    for s in settings.values():
        flag = " <b>(synthetic stand-in: " + html.escape(s.data.reason) + ")</b>" if s.data.kind == "synthetic" else ""
        items.append(f"<li>{html.escape(s.settings_text())}{flag}</li>")
    profile = next(iter(settings.values())).profile if settings else profile_name()
    body = (f"<ul>{''.join(items)}</ul>Profile '{profile}' ({html.escape(PROFILE_BLURB[profile])}); set "
            f"<code>{PROFILE_ENV}</code> to change it.")
    return admonition(title, body, "note")


def settings_caption(settings: dict) -> str:
    """Caption tail for figures drawing on several experiments."""
    return "Data and settings: " + " | ".join(s.settings_text() for s in settings.values()) + "."


def relative_table(mdads: dict, selector: str, baseline: str = "random") -> "pd.DataFrame":  # noqa: F821
    """MDAD of a selector and of random per benchmark and size, and their difference."""
    import pandas as pd

    rows = []
    for name, table in mdads.items():
        wide = table.pivot_table(index="size", columns="selector", values="mdad", dropna=False)
        for k, row in wide.iterrows():
            rows.append({"benchmark": name, "size": k, "method": row.get(selector), "random": row.get(baseline),
                         "difference": row.get(selector) - row.get(baseline)})
    return pd.DataFrame(rows)


def anchor_members(prepared, micro) -> "np.ndarray":  # noqa: F821
    """Cluster (index into the anchors) of every seen item, as Anchor Points assigns it."""
    from .selectors.anchor import assign_to_medoids

    return assign_to_medoids(prepared.dissimilarity, micro.items)


def irt_embedding(prepared) -> dict:
    """2-D view of the IRT item embedding [a_j, b_j] held by tinyBenchmarks' prepared state."""
    import numpy as np

    features = np.asarray(_find_embedding(prepared), dtype=np.float64)
    centred = features - features.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    coords = centred @ vt[:2].T
    return {"features": features, "x": coords[:, 0], "y": coords[:, 1],
            "xlabel": "IRT embedding, component 1", "ylabel": "IRT embedding, component 2"}


def _find_embedding(prepared):
    """The item embedding: an ``embedding``/``features`` attribute, else [a, b] of the fitted model."""
    import numpy as np

    for attr in ("embedding", "features", "item_features"):
        value = getattr(prepared, attr, None)
        if value is not None:
            return value
    model = getattr(prepared, "model", prepared)
    a, b = getattr(model, "a", None), getattr(model, "b", None)
    if a is None or b is None:
        raise BookError(f"cannot find an IRT item embedding in {type(prepared).__name__}")
    return np.column_stack([np.asarray(a), np.asarray(b)])


def nearest_anchor(features, anchors) -> "np.ndarray":  # noqa: F821
    """Index of the nearest anchor (Euclidean) for every item, to colour an embedding."""
    import numpy as np

    features = np.asarray(features, dtype=np.float64)
    centres = features[np.asarray(anchors)]
    d = (features ** 2).sum(1)[:, None] - 2 * features @ centres.T + (centres ** 2).sum(1)[None, :]
    return np.argmin(d, axis=1)


def closer_than_mdad(data_name: str, set_name: str, accuracy, mdad) -> "pd.DataFrame":  # noqa: F821
    """Share of a target set's pairs whose gap is below each selector x size MDAD."""
    import numpy as np
    import pandas as pd

    from .plots import label

    gaps = pair_gaps(accuracy)
    rows = []
    for r in mdad.itertuples(index=False):
        share = np.mean(gaps < r.mdad) if np.isfinite(r.mdad) else 1.0
        rows.append({"bundle": data_name, "target set": set_name, "selector": label(r.selector), "size": r.size,
                     "MDAD": r.mdad, "share closer than MDAD": share})
    return pd.DataFrame(rows)


def target_case_list(cases, data, missing: str = "error") -> tuple[list[tuple[str, str]], list[str]]:
    """The (bundle, target set) pairs a target-set chapter studies, and the bundles of ``data``
    that name no set: explicit ``cases`` first, else every set of the bundles in ``data``,
    else the profile's cases."""
    if name_list(cases, "cases"):
        return parse_cases(cases), []
    names = name_list(data, "data")
    if not names:
        return parse_cases(target_cases()), []
    pairs, without = [], []
    for name in names:
        sets = resolve_data(name, missing=missing).benchmark.target_sets
        pairs += [(name, s) for s in sets]
        if not sets:
            without.append(name)
    return pairs, without


def parse_cases(cases) -> list[tuple[str, str]]:
    """'gpqa:7b_instruct,bbh:70b_instruct' -> [(benchmark, target set), ...]."""
    out = []
    for item in name_list(cases, "cases") or []:
        if ":" not in item:
            raise BookError(f"cases: expected BENCHMARK:TARGET_SET, got {item!r}")
        data, name = item.split(":", 1)
        out.append((data.strip(), name.strip()))
    return out


def items_needed(mdads: dict, gaps: Sequence[int]) -> "pd.DataFrame":  # noqa: F821
    """Smallest size whose MDAD is at most each gap, per benchmark and selector ('> K' if none)."""
    import numpy as np
    import pandas as pd

    from .plots import label

    rows = []
    for name, table in mdads.items():
        for selector, part in table.groupby("selector", sort=False):
            part = part.sort_values("size")
            row = {"benchmark": name, "selector": label(selector)}
            for gap in gaps:
                ok = part[np.isfinite(part["mdad"]) & (part["mdad"] <= gap)]
                row[f"{gap} pt" + ("s" if gap != 1 else "")] = (str(int(ok["size"].iloc[0])) if len(ok)
                                                                else f"> {int(part['size'].max())}")
            rows.append(row)
    return pd.DataFrame(rows)


def random_catch_up(mdads: dict, tolerance: float = 0.5) -> "pd.DataFrame":  # noqa: F821
    """Per benchmark: smallest size from which random's MDAD stays within ``tolerance`` of the best."""
    import numpy as np
    import pandas as pd

    from .plots import label

    rows = []
    for name, table in mdads.items():
        wide = table.pivot_table(index="size", columns="selector", values="mdad", dropna=False).sort_index()
        filled = wide.fillna(np.inf)
        best = filled.min(axis=1)
        best_name = filled.idxmin(axis=1)
        close = filled["random"] <= best + tolerance
        ok_from = None
        for k in wide.index[::-1]:
            if not close[k]:
                break
            ok_from = k
        rows.append({"benchmark": name,
                     "random competitive from k =": "never (up to the largest size)" if ok_from is None else int(ok_from),
                     "best method at the smallest k": label(best_name.iloc[0]),
                     "its MDAD (points)": best.iloc[0], "random's MDAD (points)": filled["random"].iloc[0]})
    return pd.DataFrame(rows).replace({np.inf: np.nan})


def catch_up_sentence(catch) -> str:
    """One sentence for the front page from :func:`random_catch_up`."""
    import numpy as np

    parts = []
    for _, r in catch.iterrows():
        k = r["random competitive from k ="]
        parts.append(f"{r['benchmark']}: from k = {k}" if isinstance(k, (int, np.integer))
                     else f"{r['benchmark']}: not within the sizes run")
    return "; ".join(parts)


def benchmark_facts(setting: Setting, res, mdad, summary) -> dict[str, str]:
    """Headline numbers of a benchmark chapter, formatted, for glue and the summary paragraph."""
    import numpy as np

    from .plots import label

    k = headline_size(setting.sizes)
    small = min(setting.sizes)
    row = summary[(summary["selector"] == "random") & (summary["size"] == k)].iloc[0]
    m_random = mdad[(mdad["selector"] == "random") & (mdad["size"] == k)]["mdad"].iloc[0]
    gaps = pair_gaps(setting.benchmark.accuracy)
    share = np.mean(gaps < m_random) if np.isfinite(m_random) else 1.0
    at_small = mdad[mdad["size"] == small].set_index("selector")["mdad"]
    best = at_small.fillna(np.inf).idxmin()
    return {
        "data": f"{setting.data.name} ({setting.data.kind})",
        "settings": setting.settings_text(),
        "protocol": (f"{setting.protocol.n_sources} sources and {setting.protocol.n_targets} targets per run"
                     + (", fitted to its pool" if setting.pool_fitted else "")),
        "k": str(k),
        "tau_random": f"{row['tau']:.2f}",
        "error_random": f"{row['error']:.1f} points",
        "mdad_random": fmt_points(m_random),
        "share_below": f"{share:.0%}",
        "small_k": str(small),
        "best_small": label(best),
        "best_small_mdad": fmt_points(at_small[best]),
        "random_small_mdad": fmt_points(at_small.get("random", np.nan)),
    }


def facts_html(facts: dict, setting: Setting) -> str:
    """The summary paragraph of a benchmark chapter."""
    return (f"<p>On {html.escape(facts['data'])}, a random micro-benchmark of {facts['k']} items ranks "
            f"the targets with Kendall τ = {facts['tau_random']} and estimation error "
            f"{facts['error_random']}, yet its MDAD is {facts['mdad_random']}: "
            f"{facts['share_below']} of all model pairs of the bundle are closer than that. "
            f"At k = {facts['small_k']} the most reliable method is {html.escape(facts['best_small'])} "
            f"(MDAD {facts['best_small_mdad']}, random: {facts['random_small_mdad']}).</p>")


def full_mdad_table(results: dict) -> "pd.DataFrame":  # noqa: F821
    """MDAD with pair and run CIs at thresholds 0.7/0.8/0.9, seen and unseen, for every benchmark."""
    import pandas as pd

    from .metrics import mdad_table

    parts = []
    for name, res in results.items():
        for split in ("seen", "unseen"):
            for t in (0.7, 0.8, 0.9):
                pairs = mdad_table(res, threshold=t, split=split)
                runs = mdad_table(res, threshold=t, split=split, ci="runs")
                parts.append(pairs.assign(benchmark=res.attrs.get("data", name), split=split, threshold=t,
                                          run_ci_low=runs["ci_low"], run_ci_high=runs["ci_high"]))
    cols = ["benchmark", "split", "threshold", "selector", "size", "mdad", "ci_low", "ci_high",
            "run_ci_low", "run_ci_high", "n_pairs", "n_runs"]
    return pd.concat(parts, ignore_index=True)[cols]


def full_summary_table(results: dict) -> "pd.DataFrame":  # noqa: F821
    """Kendall tau and estimation error (seen and unseen) for every benchmark."""
    import pandas as pd

    from .metrics import summary_table

    parts = [summary_table(res).assign(benchmark=res.attrs.get("data", name)) for name, res in results.items()]
    table = pd.concat(parts, ignore_index=True)
    return table[["benchmark", *[c for c in table.columns if c != "benchmark"]]]


def largest_subtasks(benchmark, count: int) -> list[str]:
    """Names of the ``count`` largest subtasks (ties: first in order)."""
    import numpy as np

    sizes = np.bincount(benchmark.subtask_codes)
    if len(sizes) < 2:
        return []
    order = np.argsort(-sizes, kind="stable")[:count]
    return [str(benchmark.subtask_names[i]) for i in order]


def subtask_setting(base: Setting, subtask: str) -> Setting:
    """A Setting whose benchmark is one subtask of ``base``'s (same protocol; sizes that fit)."""
    import numpy as np

    from .bundle import Benchmark
    from .experiment import n_seen_items

    b = base.benchmark
    cols = np.flatnonzero(b.subtasks.astype(str) == subtask)
    if len(cols) == 0:
        raise BookError(f"{b.name} has no subtask {subtask!r}")
    sub = Benchmark(
        name=f"{b.name}--{subtask.replace(' ', '_')}", correct=b.correct[:, cols], models=b.models,
        items=b.items[cols], subtasks=b.subtasks[cols],
        confidence=None if b.confidence is None else b.confidence[:, cols],
        item_info=None if b.item_info is None else b.item_info.iloc[cols].reset_index(drop=True),
        model_info=b.model_info, target_sets=b.target_sets, origin=f"{b.origin} (subtask {subtask})",
    )
    choice = DataChoice(f"{base.data.requested}:{subtask}", base.data.key, base.data.kind, sub,
                        base.data.reason)
    n_seen = n_seen_items(sub)
    sizes = [k for k in base.sizes if k <= n_seen // 2] or [max(1, n_seen // 4)]
    return replace(base, data=choice, sizes=sizes)


def float_gap_bins(true_diff, n_items, bin_width: float = 0.5):
    """The reference-style bin from floating-point accuracies: floor(|acc_A - acc_B| * 100 / width)."""
    import numpy as np

    n = np.asarray(n_items, dtype=np.float64).reshape(-1, *([1] * (np.ndim(true_diff) - 1)))
    acc_gap = np.abs(np.asarray(true_diff, dtype=np.float64) / n)
    return np.floor(acc_gap * 100.0 / bin_width).astype(np.int64)


def binning_comparison(results) -> "pd.DataFrame":  # noqa: F821
    """How many pairs float re-binning puts in another bin than exact integer binning (one experiment)."""
    import numpy as np
    import pandas as pd

    from .metrics import gap_bins, iter_groups

    # The true gaps are the same for every selector and size of an experiment: one group tells.
    _, pairs = next(iter_groups(results))
    exact = gap_bins(pairs.true_diff, pairs.n_items)
    approx = float_gap_bins(pairs.true_diff, pairs.n_items)
    return pd.DataFrame([{"pairs": exact.size, "pairs binned differently": int((exact != approx).sum()),
                          "bins seen (exact)": len(np.unique(exact)), "bins seen (float)": len(np.unique(approx))}])



def mdad_variants(results, threshold: float = 0.8) -> "pd.DataFrame":  # noqa: F821
    """MDAD under the paper's rules and each alternative, with both CI widths."""
    from .metrics import mdad_table

    base = mdad_table(results, threshold=threshold)
    runs = mdad_table(results, threshold=threshold, ci="runs")
    mono = mdad_table(results, threshold=threshold, method="monotone", ci="none")
    excl = mdad_table(results, threshold=threshold, tie_rule="exclude", ci="none")
    out = base[["selector", "size", "mdad"]].rename(columns={"mdad": "MDAD (paper)"})
    out["ties excluded"] = excl["mdad"].to_numpy()
    out["monotone"] = mono["mdad"].to_numpy()
    out["CI width, pairs"] = (base["ci_high"] - base["ci_low"]).to_numpy()
    out["CI width, runs"] = (runs["ci_high"] - runs["ci_low"]).to_numpy()
    return out


def not_reached_counts(results) -> "pd.DataFrame":  # noqa: F821
    """Selector x size cells whose MDAD is not reached, per threshold."""
    import pandas as pd

    from .metrics import mdad_table

    rows = []
    for t in (0.7, 0.8, 0.9):
        table = mdad_table(results, threshold=t, ci="none")
        rows.append({"threshold": t, "cells": len(table), "not reached": int((~table["reached"]).sum()),
                     "reference code would plot": f"{int((~table['reached']).sum())} x 50 points"})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------- Sphinx extension
def build_fingerprint() -> str:
    """Profile + data path + package version and source: what a cached page's numbers depend
    on beyond the notebook's own source (so editing mbutils re-executes the pages)."""
    from . import __version__

    from .fingerprint import book_fingerprint

    h = hashlib.sha256()
    for part in (profile_name(), os.environ.get("MBUTILS_DATA", ""), __version__, book_fingerprint()):
        h.update(part.encode() + b"\x1f")
    return f"{profile_name()}-{h.hexdigest()[:12]}"


def absolute_data_path() -> str:
    """Make ``$MBUTILS_DATA`` absolute (in this process's environment) and return it.

    Kernels run with the chapter's folder as working directory, so a relative data path
    (``../shared/data``, as CI sets it) must be resolved where the user typed it first.
    """
    value = os.environ.get("MBUTILS_DATA", "")
    parts = [str(Path(p).expanduser().resolve()) for p in value.split(os.pathsep) if p.strip()]
    if parts:
        os.environ["MBUTILS_DATA"] = os.pathsep.join(parts)
    return os.environ.get("MBUTILS_DATA", "")


def _on_config_inited(app, config) -> None:
    absolute_data_path()  # before kernels start: they inherit this environment
    fingerprint = build_fingerprint()
    config.mbutils_build = fingerprint  # a change re-reads every page (rebuild="env")
    if not config.nb_execution_cache_path:
        config.nb_execution_cache_path = str(Path(app.outdir).parent / f".jupyter_cache-{fingerprint}")


def _dedupe_scripts(app, pagename, templatename, context, doctree) -> None:
    """Drop repeated inline scripts: sphinx-thebe registers its config script twice under
    Jupyter Book, and the second ``const THEBE_JS_URL`` is a JavaScript error on every page."""
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        # the copies differ only in filename None vs "" (inline scripts)
        key = (str(getattr(script, "filename", script) or ""),
               repr(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):  # Sphinx's entry point for `extra_extensions: [mbutils.book]`
    app.add_config_value("mbutils_build", "", "env")
    app.connect("config-inited", _on_config_inited, priority=400)
    app.connect("html-page-context", _dedupe_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
