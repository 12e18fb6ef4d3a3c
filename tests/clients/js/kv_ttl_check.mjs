// kv_ttl_check.mjs <nats-url> <bucket>
//
// nats.js v3 (@nats-io/kv) with per-key TTLs and limit markers (markerTTL): prints ONE JSON
// object of comparable results (no timestamps). tests/clients/test_kv_ttl_nats_js.py runs it
// against nats-server and against jsemu and asserts that the two objects are equal. Waits on
// the wall clock (TTLs of one second).

import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";

const [url, bucket] = process.argv.slice(2);
if (!url || !bucket) {
  console.error("usage: node kv_ttl_check.mjs <nats-url> <bucket>");
  process.exit(64);
}
const watchdog = setTimeout(() => {
  console.error("kv_ttl_check: not finished after 30 s");
  process.exit(2);
}, 30000);

const TD = new TextDecoder();
const out = {};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function entry(e) {
  if (e === null) return null;
  return { key: e.key, value: TD.decode(e.value), revision: e.revision, operation: e.operation, length: e.length };
}

async function state(jsm, name) {
  const s = (await jsm.streams.info(name)).state;
  return { messages: s.messages, first_seq: s.first_seq, last_seq: s.last_seq, num_deleted: s.num_deleted ?? 0 };
}

let nc;
try {
  nc = await connect({ servers: url, timeout: 5000, maxReconnectAttempts: 0 });
  const jsm = await jetstreamManager(nc, { timeout: 2000 });
  const kvm = new Kvm(nc);
  const kv = await kvm.create(bucket, { history: 3, markerTTL: 1000 });
  const stream = `KV_${bucket}`;
  const si = await jsm.streams.info(stream);
  out["config"] = {
    allow_msg_ttl: si.config.allow_msg_ttl,
    subject_delete_marker_ttl: si.config.subject_delete_marker_ttl,
    allow_rollup_hdrs: si.config.allow_rollup_hdrs,
  };
  out["status.markerTTL"] = (await kv.status()).markerTTL;
  out["create.k"] = await kv.create("k", "v", "1s");
  out["put.other"] = await kv.put("other", "w");
  out["put.p1"] = await kv.put("p", "1");
  out["purge.p"] = await kv.purge("p", { ttl: "1s" });
  out["get.p.purged"] = entry(await kv.get("p"));

  const seen = [];
  const watcher = await kv.watch();
  (async () => {
    for await (const e of watcher) seen.push(entry(e));
  })();
  out["get.k"] = entry(await kv.get("k"));
  out["state.before"] = await state(jsm, stream);
  await sleep(1700);
  out["get.k.expired"] = entry(await kv.get("k"));
  out["state.markers"] = await state(jsm, stream);
  await sleep(1700);
  out["get.k.gone"] = entry(await kv.get("k"));
  out["state.after"] = await state(jsm, stream);
  out["create.k.again"] = await kv.create("k", "again");
  await sleep(200);
  watcher.stop();
  out["watch"] = seen;
  const keys = [];
  for await (const k of await kv.keys()) keys.push(k);
  out["keys"] = keys.sort();
  await kv.destroy();
  process.stdout.write(JSON.stringify(out) + "\n");
  await nc.close();
  clearTimeout(watchdog);
} catch (err) {
  console.error(`kv_ttl_check failed: ${err?.stack ?? err}`);
  console.error(`results so far: ${JSON.stringify(out)}`);
  process.exit(2);
}
