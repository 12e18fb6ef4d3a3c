// ws_check.mjs <ws-url> <name>
//
// nats.js v3 over WebSocket (wsconnect of @nats-io/nats-core, the transport browsers use; Node 20
// needs --experimental-websocket for its global WebSocket, Node 22+ has it) against one server:
// publish/subscribe, request/reply, headers, a 2 MB payload (the server runs with max_payload
// 4 MB), KV put/get/watch and a pull consumer. Prints ONE JSON object of comparable results (no
// timestamps, no server ids) on stdout. tests/clients/test_websocket_nats_js.py runs it against
// nats-server and jsemu, each started with the same `websocket { port: -1, no_tls: true }` block,
// and asserts that the two objects are equal.
//
// <name> keeps a run's subjects, bucket and stream apart (a fresh server per run, but still).
//
// Exit status: 0 after printing the results; 2 (message on stderr) when a step fails, or when
// nothing is finished after 30 s.

import { wsconnect, headers, createInbox } from "@nats-io/nats-core";
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";

const [url, name] = process.argv.slice(2);
if (!url || !name) {
  console.error("usage: node --experimental-websocket ws_check.mjs <ws-url> <name>");
  process.exit(64);
}
if (typeof globalThis.WebSocket !== "function") {
  console.error("ws_check: no global WebSocket (Node 20 needs --experimental-websocket)");
  process.exit(64);
}
const watchdog = setTimeout(() => {
  console.error("ws_check: not finished after 30 s");
  process.exit(2);
}, 30000);

const TD = new TextDecoder();
const TE = new TextEncoder();
const subj = name.toLowerCase();
const out = {};
const errorOf = (err) => ({ name: err?.name ?? typeof err, message: err?.message ?? String(err) });
const headersOf = (h) => (h ? Object.fromEntries([...h.keys()].sort().map((k) => [k, h.values(k)])) : null);
const entry = (e) => ({ key: e.key, value: TD.decode(e.value), revision: e.revision, operation: e.operation });

/** A 32-bit FNV-1a hash: the 2 MB payload is compared by length and hash. */
function fnv1a(bytes) {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/** The next `n` messages of a subscription, as {subject, data, headers}. */
async function take(sub, n) {
  const got = [];
  for await (const m of sub) {
    got.push({ subject: m.subject, data: TD.decode(m.data), headers: headersOf(m.headers) });
    if (got.length === n) break;
  }
  return got;
}

let nc;
try {
  nc = await wsconnect({ servers: url, name: "ws_check" });
  out["info"] = {
    headers: nc.info.headers,
    jetstream: nc.info.jetstream,
    max_payload: nc.info.max_payload,
    proto: nc.info.proto,
    // nats-server's INFO over WebSocket names the WebSocket listener, not the client port.
    host: nc.info.host,
    port_is_ws_port: nc.info.port === Number(new URL(url).port),
  };

  // publish/subscribe: a wildcard subscription, an empty payload, a queue group of one.
  const sub = nc.subscribe(`${subj}.ps.>`);
  const q = nc.subscribe(`${subj}.ps.q`, { queue: "workers" });
  const got = take(sub, 3);
  const gotQ = take(q, 1);
  nc.publish(`${subj}.ps.a`, "one");
  nc.publish(`${subj}.ps.b.c`);
  nc.publish(`${subj}.ps.q`, "three");
  await nc.flush();
  out["pubsub"] = await got;
  out["pubsub.queue"] = await gotQ;

  // request/reply, with headers both ways; no responders.
  const svc = nc.subscribe(`${subj}.svc`, {
    callback: (_err, m) => {
      const h = headers();
      h.set("X-Echo", m.headers?.get("X-Req") ?? "none");
      m.respond(TE.encode(`pong:${TD.decode(m.data)}`), { headers: h });
    },
  });
  const rh = headers();
  rh.set("X-Req", "r1");
  const reply = await nc.request(`${subj}.svc`, "ping", { timeout: 2000, headers: rh });
  out["request"] = { data: TD.decode(reply.data), headers: headersOf(reply.headers) };
  try {
    await nc.request(`${subj}.nobody`, "x", { timeout: 2000 });
    out["request.no_responders"] = "answered";
  } catch (err) {
    out["request.no_responders"] = errorOf(err);
  }
  svc.unsubscribe();

  // headers: multiple values, case kept, on a plain publish.
  const hsub = nc.subscribe(`${subj}.hdr`);
  const hgot = take(hsub, 1);
  const h = headers();
  h.append("X-Multi", "a");
  h.append("X-Multi", "b");
  h.set("Content-Type", "text/plain");
  nc.publish(`${subj}.hdr`, "with headers", { headers: h });
  out["headers"] = await hgot;

  // A 2 MB payload: many WebSocket frames' worth, both ways.
  const big = new Uint8Array(2 * 1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 11)) & 0xff;
  const bsub = nc.subscribe(`${subj}.big`, { max: 1 });
  const bgot = (async () => {
    for await (const m of bsub) return { length: m.data.length, fnv1a: fnv1a(m.data) };
  })();
  nc.publish(`${subj}.big`, big);
  out["big"] = { sent: { length: big.length, fnv1a: fnv1a(big) }, received: await bgot };

  // KV: create, put, get, watch (initial value, then live updates and a delete).
  const kv = await new Kvm(nc).create(`KV${name}`, { history: 3 });
  out["kv.put"] = [await kv.put("k1", "v1"), await kv.put("k1", "v2"), await kv.put("k2", "w1")];
  out["kv.get.k1"] = entry(await kv.get("k1"));
  out["kv.get.missing"] = await kv.get("nope");
  const watched = [];
  const iter = await kv.watch({ key: "k1" });
  for await (const e of iter) {
    watched.push(entry(e));
    if (watched.length === 1) {
      await kv.put("k1", "v3");
      await kv.delete("k1");
    }
    if (watched.length === 3) break;
  }
  out["kv.watch.k1"] = watched;
  out["kv.get.k1.deleted"] = entry(await kv.get("k1"));
  await kv.destroy();

  // A pull consumer: fetch a batch, ack, then next() and the consumer's state.
  const jsm = await jetstreamManager(nc);
  const js = jetstream(nc);
  const stream = `S${name}`;
  await jsm.streams.add({ name: stream, subjects: [`${subj}.js.>`] });
  const acks = [];
  for (let i = 0; i < 5; i++) {
    const pa = await js.publish(`${subj}.js.${i % 2}`, `m${i}`);
    acks.push({ stream: pa.stream, seq: pa.seq, duplicate: pa.duplicate });
  }
  out["js.publish"] = acks;
  await jsm.consumers.add(stream, { durable_name: "pull", ack_policy: AckPolicy.Explicit });
  const c = await js.consumers.get(stream, "pull");
  const fetched = [];
  for await (const m of await c.fetch({ max_messages: 3, expires: 2000 })) {
    fetched.push({ subject: m.subject, data: TD.decode(m.data), seq: m.seq, pending: m.info.pending });
    m.ack();
    if (fetched.length === 3) break;
  }
  out["js.fetch"] = fetched;
  const m = await c.next({ expires: 2000 });
  out["js.next"] = m && { subject: m.subject, data: TD.decode(m.data), seq: m.seq, redelivered: m.redelivered };
  await m?.ackAck();
  const info = await c.info();
  out["js.consumer.info"] = {
    delivered: info.delivered.stream_seq,
    ack_floor: info.ack_floor.stream_seq,
    pending: info.num_pending,
    ack_pending: info.num_ack_pending,
  };
  await jsm.streams.delete(stream);

  // A clean close over WebSocket.
  await nc.close();
  out["closed"] = (await nc.closed()) ?? null;
} catch (err) {
  console.error(`ws_check failed: ${err && err.stack ? err.stack : err}`);
  process.exit(2);
} finally {
  clearTimeout(watchdog);
}
console.log(JSON.stringify(out));
process.exit(0);
