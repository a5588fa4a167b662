// conduit-mcp review console: live updates and bulk selection. Served by the console itself
// (no build step, no third-party code). Never writes server text as HTML: the server renders
// and escapes every page; this script only swaps in what the server rendered.
(function () {
  "use strict";
  var body = document.body;
  var mode = body.getAttribute("data-live");
  var live = document.getElementById("live");

  function picks() { return Array.prototype.slice.call(document.querySelectorAll("input.pick")); }
  function counted() {
    var n = picks().filter(function (box) { return box.checked; }).length;
    var label = document.getElementById("selected-count");
    if (label) { label.textContent = n + " selected"; }
  }
  function wire() {
    var all = document.getElementById("select-all");
    if (all) {
      all.addEventListener("change", function () {
        picks().forEach(function (box) { box.checked = all.checked; });
        counted();
      });
    }
    picks().forEach(function (box) { box.addEventListener("change", counted); });
    counted();
  }
  wire();

  var refreshing = false, again = false;
  function refresh() {
    if (refreshing) { again = true; return; }
    refreshing = true;
    var kept = {};
    picks().forEach(function (box) { if (box.checked) { kept[box.value] = true; } });
    var typed = {};
    document.querySelectorAll("main input[name=reason]").forEach(function (box, i) { typed[i] = box.value; });
    fetch(window.location.href, { headers: { "X-Console-Fragment": "1" }, credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) { throw new Error(String(response.status)); }
        var count = response.headers.get("X-Pending-Count");
        return response.text().then(function (html) { return [html, count]; });
      })
      .then(function (pair) {
        var main = document.getElementById("main");
        var template = document.createElement("template");
        template.innerHTML = pair[0];  // the server's own rendering, escaped there
        main.replaceChildren(template.content);
        picks().forEach(function (box) { if (kept[box.value]) { box.checked = true; } });
        document.querySelectorAll("main input[name=reason]").forEach(function (box, i) {
          if (typed[i]) { box.value = typed[i]; }
        });
        if (pair[1] !== null) {
          var badge = document.getElementById("pending-count");
          if (badge) { badge.textContent = pair[1]; }
          document.title = document.title.replace(/^\(\d+\) /, "");
          if (pair[1] !== "0") { document.title = "(" + pair[1] + ") " + document.title; }
        }
        wire();
      })
      .catch(function () { /* the next event tries again */ })
      .then(function () {
        refreshing = false;
        if (again) { again = false; refresh(); }
      });
  }

  function changedHere(data) {
    var key = document.getElementById("review-key");
    if (!key) { return false; }
    return data.server_id === key.getAttribute("data-server") && data.tool === key.getAttribute("data-tool");
  }

  if (mode !== "off" && window.EventSource) {
    var source = new EventSource("/api/events");
    source.addEventListener("open", function () { if (live) { live.classList.add("on"); } });
    source.addEventListener("error", function () { if (live) { live.classList.remove("on"); } });
    source.addEventListener("audit", function (event) {
      var data;
      try { data = JSON.parse(event.data); } catch (e) { return; }
      if (mode === "notice") {
        if (changedHere(data)) {
          var stale = document.getElementById("stale");
          if (stale) { stale.hidden = false; }
        }
        var badge = document.getElementById("pending-count");
        if (badge) {
          fetch("/servers", { headers: { "X-Console-Fragment": "1" }, credentials: "same-origin" })
            .then(function (r) { badge.textContent = r.headers.get("X-Pending-Count") || "?"; })
            .catch(function () {});
        }
        return;
      }
      refresh();
    });
  }
})();
