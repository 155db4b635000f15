"""A chapter's experiment: the bundle, the protocol and the sizes, and how to describe them.

A chapter's ``parameters`` cell holds plain values (``None`` = "the profile decides");
:func:`configure` turns them into a :class:`Setting` so that every chapter asking for the
same benchmark under the same profile asks for the *same* experiment, which the
content-addressed cache then computes once per book."""

from __future__ import annotations

import html
import warnings
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from mbutils.data.datasets import (BENCHMARK_TITLES, BENCHMARKS, DataChoice, benchmark_key, real_or_stand_in, resolve_data)
from mbutils.base.errors import BookError
from mbutils.evaluate.paired import compare_selectors
from mbutils.methods.experiment import n_seen_items, run_experiment
from mbutils.book.profiles import (PAPER_SELECTORS, PROFILE_BLURB, PROFILE_ENV, PROFILES, default_jobs, profile_name, target_cases, variant_benchmarks)
from mbutils.data.benchmark import Benchmark
from mbutils.evaluate.noise import thin_pool
from mbutils.methods.protocol import POOL_RULE, Protocol, fit_to_pool
from mbutils.methods.runs import choose, run_data
from mbutils.methods.selectors.spec import as_selector
from mbutils.book.display import admonition, glue, settings_list, show, table
from mbutils.book.escaping import literal
from mbutils.book.params import int_list, name_list, optional_int, parse_cases, reader_parameters
from mbutils.base.names import count_noun, target_set_label
from mbutils.base.validation import check_choice


def _quiet_tqdm() -> None:
    """Import ``tqdm.auto`` once without its 'IProgress not found' warning.

    The experiment engine imports ``tqdm.auto`` even with progress off; inside a kernel
    without ipywidgets that import writes a TqdmWarning to stderr, which the strict book
    build rightly treats as a warning. Chapters never show progress bars, so the
    warning says nothing to a reader.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        try:
            import tqdm.auto  # noqa: F401
        except ImportError:  # pragma: no cover - tqdm is a dependency
            pass


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
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # computed once: the pool's resolution

    @property
    def benchmark(self):
        return self.data.benchmark

    @property
    def page_title(self) -> str:
        """How pages name this benchmark: its title (a reader's own bundle: the bundle's name, so two
        of them stay apart), marked when it is a stand-in."""
        base = self.benchmark.name if self.data.kind == "custom" else self.data.title
        return base + (" (synthetic)" if self.stand_in else "")

    @property
    def n_seen(self) -> int:

        return n_seen_items(self.benchmark)

    def results(self, selectors: Sequence[str], *, sizes: Sequence[int] | None = None, **protocol_changes):
        """The tidy results of ``selectors`` (cached by content; shared with other chapters)."""

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
        targets = (f"the {count_noun(n_set, 'model')} of target set '{target_set_label(target_set)}'" if target_set
                   else count_noun(p.n_targets, "random target"))
        sizes = list(sizes or self.sizes)
        n_src = n_sources or p.n_sources
        sources = f"{n_src} sources" if isinstance(n_src, str) else count_noun(n_src, "source")
        return (f"{self.data.display_name} ({self.data.kind}); {count_noun(runs or p.n_runs, 'run')}; "
                f"{sources}, {targets}; seed {p.seed}; "
                f"k = {', '.join(map(str, sizes))}; profile '{self.profile}'")

    def caption(self, text: str, **kw) -> str:
        """A figure caption ending in the data, runs, sources, targets, seed and profile."""
        return f"{text.rstrip()} Data and settings: {self.settings_text(**kw)}."

    @property
    def stand_in(self) -> bool:
        """True when the page's data is a synthetic stand-in (its figures get a stamp)."""
        return self.data.stand_in

    def show(self, fig, text: str, *, label: str, **caption_kw) -> None:
        """Show ``fig`` numbered, captioned ``text`` plus this page's data and settings."""
        show(fig, self.caption(text, **caption_kw), stand_in=self.stand_in, label=label)

    def table(self, df, text: str, *, label: str, mdad_columns=(), **caption_kw) -> None:
        """Show ``df`` as a numbered table captioned ``text`` plus this page's data and settings."""
        table(df, caption=self.caption(text, **caption_kw), mdad_columns=mdad_columns, label=label)

    def show_banner(self, pool_key: str) -> None:
        """Display the page's data box, and glue its pool in one sentence as ``pool_key`` for the prose."""
        from IPython.display import HTML, display

        display(HTML(self.banner()))
        glue(pool_key, self.pool_sentence())

    def resolution(self):
        """Per size, the smallest MDAD difference (points) this page's paired comparisons see with 80%
        power, measured on random against subtask-stratified sampling (two light selectors every
        benchmark page runs; NaN where either MDAD is not reached)."""
        if "resolution" not in self._memo:
            table = compare_selectors(self.results(["random", "subtask_equal"]), "random", "subtask_equal")
            self._memo["resolution"] = table.set_index("size")["detectable"].astype(float)
        return self._memo["resolution"]

    def thin_pool(self) -> str:
        """Why this page's pool is too thin for the comparisons it makes ("" when it is not), from the power
        of its paired comparisons (:meth:`resolution`)."""
        return thin_pool(self.resolution(), self.protocol.n_runs)

    def pool_sentence(self) -> str:
        """What this page's pool is, computed from the data choice (for the prose under a title)."""
        b, d, p = self.benchmark, self.data, self.protocol
        what = {"real": "real results", "custom": "a user bundle",
                "synthetic": "a synthetic stand-in (simulated models, not real results)"}[d.kind]
        text = f"This page runs on {d.display_name}, {what}: {b.n_models:,} models × {b.n_items:,} items"
        if self.pool_fitted:
            return (text + f", too few models for the paper's 300 sources + 50 targets, so the protocol is "
                    f"fitted to the pool: {p.n_sources} sources and {p.n_targets} targets per run.")
        return text + f"; {p.n_sources} sources and {p.n_targets} targets per run."

    def banner(self) -> str:
        """HTML note for the top of a chapter: which data, why, and which settings."""
        d = self.data
        thin = self.thin_pool()
        kind = "note" if d.kind != "synthetic" and not thin else "warning"
        lines = [f"<b>Data:</b> {literal(d.describe())}.",
                 f"<b>Why:</b> {literal(d.reason)}." if d.reason else "",
                 f"<b>Settings:</b> {literal(self.settings_text())}"
                 + (f" (changed by parameters: {literal(_fmt_overrides(self.overrides))})"
                    if self.overrides else "") + ".",
                 (f"<b>Pool:</b> {self.benchmark.n_models} models, fewer than the paper's 300 sources + 50 "
                  f"targets, so {html.escape(POOL_RULE)}." if self.pool_fitted else ""),
                 (f"<b>{'Few runs and a small pool' if self.pool_fitted else 'Few runs'}:</b> {literal(thin)}. "
                  "Smaller differences between methods will mostly read as within noise, which is failure to "
                  "tell, not equality." if thin else ""),
                 (f"<b>Sizes dropped:</b> k = {', '.join(map(str, self.dropped_sizes))} exceed the "
                  f"{self.n_seen} seen items." if self.dropped_sizes else ""),
                 f"<b>Profile:</b> '{self.profile}' ({html.escape(PROFILE_BLURB[self.profile])}); "
                 f"set <code>{PROFILE_ENV}</code> to <code>quick</code>, <code>default</code> or "
                 "<code>paper</code> to change it."]
        title = "Synthetic data" if d.stand_in else "Data and settings"
        return admonition(title, "<br>".join(x for x in lines if x), kind)


def stand_in_banner(keys: Sequence[str] = BENCHMARKS) -> str:
    """The warning a page that quotes several benchmarks shows when any of them runs on a
    stand-in (the front page): the chapters' "Synthetic data" box, one line per benchmark;
    "" when every benchmark has real results on the data path."""
    lines = []
    for key in keys:
        _, bench, reason = real_or_stand_in(key)
        if bench is None:
            lines.append(f"<b>{html.escape(BENCHMARK_TITLES[key])}:</b> {literal(reason)}.")
    if not lines:
        return ""
    lead = ("Numbers on this page for the benchmarks below come from simulated stand-ins (an IRT "
            "simulator), not from real model results.")
    return admonition("Synthetic data", "<br>".join([lead, *lines]), "warning")


def _fmt_overrides(overrides: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in overrides.items())


def _reader_overrides(given: dict) -> dict:
    """The profile settings of ``given`` (name -> value, ``None`` = the profile's) that the reader
    changed: in a chapter's kernel, those whose same-named parameter the reader passed with that
    value (:func:`~mbutils.book.params.reader_parameters`), not values the chapter derives itself
    (``sizes`` from its ``k``, say); outside a kernel, every value given."""
    given = {k: v for k, v in given.items() if v is not None}
    passed = reader_parameters()
    if passed is None:
        return given
    parse = {"sizes": int_list, "source_counts": int_list}
    out = {}
    for key, value in given.items():
        if key not in passed:
            continue
        try:
            theirs = parse.get(key, optional_int)(passed[key], key)
        except BookError:
            continue
        if theirs == value:
            out[key] = value
    return out


def configure(data: str, *, sizes=None, runs=None, sources=None, targets=None, seed=0,
              source_counts=None, source_runs=None, missing: str = "error", jobs=None,
              profile: str | None = None, target_set: str | None = None) -> Setting:
    """A chapter's :class:`Setting` from its parameters (``None`` = the profile's value).

    A benchmark name takes the real bundle when the data path has one, whatever its pool
    size: a pool smaller than the paper's gets sources and targets by
    :func:`mbutils.methods.protocol.fit_to_pool`, sizes larger than the seen half are dropped, and
    the sources sweep keeps the source counts that fit; the page's banner says all of it.
    """

    _quiet_tqdm()
    profile = profile or profile_name()
    check_choice(profile, PROFILES, "profile", BookError)
    sizes_l, runs_i = int_list(sizes), optional_int(runs, "runs")
    sources_i, targets_i = optional_int(sources, "sources"), optional_int(targets, "targets")
    counts_l, counts_runs = int_list(source_counts, "source_counts"), optional_int(source_runs, "source_runs")
    target_set = None if target_set in (None, "", "None") else str(target_set)
    choice = resolve_data(data, missing=missing, target_set=target_set)
    bench = choice.benchmark
    spec = PROFILES[profile][choice.key]
    overrides = _reader_overrides(dict(sizes=sizes_l, runs=runs_i, sources=sources_i, targets=targets_i,
                                       source_counts=counts_l, source_runs=counts_runs))
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
        protocol=Protocol(n_sources=n_sources, n_targets=n_targets, n_runs=runs_i or spec.runs, seed=optional_int(seed, "seed") or 0,
                          target_set=target_set),
        source_counts=sorted(counts), source_runs=counts_runs or min(spec.source_runs, runs_i or spec.source_runs),
        source_size=source_size, jobs=optional_int(jobs, "jobs") or default_jobs(), overrides=overrides,
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


def variant_data(value, data, *, profile: str | None = None) -> list[str]:
    """Bundles on which a selector chapter compares variants: the parameter, else those of
    ``data`` that the profile runs variants on (costly variants stay on GPQA when quick),
    else the first bundle of ``data``."""
    explicit = name_list(value, "variant_data")
    if explicit:
        return explicit
    names = name_list(data, "data") or []
    chosen = [n for n in names if benchmark_key(n) in variant_benchmarks(profile)]
    return chosen or names[:1]


def compared_settings(data, variant_data_value=None, *, with_variants: bool = True, **protocol) -> tuple[dict, dict]:
    """A selector chapter's experiments: one :class:`Setting` per bundle of ``data`` and (unless
    ``with_variants`` is false: a chapter without variants) per bundle its variants run on
    (:func:`variant_data`), each with the same ``protocol`` parameters (``sizes``, ``runs``,
    ``sources``, ``targets``, ``seed``, ``missing``); lists them in a note."""
    from IPython.display import HTML, display

    settings = {b: configure(b, **protocol) for b in name_list(data, "data")}
    variants = ({b: configure(b, **protocol) for b in variant_data(variant_data_value, data)}
                if with_variants else {})
    display(HTML(settings_list(settings, "Benchmarks compared")))
    return settings, variants


def picture_run(picture_data, data, k: int, *, seed: int = 0, missing: str = "error"):
    """The one run a selector chapter pictures: its :class:`Setting` (one run, on the bundle
    :func:`pick_data` chooses), the run's source view, the run itself, and the pictured size
    ``k`` capped at the seen items."""
    pic = configure(pick_data(picture_data, data, missing=missing), runs=1, seed=seed, missing=missing)
    source, _, _, run = run_view(pic)
    return pic, source, run, min(int(k), pic.n_seen)


def paper_selectors(selectors=None) -> list[str]:
    """The selectors a benchmark chapter compares (parameter value or the paper's six)."""
    return name_list(selectors) or list(PAPER_SELECTORS)


def run_view(setting: Setting, run: int = 0):
    """What the selectors see in one run: ``(SourceData, target_correct, target_confidence, Run)``."""


    bench = setting.benchmark
    r, source = run_data(bench, setting.protocol, run)
    conf = bench.confidence
    tgt_conf = None if conf is None else conf[r.targets][:, r.seen]
    return source, np.asarray(bench.correct[r.targets][:, r.seen]), tgt_conf, r


def pick(selector, source, k: int, seed: int = 0, run: int = 0):
    """``(selector, prepared, micro-benchmark)``: what a selector (name or object) builds from
    ``source`` with the experiment's seeding (:func:`mbutils.methods.runs.choose`)."""

    selector = as_selector(selector)
    prepared, micro = choose(selector, source, k, seed=seed, run=run)
    return selector, prepared, micro


def target_case_list(cases, data, missing: str = "error") -> tuple[list[tuple[str, str]], list[str]]:
    """The (bundle, target set) pairs a target-set chapter studies, and the names (not the paths)
    of the bundles of ``data`` that name no set: explicit ``cases`` first, else every set of the
    bundles in ``data``, else the profile's cases."""
    if name_list(cases, "cases"):
        return parse_cases(cases), []
    names = name_list(data, "data")
    if not names:
        return parse_cases(target_cases()), []
    pairs, without = [], []
    for name in names:
        choice = resolve_data(name, missing=missing)
        sets = choice.benchmark.target_sets
        pairs += [(name, s) for s in sets]
        if not sets:
            without.append(choice.name)
    return pairs, without


def subtask_setting(base: Setting, subtask: str) -> Setting:
    """A Setting whose benchmark is one subtask of ``base``'s (same protocol; sizes that fit)."""


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
