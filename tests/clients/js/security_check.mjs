// security_check.mjs <nats-url> <options-json>
//
// Connects nats.js v3 (@nats-io/transport-node) to one server with the credentials and TLS
// settings of <options-json> ({nkeySeed, user, pass, credsFile, jwt + seed, tls: {caFile,
// certFile, keyFile, handshakeFirst}}), makes one publish/subscribe round trip and prints ONE JSON object:
// {connected, received, error}. tests/clients/test_security_nats_js.py runs it against
// nats-server and jsemu with the same options and compares the objects.
//
// Exit status: 0 after printing; 2 when nothing is finished after 20 s.

import { readFileSync } from "node:fs";
import { connect, credsAuthenticator, jwtAuthenticator, nkeyAuthenticator } from "@nats-io/transport-node";

const [url, json = "{}"] = process.argv.slice(2);
const options = JSON.parse(json);
const watchdog = setTimeout(() => {
  console.error("security_check: not finished after 20 s");
  process.exit(2);
}, 20000);

const out = { connected: false, received: null, error: null };
const opts = { servers: url, reconnect: false, timeout: 5000 };
if (options.nkeySeed) opts.authenticator = nkeyAuthenticator(new TextEncoder().encode(options.nkeySeed));
if (options.credsFile) opts.authenticator = credsAuthenticator(new Uint8Array(readFileSync(options.credsFile)));
if (options.jwt) opts.authenticator = jwtAuthenticator(options.jwt, new TextEncoder().encode(options.seed));
if (options.user) Object.assign(opts, { user: options.user, pass: options.pass });
if (options.tls) opts.tls = options.tls;
try {
  const nc = await connect(opts);
  out.connected = true;
  const sub = nc.subscribe("greet", { max: 1 });
  nc.publish("greet", "hello");
  for await (const m of sub) out.received = m.string();
  await nc.close();
} catch (err) {
  out.error = String(err?.message ?? err).split("\n")[0];
}
console.log(JSON.stringify(out));
clearTimeout(watchdog);
