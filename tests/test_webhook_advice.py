"""One piece of advice on verifying webhooks: bootstrap, the panel, docs/webhooks.md and the example
receiver all name the header the example receiver checks.
"""

import re
from html import unescape
from pathlib import Path

from tests.panel.conftest import admin, as_admin, client  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parent.parent
SIGNATURE_HEADER = re.compile(r"X-Service-Signature[\w-]*")


def headers_named(text):
    """The signature headers a piece of advice names, in order, each once."""
    return list(dict.fromkeys(SIGNATURE_HEADER.findall(text)))


def example_header():
    """The one signature header examples/webhook_receiver.py reads before trusting a webhook."""
    source = (ROOT / "examples" / "webhook_receiver.py").read_text()
    [header] = re.findall(r'request\.headers\.get\("(X-Service-Signature[\w-]*)"\)', source)
    return header


def test_the_example_receiver_checks_the_replay_safe_header():
    assert example_header() == "X-Service-Signature-V1"


def test_bootstrap_names_the_header_the_example_checks(runner):
    output = runner.invoke(args=["gateway", "bootstrap"]).output
    [advice] = [line for line in output.splitlines() if line.startswith("Webhook secret")]
    assert headers_named(advice) == [example_header()], advice


def test_the_panel_names_the_header_the_example_checks(as_admin):
    page = as_admin.get("/panel/developers/webhooks").get_data(as_text=True)
    section = page[page.index('id="secret-heading"') :]
    hint = unescape(re.search(r'<p class="hint">(.*?)</p>', section, re.S).group(1))
    assert headers_named(hint) == [example_header()], hint


def test_every_verifying_section_of_the_docs_names_the_header_the_example_checks():
    text = (ROOT / "docs" / "webhooks.md").read_text()
    headings = [line for line in text.splitlines() if re.match(r"#+ Verifying", line)]
    assert headings
    for heading in headings:
        assert headers_named(heading) == [example_header()], heading
    section = text[text.index(headings[0]) :]
    section = section[: section.index("\n## ")]
    server_variable = "HTTP_" + example_header().upper().replace("-", "_")
    assert f"$_SERVER['{server_variable}']" in section  # the PHP snippet reads that header
    assert "$_SERVER['HTTP_X_SERVICE_SIGNATURE']" not in section


def test_the_rotation_advice_names_the_header_the_example_checks():
    text = (ROOT / "docs" / "configuration.md").read_text()
    rotation = text[text.index("rotate-webhook-secret") :]
    rotation = rotation[: rotation.index("\n## ")] if "\n## " in rotation else rotation
    assert example_header() in rotation
