"""The one way the wallets' modules call a wallet: JSON over HTTPS with a timeout, failures in our
words (never the request, which carries secrets)."""

import requests

from ..webhooks.transport import never_connected
from . import WalletUnavailable

CONNECT_TIMEOUT = 5
READ_TIMEOUT = 30  # bKash answers within seconds; its documents allow up to 30


class WalletTimeout(WalletUnavailable):
    """The wallet did not answer in time: whether it acted is unknown (ask by query)."""

    code = "WALLET_TIMEOUT"


def post_json(url, body, headers=None, timeout=None):
    """POST `body` as JSON and return the JSON object answered, whatever the HTTP status (wallets
    put their refusals in the body); otherwise WalletTimeout when the wallet may have acted (no
    answer in time, or an answer cut off), WalletUnavailable when it cannot have (never reached)."""
    try:
        response = requests.post(
            url,
            json=body,
            headers={"Accept": "application/json", **(headers or {})},
            timeout=timeout or (CONNECT_TIMEOUT, READ_TIMEOUT),
            allow_redirects=False,
        )
    except requests.Timeout:
        raise WalletTimeout("The wallet did not answer in time.") from None
    except requests.ConnectionError as error:
        if never_connected(error):  # refused or unreachable: nothing was sent
            raise WalletUnavailable(
                f"The wallet could not be reached ({type(error).__name__})."
            ) from None
        # The call was sent and its answer cut off: whether the wallet acted is unknown.
        raise WalletTimeout("The wallet's answer was cut off.") from None
    except requests.RequestException as error:
        raise WalletUnavailable(
            f"The wallet could not be reached ({type(error).__name__})."
        ) from None
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        raise WalletUnavailable(f"The wallet answered HTTP {response.status_code} without JSON.")
    answer.setdefault("_http_status", response.status_code)
    return answer
