"""`flask gateway backup | doctor`: keeping a deployment's data safe and checking that it is
sound."""

import click
from flask import current_app

from .backup import BackupRefused, backup_sqlite, pg_dump_command, sqlite_file
from .doctor import NOTE, run_checks

SECRET_KEY_NOTE = (
    "Keep SECRET_KEY with this backup (in your password manager, not beside the file): "
    "paired phones' "
    "keys and tokens and panel sessions derive from it; restored under another SECRET_KEY, every "
    "phone must be paired again."
)


@click.command("backup")
@click.argument("path", type=click.Path(dir_okay=False, writable=True))
@click.option("--force", is_flag=True, help="Replace PATH if it exists.")
def backup(path, force):
    """Copy the live SQLite database to PATH as one consistent snapshot (PostgreSQL: prints the
    pg_dump to use).
    """
    if not path.strip():  # click.Path takes '' for the current folder
        raise click.BadParameter(
            "give the backup file's path, e.g. backup.sqlite3", param_hint="PATH"
        )
    url = current_app.config["SQLALCHEMY_DATABASE_URI"]
    source = sqlite_file(url)
    if source is None:
        if url.startswith("postgresql"):
            raise click.ClickException(
                "This database is PostgreSQL: back it up with pg_dump (the password from "
                f"PGPASSWORD or ~/.pgpass):\n  {pg_dump_command(url, path)}\n"
                "Restore into an empty database with `pg_restore --no-owner --dbname <url> "
                "<file>`.\n" + SECRET_KEY_NOTE
            )
        raise click.ClickException("Only a SQLite file or PostgreSQL database can be backed up.")
    try:
        backup_sqlite(source, path, force=force)
    except BackupRefused as error:
        raise click.ClickException(str(error)) from None
    click.echo(
        f"Backed up {source} to {path} (one snapshot while the gateway runs; integrity check ok)."
    )
    click.echo(SECRET_KEY_NOTE)
    click.echo(
        f"To restore: stop the web and worker processes, delete {source.name}-wal and "
        f"{source.name}-shm beside {source}, copy {path} to {source}, and start them again."
    )


@click.command("doctor")
def doctor():
    """Check this deployment and say what is wrong and how to fix it; exit status 1 when anything
    is.
    """
    click.echo(
        f"Checking the {current_app.config['APP_ENV']} deployment at "
        f"{current_app.config['BASE_URL']}"
    )
    problems = 0
    for title, findings in run_checks():
        if not findings:
            click.echo(f"  ok       {title}")
        for finding in findings:
            problems += finding.severity != NOTE
            click.echo(
                f"  {'note' if finding.severity == NOTE else 'PROBLEM':8} {title}: "
                f"{finding.message}"
            )
            if finding.fix:
                click.echo(f"           fix: {finding.fix}")
    if problems:
        raise click.ClickException(f"{problems} problem{'' if problems == 1 else 's'} found.")
    click.echo("No problems found.")
