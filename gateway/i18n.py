"""Language of the pages: English or Bangla, from a `?lang=` switch kept in the session, else
Accept-Language.

Catalogues live in gateway/translations (the compiled .mo is committed; a test checks it matches the
.po). After changing texts: `pybabel extract -F babel.cfg -k _l -o /tmp/messages.pot .`,
`pybabel update -i /tmp/messages.pot -d gateway/translations`, translate, `pybabel compile -d
gateway/translations`.
"""

from flask import has_request_context, request, session
from flask_babel import get_babel, get_locale, gettext, refresh
from flask_babel.speaklater import LazyString
from markupsafe import Markup

LANGUAGES = ("en", "bn")
LANGUAGE_NAMES = {"en": "English", "bn": "বাংলা"}


class EscapingLazyString(LazyString):
    """A lazily translated text whose values are escaped when a template shows it.

    Flask-Babel's own lazy string declares its formatted text safe HTML (`__html__`), so a value
    such as a payment reference would reach the page as markup. Here only the translation is
    trusted; each value goes through Markup's `%`, which escapes it.
    """

    def __html__(self):
        (string,) = self._args
        translated = Markup(gettext(string))
        return translated % self._kwargs if self._kwargs else translated


def lazy_gettext(string, **variables):
    """The text translated when shown, in the page's language; values are escaped in HTML.

    Use this, never flask_babel.lazy_gettext (tests/security checks): see EscapingLazyString.
    """
    return EscapingLazyString(gettext, string, **variables)


def select_locale():
    """The switch in the URL, else the one remembered in the session, else the browser's best
    match."""
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
    if request.path.startswith("/api/"):
        # No pages there: its query string is not read, and nothing it answers is in the page's
        # language (an invoice's is forced by name), so a locale an earlier request cached stays
        # unread until the next page refreshes it. The refresh cost 25 calls per API request.
        return
    # Flask-Babel caches the locale on the app context, which an enclosing context (a CLI command
    # calling the test client, a test) shares across requests: choose afresh for each one.
    refresh()
    chosen = request.args.get("lang")
    if chosen in LANGUAGES and session.get("lang") != chosen:
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
