// Less common client features: no-echo, verbose and pedantic connections, a payload near max_payload, non-ASCII
// subjects, a subscription with a message limit, drain, and the client's RTT measurement.
import { check, open, run, sc, take } from "./lib.mjs";

run(async () => {
  const results = {};

  // noEcho: a connection does not receive its own publishes; another connection still does.
  const quiet = await open("js-no-echo", { noEcho: true });
  const other = await open("js-other");
  const own = [];
  quiet.subscribe("edge.echo", { callback: (_, m) => own.push(m) });
  const seen = other.subscribe("edge.echo", { max: 1 });
  await quiet.flush();
  await other.flush();
  quiet.publish("edge.echo", sc.encode("me"));
  await quiet.flush();
  check((await take(seen, 1)).length === 1, "the other connection missed the message");
  await quiet.flush();
  check(own.length === 0, "noEcho connection received its own message");
  results.noEcho = true;

  // verbose + pedantic: the server acknowledges every operation with +OK, which the client must absorb.
  const chatty = await open("js-verbose", { verbose: true, pedantic: true });
  const chattySub = chatty.subscribe("edge.verbose", { max: 3 });
  for (let i = 0; i < 3; i++) {
    chatty.publish("edge.verbose", sc.encode(String(i)));
  }
  const chattyGot = await take(chattySub, 3);
  check(chattyGot.map((m) => sc.decode(m.data)).join() === "0,1,2", "verbose connection lost messages");
  await chatty.flush();
  results.verbose = true;

  // A payload just under max_payload crosses many socket reads.
  const maxPayload = other.info.max_payload;
  const big = new Uint8Array(maxPayload - 64);
  for (let i = 0; i < big.length; i++) big[i] = i % 251;
  const bigSub = other.subscribe("edge.big", { max: 1 });
  await other.flush();
  quiet.publish("edge.big", big);
  const [bigMsg] = await take(bigSub, 1);
  check(bigMsg.data.length === big.length, `big payload came back with ${bigMsg.data.length} bytes`);
  check(bigMsg.data.every((b, i) => b === i % 251), "big payload corrupted");
  results.bigPayload = big.length;

  // Non-ASCII subject tokens are bytes to the server; wildcards still split on '.'.
  const uni = other.subscribe("édge.*.données", { max: 1 });
  await other.flush();
  quiet.publish("édge.主题.données", sc.encode("unicode"));
  const [uniMsg] = await take(uni, 1);
  check(uniMsg.subject === "édge.主题.données", `unicode subject came back as ${uniMsg.subject}`);
  results.unicode = true;

  // Subscription limit: UNSUB <sid> 2 right after SUB; the server stops after two.
  const limited = other.subscribe("edge.limit", { max: 2 });
  const marker = other.subscribe("edge.marker", { max: 1 });
  await other.flush();
  const before = other.stats().inMsgs;
  for (let i = 0; i < 5; i++) quiet.publish("edge.limit", sc.encode(String(i)));
  quiet.publish("edge.marker", sc.encode("end"));
  await take(marker, 1);
  const limitedGot = await take(limited, 2);
  check(limitedGot.length === 2, `limited subscription got ${limitedGot.length}`);
  check(other.stats().inMsgs - before === 3, `server sent ${other.stats().inMsgs - before} messages, expected 2 + marker`);
  results.limit = 2;

  // RTT is a PING/PONG round trip.
  results.rttMeasured = (await other.rtt()) >= 0;

  // Drain: unsubscribes everything, delivers what was in flight, then closes.
  const drained = [];
  const drainSub = other.subscribe("edge.drain", { callback: (_, m) => drained.push(m) });
  await other.flush();
  for (let i = 0; i < 10; i++) quiet.publish("edge.drain", sc.encode(String(i)));
  await quiet.flush();
  await other.flush();
  await other.drain();
  check(drained.length === 10, `drain delivered ${drained.length} of 10`);
  check(drainSub.isClosed(), "subscription still open after drain");
  results.drained = drained.length;

  await quiet.close();
  await chatty.close();
  return results;
});
