"""The specifications live in the repository (docs/spec/) and the code cites them by path."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "docs" / "spec"
SHARED_SPEC = ROOT.parent / "shared" / "spec"  # where the project's specifications are written
CITATION = re.compile(r"docs/spec/[A-Za-z0-9_./-]*[A-Za-z0-9_]")
# A spec named without its path: a reader cannot tell where it is.
BARE_NAME = re.compile(r"(?<![/\w-])(CONTRACT|COMPAT|merchant-api)\.md")
CITING = ("gateway", "docs", "tests")
THIS_FILE = Path(__file__).resolve()
SUFFIXES = {".py", ".md", ".html", ".txt", ".po", ".js", ".toml", ".cfg"}


def citing_files():
    """Every text file of gateway/, docs/ (but the specs) and tests/ (but this one), and the
    README."""
    for folder in CITING:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in SUFFIXES and SPEC not in path.parents and path != THIS_FILE:
                yield path
    yield ROOT / "README.md"


def citations(text):
    """The docs/spec/ paths a text cites, without a trailing full stop."""
    return [match.rstrip(".") for match in CITATION.findall(text)]


def bare_names(text):
    """Spec file names a text gives without docs/spec/ before them."""
    return [match.group(0) for match in BARE_NAME.finditer(text)]


def test_the_specifications_are_in_the_repository():
    assert {path.name for path in SPEC.glob("*.md")} >= {
        "merchant-api.md",
        "CONTRACT.md",
        "COMPAT.md",
    }


def test_the_copies_equal_the_shared_specifications():
    if not SHARED_SPEC.is_dir():
        pytest.skip(f"no shared specifications at {SHARED_SPEC} to compare the copies with")
    for shared in sorted(SHARED_SPEC.glob("*.md")):
        copy = SPEC / shared.name
        assert copy.is_file() and copy.read_bytes() == shared.read_bytes(), (
            f"{copy} differs from {shared}; copy the shared file over it"
        )


def test_every_cited_spec_path_exists():
    missing = sorted(
        f"{path.relative_to(ROOT)}: {cited}"
        for path in citing_files()
        for cited in citations(path.read_text(errors="replace"))
        if not (ROOT / cited).exists()
    )
    assert missing == []


def test_every_spec_is_cited_by_its_path():
    bare = sorted(
        f"{path.relative_to(ROOT)}: {name}"
        for path in citing_files()
        for name in bare_names(path.read_text(errors="replace"))
    )
    assert bare == []


def test_a_wrong_path_and_a_bare_name_are_caught():
    text = "as docs/spec/CONTRACT.md says; see docs/spec/NOPE.md. Also COMPAT.md, spec/COMPAT.md"
    assert citations(text) == ["docs/spec/CONTRACT.md", "docs/spec/NOPE.md"]
    assert [cited for cited in citations(text) if not (ROOT / cited).exists()] == [
        "docs/spec/NOPE.md"
    ]
    assert bare_names(text) == ["COMPAT.md"]
