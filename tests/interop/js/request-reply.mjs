// Request/reply between two nats.js connections: sequential and concurrent requests (the client's shared
// muxed inbox), an old-style request with its own inbox (noMux), and headers carried both ways.
import { headers } from "nats";
import { check, open, run, sc } from "./lib.mjs";

run(async () => {
  const service = await open("js-service");
  service.subscribe("interop.svc", {
    callback: (_, m) => {
      const h = headers();
      h.set("X-Echo", m.headers?.get("X-Tag") ?? "none");
      m.respond(sc.encode(sc.decode(m.data).toUpperCase()), { headers: h });
    },
  });
  await service.flush();

  const client = await open("js-client");
  for (let i = 0; i < 5; i++) {
    const reply = await client.request("interop.svc", sc.encode(`seq-${i}`), { timeout: 5_000 });
    check(sc.decode(reply.data) === `SEQ-${i}`, `sequential reply ${i}: ${sc.decode(reply.data)}`);
  }

  const replies = await Promise.all(
    Array.from({ length: 20 }, (_, i) => client.request("interop.svc", sc.encode(`par-${i}`), { timeout: 5_000 })));
  replies.forEach((reply, i) => check(sc.decode(reply.data) === `PAR-${i}`, `concurrent reply ${i}: ${sc.decode(reply.data)}`));

  const h = headers();
  h.set("X-Tag", "tagged");
  const tagged = await client.request("interop.svc", sc.encode("hdr"), { timeout: 5_000, headers: h, noMux: true });
  check(sc.decode(tagged.data) === "HDR", `old-style reply: ${sc.decode(tagged.data)}`);
  check(tagged.headers?.get("X-Echo") === "tagged", `reply header X-Echo: ${tagged.headers?.get("X-Echo")}`);

  await client.close();
  await service.close();
  return { requests: 26 };
});
