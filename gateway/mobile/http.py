"""Request plumbing shared by the companion-app views; answers render through their schemas."""

from flask_smorest import Blueprint
from webargs.flaskparser import FlaskParser

from ..api.resource import check_json_body


class ProtocolParser(FlaskParser):
    """webargs' Flask parser, reading a body as the app's protocol always has."""

    def load_json(self, req, schema):
        """The body, checked like the merchant API's (415, 400); none at all, or `null`, reads as
        `{}`.
        """
        check_json_body()
        payload = req.get_json(silent=True)
        return {} if payload is None else payload


class ProtocolBlueprint(Blueprint):
    """A flask-smorest Blueprint whose `arguments` validate with the protocol's parser."""

    ARGUMENTS_PARSER = ProtocolParser()
