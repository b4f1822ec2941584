using Broker.Core;
using Broker.Core.Auth;
using Broker.JetStream;
using Broker.Storage.FileStore;
using Broker.Storage.MemStore;

namespace Broker.Interop.Tests;

/// <summary>
/// nats.c's <c>KeyValueCrossAccount</c> (<c>kvcrossaccount</c> of tests/interop/c/kvcross.c, the test's steps through
/// libnats) against our broker and nats-server 2.9.10 with <c>-js</c> and that test's configuration: account A has
/// JetStream and exports <c>$JS.API.&gt;</c> and <c>$KV.&gt;</c> as services and <c>accI.&gt;</c> as a stream; I
/// imports the services under <c>fromA</c> and the stream (its clients' inbox prefix is <c>accI</c>). The whole
/// nats.c suite runs with scripts/peer-suite.sh (docs/interop.md); this keeps its cross-account test in the
/// standing suite.
/// </summary>
public sealed class CrossAccountCClientTests(CClient c) : IClassFixture<CClient>, IDisposable
{
    // The configuration nats.c's test writes, less its top-level `jetstream: enabled` (the -js flag here).
    private const string Conf = """
        accounts: {
          A: {
            users: [ {user: a, password: a} ]
            jetstream: enabled
            exports: [ {service: '$JS.API.>'}, {service: '$KV.>'}, {stream: 'accI.>'} ]
          },
          I: {
            users: [ {user: i, password: i} ]
            imports: [
              {service: {account: A, subject: '$JS.API.>'}, to: 'fromA.>'}
              {service: {account: A, subject: '$KV.>'}, to: 'fromA.$KV.>'}
              {stream: {subject: 'accI.>', account: A}}
            ]
          }
        }
        """;

    private readonly TempDirectory store = new("interop-xacc-");

    public void Dispose() => store.Dispose();

    private static void Accounts(BrokerOptions options)
    {
        options.Accounts.Add(new AccountOptions
        {
            Name = "A",
            Users = [new UserOptions { User = "a", Password = "a" }],
            JetStream = new AccountJetStreamOptions(),
            Exports = new AccountExportOptions
            {
                Services = [new ServiceExportOptions { Subject = "$JS.API.>" }, new ServiceExportOptions { Subject = "$KV.>" }],
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
                ],
                Streams = [new StreamImportOptions { Account = "A", Subject = "accI.>" }],
            },
        });
    }

    private async Task<ProcessResult> RunAsync(string url) =>
        await c.RunAsync("kvcrossaccount", url.Replace("nats://", "nats://a:a@", StringComparison.Ordinal), url.Replace("nats://", "nats://i:i@", StringComparison.Ordinal));

    [Fact(Timeout = 90_000)]
    public async Task Key_value_cross_account_passes_on_our_broker()
    {
        await using var broker = await TestBroker.StartAsync(
            Accounts,
            [new JetStreamPlugin(new JetStreamOptions { StoreDirectory = store.Path }), new MemoryStorePlugin(), new FileStorePlugin()]);
        var summary = ScenarioSummary.AssertOk(await RunAsync(broker.Url));
        Assert.Equal(15, summary.GetProperty("checks").GetInt32());
    }

    [Fact(Timeout = 90_000)]
    public async Task Key_value_cross_account_passes_on_nats_server()
    {
        await using var server = await ReferenceServer.StartAsync(Conf, "-js", "-sd", store.Path);
        var summary = ScenarioSummary.AssertOk(await RunAsync(server.Url));
        Assert.Equal(15, summary.GetProperty("checks").GetInt32());
    }
}
