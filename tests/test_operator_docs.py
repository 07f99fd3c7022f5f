"""What an operator copies from the README and docs/deployment.md: commands that follow the port the
gateway serves on, one backup advice on SECRET_KEY, and a warning before `db downgrade` drops data.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

from gateway.cli.ops import SECRET_KEY_NOTE

ROOT = Path(__file__).resolve().parent.parent
WRAPPER = ROOT / "deploy" / "gateway-flask"


def section(path, heading):
    """The text of a Markdown section, from its heading to the next one of its level or above
    (a `#` inside a code block is a shell comment, not a heading)."""
    lines = (ROOT / path).read_text().splitlines(keepends=True)
    start = next(n for n, line in enumerate(lines) if line.startswith(heading))
    level, fenced = heading.index(" "), False
    for n in range(start + 1, len(lines)):
        fenced ^= lines[n].startswith("```")
        if not fenced and re.match(r"#{1,%d} " % level, lines[n]):
            return "".join(lines[start:n])
    return "".join(lines[start:])


def commands(text):
    """The shell commands of a section's code blocks, continuation lines joined."""
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    joined = "\n".join(blocks).replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip() and line[0] != "#"]


@pytest.mark.parametrize("program", ["curl", "simulate-sms", "webhook_receiver.py"])
def test_the_readme_s_first_payment_commands_reach_the_gateway_at_the_address_make_run_printed(
    program,
):
    walkthrough = section("README.md", "## A first payment, end to end")
    lines = [line for line in commands(walkthrough) if program in line]
    assert lines, program
    assert re.search(r"^GATEWAY=http://127\.0\.0\.1:5000\b", walkthrough, re.M)
    for line in lines:
        command = line.split("#")[0]
        assert "127.0.0.1:5000" not in command, line
        assert "$GATEWAY" in command, line
    if program == "simulate-sms":  # the simulator reaches the server at BASE_URL
        assert all(line.startswith("BASE_URL=$GATEWAY ") for line in lines), lines
    if program == "webhook_receiver.py":  # the receiver reads payments back at GATEWAY_API
        assert all("GATEWAY_API=$GATEWAY/api/v1" in line for line in lines), lines


def test_the_backup_advice_keeps_secret_key_apart_from_the_dumps_everywhere():
    backups = section("docs/deployment.md", "## 9. Backups")
    for line in commands(backups):
        if "gateway.env" in line and re.match(r"(cp|install|rsync)\b", line):
            assert "/var/backups" not in line and "/instance/" not in line, line
    assert "never beside it" in backups and "password manager" in backups
    assert "not beside" in SECRET_KEY_NOTE and "password manager" in SECRET_KEY_NOTE


def test_the_upgrade_section_warns_that_db_downgrade_drops_data():
    upgrades = section("docs/deployment.md", "## 10. Upgrades")
    assert "**`db downgrade` drops data.**" in upgrades
    assert "GATEWAY_DOWNGRADE_CONFIRMED=yes" in upgrades


def run_wrapper(tmp_path, answer, *args, **env):
    """deploy/gateway-flask with a throw-away settings file, `answer` typed at its prompt."""
    settings = tmp_path / "gateway.env"
    settings.write_text(f"DATABASE_URL=sqlite:///{tmp_path / 'gateway.sqlite3'}\n")
    return subprocess.run(
        ["sh", str(WRAPPER), *args],
        input=answer,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "GATEWAY_ENV": str(settings), **env},
    )


@pytest.mark.parametrize("answer", ["", "y\n", "yes\n", "Downgrade now\n"])
def test_db_downgrade_through_the_wrapper_warns_and_stops_without_the_word(tmp_path, answer):
    result = run_wrapper(tmp_path, answer, "db", "downgrade", "base")
    assert result.returncode == 1
    assert "drops the tables and columns" in result.stderr and "Nothing changed." in result.stderr
    assert not (tmp_path / "gateway.sqlite3").exists()  # flask never ran


def test_db_downgrade_through_the_wrapper_runs_once_confirmed(tmp_path):
    typed = run_wrapper(tmp_path, "downgrade\n", "db", "downgrade", "--help")
    assert typed.returncode == 0, typed.stderr
    assert "Usage:" in typed.stdout and "drops the tables" in typed.stderr
    scripted = run_wrapper(
        tmp_path, "", "db", "downgrade", "--help", GATEWAY_DOWNGRADE_CONFIRMED="yes"
    )
    assert scripted.returncode == 0 and "Usage:" in scripted.stdout
    assert "drops the tables" not in scripted.stderr
    other = run_wrapper(tmp_path, "", "db", "upgrade", "--help")
    assert other.returncode == 0 and "drops the tables" not in other.stderr
