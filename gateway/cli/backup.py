"""Backups: a consistent online copy of a SQLite database (sqlite3's backup API), and PostgreSQL's
pg_dump advice.
"""

import os
import shlex
import sqlite3
from contextlib import closing, suppress
from pathlib import Path

from sqlalchemy.engine import URL, make_url


class BackupRefused(Exception):
    """The backup cannot be made as asked; the message says what to do instead."""


def sqlite_file(database_url):
    """The SQLite file behind a database URL, or None for another engine or an in-memory
    database."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)


def pg_dump_command(database_url, target):
    """The pg_dump command that backs up this PostgreSQL database to `target`, without its
    password."""
    url = make_url(database_url)
    # Built anew: URL.set(password=None) keeps the password, and it must never reach a terminal or a
    # log.
    bare = URL.create(
        "postgresql",
        username=url.username,
        host=url.host,
        port=url.port,
        database=url.database,
        query=url.query,
    )
    return (
        f"pg_dump --format=custom --file {shlex.quote(str(target))} "
        f"{shlex.quote(bare.render_as_string(False))}"
    )


def backup_sqlite(source, target, force=False):
    """Copy the live SQLite database `source` to `target` as one snapshot; returns the copy's
    integrity_check result.

    The backup API reads every page inside one read transaction, so writers carry on and the copy
    holds exactly the transactions committed before it began; a file copy could catch a half-written
    page or miss the WAL.
    """
    source, target = Path(source), Path(target)
    if not source.is_file():
        raise BackupRefused(f"There is no SQLite database at {source}.")
    if target.resolve() == source.resolve():
        raise BackupRefused("The backup must not be the live database itself.")
    if target.exists() and not force:
        raise BackupRefused(f"{target} exists: give another path, or --force to replace it.")
    folder = target.parent
    if not folder.is_dir():
        raise BackupRefused(f"The folder {folder} does not exist: create it, or give another path.")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise BackupRefused(
            f"The folder {folder} is not writable by this user: give a folder it may write in."
        )
    # Written beside the target and renamed at the end: a failed or interrupted backup never leaves
    # half a file where an older good one was.
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    try:
        partial.unlink(missing_ok=True)
        integrity = snapshot(source, partial)
        if integrity != "ok":
            raise BackupRefused(
                f"The copy failed its integrity check ({integrity}); the live database may be "
                "damaged."
            )
        os.replace(partial, target)
    except (sqlite3.Error, OSError) as error:
        discard(partial)
        raise BackupRefused(f"The backup to {target} failed: {error}.") from error
    except BaseException:
        discard(partial)
        raise
    return integrity


def snapshot(source, copy_path):
    """Copy the database `source` into a new file `copy_path` in one read transaction; returns the
    copy's integrity_check result."""
    with closing(sqlite3.connect(source, timeout=10)) as live:
        with closing(sqlite3.connect(copy_path)) as copy:
            live.backup(copy)  # pages=-1: the whole database in one step, one snapshot
            # One self-contained file: restoring it is copying it back, with no -wal beside it to
            # forget.
            copy.execute("PRAGMA journal_mode=DELETE")
            return copy.execute("PRAGMA integrity_check").fetchone()[0]


def discard(partial):
    """Remove a half-made copy, never raising over the error that stopped the backup."""
    with suppress(OSError):
        partial.unlink(missing_ok=True)
