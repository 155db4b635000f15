"""Every command's --help states each option's default once: argparse's "(default: X)" is not added
to a help that already says its default, and never reads "(default: None)"."""

from __future__ import annotations

import argparse
import re

import pytest

from mbutils.cli import build_parser

#: A statement of a default: "(default: ...)" (one, whatever it holds), "default: x", "by default",
#: "defaults to".
STATEMENT = re.compile(r"\(default\b[^)]*\)|\bdefault\s*:|\bby default\b|\bdefaults? to\b", re.IGNORECASE)


def _parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser("mbutils")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {"mbutils": parser, **{f"mbutils {name}": p for name, p in sub.choices.items()}}


def _helps(parser) -> list[tuple[argparse.Action, str]]:
    """(option, its help as --help prints it, before line wrapping) for every option shown."""
    formatter = parser._get_formatter()
    return [(a, formatter._expand_help(a)) for a in parser._actions if a.help and a.help is not argparse.SUPPRESS]


def _name(action) -> str:
    return "/".join(action.option_strings) or action.dest


@pytest.mark.parametrize("command", list(_parsers()))
def test_no_option_states_its_default_twice(command):
    """An option whose printed help carries argparse's "(default: <its default>)" says nothing else
    about its default (the help text written for it already did, and argparse said it again)."""
    parser = _parsers()[command]
    shown = re.sub(r"\s+", "", parser.format_help())
    twice, none = [], []
    for action, text in _helps(parser):
        assert re.sub(r"\s+", "", text) in shown, (_name(action), text)  # what the test reads is what --help prints
        appended = f"(default: {action.default})"
        if appended in text and len(STATEMENT.findall(text)) > 1:
            twice.append(f"{_name(action)}: {text}")
        if "(default: None)" in text:
            none.append(_name(action))
    assert not twice, f"{command} --help states a default twice: {twice}"
    assert not none, f"{command} --help says '(default: None)' for {none}"


def test_the_old_formatter_would_have_said_them_twice():
    """The check finds what argparse's own formatter printed: run-chapter's --timeout said
    "(default: no limit) (default: None)"."""
    parser = _parsers()["mbutils run-chapter"]
    timeout = next(a for a in parser._actions if "--timeout" in a.option_strings)
    text = argparse.ArgumentDefaultsHelpFormatter("x")._expand_help(timeout)
    assert text.endswith("(default: no limit) (default: None)") and len(STATEMENT.findall(text)) == 2


def test_a_default_not_in_the_help_is_still_stated():
    helps = {_name(a): text for a, text in _helps(_parsers()["mbutils book"])}
    assert helps["--copy"] == "which copy to build (default: default)"
    assert helps["--out"] == "folder to hold _build/ (default: the book's folder)"
    helps = {_name(a): text for a, text in _helps(_parsers()["mbutils run-chapter"])}
    assert helps["--timeout"] == "seconds allowed per cell (default: no limit)"
    assert helps["--profile"] == "settings profile (default: $MBUTILS_PROFILE or 'default')"
    assert {_name(a): t for a, t in _helps(_parsers()["mbutils mdad"])}["--threshold"].endswith("(default: 0.8)")
