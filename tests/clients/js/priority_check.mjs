// priority_check.mjs <nats-url> <name>
//
// nats.js v3 on priority groups and pausing: fetch() with an overflow group (min_pending),
// fetch() and consume() pinned to a group (the client keeps the Nats-Pin-Id), unpin(),
// pause() / resume(), and what the consumer infos say. Prints ONE JSON object of comparable
// results (no ids, no timestamps); tests/clients/test_priority_nats_js.py runs it against
// nats-server and jsemu and asserts the two objects are equal. Exit status 2 when nothing
// is finished after 30 s.

import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, AckPolicy } from "@nats-io/jetstream";

const [url, name] = process.argv.slice(2);
if (!url || !name) {
  console.error("usage: node priority_check.mjs <nats-url> <name>");
  process.exit(64);
}
const watchdog = setTimeout(() => {
  console.error("priority_check: not finished after 30 s");
  process.exit(2);
}, 30000);
const TD = new TextDecoder();
const out = {};
const groups = (info) =>
  (info.priority_groups || []).map((g) => ({ group: g.group, pinned: Boolean(g.pinned_client_id) }));

const nc = await connect({ servers: url });
try {
  const jsm = await jetstreamManager(nc);
  const stream = `P_${name}`;
  const subj = name.toLowerCase();
  await jsm.streams.add({ name: stream, subjects: [`${subj}.>`] });
  const js = jetstream(nc);
  for (let i = 0; i < 8; i++) await js.publish(`${subj}.${i}`, `m${i}`);

  // overflow: a fetch asking for more pending than there is gets nothing; one within it, messages
  await jsm.consumers.add(stream, {
    durable_name: "over",
    ack_policy: AckPolicy.Explicit,
    priority_policy: "overflow",
    priority_groups: ["A"],
  });
  const over = await js.consumers.get(stream, "over");
  const none = [];
  for await (const m of await over.fetch({ max_messages: 1, expires: 1000, group: "A", min_pending: 100 })) {
    none.push(TD.decode(m.data));
  }
  const some = [];
  for await (const m of await over.fetch({ max_messages: 2, expires: 1000, group: "A", min_pending: 5 })) {
    some.push(TD.decode(m.data));
    m.ack();
  }
  out["overflow.fetch"] = { none, some, pending: (await over.info()).num_pending };

  // pinned_client: the first fetch is pinned, the client carries the pin on, unpin clears it
  await jsm.consumers.add(stream, {
    durable_name: "pin",
    ack_policy: AckPolicy.Explicit,
    priority_policy: "pinned_client",
    priority_groups: ["A"],
  });
  const pin = await js.consumers.get(stream, "pin");
  const pinned = [];
  for (let round = 0; round < 2; round++) {
    for await (const m of await pin.fetch({ max_messages: 2, expires: 1000, group: "A" })) {
      pinned.push({ data: TD.decode(m.data), hasPin: Boolean(m.headers && m.headers.get("Nats-Pin-Id")) });
      m.ack();
    }
  }
  const before = groups(await pin.info());
  await jsm.consumers.unpin(stream, "pin", "A");
  out["pinned.fetch"] = { pinned, before, after: groups(await pin.info()) };

  // pause and resume
  const paused = await jsm.consumers.pause(stream, "pin", new Date(Date.now() + 3600_000));
  const pinfo = await pin.info();
  const resumed = await jsm.consumers.resume(stream, "pin");
  const rinfo = await pin.info();
  out["pause"] = {
    paused: paused.paused,
    infoPaused: Boolean(pinfo.paused),
    hasUntil: Boolean(pinfo.config.pause_until),
    resumed: resumed.paused,
    infoAfter: Boolean(rinfo.paused),
    level: rinfo.config.metadata["_nats.req.level"],
  };
  await jsm.streams.delete(stream);
} catch (err) {
  console.error(`priority_check failed: ${err && err.stack ? err.stack : err}`);
  process.exit(2);
} finally {
  clearTimeout(watchdog);
}
await nc.close();
console.log(JSON.stringify(out));
