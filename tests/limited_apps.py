"""An app with rate limits on, over the suite's database: the suite's own app runs with them off."""

from contextlib import contextmanager

from gateway import create_app
from gateway.extensions import db


def limited_settings(app, **settings):
    """The settings of an app over `app`'s database with limits on, counted in memory; `settings`
    (a LOGIN_RATE_LIMIT, say) added."""
    return {
        "APP_ENV": "testing",
        "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"],
        "REDIS_URL": None,
        "RATELIMIT_ENABLED": True,
        "RATELIMIT_STORAGE_URI": "memory://",
        **settings,
    }


@contextmanager
def limited_app(app, **settings):
    """That app, in its own application context; its connections are closed after."""
    limited = create_app(limited_settings(app, **settings))
    with limited.app_context():
        yield limited
        db.session.remove()
        db.engine.dispose()
