// A 3-member queue group on three connections next to a plain subscriber: every message reaches exactly one
// member, every member gets some, and the plain subscriber gets them all.
import { check, open, run, sc } from "./lib.mjs";

run(async () => {
  const total = 90;
  const members = [];
  for (let i = 0; i < 3; i++) {
    const nc = await open(`js-worker-${i}`);
    const got = [];
    nc.subscribe("interop.queue", { queue: "workers", callback: (_, m) => got.push(sc.decode(m.data)) });
    await nc.flush();
    members.push({ nc, got });
  }
  const watcher = await open("js-watcher");
  const all = [];
  watcher.subscribe("interop.queue", { callback: (_, m) => all.push(sc.decode(m.data)) });
  await watcher.flush();

  const publisher = await open("js-pub");
  for (let i = 0; i < total; i++) {
    publisher.publish("interop.queue", sc.encode(String(i)));
  }
  await publisher.flush();

  // The plain subscriber getting all messages shows the server routed them all; flushing each member afterwards
  // makes sure its deliveries (sent before the PONG) were processed.
  const until = Date.now() + 10_000;
  while (all.length < total && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (const m of members) {
    await m.nc.flush();
  }

  const counts = members.map((m) => m.got.length);
  const delivered = members.flatMap((m) => m.got).map(Number).sort((a, b) => a - b);
  check(all.length === total, `plain subscriber got ${all.length} of ${total}`);
  check(delivered.length === total, `queue members got ${delivered.length} messages in all, expected ${total}`);
  check(delivered.every((v, i) => v === i), "some message reached two members or none");
  check(counts.every((c) => c > 0), `a member got nothing: ${counts}`);

  for (const nc of [publisher, watcher, ...members.map((m) => m.nc)]) {
    await nc.close();
  }
  return { counts, total };
});
