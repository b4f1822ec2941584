// Publishes <count> messages "msg-<i>" with an X-Index header to <subject>, for a subscriber in another client.
// node publish.mjs <url> <subject> <count>
import { headers } from "nats";
import { args, open, run, sc } from "./lib.mjs";

run(async () => {
  const [subject, countText] = args();
  const count = Number(countText);
  const nc = await open("js-publisher");
  for (let i = 0; i < count; i++) {
    const h = headers();
    h.set("X-Index", String(i));
    nc.publish(subject, sc.encode(`msg-${i}`), { headers: h });
  }
  await nc.flush();
  await nc.close();
  return { published: count };
});
