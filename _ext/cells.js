// Hovering over a cell of a heat map, or tapping it, shows its number (every page).  A live
// explorer's heat map (book/js/heatmap.mjs) gives each cell its text as data-tip.
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
        if (c.row_axis === undefined) c.row_axis = "query";
        if (c.col_axis === undefined) c.col_axis = "key";
      });
      known = { text: text, cells: maps };
      parsed.set(img, known);
    }
    return known.cells;
  }

  // a row's or column's name: its label, with its position where another has the same label
  // (a word said twice), or its position alone where it has no label of its own (ticks every
  // few positions)
  function named(labels, k) {
    var label = labels[k];
    if (!label) return String(k);
    return labels.indexOf(label) === labels.lastIndexOf(label) ? label :
      label + " (position " + k + ")";
  }

  // what the heat map cell under the pointer shows ("row → column: number"), or null
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
      var value = c.values[i * m + j];
      // an axis named "" leaves its labels to say what a row or a column is ("sentence 2")
      var row = (c.row_axis ? c.row_axis + " " : "") + named(c.rows, i);
      var col = (c.col_axis ? c.col_axis + " " : "") + named(c.cols, j);
      var between = c.between === undefined ? " → " : c.between;
      return row + between + col + ": " + (value === null ? "no number" : value.toFixed(3));
    }
    return null;
  }

  function hide() {
    if (tip !== null) tip.hidden = true;
  }

  function show(event, text, above) {
    if (text === null) {
      hide();
      return;
    }
    if (tip === null) {
      tip = document.createElement("div");
      tip.className = "am-cell-tip";
      tip.setAttribute("role", "status");
      tip.style.cssText = "position: absolute; z-index: 1000; pointer-events: none; " +
        "background: #ffffff; color: #222222; border: 1px solid #9a9a9a; border-radius: 4px; " +
        "padding: 1px 6px; font-size: 0.8rem; max-width: calc(100vw - 8px)";
      document.body.appendChild(tip);
    }
    tip.textContent = text;
    tip.hidden = false;
    // beside the pointer, on its left where the right would run off the screen, and never
    // past either edge (on a phone, a pointer in the middle may leave room on neither side);
    // below it (above a finger, which would hide it), or on the other side where the window
    // ends first
    var screen = document.documentElement.clientWidth, width = tip.offsetWidth;
    var x = event.pageX + 12;
    if (x + width > window.scrollX + screen - 4) x = event.pageX - 12 - width;
    x = Math.max(window.scrollX + 4, Math.min(x, window.scrollX + screen - 4 - width));
    var height = tip.offsetHeight, below = event.pageY + 16, over = event.pageY - 16 - height;
    var y = above ? over : below;
    if (above && over < window.scrollY + 4) y = below;
    if (!above && below + height > window.scrollY + document.documentElement.clientHeight - 4) {
      y = over;
    }
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }

  function handle(event) {
    var target = event.target;
    if (!target.closest) return hide();
    // a live heat map's cell (book/js/heatmap.mjs) says what it shows itself
    var tapped = event.type === "click";
    var said = target.closest("[data-tip]");
    if (said !== null) return show(event, said.getAttribute("data-tip"), tapped);
    var img = target.closest("img[data-cells]");
    if (img === null) return hide();
    show(event, cellAt(img, event), tapped);
  }

  document.addEventListener("mousemove", handle);
  document.addEventListener("click", handle); // a tap, where there is no hover
  // a slider or a typed word changed the picture under the tip: the number it shows is gone
  document.addEventListener("input", hide);
})();
