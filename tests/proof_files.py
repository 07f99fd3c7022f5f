"""Real small receipt files for the manual-method tests, made here: a JPEG, a PNG, a PDF, and the
bad ones (a PHP script named .jpg, a PDF that inflates far past the budget, one with absurdly many
objects)."""

import io
import zlib

from fpdf import FPDF
from PIL import Image

PHP = b"<?php system($_GET['c']); ?>\n"


def image_bytes(fmt="JPEG", size=(40, 30)):
    """A small real image in `fmt`."""
    out = io.BytesIO()
    Image.new("RGB", size, (200, 30, 60)).save(out, fmt)
    return out.getvalue()


def pdf_bytes():
    """A one-page PDF receipt, as fpdf2 writes it."""
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(text="Deposit slip: Tk 500.00, ref DEP12345")
    return bytes(pdf.output())


def pdf_with(body):
    """A PDF shell around raw object bytes: header, the objects, an end marker."""
    return b"%PDF-1.7\n" + body + b"\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"


def bomb_pdf(inflated=60 * 1024 * 1024):
    """A small PDF whose one Flate stream inflates to `inflated` bytes of zeros."""
    packed = zlib.compress(b"\0" * inflated, 9)
    return pdf_with(
        b"1 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed)
        + packed
        + b"\nendstream\nendobj"
    )


def many_objects_pdf(count=6000):
    """A PDF of `count` empty objects."""
    return pdf_with(b"".join(b"%d 0 obj\n<< >>\nendobj\n" % n for n in range(1, count + 1)))
