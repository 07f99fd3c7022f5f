"""Reading our "taking you to the wallet" page the way a browser does: the wallet page its meta
refresh (and its link) send the customer to."""

import html
import re

REFRESH = re.compile(r'<meta http-equiv="refresh" content="0;url=([^"]+)">')


def wallet_page_of(answer):
    """The wallet page URL our answer to the wallet button sends the browser to."""
    body = answer.get_data(as_text=True)
    assert answer.status_code == 200, body
    found = REFRESH.search(body)
    assert found, "no refresh to the wallet's page"
    url = html.unescape(found.group(1))
    assert f'href="{found.group(1)}"' in body  # the same page behind the link, without a refresh
    return url
