// direct_check.mjs <nats-url> <stream> <file|memory>
//
// Drives the Direct Get API of nats.js v3 (@nats-io/jetstream: jsm.direct.getMessage,
// jsm.direct.getBatch, jsm.direct.getLastMessagesFor) against one server and prints ONE JSON
// object of comparable results on stdout: subjects, sequences, payloads, headers (without
// Nats-Time-Stamp), pending counts, last sequences, error names/codes. Timestamps are never
// printed; instead every message read through Direct Get records "ts_ok": whether its
// Nats-Time-Stamp equals, as a string, the "time" STREAM.MSG.GET (jsm.streams.getMessage)
// reports for the same sequence. The pytest side (tests/clients/test_direct_nats_js.py) runs it
// against nats-server and against jsemu with the same arguments and asserts that the two objects
// are equal.
//
// <stream> names the stream (allow_direct: true, storage <file|memory>) on the subjects
// "<stream lowercased>.>"; "<stream>_ND" (allow_direct: false) and "<stream>_NONE" (never
// created) are the error cases. Everything created is deleted again.
//
// Start times: the messages are published in two groups 50 ms apart; requests use the exact
// Nats-Time-Stamp string of a message (nanoseconds, passed through as is) or a Date in the gap
// between the groups (nats.js sends a Date as toISOString(), milliseconds), so that the results
// do not depend on timing.
//
// Exit status: 0 after printing the results; 2 (message on stderr) when a step that must
// succeed fails, or when nothing is finished after 30 s.

import { connect, headers } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

const [url, name, storage] = process.argv.slice(2);
if (!url || !name || !["file", "memory"].includes(storage)) {
  console.error("usage: node direct_check.mjs <nats-url> <stream> <file|memory>");
  process.exit(64);
}
const TIMEOUT = 2000; // ms for every request: the servers are local
const GAP = 50; // ms between the two groups of messages

const watchdog = setTimeout(() => {
  console.error("direct_check: not finished after 30 s");
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

/** A step that may fail: its result, or its error, is recorded under `label`. */
async function either(label, fn) {
  try {
    const v = await fn();
    out[label] = { ok: v === undefined ? null : v };
  } catch (err) {
    out[label] = { error: describeError(err) };
  }
}

function hdrs(h) {
  if (!h) return null;
  const o = {};
  for (const k of h.keys()) {
    if (k === "Nats-Time-Stamp") continue; // a timestamp: checked through ts_ok
    o[k] = h.values(k);
  }
  return Object.keys(o).length ? o : null;
}

let jsm;
/** seq -> the "time" string STREAM.MSG.GET reports. */
const storedTimes = new Map();

async function storedTime(seq) {
  if (!storedTimes.has(seq)) {
    const m = await jsm.streams.getMessage(name, { seq });
    storedTimes.set(seq, m === null ? null : m.timestamp);
  }
  return storedTimes.get(seq);
}

/** A message read through Direct Get, as comparable JSON. */
async function directMsg(m) {
  if (m === null) return null;
  const ts = m.timestamp;
  return {
    stream: m.stream,
    subject: m.subject,
    seq: m.seq,
    data: TD.decode(m.data),
    headers: hdrs(m.header),
    pending: m.pending,
    lastSequence: m.lastSequence,
    has_ts: typeof ts === "string" && ts.length > 0,
    ts_ok: typeof ts === "string" && ts === (await storedTime(m.seq)),
  };
}

/** Drain the iterator of a batch request: the messages, and how it ended. */
async function drain(iter) {
  const msgs = [];
  let end = "done";
  try {
    for await (const m of iter) msgs.push(await directMsg(m));
  } catch (err) {
    end = { error: describeError(err) };
  }
  return { msgs, end };
}

function ack(pa) {
  return { stream: pa.stream, seq: pa.seq, duplicate: pa.duplicate, domain: pa.domain ?? null };
}

function state(s) {
  const { messages, bytes, first_seq, last_seq, num_deleted, num_subjects } = s;
  return { messages, bytes, first_seq, last_seq, num_deleted, num_subjects };
}

function hdr(pairs) {
  const h = headers();
  for (const [k, v] of pairs) h.append(k, v);
  return h;
}

async function run(nc) {
  const js = jetstream(nc, { timeout: TIMEOUT });
  jsm = await must("jetstreamManager", () => jetstreamManager(nc, { timeout: TIMEOUT }));
  const root = name.toLowerCase();
  const s = (t) => `${root}.${t}`;
  const nd = `${name}_ND`;

  await ok("add", async () => {
    const si = await jsm.streams.add({ name, subjects: [`${root}.>`], storage, allow_direct: true });
    return { allow_direct: si.config.allow_direct, storage: si.config.storage };
  });
  await ok("add.nd", async () => {
    const si = await jsm.streams.add({ name: nd, subjects: [`${root}nd.>`], storage });
    return { allow_direct: si.config.allow_direct };
  });
  await ok("nd.publish", async () => ack(await js.publish(`${root}nd.a`, "nd")));

  // Group 1: seqs 1-7.
  const big = "x".repeat(100);
  const group1 = [
    [s("a"), "a1"],
    [s("b"), "b1", [["X-H", "1"], ["X-Multi", "x"], ["X-Multi", "y"]]],
    [s("c.x"), ""],
    [s("a"), `a2-${big}`],
    [s("b"), "", [["X-H", "2"]]],
    [s("c.y"), "c-y"],
    [s("del"), "to delete"],
  ];
  // Group 2: seqs 8-12, GAP ms later.
  const group2 = [
    [s("a"), "a3"],
    [s("c.x"), `cx2-${big}`],
    [s("b"), "b3", [["X-H", "3"]]],
    [s("d"), "d"],
    [s("a"), ""],
  ];
  const acks = [];
  await ok("publish", async () => {
    for (const [subj, data, h] of group1) acks.push(ack(await js.publish(subj, data, h ? { headers: hdr(h) } : {})));
    await new Promise((r) => setTimeout(r, GAP));
    for (const [subj, data, h] of group2) acks.push(ack(await js.publish(subj, data, h ? { headers: hdr(h) } : {})));
    return acks;
  });
  await ok("delete.4", () => jsm.streams.deleteMessage(name, 4));
  await ok("delete.7", () => jsm.streams.deleteMessage(name, 7));
  await ok("info", async () => state((await jsm.streams.info(name)).state));

  const ts8 = await must("stored.time.8", () => storedTime(8));
  const ts6 = await must("stored.time.6", () => storedTime(6));
  const t1 = new Date(Date.parse(ts6));
  const t8 = new Date(Date.parse(ts8));
  // A Date in the gap between the groups (both sides round the same way: it is only ms).
  const gapDate = new Date(Math.floor((t1.getTime() + t8.getTime()) / 2));
  out["gap.ok"] = t8.getTime() - t1.getTime() >= GAP / 2;
  const d = jsm.direct;

  // --- getMessage -------------------------------------------------------------------------
  for (const seq of [1, 2, 3, 4, 5, 7, 10, 12, 13, 99]) {
    await either(`get.seq.${seq}`, async () => directMsg(await d.getMessage(name, { seq })));
  }
  for (const t of ["a", "b", "c.x", "c.*", "c.>", "del", "none"]) {
    await either(`get.last.${t}`, async () => directMsg(await d.getMessage(name, { last_by_subj: s(t) })));
  }
  await either("get.last.all", async () => directMsg(await d.getMessage(name, { last_by_subj: `${root}.>` })));
  for (const [t, seq] of [["a", 2], ["a", 0], ["a", 1], ["a", 9], ["a", 13], ["c.*", 4], ["c.>", 7], ["b", 11],
    ["del", 1], ["none", 1], [">", 6]]) {
    await either(`get.next.${t}.${seq}`, async () =>
      directMsg(await d.getMessage(name, seq ? { seq, next_by_subj: s(t) } : { next_by_subj: s(t) })));
  }
  await either("get.start_time.ts8", async () => directMsg(await d.getMessage(name, { start_time: ts8 })));
  await either("get.start_time.ts6", async () => directMsg(await d.getMessage(name, { start_time: ts6 })));
  await either("get.start_time.gap.date", async () => directMsg(await d.getMessage(name, { start_time: gapDate })));
  await either("get.start_time.past", async () =>
    directMsg(await d.getMessage(name, { start_time: "2001-01-01T00:00:00Z" })));
  await either("get.start_time.future", async () =>
    directMsg(await d.getMessage(name, { start_time: new Date(Date.now() + 3600e3) })));
  await either("get.seq.0", async () => directMsg(await d.getMessage(name, { seq: 0 })));
  await either("get.seq.and.start_time", async () =>
    directMsg(await d.getMessage(name, { seq: 2, start_time: ts8 })));

  // --- getBatch -----------------------------------------------------------------------------
  const batch = async (label, opts) => either(label, async () => drain(await d.getBatch(name, opts)));
  await batch("batch.seq1.3", { seq: 1, batch: 3 });
  await batch("batch.seq1.default", { seq: 1 });
  await batch("batch.seq3.2", { seq: 3, batch: 2 });
  await batch("batch.seq12.5", { seq: 12, batch: 5 });
  await batch("batch.seq99.2", { seq: 99, batch: 2 });
  for (const mb of [1, 50, 150, 200, 1000]) await batch(`batch.max_bytes.${mb}`, { seq: 1, max_bytes: mb });
  await batch("batch.max_bytes.200.batch.2", { seq: 1, max_bytes: 200, batch: 2 });
  await batch("batch.next.a.2", { seq: 1, batch: 2, next_by_subj: s("a") });
  await batch("batch.next.a.all", { seq: 1, next_by_subj: s("a") });
  await batch("batch.next.c.>.from5", { seq: 5, batch: 10, next_by_subj: s("c.>") });
  await batch("batch.next.b.from11", { seq: 11, batch: 10, next_by_subj: s("b") });
  await batch("batch.next.none", { seq: 1, batch: 10, next_by_subj: s("none") });
  await batch("batch.start_time.ts8.2", { start_time: ts8, batch: 2 });
  await batch("batch.start_time.gap.date", { start_time: gapDate, batch: 10 });
  await batch("batch.start_time.ts6.next.a", { start_time: ts6, batch: 10, next_by_subj: s("a") });
  await batch("batch.start_time.future", { start_time: new Date(Date.now() + 3600e3), batch: 10 });
  await batch("batch.seq.and.start_time", { seq: 1, start_time: ts8, batch: 2 });

  // Paging the way a client walks a stream: next page from the last sequence seen + 1.
  await either("batch.paging", async () => {
    const pages = [];
    let seq = 1;
    for (let i = 0; i < 6; i++) {
      const page = await drain(await d.getBatch(name, { seq, batch: 3 }));
      pages.push({ seq, seqs: page.msgs.map((m) => m.seq), pending: page.msgs.map((m) => m.pending),
        last: page.msgs.map((m) => m.lastSequence), end: page.end });
      if (page.msgs.length === 0) break;
      seq = page.msgs[page.msgs.length - 1].seq + 1;
    }
    return pages;
  });
  await either("batch.paging.max_bytes", async () => {
    const pages = [];
    let seq = 1;
    for (let i = 0; i < 12; i++) {
      const page = await drain(await d.getBatch(name, { seq, max_bytes: 120 }));
      pages.push({ seq, seqs: page.msgs.map((m) => m.seq), pending: page.msgs.map((m) => m.pending),
        end: page.end });
      if (page.msgs.length === 0) break;
      seq = page.msgs[page.msgs.length - 1].seq + 1;
    }
    return pages;
  });

  // --- getLastMessagesFor ------------------------------------------------------------------
  const last = async (label, opts) => either(label, async () => drain(await d.getLastMessagesFor(name, opts)));
  await last("multi.all", { multi_last: [`${root}.>`] });
  await last("multi.a.b", { multi_last: [s("a"), s("b")] });
  await last("multi.b.a", { multi_last: [s("b"), s("a")] });
  await last("multi.c.*", { multi_last: [s("c.*")] });
  await last("multi.overlap", { multi_last: [s("c.*"), s("c.x"), s("*")] });
  await last("multi.del", { multi_last: [s("del")] });
  await last("multi.none", { multi_last: [s("none")] });
  await last("multi.none.and.a", { multi_last: [s("none"), s("a")] });
  await last("multi.all.batch.2", { multi_last: [`${root}.>`], batch: 2 });
  await last("multi.all.max_bytes.150", { multi_last: [`${root}.>`], max_bytes: 150 });
  for (const seq of [1, 3, 6, 7, 9, 12, 50]) {
    await last(`multi.all.up_to_seq.${seq}`, { multi_last: [`${root}.>`], up_to_seq: seq });
  }
  await last("multi.a.up_to_seq.5", { multi_last: [s("a")], up_to_seq: 5 });
  await last("multi.all.up_to_time.ts8", { multi_last: [`${root}.>`], up_to_time: ts8 });
  await last("multi.all.up_to_time.ts6", { multi_last: [`${root}.>`], up_to_time: ts6 });
  await last("multi.all.up_to_time.gap.date", { multi_last: [`${root}.>`], up_to_time: gapDate });
  await last("multi.all.up_to_time.past", { multi_last: [`${root}.>`], up_to_time: "2001-01-01T00:00:00Z" });
  await last("multi.all.up_to_time.future", { multi_last: [`${root}.>`], up_to_time: new Date(Date.now() + 3600e3) });
  await last("multi.up_to_seq.and.time", { multi_last: [`${root}.>`], up_to_seq: 3, up_to_time: ts8 });

  // --- errors -------------------------------------------------------------------------------
  await either("err.get.nd", async () => directMsg(await d.getMessage(nd, { seq: 1 })));
  await either("err.get.nd.last", async () => directMsg(await d.getMessage(nd, { last_by_subj: `${root}nd.a` })));
  await either("err.get.unknown", async () => directMsg(await d.getMessage(`${name}_NONE`, { seq: 1 })));
  await either("err.batch.nd", async () => drain(await d.getBatch(nd, { seq: 1, batch: 2 })));
  await either("err.batch.unknown", async () => drain(await d.getBatch(`${name}_NONE`, { seq: 1, batch: 2 })));
  await either("err.multi.nd", async () => drain(await d.getLastMessagesFor(nd, { multi_last: [`${root}nd.>`] })));
  await either("err.get.bad.name", async () => directMsg(await d.getMessage("a.b", { seq: 1 })));

  // After a purge: everything is gone.
  await ok("purge", () => jsm.streams.purge(name));
  await either("after.purge.get.seq.1", async () => directMsg(await d.getMessage(name, { seq: 1 })));
  await either("after.purge.get.last.a", async () => directMsg(await d.getMessage(name, { last_by_subj: s("a") })));
  await batch("after.purge.batch", { seq: 1, batch: 5 });
  await last("after.purge.multi", { multi_last: [`${root}.>`] });
  await ok("after.purge.publish", async () => ack(await js.publish(s("a"), "after")));
  await either("after.purge.get.last.a.new", async () =>
    directMsg(await d.getMessage(name, { last_by_subj: s("a") })));

  await ok("delete", () => jsm.streams.delete(name));
  await ok("delete.nd", () => jsm.streams.delete(nd));
  await either("err.get.deleted.stream", async () => directMsg(await d.getMessage(name, { seq: 1 })));
}

let nc;
try {
  nc = await must("connect", () => connect({ servers: url, timeout: 5000, maxReconnectAttempts: 0 }));
  await run(nc);
  process.stdout.write(JSON.stringify(out) + "\n");
  await nc.close();
  clearTimeout(watchdog);
} catch (err) {
  console.error(err instanceof StepFailed ? err.message : `direct_check failed: ${err?.stack ?? err}`);
  console.error(`results so far: ${JSON.stringify(out)}`);
  process.exit(2);
}
