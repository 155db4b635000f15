"""The selectors' registry: one declaration (``@register``) makes a selector known everywhere selectors are
listed (make_selector, the command line's --selectors, the profiles' and auto's lists, the contract's
checks), and nothing else lists them."""

from __future__ import annotations

import argparse
import contextlib
import io
import pickle

import numpy as np
import pandas as pd
import pytest

import mbutils
from mbutils import MicroBenchmark, Selector, SelectorError, make_selector, register, selector_names
from mbutils.methods.selectors import registry
from mbutils.methods.selectors.registry import ROLES, names_with_role, selector_classes, unregister
from mbutils.testing import CHECKS, parametrize_with_checks


class HardestFirst(Selector):
    """A user's selector, registered by the tests below (and removed after each)."""

    name = "test_hardest_first"
    light = True

    def __init__(self, offset: int = 0):
        self.offset = offset

    def select(self, prepared, k, rng):
        self.check_size(k + self.offset, prepared.n_items)
        hardest = np.argsort(prepared.correct.mean(axis=0), kind="stable")[self.offset:self.offset + k]
        return MicroBenchmark(np.sort(hardest), np.full(k, 1.0 / k))


@pytest.fixture
def registered():
    """Names registered in a test are removed after it, whatever happens."""
    before = set(selector_names())
    yield
    for name in set(selector_names()) - before:
        unregister(name)


def _selectors_help() -> str:
    from mbutils.cli import build_parser

    parser = build_parser("mbutils")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return " ".join(sub.choices["experiment"].format_help().split())


def test_one_declaration_reaches_every_list(registered, tmp_path, monkeypatch):
    from mbutils.book.profiles import PAPER_SELECTORS
    from mbutils.micro.choice import CANDIDATES

    assert "test_hardest_first" not in _selectors_help()
    register("test_hardest_first_3", offset=3)(register(roles=("paper", "auto"))(HardestFirst))

    names = selector_names()
    assert names[-2:] == ["test_hardest_first", "test_hardest_first_3"]  # after the shipped families
    assert make_selector("test_hardest_first_3").get_params() == {"offset": 3}
    assert make_selector("test_hardest_first", offset=1).offset == 1
    assert "test_hardest_first, test_hardest_first_3" in _selectors_help()  # the command line's --selectors
    assert list(PAPER_SELECTORS)[-1] == "test_hardest_first" and "test_hardest_first" in CANDIDATES
    ids = parametrize_with_checks().kwargs["ids"]  # the contract's checks, by default of every registered name
    assert {f"test_hardest_first_3-{check.__name__}" for check in CHECKS} <= set(ids)
    assert HardestFirst not in selector_classes() and "HardestFirst" not in mbutils.__all__  # a user's stays theirs

    # the command line runs it by name (in this process, where it is registered)
    bench = mbutils.simulate(mbutils.BenchmarkSpec(n_models=24, subtasks=(("a", 20, 4), ("b", 20, 4))), seed=2,
                             name="tiny")
    folder = mbutils.save_bundle(bench, tmp_path / "tiny")
    monkeypatch.setenv("MBUTILS_CACHE", str(tmp_path / "cache"))
    from mbutils.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["experiment", "--data", str(folder), "--selectors", "test_hardest_first_3,random", "--sizes",
                     "5", "--runs", "2", "--sources", "12", "--targets", "6", "--quiet", "--out",
                     str(tmp_path / "r.csv")])
    assert code == 0, err.getvalue()
    assert list(pd.unique(pd.read_csv(tmp_path / "r.csv")["selector"])) == ["test_hardest_first_3", "random"]


def test_removing_it_removes_it_everywhere(registered):
    register(HardestFirst)
    unregister("test_hardest_first")
    assert "test_hardest_first" not in selector_names() and "test_hardest_first" not in _selectors_help()
    with pytest.raises(SelectorError, match="unknown selector 'test_hardest_first'"):
        make_selector("test_hardest_first")
    with pytest.raises(SelectorError, match="nothing to unregister"):
        unregister("test_hardest_first")


def test_the_shipped_lists_are_the_declarations():
    assert selector_names("paper") == ["random", "subtask_equal", "confidence_stratified", "diversity",
                                       "anchor_points", "tinybenchmarks"]
    assert selector_names("auto") == ["random", "subtask_equal", "random_difference", "confidence_stratified",
                                      "diversity", "anchor_points", "tinybenchmarks"]
    assert list(names_with_role("paper")) == selector_names("paper") == names_with_role("paper")
    classes = [cls.__name__ for cls in selector_classes()]
    assert classes == [name for name in mbutils.__all__ if name in classes]  # public, in the registry's order
    assert [type(make_selector(name)).__name__ for name in selector_names()][:3] == ["RandomSampling",
                                                                                   "SubtaskEqual", "SubtaskEqual"]
    from mbutils.methods.selectors import CLASSES

    assert list(CLASSES) == selector_classes()
    for family in registry.FAMILIES:  # no family keeps a list of its own beside the declarations
        module = __import__(f"mbutils.methods.selectors.{family}", fromlist=["x"])
        assert not hasattr(module, "SELECTORS"), family


def test_reading_a_list_does_not_load_the_selectors():
    """The profiles and auto's candidates read the registry when used, so importing them stays cheap."""
    import subprocess
    import sys

    code = ("import sys\nimport mbutils.book.profiles, mbutils.methods.selectors.registry\n"
            "print(sorted(m for m in ('scipy', 'mbutils.methods.selectors.anchor') if m in sys.modules))\n"
            "print(list(mbutils.book.profiles.PAPER_SELECTORS)[:2])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", "['random', 'subtask_equal']"]


def test_a_declaration_is_checked(registered):
    class Impostor(HardestFirst):
        name = "random"

    with pytest.raises(SelectorError, match="the name 'random' belongs to RandomSampling"):
        register(Impostor)
    with pytest.raises(SelectorError, match="unknown parameter 'depth' of HardestFirst; its parameters are offset"):
        register("test_deep", depth=3)(HardestFirst)
    with pytest.raises(SelectorError, match="unknown role 'best'; the roles are paper, auto"):
        register(roles=("best",))(HardestFirst)
    with pytest.raises(SelectorError, match="takes a Selector subclass"):
        register("test_dict")(dict)
    with pytest.raises(SelectorError, match="a name is letters, digits"):
        register("a,b")(HardestFirst)
    assert set(ROLES) == {"paper", "auto"}
    assert "test_deep" not in selector_names() and "a,b" not in selector_names()


def test_a_class_defined_again_replaces_its_entry(registered):
    """A notebook cell run twice defines the class again: the name follows the new class, in its place."""
    register(HardestFirst)
    first = make_selector("test_hardest_first")

    class HardestFirst2(HardestFirst):
        pass

    HardestFirst2.__qualname__, HardestFirst2.__module__ = HardestFirst.__qualname__, HardestFirst.__module__
    register(HardestFirst2)
    assert type(make_selector("test_hardest_first")) is HardestFirst2 is not type(first)
    assert selector_names().count("test_hardest_first") == 1


def test_the_older_form_with_a_factory_still_works(registered):
    register("test_hardest_first_2", lambda: HardestFirst(offset=2))
    made = make_selector("test_hardest_first_2")
    assert type(made) is HardestFirst and made.offset == 2
    assert make_selector("test_hardest_first_2") is not made  # a new object each time
    pickle.dumps(made)
