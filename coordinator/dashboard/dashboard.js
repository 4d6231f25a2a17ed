// The dashboard's page: polls the server's JSON documents and updates the rows in place.
"use strict";
(() => {
  const token = document.querySelector('meta[name="seawall-token"]').content;
  const view = { selected: null, confirming: false, ticks: 0 };
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (name === "text") node.textContent = value;
      else if (name === "class") node.className = value;
      else if (name.startsWith("data-")) node.dataset[name.slice(5)] = value;
      else node.setAttribute(name, value);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  async function getJSON(url) {
    const response = await fetch(url, { cache: "no-store" });
    if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
    return response.json();
  }

  function wanted() {
    const match = /^#session=(.+)$/.exec(location.hash);
    return match ? decodeURIComponent(match[1]) : null;
  }

  function when(ts) {
    return ts ? new Date(ts * 1000).toLocaleString() : "—";
  }

  function renderList(listing) {
    $("repo").textContent = listing.repo;
    const body = $("sessions").tBodies[0];
    body.replaceChildren(
      ...listing.sessions.map((s) => {
        const link = el("a", { href: `#session=${encodeURIComponent(s.session)}` },
          el("code", { text: s.session }));
        return el("tr", { "data-session": s.session, "data-phase": s.phase,
          class: s.session === view.selected ? "chosen" : "" },
          el("td", {}, link),
          el("td", {}, el("span", { class: `state ${s.phase}`, text: s.phase })),
          el("td", { class: "num", text: String(s.agents) }),
          el("td", { class: "num", text: String(s.running) }),
          el("td", { text: when(s.updated_at) }),
          el("td", { class: "path", text: s.plan || s.note }));
      }));
    $("empty").hidden = listing.sessions.length > 0;
    if (!view.selected && listing.sessions.length) {
      const live = listing.sessions.find((s) => !s.ended);
      view.selected = (live || listing.sessions[0]).session;
    }
    renderRunner(listing.runner);
  }

  function renderRunner(runner) {
    $("runner").hidden = !runner;
    if (!runner) return;
    $("runner-state").textContent = `${runner.dir} · breaker ${runner.breaker}` +
      (runner.blocked_reason ? ` · blocked: ${runner.blocked_reason}` : "");
    $("queue").tBodies[0].replaceChildren(
      ...runner.items.map((item) => el("tr", { "data-item": item.id, "data-state": item.state },
        el("td", {}, el("code", { text: item.id })),
        el("td", {}, el("span", { class: `state ${item.state}`, text: item.state })),
        el("td", { class: "num", text: String(item.runs) }),
        el("td", { class: "num", text: String(item.failures) }),
        el("td", { text: item.last_outcome || "—" }),
        el("td", {}, item.session
          ? el("a", { href: `#session=${encodeURIComponent(item.session)}` },
            el("code", { text: item.session }))
          : document.createTextNode("—")),
        el("td", { class: "path", text: item.plan }))));
  }

  function renderSession(doc) {
    $("session").hidden = false;
    document.body.dataset.session = doc.session;
    document.body.dataset.phase = doc.phase;
    $("session-id").textContent = doc.session;
    const phase = $("phase");
    phase.textContent = doc.phase + (doc.stop_asked && !doc.ended ? " (a stop was asked for)" : "");
    phase.className = `phase state ${doc.phase}`;
    $("spend").textContent = `spend: ${doc.spend.join(" · ")}`;
    $("waves").replaceChildren(...(doc.waves.length ? doc.waves.map((w) =>
      el("li", { class: `wave state ${w.phase}`, "data-wave": String(w.number),
        text: `W${w.number} ${w.phase} · ${w.isolation} · ${w.agents} agent(s)` }))
      : [el("li", { class: "wave", text: "no wave yet" })]));
    $("note").hidden = !doc.note;
    $("note").textContent = doc.note;
    renderLinks(doc);
    renderAgents(doc);
  }

  function renderLinks(doc) {
    const parts = [el("a", { href: doc.state_md, target: "_blank", text: "STATE.md" })];
    if (doc.report) parts.push(el("a", { href: doc.report, target: "_blank", text: "report" }));
    if (doc.can_stop) {
      const button = el("button", { type: "button", id: "stop-session",
        text: view.confirming ? "confirm: stop the whole session" : "stop session" });
      button.addEventListener("click", () => {
        if (!view.confirming) {
          view.confirming = true;
          button.textContent = "confirm: stop the whole session";
          return;
        }
        view.confirming = false;
        stop(doc.session, {});
      });
      parts.push(button);
    }
    $("session-links").replaceChildren(...parts);
  }

  function renderAgents(doc) {
    const head = $("agent-head");
    const names = [...doc.columns, "links", "timeline"];
    if (head.childElementCount !== names.length) {
      head.replaceChildren(...names.map((name) => el("th", { text: name })));
    }
    const longest = {};
    for (const a of doc.agents) longest[a.wave] = Math.max(longest[a.wave] || 0, a.elapsed_s);
    const body = $("agents").tBodies[0];
    const rows = doc.agents.map((agent) => {
      const key = `${agent.wave}/${agent.task}`;
      let row = [...body.rows].find((r) => r.dataset.key === key);
      if (!row) row = el("tr", { class: "agent", "data-key": key,
        "data-wave": String(agent.wave), "data-task": agent.task });
      row.dataset.state = agent.state;
      row.dataset.running = String(agent.running);
      const cells = agent.cells.map((text, i) => el("td", {
        class: `${doc.columns[i].replace(/[^a-z]+/g, "-")}`, text }));
      cells[2].replaceChildren(el("span", { class: `state ${agent.state}`, text: agent.state }));
      const share = longest[agent.wave] ? agent.elapsed_s / longest[agent.wave] * 100 : 0;
      const bar = el("div", { class: `bar state ${agent.state}` });
      bar.style.width = `${Math.max(share, 1).toFixed(1)}%`;
      cells.push(el("td", { class: "links" }, ...linksOf(doc, agent)));
      cells.push(el("td", {}, el("div", { class: "timeline" }, bar)));
      row.replaceChildren(...cells);
      return row;
    });
    body.replaceChildren(...rows);
  }

  function linksOf(doc, agent) {
    const links = [];
    if (agent.transcript) {
      links.push(el("a", { href: agent.transcript, target: "_blank", text: "transcript" }));
    }
    links.push(el("a", { href: agent.diff, target: "_blank", text: "diff" }));
    if (doc.can_stop && agent.running) {
      const button = el("button", { type: "button", class: "stop", text: "stop" });
      button.addEventListener("click", () => stop(doc.session, { wave: agent.wave, task: agent.task }));
      links.push(button);
    }
    return links;
  }

  async function stop(session, target) {
    const response = await fetch(`/api/sessions/${encodeURIComponent(session)}/stop`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Seawall-Token": token },
      body: JSON.stringify(target),
    });
    $("message").textContent = response.ok ? (await response.json()).said : await response.text();
    await refresh();
  }

  async function refresh() {
    try {
      const hash = wanted();
      if (hash && hash !== view.selected) {
        view.selected = hash;
        view.confirming = false;
        $("agents").tBodies[0].replaceChildren();
      }
      if (view.ticks % 3 === 0 || !view.selected) renderList(await getJSON("/api/sessions"));
      if (view.selected) {
        renderSession(await getJSON(`/api/sessions/${encodeURIComponent(view.selected)}`));
      }
      document.body.dataset.updated = String(++view.ticks);
      $("footer").textContent = `Read from the session files, refreshed every second ` +
        `(last ${new Date().toLocaleTimeString()}).`;
    } catch (error) {
      $("footer").textContent = `Could not read the dashboard: ${error.message}`;
    }
  }

  async function loop() {
    await refresh();
    setTimeout(loop, 1000);
  }

  window.addEventListener("hashchange", () => { view.ticks = 0; refresh(); });
  loop();
})();
