"""A second process of the gateway (another web worker, an RQ worker): prints the bKash id token it
would call with for a method. Run as `python -m tests.wallets.token_process METHOD_ID` with
GATEWAY_TEST_CONFIG (JSON: the database, Redis and SECRET_KEY of the test's app); with
GATEWAY_TEST_GO (a path) it prints "ready" and asks only once that file exists."""

import json
import os
import sys
import time

from gateway import create_app
from gateway.extensions import db
from gateway.payments.models.payment_method import PaymentMethod
from gateway.wallets.bkash import id_token
from gateway.wallets.credentials import opened


def main(method_id):
    app = create_app({"APP_ENV": "testing", **json.loads(os.environ["GATEWAY_TEST_CONFIG"])})
    with app.app_context():
        method = db.session.get(PaymentMethod, method_id)
        base_url, secrets = opened(method)
        go = os.environ.get("GATEWAY_TEST_GO")
        if go:  # started together with another: both ask at once, when the test says go
            print("ready", flush=True)
            deadline = time.monotonic() + 30
            while not os.path.exists(go) and time.monotonic() < deadline:
                time.sleep(0.01)
        print(id_token(method, base_url, secrets))
        db.session.remove()
        db.engine.dispose()


if __name__ == "__main__":
    main(int(sys.argv[1]))
