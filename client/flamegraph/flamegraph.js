// SPDX-License-Identifier: LGPL-2.1-or-later
// The flame graph's interaction: click a frame to zoom into it, a search box (a regular expression, or a plain
// substring where it is not one) that highlights the frames it matches and says their share, a detail line for
// the frame under the pointer. The search term and the zoom are kept in the URL fragment
// (#search=TERM&zoom=KEY), so a reload keeps them and a link can carry them. Loaded under a strict
// Content-Security-Policy: no inline handlers, nothing fetched.
(function () {
  "use strict";
  var svg = document.getElementById("flamegraph");
  if (!svg) return;
  var X0 = Number(svg.getAttribute("data-x0"));
  var W = Number(svg.getAttribute("data-frames-width"));
  var total = Number(svg.getAttribute("data-total"));
  var refresh = Number(svg.getAttribute("data-refresh"));
  var CHAR_WIDTH = Number(svg.getAttribute("data-char-width"));
  var searchBox = document.getElementById("search");
  var matchedLine = document.getElementById("matched");
  var details = document.getElementById("details");
  var detailsDefault = details ? details.textContent : "";
  var frames = [];
  var byKey = {};
  var nodes = svg.querySelectorAll("g.f");
  var zoomed = null;
  var term = "";

  for (var i = 0; i !== nodes.length; i++) {
    var g = nodes[i];
    var f = {
      g: g,
      rect: g.querySelector("rect"),
      text: g.querySelector("text"),
      name: g.getAttribute("data-f"),
      module: g.getAttribute("data-m"),
      key: g.getAttribute("data-k"),
      s: Number(g.getAttribute("data-s")),
      n: Number(g.getAttribute("data-n")),
      x: Number(g.getAttribute("data-x")),
      d: Number(g.getAttribute("data-d")),
      special: g.classList.contains("sp")
    };
    frames.push(f);
    byKey[f.key] = f;
  }

  function percent(samples) {
    return total > 0 ? (100 * samples / total).toFixed(2) + "%" : "0.00%";
  }

  // The name cut to what fits in w pixels, by code points.
  function fit(name, w) {
    var chars = Array.from(name);
    var max = Math.floor((w - 6) / CHAR_WIDTH);
    if (chars.length <= max) return name;
    if (max < 3) return "";
    return chars.slice(0, max - 2).join("") + "..";
  }

  function place(f, x, w) {
    f.rect.setAttribute("x", x.toFixed(2));
    f.rect.setAttribute("width", w.toFixed(2));
    f.text.setAttribute("x", (x + 3).toFixed(2));
    f.text.textContent = fit(f.name, w);
  }

  function within(f, z) {
    return f.s >= z.s ? f.s + f.n <= z.s + z.n : false;
  }

  function zoom(z) {
    zoomed = z;
    frames.forEach(function (f) {
      f.g.classList.remove("h");
      f.g.classList.remove("a");
      if (!z) {
        place(f, X0 + W * f.s / total, W * f.n / total);
      } else if (z.d > f.d ? within(z, f) : false) {
        f.g.classList.add("a");
        place(f, X0, W);
      } else if (f.d >= z.d ? within(f, z) : false) {
        place(f, X0 + W * (f.s - z.s) / z.n, W * f.n / z.n);
      } else {
        f.g.classList.add("h");
      }
    });
  }

  function matcher(t) {
    try {
      var re = new RegExp(t);
      return function (name) { return re.test(name); };
    } catch (e) {
      return function (name) { return name.indexOf(t) !== -1; };
    }
  }

  // Highlights the frames whose name matches, and says the share of the samples under them, each sample once
  // (a matched frame under another matched frame adds nothing).
  function search(t) {
    term = t;
    var test = t ? matcher(t) : null;
    var matched = [];
    frames.forEach(function (f) {
      var hit = test && !f.special ? test(f.name) : false;
      if (hit) {
        f.g.classList.add("m");
        matched.push(f);
      } else {
        f.g.classList.remove("m");
      }
    });
    matched.sort(function (a, b) { return a.d - b.d; });
    var outer = [];
    var samples = 0;
    matched.forEach(function (f) {
      if (outer.some(function (o) { return within(f, o); })) return;
      outer.push(f);
      samples += f.n;
    });
    if (searchBox && searchBox.value !== t) searchBox.value = t;
    if (matchedLine) {
      matchedLine.textContent = t ? "Matched: " + percent(samples) + " (" + samples + " of " + total +
        " samples, " + matched.length + " frames)" : "";
      matchedLine.setAttribute("data-samples", String(samples));
      matchedLine.setAttribute("data-frames", String(matched.length));
    }
  }

  function writeFragment() {
    var fragment = "#search=" + encodeURIComponent(term) + "&zoom=" + (zoomed ? zoomed.key : "");
    try {
      history.replaceState(null, "", fragment);
    } catch (e) {
      // Some documents (a file: URL in some browsers) refuse it: the state stays on the page only.
    }
  }

  function readFragment() {
    var params = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var eq = part.indexOf("=");
      if (eq === -1) return;
      try {
        params[part.slice(0, eq)] = decodeURIComponent(part.slice(eq + 1));
      } catch (e) {
        // A damaged fragment is ignored, not fatal.
      }
    });
    search(params.search || "");
    var z = params.zoom ? byKey[params.zoom] : null;
    zoom(z && z.d > 0 ? z : null);
  }

  svg.addEventListener("click", function (e) {
    var g = e.target.closest ? e.target.closest("g.f") : null;
    if (!g) return;
    var f = frames[Array.prototype.indexOf.call(nodes, g)];
    zoom(f.d > 0 ? f : null);
    writeFragment();
  });
  svg.addEventListener("mouseover", function (e) {
    var g = e.target.closest ? e.target.closest("g.f") : null;
    if (!g || !details) return;
    var f = frames[Array.prototype.indexOf.call(nodes, g)];
    details.textContent = f.name + (f.module ? " (" + f.module + ")" : "") + ": " + f.n + " samples, " +
      percent(f.n) + " inclusive, " + percent(f.x) + " exclusive";
  });
  svg.addEventListener("mouseout", function () {
    if (details) details.textContent = detailsDefault;
  });
  var reset = document.getElementById("reset");
  if (reset) {
    reset.addEventListener("click", function (e) {
      e.stopPropagation();
      zoom(null);
      writeFragment();
    });
  }
  if (searchBox) {
    searchBox.addEventListener("input", function () {
      search(searchBox.value);
      writeFragment();
    });
  }
  window.addEventListener("hashchange", readFragment);
  readFragment();
  svg.setAttribute("data-ready", "1");
  if (refresh > 0) {
    setTimeout(function () { location.reload(); }, refresh * 1000);
  }
})();
