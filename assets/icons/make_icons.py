"""Draws the Confab icon (a speech bubble on an indigo tile) into the sizes Tauri bundles.

Run from this folder with Pillow installed: python make_icons.py
"""

from PIL import Image, ImageDraw

S = 1024  # drawn large, then scaled down


def draw() -> Image.Image:
    img = Image.new("RGBA", (S, S), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    d.rounded_rectangle((40, 40, S - 40, S - 40), radius=220, fill=(79, 70, 229, 255))
    white = (255, 255, 255, 255)
    d.rounded_rectangle((210, 250, 814, 680), radius=130, fill=white)
    d.polygon([(330, 640), (300, 820), (480, 670)], fill=white)
    dot = (79, 70, 229, 255)
    for x in (372, 512, 652):
        d.ellipse((x - 45, 420, x + 45, 510), fill=dot)
    return img


def main() -> None:
    img = draw()
    sized = lambda n: img.resize((n, n), Image.LANCZOS)
    for name, n in [("32x32.png", 32), ("128x128.png", 128), ("128x128@2x.png", 256), ("icon.png", 512)]:
        sized(n).save(name)
    sized(256).save("icon.ico", sizes=[(16, 16), (24, 24), (32, 32), (48, 48), (64, 64), (256, 256)])
    img.save("icon.icns")


if __name__ == "__main__":
    main()
