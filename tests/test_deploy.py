"""The deployment kit: systemd units that parse and name real paths, the environment file,
setup-prod, make run HOST.
"""

import configparser
import ipaddress
import os
import re
import runpy
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from config import FIXED

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
UNITS = sorted((DEPLOY / "systemd").glob("*.service"))
INSTALL_DIR = "/srv/gateway"
ENV_FILE = "/etc/gateway/gateway.env"
TEST_ONLY = {
    "pytest",
    "freezegun",
    "pytest-httpserver",
    "factory-boy",
    "playwright",
    "hypothesis",
    "jsonschema",
    "openapi-spec-validator",
}


def unit(path):
    """A unit file as configparser reads it (names keep their case; a repeated key would be an
    error).
    """
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str
    parser.read(path)
    return parser


def in_checkout(path):
    """A path of the installed gateway (/srv/gateway/…) as the same path in this checkout."""
    return (
        ROOT / Path(path).relative_to(INSTALL_DIR) if path.startswith(INSTALL_DIR) else Path(path)
    )


def make_dry_run(*args, env=None):
    """What `make -n ARGS` would run, as text (nothing is run but the Makefile's own look-ups)."""
    return subprocess.run(
        ["make", "-n", "--no-print-directory", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env=env or os.environ,
    ).stdout


def test_the_kit_has_a_web_unit_and_a_worker_unit():
    assert [path.name for path in UNITS] == ["gateway-web.service", "gateway-worker@.service"]


@pytest.mark.parametrize("path", UNITS, ids=lambda path: path.name)
def test_each_unit_is_complete_and_runs_as_the_gateway_user_from_the_environment_file(path):
    parsed = unit(path)
    assert parsed.sections() == ["Unit", "Service", "Install"]
    after = set(parsed["Unit"]["After"].split())
    assert {"network-online.target", "postgresql.service", "redis-server.service"} <= after
    assert parsed["Unit"]["Wants"] == "network-online.target"
    assert (
        int(parsed["Unit"]["StartLimitBurst"]) >= 3
        and int(parsed["Unit"]["StartLimitIntervalSec"]) >= 60
    )
    service = parsed["Service"]
    assert (service["User"], service["Group"]) == ("gateway", "gateway")
    assert service["EnvironmentFile"] == ENV_FILE
    assert service["WorkingDirectory"] == INSTALL_DIR
    assert service["Restart"] == "always" and int(service["RestartSec"]) > 0
    assert parsed["Install"]["WantedBy"] == "multi-user.target"


@pytest.mark.parametrize("path", UNITS, ids=lambda path: path.name)
def test_each_unit_names_commands_and_paths_that_exist_in_an_installed_checkout(path):
    service = unit(path)["Service"]
    command = shlex.split(service["ExecStart"])
    executable = in_checkout(command[0])
    assert executable.exists() and os.access(executable, os.X_OK), command[0]
    for argument in command[1:]:
        if "/" in argument:  # a file argument, relative to WorkingDirectory
            assert (ROOT / argument).is_file(), argument
    for writable in service.get("ReadWritePaths", "").split():
        assert in_checkout(writable).is_dir(), writable
    if "ExecReload" in service:
        assert Path(shlex.split(service["ExecReload"])[0]).exists()


def test_the_web_unit_runs_gunicorn_on_the_app_with_the_kits_settings():
    command = shlex.split(unit(DEPLOY / "systemd" / "gateway-web.service")["Service"]["ExecStart"])
    assert command == [
        f"{INSTALL_DIR}/.venv/bin/gunicorn",
        "-c",
        "deploy/gunicorn.conf.py",
        "app:app",
    ]
    settings = runpy.run_path(str(DEPLOY / "gunicorn.conf.py"))
    assert settings["bind"] == "127.0.0.1:8000"
    # systemd waits for gunicorn's graceful stop before it kills.
    stop_timeout = int(
        unit(DEPLOY / "systemd" / "gateway-web.service")["Service"]["TimeoutStopSec"]
    )
    assert stop_timeout > settings["graceful_timeout"]


def nginx_setting(name):
    """Every value of a directive in the kit's nginx site, in order."""
    return re.findall(
        rf"^\s*{name}\s+([^;{{]+);", (DEPLOY / "nginx" / "gateway.conf").read_text(), re.MULTILINE
    )


def test_nginx_waits_longer_than_gunicorn_and_caps_bodies_as_the_app_does():
    timeout = runpy.run_path(str(DEPLOY / "gunicorn.conf.py"))["timeout"]
    for directive in ("proxy_read_timeout", "proxy_send_timeout"):
        assert [int(value.rstrip("s")) > timeout for value in nginx_setting(directive)] == [True]
    assert (
        nginx_setting("client_max_body_size") == ["1m"]
        and FIXED["MAX_CONTENT_LENGTH"] == 1024 * 1024
    )
    assert nginx_setting("proxy_set_header X-Forwarded-Proto") == ["$scheme"]
    assert nginx_setting("proxy_set_header X-Forwarded-For") == ["$proxy_add_x_forwarded_for"]
    assert nginx_setting("proxy_pass") == ["http://gateway_web"] and nginx_setting("server") == [
        "127.0.0.1:8000"
    ]


def test_the_worker_unit_runs_the_rq_worker_command():
    service = unit(DEPLOY / "systemd" / "gateway-worker@.service")["Service"]
    assert shlex.split(service["ExecStart"]) == [
        f"{INSTALL_DIR}/.venv/bin/flask",
        "gateway",
        "worker",
    ]
    assert service["Environment"] == "FLASK_APP=app.py"


def test_systemd_analyze_verifies_the_units(tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed here (Debian's systemd package has it)")
    for path in UNITS:
        # The same units with /srv/gateway pointing at this checkout, so that their commands exist.
        (tmp_path / path.name).write_text(path.read_text().replace(INSTALL_DIR, str(ROOT)))
    names = [str(tmp_path / path.name) for path in UNITS] + [
        str(tmp_path / "gateway-worker@1.service")
    ]
    result = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *names], capture_output=True, text=True
    )
    assert result.returncode == 0 and result.stderr.strip() == "", result.stderr


def test_systemd_analyze_catches_a_broken_unit(tmp_path):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed here (Debian's systemd package has it)")
    broken = tmp_path / "gateway-web.service"
    broken.write_text(
        (DEPLOY / "systemd" / "gateway-web.service")
        .read_text()
        .replace(INSTALL_DIR, "/nonexistent")
    )
    result = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(broken)], capture_output=True, text=True
    )
    assert result.returncode != 0 and "/nonexistent/.venv/bin/gunicorn" in result.stderr


def env_file(path, **values):
    """Run the kit's env-file writer with these settings; returns the finished process."""
    env = {
        key: val
        for key, val in os.environ.items()
        if key not in {"BASE_URL", "DATABASE_URL", "REDIS_URL"}
    }
    return subprocess.run(
        [sys.executable, str(DEPLOY / "make_env_file.py"), str(path)],
        env={**env, **values},
        capture_output=True,
        text=True,
    )


def read_env_file(path):
    """KEY=value lines as systemd's EnvironmentFile= reads them (comments skipped, one level of
    quotes removed).
    """
    values = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.partition("=")
            values[name] = value[1:-1] if value[:1] == value[-1:] == "'" else value
    return values


def test_the_env_file_has_production_a_random_secret_one_proxy_and_the_given_addresses(tmp_path):
    path = tmp_path / "etc" / "gateway.env"
    written = env_file(
        path,
        BASE_URL="https://pay.shop.test",
        DATABASE_URL="postgresql://gateway:s3cret@127.0.0.1/gw",
        REDIS_URL="redis://127.0.0.1:6379/0",
    )
    assert written.returncode == 0, written.stderr
    values = read_env_file(path)
    assert values == {
        "APP_ENV": "production",
        "SECRET_KEY": values["SECRET_KEY"],
        "TRUSTED_PROXIES": "1",
        "FLASK_APP": "app.py",
        "BASE_URL": "https://pay.shop.test",
        "DATABASE_URL": "postgresql://gateway:s3cret@127.0.0.1/gw",
        "REDIS_URL": "redis://127.0.0.1:6379/0",
    }
    assert re.fullmatch(r"[0-9a-f]{64}", values["SECRET_KEY"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # root and the gateway group only
    assert "s3cret" not in written.stdout + written.stderr


def test_make_env_file_writes_the_file_it_is_given(tmp_path):
    env = {
        key: val
        for key, val in os.environ.items()
        if key not in {"BASE_URL", "DATABASE_URL", "REDIS_URL"}
    }
    path = tmp_path / "gateway" / "gateway.env"
    subprocess.run(
        [
            "make",
            "--no-print-directory",
            "env-file",
            f"ENV_FILE={path}",
            "BASE_URL=https://pay.shop.test",
            "REDIS_URL=redis://127.0.0.1:6379/0",
        ],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    values = read_env_file(path)
    assert (values["BASE_URL"], values["REDIS_URL"], values["APP_ENV"]) == (
        "https://pay.shop.test",
        "redis://127.0.0.1:6379/0",
        "production",
    )
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o750


def test_each_env_file_gets_its_own_secret(tmp_path):
    settings = {
        "BASE_URL": "https://pay.shop.test",
        "DATABASE_URL": "sqlite:////srv/gateway/instance/g.sqlite3",
    }
    assert env_file(tmp_path / "a.env", **settings).returncode == 0
    assert env_file(tmp_path / "b.env", **settings).returncode == 0
    assert (
        read_env_file(tmp_path / "a.env")["SECRET_KEY"]
        != read_env_file(tmp_path / "b.env")["SECRET_KEY"]
    )


def test_an_existing_env_file_is_never_overwritten(tmp_path):
    path = tmp_path / "gateway.env"
    settings = {"BASE_URL": "https://pay.shop.test", "DATABASE_URL": "sqlite:////tmp/g.sqlite3"}
    assert env_file(path, **settings).returncode == 0
    before = path.read_text()
    again = env_file(path, **settings)
    assert again.returncode != 0 and "exists already" in again.stderr
    assert path.read_text() == before


def test_the_env_file_needs_the_base_url(tmp_path):
    result = env_file(tmp_path / "gateway.env", DATABASE_URL="sqlite:////tmp/g.sqlite3")
    assert result.returncode != 0 and "Set BASE_URL" in result.stderr
    assert not (tmp_path / "gateway.env").exists()


def test_without_a_database_or_redis_the_env_file_leaves_sqlite_and_in_process_jobs(tmp_path):
    assert env_file(tmp_path / "gateway.env", BASE_URL="https://pay.shop.test").returncode == 0
    values = read_env_file(tmp_path / "gateway.env")
    assert "DATABASE_URL" not in values and "REDIS_URL" not in values
    assert values["APP_ENV"] == "production" and values["TRUSTED_PROXIES"] == "1"


def test_a_value_with_shell_characters_is_quoted_so_systemd_and_sh_read_the_same(tmp_path):
    path = tmp_path / "gateway.env"
    url = "postgresql://gateway:a&b;c@127.0.0.1/gw?sslmode=require&application_name=gw"
    assert env_file(path, BASE_URL="https://pay.shop.test", DATABASE_URL=url).returncode == 0
    assert read_env_file(path)["DATABASE_URL"] == url
    shell = subprocess.run(
        ["sh", "-c", f'set -a; . "{path}"; printf %s "$DATABASE_URL"'],
        capture_output=True,
        text=True,
    )
    assert shell.stdout == url


def test_a_value_with_a_quote_is_refused(tmp_path):
    result = env_file(
        tmp_path / "gateway.env",
        BASE_URL="https://pay.shop.test",
        DATABASE_URL="postgresql://a:it's@h/db",
    )
    assert result.returncode != 0 and "quote" in result.stderr


def test_the_env_file_starts_the_production_configuration(tmp_path):
    path = tmp_path / "gateway.env"
    written = env_file(
        path, BASE_URL="https://pay.shop.test", DATABASE_URL=f"sqlite:///{tmp_path}/g.sqlite3"
    )
    assert written.returncode == 0, written.stderr
    code = (
        "from gateway import create_app; app = create_app(); "
        "print(app.config['APP_ENV'], app.config['TRUSTED_PROXIES'], "
        "app.config['SESSION_COOKIE_SECURE'])"
    )
    env = {"PATH": os.environ["PATH"], **read_env_file(path)}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-3:] == ["production", "1", "True"]


def requirement_names(path):
    """The package names a requirements file installs, following its -r includes."""
    names = set()
    for line in Path(path).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r"):
            names |= requirement_names(Path(path).parent / line[2:].strip())
        elif line:
            names.add(re.split(r"[\[=<>!~;]", line)[0].strip().lower())
    return names


def test_setup_prod_installs_the_runtime_requirements_without_test_packages():
    commands = make_dry_run("setup-prod", "VENV=/nonexistent/venv")
    installs = [
        shlex.split(line)
        for line in commands.splitlines()
        if "pip install" in line and "-r" in line
    ]
    files = [command[command.index("-r") + 1] for command in installs]
    assert files == ["requirements.txt"]
    installed = requirement_names(ROOT / "requirements.txt")
    assert {"flask", "gunicorn", "psycopg", "rq"} <= installed
    assert not installed & TEST_ONLY
    assert TEST_ONLY <= requirement_names(
        ROOT / "requirements-dev.txt"
    )  # the list above is the dev file's


def run_line(output):
    """The command line `make run` would serve with."""
    return next(line for line in output.splitlines() if "flask run" in line)


def test_make_run_serves_this_computer_only_by_default():
    env = {key: val for key, val in os.environ.items() if key not in {"BASE_URL", "HOST"}}
    assert run_line(make_dry_run("run", env=env)) == (
        'BASE_URL="http://127.0.0.1:5000" .venv/bin/flask run --host 127.0.0.1 --port 5000'
    )


def test_make_run_host_0000_serves_the_network_with_base_url_on_this_machines_address():
    env = {key: val for key, val in os.environ.items() if key not in {"BASE_URL", "HOST"}}
    output = make_dry_run("run", "HOST=0.0.0.0", env=env)
    match = re.fullmatch(
        r'BASE_URL="http://([^"]+):5000" \.venv/bin/flask run --host 0\.0\.0\.0 --port 5000',
        run_line(output),
    )
    assert match, run_line(output)
    address = ipaddress.ip_address(match.group(1))
    if address.is_loopback:
        pytest.skip("this machine has no network address besides loopback")
    assert (
        f"Gateway on http://{address}:5000" in output
    )  # printed for the owner to type on the phone


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_make_run_keeps_an_explicit_base_url(how):
    env = {key: val for key, val in os.environ.items() if key not in {"BASE_URL", "HOST"}}
    if how == "environment":
        output = make_dry_run(
            "run", "HOST=0.0.0.0", env={**env, "BASE_URL": "https://pay.shop.test"}
        )
    else:
        output = make_dry_run("run", "HOST=0.0.0.0", "BASE_URL=https://pay.shop.test", env=env)
    assert (
        run_line(output)
        == 'BASE_URL="https://pay.shop.test" .venv/bin/flask run --host 0.0.0.0 --port 5000'
    )
