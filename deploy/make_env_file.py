"""Write the production environment file (/etc/gateway/gateway.env) once, with a fresh random
SECRET_KEY.

Usage: BASE_URL=https://pay.example.com [DATABASE_URL=postgresql://…] [REDIS_URL=redis://…] \
    python3 make_env_file.py PATH
(`make env-file` runs it). Without DATABASE_URL the gateway uses SQLite in instance/; without
REDIS_URL the web process runs the jobs itself. Standard library only: it runs before the virtualenv
exists. It never overwrites an existing file, since that file's SECRET_KEY seals the phones' keys
and signs every session and token.
"""

import grp
import os
import re
import secrets
import sys
from pathlib import Path

REQUIRED = ("BASE_URL",)
OPTIONAL = ("DATABASE_URL", "REDIS_URL", "COMPANION_APP_URL")
# Values that read the same to systemd's EnvironmentFile= and to a shell's `set -a; . file`.
PLAIN = re.compile(r"^[A-Za-z0-9_./:@%+=,~-]*$")


def quoted(name, value):
    """A value as written in the file: bare when plain, else single-quoted; refused when neither
    reader agrees.
    """
    if PLAIN.match(value):
        return value
    if any(char in value for char in "'\\\n\r"):
        raise SystemExit(
            f"{name} holds a quote, a backslash or a line break; choose a value without them."
        )
    return f"'{value}'"


def env_lines(environ):
    """The file's lines: production, a new secret, one proxy (nginx), and the given addresses."""
    missing = [name for name in REQUIRED if not environ.get(name)]
    if missing:
        raise SystemExit(
            f"Set {' and '.join(missing)}, e.g. make env-file BASE_URL=https://pay.example.com "
            "DATABASE_URL=postgresql://gateway:PASSWORD@127.0.0.1:5432/gateway "
            "REDIS_URL=redis://127.0.0.1:6379/0"
        )
    values = {
        "APP_ENV": "production",
        "SECRET_KEY": secrets.token_hex(32),
        "TRUSTED_PROXIES": "1",
        "FLASK_APP": "app.py",
    }
    values.update(
        {
            name: environ[name].strip()
            for name in REQUIRED + OPTIONAL
            if environ.get(name, "").strip()
        }
    )
    return [
        "# The gateway's settings, read by its systemd units (EnvironmentFile=) and by "
        "deploy/gateway-flask.",
        "# SECRET_KEY signs sessions and tokens and seals the phones' keys: back it up "
        "with the database and",
        "# never change it by hand (docs/configuration.md says how to rotate it).",
        "# Other settings: the README's Configuration table; restart the services after a change.",
        *(f"{name}={quoted(name, value)}" for name, value in values.items()),
    ]


def write_env_file(path, environ, group="gateway"):
    """Create the file readable by root and the service's group only; refuse if it exists."""
    path = Path(path)
    text = "\n".join(env_lines(environ)) + "\n"
    new_folder = not path.parent.exists()
    path.parent.mkdir(mode=0o750, parents=True, exist_ok=True)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
    except FileExistsError:
        raise SystemExit(
            f"{path} exists already; kept as it is (its SECRET_KEY protects your data). "
            "Edit it by hand to change a setting."
        ) from None
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)
    os.chmod(path, 0o640)
    if os.geteuid() == 0:
        try:
            gid = grp.getgrnam(group).gr_gid
        except KeyError:
            print(
                f"No group {group!r} yet: run `chgrp {group} {path}` once it exists.",
                file=sys.stderr,
            )
        else:
            os.chown(path, 0, gid)
            if (
                new_folder
            ):  # /etc/gateway: the service may enter it; an existing folder is left as it was
                os.chown(path.parent, 0, gid)
    return path


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(
        f"Wrote {write_env_file(sys.argv[1], os.environ)} (a new SECRET_KEY; keep a copy "
        "with your backups)."
    )
