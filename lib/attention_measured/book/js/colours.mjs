// The book's colours for the pages' live drawings (book/plots.py draws the static ones): the
// shade of a weight's cell, shared by the worked example's tables and the heads' heat map.

const SHADE = [0, 114, 178]; // the book's blue (plots.py), a weight of 1

/** The background of a weight's cell, white at 0 to the book's blue at 1, and black or white
 * text, whichever contrasts more (at least 4.5 to 1 everywhere). */
export function shade(weight) {
  const rgb = SHADE.map((c) => Math.round(255 + (c - 255) * Math.min(Math.max(weight, 0), 1)));
  const linear = rgb.map((c) => (c / 255 <= 0.04045 ? c / 255 / 12.92 :
    ((c / 255 + 0.055) / 1.055) ** 2.4));
  const luminance = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2];
  const dark = (luminance + 0.05) / 0.05 >= 1.05 / (luminance + 0.05);
  return { background: `rgb(${rgb.join(", ")})`, color: dark ? "#000000" : "#ffffff" };
}
