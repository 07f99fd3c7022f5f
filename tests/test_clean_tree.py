"""The suite fails when a test writes into the git work tree, and passes when it writes into an
ignored folder.
"""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INNER_CONFTEST = (
    "from tests.clean_tree import (  # noqa: F401\n"
    "    pytest_sessionfinish, pytest_sessionstart, pytest_terminal_summary)\n"
)


def git(repo, *args):
    """Run git in the throwaway repository."""
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.test", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path):
    """A committed git repository with the plugin as its conftest and build/ ignored."""
    (tmp_path / "conftest.py").write_text(INNER_CONFTEST)
    (tmp_path / ".gitignore").write_text("build/\n__pycache__/\n.pytest_cache/\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "shot.png").write_text("old")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "start")
    return tmp_path


def run_suite(repo, body):
    """Run one inner test (its body given) with pytest in a separate process; returns its result."""
    (repo / "test_inner.py").write_text(
        f"from pathlib import Path\n\n\ndef test_inner():\n    {body}\n"
    )
    git(repo, "add", "test_inner.py")
    git(repo, "commit", "-q", "-m", "inner test")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(repo)],
        cwd=repo,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_a_test_rewriting_a_tracked_file_fails_the_run(repo):
    result = run_suite(
        repo, "Path(__file__).with_name('docs').joinpath('shot.png').write_text('new')"
    )
    assert result.returncode == 1, result.stdout
    assert "work tree not clean" in result.stdout and "docs/shot.png" in result.stdout


def test_a_test_adding_a_new_file_fails_the_run(repo):
    result = run_suite(repo, "Path(__file__).with_name('docs').joinpath('new.png').write_text('x')")
    assert result.returncode == 1, result.stdout
    assert "?? docs/new.png" in result.stdout


def test_a_test_writing_into_an_ignored_folder_passes(repo):
    result = run_suite(
        repo,
        "Path(__file__).with_name('build').mkdir(); "
        "Path(__file__).with_name('build').joinpath('shot.png').write_text('x')",
    )
    assert result.returncode == 0, result.stdout
    assert "work tree not clean" not in result.stdout


def test_changes_made_before_the_run_are_not_blamed_on_it(repo):
    (repo / "docs" / "shot.png").write_text("edited by hand")
    result = run_suite(repo, "assert True")
    assert result.returncode == 0, result.stdout
