"""A customer's receipt upload: its type read from its bytes, bounded, stored in the database.

The filename and the browser's content type are never trusted: JPEG, PNG and PDF are recognised by
their magic numbers, an image must decode (Pillow verifies it and its pixel count is bounded), a PDF
must have a sane structure with bounded objects and pages and streams that do not inflate beyond a
budget (a zip-bomb-like PDF is refused before it is inflated whole).
"""

import hashlib
import io
import re
import warnings
import zlib

from PIL import Image

from ..domain_errors import ValidationFailed, field_error
from ..extensions import db
from .models.payment_proof import PaymentProof

MAX_PROOF_BYTES = 5 * 1024 * 1024
JPEG, PNG, PDF = "image/jpeg", "image/png", "application/pdf"
MAGIC = ((b"\xff\xd8\xff", JPEG), (b"\x89PNG\r\n\x1a\n", PNG), (b"%PDF-", PDF))
MAX_PIXELS = (
    40_000_000  # a phone photo is ~12 MP; a tiny file claiming more is a decompression bomb
)
MAX_PDF_OBJECTS = 5000
MAX_PDF_PAGES = 50
MAX_PDF_INFLATED = 50 * 1024 * 1024  # every Flate stream together, inflated
PDF_OBJECT = re.compile(rb"\d+\s+\d+\s+obj\b")
PDF_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")
PDF_ACTIVE = re.compile(rb"/(?:JavaScript|JS|Launch|EmbeddedFile|RichMedia|XFA)(?![a-zA-Z])")
PDF_STREAM = re.compile(rb"(?<!end)stream\r?\n")
FIELD = "proof"


def refuse(message):
    """ValidationFailed naming the upload field."""
    return field_error(FIELD, message)


def read_bounded(stream, limit=MAX_PROOF_BYTES):
    """At most `limit` bytes of an upload stream; refused, unread past limit + 1, when longer."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise refuse("The file is larger than 5 MB.")
    if not data:
        raise refuse("The file is empty.")
    return data


def sniff(data):
    """The content type the bytes themselves announce, or None."""
    return next((kind for magic, kind in MAGIC if data.startswith(magic)), None)


def check_image(data, kind):
    """Refuse an image Pillow cannot verify, of another format than its magic, or absurdly large."""
    expected = {JPEG: "JPEG", PNG: "PNG"}[kind]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                if image.format != expected:
                    raise refuse("The file is not the image its first bytes say.")
                width, height = image.size
                if width * height > MAX_PIXELS:
                    raise refuse("The image is too large.")
                image.verify()
            with Image.open(io.BytesIO(data)) as image:  # verify() leaves no usable image
                image.load()
    except ValidationFailed:
        raise
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError, Warning):
        raise refuse("The image could not be read: upload a JPEG or PNG photo.") from None


def check_pdf(data):
    """Refuse a PDF without a sane structure, with active content, too many objects or pages, or
    streams that inflate past the budget."""
    if b"%%EOF" not in data[-1024:]:
        raise refuse("The PDF is incomplete.")
    if len(PDF_OBJECT.findall(data)) > MAX_PDF_OBJECTS:
        raise refuse("The PDF has too many objects.")
    if len(PDF_PAGE.findall(data)) > MAX_PDF_PAGES:
        raise refuse("The PDF has too many pages.")
    if PDF_ACTIVE.search(data):
        raise refuse("The PDF contains scripts or embedded files.")
    budget = MAX_PDF_INFLATED
    for match in PDF_STREAM.finditer(data):
        end = data.find(b"endstream", match.end())
        if end < 0:
            raise refuse("The PDF is incomplete.")
        raw = data[match.end() : end]
        inflater = zlib.decompressobj()
        try:
            # Inflate at most what is left of the budget: a bomb stops here, never inflated whole.
            inflated = inflater.decompress(raw, budget + 1)
        except zlib.error:
            continue  # not a Flate stream (a JPEG image, plain text): its size is its own
        budget -= len(inflated)
        if budget < 0 or inflater.unconsumed_tail:
            raise refuse("The PDF's contents are too large once unpacked.")


def checked_proof(stream):
    """(content type, bytes) of an acceptable upload, read from the stream at most 5 MB + 1 byte;
    ValidationFailed naming `proof` otherwise.
    """
    data = read_bounded(stream)
    kind = sniff(data)
    if kind is None:
        raise refuse("Upload a JPEG, PNG or PDF file.")
    if kind == PDF:
        check_pdf(data)
    else:
        check_image(data, kind)
    return kind, data


def add_proof(payment, content_type, data):
    """The proof row for a payment, added to the session (the caller commits with its claim)."""
    proof = PaymentProof(
        payment_id=payment.id,
        content_type=content_type,
        content=data,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )
    db.session.add(proof)
    return proof


def proof_of(payment):
    """The payment's proof row, or None."""
    return db.session.execute(
        db.select(PaymentProof).where(PaymentProof.payment_id == payment.id)
    ).scalar_one_or_none()


def proof_facts(payment):
    """(content type, size) of the payment's proof without loading its bytes, or None."""
    row = db.session.execute(
        db.select(PaymentProof.content_type, PaymentProof.size).where(
            PaymentProof.payment_id == payment.id
        )
    ).first()
    return tuple(row) if row else None
