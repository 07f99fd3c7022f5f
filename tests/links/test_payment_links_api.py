"""/api/v1/payment-links: create, list, read, change, disable; bad input in the error envelope."""

import pytest

from gateway.extensions import db
from gateway.links.models.link import PaymentLink
from tests.links.support import make_link

URL = "/api/v1/payment-links"


def create(client, auth, **body):
    return client.post(URL, json={"title": "Eid hamper", "amount": "500.00", **body}, headers=auth)


def links_in_db():
    return db.session.execute(db.select(db.func.count()).select_from(PaymentLink)).scalar_one()


def test_create_answers_201_with_the_link_and_its_address(client, auth):
    response = create(
        client,
        auth,
        description="Dates and sweets",
        slug="Eid-Hamper",
        usage_limit=50,
        expires_at="2099-01-01T00:00:00+06:00",
        custom_fields=[{"kind": "name", "required": True}, {"kind": "text", "label": "Size"}],
    )

    assert response.status_code == 201
    data = response.get_json()["data"]
    assert data["slug"] == "eid-hamper"
    assert data["url"] == "http://127.0.0.1:5000/pay/eid-hamper"
    assert (data["amount"], data["currency"], data["status"]) == ("500.00", "BDT", "active")
    assert (data["usage_limit"], data["used_count"], data["paid_count"]) == (50, 0, 0)
    assert data["paid_total"] == "0.00"
    assert data["expires_at"] == "2098-12-31T18:00:00+00:00"
    assert data["custom_fields"] == [
        {"kind": "name", "label": None, "required": True, "key": "name"},
        {"kind": "text", "label": "Size", "required": False, "key": "text"},
    ]


def test_a_slug_is_made_from_the_title_when_none_is_given(client, auth):
    data = create(client, auth, title="ঈদ Sale 2025!").get_json()["data"]
    assert data["slug"].startswith("sale-2025-") and len(data["slug"]) == len("sale-2025-") + 4


def error_fields(response):
    body = response.get_json()
    assert (body["success"], body["error"]) == (False, True)
    return {item["field"]: item["code"] for item in body.get("errors", [])}, body["code"]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"title": ""}, "title"),
        ({"title": None}, "title"),
        ({"title": "x" * 201}, "title"),
        ({"amount": "12.345"}, "amount"),
        ({"amount": "-1"}, "amount"),
        ({"amount": "0"}, "amount"),
        ({"amount": "99999999999"}, "amount"),
        ({"amount": None, "min_amount": "500", "max_amount": "100"}, "max_amount"),
        ({"min_amount": "100"}, "amount"),  # a fixed amount and bounds together
        ({"currency": "XYZ"}, "currency"),
        ({"currency": "bdt1"}, "currency"),
        ({"slug": "ab"}, "slug"),
        ({"slug": "Has Space"}, "slug"),
        ({"slug": "-starts-with-hyphen"}, "slug"),
        ({"slug": "double--hyphen"}, "slug"),
        ({"slug": "বাংলা-slug"}, "slug"),
        ({"usage_limit": 0}, "usage_limit"),
        ({"usage_limit": "5"}, "usage_limit"),
        ({"custom_fields": [{"kind": "shoe-size"}]}, "custom_fields.0.kind"),
        ({"custom_fields": [{"kind": "name"}, {"kind": "name"}]}, "custom_fields"),
        ({"custom_fields": [{"kind": "text"}] * 11}, "custom_fields"),
        ({"expires_at": "tomorrow"}, "expires_at"),
        ({"callback_url": "ftp://example.com/hook"}, "callback_url"),
        ({"redirect_url": "not a url"}, "redirect_url"),
        ({"title": "a\x00b"}, "title"),
    ],
)
def test_bad_input_is_a_422_naming_the_field_and_writes_nothing(client, auth, body, field):
    response = create(client, auth, **body)

    assert response.status_code == 422
    fields, code = error_fields(response)
    assert code == "VALIDATION_ERROR"
    assert field in fields
    assert links_in_db() == 0


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost./hooks",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://127.0.0.1.nip.io/hooks",
    ],
)
def test_a_callback_url_private_by_its_name_is_refused_on_its_field(
    app, monkeypatch, client, auth, url
):
    monkeypatch.setitem(app.config, "ALLOW_PRIVATE_CALLBACKS", False)
    response = create(client, auth, callback_url=url)

    assert response.status_code == 422
    assert error_fields(response) == ({"callback_url": "private_address"}, "VALIDATION_ERROR")
    assert links_in_db() == 0


def test_a_taken_slug_is_a_409_on_the_slug_even_across_brands(client, auth, other_brand):
    make_link(other_brand, slug="eid-sale")

    response = create(client, auth, slug="eid-sale")

    assert response.status_code == 409
    fields, code = error_fields(response)
    assert (code, fields) == ("SLUG_TAKEN", {"slug": "taken"})
    assert links_in_db() == 1


def test_not_json_and_broken_json_are_refused_in_the_envelope(client, auth):
    as_form = client.post(URL, data="title=x", headers={**auth, "Content-Type": "text/plain"})
    broken = client.post(URL, data="{", headers={**auth, "Content-Type": "application/json"})
    assert (as_form.status_code, error_fields(as_form)[1]) == (415, "UNSUPPORTED_MEDIA_TYPE")
    assert (broken.status_code, error_fields(broken)[1]) == (400, "INVALID_JSON")


def test_listing_is_paged_newest_first_and_only_the_callers_brand(client, auth, brand, other_brand):
    for n in range(3):
        make_link(brand, title=f"Link {n}")
    make_link(other_brand, title="Not yours")

    page = client.get(f"{URL}?per_page=2", headers=auth).get_json()

    assert [item["title"] for item in page["data"]] == ["Link 2", "Link 1"]
    assert page["meta"] == {"page": 1, "per_page": 2, "total": 3, "total_pages": 2}
    bad = client.get(f"{URL}?per_page=500", headers=auth)
    assert bad.status_code == 422 and "per_page" in error_fields(bad)[0]


def test_another_brands_link_reads_as_not_found(client, auth, other_brand):
    link = make_link(other_brand)
    for method, path in (
        ("get", f"{URL}/{link.public_id}"),
        ("patch", f"{URL}/{link.slug}"),
        ("post", f"{URL}/{link.public_id}/disable"),
        ("delete", f"{URL}/{link.public_id}"),
    ):
        kwargs = {"json": {"title": "Mine now"}} if method == "patch" else {}
        response = getattr(client, method)(path, headers=auth, **kwargs)
        assert response.status_code == 404
        assert error_fields(response)[1] == "PAYMENT_LINK_NOT_FOUND"
    db.session.expire_all()
    assert db.session.get(PaymentLink, link.id).status == "active"


def test_update_changes_the_amount_kind_and_keeps_the_currency(client, auth, brand):
    link = make_link(brand)

    response = client.patch(
        f"{URL}/{link.public_id}",
        json={"amount": None, "min_amount": "100.00", "max_amount": "900.00", "currency": "USD"},
        headers=auth,
    )

    assert response.status_code == 200
    data = response.get_json()["data"]
    assert (data["amount"], data["min_amount"], data["max_amount"]) == (None, "100.00", "900.00")
    assert data["currency"] == "BDT"


def test_update_with_bad_input_changes_nothing(client, auth, brand):
    link = make_link(brand, slug="keep-me")
    response = client.patch(f"{URL}/{link.public_id}", json={"slug": "no spaces"}, headers=auth)
    assert response.status_code == 422
    db.session.expire_all()
    assert db.session.get(PaymentLink, link.id).slug == "keep-me"


def test_disable_turns_the_link_off_and_enable_turns_it_on(client, auth, brand):
    link = make_link(brand)

    disabled = client.post(f"{URL}/{link.public_id}/disable", headers=auth).get_json()["data"]
    refused = client.get(f"/pay/{link.slug}").status_code
    enabled = client.post(f"{URL}/{link.public_id}/enable", headers=auth).get_json()["data"]

    assert disabled["status"] == "disabled" and disabled["disabled_at"]
    assert refused == 410
    assert enabled["status"] == "active" and enabled["disabled_at"] is None
    assert client.get(f"/pay/{link.slug}").status_code == 200


def test_a_deleted_link_is_gone_from_reads_lists_and_changes(client, auth, brand):
    link, kept = make_link(brand, slug="eid-sale"), make_link(brand, title="Kept")

    deleted = client.delete(f"{URL}/{link.public_id}", headers=auth)

    assert deleted.status_code == 200
    assert deleted.get_json()["data"] == {"id": link.public_id, "deleted": True}
    for method, path in (
        ("get", f"{URL}/{link.public_id}"),
        ("get", f"{URL}/eid-sale"),
        ("patch", f"{URL}/{link.public_id}"),
        ("post", f"{URL}/{link.public_id}/enable"),
        ("post", f"{URL}/{link.public_id}/disable"),
        ("delete", f"{URL}/{link.public_id}"),
    ):
        kwargs = {"json": {"title": "Back"}} if method == "patch" else {}
        response = getattr(client, method)(path, headers=auth, **kwargs)
        assert (response.status_code, error_fields(response)[1]) == (
            404,
            "PAYMENT_LINK_NOT_FOUND",
        ), f"{method} {path}"
    listed = client.get(URL, headers=auth).get_json()
    assert [item["id"] for item in listed["data"]] == [kept.public_id]
    assert client.get(f"{URL}?status=disabled", headers=auth).get_json()["data"] == []
    assert client.get(f"/pay/{link.slug}").status_code == 410


def test_a_deleted_links_slug_stays_taken_and_its_payments_stay_listed(client, auth, brand):
    from tests.links.support import submit_link

    link = make_link(brand, slug="eid-sale")
    submit_link(client, link)

    client.delete(f"{URL}/{link.public_id}", headers=auth)
    again = create(client, auth, slug="eid-sale")
    payments = client.get("/api/v1/payments?payment_link=eid-sale", headers=auth).get_json()

    assert (again.status_code, error_fields(again)) == (409, ({"slug": "taken"}, "SLUG_TAKEN"))
    assert payments["meta"]["total"] == 1
    db.session.expire_all()
    assert db.session.get(PaymentLink, link.id).status == "deleted"


def test_a_racing_enable_cannot_bring_a_deleted_link_back(client, auth, brand):
    from gateway.domain_errors import NotFound
    from gateway.links.links import delete_link, set_link_status

    link = make_link(brand)
    stale = db.session.get(PaymentLink, link.id)  # read before the delete, as a racing request did
    delete_link(link)

    with pytest.raises(NotFound):
        set_link_status(stale, "active")
    db.session.expire_all()
    assert db.session.get(PaymentLink, link.id).status == "deleted"


@pytest.mark.parametrize(
    "body",
    [None, {}, {"colour": "red"}],
    ids=["no body", "empty object", "only unknown fields"],
)
def test_a_change_with_nothing_to_change_is_a_422_on_the_body(client, auth, brand, body):
    link = make_link(brand, title="Keep me")
    kwargs = {} if body is None else {"json": body}

    response = client.patch(f"{URL}/{link.public_id}", headers=auth, **kwargs)

    assert response.status_code == 422
    assert error_fields(response) == ({"body": "invalid"}, "VALIDATION_ERROR")
    db.session.expire_all()
    assert db.session.get(PaymentLink, link.id).title == "Keep me"


def test_reads_need_read_and_writes_need_write(client, brand, make_key):
    reader = make_key(brand, ["read"])
    assert client.get(URL, headers=reader).status_code == 200
    refused = create(client, reader)
    assert (refused.status_code, error_fields(refused)[1]) == (403, "INSUFFICIENT_SCOPE")
    assert client.get(URL).status_code == 401


def test_payments_can_be_filtered_by_link(client, auth, brand):
    from tests.links.support import submit_link

    first, second = make_link(brand, title="First"), make_link(brand, title="Second")
    submit_link(client, first)
    submit_link(client, second)
    submit_link(client, second)

    by_slug = client.get(f"/api/v1/payments?payment_link={second.slug}", headers=auth).get_json()
    by_id = client.get(f"/api/v1/payments?payment_link={first.public_id}", headers=auth).get_json()
    nothing = client.get("/api/v1/payments?payment_link=unknown", headers=auth).get_json()

    assert by_slug["meta"]["total"] == 2
    assert {item["reference"] for item in by_slug["data"]} == {second.slug}
    assert [item["reference"] for item in by_id["data"]] == [first.slug]
    assert nothing["data"] == []


def test_a_repeated_create_with_the_same_idempotency_key_makes_one_link(client, auth):
    keyed = {**auth, "Idempotency-Key": "link-1"}
    first = create(client, keyed, slug="once-only")
    again = create(client, keyed, slug="once-only")

    assert (first.status_code, again.status_code) == (201, 201)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first.get_json()
    assert links_in_db() == 1


def test_a_refused_create_frees_its_idempotency_key_for_a_corrected_body(client, auth, brand):
    make_link(brand, slug="taken-slug")
    keyed = {**auth, "Idempotency-Key": "link-2"}

    refused = create(client, keyed, slug="taken-slug")
    corrected = client.post(
        URL, json={"title": "Eid hamper", "amount": "500.00", "slug": "free-slug"}, headers=keyed
    )

    assert refused.status_code == 409
    assert corrected.status_code == 201
    assert corrected.get_json()["data"]["slug"] == "free-slug"
