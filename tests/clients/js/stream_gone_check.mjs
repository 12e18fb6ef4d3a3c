// stream_gone_check.mjs <nats-url> <name>
//
// nats.js v3 (@nats-io/jetstream 3.4) when the STREAM goes away (deleted, or deleted and made
// again with new messages) under a durable pull consumer's fetch() / consume() and an ordered
// consumer's next() / fetch() / consume(). Prints ONE JSON object of comparable results
// (data@seq seen, errors, the first notifications, whether each wait ended early, well before
// its expiry); tests/clients/test_going_away_nats_js.py runs it against nats-server and against
// jsemu and asserts that the two objects are equal. Exit status 2 when nothing is finished
// after 50 s.

import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";

const [url, name] = process.argv.slice(2);
if (!url || !name) {
  console.error("usage: node stream_gone_check.mjs <nats-url> <name>");
  process.exit(64);
}
const watchdog = setTimeout(() => {
  console.error("stream_gone_check: not finished after 50 s");
  process.exit(2);
}, 50000);
const TD = new TextDecoder();
const out = {};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const subject = name.toLowerCase();
const seen = (m) => `${TD.decode(m.data)}@${m.seq}`;

const nc = await connect({ servers: url });
const jsm = await jetstreamManager(nc);
const js = jetstream(nc);

async function waitingOn(stream) {
  for (let i = 0; i < 300; i++) {
    for await (const ci of jsm.consumers.list(stream)) if (ci.num_waiting > 0) return ci.name;
    await sleep(10);
  }
  throw new Error("the pull never waited");
}

async function makeStream(stream, n, prefix) {
  await jsm.streams.add({ name: stream, subjects: [`${stream.toLowerCase()}.>`] });
  for (let i = 0; i < n; i++) await js.publish(`${stream.toLowerCase()}.a`, `${prefix}${i}`);
}

async function gone(stream, what) {
  await jsm.streams.delete(stream);
  if (what === "recreated") await makeStream(stream, 3, "n");
}

async function settle(pullFn, stream, what) {
  const start = Date.now();
  const result = pullFn().then(
    (v) => ({ value: v }),
    (err) => ({ error: `${err.name}: ${err.message}` }),
  );
  await waitingOn(stream);
  await gone(stream, what);
  const r = await result;
  r.early = Date.now() - start < 3000;
  return r;
}

async function cleanup(stream) {
  try {
    await jsm.streams.delete(stream);
  } catch {
    // gone already
  }
}

try {
  for (const what of ["deleted", "recreated"]) {
    // a durable's fetch() of three
    {
      const stream = `${name}_F_${what}`;
      await makeStream(stream, 0, "m");
      await jsm.consumers.add(stream, { durable_name: "D", ack_policy: AckPolicy.Explicit });
      const c = await js.consumers.get(stream, "D");
      out[`fetch.${what}`] = await settle(
        async () => {
          const got = [];
          for await (const m of await c.fetch({ max_messages: 3, expires: 10000 })) got.push(seen(m));
          return got;
        },
        stream,
        what,
      );
      await cleanup(stream);
    }

    // a durable's consume(): the first three notifications
    {
      const stream = `${name}_C_${what}`;
      await makeStream(stream, 0, "m");
      await jsm.consumers.add(stream, { durable_name: "D", ack_policy: AckPolicy.Explicit });
      const c = await js.consumers.get(stream, "D");
      const messages = await c.consume({ expires: 1000 });
      const kinds = [];
      const got = [];
      (async () => {
        for await (const s of messages.status()) {
          if (s.type === "consumer_deleted") kinds.push(`${s.type} ${s.code} ${s.description}`);
          else if (s.type !== "debug" && s.type !== "next") kinds.push(s.type);
        }
      })();
      (async () => {
        for await (const m of messages) {
          got.push(seen(m));
          m.ack();
        }
      })();
      await waitingOn(stream);
      await gone(stream, what);
      for (let i = 0; i < 100 && kinds.length < 3; i++) await sleep(50);
      out[`consume.${what}`] = { notifications: kinds.slice(0, 3), got };
      messages.stop();
      await cleanup(stream);
    }

    // an ordered consumer's next(), fetch() and consume()
    for (const how of ["next", "fetch", "consume"]) {
      const stream = `${name}_O${how}_${what}`;
      await makeStream(stream, 2, "m");
      const oc = await js.consumers.get(stream);
      const first = [];
      // (an ordered consumer is either fetch()ed or consume()d, so consume() takes its own first two)
      if (how !== "consume") for await (const m of await oc.fetch({ max_messages: 2, expires: 2000 })) first.push(seen(m));
      let r;
      if (how === "consume") {
        const messages = await oc.consume({ expires: 2000 });
        const kinds = [];
        (async () => {
          for await (const s of messages.status()) {
            // first sightings, without the ones whose count is a matter of timing
            if (!["debug", "next", "heartbeat", "discard"].includes(s.type) && !kinds.includes(s.type)) kinds.push(s.type);
          }
        })();
        const got = [];
        const done = (async () => {
          for await (const m of messages) {
            (first.length < 2 ? first : got).push(seen(m));
            if (got.length === (what === "recreated" ? 1 : 3)) break;
          }
        })();
        while (first.length < 2) await sleep(10);
        await waitingOn(stream);
        await gone(stream, what);
        await Promise.race([done, sleep(5000)]);
        messages.stop();
        r = { got, notifications: kinds };
      } else {
        r = await settle(
          async () => {
            if (how === "next") {
              const m = await oc.next({ expires: 10000 });
              return m === null ? null : seen(m);
            }
            const got = [];
            for await (const m of await oc.fetch({ max_messages: 3, expires: 10000 })) got.push(seen(m));
            return got;
          },
          stream,
          what,
        );
        // and one more call on the same object
        try {
          if (how === "next") {
            const m = await oc.next({ expires: 2000 });
            r.after = m === null ? null : seen(m);
          } else {
            const got = [];
            for await (const m of await oc.fetch({ max_messages: 3, expires: 2000 })) got.push(seen(m));
            r.after = got;
          }
        } catch (err) {
          r.after = `${err.name}: ${err.message}`;
        }
      }
      r.first = first;
      out[`ordered.${how}.${what}`] = r;
      await cleanup(stream);
    }
  }
} catch (err) {
  console.error(`stream_gone_check failed: ${err && err.stack ? err.stack : err}`);
  process.exit(2);
} finally {
  clearTimeout(watchdog);
}
await nc.close();
console.log(JSON.stringify(out));
