// The jsemu console: a hash-routed page over /console/api (see jsemu/console/site.py).
// Plain DOM, no framework: every value from the server is set as text, never as HTML.

const $page = () => document.getElementById("page");
let stopTail = null; // the live tail's EventSource, closed when the page changes
let refresher = null; // the overview's refresh timer, cleared when the page changes
const REFRESH_MS = 2000;

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// The account whose JetStream the pages show (a server with several accounts), kept per tab.
let account = sessionStorage.getItem("jsemu-account") || "";
const withAccount = (url) => (account ? url + (url.includes("?") ? "&" : "?") + "account=" + encodeURIComponent(account) : url);

async function api(path, options) {
  const global = path.startsWith("overview") || path.startsWith("control") || path.startsWith("connections");
  const res = await fetch(global ? "/console/api/" + path : withAccount("/console/api/" + path), options);
  const body = await res.json();
  if (!res.ok && body && body.error && !("ok" in body)) throw new Error(body.error);
  return body;
}

const q = (params) => new URLSearchParams(Object.entries(params).filter(([, v]) => v !== "" && v != null)).toString();
const num = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : n ?? "");
const enc = encodeURIComponent;

function table(columns, rows, testId) {
  return h("table", { "data-test": testId },
    h("thead", {}, h("tr", {}, columns.map(([label, , cls]) => h("th", { class: cls }, label)))),
    h("tbody", {}, rows.map((row) => h("tr", { "data-test": testId && testId + "-row" },
      columns.map(([, get, cls]) => { const v = get(row); return h("td", { class: cls }, v instanceof Node ? v : num(v)); })))));
}

function card(label, value, testId, cls = "card") {
  return h("div", { class: cls }, h("div", { class: "label" }, label), h("div", { class: "value", "data-test": testId }, num(value)));
}

// Replace an element's children (arrays flattened, null and undefined left out).
function put(el, ...nodes) { el.replaceChildren(...nodes.flat().filter((n) => n !== null && n !== undefined)); }
function show(...nodes) { put($page(), ...nodes); }
function fail(err) { show(h("p", { class: "error", "data-test": "error" }, String(err.message || err))); }

// --- header clock -----------------------------------------------------------------------

async function refreshClock() {
  try {
    const o = await api("control");
    const el = document.getElementById("clock");
    const c = o.clock;
    el.textContent = c.now ? `clock ${c.now}${c.frozen ? " (frozen)" : ""}` : "";
    el.className = c.frozen ? "frozen" : "";
  } catch (e) { /* the page shows errors; the header stays quiet */ }
}

// --- pages ------------------------------------------------------------------------------

const isOverview = () => ["", "#", "#/"].includes(location.hash);

async function overview() {
  const o = await api("overview");
  show(
    h("h1", {}, `${o.server_name} `, h("small", {}, `nats-server ${o.version} (${o.git_commit})`)),
    o.restricted ? h("p", { class: "notice", "data-test": "restricted" }, o.restricted) : null,
    h("div", { class: "cards" },
      card("Uptime", o.uptime, "uptime"), card("Connections", o.connections, "connections"),
      card("Total connections", o.total_connections), card("Subscriptions", o.subscriptions, "subscriptions"),
      card("In msgs", o.in_msgs, "in-msgs"), card("Out msgs", o.out_msgs, "out-msgs"),
      card("In bytes", o.in_bytes), card("Out bytes", o.out_bytes),
      card("Slow consumers", o.slow_consumers), card("JetStream", o.jetstream ? "enabled" : "off"),
      card("Clock", o.clock.now || "-", "clock-now", "card wide"),
      card("Clock state", o.clock.frozen ? "frozen" : "running", "clock-state"),
      card("Control plane", o.control ? "on" : "off", "control-state")),
    h("p", { class: "request" }, `server id ${o.server_id}, client port ${o.host}:${o.port}, started ${o.start}; refreshed every ${REFRESH_MS / 1000} s`),
  );
  clearTimeout(refresher);
  refresher = setTimeout(() => { if (isOverview()) overview().catch(fail); }, REFRESH_MS);
}

async function connections() {
  const c = await api("connections?" + q({ limit: 200 }));
  show(h("h1", {}, `Connections (${c.total})`),
    table([
      ["cid", (x) => x.cid, "num"], ["name", (x) => x.name || ""], ["address", (x) => `${x.ip}:${x.port}`],
      ["lang", (x) => [x.lang, x.version].filter(Boolean).join(" ")], ["uptime", (x) => x.uptime],
      ["in msgs", (x) => x.in_msgs, "num"], ["out msgs", (x) => x.out_msgs, "num"],
      ["pending", (x) => x.pending_bytes, "num"],
      ["subscriptions", (x) => h("span", {}, (x.subscriptions_list || []).join(", "))],
    ], c.connections || [], "connections"));
}

async function streams() {
  const s = await api("streams?limit=500");
  show(h("h1", {}, `Streams (${s.total})`),
    table([
      ["name", (x) => h("a", { href: `#/streams/${enc(x.name)}`, "data-test": "stream-name" }, x.name)],
      ["subjects", (x) => x.subjects.join(", ")], ["storage", (x) => x.storage], ["R", (x) => x.replicas, "num"],
      ["messages", (x) => h("span", { "data-test": "stream-messages" }, num(x.messages)), "num"],
      ["bytes", (x) => x.bytes, "num"], ["first", (x) => x.first_seq, "num"], ["last", (x) => x.last_seq, "num"],
      ["subjects #", (x) => x.num_subjects, "num"], ["consumers", (x) => x.consumers, "num"],
    ], s.streams, "streams"));
}

async function stream(name, params) {
  const info = await api(`streams/${enc(name)}?` + q({ subjects: params.get("subjects") || "" }));
  const cons = await api(`streams/${enc(name)}/consumers?limit=500`);
  const st = info.state;
  const browser = h("div", { id: "browser" });
  show(
    h("h1", {}, `Stream ${name}`),
    h("div", { class: "cards" },
      card("Messages", st.messages, "info-messages"), card("Bytes", st.bytes), card("First seq", st.first_seq),
      card("Last seq", st.last_seq), card("Subjects", st.num_subjects), card("Deleted", st.num_deleted || 0),
      card("Consumers", st.consumer_count), card("Created", info.created)),
    h("p", {}, "Live tail of this stream: ", (info.config.subjects || []).map((s) => h("a", { href: `#/tail?subject=${enc(s)}` }, s, " "))),
    (info.peers || []).length > 1 || (info.peers || []).some((p) => p.name.startsWith("mirror")) ? [h("h2", {}, "Copies"),
      table([["peer", (x) => x.name], ["leader", (x) => (x.leader ? "leader" : "")], ["last seq", (x) => x.last_seq, "num"],
        ["lag", (x) => h("span", { "data-test": "peer-lag" }, num(x.lag)), "num"], ["paused", (x) => (x.paused ? "paused" : "")],
        ["held", (x) => x.hold ?? ""], ["offline", (x) => (x.offline ? "offline" : "")]], info.peers, "peers")] : null,
    h("h2", {}, "Message browser"), browser,
    h("h2", {}, `Consumers (${cons.total})`),
    table([
      ["name", (x) => h("a", { href: `#/consumers/${enc(name)}/${enc(x.name)}`, "data-test": "consumer-name" }, x.name)],
      ["filter", (x) => [].concat(x.filter).join(", ")], ["ack", (x) => x.ack_policy],
      ["delivered", (x) => x.delivered.stream_seq, "num"], ["ack floor", (x) => x.ack_floor.stream_seq, "num"],
      ["pending", (x) => h("span", { "data-test": "consumer-pending" }, num(x.num_pending)), "num"],
      ["ack pending", (x) => x.num_ack_pending, "num"], ["redelivered", (x) => x.num_redelivered, "num"],
      ["waiting", (x) => x.num_waiting, "num"], ["paused", (x) => (x.paused ? "yes" : "")],
      ["pinned", (x) => x.pinned.map((p) => `${p.group}: ${p.pinned_client_id}`).join(", ")],
    ], cons.consumers, "consumers"),
    h("h2", {}, info.subjects_total === null ? `Subjects (${num(st.num_subjects)}: give a filter to count them)` : `Subjects (${info.subjects_total})`),
    h("form", { class: "bar", onsubmit: (e) => { e.preventDefault(); location.hash = `#/streams/${enc(name)}?subjects=${enc(e.target.subjects.value)}`; } },
      h("label", {}, "filter", h("input", { name: "subjects", value: params.get("subjects") || (info.subjects_total === null ? "" : ">") })), h("button", {}, "Count")),
    table([["subject", (x) => x.subject], ["messages", (x) => x.count, "num"]], info.subjects, "subjects"),
    h("h2", {}, "Configuration"), h("pre", { "data-test": "config" }, JSON.stringify(info.config, null, 2)),
  );
  messageBrowser(browser, name, st);
}

function messageBrowser(root, name, st) {
  const form = h("form", { class: "bar", "data-test": "browse-form" },
    h("label", {}, "mode", h("select", { name: "mode" },
      h("option", { value: "seq" }, "by sequence"), h("option", { value: "next" }, "next by subject"),
      h("option", { value: "last" }, "last by subject"), h("option", { value: "multi_last" }, "last per subject (multi_last)"))),
    h("label", {}, "sequence", h("input", { name: "seq", size: 8, value: st.first_seq || 1 })),
    h("label", {}, "subject", h("input", { name: "subject", size: 24, placeholder: "orders.>" })),
    h("label", {}, "batch", h("input", { name: "batch", size: 4, value: 10 })),
    h("label", {}, "up_to_seq", h("input", { name: "up_to_seq", size: 8 })),
    h("label", {}, "up_to_time", h("input", { name: "up_to_time", size: 22, placeholder: "2026-01-02T03:04:05Z" })),
    h("label", {}, "payload", h("select", { name: "view" },
      h("option", { value: "text" }, "text"), h("option", { value: "json" }, "JSON"), h("option", { value: "hex" }, "hex"))),
    h("button", { "data-test": "browse" }, "Get"));
  const out = h("div", { "data-test": "browse-result" });
  put(root, form, out);
  const run = async (extra = {}) => {
    const f = Object.fromEntries(new FormData(form).entries());
    const params = { ...f, ...extra };
    delete params.view;
    try {
      const r = await api(`streams/${enc(name)}/messages?` + q(params));
      const next = r.next_seq ? h("button", { class: "secondary", "data-test": "next-page", onclick: () => { form.seq.value = r.next_seq; run(); } }, "Next page") : null;
      put(out,
        h("div", { class: "request" }, `${r.request.subject} ${r.request.payload}`, ` · stream ${r.first_seq}..${r.last_seq}`),
        r.messages.length ? r.messages.map((m) => messageView(m, f.view)) : h("p", { "data-test": "no-message" }, "No message."),
        next);
    } catch (e) { put(out, h("p", { class: "error" }, e.message)); }
  };
  form.addEventListener("submit", (e) => { e.preventDefault(); run(); });
}

function payloadText(m, view) {
  if (view === "hex") return m.hex;
  if (view === "json" && m.json) return m.json;
  return m.text ?? `(binary) ${m.hex}`;
}

function messageView(m, view) {
  return h("div", { class: "msg", "data-test": "message" },
    h("div", { class: "meta" }, `#${m.seq ?? ""} `, h("b", { "data-test": "message-subject" }, m.subject), ` · ${m.time || m.received} · ${m.size} bytes`),
    m.headers.length ? h("pre", { "data-test": "message-headers" }, m.headers.map(([k, v]) => `${k}: ${v}`).join("\n")) : null,
    h("pre", { "data-test": "message-payload" }, payloadText(m, view) + (m.truncated ? "\n… (cut)" : "")));
}

async function consumer(streamName, name) {
  const c = await api(`streams/${enc(streamName)}/consumers/${enc(name)}`);
  show(h("h1", {}, `Consumer ${streamName} › ${name}`),
    h("div", { class: "cards" },
      card("Delivered (stream)", c.delivered.stream_seq), card("Delivered (consumer)", c.delivered.consumer_seq),
      card("Ack floor", c.ack_floor.stream_seq), card("Pending", c.num_pending, "pending"),
      card("Ack pending", c.num_ack_pending), card("Redelivered", c.num_redelivered),
      card("Waiting pulls", c.num_waiting), card("Paused", c.paused ? `until ${c.config.pause_until}` : "no")),
    (c.priority_groups || []).length ? h("pre", {}, JSON.stringify(c.priority_groups, null, 2)) : null,
    h("h2", {}, "Configuration"), h("pre", {}, JSON.stringify(c.config, null, 2)));
}

async function buckets() {
  const b = await api("buckets");
  show(h("h1", {}, "Key-value buckets"),
    table([["bucket", (x) => h("a", { href: `#/kv/${enc(x.bucket)}` }, x.bucket)], ["values", (x) => x.values, "num"], ["bytes", (x) => x.bytes, "num"]], b.kv, "kv"),
    h("h1", {}, "Object stores"),
    table([["bucket", (x) => h("a", { href: `#/objects/${enc(x.bucket)}` }, x.bucket)], ["messages", (x) => x.messages, "num"], ["bytes", (x) => x.bytes, "num"]], b.objects, "objects"));
}

async function kv(bucket, params) {
  const r = await api(`kv/${enc(bucket)}?` + q({ filter: params.get("filter") || "", limit: 500 }));
  const history = h("div", { "data-test": "kv-history" });
  const showHistory = async (key) => {
    const hst = await api(`kv/${enc(bucket)}/history?` + q({ key }));
    put(history, h("h2", {}, `History of ${key}`),
      table([["revision", (x) => x.revision, "num"], ["operation", (x) => x.operation], ["created", (x) => x.created], ["value", (x) => x.value]], hst.history, "history"));
  };
  show(h("h1", {}, `Bucket ${bucket} (${r.total} keys)`),
    table([
      ["key", (x) => h("a", { href: "#", onclick: (e) => { e.preventDefault(); showHistory(x.key); } }, x.key)],
      ["revision", (x) => x.revision, "num"], ["operation", (x) => x.operation], ["history", (x) => x.history, "num"], ["size", (x) => x.size, "num"],
    ], r.keys, "keys"), history);
}

async function objects(bucket) {
  const r = await api(`objects/${enc(bucket)}`);
  const chunks = h("div", { "data-test": "chunks" });
  const showChunks = async (o) => {
    const c = await api(`objects/${enc(bucket)}/${enc(o.nuid)}/chunks?limit=500`);
    put(chunks, h("h2", {}, `Chunks of ${o.name}`),
      table([["seq", (x) => x.seq, "num"], ["size", (x) => x.size, "num"], ["stored", (x) => x.time]], c.chunks, "chunk"));
  };
  show(h("h1", {}, `Object store ${bucket} (${r.total})`),
    table([["name", (x) => h("a", { href: "#", onclick: (e) => { e.preventDefault(); showChunks(x); } }, x.name)],
      ["size", (x) => x.size, "num"], ["chunks", (x) => x.chunks, "num"],
      ["chunks stored", (x) => x.chunks_stored, "num"], ["modified", (x) => x.modified], ["digest", (x) => x.digest],
      ["deleted", (x) => (x.deleted ? "yes" : "")]], r.objects, "objects"), chunks);
}

function tail(params) {
  const lines = h("div", { "data-test": "tail-lines" });
  const status = h("span", { "data-test": "tail-status" }, "not started");
  const form = h("form", { class: "bar" },
    h("label", {}, "subject", h("input", { name: "subject", value: params.get("subject") || ">", size: 30 })),
    h("button", { "data-test": "tail-start" }, "Start"), status);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (stopTail) stopTail();
    const source = new EventSource(withAccount("/console/api/tail?" + q({ subject: form.subject.value })));
    stopTail = () => { source.close(); stopTail = null; };
    source.addEventListener("ready", (ev) => { status.textContent = `tailing ${JSON.parse(ev.data).subject}`; });
    source.addEventListener("message", (ev) => {
      const m = JSON.parse(ev.data);
      lines.prepend(h("div", { class: "tail-line", "data-test": "tail-line" }, `${m.received} ${m.subject} ${m.text ?? m.hex}`));
      while (lines.childElementCount > 500) lines.lastChild.remove();
    });
    source.addEventListener("dropped", (ev) => { lines.prepend(h("div", { class: "tail-line error" }, `${JSON.parse(ev.data).dropped} messages dropped (the page read too slowly)`)); });
    source.onerror = () => { status.textContent = "disconnected"; };
  });
  show(h("h1", {}, "Live tail"), h("p", {}, "Messages published on a subject, as they arrive (server-sent events)."), form, lines);
}

// Each control action: its $JSEMU.API method, a title and its argument fields [name, type, placeholder].
const ACTIONS = [
  ["Clock", [
    ["FREEZE_CLOCK", "Freeze the clock", []],
    ["RESUME_CLOCK", "Resume the clock", []],
    ["ADVANCE_CLOCK", "Advance the clock", [["seconds", "number", "1.5"]]],
    ["SET_CLOCK", "Set the clock", [["ns", "number", "Unix nanoseconds"]]],
  ]],
  ["Peers and nodes", [
    ["PEER_DOWN", "Take a peer down", [["stream", "text"], ["peer", "text"]]],
    ["PEER_UP", "Bring a peer up", [["stream", "text"], ["peer", "text"]]],
    ["STEP_DOWN", "Leader step-down", [["stream", "text"]]],
    ["NODE_DOWN", "Take a node down", [["name", "text", "n2"]]],
    ["NODE_UP", "Bring a node up", [["name", "text", "n2"]]],
  ]],
  ["Mirrors and sources", [
    ["SET_LAG", "Hold N messages behind", [["stream", "text"], ["messages", "number"], ["source", "text", "(a source: optional)"]]],
    ["PAUSE", "Pause", [["stream", "text"], ["source", "text", "(optional)"]]],
    ["RESUME", "Resume / catch up", [["stream", "text"], ["source", "text", "(optional)"]]],
  ]],
  ["Faults", [
    ["FAULT", "Add a fault", [["filter", "text", "orders.>"], ["action", "text", "drop | delay | status"], ["count", "number", "1 (0: until cleared)"], ["delay", "number", "seconds"], ["status", "number", "503"]]],
    ["CLEAR_FAULT", "Remove a fault", [["id", "number"]]],
    ["CLEAR_FAULTS", "Remove every fault", []],
    ["CLEAR_ANSWERS", "Clear the responder log", []],
  ]],
];

function actionForm(method, title, fields, enabled, after) {
  const preview = h("div", { class: "request", "data-test": `request-${method}` });
  const result = h("div", { "data-test": `result-${method}` });
  const args = () => {
    const out = {};
    for (const [name, type] of fields) {
      const v = form.elements[name].value.trim();
      if (v !== "") out[name] = type === "number" ? Number(v) : v;
    }
    return JSON.stringify(out);
  };
  const form = h("form", { class: "bar", "data-action": method },
    fields.map(([name, type, ph]) => h("label", {}, name, h("input", { name, size: type === "number" ? 8 : 14, placeholder: ph || "" }))),
    h("button", { disabled: !enabled, "data-test": `do-${method}` }, title), preview, result);
  const update = () => { preview.textContent = `$JSEMU.API.${method} ${args()}`; };
  form.addEventListener("input", update);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const r = await api(`control/${method}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: args() });
    put(result, r.ok ? h("span", { class: "ok" }, `ok ${JSON.stringify(r.result)}`) : h("span", { class: "error" }, r.error));
    refreshClock();
    after();
  });
  update();
  return form;
}

async function control() {
  const s = await api("control");
  const state = h("div", { "data-test": "control-state" });
  const fill = async () => {
    const t = await api("control");
    const c = t.clock;
    put(state,
      h("p", {}, "Clock: ", h("b", { "data-test": "clock-state" }, c.frozen ? "frozen" : "running"), ` at ${c.now || "-"}`),
      h("h2", {}, "Faults in force"),
      table([["id", (x) => x.id, "num"], ["filter", (x) => x.filter], ["action", (x) => x.action], ["left", (x) => x.remaining, "num"], ["hits", (x) => x.hits, "num"]], t.faults || [], "faults"),
      (t.nodes || []).length > 1 ? table([["node", (x) => x.name], ["port", (x) => x.port, "num"], ["up", (x) => (x.up ? "up" : "down")]], t.nodes, "nodes") : null,
      h("h2", {}, "Direct Get responder log (newest last)"),
      table([["request", (x) => x.subject], ["answered by", (x) => x.stream], ["peer", (x) => x.peer], ["for", (x) => x.answers_for]], t.answers || [], "answers"));
  };
  const sections = ACTIONS.map(([group, actions]) => h("section", {}, h("h2", {}, group), actions.map(([m, title, fields]) => actionForm(m, title, fields, s.enabled, fill))));
  show(h("h1", {}, "Control plane"),
    s.enabled ? h("p", {}, "Each button sends one control-plane request; the line under it is the same request over NATS, for a test.")
      : h("p", { class: "notice", "data-test": "control-off" }, s.message),
    state, ...sections);
  if (s.enabled) await fill();
  else put(state);
}

// --- routing ----------------------------------------------------------------------------

async function route() {
  if (stopTail) stopTail();
  clearTimeout(refresher);
  const [path, query] = location.hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(query || "");
  const parts = (path || "/").split("/").filter(Boolean).map(decodeURIComponent);
  for (const a of document.querySelectorAll("header nav a")) a.classList.toggle("active", a.getAttribute("href") === "#/" + (parts[0] || ""));
  try {
    if (!parts.length) await overview();
    else if (parts[0] === "connections") await connections();
    else if (parts[0] === "streams" && parts.length === 1) await streams();
    else if (parts[0] === "streams") await stream(parts[1], params);
    else if (parts[0] === "consumers") await consumer(parts[1], parts[2]);
    else if (parts[0] === "buckets") await buckets();
    else if (parts[0] === "kv") await kv(parts[1], params);
    else if (parts[0] === "objects") await objects(parts[1]);
    else if (parts[0] === "tail") tail(params);
    else if (parts[0] === "control") await control();
    else show(h("p", {}, "No such page."));
    document.body.dataset.page = parts[0] || "overview";
  } catch (e) { fail(e); }
  refreshClock();
}

async function accounts() {
  const o = await api("overview");
  const select = document.getElementById("account");
  if (o.accounts.length < 2) return;
  if (!o.accounts.includes(account)) account = o.accounts[0];
  put(select, o.accounts.map((name) => h("option", { value: name, selected: name === account }, name)));
  select.hidden = false;
  select.addEventListener("change", () => { account = select.value; sessionStorage.setItem("jsemu-account", account); route(); });
}

window.addEventListener("hashchange", route);
accounts().catch(() => {}).finally(route);
