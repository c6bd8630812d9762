"""Draw the book's favicon, _static/favicon.png: four attention weights, one of them heavy.

Usage: python tools/favicon.py
"""

from pathlib import Path

from PIL import Image, ImageDraw

SIZE = 64


def main() -> None:
    image = Image.new("RGBA", (SIZE, SIZE), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((0, 0, SIZE - 1, SIZE - 1), radius=12, fill="#0072B2")
    for i, height in enumerate((14, 22, 44, 18)):
        x = 8 + i * 12
        colour = "#CC79A7" if i == 2 else "#ffffff"  # the book's marker colour
        draw.rectangle((x, SIZE - 8 - height, x + 8, SIZE - 8), fill=colour)
    image.save(Path(__file__).resolve().parents[1] / "_static" / "favicon.png", optimize=True)


if __name__ == "__main__":
    main()
