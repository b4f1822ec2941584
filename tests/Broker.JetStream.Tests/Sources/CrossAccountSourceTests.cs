using Broker.Core;
using Broker.Core.Auth;
using Broker.Storage.FileStore;
using Broker.Storage.MemStore;
using NATS.Client.Core;
using NATS.Client.JetStream;
using static Broker.JetStream.Tests.Sources.SourceTestKit;

namespace Broker.JetStream.Tests.Sources;

/// <summary>
/// A mirror and a source of a stream of another account through <c>external { api, deliver }</c>, configured as
/// nats-server's own tests do it (<c>jsClusterMirrorSourceImportsTempl</c>): the origin's account JS exports
/// <c>$JS.API.CONSUMER.&gt;</c> (to create the consumers), <c>$JS.FC.&gt;</c> (flow-control replies) and the delivery
/// subjects <c>RI.DELIVER.SYNC.&gt;</c>; account IA imports them, the API under <c>RI.JS.API</c>. The same steps
/// against our broker and nats-server 2.9.10.
/// </summary>
public sealed class CrossAccountSourceTests
{
    private const string Conf = """
        accounts {
          JS: {
            jetstream: enabled
            users: [{user: rip, password: rip}]
            exports: [ {service: "$JS.API.CONSUMER.>"}, {stream: "RI.DELIVER.SYNC.>"}, {service: "$JS.FC.>"} ]
          }
          IA: {
            jetstream: enabled
            users: [{user: dlc, password: dlc}]
            imports: [
              {service: {account: JS, subject: "$JS.API.CONSUMER.>"}, to: "RI.JS.API.CONSUMER.>"}
              {stream: {account: JS, subject: "RI.DELIVER.SYNC.>"}}
              {service: {account: JS, subject: "$JS.FC.>"}}
            ]
          }
        }
        """;

    private static void Accounts(BrokerOptions options)
    {
        options.Accounts.Add(new AccountOptions
        {
            Name = "JS",
            Users = [new UserOptions { User = "rip", Password = "rip" }],
            JetStream = new AccountJetStreamOptions(),
            Exports = new AccountExportOptions
            {
                Services = [new ServiceExportOptions { Subject = "$JS.API.CONSUMER.>" }, new ServiceExportOptions { Subject = "$JS.FC.>" }],
                Streams = [new StreamExportOptions { Subject = "RI.DELIVER.SYNC.>" }],
            },
        });
        options.Accounts.Add(new AccountOptions
        {
            Name = "IA",
            Users = [new UserOptions { User = "dlc", Password = "dlc" }],
            JetStream = new AccountJetStreamOptions(),
            Imports = new AccountImportOptions
            {
                Services =
                [
                    new ServiceImportOptions { Account = "JS", Subject = "$JS.API.CONSUMER.>", To = "RI.JS.API.CONSUMER.>" },
                    new ServiceImportOptions { Account = "JS", Subject = "$JS.FC.>" },
                ],
                Streams = [new StreamImportOptions { Account = "JS", Subject = "RI.DELIVER.SYNC.>" }],
            },
        });
    }

    [Theory(Timeout = 120_000)]
    [MemberData(nameof(Kinds), MemberType = typeof(SourceTestKit))]
    public async Task A_mirror_and_a_source_follow_a_stream_of_another_account(ServerKind kind)
    {
        using var store = new TempDirectory("js-xsrc-");
        TestBroker? ours = null;
        ReferenceServer? reference = null;
        if (kind == ServerKind.Ours)
        {
            ours = await TestBroker.StartAsync(Accounts, [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = store.Path }), new MemoryStorePlugin(), new FileStorePlugin()]);
        }
        else
        {
            reference = await ReferenceServer.StartAsync(Conf + $"\njetstream {{ store_dir: \"{store.Path}\" }}\n");
        }

        await using var ownedOurs = ours;
        await using var ownedReference = reference;
        var url = ours?.Url ?? reference!.Url;
        await using var origin = await NatsClients.ConnectAsync(url, "rip", o => o.WithUser("rip", "rip"));
        await using var local = await NatsClients.ConnectAsync(url, "dlc", o => o.WithUser("dlc", "dlc"));
        var js = new NatsJSContext(origin);
        await RequestAsync(origin, "$JS.API.STREAM.CREATE.TEST", """{"name":"TEST","subjects":["test.>"],"storage":"file"}""");

        // 3 MB: more than the origin consumers deliver unanswered (2 MB), so flow-control replies must go back through the import.
        var payload = new string('x', 1000);
        const int count = 3000;
        for (var i = 1; i <= count; i++)
        {
            await js.PublishAsync($"test.{i % 3}", payload);
        }

        var mirror = await RequestAsync(local, "$JS.API.STREAM.CREATE.MY_MIRROR", """{"name":"MY_MIRROR","storage":"file","mirror":{"name":"TEST","external":{"api":"RI.JS.API","deliver":"RI.DELIVER.SYNC.MIRRORS"}}}""");
        Assert.Equal(default, Error(mirror));
        var source = await RequestAsync(local, "$JS.API.STREAM.CREATE.MY_SOURCE", """{"name":"MY_SOURCE","storage":"memory","sources":[{"name":"TEST","external":{"api":"RI.JS.API","deliver":"RI.DELIVER.SYNC.SOURCES"}}]}""");
        Assert.Equal(default, Error(source));
        await WaitForMessagesAsync(local, "MY_MIRROR", count, TimeSpan.FromSeconds(60));
        await WaitForMessagesAsync(local, "MY_SOURCE", count, TimeSpan.FromSeconds(60));

        await js.PublishAsync("test.last", "last");
        await WaitForMessagesAsync(local, "MY_MIRROR", count + 1);
        await WaitForMessagesAsync(local, "MY_SOURCE", count + 1);

        var mirrorInfo = (await InfoAsync(local, "MY_MIRROR")).GetProperty("mirror");
        Assert.Equal("""{"api":"RI.JS.API","deliver":"RI.DELIVER.SYNC.MIRRORS"}""", mirrorInfo.GetProperty("external").GetRawText());
        Assert.Equal(["name", "external", "lag", "active"], mirrorInfo.EnumerateObject().Select(p => p.Name));
        var sourceInfo = Assert.Single((await InfoAsync(local, "MY_SOURCE")).GetProperty("sources").EnumerateArray());
        Assert.Equal("""{"api":"RI.JS.API","deliver":"RI.DELIVER.SYNC.SOURCES"}""", sourceInfo.GetProperty("external").GetRawText());

        // The mirror holds the origin's sequences; a sourced message names the external source by name:hash(api).
        var last = await RequestAsync(local, "$JS.API.STREAM.MSG.GET.MY_MIRROR", $$"""{"seq":{{count + 1}}}""");
        Assert.Equal("test.last", last.GetProperty("message").GetProperty("subject").GetString());
        var sourced = await RequestAsync(local, "$JS.API.STREAM.MSG.GET.MY_SOURCE", $$"""{"last_by_subj":"test.last"}""");
        var headers = System.Text.Encoding.UTF8.GetString(Convert.FromBase64String(sourced.GetProperty("message").GetProperty("hdrs").GetString()!));
        Assert.Equal($"NATS/1.0\r\nNats-Stream-Source: TEST:{Hash("RI.JS.API")} {count + 1}\r\n\r\n", headers);
    }

    /// <summary>nats-server <c>getHash</c>, written out here so the test does not use the broker's.</summary>
    private static string Hash(string text)
    {
        const string digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        var sha = System.Security.Cryptography.SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(text));
        return new string([.. sha.Take(8).Select(b => digits[b % 62])]);
    }
}
