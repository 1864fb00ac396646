// The toy without a kernel: bloomedu's BloomFilter(m, k), one key at a time, in plain JavaScript.
//
// window.bloomedu.positions(key, m, k) is BloomFilter(m, k).bit_indices(key) for a str key,
// computed exactly as the library computes it (bloomedu/core/positions.py, hashing.py):
//   (h1, h2) = MurmurHash3 x64 128 (seed 0) of the key's UTF-8 bytes (mmh3.hash64),
//   h2 made odd when its k values h1 + i*h2 would repeat (spread_step: the empty key's h2 is 0),
//   position i = fmix64((h1 + i*h2) mod 2**64) mod m, for i = 0 .. k-1.
// 64-bit arithmetic is BigInt. The positions are Numbers while m is at most 2**53 - 1 (every
// filter a browser could draw) and BigInts above, where a Number would round them.
// tests/test_browser_instructor.py checks this file against the library on thousands of keys.
(function () {
  "use strict";

  var MASK64 = (1n << 64n) - 1n;
  var C1 = 0x87c37b91114253d5n;
  var C2 = 0x4cf5ad432745937fn;
  var MAX_NUM_BITS = (1n << 63n) - 1n;  // bloomedu.core.checks.MAX_NUM_BITS
  var MAX_HASHES = 1024;                // bloomedu.core.checks.MAX_HASHES
  var LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:[^\uD800-\uDBFF]|^)[\uDC00-\uDFFF]/;

  function rotl(x, r) {
    return ((x << BigInt(r)) | (x >> BigInt(64 - r))) & MASK64;
  }

  function fmix64(x) {
    x ^= x >> 33n;
    x = (x * 0xff51afd7ed558ccdn) & MASK64;
    x ^= x >> 33n;
    x = (x * 0xc4ceb9fe1a85ec53n) & MASK64;
    return x ^ (x >> 33n);
  }

  function mixK1(k1) {
    return (rotl((k1 * C1) & MASK64, 31) * C2) & MASK64;
  }

  function mixK2(k2) {
    return (rotl((k2 * C2) & MASK64, 33) * C1) & MASK64;
  }

  // MurmurHash3_x64_128 of bytes with seed 0: the two 64-bit halves [h1, h2], as BigInts.
  function murmur3x64(bytes) {
    var length = bytes.length;
    var blocks = length >> 4;
    var view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    var h1 = 0n, h2 = 0n, i;
    for (i = 0; i < blocks; i++) {
      h1 ^= mixK1(view.getBigUint64(16 * i, true));
      h1 = (((rotl(h1, 27) + h2) & MASK64) * 5n + 0x52dce729n) & MASK64;
      h2 ^= mixK2(view.getBigUint64(16 * i + 8, true));
      h2 = (((rotl(h2, 31) + h1) & MASK64) * 5n + 0x38495ab5n) & MASK64;
    }
    var tail = 16 * blocks, rest = length & 15, k1 = 0n, k2 = 0n;
    for (i = rest - 1; i >= 8; i--) {
      k2 |= BigInt(bytes[tail + i]) << BigInt(8 * (i - 8));
    }
    if (rest > 8) {
      h2 ^= mixK2(k2);
    }
    for (i = Math.min(rest, 8) - 1; i >= 0; i--) {
      k1 |= BigInt(bytes[tail + i]) << BigInt(8 * i);
    }
    if (rest > 0) {
      h1 ^= mixK1(k1);
    }
    h1 ^= BigInt(length);
    h2 ^= BigInt(length);
    h1 = (h1 + h2) & MASK64;
    h2 = (h2 + h1) & MASK64;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = (h1 + h2) & MASK64;
    h2 = (h2 + h1) & MASK64;
    return [h1, h2];
  }

  function utf8(key) {
    if (typeof key !== "string") {
      throw new TypeError("key must be a string, not " + (key === null ? "null" : typeof key));
    }
    if (LONE_SURROGATE.test(key)) {  // Python's str.encode("utf-8") refuses these, so does the library
      throw new TypeError("key holds a lone UTF-16 surrogate, which has no UTF-8 encoding");
    }
    return new TextEncoder().encode(key);
  }

  // (h1, h2) of a str key: bloomedu.core.hashing.hash128.
  function hash128(key) {
    return murmur3x64(utf8(key));
  }

  function bitLength(n) {
    return n > 0 ? n.toString(2).length : 0;
  }

  // bloomedu.core.hashing.spread_step: h2, or h2 | 1 when the k values h1 + i*h2 would repeat.
  function spreadStep(h2, k) {
    if (k < 2) {
      return h2;
    }
    var mask = (1n << BigInt(65 - bitLength(k - 1))) - 1n;
    return (h2 & mask) === 0n ? h2 | 1n : h2;
  }

  function wholeNumber(value, name, low, high) {
    var big;
    if (typeof value === "bigint") {
      big = value;
    } else if (typeof value === "number" && Number.isSafeInteger(value)) {
      big = BigInt(value);
    } else {
      throw new TypeError(name + " must be a whole number (a safe integer Number or a BigInt), got " +
                          String(value));
    }
    if (big < low || big > high) {
      throw new RangeError(name + " must be in " + low + ".." + high + ", got " + big);
    }
    return big;
  }

  // BloomFilter(m, k).bit_indices(key): an array of k positions in 0 .. m-1.
  function positions(key, m, k) {
    var bits = wholeNumber(m, "m (num_bits)", 1n, MAX_NUM_BITS);
    var hashes = Number(wholeNumber(k, "k (num_hashes)", 1n, BigInt(MAX_HASHES)));
    var halves = hash128(key);
    var h1 = halves[0], h2 = spreadStep(halves[1], hashes);
    var small = bits <= BigInt(Number.MAX_SAFE_INTEGER);
    var out = new Array(hashes), running = h1;
    for (var i = 0; i < hashes; i++) {
      var position = fmix64(running) % bits;
      out[i] = small ? Number(position) : position;
      running = (running + h2) & MASK64;
    }
    return out;
  }

  window.bloomedu = Object.assign(window.bloomedu || {}, {
    positions: positions,
    hash128: hash128,
    spreadStep: spreadStep,  // (h2 BigInt, k) -> BigInt; exposed for the tests
    maxHashes: MAX_HASHES,
  });

  // --- the page: type a key, see its bits, add it, watch a false positive ------------------
  var LIMIT_M = 1024, LIMIT_K = 16, PROBES = 100000;
  var LABEL_CHARS = 12;  // a longer key is drawn as its first 11 characters and "…" (the cell's title has it whole)
  var MAX_COLUMNS = 16;

  // A key as its bits' cells name it: whole up to LABEL_CHARS characters (code points, so an emoji
  // is never cut in half).
  function label(key) {
    var chars = Array.from(key);
    return chars.length > LABEL_CHARS ? chars.slice(0, LABEL_CHARS - 1).join("") + "…" : key;
  }

  function Toy(root) {
    this.root = root;
    this.keys = [];
    this.find = function (role) { return root.querySelector("[data-toy='" + role + "']"); };
    this.m = Number(this.find("m").value);
    this.k = Number(this.find("k").value);
    var start = (root.getAttribute("data-keys") || "").split(",").filter(Boolean);
    start.forEach(function (key) { this.addKey(key, false); }, this);
    this.bind();
    this.rebuild();
  }

  Toy.prototype.bind = function () {
    var self = this;
    this.find("key").addEventListener("input", function () { self.show(); });
    this.find("key").addEventListener("keydown", function (event) {
      if (event.key === "Enter") { self.addKey(self.find("key").value, true); }
    });
    this.find("add").addEventListener("click", function () { self.addKey(self.find("key").value, true); });
    this.find("probe").addEventListener("click", function () { self.probe(); });
    this.find("clear").addEventListener("click", function () { self.keys = []; self.rebuild(); });
    ["m", "k"].forEach(function (role) {
      self.find(role).addEventListener("change", function () { self.resize(); });
    });
    window.addEventListener("resize", function () { self.fit(); });
  };

  Toy.prototype.resize = function () {
    var m = Number(this.find("m").value), k = Number(this.find("k").value);
    var problem = !Number.isInteger(m) || m < 1 || m > LIMIT_M ? "m must be a whole number from 1 to " + LIMIT_M
      : !Number.isInteger(k) || k < 1 || k > LIMIT_K ? "k must be a whole number from 1 to " + LIMIT_K : "";
    this.find("problem").textContent = problem;
    if (problem) { return; }
    this.m = m;
    this.k = k;
    this.rebuild();  // the same keys, placed again in a filter of the new m and k
  };

  Toy.prototype.addKey = function (key, redraw) {
    if (this.keys.indexOf(key) < 0) {
      try {
        positions(key, 1, 1);
      } catch (error) {
        this.find("problem").textContent = error.message;
        return;
      }
      this.keys.push(key);
    }
    if (redraw) { this.rebuild(); }
  };

  Toy.prototype.rebuild = function () {
    var self = this;
    this.owners = [];
    for (var i = 0; i < this.m; i++) { this.owners.push([]); }
    this.keys.forEach(function (key) {
      positions(key, self.m, self.k).forEach(function (bit) {
        if (self.owners[bit].indexOf(key) < 0) { self.owners[bit].push(key); }
      });
    });
    this.draw();
    this.show();
  };

  Toy.prototype.draw = function () {
    var grid = this.find("grid");
    grid.textContent = "";
    for (var i = 0; i < this.m; i++) {
      var cell = document.createElement("div");
      cell.className = "toy-bit" + (this.owners[i].length ? " set" : "");
      cell.setAttribute("data-bit", String(i));
      cell.title = "bit " + i + (this.owners[i].length ? ", set by " + this.owners[i].join(", ") : ", clear");
      var index = document.createElement("div");
      index.textContent = String(i);
      var who = document.createElement("div");
      who.className = "toy-owners";
      this.owners[i].forEach(function (key) {  // one line per key that set the bit
        var name = document.createElement("span");
        name.textContent = label(key);
        who.appendChild(name);
      });
      cell.appendChild(index);
      cell.appendChild(who);
      grid.appendChild(cell);
    }
    this.fit();
    var set = this.owners.filter(function (o) { return o.length; }).length, n = this.keys.length;
    var rate = Math.pow(1 - Math.exp(-this.k * n / this.m), this.k);
    var stats = this.find("stats");
    stats.textContent = "BloomFilter(m = " + this.m + ", k = " + this.k + "): n = " + n +
      " keys added (" + (n ? this.keys.join(", ") : "none") + "); " + set + " of " + this.m +
      " bits set (fill " + (set / this.m).toFixed(3) + "); a key never added is claimed with probability about (1 − e";
    [["sup", "−kn/m"], ["", ")"], ["sup", "k"], ["", " = " + rate.toFixed(4) + "."]].forEach(function (part) {
      var piece = part[0] ? document.createElement(part[0]) : document.createTextNode(part[1]);
      if (part[0]) { piece.textContent = part[1]; }
      stats.appendChild(piece);  // the formula with its exponents raised, not written with ^
    });
  };

  // Columns wide enough for every label, measured as drawn: 16, or 8, 4, 2 or 1 (a row starts
  // at a multiple of its length, so bit numbers stay easy to find) where the widest label and the
  // cell's padding and border would not fit in a sixteenth of the grid.
  Toy.prototype.fit = function () {
    var grid = this.find("grid"), cells = grid.children, room = grid.clientWidth;
    var columns = Math.min(this.m, MAX_COLUMNS);
    if (room > 0 && cells.length) {
      var range = document.createRange(), widest = 0;
      grid.querySelectorAll(".toy-bit > div:first-child, .toy-owners > span").forEach(function (text) {
        range.selectNodeContents(text);  // the text's own width, even where its cell is narrower
        widest = Math.max(widest, range.getBoundingClientRect().width);
      });
      var cell = getComputedStyle(cells[0]), style = getComputedStyle(grid);
      var frame = ["paddingLeft", "paddingRight", "borderLeftWidth", "borderRightWidth"]
        .reduce(function (sum, side) { return sum + (parseFloat(cell[side]) || 0); }, 0);
      var gap = parseFloat(style.columnGap) || 0, need = Math.ceil(widest + frame) + 1;
      while (columns > 1 && columns * need + (columns - 1) * gap > room) {
        columns = Math.pow(2, Math.ceil(Math.log2(columns)) - 1);  // the next power of two down
      }
    }
    grid.style.gridTemplateColumns = "repeat(" + columns + ", minmax(0, 1fr))";
  };

  Toy.prototype.verdict = function (key) {
    var self = this, bits = positions(key, this.m, this.k);
    var clear = bits.filter(function (bit, i) { return !self.owners[bit].length && bits.indexOf(bit) === i; });
    var added = this.keys.indexOf(key) >= 0;
    var lenders = [];
    bits.forEach(function (bit) {
      self.owners[bit].forEach(function (owner) { if (lenders.indexOf(owner) < 0) { lenders.push(owner); } });
    });
    return { key: key, bits: bits, clear: clear, added: added, lenders: lenders,
             falsePositive: !added && clear.length === 0 };
  };

  Toy.prototype.show = function (probed) {
    var key = this.find("key").value, cells = this.find("grid").children, i;
    for (i = 0; i < cells.length; i++) { cells[i].classList.remove("lit", "clear"); }
    var out = this.find("verdict");
    out.classList.remove("false-positive");
    if (!key && !probed) {
      out.textContent = "Type a key to see its " + this.k + " bits.";
      return;
    }
    var v;
    try {
      v = this.verdict(probed || key);
    } catch (error) {
      out.textContent = error.message;
      return;
    }
    v.bits.forEach(function (bit) {
      cells[bit].classList.add("lit");
      if (v.clear.indexOf(bit) >= 0) { cells[bit].classList.add("clear"); }
    });
    var where = "key '" + v.key + "': bits " + v.bits.join(", ");
    if (v.added) {
      out.textContent = where + ": added, so every one of its bits is set (a filter never forgets a key).";
    } else if (v.falsePositive) {
      out.classList.add("false-positive");
      out.textContent = where + ": all set, so the filter says 'maybe present', but it was never added: " +
        "a false positive, on bits borrowed from " + v.lenders.join(", ") + ".";
    } else {
      out.textContent = where + ": " + (v.clear.length > 1 ? "bits " + v.clear.join(", ") + " are" :
        "bit " + v.clear[0] + " is") + " clear, so it is certainly absent.";
    }
  };

  // Try keys never added, "probe 1", "probe 2", ..., until the filter claims one.
  Toy.prototype.probe = function () {
    for (var i = 1; i <= PROBES; i++) {
      var key = "probe " + i;
      if (this.keys.indexOf(key) < 0 && this.verdict(key).falsePositive) {
        this.find("key").value = key;
        this.find("tries").textContent = "The first false positive among keys never added: '" + key +
          "', after " + i + (i > 1 ? " tries." : " try.");
        this.show();
        return key;
      }
    }
    this.find("tries").textContent = "No false positive in " + PROBES + " keys never added: add more keys first.";
    return null;
  };

  function start() {
    document.querySelectorAll(".bloomedu-toy-page").forEach(function (root) {
      root.toy = new Toy(root);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
