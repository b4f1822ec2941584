using Broker.Core;
using Broker.Core.Auth;
using Broker.Storage.FileStore;
using Broker.Storage.MemStore;
using NATS.Client.Core;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;

namespace Broker.JetStream.Tests;

/// <summary>
/// JetStream of one account used from another through service and stream imports, as nats.c's
/// <c>KeyValueCrossAccount</c> sets it up, against nats-server 2.9.10 with the same configuration: account A has
/// JetStream and exports <c>$JS.API.&gt;</c> and <c>$KV.&gt;</c> as services and its inbox subjects as a stream; I imports
/// them under <c>fromA</c>, with <c>accI</c> as its clients' inbox prefix. NATS.Client.KeyValueStore 3.3.2 publishes
/// a put to <c>$KV.bucket.key</c> whatever the API prefix (nats.c to <c>fromA.$KV...</c>), so I also imports
/// <c>$KV.&gt;</c> as it is. A user of I then reads and writes A's KV bucket, and publishes to A's stream and fetches
/// from its consumer, through the API prefix.
/// </summary>
public sealed class CrossAccountJetStreamTests
{
    private const string Conf = """
        accounts {
          A: {
            users: [{user: a, password: a}]
            jetstream: enabled
            exports: [ {service: "$JS.API.>"}, {service: "$KV.>"}, {service: "orders.>"}, {stream: "accI.>"} ]
          }
          I: {
            users: [{user: i, password: i}]
            imports: [
              {service: {account: A, subject: "$JS.API.>"}, to: "fromA.>"}
              {service: {account: A, subject: "$KV.>"}, to: "fromA.$KV.>"}
              {service: {account: A, subject: "$KV.>"}}
              {service: {account: A, subject: "orders.>"}}
              {stream: {account: A, subject: "accI.>"}}
            ]
          }
        }
        """;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    private static void Accounts(BrokerOptions options)
    {
        options.Accounts.Add(new AccountOptions
        {
            Name = "A",
            Users = [new UserOptions { User = "a", Password = "a" }],
            JetStream = new AccountJetStreamOptions(),
            Exports = new AccountExportOptions
            {
                Services =
                [
                    new ServiceExportOptions { Subject = "$JS.API.>" },
                    new ServiceExportOptions { Subject = "$KV.>" },
                    new ServiceExportOptions { Subject = "orders.>" },
                ],
                Streams = [new StreamExportOptions { Subject = "accI.>" }],
            },
        });
        options.Accounts.Add(new AccountOptions
        {
            Name = "I",
            Users = [new UserOptions { User = "i", Password = "i" }],
            Imports = new AccountImportOptions
            {
                Services =
                [
                    new ServiceImportOptions { Account = "A", Subject = "$JS.API.>", To = "fromA.>" },
                    new ServiceImportOptions { Account = "A", Subject = "$KV.>", To = "fromA.$KV.>" },
                    new ServiceImportOptions { Account = "A", Subject = "$KV.>" },
                    new ServiceImportOptions { Account = "A", Subject = "orders.>" },
                ],
                Streams = [new StreamImportOptions { Account = "A", Subject = "accI.>" }],
            },
        });
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task A_user_of_the_importer_reads_and_writes_the_exporters_key_value_bucket(ServerKind kind)
    {
        await using var server = await Server.StartAsync(kind);
        await using var a = await server.ConnectAsync("a");
        await using var i = await server.ConnectAsync("i");
        var bucketA = await new NatsKVContext(new NatsJSContext(a)).CreateStoreAsync(new NatsKVConfig("Map") { Storage = NatsKVStorageType.Memory });
        var bucketI = await new NatsKVContext(new NatsJSContext(i, new NatsJSOpts(i.Opts, apiPrefix: "fromA"))).GetStoreAsync("Map");

        Assert.Equal(1ul, await bucketI.PutAsync("k", "from I"));
        Assert.Equal("from I", (await bucketA.GetEntryAsync<string>("k")).Value);
        Assert.Equal(2ul, await bucketA.PutAsync("k", "from A"));
        var entry = await bucketI.GetEntryAsync<string>("k");
        Assert.Equal(("from A", 2ul), (entry.Value, entry.Revision));
        Assert.Equal(3ul, await bucketI.UpdateAsync("k", "again from I", revision: 2));
        Assert.Equal("again from I", (await bucketA.GetEntryAsync<string>("k")).Value);
    }

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task A_user_of_the_importer_publishes_to_the_exporters_stream_and_fetches_from_its_consumer(ServerKind kind)
    {
        await using var server = await Server.StartAsync(kind);
        await using var a = await server.ConnectAsync("a");
        await using var i = await server.ConnectAsync("i");
        await new NatsJSContext(a).CreateStreamAsync(new StreamConfig("ORDERS", ["orders.>"]) { Storage = StreamConfigStorage.Memory });
        var js = new NatsJSContext(i, new NatsJSOpts(i.Opts, apiPrefix: "fromA"));

        var ack = await js.PublishAsync("orders.1", "first");
        ack.EnsureSuccess();
        Assert.Equal(("ORDERS", 1ul), (ack.Stream, ack.Seq));
        (await js.PublishAsync("orders.2", "second")).EnsureSuccess();
        Assert.Equal(2L, (await js.GetStreamAsync("ORDERS")).Info.State.Messages);

        var consumer = await js.CreateOrUpdateConsumerAsync("ORDERS", new ConsumerConfig("C") { AckPolicy = ConsumerConfigAckPolicy.None });
        var first = await consumer.NextAsync<string>(opts: new NatsJSNextOpts { Expires = TimeSpan.FromSeconds(2) });
        Assert.Equal(("orders.1", "first"), (first?.Subject, first?.Data));
        var second = await consumer.NextAsync<string>(opts: new NatsJSNextOpts { Expires = TimeSpan.FromSeconds(2) });
        Assert.Equal(("orders.2", "second"), (second?.Subject, second?.Data));
    }

    private sealed class Server : IAsyncDisposable
    {
        private readonly TempDirectory store = new("js-cross-");
        private TestBroker? ours;
        private ReferenceServer? reference;

        private string Url => ours?.Url ?? reference!.Url;

        public static async Task<Server> StartAsync(ServerKind kind)
        {
            var server = new Server();
            if (kind == ServerKind.Ours)
            {
                server.ours = await TestBroker.StartAsync(
                    Accounts,
                    [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = server.store.Path }), new MemoryStorePlugin(), new FileStorePlugin()]);
            }
            else
            {
                server.reference = await ReferenceServer.StartAsync(Conf + $"\njetstream {{ store_dir: \"{server.store.Path}\" }}\n");
            }

            return server;
        }

        public Task<NatsConnection> ConnectAsync(string user) =>
            NatsClients.ConnectAsync(Url, user, o => o.WithUser(user, user) with { InboxPrefix = "acc" + user.ToUpperInvariant() });

        public async ValueTask DisposeAsync()
        {
            if (ours is not null)
            {
                await ours.DisposeAsync();
            }

            if (reference is not null)
            {
                await reference.DisposeAsync();
            }

            store.Dispose();
        }
    }
}
