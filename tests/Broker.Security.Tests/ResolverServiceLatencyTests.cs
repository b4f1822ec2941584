using System.Text.Json;
using Broker.Core.Internal.Jwt;
using NATS.Client.Core;
using NATS.NKeys;
using static Broker.Security.Tests.ResolverServiceImportTests;
using static Broker.Security.Tests.ResolverTests;

namespace Broker.Security.Tests;

/// <summary>
/// Service latency tracking from an account JWT's export (<c>service_latency { sampling, results }</c>) pushed to the
/// full resolver, the same on our broker and nats-server 2.9.10: a request through the importer's import publishes the
/// <c>ServiceLatency</c> message, with nats-server's keys, on the results subject in the exporting account.
/// </summary>
public sealed class ResolverServiceLatencyTests : IDisposable
{
    private readonly string directory = Directory.CreateTempSubdirectory("broker-resolver-").FullName;

    public static TheoryData<ServerKind> Servers => new() { ServerKind.Ours, ServerKind.Reference };

    public void Dispose() => Directory.Delete(directory, recursive: true);

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Servers))]
    public async Task A_tracked_jwt_export_publishes_the_latency_of_a_request_through_its_import(ServerKind kind)
    {
        var op = new TestOperator();
        var exporter = TestJwt.NewKey(PrefixByte.Account);
        var importer = TestJwt.NewKey(PrefixByte.Account);
        op.AddAccount(exporter, c => c.Nats.Exports =
        [
            new ExportClaim
            {
                Name = "svc",
                Subject = "svc.>",
                Type = "service",
                Latency = new ServiceLatencyClaim { Sampling = JsonDocument.Parse("100").RootElement.Clone(), Results = "lat.svc" },
            },
        ]);
        op.AddAccount(importer, c => c.Nats.Imports = [new ImportClaim { Name = "svc", Subject = "svc.>", Account = exporter.GetPublicKey(), Type = "service" }]);
        await using var server = await StartResolverAsync(kind, op, Path.Combine(directory, kind.ToString()));
        await using (var sys = await ConnectSystemAsync(server, op))
        {
            foreach (var account in new[] { exporter, importer })
            {
                await RequestAsync(sys, "$SYS.REQ.CLAIMS.UPDATE", op.AccountJwts[account.GetPublicKey()]);
            }
        }

        await using var responder = await ConnectUserAsync(server, exporter, "responder");
        await using var results = await responder.SubscribeCoreAsync<string>("lat.svc");
        await using var requests = await responder.SubscribeCoreAsync<string>("svc.>");
        await responder.PingAsync();
        var answering = Task.Run(async () =>
        {
            var request = await requests.Msgs.ReadAsync();
            await request.ReplyAsync("done");
        });
        await using var requester = await ConnectUserAsync(server, importer, "requester");

        var reply = await requester.RequestAsync<string, string>("svc.q", "hi", replyOpts: new NatsSubOpts { Timeout = NatsClients.Timeout });
        Assert.Equal("done", reply.Data);
        await answering.WaitAsync(NatsClients.Timeout);

        var sample = await ServiceLatencyTests.NextAsync(results);
        Assert.Equal(["type", "id", "timestamp", "status", "requestor", "responder", "start", "service", "system", "total"], ServiceLatencyTests.Keys(sample));
        Assert.Equal(200, sample.GetProperty("status").GetInt32());
        Assert.Equal(importer.GetPublicKey(), sample.GetProperty("requestor").GetProperty("acc").GetString());
        Assert.Equal(exporter.GetPublicKey(), sample.GetProperty("responder").GetProperty("acc").GetString());
    }
}
