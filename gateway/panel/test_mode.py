"""The panel's test mode: a switch between live and test data kept in the session, and deleting the
brand's test data (docs/testing-your-integration.md)."""

from flask import flash, redirect, render_template, request, session, url_for
from flask_babel import gettext as _
from flask_login import current_user
from wtforms import HiddenField
from wtforms.validators import AnyOf, DataRequired

from ..accounts.roles import TEST_DATA_DELETE, VIEW
from ..answer_commit import unit_of_work
from ..testmode.erase import delete_test_data
from . import bp
from .access import TEST_MODE, panel_livemode, requires
from .audit import record_audit
from .auth import safe_next
from .forms import ActionForm, PanelForm

VIEW_TEST, VIEW_LIVE = "test", "live"


def viewing_test_data():
    """Whether the signed-in user chose to see test data (access.panel_livemode, the one switch)."""
    return not panel_livemode()


class TestModeForm(PanelForm):
    """The switch: which data to show next, and the page to come back to."""

    view = HiddenField(validators=[DataRequired(), AnyOf((VIEW_TEST, VIEW_LIVE))])
    back = HiddenField()


@bp.context_processor
def test_mode_context():
    """`viewing_test_data` and the switch's form for the layout (templates/panel/base.html)."""
    return {"viewing_test_data": viewing_test_data, "test_mode_form": TestModeForm}


@bp.post("/test-mode")
@requires(VIEW)
def test_mode():
    """Switch the panel between live and test data, then go back to the page it was on."""
    form = TestModeForm()
    if form.validate_on_submit():
        session[TEST_MODE] = form.view.data == VIEW_TEST
    return redirect(safe_next(form.back.data) or url_for("panel.dashboard"), 303)


@bp.get("/test-data")
@requires(TEST_DATA_DELETE)
def test_data():
    """The confirmation step before deleting every test object of the brand."""
    return render_template("panel/test_data.html", form=ActionForm())


@bp.post("/test-data/delete")
@requires(TEST_DATA_DELETE)
def test_data_delete():
    """Delete the brand's test data with its audit row, in one commit; nothing live is touched."""
    if not ActionForm().validate_on_submit() or request.form.get("confirm") != "yes":
        return redirect(url_for("panel.test_data"), 303)
    with unit_of_work():
        deleted = delete_test_data(current_user.brand_id)
        record_audit(current_user, "test_data.delete", ("brand", current_user.brand_id), deleted)
    flash(
        _(
            "All test data is deleted: %(count)s test payments and everything made with them.",
            count=deleted["payments"],
        ),
        "success",
    )
    return redirect(url_for("panel.dashboard"), 303)
