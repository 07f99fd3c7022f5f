"""PDFs of the gateway (invoices, payment receipts): an A4 page with the bundled fonts, Bangla
shaped.

Latin is set in Liberation Sans, Bangla and ৳ in Lohit Bengali (fonts/README.md). fpdf and
fontTools (about a second of imports) load with the first PDF, not at every boot.
"""

import logging
from pathlib import Path

FONTS = Path(__file__).resolve().parent / "fonts"
logging.getLogger("fontTools").setLevel(logging.WARNING)  # it logs every glyph it subsets
INK, MUTED, RULE = (17, 24, 39), (100, 110, 125), (220, 224, 230)


def new_document(page_format="A4"):
    """A page with the bundled fonts and text shaping on (Bangla needs HarfBuzz)."""
    from .document import FreshFontDocument

    pdf = FreshFontDocument(format=page_format, unit="mm")
    pdf.set_margins(18, 18, 18)
    pdf.set_auto_page_break(True, margin=18)
    pdf.add_font("sans", "", FONTS / "LiberationSans-Regular.ttf")
    pdf.add_font("sans", "B", FONTS / "LiberationSans-Bold.ttf")
    pdf.add_font("bangla", "", FONTS / "Lohit-Bengali.ttf")
    pdf.set_fallback_fonts(["bangla"], exact_match=False)
    pdf.set_text_shaping(True)
    pdf.add_page()
    return pdf


def text(pdf, size, bold=False, colour=INK):
    """Set the font for the next lines."""
    pdf.set_font("sans", "B" if bold else "", size)
    pdf.set_text_color(*colour)
