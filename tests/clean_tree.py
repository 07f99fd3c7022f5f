"""A pytest plugin: the run fails when the tests left a new change in the git work tree (`make test`
keeps it clean).

Changes that were there before the run (work in progress) are not the suite's doing and are ignored.
"""

import subprocess

import pytest

TREE_BEFORE = pytest.StashKey()
TREE_WRITTEN = pytest.StashKey()


def tree_changes(root):
    """`git status --porcelain` lines of the work tree at root, or None outside a git checkout."""
    try:
        result = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return set(result.stdout.splitlines())


def pytest_sessionstart(session):
    """Note what the tree already held before any test ran."""
    session.config.stash[TREE_BEFORE] = tree_changes(session.config.rootpath)


def pytest_sessionfinish(session, exitstatus):
    """Fail the run, naming the files, when a test wrote into the tree."""
    before = session.config.stash.get(TREE_BEFORE, None)
    if before is None or hasattr(session.config, "workerinput"):
        return
    added = sorted((tree_changes(session.config.rootpath) or set()) - before)
    session.config.stash[TREE_WRITTEN] = added
    if added:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, config):
    """Name the files the tests left in the tree, in the run's summary."""
    added = config.stash.get(TREE_WRITTEN, [])
    if added:
        terminalreporter.write_sep("=", "work tree not clean", red=True)
        terminalreporter.write_line(
            "the tests changed the git work tree (write into an ignored folder instead):"
        )
        for line in added:
            terminalreporter.write_line(f"  {line}")
