"""Mail tests sign in to the panel like the panel's own tests."""

from tests.panel.conftest import admin, as_admin, client, staff  # noqa: F401 - fixtures
