// Wide code, outputs and tables scroll inside their column (bloomedu.css draws a thin scrollbar):
// each one that holds more than it shows gets a shadow on the side where the rest is, so a
// reader whose scrollbars are hidden until used (macOS, phones) still sees that it goes on.
(function () {
  "use strict";
  var SELECTOR = ".bd-article pre, .bd-article .pst-scrollable-table-container, " +
                 ".bd-article div.cell_output .output, .bd-article .bloomedu-wide";

  function mark(element) {
    var hidden = element.scrollWidth - element.clientWidth;
    element.classList.toggle("bloomedu-more-right", hidden > 1 && element.scrollLeft < hidden - 1);
    element.classList.toggle("bloomedu-more-left", hidden > 1 && element.scrollLeft > 1);
  }

  function markAll() {
    document.querySelectorAll(SELECTOR).forEach(mark);
  }

  function start() {
    document.querySelectorAll(SELECTOR).forEach(function (element) {
      element.addEventListener("scroll", function () { mark(element); }, { passive: true });
    });
    markAll();
    window.addEventListener("resize", markAll);
    window.addEventListener("load", markAll);  // images and fonts change widths
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
