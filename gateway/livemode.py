"""Live or test mode (issue 31): the mode of the key a request came with, for the front doors.

A test key (`gw_test_…`) sees and makes only test objects, a live key only live ones; the domains
take the mode as an argument (`livemode=`), and the front door that checked the key passes this.
"""

from flask import g


def current_livemode():
    """True when the request's key is live, False when it is a test key.

    Set once per request by the front door that authenticated the key (api/auth.py for the merchant
    API, compat/views.py for the plugin dialects) through use_livemode. Where no key was checked (a
    job, a command, the checkout) it is True: live.
    """
    return g.get("livemode", True)


def use_livemode(livemode):
    """Record the authenticated key's mode for the rest of the request."""
    g.livemode = bool(livemode)
