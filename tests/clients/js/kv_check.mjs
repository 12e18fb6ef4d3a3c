// kv_check.mjs <nats-url> <bucket> [direct]
//
// Drives nats.js v3 (@nats-io/transport-node, @nats-io/jetstream, @nats-io/kv) against one
// server and prints ONE JSON object of comparable results (values, revisions, sequences,
// operations, error names/codes/messages; never timestamps) on stdout. The pytest side
// (tests/clients/test_kv_nats_js.py) runs it against nats-server and against jsemu with the
// same arguments and asserts that the two objects are equal.
//
// <bucket> names the KV bucket; the JetStream part uses the stream "S_<bucket>" on the subjects
// "<bucket lowercased>.>", so one unique bucket name keeps a run apart from others on a shared
// server. Everything created is deleted again.
//
// Without "direct" the bucket is created with allow_direct=false, so Kv.get() reads through
// $JS.API.STREAM.MSG.GET; with "direct" it reads through $JS.API.DIRECT.GET (needs Direct Get).
// The JetStream part always reads with jsm.streams.getMessage (STREAM.MSG.GET).
//
// Exit status: 0 after printing the results; 2 (message on stderr) when a step that must
// succeed fails, or when nothing is finished after 30 s.

import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";

const [url, bucket, mode = ""] = process.argv.slice(2);
if (!url || !bucket || !["", "direct", "msg-get"].includes(mode)) {
  console.error("usage: node kv_check.mjs <nats-url> <bucket> [direct|msg-get]");
  process.exit(64);
}
const direct = mode === "direct";
const TIMEOUT = 2000; // ms for every request: the servers are local

const watchdog = setTimeout(() => {
  console.error("kv_check: not finished after 30 s");
  process.exit(2);
}, 30000);

const TD = new TextDecoder();
const out = {};

class StepFailed extends Error {}

function describeError(err) {
  const e = { name: err?.name ?? typeof err, message: err?.message ?? String(err) };
  if (typeof err?.code === "number" || typeof err?.code === "string") e.code = err.code;
  if (typeof err?.status === "number") e.status = err.status;
  if (typeof err?.apiError === "function") e.api = err.apiError();
  return e;
}

/** A step that must succeed; returns its result. */
async function must(label, fn) {
  try {
    return await fn();
  } catch (err) {
    throw new StepFailed(`step "${label}" failed: ${err?.stack ?? err}`);
  }
}

/** A step that must succeed: its (JSON-able) result is recorded under `label`. */
async function ok(label, fn) {
  const v = await must(label, fn);
  out[label] = v === undefined ? null : v;
  return v;
}

/** A step that must fail: its error is recorded under `label` (a success is recorded too). */
async function fails(label, fn) {
  try {
    const v = await fn();
    out[label] = { unexpected_success: v === undefined ? null : v };
  } catch (err) {
    out[label] = { error: describeError(err) };
  }
}

function hdrs(h) {
  if (!h) return null;
  const o = {};
  for (const k of h.keys()) {
    if (k === "Nats-Time-Stamp") continue; // a timestamp
    o[k] = h.values(k);
  }
  return Object.keys(o).length ? o : null;
}

function kvEntry(e) {
  if (e === null) return null;
  return {
    bucket: e.bucket,
    key: e.key,
    value: TD.decode(e.value),
    revision: e.revision,
    operation: e.operation,
    length: e.length,
    delta: e.delta,
    created_is_date: e.created instanceof Date && !Number.isNaN(e.created.getTime()),
  };
}

function storedMsg(m) {
  if (m === null) return null;
  return {
    subject: m.subject,
    seq: m.seq,
    data: TD.decode(m.data),
    headers: hdrs(m.header),
    time_is_date: m.time instanceof Date && !Number.isNaN(m.time.getTime()),
  };
}

const CONFIG_KEYS = [
  "name", "description", "subjects", "retention", "max_consumers", "max_msgs", "max_bytes", "max_age",
  "max_msgs_per_subject", "max_msg_size", "discard", "storage", "num_replicas", "duplicate_window",
  "compression", "allow_direct", "mirror_direct", "sealed", "deny_delete", "deny_purge",
  "allow_rollup_hdrs", "allow_msg_ttl", "consumer_limits", "metadata",
];

function config(c) {
  const o = {};
  for (const k of CONFIG_KEYS) o[k] = c[k] === undefined ? "<absent>" : c[k];
  return o;
}

function state(s) {
  const { messages, bytes, first_seq, last_seq, num_deleted, num_subjects, consumer_count } = s;
  return { messages, bytes, first_seq, last_seq, num_deleted, num_subjects, consumer_count };
}

function info(si) {
  return {
    config: config(si.config),
    state: state(si.state),
    did_create: si.did_create,
    has_created: typeof si.created === "string",
    has_leader: typeof si.cluster?.leader === "string",
  };
}

function kvStatus(s) {
  return {
    bucket: s.bucket,
    values: s.values,
    history: s.history,
    ttl: s.ttl,
    storage: s.storage,
    backingStore: s.backingStore,
    replicas: s.replicas,
    description: s.description,
    maxValueSize: s.maxValueSize,
    max_bytes: s.max_bytes,
    size: s.size,
    compression: s.compression,
    metadata: s.metadata,
    stream: info(s.streamInfo),
  };
}

function ack(pa) {
  return { stream: pa.stream, seq: pa.seq, duplicate: pa.duplicate, domain: pa.domain ?? null };
}

async function kvPart(nc) {
  const js = jetstream(nc, { timeout: TIMEOUT });
  const kvm = new Kvm(js);
  const kv = await must("kv.create", () =>
    kvm.create(bucket, { history: 3, allow_direct: direct, description: "kv check", timeout: TIMEOUT }));
  out["kv.create"] = { direct: kv.direct, stream: kv.stream, prefix: kv.prefix };
  await ok("kv.status.initial", async () => kvStatus(await kv.status()));

  await ok("kv.put.k1", () => kv.put("k", "v1"));
  await ok("kv.get.k1", async () => kvEntry(await kv.get("k")));
  await ok("kv.put.k2", () => kv.put("k", "v2"));
  await ok("kv.get.k.rev1", async () => kvEntry(await kv.get("k", { revision: 1 })));
  await ok("kv.put.nested", () => kv.put("a.b.c", "nested"));
  await ok("kv.get.nested", async () => kvEntry(await kv.get("a.b.c")));

  await ok("kv.create.n", () => kv.create("n", "n1"));
  await fails("kv.create.n.again", () => kv.create("n", "n2"));
  const nRev = out["kv.create.n"];
  await ok("kv.update.n", () => kv.update("n", "n2", nRev));
  await fails("kv.update.n.stale", () => kv.update("n", "n3", nRev));
  await fails("kv.update.missing", () => kv.update("missing", "x", 1));
  await ok("kv.get.n", async () => kvEntry(await kv.get("n")));

  await ok("kv.get.missing", async () => kvEntry(await kv.get("missing")));
  await ok("kv.get.k.at.rev.of.n", async () => kvEntry(await kv.get("k", { revision: nRev })));
  await ok("kv.get.rev.99", async () => kvEntry(await kv.get("k", { revision: 99 })));
  await fails("kv.put.invalid.key", () => kv.put("bad key", "x"));

  await ok("kv.delete.k", () => kv.delete("k"));
  await ok("kv.get.k.deleted", async () => kvEntry(await kv.get("k")));
  await ok("kv.create.k.after.delete", () => kv.create("k", "v3"));
  await ok("kv.get.k.recreated", async () => kvEntry(await kv.get("k")));
  await fails("kv.delete.k.wrong.previous", () => kv.delete("k", { previousSeq: 1 }));
  await ok("kv.delete.k.previous", () => kv.delete("k", { previousSeq: out["kv.create.k.after.delete"] }));

  // history 3: five revisions of h, only the last three stay.
  const hRevs = await ok("kv.put.h", async () => {
    const r = [];
    for (let i = 0; i < 5; i++) r.push(await kv.put("h", `h${i}`));
    return r;
  });
  await ok("kv.get.h.revisions", async () => {
    const r = [];
    for (const rev of hRevs) r.push(kvEntry(await kv.get("h", { revision: rev })));
    return r;
  });
  await ok("kv.status.after.history", async () => kvStatus(await kv.status()));

  await ok("kv.purge.h", () => kv.purge("h"));
  await ok("kv.get.h.purged", async () => kvEntry(await kv.get("h")));
  await ok("kv.get.h.old", async () => kvEntry(await kv.get("h", { revision: hRevs[4] })));
  await ok("kv.status.after.purge", async () => kvStatus(await kv.status()));

  // Update the bucket (nats.js has no KV update: through the stream).
  const jsm = await must("jetstreamManager", () => jetstreamManager(nc, { timeout: TIMEOUT }));
  await ok("kv.update.bucket", async () => {
    const si = await jsm.streams.update(`KV_${bucket}`, { max_msgs_per_subject: 5, description: "more history" });
    return info(si);
  });
  const opened = await must("kv.open", () => kvm.open(bucket));
  out["kv.open"] = { direct: opened.direct, stream: opened.stream };
  const more = await ok("kv.put.m", async () => {
    const r = [];
    for (let i = 0; i < 6; i++) r.push(await opened.put("m", `m${i}`));
    return r;
  });
  await ok("kv.get.m.revisions", async () => {
    const r = [];
    for (const rev of more) r.push(kvEntry(await opened.get("m", { revision: rev })));
    return r;
  });
  // open() only binds: it does not look at the stream, so the handle reads with STREAM.MSG.GET
  // unless told allow_direct; the handle from create() keeps its mode.
  await ok("kv.get.m.latest", async () => kvEntry(await kv.get("m")));
  await ok("kv.status.updated", async () => kvStatus(await opened.status()));
  await ok("kv.list", async () => {
    const r = [];
    for await (const s of kvm.list()) if (s.bucket === bucket) r.push({ bucket: s.bucket, values: s.values, history: s.history });
    return r;
  });

  await ok("kv.destroy", () => kv.destroy());
  await fails("kv.status.destroyed", async () => kvStatus(await kv.status()));
  await fails("kv.get.destroyed", async () => kvEntry(await kv.get("n")));
}

async function jsPart(nc) {
  const js = jetstream(nc, { timeout: TIMEOUT });
  const jsm = await must("jetstreamManager", () => jetstreamManager(nc, { timeout: TIMEOUT }));
  const name = `S_${bucket}`;
  const root = bucket.toLowerCase();
  const [a, b, c] = [`${root}.a`, `${root}.b`, `${root}.c`];

  await ok("js.add", async () => info(await jsm.streams.add({ name, subjects: [`${root}.>`], duplicate_window: 60e9 })));
  await ok("js.add.same", async () => info(await jsm.streams.add({ name, subjects: [`${root}.>`], duplicate_window: 60e9 })));
  await fails("js.add.different", () => jsm.streams.add({ name, subjects: [a] }));
  await fails("js.add.overlap", () => jsm.streams.add({ name: `${name}_2`, subjects: [b] }));
  await ok("js.info", async () => info(await jsm.streams.info(name)));
  await fails("js.info.missing", () => jsm.streams.info(`${name}_missing`));

  await ok("js.publish.plain", async () => ack(await js.publish(a, "one")));
  await ok("js.publish.msgid", async () => ack(await js.publish(b, "two", { msgID: "id-1" })));
  await ok("js.publish.msgid.dup", async () => ack(await js.publish(b, "two again", { msgID: "id-1" })));
  await fails("js.publish.expect.last.seq.wrong", () => js.publish(a, "x", { expect: { lastSequence: 1 } }));
  await ok("js.publish.expect.last.seq", async () => ack(await js.publish(a, "three", { expect: { lastSequence: 2 } })));
  await fails("js.publish.expect.stream.wrong", () => js.publish(a, "x", { expect: { streamName: "OTHER" } }));
  await ok("js.publish.expect.stream", async () => ack(await js.publish(c, "four", { expect: { streamName: name } })));
  await fails("js.publish.expect.last.msgid.wrong", () => js.publish(a, "x", { expect: { lastMsgID: "nope" } }));
  await ok("js.publish.msgid.2", async () => ack(await js.publish(a, "five", { msgID: "id-2" })));
  await ok("js.publish.expect.last.msgid", async () =>
    ack(await js.publish(a, "six", { msgID: "id-3", expect: { lastMsgID: "id-2" } })));
  await fails("js.publish.expect.subject.seq.wrong", () => js.publish(b, "x", { expect: { lastSubjectSequence: 1 } }));
  await ok("js.publish.expect.subject.seq", async () =>
    ack(await js.publish(b, "seven", { expect: { lastSubjectSequence: 2 } })));
  await ok("js.publish.expect.subject.seq.0", async () =>
    ack(await js.publish(`${root}.new`, "eight", { expect: { lastSubjectSequence: 0 } })));
  await fails("js.publish.no.stream", () => js.publish(`${root}`, "nobody"));
  await ok("js.info.after.publish", async () => info(await jsm.streams.info(name)));

  await ok("js.get.seq.1", async () => storedMsg(await jsm.streams.getMessage(name, { seq: 1 })));
  await ok("js.get.seq.2", async () => storedMsg(await jsm.streams.getMessage(name, { seq: 2 })));
  await ok("js.get.last.b", async () => storedMsg(await jsm.streams.getMessage(name, { last_by_subj: b })));
  await ok("js.get.next.a", async () => storedMsg(await jsm.streams.getMessage(name, { seq: 2, next_by_subj: a })));
  await ok("js.get.missing.seq", async () => storedMsg(await jsm.streams.getMessage(name, { seq: 99 })));
  await ok("js.get.missing.subject", async () =>
    storedMsg(await jsm.streams.getMessage(name, { last_by_subj: `${root}.zz` })));
  await fails("js.get.missing.stream", () => jsm.streams.getMessage(`${name}_missing`, { seq: 1 }));

  await ok("js.delete.msg.3", () => jsm.streams.deleteMessage(name, 3));
  await ok("js.get.deleted", async () => storedMsg(await jsm.streams.getMessage(name, { seq: 3 })));
  await fails("js.delete.msg.3.again", () => jsm.streams.deleteMessage(name, 3));
  await ok("js.find", () => jsm.streams.find(`${root}.x.y`));
  await fails("js.find.none", () => jsm.streams.find(`nothing.${root}`));
  await ok("js.names", async () => {
    const r = [];
    for await (const n of jsm.streams.names()) if (n === name) r.push(n);
    return r;
  });

  await ok("js.purge.filter.keep", () => jsm.streams.purge(name, { filter: a, keep: 1 }));
  await ok("js.purge.seq", () => jsm.streams.purge(name, { seq: 6 }));
  await ok("js.info.after.purges", async () => info(await jsm.streams.info(name)));
  await ok("js.purge.all", () => jsm.streams.purge(name));
  await ok("js.publish.after.purge", async () => ack(await js.publish(c, "after")));

  await ok("js.update", async () =>
    info(await jsm.streams.update(name, { subjects: [`${root}.>`, `${root}x`], description: "updated", max_msgs: 10 })));
  await fails("js.update.storage", () => jsm.streams.update(name, { storage: "memory" }));
  await ok("js.info.after.update", async () => info(await jsm.streams.info(name)));

  await ok("js.delete", () => jsm.streams.delete(name));
  await fails("js.delete.again", () => jsm.streams.delete(name));
}

let nc;
try {
  nc = await must("connect", () => connect({ servers: url, timeout: 5000, maxReconnectAttempts: 0 }));
  await kvPart(nc);
  await jsPart(nc);
  process.stdout.write(JSON.stringify(out) + "\n");
  await nc.close();
  clearTimeout(watchdog);
} catch (err) {
  console.error(err instanceof StepFailed ? err.message : `kv_check failed: ${err?.stack ?? err}`);
  console.error(`results so far: ${JSON.stringify(out)}`);
  process.exit(2);
}
