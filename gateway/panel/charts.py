"""The dashboard's daily chart as inline SVG drawn on the server: no script, no CDN, readable by
screen readers.
"""

from decimal import Decimal

from markupsafe import Markup, escape

from ..numerals import native_digits

WIDTH, HEIGHT = 720, 220
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 56, 8, 12, 28
GRID_LINES = 4


def nice_ceiling(value):
    """A round number at or above `value` for the top of the axis (1, 2, 2.5 or 5 times a power of
    ten).
    """
    if value <= 0:
        return Decimal(1)
    magnitude = Decimal(10) ** (len(str(int(value))) - 1)
    for step in (1, 2, Decimal("2.5"), 5, 10):
        if value <= step * magnitude:
            return step * magnitude
    return 10 * magnitude  # pragma: no cover - the loop always ends at 10


def short_number(value):
    """Axis labels: 1,500 / 12.5k / 3.2M."""
    value = Decimal(value)
    for limit, suffix in ((Decimal(1_000_000), "M"), (Decimal(1_000), "k")):
        if value >= limit:
            return (
                f"{(value / limit).normalize():f}{suffix}"
                if (value / limit) == int(value / limit)
                else f"{value / limit:.1f}{suffix}"
            )
    if value != int(value):  # a small axis (top 1 or 2) steps by quarters: 0.25, not 0
        return f"{value.normalize():f}"
    return f"{int(value):,}"


def daily_bars(days, title, value_label, date_label):
    """Bars of `days` ([{"label", "value", "count"}]) as an accessible SVG figure."""
    plot_w, plot_h = WIDTH - PAD_LEFT - PAD_RIGHT, HEIGHT - PAD_TOP - PAD_BOTTOM
    highest = max((Decimal(day["value"]) for day in days), default=Decimal(0))
    top, any_value = nice_ceiling(highest), highest > 0
    slot = plot_w / max(len(days), 1)
    bar_w = max(slot * 0.7, 2)
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        'aria-labelledby="chart-title" '
        f'xmlns="http://www.w3.org/2000/svg">',
        f'<title id="chart-title">{escape(title)}</title>',
    ]
    for line in range(GRID_LINES + 1):
        y = PAD_TOP + plot_h - plot_h * line / GRID_LINES
        parts.append(
            f'<line class="grid" x1="{PAD_LEFT}" x2="{WIDTH - PAD_RIGHT}" y1="{y:.1f}" '
            f'y2="{y:.1f}"/>'
        )
        if line and not any_value:
            continue  # an empty chart labels its baseline only, not a made-up scale
        parts.append(
            f'<text class="axis" x="{PAD_LEFT - 8}" y="{y + 4:.1f}" text-anchor="end">'
            f"{native_digits(short_number(top * line / GRID_LINES))}</text>"
        )
    for index, day in enumerate(days):
        height = float(Decimal(day["value"]) / top) * plot_h
        x = PAD_LEFT + slot * index + (slot - bar_w) / 2
        label = f"{day['label']}: {day['value_text']} ({day['count']})"
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{PAD_TOP + plot_h - height:.1f}" '
            f'width="{bar_w:.1f}" '
            f'height="{max(height, 0.0):.1f}" rx="2"><title>{escape(label)}</title></rect>'
        )
        if (len(days) - 1 - index) % 7 == 0:  # today and each week before it
            parts.append(
                f'<text class="axis" x="{x + bar_w / 2:.1f}" y="{HEIGHT - 8}" text-anchor="middle">'
                f"{escape(day['label'])}</text>"
            )
    parts.append(f"<desc>{escape(value_label)} · {escape(date_label)}</desc></svg>")
    return Markup("".join(parts))
