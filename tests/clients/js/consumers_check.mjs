// consumers_check.mjs <nats-url> <bucket>
//
// nats.js v3 on push/ordered and pull consumers: KV watch (initial values, then live
// updates), KV keys, KV history, and a pull consume() of a stream. Prints ONE JSON object
// of comparable results (keys, values, revisions, operations, sequences; no timestamps);
// tests/clients/test_consumers_nats_js.py runs it against nats-server and against jsemu
// and asserts that the two objects are equal. Exit status 2 when nothing is finished
// after 30 s.

import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";

const [url, bucket] = process.argv.slice(2);
if (!url || !bucket) {
  console.error("usage: node consumers_check.mjs <nats-url> <bucket>");
  process.exit(64);
}
const watchdog = setTimeout(() => {
  console.error("consumers_check: not finished after 30 s");
  process.exit(2);
}, 30000);
const TD = new TextDecoder();
const out = {};
const entry = (e) => ({ key: e.key, value: TD.decode(e.value), revision: e.revision, operation: e.operation });

const nc = await connect({ servers: url });
try {
  const kv = await new Kvm(nc).create(bucket, { history: 5 });
  await kv.put("a", "1");
  await kv.put("b", "2");
  await kv.put("a", "3");
  await kv.delete("b");

  const keys = [];
  for await (const k of await kv.keys()) keys.push(k);
  out["kv.keys"] = keys.sort();

  const hist = [];
  for await (const e of await kv.history({ key: "a" })) hist.push(entry(e));
  out["kv.history.a"] = hist;

  const watched = [];
  const iter = await kv.watch();
  const done = (async () => {
    for await (const e of iter) {
      watched.push(entry(e));
      if (watched.length === 2) {
        await kv.put("c", "4");
        await kv.put("a", "5");
      }
      if (watched.length === 4) break;
    }
  })();
  await done;
  out["kv.watch"] = watched;
  await kv.destroy();

  const jsm = await jetstreamManager(nc);
  const stream = `S_${bucket}`;
  await jsm.streams.add({ name: stream, subjects: [`${bucket.toLowerCase()}.>`] });
  const js = jetstream(nc);
  for (let i = 0; i < 6; i++) await js.publish(`${bucket.toLowerCase()}.${i % 2}`, `m${i}`);
  await jsm.consumers.add(stream, { durable_name: "work", ack_policy: AckPolicy.Explicit });
  const c = await js.consumers.get(stream, "work");
  const consumed = [];
  const msgs = await c.consume({ max_messages: 4 });
  for await (const m of msgs) {
    consumed.push({ subject: m.subject.split(".")[1], data: TD.decode(m.data), seq: m.seq, pending: m.info.pending });
    m.ack();
    if (consumed.length === 6) break;
  }
  out["js.consume"] = consumed;
  const info = await c.info();
  out["js.consume.info"] = { delivered: info.delivered.stream_seq, pending: info.num_pending };
  await jsm.streams.delete(stream);
} catch (err) {
  console.error(`consumers_check failed: ${err && err.stack ? err.stack : err}`);
  process.exit(2);
} finally {
  clearTimeout(watchdog);
}
await nc.close();
console.log(JSON.stringify(out));
