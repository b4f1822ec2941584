// Subscribes to <subject>, prints {"ready":true} once the server has the subscription, then expects <count>
// messages "msg-0".."msg-<count-1>" in order from a publisher in another client.
// node subscribe.mjs <url> <subject> <count>
import { args, check, open, print, run, sc, take } from "./lib.mjs";

run(async () => {
  const [subject, countText] = args();
  const count = Number(countText);
  const nc = await open("js-subscriber");
  const sub = nc.subscribe(subject);
  await nc.flush();
  print({ ready: true });

  const messages = await take(sub, count);
  messages.forEach((m, i) => check(sc.decode(m.data) === `msg-${i}`, `message ${i} is ${sc.decode(m.data)}`));
  const withHeaders = messages.filter((m) => m.headers).length;
  await nc.close();
  return { received: messages.length, withHeaders };
});
