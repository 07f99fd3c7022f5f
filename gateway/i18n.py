"""Language of the pages: English or Bangla, from a `?lang=` switch kept in the session, else Accept-Language.

Catalogues live in gateway/translations (the compiled .mo is committed; a test checks it matches the .po).
After changing texts: `pybabel extract -F babel.cfg -k _l -o /tmp/messages.pot .`,
`pybabel update -i /tmp/messages.pot -d gateway/translations`, translate, `pybabel compile -d gateway/translations`.
"""

from flask import has_request_context, request, session
from flask_babel import get_babel, get_locale, refresh

LANGUAGES = ("en", "bn")
LANGUAGE_NAMES = {"en": "English", "bn": "বাংলা"}


def select_locale():
    """The switch in the URL, else the one remembered in the session, else the browser's best match."""
    if not has_request_context():
        return None
    chosen = request.args.get("lang")
    if chosen in LANGUAGES:
        return chosen
    remembered = session.get("lang")
    if remembered in LANGUAGES:
        return remembered
    return request.accept_languages.best_match(LANGUAGES, default=LANGUAGES[0])


def remember_language_choice():
    """Keep a `?lang=` choice for the following pages of this visit."""
    # Flask-Babel caches the locale on the app context, which an enclosing context (a CLI command
    # calling the test client, a test) shares across requests: choose afresh for each one.
    refresh()
    chosen = request.args.get("lang")
    if (
        chosen in LANGUAGES
        and session.get("lang") != chosen
        and not request.path.startswith("/api/")
    ):
        session["lang"] = chosen


def language_context():
    """Template globals: the page language and the switch's choices."""
    current = str(get_locale() or LANGUAGES[0])
    return {"page_language": current, "language_names": LANGUAGE_NAMES}


def init_i18n(app):
    """Attach the locale selector and the language switch to an application."""
    get_babel(app).locale_selector = select_locale
    app.before_request(remember_language_choice)
    app.context_processor(language_context)
