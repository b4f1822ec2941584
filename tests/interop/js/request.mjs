// Sends <count> requests "hello-<i>" to a responder in another client and expects "HELLO-<i>" back.
// node request.mjs <url> <subject> <count>
import { args, check, open, run, sc } from "./lib.mjs";

run(async () => {
  const [subject, countText] = args();
  const count = Number(countText);
  const nc = await open("js-requester");
  for (let i = 0; i < count; i++) {
    const reply = await nc.request(subject, sc.encode(`hello-${i}`), { timeout: 5_000 });
    check(sc.decode(reply.data) === `HELLO-${i}`, `reply ${i}: ${sc.decode(reply.data)}`);
  }
  await nc.close();
  return { requests: count };
});
