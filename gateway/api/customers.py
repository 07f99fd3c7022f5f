"""Customer profiles: create, list, read (by id, e-mail or phone), change, delete."""

from ..livemode import current_livemode
from ..payments import customers
from ..schemas.common import DeletedSchema, envelope
from ..schemas.customer import (
    CustomerCreateSchema,
    CustomerListArgs,
    CustomerSchema,
    CustomerUpdateSchema,
)
from .auth import caller_brand
from .paging import listing, paginate, single
from .resource import resource_blueprint

URL = "customers"
blp = resource_blueprint(
    "customers", "Customer profiles, upserted from payments and editable here."
)


@blp.post("")
@blp.arguments(CustomerCreateSchema)
@blp.response(201, envelope(CustomerSchema))
def create_customer(data):
    """Create a profile; an e-mail already on file is a 409."""
    brand = caller_brand()
    customer = customers.create_customer(brand, data, current_livemode())
    return single(customers.with_totals([customer], brand)[0])


@blp.get("")
@blp.arguments(CustomerListArgs, location="query")
@blp.response(200, envelope(CustomerSchema, many=True))
def list_customers(args):
    """The brand's customers, newest first, with what each has paid."""
    brand = caller_brand()
    rows, meta = paginate(customers.list_customers_query(brand, args, current_livemode()), args)
    return listing(customers.with_totals(rows, brand), meta)


@blp.get("/<ident>")
@blp.response(200, envelope(CustomerSchema))
def read_customer(ident):
    """Read a profile by id, e-mail address or telephone number."""
    brand = caller_brand()
    customer = customers.get_customer(brand, ident, current_livemode())
    return single(customers.with_totals([customer], brand)[0])


@blp.patch("/<ident>")
@blp.arguments(CustomerUpdateSchema)
@blp.response(200, envelope(CustomerSchema))
def update_customer(data, ident):
    """Change a profile's name, e-mail or phone."""
    brand = caller_brand()
    customer = customers.update_customer(
        customers.get_customer(brand, ident, current_livemode()), data
    )
    return single(customers.with_totals([customer], brand)[0])


@blp.delete("/<ident>")
@blp.response(200, envelope(DeletedSchema))
def delete_customer(ident):
    """Delete a profile; its payments stay, no longer linked to it."""
    customer = customers.get_customer(caller_brand(), ident, current_livemode())
    customer_id = customer.id
    customers.delete_customer(customer)
    return single({"id": customer_id, "deleted": True})
