"""Publishing: the deployment workflow runs the README's commands, and the launched notebooks'
install cell is built from the one repository setting and does nothing where mbutils imports."""

from __future__ import annotations

import re
import subprocess
import sys

import yaml

from conftest import REPO

WORKFLOW = REPO / ".github" / "workflows" / "book.yml"


def readme_publish_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Publish your copy", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the section has one command block"
    return [line.strip() for line in blocks[0].splitlines() if line.strip()]


def workflow_steps() -> list[dict]:
    flow = yaml.safe_load(WORKFLOW.read_text())
    return flow["jobs"]["build"]["steps"]


def test_the_workflow_runs_the_readmes_commands_in_order():
    commands = readme_publish_commands()
    assert any("mbutils book" in c for c in commands) and any("book-pdf" in c for c in commands)
    runs = [line.strip() for step in workflow_steps() if "run" in step for line in step["run"].splitlines()]
    builds = [line for line in runs if re.search(r"pip install|mbutils book|jupyter-book", line)]
    assert builds == commands, f"workflow {builds} != README {commands}"


def test_the_workflow_uploads_the_built_html_then_deploys_it():
    flow = yaml.safe_load(WORKFLOW.read_text())
    steps = workflow_steps()
    uses = [step.get("uses", "") for step in steps]
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "_build/html"
    assert uses.index(upload["uses"]) > next(i for i, s in enumerate(steps) if "mbutils book-pdf" in s.get("run", ""))
    deploy = flow["jobs"]["deploy"]
    assert deploy["needs"] == "build" and deploy["steps"][0]["uses"].startswith("actions/deploy-pages@")
    assert {"pages": "write", "id-token": "write"}.items() <= flow["permissions"].items()
    # the launch buttons open the branch the workflow fills
    from mbutils.publish.sphinxext import LAUNCH_BRANCH

    assert f"git push --force origin {LAUNCH_BRANCH}" in WORKFLOW.read_text()


def test_the_repository_is_named_once_and_read_from_the_config():
    from mbutils.publish.publish import launch_cell, repository

    url, branch = repository()
    config = (REPO / "_config.yml").read_text()
    assert config.count(url) == 1
    cell = launch_cell()
    assert f'"{url}", "{branch}"' in cell
    for path in [*REPO.glob("*.md"), *(REPO / "chapters").glob("*.md"), WORKFLOW, *(REPO / "mbutils").rglob("*.py")]:
        assert url not in path.read_text(), f"{path} names the repository itself instead of reading _config.yml"


def test_launched_notebooks_open_with_the_install_cell_that_is_a_no_op_where_mbutils_imports(tmp_path):
    import nbformat

    proc = subprocess.run([sys.executable, "-m", "mbutils", "notebook", "all", "--launch", "--out", str(tmp_path)],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    from mbutils.publish.chapters import chapter_names
    from mbutils.publish.publish import launch_cell

    written = sorted(p.stem for p in tmp_path.glob("*.ipynb"))
    assert written == chapter_names() and len(written) >= 15
    nb = nbformat.read(tmp_path / "measures.ipynb", as_version=4)
    first = nb.cells[0]
    assert first.source == launch_cell() and first.metadata["tags"] == ["remove-cell"]
    nbformat.validate(nb)
    # where mbutils imports (Binder, a local Jupyter, the book's own build) the cell runs nothing
    probe = subprocess.run([sys.executable, "-c", first.source + "\nprint('target' in dir())"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0 and probe.stdout.strip() == "False", probe.stderr
    assert not (tmp_path / "mbutils-book").exists()
    # the book's sources and the notebooks run-chapter executes have no such cell
    plain = subprocess.run([sys.executable, "-m", "mbutils", "notebook", "measures", "--out", str(tmp_path / "p.ipynb")],
                           capture_output=True, text=True, cwd=REPO)
    assert plain.returncode == 0
    plain_nb = nbformat.read(tmp_path / "p.ipynb", as_version=4)
    assert not any("find_spec(\"mbutils\")" in c.source for c in plain_nb.cells)
    assert [c.source for c in nb.cells[1:]] == [c.source for c in plain_nb.cells]
