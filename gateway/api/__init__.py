"""The merchant REST API under /api/v1, documented from the schemas that validate it."""

from flask import current_app, json, send_from_directory
from flask_smorest import Api
from swagger_ui_bundle import swagger_ui_path

from ..accounts.brands import accepted_currencies
from ..errors import render_http_exception
from ..extensions import csrf
from ..schemas.common import ErrorSchema
from .openapi_rules import tighten_document, with_currencies

DOCS_ASSETS = "/api/v1/docs-assets/"
API_DESCRIPTION = (
    "Merchant payment gateway API. Text values may not hold the NUL character (it cannot be "
    "stored): such a value is refused on its field."
)


class GatewayApi(Api):
    """flask-smorest's Api, answering errors in the envelope of gateway.errors."""

    ERROR_SCHEMA = (
        ErrorSchema  # documents the envelope gateway.errors renders, not flask-smorest's own
    )

    def handle_http_exception(self, error):
        """flask-smorest's documented hook for HTTP errors, handed to the app's one renderer."""
        return render_http_exception(error)


def register_api(app):
    """Attach every resource blueprint, the OpenAPI document and the offline docs page."""
    from . import (
        api_keys,
        customers,
        dashboard,
        events,
        exports,
        invoices,
        outbound_sms,
        payment_links,
        payments,
        refunds,
        test_mode,
        transactions,
        webhook_endpoints,
        webhooks,
    )

    app.config.setdefault("OPENAPI_SWAGGER_UI_PATH", "docs")
    app.config.setdefault("OPENAPI_SWAGGER_UI_URL", DOCS_ASSETS)
    api = GatewayApi(app, spec_kwargs={"info": {"description": API_DESCRIPTION}})
    api.spec.components.security_scheme("bearer", {"type": "http", "scheme": "bearer"})
    api.spec.options["security"] = [{"bearer": []}]
    for module in (
        payments,
        transactions,
        refunds,
        dashboard,
        webhooks,
        outbound_sms,
        customers,
        api_keys,
        payment_links,
        exports,
        invoices,
        events,
        webhook_endpoints,
        test_mode,
    ):
        csrf.exempt(module.blp)
        api.register_blueprint(module.blp, url_prefix=f"/api/v1/{module.URL}")
    tighten_document(api.spec, app.config)
    app.extensions["gateway_api"] = api
    # flask-smorest's route for the document, completed with what only the database knows.
    app.view_functions["api-docs.openapi_json"] = serve_document

    @app.get(DOCS_ASSETS + "<path:filename>")
    def docs_assets(filename):
        """Swagger UI's files, served from the installed bundle rather than a CDN."""
        return send_from_directory(swagger_ui_path, filename)


def serve_document():
    """/api/v1/openapi.json: the document, its currencies those the brands accept."""
    document = current_app.extensions["gateway_api"].spec.to_dict()
    document = with_currencies(document, accepted_currencies())
    # In the schemas' own order, as flask-smorest serves it.
    return current_app.response_class(
        json.dumps(document, indent=2, sort_keys=False), mimetype="application/json"
    )
