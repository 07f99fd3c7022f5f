"""The list queries' rules where they live, the query schemas: every bad value of every parameter,
no HTTP.

tests/api/test_api_bad_input.py proves with one request per list that each endpoint reads its query
through the schema named here and answers its refusal as a 422 envelope naming the parameter.
"""

import marshmallow as ma
import pytest
from webargs.multidictproxy import MultiDictProxy
from werkzeug.wrappers import Request

from gateway.errors import flatten_messages
from gateway.schemas.customer import CustomerListArgs
from gateway.schemas.outbound_sms import OutboundSmsListArgs
from gateway.schemas.payment import PaymentListArgs
from gateway.schemas.refund import RefundListArgs
from gateway.schemas.transaction import TransactionListArgs
from tests.bad_input import bad_query_values

LIST_ARGS = {  # path: (the schema its view reads the query with, filters beyond paging)
    "/api/v1/payments": (PaymentListArgs, ["status", "reference", "from", "to"]),
    "/api/v1/transactions": (TransactionListArgs, ["status", "provider", "from", "to"]),
    "/api/v1/refunds": (RefundListArgs, ["trx_id", "from", "to"]),
    "/api/v1/customers": (CustomerListArgs, ["email", "phone", "q"]),
    "/api/v1/sms/outbound": (OutboundSmsListArgs, ["status"]),
}
BAD_QUERIES = [
    (path, name, value)
    for path, (_, names) in LIST_ARGS.items()
    for name in ["page", "per_page", *names]
    for value in bad_query_values(name)
]


@pytest.fixture(autouse=True)
def clean_database():
    """No database here: the schemas are called alone, so the per-test emptying of tables is
    skipped.
    """
    yield


def load_query(schema_class, query_string):
    """A raw query string read as the API reads it: Werkzeug's parsing, webargs' proxy, the
    schema."""
    schema = schema_class()
    return schema.load(MultiDictProxy(Request.from_values(query_string=query_string).args, schema))


@pytest.mark.parametrize(
    "path, name, value",
    BAD_QUERIES,
    ids=[f"{path.rsplit('/', 1)[1]} {name}={value[:24]}" for path, name, value in BAD_QUERIES],
)
def test_a_list_schema_refuses_every_bad_value_naming_the_parameter(path, name, value):
    with pytest.raises(ma.ValidationError) as refused:
        load_query(LIST_ARGS[path][0], f"{name}={value}")

    # The field the error envelope names, as gateway.errors flattens the schema's messages.
    assert name in [error["field"] for error in flatten_messages(refused.value.messages)]


@pytest.mark.parametrize("path", LIST_ARGS)
def test_a_list_schema_takes_the_first_of_repeated_parameters_and_ignores_unknown_ones(path):
    args = load_query(LIST_ARGS[path][0], "page=1&page=2&per_page=5&bogus=%00&sort=-id")

    assert args == {"page": 1, "per_page": 5}
