"""Flask's signed-cookie sessions, the signer built only when a request brings a cookie.

Flask builds the itsdangerous serializer (a key derivation included) at the start of every
request; an API call or a webhook never sends the session cookie, so that work bought nothing on
the busiest paths. A request without the cookie gets a new empty session at once; Flask builds
the serializer when it saves one that was written to, and saving an untouched empty session
skips reading the cookie's settings.
"""

from flask.sessions import SecureCookieSessionInterface


class CookieSessionInterface(SecureCookieSessionInterface):
    """SecureCookieSessionInterface, opening an empty session without the signer when no cookie
    came.
    """

    def open_session(self, app, request):
        if app.secret_key and "HTTP_COOKIE" not in request.environ:  # no Cookie header at all
            return self.session_class()
        return super().open_session(app, request)

    def save_session(self, app, session, response):
        if not session and not session.modified:  # nothing to write or to remove
            if session.accessed:
                vary_on_cookie(response)
            return
        super().save_session(app, session, response)


def vary_on_cookie(response):
    """Add Cookie to the answer's Vary header, as `response.vary.add("Cookie")` does.

    An answer without a Vary header (every API answer) gets `Vary: Cookie` at once: parsing the
    absent header into a set and writing it back cost about 25 calls on each API request. It is
    appended, as setting an absent header does, without a second search for one to replace.
    """
    if "Vary" in response.headers:
        response.vary.add("Cookie")
    else:
        response.headers.add("Vary", "Cookie")
