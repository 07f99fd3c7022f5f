"""The brand's colour made safe for the page: valid CSS, readable text on it and beside it (WCAG
AA).
"""

import re

DEFAULT_COLOR = "#0f766e"
HEX_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")
DARK_TEXT = "#111827"
WHITE = "#ffffff"
BLACK = "#000000"
AA_CONTRAST = 4.5


def channels(color):
    """The red, green and blue of #rrggbb as 0-255 integers."""
    return tuple(int(color[index : index + 2], 16) for index in (1, 3, 5))


def luminance(color):
    """WCAG relative luminance of #rrggbb."""
    linear = []
    for channel in channels(color):
        value = channel / 255
        linear.append(value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4)
    red, green, blue = linear
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(first, second):
    """WCAG contrast ratio between two colours, 1 to 21."""
    lighter, darker = sorted((luminance(first), luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def darken(color, factor):
    """The colour with each channel scaled by `factor` (0-1)."""
    return "#" + "".join(f"{round(channel * factor):02x}" for channel in channels(color))


def brand_theme(brand):
    """CSS colours for a brand: its primary, the text on it, and a shade readable on white."""
    color = getattr(brand, "primary_color", None) or DEFAULT_COLOR
    # The colour lands in a <style> block: anything but #rrggbb is refused, not escaped.
    color = color.lower() if HEX_COLOR.match(color) else DEFAULT_COLOR
    # White text where it reads well, else dark ink; pure black for the few mid-tones ink misses by
    # a hair.
    on_primary = next(
        (text for text in (WHITE, DARK_TEXT, BLACK) if contrast(color, text) >= AA_CONTRAST), BLACK
    )
    # Light brand colours (yellow, pink) still need a readable shade for links and borders.
    accent = color
    factor = 1.0
    while contrast(accent, WHITE) < AA_CONTRAST and factor > 0.05:
        factor -= 0.05
        accent = darken(color, factor)
    return {"primary": color, "on_primary": on_primary, "accent": accent}
