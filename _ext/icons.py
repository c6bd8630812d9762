"""A Sphinx extension that serves only the Font Awesome icons the book shows.

The theme loads Font Awesome's whole JavaScript bundle on every page (1.49 MB, all 2045
free icons) to turn about fifteen ``<i class="fa-solid fa-…">`` elements into inline SVG.
After the build, this replaces that bundle with a script of a few kilobytes that does the
same for the icons the pages and the theme's scripts name, with Font Awesome's own drawing
data and stylesheet, read from the theme's copy of the bundle.  The build fails if an icon
is named that the bundle does not draw.

The theme's stylesheet also draws a few icons as characters of Font Awesome's web fonts
(an admonition's bell, a toggle's chevron): 430 KB of fonts for a handful of glyphs.  Those
fonts are cut to the characters the stylesheets name, as WOFF files of a few kilobytes.

Font Awesome Free: icons CC BY 4.0, fonts SIL OFL 1.1, code MIT
(fontawesome.js.LICENSE.txt beside it).
"""

import json
import re
from pathlib import Path

BUNDLE = Path("_static") / "scripts" / "fontawesome.js"
# an icon's definition in the bundle: name: [width, height, [aliases], unicode, path]
ICON = re.compile(
    r'(?:"([a-z0-9-]+)"|\b([a-z0-9]+)):\[(\d+),(\d+),\[[^\]]*\],"[0-9a-f]+",("[^"]*")\]'
)
# each pack's icons end where the bundle defines the pack: d("fab",p), d("far",p), d("fas",p)
PACK = re.compile(r'd\("(fa[brs])",p\)')
PREFIXES = {"fab": "fab", "fa-brands": "fab", "far": "far", "fa-regular": "far"}
PREFIXES.update({"fas": "fas", "fa-solid": "fas", "fa": "fas"})
STYLE = re.compile(r"':host,:root\{--fa-font-solid[^']*'")
NAMED = re.compile(r"\bfa-([a-z0-9]+(?:-[a-z0-9]+)*)")
WEBFONTS = Path("_static") / "vendor" / "fontawesome" / "webfonts"
# a web font's sources in the theme's stylesheet: its WOFF2 file, then its TrueType file
SOURCES = re.compile(
    r'url\(([^)]*webfonts/)(fa-[a-z]+-\d+)\.woff2\) format\("woff2"\),'
    r'url\([^)]*\.ttf\) format\("truetype"\)'
)
# a glyph a stylesheet names: an escape such as "\f0f3" or "\e2ca", or the private-use
# character itself
GLYPH = re.compile(r"\\([ef][0-9a-f]{3})\b|([\ue000-\uf8ff])")
RULE = re.compile(r"([^{}]*)\{([^{}]*)\}")
# Font Awesome's catalogue, .fa-bell:before{content:"\f0f3"}, names glyphs the script draws
CATALOGUE = re.compile(r"\s*\.fa-[a-z0-9-]+:{1,2}(?:before|after)\s*")

SCRIPT = """/*! Font Awesome Free: the icons this book shows. License: fontawesome.js.LICENSE.txt */
(() => {
  const icons = %(icons)s;
  const prefixes = %(prefixes)s;
  const style = document.createElement("style");
  style.textContent = %(css)s;
  document.head.appendChild(style);
  const svg = "http://www.w3.org/2000/svg";
  function draw(el) {
    const classes = [...el.classList];
    const pack = prefixes[classes.find((c) => c in prefixes)];
    const name = classes.find((c) => c.startsWith("fa-") && icons[pack] && icons[pack][c.slice(3)]);
    if (!name) return;
    const [width, height, path] = icons[pack][name.slice(3)];
    const out = document.createElementNS(svg, "svg");
    const kept = classes.filter((c) => !(c in prefixes));
    out.setAttribute("class", ["svg-inline--fa", ...kept].join(" "));
    out.setAttribute("viewBox", `0 0 ${width} ${height}`);
    out.setAttribute("aria-hidden", "true");
    out.setAttribute("focusable", "false");
    out.setAttribute("role", "img");
    // the theme finds its colour-mode icons by data-mode, so every attribute but class goes along
    for (const attr of el.attributes) {
      if (attr.name !== "class") out.setAttribute(attr.name, attr.value);
    }
    const shape = document.createElementNS(svg, "path");
    shape.setAttribute("fill", "currentColor");
    shape.setAttribute("d", path);
    out.appendChild(shape);
    el.replaceWith(out);
  }
  const selector = Object.keys(prefixes).map((p) => `i.${p}, span.${p}`).join(", ");
  const sweep = (root) => root.querySelectorAll && root.querySelectorAll(selector).forEach(draw);
  const start = () => {
    sweep(document);
    new MutationObserver((changes) => changes.forEach((c) => c.addedNodes.forEach((n) => {
      if (n.matches && n.matches(selector)) draw(n); else sweep(n);
    }))).observe(document.body, { childList: true, subtree: true });
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
"""


def icons_of(bundle: str) -> dict[str, dict[str, list]]:
    """Every icon the bundle draws, by pack ("fab", "far", "fas") and name."""
    packs, start = {}, 0
    for end in PACK.finditer(bundle):
        pack = packs.setdefault(end.group(1), {})
        for m in ICON.finditer(bundle, start, end.start()):
            pack[m.group(1) or m.group(2)] = [int(m.group(3)), int(m.group(4)), json.loads(m[5])]
        start = end.end()
    if set(packs) != {"fab", "far", "fas"} or len(packs["fas"]) < 1000:
        raise RuntimeError("Font Awesome's bundle has changed shape: update _ext/icons.py")
    return packs


def _named(outdir: Path) -> set[str]:
    """Every ``fa-…`` name in the pages and in the theme's own scripts."""
    names = set()
    files = [*outdir.rglob("*.html"), *(outdir / "_static").rglob("*.js")]
    for file in files:
        if file.name != BUNDLE.name:
            names |= set(NAMED.findall(file.read_text(encoding="utf-8", errors="ignore")))
    return names


def _subset(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    import pydata_sphinx_theme

    theme = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme"
    bundle = (theme / "static" / "scripts" / BUNDLE.name).read_text(encoding="utf-8")
    packs = icons_of(bundle)
    names = _named(Path(app.outdir))
    chosen = {p: {n: icon for n, icon in icons.items() if n in names} for p, icons in packs.items()}
    shown = {n for icons in chosen.values() for n in icons}
    for required in ("magnifying-glass", "bars", "sun", "moon", "github"):
        if required not in shown:
            raise RuntimeError(f"_ext/icons.py: the theme's icon {required!r} was not found")
    css = STYLE.search(bundle)
    if css is None:
        raise RuntimeError("Font Awesome's stylesheet was not found in its bundle")
    script = SCRIPT % {
        "icons": json.dumps(chosen, separators=(",", ":")),
        "prefixes": json.dumps(PREFIXES),
        # less the rule naming the bundle's own fonts (--fa-font-solid: "Font Awesome 6 Solid"),
        # which would hide the theme's web fonts from the stylesheets' icons
        "css": json.dumps(re.sub(r"^:host,:root\{[^}]*\}", "", css.group(0)[1:-1])),
    }
    out = Path(app.outdir) / BUNDLE
    out.write_text(script, encoding="utf-8")
    out.with_name(BUNDLE.name + ".map").unlink(missing_ok=True)


def _cut_webfonts(app, exception):
    """Cut the theme's icon fonts to the glyphs its stylesheets name, and point them there."""
    if exception is not None or app.builder.format != "html":
        return
    from woff import cut_to_woff

    static = Path(app.outdir) / "_static"
    codes = set()
    for sheet in static.rglob("*.css"):
        for selectors, body in RULE.findall(sheet.read_text(encoding="utf-8")):
            if all(CATALOGUE.fullmatch(s) for s in selectors.split(",")):
                continue
            for escape, char in GLYPH.findall(body):
                codes.add(int(escape, 16) if escape else ord(char))
    fonts = Path(app.outdir) / WEBFONTS
    for ttf in sorted(fonts.glob("*.ttf")):
        cut_to_woff(ttf, ttf.with_suffix(".woff"), codes)
        ttf.unlink()
        ttf.with_suffix(".woff2").unlink(missing_ok=True)
    for sheet in static.rglob("*.css"):
        text = sheet.read_text(encoding="utf-8")
        # the catalogue serves <i class="fa-…"> drawn by the font, which the script draws instead
        text = RULE.sub(
            lambda r: "" if all(map(CATALOGUE.fullmatch, r[1].split(","))) else r[0], text
        )
        if "webfonts/" in text:
            text, count = SOURCES.subn(r'url(\1\2.woff) format("woff")', text)
            if "woff2" in text or not count:
                raise RuntimeError(f"_ext/icons.py: {sheet.name} names its fonts in a new way")
            sheet.write_text(text, encoding="utf-8")
            sheet.with_name(sheet.name + ".map").unlink(missing_ok=True)


def setup(app):
    app.connect("build-finished", _subset)
    app.connect("build-finished", _cut_webfonts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
