// Hovering over a cell of a heat map, or tapping it, shows its number (every page).
//
// A figure with heat maps (attention_measured.book.plots.heatmap) carries, on its <img>, where
// their cells lie in each of its two drawings and their numbers (data-cells for the column's
// drawing, data-phone-cells for the phone's; _ext/phone_figures.py): boxes as fractions of the
// image, so that they hold at any size the image is shown.  A static twin's frame carries its
// own (attention_measured.book.widgets), set as its sliders move.  Where JavaScript is off,
// the figure is the same, without the numbers.
(function () {
  "use strict";
  // a map's numbers come packed (phone_figures.packed_cells): each cell a fixed number of
  // base-64 digits, its value in thousandths less the map's smallest; the largest code of that
  // many digits marks a cell without a number
  var DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  var parsed = new WeakMap(); // an image's cells, read once for each text they come in
  var tip = null;

  function unpacked(c) {
    var k = c.digits, none = Math.pow(64, k) - 1, values = [];
    for (var p = 0; p < c.codes.length; p += k) {
      var code = 0;
      for (var d = 0; d < k; d++) code = code * 64 + DIGITS.indexOf(c.codes.charAt(p + d));
      values.push(code === none ? null : (c.lo + code) / 1000);
    }
    return values;
  }

  // the cells of the drawing shown: the phone's or the column's, or a twin's present frame
  // (a static twin rewrites data-cells as its sliders move)
  function cellsOf(img) {
    var phone = /-phone\.[a-z]+$/.test(img.currentSrc || "");
    var text = img.getAttribute(phone ? "data-phone-cells" : "data-cells") || "[]";
    var known = parsed.get(img);
    if (!known || known.text !== text) {
      var maps = JSON.parse(text);
      maps.forEach(function (c) {
        c.values = unpacked(c);
        // a static twin leaves out what goes without saying (widgets._shortened)
        c.rows = c.rows || [];
        c.cols = c.cols || c.rows;
        c.row_axis = c.row_axis || "query";
        c.col_axis = c.col_axis || "key";
      });
      known = { text: text, cells: maps };
      parsed.set(img, known);
    }
    return known.cells;
  }

  // the heat map cell under the pointer: {label, value} or null
  function cellAt(img, event) {
    var r = img.getBoundingClientRect();
    var x = (event.clientX - r.left) / r.width, y = (event.clientY - r.top) / r.height;
    var maps = cellsOf(img);
    for (var k = 0; k < maps.length; k++) {
      var c = maps[k], b = c.box;
      if (x < b[0] || x >= b[0] + b[2] || y < b[1] || y >= b[1] + b[3]) continue;
      var n = c.shape[0], m = c.shape[1];
      var i = Math.min(n - 1, Math.floor(((y - b[1]) / b[3]) * n));
      var j = Math.min(m - 1, Math.floor(((x - b[0]) / b[2]) * m));
      // a row or column without a label of its own (ticks every few positions) by its number
      var row = c.rows[i] || String(i), col = c.cols[j] || String(j);
      var label = c.row_axis + " " + row + " → " + c.col_axis + " " + col;
      var value = c.values[i * m + j];
      return { label: label, value: value === null ? "no number" : value.toFixed(3) };
    }
    return null;
  }

  function show(event, cell) {
    if (tip === null) {
      tip = document.createElement("div");
      tip.className = "am-cell-tip";
      tip.setAttribute("role", "status");
      tip.style.cssText = "position: absolute; z-index: 1000; pointer-events: none; " +
        "background: #ffffff; color: #222222; border: 1px solid #9a9a9a; border-radius: 4px; " +
        "padding: 1px 6px; font-size: 0.8rem; max-width: calc(100vw - 8px)";
      document.body.appendChild(tip);
    }
    if (cell === null) {
      tip.hidden = true;
      return;
    }
    tip.textContent = cell.label + ": " + cell.value;
    tip.hidden = false;
    // beside the pointer, on its left where the right would run off the screen, and never
    // past either edge (on a phone, a pointer in the middle may leave room on neither side)
    var screen = document.documentElement.clientWidth, width = tip.offsetWidth;
    var x = event.pageX + 12;
    if (x + width > window.scrollX + screen - 4) x = event.pageX - 12 - width;
    x = Math.max(window.scrollX + 4, Math.min(x, window.scrollX + screen - 4 - width));
    tip.style.left = x + "px";
    tip.style.top = event.pageY + 16 + "px";
  }

  function handle(event) {
    var img = event.target.closest ? event.target.closest("img[data-cells]") : null;
    if (img === null) {
      if (tip !== null) tip.hidden = true;
      return;
    }
    show(event, cellAt(img, event));
  }

  document.addEventListener("mousemove", handle);
  document.addEventListener("click", handle); // a tap, where there is no hover
})();
