// session_check.mjs <nats-url> <stream>
//
// A small nats.js v3 application whose session tests/clients/test_sessions_nats_js.py records
// through `jsemu record`'s proxy against nats-server and replays against jsemu: core publish and
// subscribe, a stream with allow_direct, a Direct Get batch (jsm.direct.getBatch), a KV bucket
// (put, get) and a durable pull consumer (fetch, ack). Each step waits for the one before, so
// the session's order does not depend on timing. Prints {"ok": true} (exit 0), or the failure
// on stderr (exit 2).

import { connect } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";

const [url, name] = process.argv.slice(2);
const watchdog = setTimeout(() => {
  console.error("session_check: not finished after 30 s");
  process.exit(2);
}, 30000);

try {
  const nc = await connect({ servers: url, timeout: 5000 });
  const sub = nc.subscribe("greet.*", { max: 2 });
  nc.publish("greet.a", "hello");
  nc.publish("greet.b", "world");
  for await (const m of sub) void m;
  const jsm = await jetstreamManager(nc, { timeout: 2000 });
  await jsm.streams.add({ name, subjects: [`${name.toLowerCase()}.>`], allow_direct: true });
  const js = jetstream(nc, { timeout: 2000 });
  for (let i = 0; i < 4; i++) await js.publish(`${name.toLowerCase()}.${i % 2}`, `m${i}`);
  const batch = [];
  for await (const m of await jsm.direct.getBatch(name, { seq: 2, batch: 2 })) batch.push(m.seq);
  if (batch.join() !== "2,3") throw new Error(`batch ${batch}`);
  const kv = await new Kvm(nc).create(`${name}_KV`);
  await kv.put("colour", "blue");
  const e = await kv.get("colour");
  if (e?.string() !== "blue") throw new Error("kv get");
  await jsm.consumers.add(name, { durable_name: "work", ack_policy: AckPolicy.Explicit });
  const c = await js.consumers.get(name, "work");
  const fetched = await c.fetch({ max_messages: 2, expires: 2000 });
  for await (const m of fetched) await m.ackAck();
  await nc.close();
  console.log(JSON.stringify({ ok: true }));
  clearTimeout(watchdog);
} catch (err) {
  console.error(`session_check: ${err?.stack ?? err}`);
  process.exit(2);
}
