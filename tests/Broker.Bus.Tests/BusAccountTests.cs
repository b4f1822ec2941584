using System.Buffers;
using System.Collections.Concurrent;
using System.Text;
using Broker.Abstractions;
using Broker.Core;
using Broker.Core.Auth;
using Microsoft.Extensions.DependencyInjection;
using NATS.Client.Core;

namespace Broker.Bus.Tests;

/// <summary>
/// Contract 1.3: bus clients and adapters' connections live in an account (<see cref="BusClientOptions.Account"/>,
/// <see cref="BusConnectOptions.Account"/>) and see only its subscriptions; <see cref="IBusClient.HasInterest"/> answers
/// for the client's own account; <see cref="IAccountDirectory"/> lists the accounts and reports a reload's changes.
/// </summary>
public sealed class BusAccountTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(10);

    private static void TwoAccounts(BrokerOptions options) => options.Accounts = [new AccountOptions { Name = "A" }, new AccountOptions { Name = "B" }];

    [Fact(Timeout = 30_000)]
    public async Task A_client_of_account_A_reaches_and_sees_only_As_subscriptions()
    {
        await using var broker = await TestBroker.StartAsync(TwoAccounts);
        await using var a = broker.Bus.CreateClient(new BusClientOptions { Name = "a", Account = "A" });
        await using var otherA = broker.Bus.CreateClient(new BusClientOptions { Name = "a2", Account = "A" });
        await using var b = broker.Bus.CreateClient(new BusClientOptions { Name = "b", Account = "B" });
        await using var global = broker.Bus.CreateClient();
        Assert.Equal(("A", "B", "$G"), (a.Account, b.Account, global.Account));

        var inA = new Inbox();
        var inB = new Inbox();
        var inGlobal = new Inbox();
        using var subA = otherA.Subscribe("orders.>", null, inA.Handler);
        using var subB = b.Subscribe("orders.>", null, inB.Handler);
        using var subGlobal = global.Subscribe("orders.>", null, inGlobal.Handler);

        // A NATS client is in $G (no accounts users here): it sees $G's publishes only.
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await using var natsSub = await nats.SubscribeCoreAsync<string>("orders.>");
        await nats.PingAsync();

        Publish(a, "orders.1", "from A");

        // Each account's own publish after A's: a queue receives in order, so had A's reached B or $G it would be first.
        Publish(b, "orders.2", "from B");
        Publish(global, "orders.3", "from $G");

        Assert.Equal("orders.1 from A", await inA.NextAsync());
        Assert.Equal("orders.2 from B", await inB.NextAsync());
        Assert.Equal("orders.3 from $G", await inGlobal.NextAsync());
        using var timeout = new CancellationTokenSource(Wait);
        Assert.Equal("from $G", (await natsSub.Msgs.ReadAsync(timeout.Token)).Data);

        // NATS publishes are $G's too.
        await nats.PublishAsync("orders.4", "from NATS");
        Assert.Equal("orders.4 from NATS", await inGlobal.NextAsync());
        Publish(a, "orders.5", "from A again");
        Publish(b, "orders.6", "from B again");
        Assert.Equal("orders.5 from A again", await inA.NextAsync());
        Assert.Equal("orders.6 from B again", await inB.NextAsync());
        Assert.Equal(0, inA.Count + inB.Count + inGlobal.Count);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_bus_client_of_an_importing_account_receives_the_exporters_publishes_under_the_prefix()
    {
        await using var broker = await TestBroker.StartAsync(o => o.Accounts =
        [
            new AccountOptions { Name = "E", Exports = new AccountExportOptions { Streams = [new StreamExportOptions { Subject = "orders.>" }] } },
            new AccountOptions { Name = "I", Imports = new AccountImportOptions { Streams = [new StreamImportOptions { Account = "E", Subject = "orders.>", Prefix = "p" }] } },
        ]);
        await using var exporter = broker.Bus.CreateClient(new BusClientOptions { Account = "E" });
        await using var importer = broker.Bus.CreateClient(new BusClientOptions { Account = "I" });
        var imported = new Inbox();
        var sub = importer.Subscribe("p.>", null, imported.Handler);
        Assert.True(importer.HasInterest("p.orders.1"u8));

        Publish(exporter, "orders.1", "one");
        Publish(importer, "p.orders.2", "own");
        Assert.Equal("p.orders.1 one", await imported.NextAsync());
        Assert.Equal("p.orders.2 own", await imported.NextAsync());

        // Gone with the subscription: the exporter's publish reaches nobody.
        sub.Dispose();
        Assert.False(exporter.HasInterest("orders.3"u8));
        Publish(exporter, "orders.3", "three");
        Assert.Equal(0, imported.Count);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_request_finds_responders_of_its_own_account_only()
    {
        await using var broker = await TestBroker.StartAsync(TwoAccounts);
        await using var responder = broker.Bus.CreateClient(new BusClientOptions { Account = "A" });
        await using var requesterA = broker.Bus.CreateClient(new BusClientOptions { Account = "A" });
        await using var requesterB = broker.Bus.CreateClient(new BusClientOptions { Account = "B" });
        using var service = responder.Subscribe("svc", null, (in BusMessage m) =>
            responder.Publish(m.ReplyTo, default, default, new ReadOnlySequence<byte>("pong"u8.ToArray())));

        var reply = await requesterA.RequestAsync("svc", default, default, Wait);
        Assert.Equal("pong", Encoding.UTF8.GetString(reply.Payload.Span));

        // Nobody answers "svc" in B: no responders, as a NATS request into an account without the service.
        await Assert.ThrowsAsync<NoRespondersException>(() => requesterB.RequestAsync("svc", default, default, Wait));
    }

    [Fact(Timeout = 30_000)]
    public async Task An_unknown_account_is_the_callers_mistake()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(TwoAccounts);
        await using var _ = broker;

        var created = Assert.Throws<ArgumentException>(() => broker.Bus.CreateClient(new BusClientOptions { Account = "C" }));
        Assert.Contains("'C'", created.Message, StringComparison.Ordinal);

        // Account names are case-sensitive, as nats-server's.
        Assert.Throws<ArgumentException>(() => broker.Bus.CreateClient(new BusClientOptions { Account = "a" }));

        await using var peer = await harness.ConnectAsync(broker);
        await Assert.ThrowsAsync<ArgumentException>(() => peer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, AuthenticatedByAdapter = true, Account = "C" }));

        // Without AuthenticatedByAdapter the account is the user's: the option is not used, so not checked.
        var result = await peer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, Account = "C" });
        Assert.Equal("$G", result.Connection!.Account);
        await result.Connection.DisposeAsync();
    }

    [Fact(Timeout = 30_000)]
    public async Task HasInterest_answers_for_the_clients_own_account()
    {
        await using var broker = await TestBroker.StartAsync(TwoAccounts);
        var globalInterest = broker.Server.Services.GetRequiredService<ISubjectInterest>();
        await using var a = broker.Bus.CreateClient(new BusClientOptions { Account = "A" });
        await using var b = broker.Bus.CreateClient(new BusClientOptions { Account = "B" });
        await using var global = broker.Bus.CreateClient();

        Assert.False(a.HasInterest("telemetry.1"u8));
        using (b.Subscribe("telemetry.*", null, static (in BusMessage _) => { }))
        {
            Assert.True(b.HasInterest("telemetry.1"u8));
            Assert.False(a.HasInterest("telemetry.1"u8));
            Assert.False(global.HasInterest("telemetry.1"u8));
            Assert.False(globalInterest.HasInterest("telemetry.1"u8));

            using (a.Subscribe("telemetry.1", "workers", static (in BusMessage _) => { }))
            {
                Assert.True(a.HasInterest("telemetry.1"u8));
                Assert.False(a.HasInterest("telemetry.2"u8));
            }

            Assert.False(a.HasInterest("telemetry.1"u8));
        }

        Assert.False(b.HasInterest("telemetry.1"u8));

        // ISubjectInterest is $G's, the same as a $G client's.
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await using var sub = await nats.SubscribeCoreAsync<string>("telemetry.>");
        await nats.PingAsync();
        Assert.True(globalInterest.HasInterest("telemetry.9"u8));
        Assert.True(global.HasInterest("telemetry.9"u8));
        Assert.False(a.HasInterest("telemetry.9"u8));
    }

    [Fact(Timeout = 30_000)]
    public async Task The_account_directory_lists_the_accounts_and_reports_a_reloads_changes()
    {
        var (broker, _) = await AdapterHarness.StartAsync(TwoAccounts);
        await using var __ = broker;
        var directory = broker.Server.Services.GetRequiredService<IAccountDirectory>();
        // The default system account is an account too (nats-server's $SYS); a reload keeps it.
        Assert.Equal(["$G", "$SYS", "A", "B"], directory.Accounts.Select(a => a.Name));
        Assert.True(directory.Accounts[0].IsGlobal);
        Assert.Equal(new BrokerAccount("A"), directory.Accounts[2]);

        var changes = new ConcurrentQueue<AccountChange>();
        var watching = directory.Watch(changes.Enqueue);
        var seenByWatcher = new List<string>();
        using var reader = directory.Watch(_ => seenByWatcher.Add(string.Join(",", directory.Accounts.Select(a => a.Name))));

        // B goes, C comes, A stays with new limits.
        var result = await broker.Server.ReloadAsync(AdapterHarness.Options(o => o.Accounts =
        [
            new AccountOptions { Name = "A", Limits = new AccountLimitOptions { MaxConnections = 5 } },
            new AccountOptions { Name = "C" },
        ]));
        Assert.True(result.Succeeded, result.Error);
        Assert.Equal(["$G", "$SYS", "A", "C"], directory.Accounts.Select(a => a.Name));
        Assert.Equal(
            [(AccountChangeKind.Removed, "B"), (AccountChangeKind.Added, "C")],
            changes.Select(c => (c.Kind, c.Account.Name)));

        // The callback runs once the reload is in force: the list it reads already has the change.
        Assert.Equal(["$G,$SYS,A,C", "$G,$SYS,A,C"], seenByWatcher);

        // A client of the new account works; a reload without changes reports nothing; a disposed watcher hears nothing.
        await using (var c = broker.Bus.CreateClient(new BusClientOptions { Account = "C" }))
        {
            Assert.Equal("C", c.Account);
        }

        Assert.True((await broker.Server.ReloadAsync(AdapterHarness.Options(o => o.Accounts = [new AccountOptions { Name = "A" }, new AccountOptions { Name = "C" }]))).Succeeded);
        Assert.Equal(2, changes.Count);
        watching.Dispose();
        Assert.True((await broker.Server.ReloadAsync(AdapterHarness.Options(o => o.Accounts = [new AccountOptions { Name = "A" }]))).Succeeded);
        Assert.Equal(2, changes.Count);
        Assert.Equal(3, seenByWatcher.Count);
        Assert.Throws<ArgumentException>(() => broker.Bus.CreateClient(new BusClientOptions { Account = "C" }));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_failing_watcher_is_logged_and_the_others_still_hear()
    {
        var (broker, _) = await AdapterHarness.StartAsync(TwoAccounts);
        await using var __ = broker;
        broker.ExpectErrors();
        var directory = broker.Server.Services.GetRequiredService<IAccountDirectory>();
        using var failing = directory.Watch(_ => throw new InvalidOperationException("watcher bug"));
        var heard = new List<AccountChange>();
        using var listening = directory.Watch(heard.Add);

        Assert.True((await broker.Server.ReloadAsync(AdapterHarness.Options(o => o.Accounts = [new AccountOptions { Name = "A" }]))).Succeeded);
        Assert.Equal(new AccountChange(AccountChangeKind.Removed, new BrokerAccount("B")), Assert.Single(heard));
        Assert.True(broker.Logs.Contains("An account directory watcher failed on Removed of account B"));
    }

    [Fact(Timeout = 30_000)]
    public async Task A_watcher_with_a_task_hears_each_change_in_order_and_the_reload_returns_once_it_applied_them()
    {
        var (broker, _) = await AdapterHarness.StartAsync(TwoAccounts);
        await using var __ = broker;
        broker.ExpectErrors();
        var directory = broker.Server.Services.GetRequiredService<IAccountDirectory>();
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var started = new ConcurrentQueue<string>();
        var applied = new ConcurrentQueue<string>();
        using var slow = directory.Watch(async (change, cancellationToken) =>
        {
            started.Enqueue(change.Kind + " " + change.Account.Name);
            await release.Task.WaitAsync(cancellationToken);
            applied.Enqueue(change.Kind + " " + change.Account.Name);
        });
        using var failing = directory.Watch((change, _) => change.Kind == AccountChangeKind.Removed ? throw new InvalidOperationException("watcher bug") : ValueTask.CompletedTask);

        // B goes, C comes: the reload waits while the first change is being applied, one change at a time.
        var reload = broker.Server.ReloadAsync(AdapterHarness.Options(o => o.Accounts = [new AccountOptions { Name = "A" }, new AccountOptions { Name = "C" }]));
        await Eventually.AssertAsync(() => Task.FromResult(started.Count == 1), "the first change passed", TimeSpan.FromSeconds(5));
        Assert.Equal(["Removed B"], started);
        Assert.False(reload.IsCompleted);
        release.SetResult();
        Assert.True((await reload).Succeeded);
        Assert.Equal(["Removed B", "Added C"], applied);
        Assert.True(broker.Logs.Contains("An account directory watcher failed on Removed of account B"));

        // A watcher that never ends delays a reload by at most 2 seconds; disposed, it hears nothing more.
        using (directory.Watch((_, _) => new ValueTask(new TaskCompletionSource().Task)))
        {
            Assert.True((await broker.Server.ReloadAsync(AdapterHarness.Options(o => o.Accounts = [new AccountOptions { Name = "A" }]))).Succeeded);
        }

        slow.Dispose();
        Assert.True((await broker.Server.ReloadAsync(AdapterHarness.Options(o => o.Accounts = [new AccountOptions { Name = "A" }, new AccountOptions { Name = "D" }]))).Succeeded);
        Assert.Equal(["Removed B", "Added C", "Removed C"], applied);
    }

    [Fact(Timeout = 30_000)]
    public async Task A_connection_the_adapter_vouches_for_is_in_the_account_it_names()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(TwoAccounts);
        await using var _ = broker;
        await using var peer = await harness.ConnectAsync(broker);
        var result = await peer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = "device", AuthenticatedByAdapter = true, Account = "B" });
        var connection = result.Connection!;
        Assert.Equal("B", connection.Account);

        var received = new Inbox();
        using var sub = connection.Subscribe("cmd.>", null, received.Handler);
        await using var a = broker.Bus.CreateClient(new BusClientOptions { Account = "A" });
        await using var b = broker.Bus.CreateClient(new BusClientOptions { Account = "B" });
        await using var nats = new NatsConnection(new NatsOpts { Url = broker.Url });
        await nats.PublishAsync("cmd.1", "from $G");
        await nats.PingAsync();
        Publish(a, "cmd.2", "from A");
        Publish(b, "cmd.3", "from B");
        Assert.Equal("cmd.3 from B", await received.NextAsync());
        Assert.True(b.HasInterest("cmd.x"u8));
        Assert.False(a.HasInterest("cmd.x"u8));

        // Its publishes reach B only.
        var inB = new Inbox();
        var inA = new Inbox();
        using var subB = b.Subscribe("up", null, inB.Handler);
        using var subA = a.Subscribe("up", null, inA.Handler);
        Publish(connection, "up", "hello");
        Publish(a, "up", "A's own");
        Assert.Equal("up hello", await inB.NextAsync());
        Assert.Equal("up A's own", await inA.NextAsync());
        await connection.DisposeAsync();
    }

    [Fact(Timeout = 30_000)]
    public async Task The_accounts_max_connections_refuses_connections_but_not_internal_clients()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(o => o.Accounts =
        [
            new AccountOptions { Name = "A", Limits = new AccountLimitOptions { MaxConnections = 1 } },
            new AccountOptions { Name = "B" },
        ]);
        await using var _ = broker;

        // In-process clients of A do not count (nats-server's internal clients are not in an account's connections).
        await using var internal1 = broker.Bus.CreateClient(new BusClientOptions { Account = "A" });
        await using var internal2 = broker.Bus.CreateClient(new BusClientOptions { Account = "A" });

        static BusConnectOptions IntoA(BusConnectOptions o) => new() { Protocol = o.Protocol, AuthenticatedByAdapter = true, Account = "A" };
        await using var first = await harness.ConnectAsync(broker);
        var admitted = await first.ConnectAsync(broker.Bus, IntoA);
        Assert.True(admitted.Succeeded);

        await using var second = await harness.ConnectAsync(broker);
        var refused = await second.ConnectAsync(broker.Bus, IntoA);
        Assert.Equal(BusConnectError.MaxConnectionsExceeded, refused.Error);
        Assert.Equal("maximum account active connections exceeded", refused.ErrorMessage);
        Assert.True(broker.Logs.Contains("maximum account active connections exceeded for account A"));

        // Other accounts are not limited by A's; the place is given back on close.
        await using (var third = await harness.ConnectAsync(broker))
        {
            var inB = await third.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, AuthenticatedByAdapter = true, Account = "B" });
            Assert.True(inB.Succeeded);
            await inB.Connection!.DisposeAsync();
        }

        await admitted.Connection!.DisposeAsync();
        await using var fourth = await harness.ConnectAsync(broker);
        var again = await fourth.ConnectAsync(broker.Bus, IntoA);
        Assert.True(again.Succeeded, again.ErrorMessage);
        await again.Connection!.DisposeAsync();
    }

    [Fact(Timeout = 30_000)]
    public async Task A_reload_that_removes_the_account_closes_the_connections_vouched_into_it()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(TwoAccounts);
        await using var _ = broker;
        await using var peerA = await harness.ConnectAsync(broker);
        await using var peerB = await harness.ConnectAsync(broker);
        var inA = (await peerA.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, AuthenticatedByAdapter = true, Account = "A" })).Connection!;
        var inB = (await peerB.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, AuthenticatedByAdapter = true, Account = "B" })).Connection!;

        Assert.True((await broker.Server.ReloadAsync(AdapterHarness.Options(o => o.Accounts = [new AccountOptions { Name = "A" }]))).Succeeded);

        Assert.True(await Eventually.TrueAsync(() => inB.Closed.IsCancellationRequested, Wait));
        Assert.Equal("Client Closed", inB.CloseReason);
        Assert.Null(inA.CloseReason);
        await inA.DisposeAsync();
    }

    [Fact(Timeout = 30_000)]
    public async Task A_connection_authenticated_as_a_user_of_an_account_is_in_that_account()
    {
        static void Configure(BrokerOptions o)
        {
            o.Authorization.Users = [new UserOptions { User = "g", Password = "g" }];
            o.Accounts =
            [
                new AccountOptions { Name = "A", Users = [new UserOptions { User = "a", Password = "a" }], Limits = new AccountLimitOptions { MaxConnections = 2 } },
                new AccountOptions { Name = "B", Users = [new UserOptions { User = "b", Password = "b" }] },
            ];
        }

        var (broker, harness) = await AdapterHarness.StartAsync(Configure);
        await using var _ = broker;
        await using var peer = await harness.ConnectAsync(broker);
        var device = (await peer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = "a", Password = "a" })).Connection!;
        Assert.Equal(("A", "a"), (device.Account, device.User));

        // NATS users of A reach it, those of B and $G do not; its publishes reach A's NATS users only.
        var received = new Inbox();
        using var sub = device.Subscribe("cmd.>", null, received.Handler);
        await using var natsG = new NatsConnection(new NatsOpts { Url = broker.Url, AuthOpts = new NatsAuthOpts { Username = "g", Password = "g" } });
        await using var natsB = new NatsConnection(new NatsOpts { Url = broker.Url, AuthOpts = new NatsAuthOpts { Username = "b", Password = "b" } });
        await using var natsA = new NatsConnection(new NatsOpts { Url = broker.Url, AuthOpts = new NatsAuthOpts { Username = "a", Password = "a" } });
        await using var upA = await natsA.SubscribeCoreAsync<string>("up");
        await using var upB = await natsB.SubscribeCoreAsync<string>("up");
        await natsA.PingAsync();
        await natsB.PingAsync();
        await natsG.PublishAsync("cmd.g", "from $G");
        await natsB.PublishAsync("cmd.b", "from B");
        await natsG.PingAsync();
        await natsB.PingAsync();
        await natsA.PublishAsync("cmd.a", "from A");
        Assert.Equal("cmd.a from A", await received.NextAsync());
        Publish(device, "up", "from the device");
        await natsB.PublishAsync("up", "B's own");
        using var timeout = new CancellationTokenSource(Wait);
        Assert.Equal("from the device", (await upA.Msgs.ReadAsync(timeout.Token)).Data);
        Assert.Equal("B's own", (await upB.Msgs.ReadAsync(timeout.Token)).Data);

        // A's max_connections (2) counts NATS connections and adapters' connections together: natsA and the device.
        await using var third = await harness.ConnectAsync(broker);
        var refused = await third.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = "a", Password = "a" });
        Assert.Equal(("maximum account active connections exceeded", BusConnectError.MaxConnectionsExceeded), (refused.ErrorMessage, refused.Error));
        var closed = await MonitorHttp.GetJsonAsync(broker, "/connz?state=closed");
        Assert.Contains(closed.GetProperty("connections").EnumerateArray(), c => c.GetProperty("reason").GetString() == "Maximum Account Connections Exceeded");

        // A reload that moves the user to B closes the connection (nats-server's "Client Closed"); it reconnects into B.
        var moved = AdapterHarness.Options(Configure);
        moved.Accounts[0].Users = [];
        moved.Accounts[1].Users = [new UserOptions { User = "b", Password = "b" }, new UserOptions { User = "a", Password = "a" }];
        Assert.True((await broker.Server.ReloadAsync(moved)).Succeeded);
        Assert.True(await Eventually.TrueAsync(() => device.Closed.IsCancellationRequested, Wait));
        Assert.Equal("Client Closed", device.CloseReason);
        await using var again = await harness.ConnectAsync(broker);
        var reconnected = (await again.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = "a", Password = "a" })).Connection!;
        Assert.Equal("B", reconnected.Account);
        await reconnected.DisposeAsync();
    }

    private static void Publish(IBusClient client, string subject, string payload)
        => client.Publish(Encoding.UTF8.GetBytes(subject), default, default, new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(payload)));

    /// <summary>What a handler received, as "subject payload" lines in order.</summary>
    private sealed class Inbox
    {
        private readonly System.Threading.Channels.Channel<string> received = System.Threading.Channels.Channel.CreateUnbounded<string>();

        public BusMessageHandler Handler => (in BusMessage m) => received.Writer.TryWrite(Encoding.UTF8.GetString(m.Subject) + " " + Encoding.UTF8.GetString(m.Payload.ToArray()));

        public int Count => received.Reader.Count;

        public async Task<string> NextAsync()
        {
            using var timeout = new CancellationTokenSource(Wait);
            return await received.Reader.ReadAsync(timeout.Token);
        }
    }
}
