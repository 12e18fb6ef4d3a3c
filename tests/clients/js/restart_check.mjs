// restart_check.mjs <nats-url> <name>
//
// nats.js v3 ordered consumer consume() across a server restart (same port, same store
// directory): takes three messages, prints "READY" and waits for the client to reconnect
// (the test restarts the server meanwhile), publishes three more and takes them. Prints
// ONE JSON object (data@stream-seq of each message); tests/clients/test_going_away_nats_js.py
// runs it against nats-server and against `jsemu serve` and asserts the same result.
// Exit status 2 when nothing is finished after 40 s.

import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";

const [url, name] = process.argv.slice(2);
if (!url || !name) {
  console.error("usage: node restart_check.mjs <nats-url> <name>");
  process.exit(64);
}
const watchdog = setTimeout(() => {
  console.error("restart_check: not finished after 40 s");
  process.exit(2);
}, 40000);
const TD = new TextDecoder();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const subject = name.toLowerCase();

const nc = await connect({ servers: url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
let reconnected;
const back = new Promise((r) => (reconnected = r));
(async () => {
  for await (const s of nc.status()) if (s.type === "reconnect") reconnected();
})();

async function publish(js, data) {
  for (let i = 0; i < 100; i++) {
    try {
      return await js.publish(`${subject}.r`, data);
    } catch {
      await sleep(100);
    }
  }
  throw new Error("no PubAck after the restart");
}

const out = {};
try {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name, subjects: [`${subject}.>`] });
  const js = jetstream(nc);
  for (let i = 0; i < 3; i++) await js.publish(`${subject}.r`, `m${i}`);
  const oc = await js.consumers.get(name);
  const messages = await oc.consume({ expires: 2000 });
  const got = [];
  for await (const m of messages) {
    got.push(`${TD.decode(m.data)}@${m.seq}`);
    if (got.length === 3) {
      console.log("READY");
      await back;
      for (let i = 3; i < 6; i++) await publish(js, `m${i}`);
    }
    if (got.length === 6) break;
  }
  out["ordered.consume"] = got;
} catch (err) {
  console.error(`restart_check failed: ${err && err.stack ? err.stack : err}`);
  process.exit(2);
} finally {
  clearTimeout(watchdog);
}
await nc.close();
console.log(JSON.stringify(out));
