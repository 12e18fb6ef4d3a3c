// creds_check.mjs <nats-url> <options-json>
//
// Connects nats.js v3 (@nats-io/transport-node) to an operator-mode server with a user JWT:
// <options-json> is {creds: "<path of a .creds file>"} (credsAuthenticator) or {jwt, seed}
// (jwtAuthenticator; no seed: a bearer token). Makes one publish/subscribe round trip on
// "greet", then subscribes to "denied.x" (which the tests' users may not) and prints ONE JSON
// object: {connected, received, denied, error}. tests/clients/test_operator_nats_js.py runs it
// against nats-server and jsemu with the same JWTs and compares the objects.
//
// Exit status: 0 after printing; 2 when nothing is finished after 20 s.

import { readFileSync } from "node:fs";
import { connect, credsAuthenticator, jwtAuthenticator } from "@nats-io/transport-node";

const [url, json = "{}"] = process.argv.slice(2);
const options = JSON.parse(json);
const watchdog = setTimeout(() => {
  console.error("creds_check: not finished after 20 s");
  process.exit(2);
}, 20000);

const out = { connected: false, received: null, denied: null, error: null };
const opts = { servers: url, reconnect: false, timeout: 5000 };
if (options.creds) opts.authenticator = credsAuthenticator(readFileSync(options.creds));
if (options.jwt) {
  const seed = options.seed ? new TextEncoder().encode(options.seed) : undefined;
  opts.authenticator = jwtAuthenticator(options.jwt, seed);
}
try {
  const nc = await connect(opts);
  out.connected = true;
  const sub = nc.subscribe("greet", { max: 1 });
  nc.publish("greet", "hello");
  for await (const m of sub) out.received = m.string();
  const denied = nc.subscribe("denied.x");
  const seen = (async () => {
    try {
      for await (const _ of denied) break;
    } catch (err) {
      out.denied = String(err?.message ?? err).split("\n")[0];
    }
  })();
  await nc.flush();
  await Promise.race([seen, new Promise((r) => setTimeout(r, 2000))]);
  await nc.close();
} catch (err) {
  out.error = String(err?.message ?? err).split("\n")[0];
}
console.log(JSON.stringify(out));
clearTimeout(watchdog);
