// Many connections at once: 8 publishers x 500 messages (with headers on every other one) to 4 subscribers. Each
// subscriber must see every message exactly once and each publisher's messages in the order they were sent.
import { headers } from "nats";
import { check, open, run, sc } from "./lib.mjs";

run(async () => {
  const publishers = 8;
  const perPublisher = 500;
  const total = publishers * perPublisher;

  const subscribers = [];
  for (let s = 0; s < 4; s++) {
    const nc = await open(`js-fan-sub-${s}`);
    const state = { nc, count: 0, next: new Array(publishers).fill(0), errors: [] };
    nc.subscribe("fan.>", {
      callback: (_, m) => {
        const [p, i] = sc.decode(m.data).split(":").map(Number);
        if (i !== state.next[p] && state.errors.length < 5) {
          state.errors.push(`publisher ${p}: got ${i}, expected ${state.next[p]}`);
        }
        if (i % 2 === 0 && m.headers?.get("X-Seq") !== String(i) && state.errors.length < 5) {
          state.errors.push(`publisher ${p} message ${i}: header ${m.headers?.get("X-Seq")}`);
        }
        state.next[p] = i + 1;
        state.count++;
      },
    });
    await nc.flush();
    subscribers.push(state);
  }

  const pubs = await Promise.all(Array.from({ length: publishers }, (_, p) => open(`js-fan-pub-${p}`)));
  await Promise.all(pubs.map(async (nc, p) => {
    for (let i = 0; i < perPublisher; i++) {
      const opts = {};
      if (i % 2 === 0) {
        opts.headers = headers();
        opts.headers.set("X-Seq", String(i));
      }
      nc.publish(`fan.p${p}`, sc.encode(`${p}:${i}`), opts);
      if (i % 100 === 99) {
        await nc.flush();
      }
    }
    await nc.flush();
  }));

  const until = Date.now() + 15_000;
  while (subscribers.some((s) => s.count < total) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (const s of subscribers) {
    await s.nc.flush();
    check(s.errors.length === 0, s.errors.join("; "));
    check(s.count === total, `a subscriber got ${s.count} of ${total}`);
  }

  await Promise.all([...pubs, ...subscribers.map((s) => s.nc)].map((nc) => nc.close()));
  return { total, subscribers: subscribers.length };
});
