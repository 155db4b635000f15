"""``run-chapter --list``: the chapters a reader can run, each with its parameters, read from the chapters."""

from __future__ import annotations

from helpers import run_cli
from mbutils.publish.chapters import chapter_names, chapter_parameters


def test_the_list_names_every_runnable_chapter_with_its_parameters():
    code, out, err = run_cli("run-chapter", "--list")
    assert code == 0 and err == ""
    head, *lines = out.splitlines()
    names = chapter_names()
    assert head.startswith(f"{len(names)} chapters can be run")
    assert [line.split()[0] for line in lines] == names
    for line, name in zip(lines, names):
        listed = line[len(name):].strip()
        assert listed == (", ".join(chapter_parameters(name)) or "(no parameters)"), name
    assert "notation" not in [line.split()[0] for line in lines]  # a page without code is not a chapter to run


def test_without_a_chapter_or_with_both_the_command_says_what_to_give():
    code, out, err = run_cli("run-chapter")
    assert code == 1 and out == "" and "run-chapter --list shows them" in err and err.count("\n") == 1
    code, out, err = run_cli("run-chapter", "data", "--list")
    assert code == 1 and out == "" and "takes no chapter and no -p" in err
