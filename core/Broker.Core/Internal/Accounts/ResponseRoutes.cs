namespace Broker.Core.Internal.Accounts;

/// <summary>
/// An exporting account's routes back to requesters (nats-server's <c>exports.responses</c>): each request forwarded
/// through a service import with a reply gets a reply of this account, <c>_R_.</c> + 6 characters (one prefix per
/// account) + <c>.</c> + 6 characters (accounts.go <c>newServiceReply</c>), under which the responder answers. A route
/// is removed after its one response (singleton exports), after an empty message, when a response could not be
/// delivered, or when it carried nothing for its export's response threshold (swept by a timer while routes exist).
/// </summary>
internal sealed class ResponseRoutes : IDisposable
{
    private const string Digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    private const int ReplyLength = 6;

    private readonly Lock sync = new();
    private readonly Lock prefixGate = new();
    private readonly Dictionary<string, ServiceImport> routes;
    private readonly Dictionary<string, ServiceImport>.AlternateLookup<ReadOnlySpan<char>> lookup;
    private readonly Account owner;
    private volatile string? prefix;
    private Timer? sweeper;
    private long sweepPeriod;

    public ResponseRoutes(Account owner)
    {
        this.owner = owner;
        routes = new Dictionary<string, ServiceImport>(StringComparer.Ordinal);
        lookup = routes.GetAlternateLookup<ReadOnlySpan<char>>();
    }

    /// <summary>Drops every route and stops the sweep (the broker stops).</summary>
    public void Dispose()
    {
        lock (sync)
        {
            routes.Clear();
            sweeper?.Dispose();
            sweeper = null;
        }
    }

    /// <summary>Routes waiting for responses now.</summary>
    public int Count
    {
        get
        {
            lock (sync)
            {
                return routes.Count;
            }
        }
    }

    /// <summary>The routes by reply, for /accountz <c>responses</c>.</summary>
    public KeyValuePair<string, ServiceImport>[] Snapshot()
    {
        lock (sync)
        {
            return [.. routes];
        }
    }

    /// <summary>
    /// Adds a route back for a request and returns the reply the responder sees. The first one makes the account's
    /// prefix and its import client's subscription on <c>_R_.xxxxxx.&gt;</c> (nats-server <c>createRespWildcard</c>).
    /// </summary>
    public ServiceImport Add(BrokerCore core, Account requester, ReadOnlySpan<byte> requesterReply, ServiceImport import, LatencyTracking? tracking = null)
    {
        var start = prefix ?? CreatePrefix(core);
        string reply;
        ServiceImport route;
        lock (sync)
        {
            do
            {
                reply = NewReply(start);
                if (tracking is not null)
                {
                    // A sampled request's reply names the server (nats-server newServiceReply: '.', its hash, ".T").
                    reply = reply + "." + core.ServerHash + ".T";
                }
            }
            while (routes.ContainsKey(reply));

            route = ServiceImport.Route(requester, reply, requesterReply, import.Export, import.Share, tracking);
            routes.Add(reply, route);
            StartSweeping(route);
        }

        // Found again by the requester's reply when its interest goes (a route of an import without an export is left to the sweep).
        if (import.Export is not null)
        {
            requester.ReverseRoutes.Add(route);
        }

        return route;
    }

    // The subscription exists before any reply under the prefix is handed out (prefixGate, then the index's lock).
    private string CreatePrefix(BrokerCore core)
    {
        lock (prefixGate)
        {
            if (prefix is null)
            {
                var created = "_R_." + Random6() + ".";
                owner.ImportClient(core).SubscribeResponses(created + ">");
                prefix = created;
            }

            return prefix;
        }
    }

    /// <summary>The route for a reply subject a responder published to, or null.</summary>
    public ServiceImport? Find(ReadOnlySpan<byte> subject)
    {
        // Replies are ASCII (the prefix and base-62 digits): looked up as characters on the stack, without a string.
        Span<char> key = stackalloc char[64];
        if (subject.Length > key.Length)
        {
            return null;
        }

        for (var i = 0; i < subject.Length; i++)
        {
            key[i] = (char)subject[i];
        }

        lock (sync)
        {
            return lookup.TryGetValue(key[..subject.Length], out var route) ? route : null;
        }
    }

    /// <summary>
    /// Removes a route (only that instance: a reply is never reused while its route exists); a sampled request not yet
    /// answered reports <paramref name="failure"/> (nats-server's <c>removeRespServiceImport</c> reasons).
    /// </summary>
    /// <param name="route">The route.</param>
    /// <param name="failure">Why it goes before its response, if it does.</param>
    /// <param name="forget">Whether the requester's <see cref="ReverseRoutes"/> still holds it (false when they remove it).</param>
    public void Remove(ServiceImport route, RouteFailure failure = RouteFailure.None, bool forget = true)
    {
        bool removed;
        lock (sync)
        {
            removed = routes.TryGetValue(route.From, out var existing) && ReferenceEquals(existing, route);
            if (removed)
            {
                routes.Remove(route.From);
            }
        }

        if (forget)
        {
            route.Destination.ReverseRoutes.Remove(route);
        }

        if (removed && failure != RouteFailure.None)
        {
            route.Tracking?.Failed(failure);
        }
    }

    // The prefix and 6 random characters in one string.
    private static string NewReply(string prefix) => string.Create(prefix.Length + ReplyLength, prefix, static (chars, start) =>
    {
        start.CopyTo(chars);
        var value = (ulong)Random.Shared.NextInt64();
        for (var i = start.Length; i < chars.Length; i++)
        {
            chars[i] = Digits[(int)(value % (ulong)Digits.Length)];
            value /= (ulong)Digits.Length;
        }
    });

    private static string Random6()
    {
        Span<char> chars = stackalloc char[ReplyLength];
        var value = (ulong)Random.Shared.NextInt64();
        for (var i = 0; i < chars.Length; i++)
        {
            chars[i] = Digits[(int)(value % (ulong)Digits.Length)];
            value /= (ulong)Digits.Length;
        }

        return new string(chars);
    }

    // Under sync: the sweep runs at the shortest threshold of the routes waiting, while any waits.
    private void StartSweeping(ServiceImport route)
    {
        var period = (long)Math.Max(1, (route.Export?.Threshold ?? Broker.Core.Auth.ServiceExportOptions.DefaultResponseThreshold).TotalMilliseconds);
        if (sweeper is not null && period >= sweepPeriod)
        {
            return;
        }

        sweepPeriod = period;
        if (sweeper is null)
        {
            sweeper = new Timer(static state => ((ResponseRoutes)state!).Sweep(), this, period, period);
        }
        else
        {
            sweeper.Change(period, period);
        }
    }

    private void Sweep()
    {
        var now = Environment.TickCount64;
        List<ServiceImport>? expired = null;
        lock (sync)
        {
            foreach (var (reply, route) in routes)
            {
                var threshold = (long)(route.Export?.Threshold ?? Broker.Core.Auth.ServiceExportOptions.DefaultResponseThreshold).TotalMilliseconds;
                if (now - route.LastUsed >= threshold)
                {
                    (expired ??= []).Add(route);
                }
            }

            foreach (var route in expired ?? [])
            {
                routes.Remove(route.From);
            }

            if (routes.Count == 0)
            {
                sweeper?.Dispose();
                sweeper = null;
            }
        }

        // Outside the lock: the requesters' reverse entries, and the samples of requests that timed out.
        foreach (var route in expired ?? [])
        {
            route.Destination.ReverseRoutes.Remove(route);
            route.Tracking?.Failed(RouteFailure.Timeout);
        }
    }
}
