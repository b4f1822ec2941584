// A request nobody listens to fails at once with the no-responders status (503) instead of timing out; both with
// the shared muxed inbox and with a dedicated inbox (noMux).
import { ErrorCode } from "nats";
import { check, open, run, sc } from "./lib.mjs";

async function expectNoResponders(nc, opts) {
  const started = Date.now();
  try {
    await nc.request("interop.nobody", sc.encode("anyone?"), { timeout: 15_000, ...opts });
  } catch (err) {
    check(err.code === ErrorCode.NoResponders, `expected code 503, got ${err.code}: ${err.message}`);
    // Not a timing assertion on the server: a 15 s timeout reached would mean no 503 ever came.
    return Date.now() - started;
  }
  throw new Error("the request succeeded although nobody subscribed");
}

run(async () => {
  const nc = await open("js-requester");
  check(nc.info?.headers === true, "server INFO does not announce headers");
  await expectNoResponders(nc, {});
  await expectNoResponders(nc, { noMux: true });

  // Once a responder exists the same request succeeds.
  nc.subscribe("interop.nobody", { callback: (_, m) => m.respond(sc.encode("here")) });
  const reply = await nc.request("interop.nobody", sc.encode("anyone?"), { timeout: 5_000 });
  check(sc.decode(reply.data) === "here", `reply: ${sc.decode(reply.data)}`);

  await nc.close();
  return { code: ErrorCode.NoResponders };
});
