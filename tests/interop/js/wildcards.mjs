// Wildcard subscriptions: '*' matches exactly one token, '>' one or more trailing tokens.
import { check, open, run, sc } from "./lib.mjs";

run(async () => {
  const nc = await open("js-wildcards");
  const patterns = ["w.*", "w.>", "w.a.b", "*.a", ">"];
  const got = Object.fromEntries(patterns.map((p) => [p, []]));
  for (const p of patterns) {
    nc.subscribe(p, { callback: (_, m) => got[p].push(m.subject) });
  }
  await nc.flush();

  for (const subject of ["w", "w.a", "w.a.b", "w.a.b.c", "x.a", "w.b"]) {
    nc.publish(subject, sc.encode(subject));
  }
  // Deliveries to this connection precede the PONG that completes the flush.
  await nc.flush();

  const expected = {
    "w.*": ["w.a", "w.b"],
    "w.>": ["w.a", "w.a.b", "w.a.b.c", "w.b"],
    "w.a.b": ["w.a.b"],
    "*.a": ["w.a", "x.a"],
    ">": ["w", "w.a", "w.a.b", "w.a.b.c", "x.a", "w.b"],
  };
  for (const p of patterns) {
    check(JSON.stringify(got[p]) === JSON.stringify(expected[p]), `${p} got ${JSON.stringify(got[p])}, expected ${JSON.stringify(expected[p])}`);
  }

  await nc.close();
  return { matched: Object.fromEntries(patterns.map((p) => [p, got[p].length])) };
});
