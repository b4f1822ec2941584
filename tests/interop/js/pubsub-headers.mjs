// Publish/subscribe between two connections with headers: multi-valued keys, a reply subject, an empty payload
// and a message without headers, all received in order and intact.
import { headers } from "nats";
import { check, open, run, sc, take } from "./lib.mjs";

run(async () => {
  const subscriber = await open("js-sub");
  const publisher = await open("js-pub");
  const sub = subscriber.subscribe("interop.headers");
  await subscriber.flush();

  const count = 5;
  for (let i = 0; i < count; i++) {
    const h = headers();
    h.set("X-Index", String(i));
    h.append("X-Multi", "a");
    h.append("X-Multi", "b");
    publisher.publish("interop.headers", sc.encode(`msg-${i}`), { headers: h, reply: `reply.${i}` });
  }
  publisher.publish("interop.headers", sc.encode("plain"));
  const only = headers();
  only.set("X-Only", "headers");
  publisher.publish("interop.headers", new Uint8Array(0), { headers: only });
  await publisher.flush();

  const messages = await take(sub, count + 2);
  for (let i = 0; i < count; i++) {
    const m = messages[i];
    check(sc.decode(m.data) === `msg-${i}`, `message ${i} has payload ${sc.decode(m.data)}`);
    check(m.reply === `reply.${i}`, `message ${i} has reply ${m.reply}`);
    check(m.headers?.get("X-Index") === String(i), `message ${i} has X-Index ${m.headers?.get("X-Index")}`);
    check(m.headers?.values("X-Multi").join(",") === "a,b", `message ${i} has X-Multi ${m.headers?.values("X-Multi")}`);
  }
  check(sc.decode(messages[count].data) === "plain" && !messages[count].headers, "plain message arrived with headers or changed");
  check(messages[count + 1].data.length === 0 && messages[count + 1].headers?.get("X-Only") === "headers", "empty message lost its headers or gained a payload");

  await publisher.close();
  await subscriber.close();
  return { received: messages.length };
});
