// A responder for requesters in other clients: answers <count> requests on <subject> with the payload in upper
// case (and an X-Responder: js header), printing {"ready":true} once subscribed.
// node respond.mjs <url> <subject> <count>
import { headers } from "nats";
import { args, open, print, run, sc } from "./lib.mjs";

run(async () => {
  const [subject, countText] = args();
  const count = Number(countText);
  const nc = await open("js-responder");
  const sub = nc.subscribe(subject, { max: count });
  await nc.flush();
  print({ ready: true });

  let answered = 0;
  for await (const m of sub) {
    const h = headers();
    h.set("X-Responder", "js");
    m.respond(sc.encode(sc.decode(m.data).toUpperCase()), { headers: h });
    answered++;
  }
  await nc.flush();
  await nc.close();
  return { answered };
});
