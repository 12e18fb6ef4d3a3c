// ldm_check.mjs <nats-url> <lame-duck-port>
//
// Connects nats.js v3 (@nats-io/transport-node) to the node listening on <lame-duck-port>
// of a cluster (<nats-url> is that node's URL) and prints ONE JSON object once it has
// reconnected elsewhere after that node's lame duck mode: {connected, events, ldmServer,
// reconnectedPort, received, error}. `events` are the status types in order (ldm, disconnect,
// reconnect; "update", "ping", "reconnecting" and the like left out). tests/clients/
// test_lame_duck_clients.py sends the node SIGUSR2 once this script prints "ready" on stderr.
//
// Exit status: 0 after printing; 2 when nothing is finished after 20 s.

import { connect } from "@nats-io/transport-node";

const [url, ldmPort] = process.argv.slice(2);
const watchdog = setTimeout(() => {
  console.error("ldm_check: not finished after 20 s");
  process.exit(2);
}, 20000);

const out = { connected: false, events: [], ldmServer: null, reconnectedPort: null, received: null, error: null };
try {
  const nc = await connect({ servers: url, reconnectTimeWait: 100, maxReconnectAttempts: -1, timeout: 5000 });
  out.connected = true;
  const done = (async () => {
    for await (const s of nc.status()) {
      if (!["ldm", "disconnect", "reconnect"].includes(s.type)) continue;
      out.events.push(s.type);
      if (s.type === "ldm") out.ldmServer = s.server;
      if (s.type === "reconnect") return;
    }
  })();
  await nc.flush();
  console.error("ready");
  await done;
  out.reconnectedPort = Number(new URL(`nats://${nc.getServer()}`).port);
  const sub = nc.subscribe("after", { max: 1 });
  nc.publish("after", "moved");
  for await (const m of sub) out.received = m.string();
  if (out.reconnectedPort === Number(ldmPort)) out.error = "reconnected to the lame duck node";
  await nc.close();
} catch (err) {
  out.error = String(err?.message ?? err).split("\n")[0];
}
console.log(JSON.stringify(out));
clearTimeout(watchdog);
