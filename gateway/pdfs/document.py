"""The fpdf document class, apart from gateway/pdfs/__init__.py so that fpdf is imported only when a
PDF is made, never at boot.
"""

from fpdf import FPDF


class FreshFontDocument(FPDF):
    """FPDF whose every cell starts from the main font again.

    fpdf2 2.8 with text shaping keeps shaping with the fallback font after a cell that needed it,
    so the next Latin-only cell came out as wrong glyphs; choosing the font afresh avoids it.
    """

    def fresh_font(self):
        family, style, size = self.font_family, self.font_style, self.font_size_pt
        self.set_font("bangla", "", size)
        self.set_font(family, style, size)

    def cell(self, *args, **kwargs):
        self.fresh_font()
        return super().cell(*args, **kwargs)

    def multi_cell(self, *args, **kwargs):
        self.fresh_font()
        return super().multi_cell(*args, **kwargs)
