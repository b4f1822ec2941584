// JetStream's key-value and object stores through nats.js (views.kv / views.os), against a server started with
// JetStream. Key-value: create a bucket with history, put, get, create (refused when the key exists), update with the
// expected revision (refused with a stale one), delete, purge, history, keys, a watcher that sees the changes.
// Object store: a multi-chunk object put and read back byte for byte, info, list, a link, delete.
// node kv-objects.mjs <url>
import { check, open, run, sc } from "./lib.mjs";

run(async () => {
  const nc = await open("js-kv-objects");
  const js = nc.jetstream();

  const kv = await js.views.kv("JSKV", { history: 5 });
  const watched = [];
  const watcher = await kv.watch({ key: "color.>" });
  const watching = (async () => {
    for await (const e of watcher) {
      watched.push(`${e.operation}:${e.key}:${sc.decode(e.value)}`);
      if (watched.length === 4) {
        break;
      }
    }
  })();

  const r1 = await kv.put("color.sky", sc.encode("blue"));
  const r2 = await kv.put("color.sky", sc.encode("grey"));
  check(r2 === r1 + 1, `revisions ${r1} then ${r2}`);
  check(sc.decode((await kv.get("color.sky")).value) === "grey", "get after put");

  let refused = false;
  try {
    await kv.create("color.sky", sc.encode("red"));
  } catch {
    refused = true;
  }
  check(refused, "create of an existing key was accepted");
  await kv.create("color.sea", sc.encode("green"));

  refused = false;
  try {
    await kv.update("color.sky", sc.encode("black"), r1);
  } catch {
    refused = true;
  }
  check(refused, "update with a stale revision was accepted");
  await kv.update("color.sky", sc.encode("white"), r2);

  await kv.delete("color.sea");
  check((await kv.get("color.sea"))?.operation === "DEL", "deleted key's entry is a DEL marker");

  const history = [];
  for await (const e of await kv.history({ key: "color.sky" })) {
    history.push(sc.decode(e.value));
  }
  check(history.join(",") === "blue,grey,white", `history ${history.join(",")}`);

  const keys = [];
  for await (const k of await kv.keys()) {
    keys.push(k);
  }
  check(keys.join(",") === "color.sky", `keys ${keys.join(",")}`);

  await kv.purge("color.sky");
  check((await kv.get("color.sky"))?.operation === "PURGE", "purged key's entry is a PURGE marker");

  await watching;
  watcher.stop();
  check(watched[0] === "PUT:color.sky:blue" && watched[1] === "PUT:color.sky:grey", `watched ${watched.join(" ")}`);

  const os = await js.views.os("JSOBJ");
  const data = new Uint8Array(300_000);
  for (let i = 0; i < data.length; i++) {
    data[i] = (i * 31 + 7) & 0xff;
  }
  const info = await os.putBlob({ name: "blob.bin", options: { max_chunk_size: 32 * 1024 } }, data);
  check(info.size === data.length && info.chunks === Math.ceil(data.length / (32 * 1024)), `object info ${info.size} bytes, ${info.chunks} chunks`);
  const back = await os.getBlob("blob.bin");
  check(back !== null && back.length === data.length && back.every((b, i) => b === data[i]), "object read back differs");

  await os.link("alias.bin", info);
  const listed = (await os.list()).map((o) => o.name).sort();
  check(listed.join(",") === "alias.bin,blob.bin", `list ${listed.join(",")}`);

  await os.delete("blob.bin");
  check((await os.get("blob.bin")) === null, "deleted object is still there");

  await nc.close();
  return { revisions: [r1, r2], history, objectChunks: info.chunks };
});
