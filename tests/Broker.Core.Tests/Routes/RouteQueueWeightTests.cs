using System.Collections.Concurrent;
using Broker.TestKit;
using NATS.Client.Core;
using Xunit;

namespace Broker.Core.Tests.Routes;

/// <summary>
/// A queue group with 3 members on one server and 1 on the other: the one-member server sends about 3/4 of its
/// requests across the route, since the route's RS+ gives the group weight 3 and nats-server 2.9.10's sublist repeats
/// a route's queue subscription that many times in a match (<c>addNodeToResults</c>, <c>isRemoteQSub</c>) before
/// drawing a member at random. An unweighted pick per server (1/2) or local members first (0) fail the bounds. Run with
/// our broker publishing beside either server, and with nats-server publishing to our members (our RS+ weight), each
/// request answered once.
/// </summary>
public sealed class RouteQueueWeightTests
{
    private const int Requests = 2000;

    /// <summary>Every pair of the publishing server's kind and the three members' server's kind.</summary>
    public static TheoryData<ServerKind, ServerKind> Sides
    {
        get
        {
            var sides = new TheoryData<ServerKind, ServerKind>();
            foreach (var publishing in new[] { ServerKind.Ours, ServerKind.Reference })
            {
                sides.Add(publishing, ServerKind.Ours);
                sides.Add(publishing, ServerKind.Reference);
            }

            return sides;
        }
    }

    [Theory]
    [MemberData(nameof(Sides))]
    public async Task A_route_weighs_as_many_members_as_its_server_has(ServerKind publishingSide, ServerKind memberSide)
    {
        await using var one = await ClusterNode.StartAsync(publishingSide, "ONE");
        await using var three = await ClusterNode.StartAsync(memberSide, "THREE", [one.RouteUrl()]);
        await one.WaitForRoutesAsync(1);
        await three.WaitForRoutesAsync(1);

        var answered = new ConcurrentDictionary<string, string>(StringComparer.Ordinal);
        var duplicates = 0;
        using var stop = new CancellationTokenSource();
        var members = new List<(NatsConnection Connection, INatsSub<string> Sub, Task Loop)>();
        async Task AddMemberAsync(ClusterNode node, string label)
        {
            var connection = await NatsClients.ConnectAsync(node.ClientUrl, label);
            var sub = await connection.SubscribeCoreAsync<string>("work", queueGroup: "workers");
            await connection.PingAsync();
            members.Add((connection, sub, Serve(sub, label, answered, () => Interlocked.Increment(ref duplicates), stop.Token)));
        }

        try
        {
            await AddMemberAsync(one, "local");
            for (var i = 0; i < 3; i++)
            {
                await AddMemberAsync(three, "remote-" + i);
            }

            // RS+ lines keep their order on the route: once the later plain interest shows on the publishing side, the
            // group's last RS+ (weight 3) was read there too.
            await using var onThree = await NatsClients.ConnectAsync(three.ClientUrl, "sync");
            await using var sync = await onThree.SubscribeCoreAsync<string>("sync");
            await onThree.PingAsync();
            await one.WaitForRoutesAsync(1, "sync");

            await using var requester = await NatsClients.ConnectAsync(one.ClientUrl, "requester");
            var replies = new ConcurrentDictionary<string, string>(StringComparer.Ordinal);
            var replyOpts = new NatsSubOpts { Timeout = TimeSpan.FromSeconds(20) };
            for (var batch = 0; batch < Requests; batch += 50)
            {
                await Task.WhenAll(Enumerable.Range(batch, 50).Select(async i =>
                {
                    var reply = await requester.RequestAsync<string, string>("work", i.ToString(System.Globalization.CultureInfo.InvariantCulture), replyOpts: replyOpts);
                    replies[reply.Data!.Split(' ')[0]] = reply.Data;
                }));
            }

            // Each request served once: one reply each, and no member saw a request twice.
            Assert.Equal(Requests, replies.Count);
            Assert.Equal(Requests, answered.Count);
            Assert.Equal(0, Volatile.Read(ref duplicates));
            var remote = answered.Values.Count(label => label.StartsWith("remote", StringComparison.Ordinal));
            var share = (double)remote / Requests;
            Assert.True(share is > 0.6 and < 0.9, $"{remote} of {Requests} requests crossed the route (share {share:F3}); 3 members of 4 are there");
        }
        finally
        {
            await stop.CancelAsync();
            foreach (var (connection, sub, loop) in members)
            {
                await sub.DisposeAsync();
                await loop;
                await connection.DisposeAsync();
            }
        }
    }

    private static async Task Serve(INatsSub<string> sub, string label, ConcurrentDictionary<string, string> answered, Action duplicate, CancellationToken stop)
    {
        try
        {
            await foreach (var request in sub.Msgs.ReadAllAsync(stop))
            {
                if (!answered.TryAdd(request.Data!, label))
                {
                    duplicate();
                }

                await request.ReplyAsync(request.Data + " " + label, cancellationToken: stop);
            }
        }
        catch (OperationCanceledException)
        {
        }
    }
}
