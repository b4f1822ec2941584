// Shared by the scenario scripts. The contract with tests/Broker.Interop.Tests:
//   node <script>.mjs nats://127.0.0.1:PORT [args...]
// A script may print progress lines (a peer waits for {"ready":true}); its LAST line is a JSON summary with
// "ok": true or false, and it exits 0 exactly when ok is true. Every script stops itself after a deadline.
import { connect, StringCodec } from "nats";

export const sc = StringCodec();

// Long enough for a loaded 2-core machine, short enough that a hang shows up well before the test's own timeout.
const DEADLINE_MS = 20_000;

export function url() {
  const server = process.argv[2];
  if (!server) {
    throw new Error("usage: node <script>.mjs nats://host:port [args...]");
  }
  return server;
}

// Positional arguments after the URL.
export function args() {
  return process.argv.slice(3);
}

// A connection that fails instead of retrying: a broken server must fail the test, not stall it.
export function open(name, extra = {}) {
  return connect({ servers: url(), name, reconnect: false, timeout: 5_000, ...extra });
}

export function print(value) {
  process.stdout.write(JSON.stringify(value) + "\n");
}

export function check(condition, message) {
  if (!condition) {
    throw new Error(message);
  }
}

// Collects up to `count` messages of a subscription (or fewer when it ends).
export async function take(sub, count) {
  const messages = [];
  if (count === 0) {
    return messages;
  }
  for await (const m of sub) {
    messages.push(m);
    if (messages.length >= count) {
      break;
    }
  }
  return messages;
}

// Runs a scenario: prints its summary (merged into {"ok": true}) or the error, and exits accordingly.
export function run(scenario) {
  const timer = setTimeout(() => {
    print({ ok: false, error: `timed out after ${DEADLINE_MS} ms` });
    process.exit(2);
  }, DEADLINE_MS);
  scenario()
    .then((summary) => {
      clearTimeout(timer);
      print({ ok: true, ...summary });
      process.exit(0);
    })
    .catch((err) => {
      clearTimeout(timer);
      print({ ok: false, error: String(err?.message ?? err), code: err?.code });
      process.exit(1);
    });
}
