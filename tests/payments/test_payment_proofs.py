"""The receipt upload's checks, read from the bytes: accepted JPEG/PNG/PDF, refused everything
else."""

import io

import pytest

from gateway.domain_errors import ValidationFailed
from gateway.payments.proofs import MAX_PROOF_BYTES, checked_proof
from tests.proof_files import PHP, bomb_pdf, image_bytes, many_objects_pdf, pdf_bytes, pdf_with


class CountingStream(io.BytesIO):
    """A stream that remembers how many bytes were asked of it."""

    def __init__(self, data):
        super().__init__(data)
        self.asked = 0

    def read(self, size=-1):
        self.asked += size if size and size > 0 else len(self.getvalue())
        return super().read(size)


def refusal(data):
    with pytest.raises(ValidationFailed) as caught:
        checked_proof(io.BytesIO(data))
    (item,) = caught.value.errors
    assert item["field"] == "proof"
    return item["message"]


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (image_bytes("JPEG"), "image/jpeg"),
        (image_bytes("PNG"), "image/png"),
        (pdf_bytes(), "application/pdf"),
    ],
    ids=["jpeg", "png", "pdf"],
)
def test_a_real_small_jpeg_png_or_pdf_is_accepted_with_its_type_from_the_bytes(data, kind):
    assert checked_proof(io.BytesIO(data)) == (kind, data)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (PHP, "Upload a JPEG, PNG or PDF file."),
        (b"", "The file is empty."),
        (b"GIF89a" + image_bytes("PNG"), "Upload a JPEG, PNG or PDF file."),
        (b"<html><script>alert(1)</script>", "Upload a JPEG, PNG or PDF file."),
        # JPEG's magic number followed by a PHP script: the magic alone is not enough.
        (b"\xff\xd8\xff\xe0" + PHP, "The image could not be read: upload a JPEG or PNG photo."),
        # A PNG cut short: Pillow cannot load it.
        (image_bytes("PNG")[:60], "The image could not be read: upload a JPEG or PNG photo."),
        (b"%PDF-1.4\n1 0 obj\n<< >>\nendobj\n", "The PDF is incomplete."),
        (bomb_pdf(), "The PDF's contents are too large once unpacked."),
        (many_objects_pdf(), "The PDF has too many objects."),
        (pdf_with(b"1 0 obj\n<< /Type /Page >>\nendobj\n" * 60), "The PDF has too many pages."),
        (
            pdf_with(b"1 0 obj\n<< /S /JavaScript /JS (app.alert(1)) >>\nendobj"),
            "The PDF contains scripts or embedded files.",
        ),
    ],
    ids=[
        "php",
        "empty",
        "gif",
        "html",
        "jpeg-magic-then-php",
        "truncated-png",
        "pdf-without-eof",
        "pdf-bomb",
        "pdf-objects",
        "pdf-pages",
        "pdf-javascript",
    ],
)
def test_anything_else_is_refused_naming_the_proof_field(data, message):
    assert refusal(data) == message


def test_a_png_claiming_a_huge_canvas_is_refused_before_it_is_decoded():
    assert refusal(image_bytes("PNG", size=(9000, 9000))) == "The image is too large."


def test_an_oversized_file_is_refused_after_reading_one_byte_past_the_limit():
    stream = CountingStream(image_bytes("JPEG") + b"\0" * (MAX_PROOF_BYTES + 10 * 1024 * 1024))
    with pytest.raises(ValidationFailed) as caught:
        checked_proof(stream)
    assert caught.value.errors[0]["message"] == "The file is larger than 5 MB."
    assert stream.asked == MAX_PROOF_BYTES + 1  # never the whole 15 MB


def test_a_file_of_exactly_five_megabytes_is_read_whole():
    jpeg = image_bytes("JPEG")
    # Trailing bytes after a JPEG's end marker are ignored by decoders: a 5 MB file that is valid.
    data = jpeg + b"\0" * (MAX_PROOF_BYTES - len(jpeg))
    assert checked_proof(io.BytesIO(data)) == ("image/jpeg", data)
