// Credentials and permissions as nats.js sees them. The server is configured by the test with users
// admin/admin (everything) and app/app (publish public.> and _INBOX.>; subscribe public.> and _INBOX.>, not
// public.secret, not public.work in queue "bad"). nats.js parses the -ERR text to find which subscription a
// violation belongs to, so the exact wording matters here.
import { ErrorCode, Events } from "nats";
import { check, open, run, sc } from "./lib.mjs";

async function expectRefused(credentials) {
  try {
    const nc = await open("js-refused", credentials);
    await nc.close();
  } catch (err) {
    check(err.code === ErrorCode.AuthorizationViolation, `expected AUTHORIZATION_VIOLATION, got ${err.code}: ${err.message}`);
    return;
  }
  throw new Error(`connected with bad credentials ${JSON.stringify(credentials)}`);
}

// Resolves with the error a subscription's iterator ends with (or undefined when it ends cleanly).
async function endOf(sub) {
  try {
    for await (const _ of sub) {
      // Nothing is published to these subjects.
    }
  } catch (err) {
    return err;
  }
  return undefined;
}

run(async () => {
  await expectRefused({ user: "app", pass: "wrong" });
  await expectRefused({ user: "nobody", pass: "app" });
  await expectRefused({});

  const nc = await open("js-app", { user: "app", pass: "app" });
  const statusErrors = [];
  (async () => {
    for await (const s of nc.status()) {
      if (s.type === Events.Error) {
        statusErrors.push(s);
      }
    }
  })();

  // A denied subscription ends with a permissions error naming it; the connection stays up.
  const secret = nc.subscribe("public.secret");
  const secretError = await endOf(secret);
  check(secretError?.code === ErrorCode.PermissionsViolation, `public.secret ended with ${secretError?.code}`);
  check(secretError.permissionContext?.subject === "public.secret", `context ${JSON.stringify(secretError.permissionContext)}`);

  // A queue-specific deny names the queue, and only that queue's subscription ends.
  const good = nc.subscribe("public.work", { queue: "good" });
  const bad = nc.subscribe("public.work", { queue: "bad" });
  const badError = await endOf(bad);
  check(badError?.permissionContext?.queue === "bad", `queue context ${JSON.stringify(badError?.permissionContext)}`);
  check(!good.isClosed(), "the allowed queue subscription was closed too");

  // A denied publish is reported through the status stream with its subject.
  nc.publish("admin.shutdown", sc.encode("now"));
  await nc.flush();
  const until = Date.now() + 5_000;
  while (!statusErrors.some((s) => s.permissionContext?.operation === "publish") && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const publishError = statusErrors.find((s) => s.permissionContext?.operation === "publish");
  check(publishError?.permissionContext?.subject === "admin.shutdown", `publish status ${JSON.stringify(statusErrors)}`);

  // After all that the connection still works for what is allowed.
  const news = nc.subscribe("public.news", { max: 1 });
  await nc.flush();
  nc.publish("public.news", sc.encode("still here"));
  for await (const m of news) {
    check(sc.decode(m.data) === "still here", "allowed round trip failed");
  }
  check(!nc.isClosed(), "connection closed after permission errors");

  await nc.close();
  return { statusErrors: statusErrors.length };
});
