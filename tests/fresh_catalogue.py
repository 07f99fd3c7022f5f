"""An app that reads the Bangla catalogue compiled from messages.po now, not the committed .mo.

The .mo is compiled by the lead after merging (one compile for every stream's entries); tests of new
Bangla texts compile the source into a temporary folder instead, so they check the words, not the
build step.
"""

from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from gateway import create_app
from gateway.extensions import babel, db

SOURCE = (
    Path(__file__).resolve().parent.parent
    / "gateway"
    / "translations"
    / "bn"
    / "LC_MESSAGES"
    / "messages.po"
)


def compile_catalogue(folder):
    """messages.po compiled to <folder>/bn/LC_MESSAGES/messages.mo; returns the folder."""
    target = Path(folder) / "bn" / "LC_MESSAGES"
    target.mkdir(parents=True, exist_ok=True)
    with open(SOURCE, "rb") as source, open(target / "messages.mo", "wb") as compiled:
        write_mo(compiled, read_po(source))
    return str(folder)


def app_with_fresh_catalogue(app, folder):
    """Another app on the same database whose Bangla comes from the freshly compiled catalogue."""
    forget_loaded_catalogues()
    fresh = create_app(
        {
            "APP_ENV": "testing",
            "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"],
            "REDIS_URL": None,
            "RATELIMIT_ENABLED": False,
            "WTF_CSRF_ENABLED": True,
            "SERVER_NAME": None,
            "BABEL_TRANSLATION_DIRECTORIES": compile_catalogue(folder),
        }
    )
    return fresh


def forget_loaded_catalogues():
    """Flask-Babel keeps one message domain, and its loaded catalogues, for every app of the
    process.
    """
    babel.domain_instance.cache.clear()


def dispose(fresh):
    """Close the extra app's connections; the suite's app then loads its own catalogue again."""
    with fresh.app_context():
        db.session.remove()
        db.engine.dispose()
    forget_loaded_catalogues()
