"""The path guard of every API resource (check_path_arguments) on every bad id of every by-id route,
no HTTP.

An id holding a NUL character is the resource's own 404 here, before any query; every other bad id
goes on, unchanged, to the resource's lookup, which tests/api/test_api_bad_input.py tries with each
of them on both engines, with one request per route proving the wiring.
"""

import pytest
from flask import request

from gateway.api.resource import check_path_arguments
from gateway.domain_errors import NotFound
from tests.bad_input import BAD_IDS, BAD_IDS_PAST_THE_GUARD, BY_ID


@pytest.fixture(autouse=True)
def clean_database():
    """No database here: the guard is called alone, so the per-test emptying of tables is
    skipped."""
    yield


@pytest.mark.parametrize("method, path, code", BY_ID, ids=[f"{m} {p}" for m, p, _ in BY_ID])
@pytest.mark.parametrize("ident", BAD_IDS, ids=[ident[:24] for ident in BAD_IDS])
def test_the_path_guard_refuses_a_nul_id_as_the_resources_404_and_passes_the_rest_on_unchanged(
    app, method, path, code, ident
):
    with app.test_request_context(path.format(id=ident), method=method.upper()):
        routed = dict(request.view_args)
        if ident in BAD_IDS_PAST_THE_GUARD:
            check_path_arguments()
            assert request.view_args == routed
            assert "\x00" not in next(iter(routed.values()))
        else:
            with pytest.raises(NotFound) as refused:
                check_path_arguments()
            assert refused.value.code == code
