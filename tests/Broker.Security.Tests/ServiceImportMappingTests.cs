using Broker.Core;
using Broker.Core.Auth;
using NATS.Client.Core;

namespace Broker.Security.Tests;

/// <summary>
/// A request crossing two service imports with a wildcard <c>to</c>, each into an exporter with subject mappings, on
/// both servers: C's <c>c.one</c> is B's <c>bsvc.one</c>, which B maps to <c>mid.one</c>; there a subscriber of B sees
/// it and B's import carries it on to A's <c>asvc.one</c>, which A maps to <c>final.one</c>, where A's responder
/// answers C. Each forward writes its subjects into buffers of its own depth, so the nested forward does not overwrite
/// the subject B's subscriber is delivered with.
/// </summary>
public sealed class ServiceImportMappingTests
{
    private const string Conf = """
        accounts {
          A: {
            users: [{user: a, password: a}]
            exports: [ {service: "asvc.>"} ]
            mappings: { "asvc.one": "final.one" }
          }
          B: {
            users: [{user: b, password: b}]
            exports: [ {service: "bsvc.>"} ]
            imports: [ {service: {account: A, subject: "asvc.>"}, to: "mid.>"} ]
            mappings: { "bsvc.one": "mid.one" }
          }
          C: { users: [{user: c, password: c}], imports: [ {service: {account: B, subject: "bsvc.>"}, to: "c.>"} ] }
        }
        """;

    public static TheoryData<ServerKind> Servers => ServiceImportTests.Servers;

    private static MappingOptions Map(string source, string destination) =>
        new() { Source = source, Destinations = [new MappingDestinationOptions { Subject = destination }] };

    private static void Accounts(BrokerOptions options)
    {
        options.Accounts.Add(new AccountOptions
        {
            Name = "A",
            Users = [AccountIsolationTests.User("a")],
            Exports = new AccountExportOptions { Services = [new ServiceExportOptions { Subject = "asvc.>" }] },
            Mappings = [Map("asvc.one", "final.one")],
        });
        options.Accounts.Add(new AccountOptions
        {
            Name = "B",
            Users = [AccountIsolationTests.User("b")],
            Exports = new AccountExportOptions { Services = [new ServiceExportOptions { Subject = "bsvc.>" }] },
            Imports = new AccountImportOptions { Services = [new ServiceImportOptions { Account = "A", Subject = "asvc.>", To = "mid.>" }] },
            Mappings = [Map("bsvc.one", "mid.one")],
        });
        options.Accounts.Add(new AccountOptions
        {
            Name = "C",
            Users = [AccountIsolationTests.User("c")],
            Imports = new AccountImportOptions { Services = [new ServiceImportOptions { Account = "B", Subject = "bsvc.>", To = "c.>" }] },
        });
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_request_is_mapped_in_each_exporter_it_crosses_and_answered(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, Accounts, Conf);
        await using var responder = await AccountIsolationTests.ConnectAsync(server, "a");
        await using var watcher = await AccountIsolationTests.ConnectAsync(server, "b");
        await using var requester = await AccountIsolationTests.ConnectAsync(server, "c");
        await using var requests = await responder.SubscribeCoreAsync<string>(">");
        await using var seen = await watcher.SubscribeCoreAsync<string>("mid.>");
        await responder.PingAsync();
        await watcher.PingAsync();
        var answering = Task.Run(async () =>
        {
            var message = await requests.Msgs.ReadAsync();
            await message.ReplyAsync(message.Subject + ":" + message.Data);
        });

        var reply = await requester.RequestAsync<string, string>("c.one", "hi", replyOpts: new NatsSubOpts { Timeout = NatsClients.Timeout });
        await answering.WaitAsync(NatsClients.Timeout);
        Assert.Equal("final.one:hi", reply.Data);
        using var cancel = new CancellationTokenSource(NatsClients.Timeout);
        var inB = await seen.Msgs.ReadAsync(cancel.Token);
        Assert.Equal(("mid.one", "hi"), (inB.Subject, inB.Data));
    }
}
