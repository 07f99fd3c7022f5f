"""`flask gateway worker | sweep | rotate-webhook-secret`: background work and the webhook
secret."""

import click
from flask import current_app
from werkzeug.utils import import_string

from config import MAX_SECONDS, SECONDS_BOUND

from ..jobs import PERIODIC, QUEUES
from ..webhooks.deliveries import rotate_webhook_secret
from .deployment import default_brand


@click.command("worker")
@click.option(
    "--queues",
    default=",".join(QUEUES),
    show_default=True,
    help="Comma-separated queues to serve; only a worker serving maintenance enqueues the "
    "periodic jobs.",
)
@click.option("--burst", is_flag=True, help="Quit once the queues are empty (no periodic jobs).")
@click.option(
    "--log-level", default="INFO", show_default=True, help="WARNING drops RQ's three lines per job."
)
def worker(queues, burst, log_level):
    """Run an RQ worker with its scheduler (and the periodic sweeps when it serves maintenance);
    waits out Redis.
    """
    if not current_app.config.get("REDIS_URL"):
        raise click.ClickException(
            "REDIS_URL is not set: without Redis the web process runs every job itself."
        )
    names = [name.strip() for name in queues.split(",") if name.strip()]
    unknown = sorted(set(names) - set(QUEUES))
    if unknown or not names:
        raise click.ClickException(
            f"Unknown queue(s) {', '.join(unknown) or '(none)'}; choose from {', '.join(QUEUES)}."
        )
    from ..jobs.rq_worker import run_worker

    run_worker(current_app._get_current_object(), names, burst=burst, log_level=log_level.upper())


@click.command("sweep")
def sweep():
    """Run each periodic job once now: outbox sweep, expiry, idempotency and rate-limit pruning,
    self-heal.
    """
    for name, path, _ in PERIODIC:
        result = import_string(path)()
        click.echo(f"{name}: {len(result) if isinstance(result, list) else result}")


@click.command("rotate-webhook-secret")
@click.option(
    "--overlap",
    type=click.IntRange(min=0, max=MAX_SECONDS),  # WEBHOOK_SECRET_OVERLAP's bound
    default=None,
    help="Seconds the old secret still signs X-Service-Signature-Previous (default "
    f"WEBHOOK_SECRET_OVERLAP; at most {SECONDS_BOUND}).",
)
def rotate_webhook_secret_command(overlap):
    """Replace the brand's webhook signing secret; the new secret alone is printed on the last
    line."""
    brand = default_brand()
    secret = rotate_webhook_secret(brand, overlap)
    if brand.webhook_secret_previous_until is not None:
        click.echo(
            f"The old secret still signs X-Service-Signature-Previous until "
            f"{brand.webhook_secret_previous_until:%Y-%m-%d %H:%M} UTC."
        )
    click.echo(
        f"Rotated the webhook secret of {brand.name}. Update your receivers; the new secret is:"
    )
    click.echo(secret)
