using Broker.Core;
using Broker.Core.Auth;
using Broker.TestKit;
using NATS.Client.Core;

namespace Broker.Security.Tests;

/// <summary>
/// Request/reply across service imports through NATS.Client.Core on both servers: a requester of B gets the answer of
/// A's responder, a chain C → B → A carries the first requester's account and the service account it crossed in
/// <c>Nats-Request-Info</c>, a streamed export delivers several responses, and an import cycle is cut at run time.
/// </summary>
public sealed class ServiceImportFlowTests
{
    private const string ChainConf = """
        accounts {
          A: { users: [{user: a, password: a}], exports: [ {service: "svc.>"} ] }
          B: {
            users: [{user: b, password: b}]
            exports: [ {service: "svc.>"} ]
            imports: [ {service: {account: A, subject: "svc.>"}} ]
          }
          C: { users: [{user: c, password: c}], imports: [ {service: {account: B, subject: "svc.>"}} ] }
        }
        """;

    public static TheoryData<ServerKind> Servers => ServiceImportTests.Servers;

    private static void Chain(BrokerOptions options)
    {
        options.Accounts.Add(new AccountOptions
        {
            Name = "A",
            Users = [AccountIsolationTests.User("a")],
            Exports = new AccountExportOptions { Services = [new ServiceExportOptions { Subject = "svc.>" }] },
        });
        options.Accounts.Add(new AccountOptions
        {
            Name = "B",
            Users = [AccountIsolationTests.User("b")],
            Exports = new AccountExportOptions { Services = [new ServiceExportOptions { Subject = "svc.>" }] },
            Imports = new AccountImportOptions { Services = [new ServiceImportOptions { Account = "A", Subject = "svc.>" }] },
        });
        options.Accounts.Add(new AccountOptions
        {
            Name = "C",
            Users = [AccountIsolationTests.User("c")],
            Imports = new AccountImportOptions { Services = [new ServiceImportOptions { Account = "B", Subject = "svc.>" }] },
        });
    }

    private static Task<NatsConnection> ConnectAsync(ServerUnderTest server, string user) =>
        NatsClients.ConnectAsync(server.Url, user, o => o.WithUser(user, user));

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_request_of_the_importer_is_answered_by_the_exporter(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, ServiceImportTests.Accounts, ServiceImportTests.Conf);
        await using var responder = await ConnectAsync(server, "a");
        await using var requester = await ConnectAsync(server, "b");
        await using var subscription = await responder.SubscribeCoreAsync<string>("svc.>");
        await responder.PingAsync();
        var answering = Task.Run(async () =>
        {
            await foreach (var message in subscription.Msgs.ReadAllAsync())
            {
                await message.ReplyAsync($"{message.Subject}:{message.Data}:{message.Headers?["Nats-Request-Info"]}");
            }
        });

        for (var i = 0; i < 3; i++)
        {
            var reply = await requester.RequestAsync<string, string>($"svc.q{i}", "hi", replyOpts: new NatsSubOpts { Timeout = NatsClients.Timeout });
            Assert.StartsWith($"svc.q{i}:hi:{{\"acc\":\"B\"", reply.Data, StringComparison.Ordinal);
        }

        await subscription.UnsubscribeAsync();
        await answering.WaitAsync(NatsClients.Timeout);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_streamed_export_answers_one_request_several_times(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, ServiceImportTests.Accounts, ServiceImportTests.Conf);
        await using var responder = await ConnectAsync(server, "a");
        await using var requester = await ConnectAsync(server, "b");
        await using var subscription = await responder.SubscribeCoreAsync<string>("str");
        await responder.PingAsync();
        var answering = Task.Run(async () =>
        {
            var message = await subscription.Msgs.ReadAsync();
            for (var i = 0; i < 3; i++)
            {
                await message.ReplyAsync($"part-{i}");
            }
        });

        var replies = new List<string>();
        await foreach (var reply in requester.RequestManyAsync<string, string>("mystr", "go", replyOpts: new NatsSubOpts { Timeout = TimeSpan.FromSeconds(2), MaxMsgs = 3 }))
        {
            replies.Add(reply.Data!);
        }

        await answering.WaitAsync(NatsClients.Timeout);
        Assert.Equal(["part-0", "part-1", "part-2"], replies);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_chain_of_imports_carries_the_first_requester_and_the_service_it_crossed(ServerKind kind)
    {
        await using var server = await ServerUnderTest.StartAsync(kind, Chain, ChainConf);
        await using var responder = await ConnectAsync(server, "a");
        await using var requester = await ConnectAsync(server, "c");
        await using var subscription = await responder.SubscribeCoreAsync<string>("svc.>");
        await responder.PingAsync();
        var answering = Task.Run(async () =>
        {
            var message = await subscription.Msgs.ReadAsync();
            await message.ReplyAsync(message.Headers?["Nats-Request-Info"].ToString() ?? "none");
        });

        var reply = await requester.RequestAsync<string, string>("svc.chain", "hi", replyOpts: new NatsSubOpts { Timeout = NatsClients.Timeout });
        await answering.WaitAsync(NatsClients.Timeout);
        Assert.Matches("^\\{\"acc\":\"C\",\"svc\":\"B\",\"rtt\":[0-9]+\\}$", reply.Data);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Servers))]
    public async Task A_request_crosses_a_chain_of_ten_imports_and_its_reply_comes_back(ServerKind kind)
    {
        // C9 imports svc.> from C8, C8 from C7, ... C1 from C0, where the responder is.
        var conf = new System.Text.StringBuilder("accounts {\n");
        for (var i = 0; i < 10; i++)
        {
            conf.Append("  C").Append(i).Append(": { users: [{user: c").Append(i).Append(", password: c").Append(i).Append("}]");
            conf.Append(i < 9 ? ", exports: [ {service: \"svc.>\"} ]" : string.Empty);
            conf.Append(i > 0 ? $", imports: [ {{service: {{account: C{i - 1}, subject: \"svc.>\"}}}} ]" : string.Empty);
            conf.Append(" }\n");
        }

        conf.Append("}\n");
        void Configure(BrokerOptions options)
        {
            for (var i = 0; i < 10; i++)
            {
                options.Accounts.Add(new AccountOptions
                {
                    Name = $"C{i}",
                    Users = [AccountIsolationTests.User($"c{i}")],
                    Exports = new AccountExportOptions { Services = i < 9 ? [new ServiceExportOptions { Subject = "svc.>" }] : [] },
                    Imports = new AccountImportOptions { Services = i > 0 ? [new ServiceImportOptions { Account = $"C{i - 1}", Subject = "svc.>" }] : [] },
                });
            }
        }

        await using var server = await ServerUnderTest.StartAsync(kind, Configure, conf.ToString());
        await using var responder = await ConnectAsync(server, "c0");
        await using var requester = await ConnectAsync(server, "c9");
        await using var subscription = await responder.SubscribeCoreAsync<string>("svc.>");
        await responder.PingAsync();
        var answering = Task.Run(async () =>
        {
            var message = await subscription.Msgs.ReadAsync();
            await message.ReplyAsync(message.Headers?["Nats-Request-Info"].ToString() ?? "none");
        });

        var reply = await requester.RequestAsync<string, string>("svc.far", "hi", replyOpts: new NatsSubOpts { Timeout = NatsClients.Timeout });
        await answering.WaitAsync(NatsClients.Timeout);
        Assert.Matches("^\\{\"acc\":\"C9\",\"svc\":\"C1\",\"rtt\":[0-9]+\\}$", reply.Data);
    }
}
