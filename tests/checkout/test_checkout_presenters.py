"""What the checkout shows, without HTTP: money, return URLs, readable brand colours, the Bangla
catalogue.
"""

from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from gateway.checkout.presenters import format_money, return_url
from gateway.checkout.theme import AA_CONTRAST, DEFAULT_COLOR, brand_theme, contrast

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "gateway" / "translations" / "bn" / "LC_MESSAGES"


@pytest.mark.parametrize(
    "amount, currency, shown",
    [
        ("500", "BDT", "৳500.00"),
        ("1500.5", "BDT", "৳1,500.50"),
        ("1234567.89", "BDT", "৳1,234,567.89"),
        ("12.5", "USD", "$12.50"),
        ("10", "SGD", "SGD 10.00"),
    ],
)
def test_amounts_are_shown_with_the_currency_symbol_and_two_decimals(amount, currency, shown):
    assert format_money(Decimal(amount), currency) == shown


@pytest.mark.parametrize(
    "base, expected",
    [
        ("https://shop.example/done", "https://shop.example/done?payment_id=P1&status=completed"),
        (
            "https://shop.example/done?order=7#top",
            "https://shop.example/done?order=7&payment_id=P1&status=completed#top",
        ),
        (
            "https://shop.example/done?status=x&payment_id=y",
            "https://shop.example/done?payment_id=P1&status=completed",
        ),
        (None, None),
        ("", None),
    ],
)
def test_return_url_carries_payment_id_and_status_once(base, expected):
    assert return_url(base, SimpleNamespace(public_id="P1"), "completed") == expected


@pytest.mark.parametrize(
    "color", ["#0f766e", "#e2136e", "#ffdd00", "#f6921e", "#ffffff", "#000000", "#808080"]
)
def test_brand_colours_always_give_readable_text(color):
    theme = brand_theme(SimpleNamespace(primary_color=color))
    assert theme["primary"] == color
    assert contrast(theme["primary"], theme["on_primary"]) >= AA_CONTRAST
    assert contrast(theme["accent"], "#ffffff") >= AA_CONTRAST


@pytest.mark.parametrize("color", [None, "", "red", "#12345", "#0f766e;}</style>", "url(x)"])
def test_anything_but_a_hex_colour_falls_back_to_the_default(color):
    assert brand_theme(SimpleNamespace(primary_color=color))["primary"] == DEFAULT_COLOR
    assert brand_theme(None)["primary"] == DEFAULT_COLOR


def test_the_compiled_bangla_catalogue_matches_its_source():
    with (
        open(CATALOGUE / "messages.po", "rb") as source,
        open(CATALOGUE / "messages.mo", "rb") as compiled,
    ):
        po, mo = read_po(source), read_mo(compiled)
    translated = {as_key(m.id): as_key(m.string) for m in po if m.id and m.string and not m.fuzzy}
    assert translated, "the Bangla catalogue is empty"
    compiled_entries = {as_key(m.id): as_key(m.string) for m in mo if m.id}
    assert compiled_entries == translated, "run `pybabel compile -d gateway/translations`"


def as_key(value):
    """Plural entries carry lists of ids and strings; make them comparable dict keys."""
    return tuple(value) if isinstance(value, (list, tuple)) else value


def test_every_checkout_text_has_a_bangla_translation():
    """Texts extracted from the checkout's code and templates right now, as pybabel would."""
    keywords = {**DEFAULT_KEYWORDS, "_l": None}
    found = set()
    for folder, method in (("gateway/checkout", "python"), ("templates/checkout", "jinja2")):
        for item in extract_from_dir(
            ROOT / folder, [("**.py", "python"), ("**.html", method)], keywords=keywords
        ):
            found.add(item[2] if isinstance(item[2], str) else item[2][0])
    with open(CATALOGUE / "messages.po", "rb") as source:
        translated = {m.id for m in read_po(source) if m.id and m.string and not m.fuzzy}
    assert found and sorted(found - translated) == []
