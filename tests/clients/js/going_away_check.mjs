// going_away_check.mjs <nats-url> <name>
//
// nats.js v3 (@nats-io/jetstream 3.4) when a consumer or its stream goes away while a pull
// waits: next() and fetch() of a durable pull consumer, the notifications of a consume(),
// an ordered consumer's consume() across the deletion of its consumer and next() across
// the deletion of its stream. Prints ONE JSON object of comparable results (errors,
// notification kinds, data, and whether each wait ended early, well before its expiry);
// tests/clients/test_going_away_nats_js.py runs it against nats-server and against jsemu
// and asserts that the two objects are equal. Exit status 2 when nothing is finished
// after 40 s.

import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";

const [url, name] = process.argv.slice(2);
if (!url || !name) {
  console.error("usage: node going_away_check.mjs <nats-url> <name>");
  process.exit(64);
}
const watchdog = setTimeout(() => {
  console.error("going_away_check: not finished after 40 s");
  process.exit(2);
}, 40000);
const TD = new TextDecoder();
const out = {};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const subject = name.toLowerCase();

const nc = await connect({ servers: url });
const jsm = await jetstreamManager(nc);
const js = jetstream(nc);

async function durable(stream) {
  await jsm.consumers.add(stream, { durable_name: "D", ack_policy: AckPolicy.Explicit });
  return await js.consumers.get(stream, "D");
}

async function waitingOn(stream, consumer) {
  for (let i = 0; i < 300; i++) {
    const info = await jsm.consumers.info(stream, consumer);
    if (info.num_waiting > 0) return;
    await sleep(10);
  }
  throw new Error("the pull never waited");
}

// What a pull that waits (expires 10 s) sees when `remove` runs: error name and message, and
// whether it ended within 3 s.
async function waitWhile(pullFn, stream, consumer, remove) {
  const start = Date.now();
  const result = pullFn().then(
    (v) => ({ value: v }),
    (err) => ({ error: `${err.name}: ${err.message}` }),
  );
  await waitingOn(stream, consumer);
  await remove();
  const r = await result;
  r.early = Date.now() - start < 3000;
  return r;
}

try {
  // next() while its consumer is deleted, then while its stream is deleted
  for (const what of ["consumer", "stream"]) {
    const stream = `${name}_next_${what}`;
    await jsm.streams.add({ name: stream, subjects: [`${subject}.next.${what}`] });
    const c = await durable(stream);
    out[`next.${what}`] = await waitWhile(
      async () => {
        const m = await c.next({ expires: 10000 });
        return m === null ? null : TD.decode(m.data);
      },
      stream,
      "D",
      () => (what === "consumer" ? jsm.consumers.delete(stream, "D") : jsm.streams.delete(stream)),
    );
    if (what === "consumer") await jsm.streams.delete(stream);
  }

  // fetch() of three while its consumer is deleted
  {
    const stream = `${name}_fetch`;
    await jsm.streams.add({ name: stream, subjects: [`${subject}.fetch`] });
    const c = await durable(stream);
    out["fetch.consumer"] = await waitWhile(
      async () => {
        const got = [];
        for await (const m of await c.fetch({ max_messages: 3, expires: 10000 })) got.push(TD.decode(m.data));
        return got;
      },
      stream,
      "D",
      () => jsm.consumers.delete(stream, "D"),
    );
    await jsm.streams.delete(stream);
  }

  // consume(): the first three notifications once its consumer is deleted (the 409, then,
  // with 500 ms heartbeats, two missed and a failed consumer info; later ones repeat)
  {
    const stream = `${name}_consume`;
    await jsm.streams.add({ name: stream, subjects: [`${subject}.consume`] });
    const c = await durable(stream);
    const messages = await c.consume({ expires: 1000 });
    const kinds = [];
    (async () => {
      for await (const s of messages.status()) {
        if (s.type === "consumer_deleted") kinds.push(`${s.type} ${s.code} ${s.description}`);
        else if (s.type !== "debug" && s.type !== "next") kinds.push(s.type);
      }
    })();
    (async () => {
      for await (const m of messages) m.ack();
    })();
    await waitingOn(stream, "D");
    await jsm.consumers.delete(stream, "D");
    for (let i = 0; i < 100 && kinds.length < 3; i++) await sleep(50);
    out["consume.notifications"] = kinds.slice(0, 3);
    messages.stop();
    await jsm.streams.delete(stream);
  }

  // an ordered consumer's consume() across the deletion of its consumer
  {
    const stream = `${name}_ordered`;
    await jsm.streams.add({ name: stream, subjects: [`${subject}.ordered`] });
    for (let i = 0; i < 3; i++) await js.publish(`${subject}.ordered`, `m${i}`);
    const oc = await js.consumers.get(stream);
    const messages = await oc.consume({ expires: 2000 });
    const got = [];
    for await (const m of messages) {
      got.push(`${TD.decode(m.data)}@${m.seq}`);
      if (got.length === 3) {
        const names = [];
        for await (const ci of jsm.consumers.list(stream)) names.push(ci.name);
        await jsm.consumers.delete(stream, names[0]);
        for (let i = 3; i < 6; i++) await js.publish(`${subject}.ordered`, `m${i}`);
      }
      if (got.length === 6) break;
    }
    out["ordered.consume"] = got;
    await jsm.streams.delete(stream);
  }

  // an ordered consumer's next() while its stream is deleted
  {
    const stream = `${name}_ordered_next`;
    await jsm.streams.add({ name: stream, subjects: [`${subject}.onext`] });
    const oc = await js.consumers.get(stream);
    await js.publish(`${subject}.onext`, "first");
    const first = await oc.next({ expires: 2000 });
    const names = [];
    for await (const ci of jsm.consumers.list(stream)) names.push(ci.name);
    out["ordered.next"] = { first: first === null ? null : TD.decode(first.data) };
    out["ordered.next.deleted"] = await waitWhile(
      async () => {
        const m = await oc.next({ expires: 10000 });
        return m === null ? null : TD.decode(m.data);
      },
      stream,
      names[0],
      () => jsm.streams.delete(stream),
    );
  }
} catch (err) {
  console.error(`going_away_check failed: ${err && err.stack ? err.stack : err}`);
  process.exit(2);
} finally {
  clearTimeout(watchdog);
}
await nc.close();
console.log(JSON.stringify(out));
