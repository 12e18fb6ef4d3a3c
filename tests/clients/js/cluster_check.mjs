// cluster_check.mjs <mode> <nats-url>...
//
// nats.js v3 (@nats-io/transport-node, @nats-io/jetstream, @nats-io/kv) against a 3-node
// cluster of server processes. Prints ONE JSON object of comparable results on stdout (ports,
// subjects, payloads, sequences, counts; never timestamps or server ids);
// tests/clients/test_cluster_nats_js.py runs it against a cluster of nats-server processes and
// one of `jsemu serve` processes and asserts the same outcome on both.
//
//   core <url1> <url2> <url3>       discovery (the pool learns the other nodes from connect_urls),
//                                   publish/subscribe with headers, a queue group and
//                                   request/reply (and no responders) across nodes
//   failover <victim-url> <other-url>
//                                   connects to the victim, prints "ready <port>" on stderr; the test
//                                   kills the victim; the client reconnects to the other node,
//                                   a publish made while reconnecting is sent from the reconnect
//                                   buffer, the subscription keeps receiving
//   jsfailover <url1> <url2> <url3> <meta-leader-name> <tag>
//                                   a pull consume() on the victim of a JetStream cluster (a
//                                   node that leads neither the metadata nor the stream); after
//                                   two messages it prints "ready <victim port>", the test kills
//                                   the victim, and the consume carries on through the meta leader
//   js <url1> <url2> <url3> <tag>   a KV bucket (R1) put through node 1, got and watched through
//                                   node 3; a stream created through node 1, published to through
//                                   node 2, a durable pull consumer fetched on node 3 and consumed
//                                   on node 2 with acks, its info through node 1; ordered
//                                   consumers through nodes 3 and 2; an empty fetch (408) and
//                                   idle heartbeats through node 3; a nak on node 3 redelivered
//                                   to a pull on node 1
//
// Exit status: 0 after printing; 2 (message on stderr) when a step fails or nothing is finished
// after 30 s.

import { connect, headers } from "@nats-io/transport-node";
import { AckPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";

const [mode, ...args] = process.argv.slice(2);
const TD = new TextDecoder();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const port = (hostport) => Number(new URL(`nats://${hostport}`).port);
const sortedNums = (xs) => [...xs].sort((a, b) => a - b);

const watchdog = setTimeout(() => {
  console.error(`cluster_check ${mode}: not finished after 30 s`);
  process.exit(2);
}, 30000);

/** Waits (up to `ms`) for `pred()` to hold. */
async function until(pred, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await sleep(10);
  }
}

/** Interest crosses a route asynchronously: flush, then give the RS+ a moment. */
async function settle(...conns) {
  for (const nc of conns) await nc.flush();
  await sleep(150);
}

async function core([u1, u2, u3]) {
  const out = {};
  const [n1, n2, n3] = await Promise.all([u1, u2, u3].map((u) => connect({ servers: u })));
  const conns = [n1, n2, n3];
  try {
    await n1.flush();
    await sleep(100);
    const pool = n1.getServers();
    out.discovery = {
      cluster: n1.info?.cluster ?? null,
      connectUrls: sortedNums((n1.info?.connect_urls ?? []).map(port)),
      pool: sortedNums(pool.map((s) => s.port)),
      gossiped: sortedNums(pool.filter((s) => s.gossiped).map((s) => s.port)),
    };

    const got = [];
    for (const subject of ["orders.*", "orders.>"]) {
      n3.subscribe(subject, {
        callback: (_err, m) => got.push([m.subject, m.string(), m.headers?.get("K") ?? null]),
      });
    }
    await settle(n3);
    const h = headers();
    h.set("K", "v");
    n1.publish("orders.1", "one");
    n1.publish("orders.2", "", { headers: h });
    await n1.flush();
    await until(() => got.length >= 4);
    await sleep(100);
    out.pubsub = got.map((g) => JSON.stringify(g)).sort();

    const members = [await connect({ servers: u2 }), await connect({ servers: u2 }), await connect({ servers: u3 })];
    conns.push(...members);
    const counts = [0, 0, 0];
    members.forEach((nc, i) => nc.subscribe("work", { queue: "q", callback: () => counts[i]++ }));
    await settle(...members);
    for (let i = 0; i < 200; i++) n1.publish("work", String(i));
    await n1.flush();
    await until(() => counts.reduce((a, b) => a + b) >= 200).catch(() => {});
    await sleep(100);
    out.queue = { total: counts.reduce((a, b) => a + b), everyMember: counts.every((c) => c > 0) };

    n3.subscribe("svc.echo", { callback: (_err, m) => m.respond(`re:${m.string()}`) });
    await settle(n3);
    out.reply = (await n2.request("svc.echo", "ping", { timeout: 2000 })).string();
    try {
      await n2.request("svc.nobody", "x", { timeout: 2000 });
      out.noResponders = "answered";
    } catch (err) {
      out.noResponders = [err?.name ?? String(err), err?.cause?.name ?? null];
    }
  } finally {
    for (const nc of conns) await nc.close();
  }
  return out;
}

async function failover([victim, otherUrl]) {
  const out = { events: [] };
  // nats.js empties its outbound buffer at each dial attempt (ProtocolHandler.prepare), so what
  // is published before the attempt that succeeds is lost: reconnect straight to the other
  // node (its URL comes from connect_urls) and publish once that attempt has begun.
  const otherPort = port(new URL(otherUrl).host);
  const nc = await connect({
    servers: victim,
    reconnectTimeWait: 100,
    maxReconnectAttempts: -1,
    reconnectToServer: (pool, info) => (info ? (pool.find((s) => s.port === otherPort) ?? null) : null),
  });
  const other = await connect({ servers: otherUrl });
  try {
    const seen = { disconnect: false, reconnecting: false, reconnect: false };
    (async () => {
      for await (const s of nc.status()) {
        if (!(s.type in seen)) continue;
        if (s.type === "reconnecting" && !seen.reconnecting) nc.publish("after", "buffered"); // kept in the buffer
        out.events.push(s.type);
        seen[s.type] = true;
      }
    })();
    await nc.flush();
    await sleep(100);
    out.discovered = nc.getServers().filter((s) => s.gossiped).length;
    const received = [];
    nc.subscribe("after", { callback: (_err, m) => received.push(m.string()) });
    await nc.flush();
    console.error(`ready ${port(new URL(victim).host)}`);
    await until(() => seen.reconnect, 10000);
    out.reconnectedToVictim = port(nc.getServer()) === port(new URL(victim).host);
    await until(() => received.length >= 1, 2000).catch(() => {});
    await settle(nc);
    other.publish("after", "from-other");
    await other.flush();
    await until(() => received.length >= 2, 2000).catch(() => {});
    await sleep(100);
    out.received = received;
    const pool = nc.getServers();
    out.pool = sortedNums(pool.map((s) => s.port));
    out.gossiped = sortedNums(pool.filter((s) => s.gossiped).map((s) => s.port));
    out.connectUrls = sortedNums((nc.info?.connect_urls ?? []).map(port));
  } finally {
    await nc.close();
    await other.close();
  }
  return out;
}

async function js([u1, u2, u3, tag]) {
  const out = {};
  const [n1, n2, n3] = await Promise.all([u1, u2, u3].map((u) => connect({ servers: u })));
  try {
    const entry = (e) => e && { key: e.key, value: TD.decode(e.value), revision: e.revision, operation: e.operation };
    const bucket = `kv_${tag}`;
    const kv1 = await new Kvm(n1).create(bucket, { replicas: 1 });
    // kv.put is a publish to $KV.<bucket>.<key>; the first goes through js.publish to retry
    // while a real cluster's bucket, maybe on another node, has no interest on node 1 yet
    await jetstream(n1).publish(`$KV.${bucket}.k`, "v1", { retries: 10 });
    const kv3 = await new Kvm(n3).open(bucket);
    out.kvGet = entry(await kv3.get("k"));
    const watched = [];
    const iter = await kv3.watch({ key: "k" });
    const watching = (async () => {
      for await (const e of iter) {
        watched.push(entry(e));
        if (watched.length === 1) await kv1.put("k", "v2");
        if (watched.length === 2) break;
      }
    })();
    await watching;
    out.kvWatch = watched;
    await kv1.destroy();

    const stream = `S_${tag}`;
    const subj = `s${tag}`;
    const jsm1 = await jetstreamManager(n1);
    await jsm1.streams.add({ name: stream, subjects: [`${subj}.>`] });
    const js2 = jetstream(n2);
    out.acks = [];
    for (let i = 0; i < 4; i++) {
      // a real cluster's stream may be on another node than the publisher's, its interest
      // not there yet: nats.js retries a publish that found no responders
      const ack = await js2.publish(`${subj}.${i}`, `m${i}`, { retries: 10 });
      out.acks.push([ack.stream === stream, ack.seq]);
    }
    const info = await (await jetstreamManager(n3)).streams.info(stream);
    out.streamInfo = {
      messages: info.state.messages,
      clusterKeys: Object.keys(info.cluster ?? {}).sort(),
      clusterName: info.cluster?.name ?? null,
      leader: info.cluster?.leader ?? null,
    };

    await jsm1.consumers.add(stream, { durable_name: "work", ack_policy: AckPolicy.Explicit });
    const msg = (m) => [m.subject.split(".")[1], m.string(), m.seq];
    out.fetched = [];
    const c3 = await jetstream(n3).consumers.get(stream, "work");
    for await (const m of await c3.fetch({ max_messages: 2, expires: 2000 })) {
      out.fetched.push([...msg(m), await m.ackAck()]);
    }
    out.consumed = [];
    const c2 = await js2.consumers.get(stream, "work");
    const msgs = await c2.consume({ max_messages: 2 });
    for await (const m of msgs) {
      out.consumed.push([...msg(m), await m.ackAck()]);
      if (out.consumed.length === 2) break;
    }
    const ci = await jsm1.consumers.info(stream, "work");
    out.consumerInfo = {
      delivered: ci.delivered.stream_seq,
      ackFloor: ci.ack_floor.stream_seq,
      ackPending: ci.num_ack_pending,
      pending: ci.num_pending,
      clusterName: ci.cluster?.name ?? null,
      leader: ci.cluster?.leader ?? null,
    };

    out.ordered = [];
    const oc = await jetstream(n3).consumers.get(stream);
    for await (const m of await oc.consume()) {
      out.ordered.push(msg(m));
      if (out.ordered.length === 2) await js2.publish(`${subj}.late`, "late");
      if (out.ordered.length === 5) break;
    }
    out.orderedFetched = [];
    const of = await jetstream(n2).consumers.get(stream);
    for await (const m of await of.fetch({ max_messages: 5, expires: 2000 })) out.orderedFetched.push(msg(m));

    // what the server sends a pull request on another node crosses the route: 408 at expiry,
    // idle heartbeats, and a nak'd message redelivered to a pull on a third node
    out.late = [];
    for await (const m of await c3.fetch({ max_messages: 1, expires: 1000 })) out.late.push([...msg(m), await m.ackAck()]);
    out.emptyFetch = [];
    for await (const m of await c3.fetch({ max_messages: 1, expires: 1000 })) out.emptyFetch.push(msg(m));
    out.emptyNext = await c3.next({ expires: 1000 });
    const statuses = new Set();
    const idle = await c3.consume({ max_messages: 1, expires: 2000, idle_heartbeat: 300 });
    (async () => {
      for await (const st of idle.status()) statuses.add(st.type);
    })();
    const idling = (async () => {
      for await (const m of idle) statuses.add(`msg ${m.seq}`);
    })();
    await sleep(1500);
    await idle.close();
    await idling;
    out.idleStatuses = ["heartbeat", "heartbeats_missed"].map((t) => [t, statuses.has(t)]);
    // a consumer of its own: the closed consume()'s last pull request stays on the server
    // until it expires, and would take the message
    await jsm1.consumers.add(stream, {
      durable_name: "nak",
      ack_policy: AckPolicy.Explicit,
      filter_subject: `${subj}.nak`,
    });
    await js2.publish(`${subj}.nak`, "again");
    const first = await (await jetstream(n3).consumers.get(stream, "nak")).next({ expires: 2000 });
    out.nak = [msg(first), first.info.deliveryCount];
    first.nak();
    await n3.flush();
    const again = await (await jetstream(n1).consumers.get(stream, "nak")).next({ expires: 2000 });
    out.nak.push(msg(again), again.info.deliveryCount, again.info.redelivered, await again.ackAck());
    const ni = await jsm1.consumers.info(stream, "nak");
    out.nakInfo = { ackFloor: ni.ack_floor.stream_seq, ackPending: ni.num_ack_pending, redelivered: ni.num_redelivered };
    await jsm1.streams.delete(stream);
  } finally {
    for (const nc of [n1, n2, n3]) await nc.close();
  }
  return out;
}

async function jsfailover([u1, u2, u3, metaLeader, tag]) {
  const out = { events: [], received: [] };
  const named = {};
  for (const u of [u1, u2, u3]) {
    const probe = await connect({ servers: u });
    named[probe.info.server_name] = u;
    await probe.close();
  }
  const admin = await connect({ servers: named[metaLeader] });
  const stream = `F_${tag}`;
  const subj = `f${tag}`;
  const jsm = await jetstreamManager(admin);
  const si = await jsm.streams.add({ name: stream, subjects: [`${subj}.>`] });
  // the victim leads neither the metadata nor the stream (a real cluster places an R1 stream)
  const victimName = Object.keys(named)
    .sort()
    .find((n) => n !== metaLeader && n !== si.cluster?.leader);
  const victim = named[victimName];
  const otherPort = port(new URL(named[metaLeader]).host);
  const nc = await connect({
    servers: victim,
    reconnectTimeWait: 100,
    maxReconnectAttempts: -1,
    reconnectToServer: (pool, info) => (info ? (pool.find((s) => s.port === otherPort) ?? null) : null),
  });
  try {
    await jsm.consumers.add(stream, { durable_name: "work", ack_policy: AckPolicy.Explicit });
    const jsa = jetstream(admin);
    for (const i of [1, 2]) await jsa.publish(`${subj}.${i}`, `m${i}`, { retries: 10 });
    const seen = { disconnect: false, reconnect: false };
    (async () => {
      for await (const s of nc.status()) {
        if (!(s.type in seen)) continue;
        out.events.push(s.type);
        seen[s.type] = true;
      }
    })();
    const c = await jetstream(nc).consumers.get(stream, "work");
    const msgs = await c.consume({ max_messages: 10, expires: 1000 });
    for await (const m of msgs) {
      out.received.push([m.subject.split(".")[1], m.string(), m.seq, await m.ackAck()]);
      if (out.received.length === 2) {
        console.error(`ready ${port(new URL(victim).host)}`);
        await until(() => seen.reconnect, 10000);
        for (const i of [3, 4]) await jsa.publish(`${subj}.${i}`, `m${i}`, { retries: 10 });
      }
      if (out.received.length === 4) break;
    }
    const ci = await jsm.consumers.info(stream, "work");
    out.consumerInfo = { delivered: ci.delivered.stream_seq, ackFloor: ci.ack_floor.stream_seq, ackPending: ci.num_ack_pending };
    await jsm.streams.delete(stream);
  } finally {
    await nc.close();
    await admin.close();
  }
  return out;
}

const modes = { core, failover, js, jsfailover };
if (!(mode in modes)) {
  console.error("usage: node cluster_check.mjs core|failover|js <nats-url>...");
  process.exit(64);
}
try {
  console.log(JSON.stringify(await modes[mode](args)));
} catch (err) {
  console.error(`cluster_check ${mode} failed: ${err?.stack ?? err}`);
  process.exit(2);
}
clearTimeout(watchdog);
