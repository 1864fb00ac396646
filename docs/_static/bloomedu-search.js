// Opened from the files (file://), a page cannot fetch its neighbours, so Sphinx's search
// lists its results without the sentence it would read from each page; served over HTTP
// (python -m http.server) the sentences come back.
if (window.location.protocol === "file:") {
  DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;
}
