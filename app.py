"""Entry point for `flask` and gunicorn (`gunicorn app:app`)."""

from gateway import create_app

app = create_app()
