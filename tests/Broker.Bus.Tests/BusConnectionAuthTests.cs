using System.Collections.Concurrent;
using System.Text;
using Broker.Abstractions;
using Broker.Core;
using Broker.Core.Auth;
using NATS.Client.Core;

namespace Broker.Bus.Tests;

/// <summary>
/// Adapters' connections authenticated through the broker's own authorization, as NATS connections are, and bound to
/// the user's permissions for everything they do, including after a reload.
/// </summary>
public sealed class BusConnectionAuthTests
{
    // OpenBSD's bcrypt test vector for "U*U" (cost 5).
    private const string BcryptOfUU = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(10);

    // The NATS client on the other side of these tests.
    private static readonly UserOptions NatsUser = new() { User = "nats", Password = "nats" };

    [Fact(Timeout = 60_000)]
    public async Task Users_with_plain_and_bcrypt_passwords_and_no_auth_user_authenticate_as_for_nats()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(o =>
        {
            o.Authorization.Users = [new UserOptions { User = "alice", Password = "secret" }, new UserOptions { User = "bob", Password = BcryptOfUU }];
            o.Authorization.NoAuthUser = "alice";
        });
        await using var _ = broker;

        Assert.Equal("alice", await UserAfterConnectAsync(harness, broker, o => new() { Protocol = o.Protocol, User = "alice", Password = "secret" }));
        Assert.Equal("bob", await UserAfterConnectAsync(harness, broker, o => new() { Protocol = o.Protocol, User = "bob", Password = "U*U" }));

        // No credentials at all: the no_auth_user.
        Assert.Equal("alice", await UserAfterConnectAsync(harness, broker, null));

        foreach (var wrong in new[] { ("alice", "nope"), ("bob", "secret"), ("carol", "secret") })
        {
            await using var peer = await harness.ConnectAsync(broker);
            var refused = await peer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = wrong.Item1, Password = wrong.Item2 });
            Assert.False(refused.Succeeded);
            Assert.Null(refused.Connection);
            Assert.Equal(BusConnectError.AuthorizationViolation, refused.Error);
            Assert.Equal("Authorization Violation", refused.ErrorMessage);
        }
    }

    [Fact(Timeout = 60_000)]
    public async Task A_token_authenticates_and_a_wrong_one_is_refused()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(o => o.Authorization.Token = "s3cret");
        await using var _ = broker;

        await using (var peer = await harness.ConnectAsync(broker))
        {
            var accepted = await peer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, Token = "s3cret" });
            Assert.True(accepted.Succeeded);
            Assert.Null(accepted.Connection!.User);
            await accepted.Connection.DisposeAsync();
        }

        await using var other = await harness.ConnectAsync(broker);
        Assert.Equal(BusConnectError.AuthorizationViolation, (await other.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, Token = "guess" })).Error);
        await using var none = await harness.ConnectAsync(broker);
        Assert.Equal(BusConnectError.AuthorizationViolation, (await none.ConnectAsync(broker.Bus)).Error);
    }

    [Fact(Timeout = 60_000)]
    public async Task With_verify_and_map_the_client_certificate_names_the_user()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(o => o.Authorization.Users =
        [
            new UserOptions { User = "alice@acme.test", Permissions = new() { Publish = new() { Allow = ["alice.>"] } } },
            new UserOptions { User = "other", Password = "pw" },
        ]);
        await using var _ = broker;

        await using var peer = await harness.ConnectAsync(broker);
        peer.Connection.Features.Set<ITlsConnectionFeature>(new FakeTls(TestCertificates.Shared.Alice));

        // Credentials in the protocol are ignored when the certificate names the user, as nats-server does.
        var result = await peer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = "other", Password = "pw" });
        await using var connection = result.Connection!;
        Assert.Equal("alice@acme.test", connection.User);
        Assert.Throws<BusRefusedException>(() => connection.Publish("bob.x", "?"u8.ToArray()));

        await using var unknown = await harness.ConnectAsync(broker);
        unknown.Connection.Features.Set<ITlsConnectionFeature>(new FakeTls(TestCertificates.Shared.Carol));
        Assert.Equal(BusConnectError.AuthorizationViolation, (await unknown.ConnectAsync(broker.Bus)).Error);

        await using var without = await harness.ConnectAsync(broker);
        without.Connection.Features.Set<ITlsConnectionFeature>(new FakeTls(null));
        Assert.Equal(BusConnectError.AuthorizationViolation, (await without.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = "other", Password = "pw" })).Error);
    }

    [Fact(Timeout = 60_000)]
    public async Task Publish_and_subscribe_permissions_refuse_with_the_text_a_nats_client_gets()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(o => o.Authorization.Users =
        [
            new UserOptions
            {
                User = "device",
                Password = "pw",
                Permissions = new()
                {
                    Publish = new() { Allow = ["telemetry.>"], Deny = ["telemetry.secret"] },
                    Subscribe = new() { Allow = ["commands.>", "_INBOX.>"], Deny = ["commands.admin"] },
                },
            },
            NatsUser,
        ]);
        await using var _ = broker;
        await using var peer = await harness.ConnectAsync(broker);
        await using var device = (await peer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = "device", Password = "pw" })).Connection!;

        await using var nats = new NatsConnection(NatsOptions(broker));
        await using var everything = await nats.SubscribeCoreAsync<string>(">");
        await nats.PingAsync();

        var refused = Assert.Throws<BusRefusedException>(() => device.Publish("alerts.fire", "!"u8.ToArray()));
        Assert.Equal(BusRefusalReason.PublishPermission, refused.Reason);
        Assert.Equal("alerts.fire", refused.Subject);
        Assert.Equal("Permissions Violation for Publish to \"alerts.fire\"", refused.Message);
        Assert.Equal("Permissions Violation for Publish to \"telemetry.secret\"", Assert.Throws<BusRefusedException>(() => device.Publish("telemetry.secret", "!"u8.ToArray())).Message);

        var subscription = Assert.Throws<BusRefusedException>(() => device.Subscribe("alerts.>", null, (in BusMessage _) => { }));
        Assert.Equal(BusRefusalReason.SubscribePermission, subscription.Reason);
        Assert.Equal("Permissions Violation for Subscription to \"alerts.>\"", subscription.Message);
        Assert.Equal(
            "Permissions Violation for Subscription to \"commands.admin\" using queue \"q\"",
            Assert.Throws<BusRefusedException>(() => device.Subscribe("commands.admin", "q", (in BusMessage _) => { })).Message);

        // What is allowed goes through; what was refused reached nobody.
        device.Publish("telemetry.temp", "21"u8.ToArray());
        var received = await everything.Msgs.ReadAsync().AsTask().WaitAsync(Wait);
        Assert.Equal(("telemetry.temp", "21"), (received.Subject, received.Data));
        Assert.False(everything.Msgs.TryRead(out var extra), $"unexpected {extra.Subject}");
        Assert.True(broker.Logs.Contains("publish violation for subject alerts.fire"));
    }

    [Fact(Timeout = 60_000)]
    public async Task Deny_rules_apply_at_delivery_to_wildcard_subscriptions_and_allow_responses_lets_a_request_be_answered_once()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(o => o.Authorization.Users =
        [
            new UserOptions
            {
                User = "svc",
                Password = "pw",
                Permissions = new()
                {
                    Publish = new() { Deny = [">"] },
                    Subscribe = new() { Allow = ["in.>"], Deny = ["in.secret"] },
                    AllowResponses = new() { MaxMessages = 1 },
                },
            },
            NatsUser,
        ]);
        await using var _ = broker;
        await using var peer = await harness.ConnectAsync(broker);
        await using var service = (await peer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = "svc", Password = "pw" })).Connection!;
        var seen = new ConcurrentQueue<string>();
        var answers = new ConcurrentQueue<Exception?>();
        using var all = service.Subscribe("in.*", null, (in BusMessage m) =>
        {
            var subject = Encoding.UTF8.GetString(m.Subject);
            seen.Enqueue(subject);
            if (!m.ReplyTo.IsEmpty)
            {
                // The first answer uses the right allow_responses granted; the second finds none left.
                var reply = Encoding.UTF8.GetString(m.ReplyTo);
                answers.Enqueue(Record(() => service.Publish(reply, "yes"u8.ToArray())));
                answers.Enqueue(Record(() => service.Publish(reply, "again"u8.ToArray())));
            }
        });

        await using var nats = new NatsConnection(NatsOptions(broker));
        await nats.PublishAsync("in.secret", "hidden");
        await nats.PublishAsync("in.public", "shown");
        var reply = await nats.RequestAsync<string, string>("in.ask", "?");

        Assert.Equal("yes", reply.Data);
        Assert.True(await Eventually.TrueAsync(() => answers.Count == 2, Wait));
        Assert.Equal(["in.public", "in.ask"], seen);
        Assert.Null(answers.First());
        Assert.IsType<BusRefusedException>(answers.Last());
    }

    [Fact(Timeout = 60_000)]
    public async Task A_reload_applies_new_permissions_to_the_connection_and_closes_it_when_its_user_is_gone()
    {
        var permissive = new PermissionsOptions { Publish = new() { Allow = [">"] }, Subscribe = new() { Allow = [">"] } };
        var (broker, harness) = await AdapterHarness.StartAsync(o => o.Authorization.Users =
        [
            new UserOptions { User = "dev", Password = "pw", Permissions = permissive },
            new UserOptions { User = "temp", Password = "pw" },
            NatsUser,
        ]);
        await using var _ = broker;
        await using var devPeer = await harness.ConnectAsync(broker);
        await using var dev = (await devPeer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = "dev", Password = "pw" })).Connection!;
        await using var tempPeer = await harness.ConnectAsync(broker);
        var temp = (await tempPeer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = "temp", Password = "pw" })).Connection!;
        var received = new ConcurrentQueue<string>();
        using var orders = dev.Subscribe("orders.>", null, (in BusMessage m) => received.Enqueue(Encoding.UTF8.GetString(m.Subject)));
        using var news = dev.Subscribe("news.>", null, (in BusMessage m) => received.Enqueue(Encoding.UTF8.GetString(m.Subject)));
        dev.Publish("metrics.cpu", "1"u8.ToArray());

        var reloaded = AdapterHarness.Options(o => o.Authorization.Users =
        [
            new UserOptions
            {
                User = "dev",
                Password = "pw",
                Permissions = new() { Publish = new() { Allow = ["orders.>"] }, Subscribe = new() { Allow = ["news.>"] } },
            },
            NatsUser,
        ]);
        Assert.True((await broker.Server.ReloadAsync(reloaded)).Succeeded);

        // The dropped subscription gets nothing more; the publish rules are the new ones.
        await using var nats = new NatsConnection(NatsOptions(broker));
        await nats.PublishAsync("orders.1", "x");
        await nats.PublishAsync("news.1", "x");
        Assert.True(await Eventually.TrueAsync(() => received.Contains("news.1"), Wait));
        await nats.PingAsync();
        await Task.Delay(100);
        Assert.Equal(["news.1"], received);
        Assert.Throws<BusRefusedException>(() => dev.Publish("metrics.cpu", "2"u8.ToArray()));
        dev.Publish("orders.2", "ok"u8.ToArray());
        Assert.True(broker.Logs.Contains("subscription to orders.> removed by a configuration reload"));

        // The user without an entry any more is closed as nats-server closes such a client (clientHasMovedToDifferentAccount:
        // a user gone is taken as moved, "Client Closed").
        Assert.True(await Eventually.TrueAsync(() => temp.Closed.IsCancellationRequested, Wait));
        Assert.Equal("Client Closed", temp.CloseReason);
        Assert.Throws<ObjectDisposedException>(() => temp.Publish("x", "y"u8.ToArray()));
        var closed = await MonitorHttp.ConnectionAsync(broker, temp.ConnectionId, "&state=closed");
        Assert.Equal("Client Closed", closed!.Value.GetProperty("reason").GetString());
    }

    [Fact(Timeout = 60_000)]
    public async Task Limits_apply_max_subscriptions_and_max_connections()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(o =>
        {
            o.MaxSubscriptions = 2;
            o.MaxConnections = 1;
        });
        await using var _ = broker;
        await using var peer = await harness.ConnectAsync(broker);
        await using var first = (await peer.ConnectAsync(broker.Bus)).Connection!;
        using var one = first.Subscribe("a", null, (in BusMessage _) => { });
        using var two = first.Subscribe("b", null, (in BusMessage _) => { });
        var tooMany = Assert.Throws<BusRefusedException>(() => first.Subscribe("c", null, (in BusMessage _) => { }));
        Assert.Equal((BusRefusalReason.MaxSubscriptions, "maximum subscriptions exceeded"), (tooMany.Reason, tooMany.Message));

        await using var secondPeer = await harness.ConnectAsync(broker);
        var second = await secondPeer.ConnectAsync(broker.Bus);
        Assert.Equal((BusConnectError.MaxConnectionsExceeded, "maximum connections exceeded"), (second.Error, second.ErrorMessage));
    }

    [Fact(Timeout = 60_000)]
    public async Task A_connection_the_adapter_authenticated_itself_has_full_permissions_beside_the_brokers_users()
    {
        var (broker, harness) = await AdapterHarness.StartAsync(o => o.Authorization.Users = [new UserOptions { User = "nats-user", Password = "pw" }]);
        await using var _ = broker;
        await using var peer = await harness.ConnectAsync(broker);
        await using var connection = (await peer.ConnectAsync(broker.Bus, o => new() { Protocol = o.Protocol, User = "mqtt-user", AuthenticatedByAdapter = true })).Connection!;

        Assert.Equal("mqtt-user", connection.User);
        using var anything = connection.Subscribe(">", null, (in BusMessage _) => { });
        connection.Publish("anything.at.all", "ok"u8.ToArray());
    }

    private static async Task<string?> UserAfterConnectAsync(AdapterHarness harness, TestBroker broker, Func<BusConnectOptions, BusConnectOptions>? configure)
    {
        await using var peer = await harness.ConnectAsync(broker);
        var result = await peer.ConnectAsync(broker.Bus, configure);
        Assert.True(result.Succeeded, result.ErrorMessage);
        await using var connection = result.Connection!;
        return connection.User;
    }

    private static NatsOpts NatsOptions(TestBroker broker) =>
        new() { Url = broker.Url, AuthOpts = new NatsAuthOpts { Username = NatsUser.User, Password = NatsUser.Password } };

    private static Exception? Record(Action action)
    {
        try
        {
            action();
            return null;
        }
#pragma warning disable CA1031 // The test inspects what was thrown.
        catch (Exception ex)
#pragma warning restore CA1031
        {
            return ex;
        }
    }
}
