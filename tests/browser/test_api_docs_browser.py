"""The API docs (Swagger UI) work under their Content-Security-Policy: no violation, the routes
listed.
"""

import pytest

pytestmark = pytest.mark.browser


def test_the_api_docs_render_under_their_content_security_policy(live_url, new_page):
    from playwright.sync_api import expect

    page = new_page()
    violations = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text)
            if "Content Security Policy" in message.text or "Refused to" in message.text
            else None
        ),
    )
    response = page.goto(f"{live_url}/api/v1/docs")
    assert "script-src 'self' 'sha256-" in response.headers["content-security-policy"]
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Payment Gateway API")
    expect(page.locator(".opblock-summary-path").first).to_be_visible()
    assert violations == []
