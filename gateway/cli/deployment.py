"""What every command stands on: the deployment's brand, and a service's refusal as the command's
failure."""

import click

from ..accounts.models.brand import Brand
from ..extensions import db


def default_brand():
    """The deployment's brand (the first one), or a clear error when bootstrap has not run."""
    brand = db.session.execute(db.select(Brand).order_by(Brand.id).limit(1)).scalar_one_or_none()
    if brand is None:
        raise click.ClickException("No brand yet: run `flask gateway bootstrap` first.")
    return brand


def fail_on_api_error(error):
    """Turn a service's DomainError into a command-line failure."""
    raise click.ClickException(error.message)
